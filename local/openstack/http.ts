// HTTP plumbing shared by the simulated services: a parsed request, the reply a handler returns,
// and a small path router. Services stay free of node:http details so the engine can call them
// directly, exactly as Heat calls Nova or Neutron without going through its own API.
import type http from 'node:http';
import { ApiError, badRequest } from './state.ts';

export interface SimRequest {
  method: string;
  /** Path below the service prefix, e.g. "/v2/images/ID". */
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  /** The raw request, for streamed bodies (image uploads). */
  raw: http.IncomingMessage;
  /** Scheme and authority the client used, for links: http://127.0.0.1:PORT. */
  origin: string;
  /** The parsed JSON body ({} when empty); 400 on malformed JSON. */
  json(): Promise<unknown>;
  /** The whole body as bytes. */
  bytes(): Promise<Buffer>;
}

export interface SimReply {
  status: number;
  headers?: Record<string, string>;
  /** Objects are sent as JSON; strings and buffers as they are. */
  body?: unknown;
  contentType?: string;
}

export type Params = Record<string, string>;
export type Handler<C> = (req: SimRequest, params: Params, ctx: C) => Promise<SimReply> | SimReply;

interface Route<C> {
  method: string;
  parts: string[];
  handler: Handler<C>;
}

/** Routes by method and "/a/:b/c" patterns; knows the difference between 404 and 405. */
export class Router<C> {
  readonly #routes: Array<Route<C>> = [];

  on(method: string, pattern: string, handler: Handler<C>): this {
    this.#routes.push({ method, parts: split(pattern), handler });
    return this;
  }

  /** The handler for the request, 'method' when only the method is wrong, undefined when no path matches. */
  find(method: string, path: string): { handler: Handler<C>; params: Params } | 'method' | undefined {
    const segments = split(path);
    let pathMatched = false;
    for (const route of this.#routes) {
      const params = matchParts(route.parts, segments);
      if (!params) continue;
      if (route.method === method || (method === 'HEAD' && route.method === 'GET')) return { handler: route.handler, params };
      pathMatched = true;
    }
    return pathMatched ? 'method' : undefined;
  }
}

function split(path: string): string[] {
  return path.split('/').filter((part) => part.length > 0);
}

function matchParts(parts: string[], segments: string[]): Params | undefined {
  if (parts.length !== segments.length) return undefined;
  const params: Params = {};
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    const segment = segments[i] as string;
    if (part.startsWith(':')) {
      try {
        params[part.slice(1)] = decodeURIComponent(segment);
      } catch {
        return undefined;
      }
    } else if (part !== segment) return undefined;
  }
  return params;
}

/** Reads a whole request body, refusing more than `limit` bytes with 413. */
export async function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    size += buf.length;
    if (size > limit) throw new ApiError(413, `Request is too large. (body larger than ${limit} bytes)`, 'RequestEntityTooLarge');
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

export function parseJson(body: Buffer): unknown {
  if (body.length === 0) return {};
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    throw badRequest('Malformed request body');
  }
}

/** Writes a reply; objects become JSON. */
export function writeReply(res: http.ServerResponse, reply: SimReply, headOnly: boolean): void {
  const headers: Record<string, string> = { ...reply.headers };
  let payload: Buffer | undefined;
  if (reply.body === undefined) {
    payload = undefined;
  } else if (Buffer.isBuffer(reply.body)) {
    payload = reply.body;
    headers['content-type'] ??= reply.contentType ?? 'application/octet-stream';
  } else if (typeof reply.body === 'string') {
    payload = Buffer.from(reply.body);
    headers['content-type'] ??= reply.contentType ?? 'text/plain; charset=UTF-8';
  } else {
    payload = Buffer.from(JSON.stringify(reply.body));
    headers['content-type'] ??= reply.contentType ?? 'application/json';
  }
  if (reply.status === 204 || reply.status === 304) payload = undefined;
  headers['content-length'] = String(payload?.length ?? 0);
  res.writeHead(reply.status, headers);
  res.end(headOnly ? undefined : payload);
}

export const json = (status: number, body: unknown, headers?: Record<string, string>): SimReply => ({ status, body, ...(headers ? { headers } : {}) });
export const empty = (status: number, headers?: Record<string, string>): SimReply => ({ status, ...(headers ? { headers } : {}) });

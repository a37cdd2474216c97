// Shared plumbing for the local AWS stand-ins speaking the AWS JSON 1.0/1.1 wire protocols (Step Functions,
// Secrets Manager, SQS): AWS-style errors, input validation, pagination tokens, and an HTTP server that
// dispatches X-Amz-Target operations; plus the listen/endpoint/close helpers the other local servers use.
import type http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { createGuardedServer } from './http-guard.ts';
import { usage } from './metering.ts';
import { sha256Hex, verifySignature, type AwsCredentials } from './sigv4.ts';

/**
 * An error rendered as the AWS JSON error shape `{"__type","message"}`; the SDK maps `__type` to its
 * exception class. `headers` go with it (SQS names its query-protocol error code in one).
 */
export class AwsError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = type;
  }
}

/** Validates a request body, turning the first zod issue into the service's own error via `invalid(field, problem)`. */
export function parseInput<T extends z.ZodType>(schema: T, body: unknown, invalid: (field: string, problem: string) => AwsError): z.infer<T> {
  const result = schema.safeParse(body);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw invalid(issue?.path.join('.') || 'request', issue?.message ?? 'invalid');
  }
  return result.data;
}

/** An opaque pagination token carrying `payload`. */
export function encodeToken(payload: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(payload)).toString('base64url');
}

/** The payload of a token from encodeToken, or undefined when `token` is not one (the caller raises its service's error). */
export function decodeToken(token: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Listening and closing.

/** The host part of a URL reaching a server bound to `bindHost` (wildcards become loopback, IPv6 gets brackets). */
export function endpointHost(bindHost = '127.0.0.1'): string {
  const host = bindHost === '0.0.0.0' ? '127.0.0.1' : bindHost === '::' ? '::1' : bindHost;
  return host.includes(':') ? `[${host}]` : host;
}

/** Listens on `host` (default 127.0.0.1) and `port` (default 0: any free one); `name` only appears in errors. */
export async function listen(
  server: http.Server,
  opts: { name: string; host?: string | undefined; port?: number | undefined },
): Promise<{ port: number; endpoint: string }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error(`local ${opts.name} server has no TCP address`);
  return { port: address.port, endpoint: `http://${endpointHost(opts.host)}:${address.port}` };
}

/** Stops accepting connections, drops the open ones, and resolves once the server has closed. */
export function closeServer(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

// ---------------------------------------------------------------------------------------------
// The AWS JSON server.

/** Handles one operation: `input` is the parsed JSON body (`{}` when empty); throw AwsError for client errors. */
export type AwsJsonOperation = (input: unknown, req: http.IncomingMessage) => unknown;

export interface AwsJsonServerOptions {
  /** Service name for error messages, e.g. 'Step Functions'. */
  name: string;
  /** X-Amz-Target prefix before the dot, e.g. 'AWSStepFunctions' or 'secretsmanager'. */
  targetPrefix: string;
  /** Content type of every response, e.g. 'application/x-amz-json-1.0'. */
  contentType: string;
  operations: Record<string, AwsJsonOperation>;
  /** Only requests signed (SigV4) with these credentials for this signing name are served, controls included; others get 403. */
  signedBy: { credentials: AwsCredentials; service: string };
  /** Local-only controls for tests, keyed `"<METHOD> /_local/<name>"`; each answers 200 with its result as JSON. */
  controls?: Record<string, () => unknown>;
  /** Larger bodies are answered 413 with `validationErrorType`. */
  maxBodyBytes: number;
  /** The service's `__type` for invalid input (used for an oversized body). */
  validationErrorType: string;
  /** What a non-AwsError failure is answered with (status 500). */
  internalError: { type: string; message: string };
  /** Told about each non-AwsError failure. */
  onInternalError?: (err: unknown) => void;
  host?: string | undefined;
  port?: number | undefined;
}

export interface AwsJsonServer {
  endpoint: string;
  server: http.Server;
  /** Closes the server and its connections (safe to call more than once). */
  close(): Promise<void>;
}

export async function startAwsJsonServer(opts: AwsJsonServerOptions): Promise<AwsJsonServer> {
  const { operations, maxBodyBytes } = opts;
  const prefix = `${opts.targetPrefix}.`;

  const send = (res: http.ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}) => {
    const body = JSON.stringify(payload ?? {});
    res.writeHead(status, {
      ...headers,
      'content-type': opts.contentType,
      'content-length': Buffer.byteLength(body),
      'x-amzn-requestid': randomUUID(),
    });
    res.end(body);
  };

  const respond = async (req: http.IncomingMessage, res: http.ServerResponse, chunks: Buffer[], size: number) => {
    try {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      if (size > maxBodyBytes) throw new AwsError(opts.validationErrorType, 'Request body too large', 413);
      const bytes = Buffer.concat(chunks);
      const unsigned = verifySignature(req, { ...opts.signedBy, bodySha256: sha256Hex(bytes) });
      if (unsigned) throw new AwsError(unsigned.jsonType, unsigned.message, 403);
      if (path.startsWith('/_local/')) {
        const control = opts.controls?.[`${req.method ?? ''} ${path}`];
        if (!control) throw new AwsError('UnknownOperationException', `No local control ${req.method ?? ''} ${path}`, 404);
        send(res, 200, await control());
        return;
      }
      if (req.method !== 'POST') throw new AwsError('UnknownOperationException', `Method ${req.method ?? ''} is not supported`, 404);
      const target = req.headers['x-amz-target'];
      const operationName = typeof target === 'string' && target.startsWith(prefix) ? target.slice(prefix.length) : '';
      const operation = Object.hasOwn(operations, operationName) ? operations[operationName] : undefined;
      if (!operation) throw new AwsError('UnknownOperationException', `Unknown operation ${typeof target === 'string' ? target : ''}`);
      // The runtime's own looks at a queue (local/sqs.ts) are not the product's calls.
      if (req.headers['x-vnfm-local-unmetered'] === undefined) usage.call(opts.signedBy.service, operationName);
      const text = bytes.toString('utf8');
      let body: unknown = {};
      if (text.trim() !== '') {
        try {
          body = JSON.parse(text);
        } catch {
          throw new AwsError('SerializationException', 'Request body is not valid JSON');
        }
      }
      send(res, 200, await operation(body, req));
    } catch (err) {
      if (err instanceof AwsError) send(res, err.status, { __type: err.type, message: err.message }, err.headers);
      else {
        opts.onInternalError?.(err);
        send(res, 500, { __type: opts.internalError.type, message: opts.internalError.message });
      }
    }
  };

  const server = createGuardedServer(
    opts.name,
    async (req, res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      // A client that hangs up mid-body rejects this; the guard closes its socket.
      await new Promise<void>((resolve, reject) => {
        req.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= maxBodyBytes) chunks.push(chunk);
        });
        req.on('end', resolve);
        req.on('error', reject);
      });
      await respond(req, res, chunks, size);
    },
    (line) => (opts.onInternalError ? opts.onInternalError(new Error(line)) : process.stderr.write(`${line}\n`)),
  );

  const { endpoint } = await listen(server, opts);
  let closing: Promise<void> | undefined;
  return {
    endpoint,
    server,
    close() {
      closing ??= closeServer(server);
      return closing;
    },
  };
}

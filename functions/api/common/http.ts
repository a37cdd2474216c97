// The HTTP edge shared by every API function: a middy chain (errors as ProblemDetails, the
// authentication seam, SOL013 Version/Accept/Content-Type rules, JSON body parsing) in front of a
// per-resource route table. Handlers receive a plain ApiRequest and return an ApiResult.
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import {
  BadRequestError, MethodNotAllowedError, NotAcceptableError, NotFoundError, PayloadTooLargeError,
  ProblemError, UnsupportedMediaTypeError,
} from '#lib/sol/errors.ts';
import type { Caller } from '#lib/lcm/vnf-instances.ts';
import { log } from '#lib/log.ts';
import { nextLink } from '#lib/sol/paging.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ApiRequest {
  method: Method;
  /** The API major version from the path (/vnflcm/v1 or /vnflcm/v2); undefined on unversioned paths. */
  apiMajorVersion?: 1 | 2;
  params: Record<string, string>;
  rawQuery: string;
  body: unknown;
  baseUrl: string;
  caller: Caller;
  headers: Record<string, string>;
}

export interface ApiResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export type RouteHandler = (request: ApiRequest) => Promise<ApiResult>;
/** Route path as written in template.yaml -> method -> handler. */
export type RouteTable = Record<string, Partial<Record<Method, RouteHandler>>>;

export interface ApiOptions {
  /** Body size limit; larger bodies get 413 before they are parsed. */
  maxBodyBytes?: number;
}

/**
 * SOL013 4.9 / SOL003 API versions this product serves, per major version: the highest
 * minor.patch accepted and the list shown by api_versions.
 */
export const API_VERSIONS: Record<1 | 2, { current: string; maxMinor: number }> = {
  1: { current: '1.3.0', maxMinor: 3 },
  2: { current: '2.0.0', maxMinor: 3 },
};

type Event = APIGatewayProxyEventV2;
type Result = APIGatewayProxyStructuredResultV2;

interface State {
  responseVersion?: string;
}

function lowerCaseHeaders(headers: Event['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) if (value !== undefined) out[name.toLowerCase()] = value;
  return out;
}

function baseUrlOf(event: Event, headers: Record<string, string>): string {
  const proto = headers['x-forwarded-proto'] ?? 'https';
  const host = event.requestContext.domainName ?? headers.host ?? 'localhost';
  const stage = event.requestContext.stage && event.requestContext.stage !== '$default' ? `/${event.requestContext.stage}` : '';
  return `${proto}://${host}${stage}`;
}

/** SOL013 4.9: a Version header names major.minor.patch; the major must be the path's. */
function negotiateVersion(major: 1 | 2 | undefined, header: string | undefined): string | undefined {
  if (major === undefined) return undefined;
  const supported = API_VERSIONS[major];
  if (header === undefined) {
    if (major === 2) throw new BadRequestError('The "Version" request header is required on /vnflcm/v2 (e.g. "Version: 2.0.0")');
    return supported.current;
  }
  const match = /^(\d+)\.(\d+)\.(\d+)(?:-[\w.:-]+)?$/.exec(header.trim());
  if (!match) throw new BadRequestError(`The "Version" header "${header}" is not a version (major.minor.patch)`);
  const [, maj, min] = match;
  if (Number(maj) !== major || Number(min) > supported.maxMinor) {
    throw new NotAcceptableError(`API version ${header} is not supported on /vnflcm/v${major}; supported: ${major}.0.0 to ${major}.${supported.maxMinor}.x`);
  }
  return header.trim();
}

function acceptsJson(accept: string | undefined): boolean {
  if (!accept) return true;
  return accept.split(',').some((part) => {
    const type = part.split(';')[0]?.trim().toLowerCase() ?? '';
    return type === '*/*' || type === 'application/*' || type === 'application/json' || type === 'application/problem+json';
  });
}

function parseBody(event: Event, method: Method, headers: Record<string, string>, maxBytes: number): unknown {
  if (event.body === undefined || event.body === null || event.body === '') return undefined;
  const raw = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
  if (raw.length > maxBytes) throw new PayloadTooLargeError(`The request body is ${raw.length} bytes; at most ${maxBytes} are accepted`);
  const type = (headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  const allowed = method === 'PATCH' ? ['application/merge-patch+json', 'application/json'] : ['application/json'];
  if (!type || !allowed.includes(type)) {
    throw new UnsupportedMediaTypeError(`Content-Type "${headers['content-type'] ?? ''}" is not supported; send ${allowed.join(' or ')}`);
  }
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (error) {
    throw new BadRequestError(`The request body is not valid JSON: ${(error as Error).message}`);
  }
}

function json(status: number, body: unknown, headers: Record<string, string>): Result {
  return {
    statusCode: status,
    headers: { ...headers, ...(body === undefined ? {} : { 'Content-Type': status >= 400 ? 'application/problem+json' : 'application/json' }) },
    body: body === undefined ? '' : JSON.stringify(body),
  };
}

/** The authentication seam: every API request passes here; OAuth 2.0 (SOL013 8) plugs in at this point. */
export function authenticate(_event: Event): Caller {
  return { tenantId: 'default' };
}

export function routeKeyPath(routeKey: string): string {
  const space = routeKey.indexOf(' ');
  return space === -1 ? routeKey : routeKey.slice(space + 1);
}

export function httpApi(routes: RouteTable, options: ApiOptions = {}) {
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const state = new WeakMap<Event, State>();

  const core = async (event: Event): Promise<Result> => {
    const headers = lowerCaseHeaders(event.headers);
    const method = event.requestContext.http.method.toUpperCase() as Method;
    const routePath = routeKeyPath(event.routeKey);
    const major = /^\/vnflcm\/v([12])\//.exec(routePath)?.[1];
    const apiMajorVersion = major ? (Number(major) as 1 | 2) : undefined;
    const unversioned = routePath.endsWith('/api_versions');
    const version = unversioned ? (apiMajorVersion ? API_VERSIONS[apiMajorVersion].current : undefined) : negotiateVersion(apiMajorVersion, headers.version);
    state.set(event, { responseVersion: version });

    const table = routes[routePath];
    if (!table) throw new NotFoundError(`No resource at ${event.rawPath}`);
    const handler = table[method];
    if (!handler) throw new MethodNotAllowedError(method, Object.keys(table));
    if (!acceptsJson(headers.accept)) throw new NotAcceptableError(`Accept "${headers.accept}" cannot be satisfied; this resource produces application/json`);

    const request: ApiRequest = {
      method,
      apiMajorVersion,
      params: Object.fromEntries(Object.entries(event.pathParameters ?? {}).map(([k, v]) => [k, decodeURIComponent(v ?? '')])),
      rawQuery: event.rawQueryString ?? '',
      body: parseBody(event, method, headers, maxBodyBytes),
      baseUrl: baseUrlOf(event, headers),
      caller: authenticate(event),
      headers,
    };
    const result = await handler(request);
    return json(result.status, result.body, {
      ...(version ? { Version: version } : {}),
      'Accept-Ranges': 'none',
      ...result.headers,
    });
  };

  return middy<Event, Result, Error, Context>()
    .use({
      onError: async (request) => {
        const error = request.error;
        const version = state.get(request.event)?.responseVersion;
        const base = { ...(version ? { Version: version } : {}), 'Accept-Ranges': 'none' };
        if (error instanceof ProblemError) {
          request.response = json(error.status, error.toProblem(), { ...base, ...error.headers });
          return;
        }
        log.error('unhandled error in API handler', { routeKey: request.event.routeKey, error });
        request.response = json(500, { title: 'Internal Server Error', status: 500, detail: 'The request could not be completed because of an internal error; it has been logged' }, base);
      },
    })
    .handler(core);
}

/** Registers the same handlers under /vnflcm/v1 and /vnflcm/v2. */
export function bothVersions(suffix: string, handlers: Partial<Record<Method, RouteHandler>>): RouteTable {
  return { [`/vnflcm/v1${suffix}`]: handlers, [`/vnflcm/v2${suffix}`]: handlers };
}

export function pageSize(): number {
  const configured = Number(process.env.PAGE_SIZE ?? 100);
  return Number.isInteger(configured) && configured > 0 ? configured : 100;
}

/** A list response: 200 with the page, and exactly one `Link: <...>; rel="next"` when there is more (SOL013 5.4). */
export function pagedList(page: { items: unknown[]; marker?: string }, collectionUrl: string): ApiResult {
  const headers: Record<string, string> = {};
  if (page.marker) headers.Link = nextLink(collectionUrl, page.marker);
  return { status: 200, body: page.items, headers };
}

// The HTTP edge shared by every API function: a middy chain (errors as ProblemDetails, the
// authentication seam, SOL013 Version/Accept/Content-Type rules, JSON body parsing) in front of a
// per-resource route table. Each route carries the schema of the input it accepts; the edge parses
// the input once, before the handler runs, so a handler receives typed input and returns an ApiResult.
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type * as z from 'zod';
import {
  BadRequestError,
  MethodNotAllowedError,
  NotAcceptableError,
  NotFoundError,
  PayloadTooLargeError,
  ProblemError,
  UnsupportedMediaTypeError,
} from '#lib/sol/errors.ts';
import type { Caller } from '#lib/auth/tenancy.ts';
import { grants, normalizeScopes, requiredScope, tenantOf } from '#lib/auth/scopes.ts';
import { parseBasicCredentials } from '#lib/auth/basic.ts';
import {
  assertClientCurrent,
  authConfig,
  ForbiddenError,
  TooManyFailuresError,
  UnauthorizedError,
  verifyAccessToken,
  verifyBasic,
  type AuthConfig,
  type VerifiedToken,
} from '#lib/auth/tokens.ts';
import { clientFailureLimiter } from '#lib/auth/failure-limit.ts';
import { log } from '#lib/log.ts';
import { instrumented } from '#lib/metrics.ts';
import { nextLink } from '#lib/sol/paging.ts';
import { parseRequest } from '#lib/sol/requests.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type ApiFamily = 'vnflcm' | 'vnfpkgm' | 'vnffm' | 'vnfpm';

export interface ApiRequest<Body = unknown, Query = unknown> {
  method: Method;
  family?: ApiFamily;
  /** The API major version from the path (/vnflcm/v1, /vnfpkgm/v2, ...); undefined on unversioned paths. */
  apiMajorVersion?: 1 | 2;
  params: Record<string, string>;
  /** The query as sent, for the lib services that read SOL013 filter/fields/nextpage_opaque_marker themselves. */
  rawQuery: string;
  /** The query as the route's `query` parser read it (undefined on routes without one). */
  query: Query;
  /** The JSON body: parsed by the route's schema, or as sent on routes without one (a lib service checks it). */
  body: Body;
  /** The body as bytes (routes with `raw` media types). */
  rawBody?: Buffer;
  baseUrl: string;
  caller: Caller;
  headers: Record<string, string>;
}

export interface ApiResult {
  status: number;
  /** A JSON body. */
  body?: unknown;
  /** A non-JSON body; its Content-Type goes in headers. */
  bytes?: Buffer;
  headers?: Record<string, string>;
}

/**
 * One route: the input it accepts and the handler that gets it. The edge checks the input before
 * the handler runs, so a bad body is a 400 whichever handler it was meant for.
 */
export interface Route<Body = unknown, Query = unknown> {
  /** The zod schema the JSON body must satisfy; without one the handler gets the JSON as sent. */
  schema?: z.ZodType<Body>;
  /** The SOL data type the schema stands for, named in the 400's detail ("Invalid CreateVnfRequest: ..."). */
  title?: string;
  /** Reads the query string into what the handler needs; throws a ProblemError (400) for a bad one. */
  query?: (params: URLSearchParams) => Query;
  /** Media types of a body taken as raw bytes (uploads) instead of JSON. */
  raw?: readonly string[];
  /** Media types the response can have, for Accept negotiation (default application/json). */
  produces?: readonly string[];
  // Method syntax on purpose: a Route<CreateVnfRequest> then fits a table of Route<unknown>.
  handler(request: ApiRequest<Body, Query>): Promise<ApiResult>;
}

/** A route written so its handler's input type follows from its schema and query parser. */
export function route<Body = unknown, Query = unknown>(spec: Route<Body, Query>): Route<Body, Query> {
  return spec;
}

export type RouteMethods = Partial<Record<Method, Route>>;
/** Route path as written in template.yaml -> method -> route. */
export type RouteTable = Record<string, RouteMethods>;

export interface ApiOptions {
  /** JSON body size limit; larger bodies get 413 before they are parsed. */
  maxBodyBytes?: number;
  /** Raw body size limit (uploads): what a synchronous Lambda invocation can carry. */
  maxRawBodyBytes?: number;
}

/**
 * SOL013 4.9 API versions this product serves, per API family and major version: the version
 * shown by api_versions and the highest minor accepted in a Version header. vnflcm v1 and
 * vnfpkgm v1 are the versions Tacker and its CLI speak.
 */
export const API_VERSIONS: Record<ApiFamily, Record<1 | 2, { current: string; maxMinor: number }>> = {
  vnflcm: { 1: { current: '1.3.0', maxMinor: 3 }, 2: { current: '2.0.0', maxMinor: 3 } },
  vnfpkgm: { 1: { current: '1.3.0', maxMinor: 3 }, 2: { current: '2.1.0', maxMinor: 4 } },
  // SOL003 VNF fault management exists as v1 only (V3.7.1: 1.5.0); no /vnffm/v2 route is served.
  vnffm: { 1: { current: '1.5.0', maxMinor: 5 }, 2: { current: '1.5.0', maxMinor: 5 } },
  // SOL003 VNF performance management exists as v2 only (V3.7.1: 2.2.0); no /vnfpm/v1 route is served.
  vnfpm: { 1: { current: '2.2.0', maxMinor: 2 }, 2: { current: '2.2.0', maxMinor: 2 } },
};

/** Only the SOL003 v2 API insists on the Version header; Tacker's clients never send it elsewhere. */
const VERSION_REQUIRED: ReadonlySet<string> = new Set(['vnflcm/2', 'vnffm/1', 'vnfpm/2']);

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

/** Families whose major version 2 is served (SOL003 VNF fault management exists as v1 only). */
const HIGHEST_MAJOR: Record<ApiFamily, 1 | 2> = { vnflcm: 2, vnfpkgm: 2, vnffm: 1, vnfpm: 2 };

/**
 * The Version a response carries when the request named none that applies: the path's family and
 * major version (`/vnflcm/v1/...` -> 1.3.0), the family's highest for an unversioned path
 * (`/vnflcm/api_versions`), and vnflcm's highest for a path of no family (a 404).
 */
function defaultResponseVersion(path: string): string {
  const match = /^\/(vnflcm|vnfpkgm|vnffm|vnfpm)(?:\/v([12])(?:\/|$))?/.exec(path);
  const family = (match?.[1] ?? 'vnflcm') as ApiFamily;
  const major = match?.[2] ? (Number(match[2]) as 1 | 2) : HIGHEST_MAJOR[family];
  return API_VERSIONS[family][major].current;
}

/** SOL013 4.9: a Version header names major.minor.patch; the major must be the path's. */
function negotiateVersion(family: ApiFamily | undefined, major: 1 | 2 | undefined, header: string | undefined): string | undefined {
  if (family === undefined || major === undefined) return undefined;
  const supported = API_VERSIONS[family][major];
  if (header === undefined) {
    if (VERSION_REQUIRED.has(`${family}/${major}`))
      throw new BadRequestError(`The "Version" request header is required on /${family}/v${major} (e.g. "Version: ${supported.current}")`);
    return supported.current;
  }
  const match = /^(\d+)\.(\d+)\.(\d+)(?:-[\w.:-]+)?$/.exec(header.trim());
  if (!match) throw new BadRequestError(`The "Version" header "${header}" is not a version (major.minor.patch)`);
  const [, maj, min] = match;
  if (Number(maj) !== major || Number(min) > supported.maxMinor) {
    throw new NotAcceptableError(`API version ${header} is not supported on /${family}/v${major}; supported: ${major}.0.0 to ${major}.${supported.maxMinor}.x`);
  }
  return header.trim();
}

function accepts(accept: string | undefined, produces: readonly string[]): boolean {
  if (!accept || produces.includes('*/*')) return true;
  return accept.split(',').some((part) => {
    const type = part.split(';')[0]?.trim().toLowerCase() ?? '';
    if (type === '*/*' || type === 'application/problem+json') return true;
    return produces.some((p) => p === type || (type.endsWith('/*') && p.startsWith(type.slice(0, -1))));
  });
}

function mediaType(headers: Record<string, string>): string {
  return (headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

function bodyBytes(event: Event, maxBytes: number): Buffer | undefined {
  if (event.body === undefined || event.body === null || event.body === '') return undefined;
  const raw = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
  if (raw.length > maxBytes) throw new PayloadTooLargeError(`The request body is ${raw.length} bytes; at most ${maxBytes} are accepted`);
  return raw;
}

function parseJsonBody(raw: Buffer | undefined, method: Method, headers: Record<string, string>): unknown {
  if (raw === undefined) return undefined;
  const type = mediaType(headers);
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

function binary(status: number, bytes: Buffer, headers: Record<string, string>): Result {
  return { statusCode: status, headers, body: bytes.toString('base64'), isBase64Encoded: true };
}

/** Claims an API Gateway JWT authorizer has already verified (payload format 2.0), if one is attached to the route. */
function gatewayVerified(event: Event): VerifiedToken | undefined {
  const jwt = (event.requestContext as { authorizer?: { jwt?: { claims?: Record<string, unknown>; scopes?: string[] | null } } }).authorizer?.jwt;
  if (!jwt?.claims) return undefined;
  const clientId = String(jwt.claims.client_id ?? jwt.claims.sub ?? '');
  const scopes =
    jwt.scopes ??
    String(jwt.claims.scope ?? '')
      .split(' ')
      .filter(Boolean);
  return { clientId, scopes, claims: jwt.claims };
}

/** Failed Basic authentications per client id and source address, per function instance (the token endpoint keeps its own). */
const basicFailures = clientFailureLimiter();

/** HTTP Basic client credentials, refused with 429 while the client id or source address has failed too often. */
async function verifyBasicLimited(config: AuthConfig, credential: string, sourceIp: string): Promise<VerifiedToken> {
  const header = `Basic ${credential}`;
  const basic = parseBasicCredentials(header);
  // Malformed credentials (bad base64 or percent-encoding) are refused here, not sent on.
  if (!basic) throw new UnauthorizedError('The Basic credentials are not a form-urlencoded client id and secret (RFC 6749 2.3.1)', 'invalid_request');
  const retryAfter = basicFailures.retryAfterSeconds(basic.clientId, sourceIp);
  if (retryAfter) throw new TooManyFailuresError(retryAfter);
  try {
    return await verifyBasic(config, header);
  } catch (error) {
    if (error instanceof UnauthorizedError) basicFailures.fail(basic.clientId, sourceIp);
    throw error;
  }
}

/**
 * SOL013 8 authentication and authorization, for every API request: a bearer token in
 * Authorization or (Tacker's CLI) X-Auth-Token, or HTTP Basic client credentials; then the
 * client's current state (not deleted, no secret rotation since the token was issued) and the
 * scope the route needs (lib/auth/scopes.ts). The tenant comes from the client's `tenant:<id>` scope.
 */
export async function authenticate(event: Event, method: string, routePath: string): Promise<Caller> {
  const requirement = requiredScope(method, routePath);
  const config = authConfig();
  if (config === null) return { tenantId: 'default', clientId: 'anonymous', admin: true };
  if (requirement.public) return { tenantId: 'default' };
  const headers = lowerCaseHeaders(event.headers);
  let verified = gatewayVerified(event);
  if (!verified) {
    const authorization = headers.authorization?.trim() ?? '';
    const scheme = authorization.split(' ', 1)[0]?.toLowerCase();
    const credential = authorization.slice(scheme?.length ?? 0).trim();
    // Basic is checked against the client's state inside verifyBasic (a stale cached token is re-fetched).
    if (scheme === 'basic' && credential) verified = await verifyBasicLimited(config, credential, event.requestContext.http.sourceIp);
    else if (scheme === 'bearer' && credential) verified = await verifyAccessToken(config, credential);
    else if (headers['x-auth-token']) verified = await verifyAccessToken(config, headers['x-auth-token'].trim());
    else
      throw new UnauthorizedError(
        authorization
          ? 'The Authorization scheme is not supported; send a Bearer token, X-Auth-Token or Basic client credentials'
          : 'This resource needs an OAuth 2.0 access token (Authorization: Bearer, X-Auth-Token) or client credentials (Basic)',
      );
    if (scheme !== 'basic') await assertClientCurrent(verified);
  } else {
    await assertClientCurrent(verified);
  }
  const scopes = normalizeScopes(verified.scopes);
  if (!grants(scopes, requirement.scope))
    throw new ForbiddenError(`The access token lacks the scope "${requirement.scope}" this request needs`, requirement.scope);
  const tenantId = tenantOf(scopes);
  if (!tenantId) throw new ForbiddenError('The client belongs to no tenant (no tenant:<id> scope)', requirement.scope);
  return { tenantId, clientId: verified.clientId, admin: scopes.has('admin') };
}

/**
 * What an identifier in a path may look like: the product's UUIDs, and the VIMs' server ids and pod
 * names. Anything else names no record, so it gets its 404 here rather than reaching a store (a
 * DynamoDB key has at most 2048 bytes; a longer one would be a ValidationException, a 500).
 */
const WELL_FORMED_ID = /^[A-Za-z0-9._:~-]{1,255}$/;
/** Greedy path parameters, which are paths inside a package rather than identifiers. */
const PATH_VALUED = new Set(['artifactPath']);

/** Path parameters, percent-decoded; bad percent-encoding is the client's error (400), not ours. */
function pathParameters(event: Event): Record<string, string> {
  return Object.fromEntries(
    Object.entries(event.pathParameters ?? {}).map(([name, value]) => {
      let decoded: string;
      try {
        decoded = decodeURIComponent(value ?? '');
      } catch {
        throw new BadRequestError(`The path parameter "${name}" is not valid percent-encoding`);
      }
      if (!PATH_VALUED.has(name) && !WELL_FORMED_ID.test(decoded))
        throw new NotFoundError(`No resource at ${event.rawPath.slice(0, 300)}: "${name}" is not a well-formed identifier`);
      return [name, decoded];
    }),
  );
}

export function routeKeyPath(routeKey: string): string {
  const space = routeKey.indexOf(' ');
  return space === -1 ? routeKey : routeKey.slice(space + 1);
}

/** The route a request names: 404 for a path no route serves, 405 for a method it does not take, 406 for an Accept it cannot meet. */
function routeOf(routes: RouteTable, routePath: string, method: Method, event: Event, accept: string | undefined): Route {
  const table = routes[routePath];
  if (!table) throw new NotFoundError(`No resource at ${event.rawPath}`);
  const found = table[method];
  if (!found) throw new MethodNotAllowedError(method, Object.keys(table));
  const produces = found.produces ?? ['application/json'];
  if (!accepts(accept, produces)) throw new NotAcceptableError(`Accept "${accept}" cannot be satisfied; this resource produces ${produces.join(' or ')}`);
  return found;
}

/** The request body as the route takes it: JSON (checked for syntax and media type) or raw bytes. */
function bodyOf(
  event: Event,
  route: Route,
  method: Method,
  headers: Record<string, string>,
  limits: Required<ApiOptions>,
): { body: unknown; rawBody?: Buffer } {
  if (!route.raw) return { body: parseJsonBody(bodyBytes(event, limits.maxBodyBytes), method, headers) };
  const raw = bodyBytes(event, limits.maxRawBodyBytes);
  if (raw && !route.raw.includes(mediaType(headers))) {
    throw new UnsupportedMediaTypeError(`Content-Type "${headers['content-type'] ?? ''}" is not supported; send ${route.raw.join(' or ')}`);
  }
  return { body: undefined, rawBody: raw };
}

/**
 * The route's input, parsed once (as Powertools' parser does): the body by the route's schema
 * (lib/sol/requests.ts words the 400 as every SOL request type's) and the query by its parser.
 */
function inputOf(route: Route, body: unknown, rawQuery: string): { body: unknown; query: unknown } {
  return {
    body: route.schema ? parseRequest(route.schema, body, route.title ?? 'request body') : body,
    query: route.query ? route.query(new URLSearchParams(rawQuery)) : undefined,
  };
}

export function httpApi(routes: RouteTable, options: ApiOptions = {}) {
  const limits: Required<ApiOptions> = { maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024, maxRawBodyBytes: options.maxRawBodyBytes ?? 4 * 1024 * 1024 };
  const state = new WeakMap<Event, State>();

  const core = async (event: Event): Promise<Result> => {
    const headers = lowerCaseHeaders(event.headers);
    const method = event.requestContext.http.method.toUpperCase() as Method;
    const routePath = routeKeyPath(event.routeKey);
    const versioned = /^\/(vnflcm|vnfpkgm|vnffm|vnfpm)\/v([12])\//.exec(routePath);
    const family = (versioned?.[1] ?? /^\/(vnflcm|vnfpkgm|vnffm|vnfpm)\//.exec(routePath)?.[1]) as ApiFamily | undefined;
    const apiMajorVersion = versioned ? (Number(versioned[2]) as 1 | 2) : undefined;
    // SOL013 4.9: every response carries Version, also the 400, 401, 404 and 406 answered before a route runs.
    // The catch-all route ($default) is known by the path the caller asked for.
    const requestedPath = routePath === '$default' ? event.rawPath : routePath;
    state.set(event, { responseVersion: defaultResponseVersion(requestedPath) });
    // Before anything else, so an unauthenticated caller learns nothing (deny by default: $default
    // and routes no scope rule names need a token too).
    const caller = await authenticate(event, method, requestedPath);
    const version = routePath.endsWith('/api_versions') ? defaultResponseVersion(routePath) : negotiateVersion(family, apiMajorVersion, headers.version);
    if (version) state.set(event, { responseVersion: version });

    const route = routeOf(routes, routePath, method, event, headers.accept);
    const { body, rawBody } = bodyOf(event, route, method, headers, limits);
    // Path parameters before the body's schema: a malformed id is a 404 whatever the body says.
    const params = pathParameters(event);
    // Correlation keys of the rest of this invocation's log lines.
    log.appendKeys({ vnfInstanceId: params.vnfInstanceId, opOccId: params.vnfLcmOpOccId });
    const rawQuery = event.rawQueryString ?? '';
    const result = await route.handler({
      method,
      family,
      apiMajorVersion,
      params,
      rawQuery,
      ...inputOf(route, body, rawQuery),
      rawBody,
      baseUrl: baseUrlOf(event, headers),
      caller: { ...caller, apiRoot: baseUrlOf(event, headers) },
      headers,
    });
    const responseHeaders = { ...(version ? { Version: version } : {}), 'Accept-Ranges': 'none', ...result.headers };
    return result.bytes ? binary(result.status, result.bytes, responseHeaders) : json(result.status, result.body, responseHeaders);
  };

  // Each invocation logs with its Lambda context and publishes its metrics (lib/metrics.ts).
  const handler = middy<Event, Result, Error, Context>()
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
        request.response = json(
          500,
          { title: 'Internal Server Error', status: 500, detail: 'The request could not be completed because of an internal error; it has been logged' },
          base,
        );
      },
    })
    .handler(core);
  return instrumented((event: Event, context: Context) => handler(event, context));
}

/**
 * Registers a resource under /<family>/v1 and /<family>/v2: the same routes, or routes per major
 * version where the two differ in what they accept (v1's array-shaped vimConnectionInfo).
 */
export function bothVersions(suffix: string, routes: RouteMethods | ((major: 1 | 2) => RouteMethods), family: ApiFamily = 'vnflcm'): RouteTable {
  const of = (major: 1 | 2) => (typeof routes === 'function' ? routes(major) : routes);
  return { [`/${family}/v1${suffix}`]: of(1), [`/${family}/v2${suffix}`]: of(2) };
}

export function pageSize(): number {
  const configured = Number(process.env.PAGE_SIZE ?? 100);
  return Number.isInteger(configured) && configured > 0 ? configured : 100;
}

/** A 201 for a created resource whose representation links to itself: Location is that link. */
export function created(representation: Record<string, unknown>): ApiResult {
  return { status: 201, body: representation, headers: { Location: (representation._links as { self: { href: string } }).self.href } };
}

/** A list response: 200 with the page, and exactly one `Link: <...>; rel="next"` when there is more (SOL013 5.4). */
export function pagedList(page: { items: unknown[]; marker?: string }, collectionUrl: string): ApiResult {
  const headers: Record<string, string> = {};
  if (page.marker) headers.Link = nextLink(collectionUrl, page.marker);
  return { status: 200, body: page.items, headers };
}

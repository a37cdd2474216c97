// The VNFM as client of an element manager's (or a VNF's) VNF LCM Coordination interface (ETSI GS
// NFV-SOL 002 clause 10, /lcmcoord/v1): one HTTP exchange per call, never a wait. POST
// /coordinations answers 201 with the LcmCoord (synchronous mode), 202 with a Location to read
// later (asynchronous mode, perhaps with Retry-After), or 503 with Retry-After (ask again later);
// GET of that Location answers 202 while the coordination runs and 200 with the LcmCoord once it
// has finished. The caller (lib/lcm/coordination.ts) keeps the state between calls and decides when
// to call again. Calls go through the egress policy, authenticated as the request asked (OAuth 2.0
// client credentials or BASIC, the callback client's token cache included); the same HTTP client could
// serve an NFVO client (lib/nfvo) too.
import { isRecord } from '#lib/json.ts';
import type { EgressPolicy, EgressResponse } from '#lib/egress.ts';
import { callCallback } from '#lib/notify/callback.ts';
import type { NotificationAuth } from '#lib/notify/model.ts';

/** The API version of SOL002 V3.7.1's VNF LCM Coordination interface (its OpenAPI file's info.version). */
export const LCM_COORDINATION_API_VERSION = '1.1.0';

export type LcmCoordResult = 'CONTINUE' | 'ABORT' | 'CANCELLED';

/** SOL002 10.5.2.2 LcmCoordRequest. */
export interface LcmCoordRequest {
  vnfInstanceId: string;
  vnfLcmOpOccId: string;
  lcmOperationType: string;
  coordinationActionName: string;
  inputParams?: Record<string, unknown>;
  _links: { vnfLcmOpOcc: { href: string }; vnfInstance: { href: string } };
}

/** SOL002 10.5.2.3 LcmCoord, as far as the VNFM reads it. */
export interface LcmCoord {
  id: string;
  coordinationResult: LcmCoordResult;
  outputParams?: Record<string, unknown>;
  warnings?: string;
  error?: { title?: string; status?: number; detail?: string };
}

/** Where the coordinations are asked for: the EM's API root, and how the VNFM authenticates there. */
export interface CoordinationEndpoint {
  apiRoot: string;
  auth?: NotificationAuth;
}

/** What one exchange told. */
export type CoordinationAnswer =
  /** 201 to the POST, 200 to the GET: the coordination has finished. */
  | { kind: 'finished'; coordination: LcmCoord; location?: string }
  /** 202: running; read `location` again, not before `retryAfterMs` when the EM said. */
  | { kind: 'running'; location: string; retryAfterMs?: number }
  /** 503 to the POST: nothing was started; ask again after `retryAfterMs` (SOL002: "rejectedLcmCoordinations"). */
  | { kind: 'rejected'; retryAfterMs: number; detail: string }
  /** Any other answer: the coordination cannot go on; `transient` when asking again later may help (a GET's 5xx, 429). */
  | { kind: 'failed'; status: number; detail: string; transient: boolean };

/** When no Retry-After says: read a running coordination again after this long; a 503 is retried after this long. */
export const DEFAULT_RETRY_AFTER_MS = 5_000;

/** Retry-After (RFC 9110 10.2.3) in milliseconds from `now`: delay-seconds or an HTTP-date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, now: number): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export function coordinationsUrl(apiRoot: string): string {
  return `${apiRoot.replace(/\/+$/, '')}/lcmcoord/v1/coordinations`;
}

/**
 * The Location of a coordination, absolute, and only on the EM's own origin: the VNFM sends its
 * credentials for the EM there, so an answer may not point it anywhere else.
 */
function locationOf(endpoint: CoordinationEndpoint, header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  const base = new URL(coordinationsUrl(endpoint.apiRoot));
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    return undefined;
  }
  return url.origin === base.origin ? url.href : undefined;
}

/** The last segment of a coordination's Location: its coordinationId (SOL002 10.4.3.2). */
export function coordinationIdOf(location: string): string {
  return decodeURIComponent(new URL(location).pathname.replace(/\/+$/, '').split('/').pop() ?? '');
}

function problemDetail(response: EgressResponse): string {
  try {
    const body = JSON.parse(response.body) as unknown;
    if (isRecord(body) && typeof body.detail === 'string') return body.detail;
  } catch {
    // not JSON: the status says it
  }
  return `HTTP ${response.status}`;
}

function lcmCoordOf(response: EgressResponse): LcmCoord | undefined {
  let body: unknown;
  try {
    body = JSON.parse(response.body);
  } catch {
    return undefined;
  }
  if (!isRecord(body) || typeof body.id !== 'string' || !['CONTINUE', 'ABORT', 'CANCELLED'].includes(body.coordinationResult as string)) return undefined;
  return body as unknown as LcmCoord;
}

function finished(response: EgressResponse, location?: string): CoordinationAnswer {
  const coordination = lcmCoordOf(response);
  if (!coordination)
    return {
      kind: 'failed',
      status: response.status,
      detail: 'the answer is not an LcmCoord (id and coordinationResult CONTINUE, ABORT or CANCELLED)',
      transient: false,
    };
  return { kind: 'finished', coordination, ...(location ? { location } : {}) };
}

export interface CallOptions {
  policy: EgressPolicy;
  now?: () => number;
}

/** POST /coordinations (SOL002 10.4.2.3.1). */
export async function requestCoordination(endpoint: CoordinationEndpoint, request: LcmCoordRequest, options: CallOptions): Promise<CoordinationAnswer> {
  const now = options.now ?? Date.now;
  const response = await callCallback(coordinationsUrl(endpoint.apiRoot), {
    method: 'POST',
    version: LCM_COORDINATION_API_VERSION,
    body: request as unknown as Record<string, unknown>,
    auth: endpoint.auth,
    policy: options.policy,
    now,
  });
  const location = locationOf(endpoint, response.headers.location);
  if (response.status === 201) return finished(response, location);
  if (response.status === 202) {
    if (!location)
      return { kind: 'failed', status: 202, detail: "the 202 answer has no Location on the EM's own origin to read the result from", transient: false };
    const delay = retryAfterMs(response.headers['retry-after'], now());
    return { kind: 'running', location, ...(delay !== undefined ? { retryAfterMs: delay } : {}) };
  }
  if (response.status === 503)
    return { kind: 'rejected', retryAfterMs: retryAfterMs(response.headers['retry-after'], now()) ?? DEFAULT_RETRY_AFTER_MS, detail: problemDetail(response) };
  return { kind: 'failed', status: response.status, detail: problemDetail(response), transient: false };
}

/** GET /coordinations/{coordinationId} (SOL002 10.4.3.3.2): 200 finished, 202 still running. */
export async function readCoordination(endpoint: CoordinationEndpoint, location: string, options: CallOptions): Promise<CoordinationAnswer> {
  const now = options.now ?? Date.now;
  const response = await callCallback(location, { method: 'GET', version: LCM_COORDINATION_API_VERSION, auth: endpoint.auth, policy: options.policy, now });
  if (response.status === 200) return finished(response, location);
  const delay = retryAfterMs(response.headers['retry-after'], now());
  if (response.status === 202) return { kind: 'running', location, ...(delay !== undefined ? { retryAfterMs: delay } : {}) };
  const transient = response.status >= 500 || response.status === 429;
  return { kind: 'failed', status: response.status, detail: problemDetail(response), transient };
}

/** POST /coordinations/{coordinationId}/cancel (SOL002 10.4.4.3.1): true when the EM accepted it (202). */
export async function cancelCoordination(endpoint: CoordinationEndpoint, location: string, options: CallOptions): Promise<boolean> {
  const response = await callCallback(`${location.replace(/\/+$/, '')}/cancel`, {
    method: 'POST',
    version: LCM_COORDINATION_API_VERSION,
    auth: endpoint.auth,
    policy: options.policy,
    ...(options.now ? { now: options.now } : {}),
  });
  return response.status === 202;
}

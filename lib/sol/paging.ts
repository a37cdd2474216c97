// SOL013 clause 5.4 paging: the nextpage_opaque_marker carries the whole query state (signed, so a
// client cannot forge a DynamoDB start key) and the Link header that points at the next page.
import { createHmac, timingSafeEqual, type BinaryLike, type KeyObject } from 'node:crypto';
import * as z from 'zod';
import { BadRequestError, InternalError } from '#lib/sol/errors.ts';

export interface MarkerState {
  v: 1;
  /** The collection the marker pages through, e.g. "vnf_instances". */
  resource: string;
  /** The original raw query string without the marker, so the next page repeats filter and selectors. */
  query: string;
  /** DynamoDB ExclusiveStartKey of the next page. */
  after: Record<string, string | number>;
  /** The index the list reads through (lib/sol/plan.ts), absent when it reads the whole collection: a start key fits only its own index. */
  index?: string;
}

const markerStateSchema: z.ZodType<MarkerState> = z.strictObject({
  v: z.literal(1),
  resource: z.string().min(1),
  query: z.string(),
  after: z.record(z.string(), z.union([z.string(), z.number()])),
  index: z.string().min(1).optional(),
});

export type MarkerKey = BinaryLike | KeyObject;

export const MARKER_PARAMETER = 'nextpage_opaque_marker';
// Bounds the work done on client input before the signature is checked.
const MAX_MARKER_LENGTH = 16_384;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

function sign(payload: string, key: MarkerKey): string {
  return createHmac('sha256', key).update(payload).digest('base64url');
}

/** One line, since it ends up in ProblemDetails.detail. */
function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.length === 0 ? '(root)' : issue.path.map(String).join('.')}: ${issue.message}`).join('; ');
}

function invalid(reason: string): never {
  throw new BadRequestError(`Invalid ${MARKER_PARAMETER}: ${reason}`);
}

/** `<base64url(JSON)>.<base64url(HMAC-SHA256 of the first part)>` */
export function encodeMarker(state: MarkerState, key: MarkerKey): string {
  const parsed = markerStateSchema.safeParse(state);
  // Encoding a state that decodeMarker would reject is a bug here, not a client error.
  if (!parsed.success) throw new InternalError(`Cannot encode ${MARKER_PARAMETER}: ${describeIssues(parsed.error)}`);
  const payload = Buffer.from(JSON.stringify(parsed.data), 'utf8').toString('base64url');
  return `${payload}.${sign(payload, key)}`;
}

/** Verifies and decodes a marker issued by encodeMarker for `expectedResource`. */
export function decodeMarker(raw: string, key: MarkerKey, expectedResource: string): MarkerState {
  if (raw.length === 0) invalid('the marker is empty');
  if (raw.length > MAX_MARKER_LENGTH) invalid(`the marker is longer than ${MAX_MARKER_LENGTH} characters`);
  const parts = raw.split('.');
  const [payload, signature] = parts;
  if (parts.length !== 2 || payload === undefined || signature === undefined || !BASE64URL.test(payload) || !BASE64URL.test(signature)) {
    invalid('not a marker issued by this server (malformed)');
  }
  // Compared as text, so there is exactly one valid spelling of each signature.
  const expected = Buffer.from(sign(payload, key));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    invalid('signature mismatch (the marker was altered or not issued by this server)');

  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    invalid('the payload is not JSON');
  }
  const parsed = markerStateSchema.safeParse(json);
  if (!parsed.success) invalid(`unexpected content: ${describeIssues(parsed.error)}`);
  if (parsed.data.resource !== expectedResource) {
    invalid(`the marker was issued for "${parsed.data.resource}", not "${expectedResource}"`);
  }
  return parsed.data;
}

/**
 * The value of the Link header for the next page. Any query or fragment on `baseUrl` is dropped:
 * the marker alone carries the query state.
 */
export function nextLink(baseUrl: string, marker: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new InternalError(`nextLink: "${baseUrl}" is not an absolute URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new InternalError(`nextLink: "${baseUrl}" is not an http(s) URL`);
  url.search = '';
  url.hash = '';
  return `<${url.href}?${MARKER_PARAMETER}=${encodeURIComponent(marker)}>; rel="next"`;
}

/** A page of records plus the DynamoDB key to resume after, if there may be more. */
export interface Page<T> {
  items: T[];
  after?: Record<string, string | number>;
}

/** Every tenant's records: what an `admin` caller's lists show. A symbol, so no tenant id (not even "*") can mean it. */
export const ALL_TENANTS: unique symbol = Symbol('all tenants');

/** Whose records a list reads: one tenant's (its id) or every tenant's. */
export type TenantScope = string | typeof ALL_TENANTS;

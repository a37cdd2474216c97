// AWS Signature Version 4 for the local stand-ins. The runtime makes a fresh key pair at each start
// and hands it to its handlers through the SDK's standard AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY;
// every stand-in answers only requests signed with it (an Authorization header, or a presigned
// URL's X-Amz-* query), recomputing the signature as the SDK's signer (@smithy/signature-v4)
// computes it. Without this, any process on the machine could read the VIM secrets or start
// executions. `signedHeaders` signs a request the same way, for tools that do not use the SDK.
import type http from 'node:http';
import { Readable } from 'node:stream';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRequestBody } from './http-guard.ts';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** Why a request was refused: its error in the JSON protocols' `__type` and in S3's XML `Code`. */
export interface SignatureFailure {
  jsonType: string;
  s3Code: string;
  message: string;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';
/** How far a signature's date may be from the stand-in's clock, as AWS allows. */
const CLOCK_SKEW_MS = 15 * 60_000;
/** The longest a presigned URL may be valid (7 days), as S3 allows. */
const MAX_PRESIGNED_SECONDS = 7 * 24 * 3600;
const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;
const EMPTY_SHA256 = sha256Hex('');

/** A key pair for one run of the runtime (an access key id looks like AWS's: 20 upper-case characters). */
export function newAwsCredentials(): AwsCredentials {
  return { accessKeyId: `LKIA${randomBytes(8).toString('hex').toUpperCase()}`, secretAccessKey: randomBytes(30).toString('base64') };
}

/** Where a start leaves its stand-ins' credentials for tools and tests outside the process. */
const CREDENTIALS_FILE = 'local-aws-credentials.json';

/** Writes $dataDir/local-aws-credentials.json, readable by the owner only, replacing the last start's. */
export function writeLocalAwsCredentials(dataDir: string, credentials: AwsCredentials, region: string): void {
  const path = join(dataDir, CREDENTIALS_FILE);
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify({ ...credentials, region }, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
}

/** The credentials the runtime on `dataDir` made at its last start. */
export function readLocalAwsCredentials(dataDir: string): AwsCredentials {
  const { accessKeyId, secretAccessKey } = JSON.parse(readFileSync(join(dataDir, CREDENTIALS_FILE), 'utf8')) as AwsCredentials;
  return { accessKeyId, secretAccessKey };
}

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Signing keys derived lately, by secret, date, region and service (a few: one key pair a run, a handful of services). */
const signingKeys = new Map<string, Buffer>();
const MAX_SIGNING_KEYS = 64;

/**
 * The SigV4 signing key of a secret for a day, region and service: four HMACs, the same all day,
 * so derived once and kept (as the SDK's signer keeps its own), rather than on every request a
 * stand-in verifies. The cache is keyed by the secret itself, so a new secret derives a new key; it
 * holds at most MAX_SIGNING_KEYS, the oldest dropped first.
 */
export function signingKey(secretAccessKey: string, date: string, region: string, service: string): Buffer {
  const id = `${date}\n${region}\n${service}\n${secretAccessKey}`;
  let key = signingKeys.get(id);
  if (key) return key;
  key = hmac(`AWS4${secretAccessKey}`, date);
  for (const part of [region, service, 'aws4_request']) key = hmac(key, part);
  if (signingKeys.size >= MAX_SIGNING_KEYS) signingKeys.delete(signingKeys.keys().next().value as string);
  signingKeys.set(id, key);
  return key;
}

/** How many signing keys are kept now (tests). */
export const signingKeysCached = (): number => signingKeys.size;

const failures = {
  missing: (message: string): SignatureFailure => ({ jsonType: 'MissingAuthenticationTokenException', s3Code: 'AccessDenied', message }),
  malformed: (message: string): SignatureFailure => ({ jsonType: 'IncompleteSignatureException', s3Code: 'AuthorizationHeaderMalformed', message }),
  unknownKey: (): SignatureFailure => ({
    jsonType: 'UnrecognizedClientException',
    s3Code: 'InvalidAccessKeyId',
    message: 'The security token included in the request is invalid.',
  }),
  expired: (message: string): SignatureFailure => ({ jsonType: 'InvalidSignatureException', s3Code: 'AccessDenied', message }),
  mismatch: (): SignatureFailure => ({
    jsonType: 'InvalidSignatureException',
    s3Code: 'SignatureDoesNotMatch',
    message: 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.',
  }),
};

/** RFC 3986 escaping as the SDK's signer does it (encodeURIComponent plus !'()*). */
function escapeUri(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The canonical URI: S3 signs the path as sent; the other services its normalised segments escaped once more. */
function canonicalPath(path: string, service: string): string {
  if (service === 's3') return path;
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const normalized = `${path.startsWith('/') ? '/' : ''}${segments.join('/')}${segments.length && path.endsWith('/') ? '/' : ''}`;
  return escapeUri(normalized).replace(/%2F/g, '/');
}

function canonicalQuery(params: Array<[string, string]>): string {
  const byKey = new Map<string, string[]>();
  for (const [key, value] of params) {
    if (key.toLowerCase() === 'x-amz-signature') continue;
    const encoded = escapeUri(key);
    byKey.set(encoded, [...(byKey.get(encoded) ?? []), `${encoded}=${escapeUri(value)}`]);
  }
  return [...byKey.keys()]
    .sort()
    .map((key) => (byKey.get(key) as string[]).sort().join('&'))
    .join('&');
}

function headerValue(headers: http.IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

function hmac(key: Buffer | string, data: string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

interface SigningInput {
  method: string;
  path: string;
  query: Array<[string, string]>;
  /** Lower-case names of the signed headers, with their values. */
  headers: Array<[string, string]>;
  payloadHash: string;
  amzDate: string;
  scope: { date: string; region: string; service: string };
}

function signature(secretAccessKey: string, input: SigningInput): string {
  const headers = [...input.headers].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const canonicalRequest = [
    input.method,
    canonicalPath(input.path, input.scope.service),
    canonicalQuery(input.query),
    ...headers.map(
      ([name, value]) =>
        `${name}:${value
          .replace(/[\r\n]/g, ' ')
          .replace(/[ \t]+/g, ' ')
          .replace(/^ | $/g, '')}`,
    ),
    '',
    headers.map(([name]) => name).join(';'),
    input.payloadHash,
  ].join('\n');
  const { date, region, service } = input.scope;
  const stringToSign = [ALGORITHM, input.amzDate, `${date}/${region}/${service}/aws4_request`, sha256Hex(canonicalRequest)].join('\n');
  return hmac(signingKey(secretAccessKey, date, region, service), stringToSign).toString('hex');
}

function splitTarget(target: string): { path: string; query: Array<[string, string]> } | undefined {
  const at = target.indexOf('?');
  const path = at < 0 ? target : target.slice(0, at);
  if (!path.startsWith('/')) return undefined;
  const query: Array<[string, string]> = [];
  for (const part of (at < 0 ? '' : target.slice(at + 1)).split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    try {
      query.push([decodeURIComponent(eq < 0 ? part : part.slice(0, eq)), decodeURIComponent(eq < 0 ? '' : part.slice(eq + 1))]);
    } catch {
      return undefined;
    }
  }
  return { path, query };
}

function amzDateMs(amzDate: string): number | undefined {
  const m = AMZ_DATE.exec(amzDate);
  return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])) : undefined;
}

export interface VerifyOptions {
  credentials: AwsCredentials;
  /** The signing name the stand-in answers to (`dynamodb`, `s3`, `sqs`, `states`, `secretsmanager`, `lambda`). */
  service: string;
  /** SHA-256 (hex) of the whole body when the server has read it; without it (S3 streams bodies) the signed x-amz-content-sha256 header stands for it. */
  bodySha256?: string;
  now?: number;
}

/** Undefined when `req` is signed by `credentials` for `service`; otherwise why it is refused. */
export function verifySignature(req: Pick<http.IncomingMessage, 'method' | 'url' | 'headers'>, options: VerifyOptions): SignatureFailure | undefined {
  const now = options.now ?? Date.now();
  const target = splitTarget(req.url ?? '/');
  if (!target) return failures.malformed('The request target cannot be signed (not an origin-form path, or bad percent-encoding)');
  const query = new Map(target.query);
  const authorization = headerValue(req.headers, 'authorization');
  const presigned = query.has('X-Amz-Algorithm');
  if (authorization !== undefined && presigned)
    return failures.malformed("Found both 'X-Amz-Algorithm' as a query-string param and 'Authorization' as HTTP header.");

  let credential: string | undefined;
  let signedHeaderNames: string | undefined;
  let provided: string | undefined;
  let amzDate: string | undefined;
  if (authorization !== undefined) {
    const match = /^AWS4-HMAC-SHA256\s+(.*)$/s.exec(authorization.trim());
    if (!match) return failures.malformed('The Authorization header is not an AWS4-HMAC-SHA256 signature');
    const fields = new Map(
      (match[1] as string).split(',').map((part) => {
        const eq = part.indexOf('=');
        return [part.slice(0, eq).trim(), part.slice(eq + 1).trim()] as [string, string];
      }),
    );
    credential = fields.get('Credential');
    signedHeaderNames = fields.get('SignedHeaders');
    provided = fields.get('Signature');
    amzDate = headerValue(req.headers, 'x-amz-date');
  } else if (presigned) {
    if (query.get('X-Amz-Algorithm') !== ALGORITHM) return failures.malformed(`X-Amz-Algorithm must be ${ALGORITHM}`);
    credential = query.get('X-Amz-Credential');
    signedHeaderNames = query.get('X-Amz-SignedHeaders');
    provided = query.get('X-Amz-Signature');
    amzDate = query.get('X-Amz-Date');
  } else {
    return failures.missing('Request is missing Authentication Token');
  }
  if (!credential || !signedHeaderNames || !provided || !amzDate)
    return failures.malformed('The signature needs Credential, SignedHeaders, Signature and X-Amz-Date');
  const signedAt = amzDateMs(amzDate);
  if (signedAt === undefined) return failures.malformed("X-Amz-Date must be in ISO 8601 basic format ('20250101T000000Z')");
  const [accessKeyId, date, region, service, terminator, ...rest] = credential.split('/');
  if (!date || !region || !service || terminator !== 'aws4_request' || rest.length)
    return failures.malformed('The Credential is not <key>/<date>/<region>/<service>/aws4_request');
  if (accessKeyId !== options.credentials.accessKeyId) return failures.unknownKey();
  if (date !== amzDate.slice(0, 8)) return failures.malformed('The Credential date is not the date of X-Amz-Date');
  if (service !== options.service) return failures.malformed(`The Credential names service ${service}; this endpoint is ${options.service}`);

  let payloadHash: string;
  const contentSha256 = headerValue(req.headers, 'x-amz-content-sha256');
  if (presigned) {
    const expires = Number(query.get('X-Amz-Expires'));
    if (!Number.isInteger(expires) || expires < 1 || expires > MAX_PRESIGNED_SECONDS)
      return failures.malformed(`X-Amz-Expires must be 1 to ${MAX_PRESIGNED_SECONDS} seconds`);
    if (now < signedAt - CLOCK_SKEW_MS || now > signedAt + expires * 1000) return failures.expired('Request has expired');
    payloadHash = query.get('X-Amz-Content-Sha256') ?? contentSha256 ?? 'UNSIGNED-PAYLOAD';
  } else {
    if (Math.abs(now - signedAt) > CLOCK_SKEW_MS) return failures.expired(`Signature expired: ${amzDate} is more than 15 minutes from the server's time`);
    if (options.bodySha256 !== undefined) {
      if (contentSha256 !== undefined && contentSha256 !== options.bodySha256) return failures.mismatch();
      payloadHash = options.bodySha256;
    } else if (contentSha256 !== undefined) {
      payloadHash = contentSha256;
    } else {
      return failures.malformed('Missing required header for this request: x-amz-content-sha256');
    }
  }
  if (options.bodySha256 !== undefined && payloadHash !== options.bodySha256) return failures.mismatch();

  const names = signedHeaderNames.split(';');
  if (!names.includes('host')) return failures.malformed('SignedHeaders must include host');
  const headers: Array<[string, string]> = [];
  for (const name of names) {
    const value = headerValue(req.headers, name);
    if (name !== name.toLowerCase() || value === undefined) return failures.mismatch();
    headers.push([name, value]);
  }
  const expected = Buffer.from(
    signature(options.credentials.secretAccessKey, {
      method: req.method ?? 'GET',
      path: target.path,
      query: target.query,
      headers,
      payloadHash,
      amzDate,
      scope: { date, region, service },
    }),
  );
  const given = Buffer.from(provided);
  return given.length === expected.length && timingSafeEqual(given, expected) ? undefined : failures.mismatch();
}

/**
 * The headers to send with a signed request (the given ones, X-Amz-Date and Authorization; Host is
 * signed as the URL names it) for callers without the SDK: tests and tools calling a stand-in's own endpoints.
 */
export function signedHeaders(request: {
  credentials: AwsCredentials;
  service: string;
  region?: string;
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  now?: Date;
}): Record<string, string> {
  const url = new URL(request.url);
  const amzDate = (request.now ?? new Date())
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
  const headers: Record<string, string> = {
    ...Object.fromEntries(Object.entries(request.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
    host: url.host,
    'x-amz-date': amzDate,
  };
  const scope = { date: amzDate.slice(0, 8), region: request.region ?? 'us-east-1', service: request.service };
  const target = splitTarget(`${url.pathname}${url.search}`) ?? { path: url.pathname, query: [] };
  const value = signature(request.credentials.secretAccessKey, {
    method: request.method,
    path: target.path,
    query: target.query,
    headers: Object.entries(headers),
    payloadHash: request.body === undefined ? EMPTY_SHA256 : sha256Hex(request.body),
    amzDate,
    scope,
  });
  const names = Object.keys(headers).sort().join(';');
  // fetch sets Host itself, from the URL signed here.
  const { host: _host, ...sent } = headers;
  return {
    ...sent,
    authorization: `${ALGORITHM} Credential=${request.credentials.accessKeyId}/${scope.date}/${scope.region}/${scope.service}/aws4_request, SignedHeaders=${names}, Signature=${value}`,
  };
}

/** Where a stand-in's refusal goes: written as the protocol's error, status 403. */
export type RefuseUnsigned = (res: http.ServerResponse, failure: SignatureFailure) => void;

/** Refusal in the AWS JSON protocols' shape (`{"__type", "message"}`). */
export function refuseAsJson(contentType: string): RefuseUnsigned {
  return (res, failure) => {
    const body = JSON.stringify({ __type: failure.jsonType, message: failure.message });
    res.writeHead(403, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body), 'x-amzn-ErrorType': failure.jsonType }).end(body);
  };
}

/** Refusal in S3's XML error shape. */
export const refuseAsS3: RefuseUnsigned = (res, failure) => {
  const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${failure.s3Code}</Code><Message>${escapeXml(failure.message)}</Message></Error>`;
  res.writeHead(403, { 'Content-Type': 'application/xml', 'Content-Length': Buffer.byteLength(body) }).end(body);
};

/**
 * An admission check for a third-party server (containRequestErrors' `admit`): a request signed
 * by `credentials` goes on, anything else is refused with `refuse` and never reaches the server.
 * With `maxBodyBytes` the body is read and hashed first (JSON protocols sign it), and the server
 * gets a copy of the request that replays it.
 */
export function admitSigned(options: {
  credentials: AwsCredentials;
  service: string;
  refuse: RefuseUnsigned;
  maxBodyBytes?: number;
  /** Sees (and may replace) a verified body before the stand-in reads it, with the response it will be answered on (metering). */
  inspect?: (body: Buffer, req: http.IncomingMessage, res: http.ServerResponse) => Buffer;
}) {
  return async (req: http.IncomingMessage, res: http.ServerResponse): Promise<http.IncomingMessage | undefined> => {
    if (options.maxBodyBytes === undefined) {
      const failure = verifySignature(req, options);
      if (!failure) return req;
      options.refuse(res, failure);
      req.resume(); // the unread body goes nowhere
      return undefined;
    }
    const body = await readRequestBody(req, options.maxBodyBytes);
    const failure = verifySignature(req, { ...options, bodySha256: sha256Hex(body) });
    if (failure) {
      options.refuse(res, failure);
      return undefined;
    }
    const served = options.inspect ? options.inspect(body, req, res) : body;
    return Object.assign(Readable.from(served.length ? [served] : []), {
      method: req.method,
      url: req.url,
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      httpVersion: req.httpVersion,
      httpVersionMajor: req.httpVersionMajor,
      httpVersionMinor: req.httpVersionMinor,
      socket: req.socket,
      complete: true,
    }) as unknown as http.IncomingMessage;
  };
}

// Verifies the caller's credentials (SOL013 8: OAuth 2.0 client credentials): a bearer access
// token (Authorization: Bearer, or Tacker's X-Auth-Token) checked with jose, or HTTP Basic client
// id and secret. The issuer is the deployment's own (lib/auth/issuer.ts): its tokens verify with
// the public keys its token function publishes in the clients table, and Basic credentials are
// checked against the clients table here. An operator may name an issuer of their own instead
// (template parameters ExternalIssuer, ExternalJwksUrl, ExternalTokenUrl): its tokens verify with
// its JWKS, and Basic credentials are exchanged once at its token endpoint. Whatever verified the
// token, its client's current state (lib/auth/client-state.ts) has the last word: a deleted
// client's tokens, or tokens issued before a secret rotation, are refused.
import { createHash } from 'node:crypto';
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { ProblemError } from '#lib/sol/errors.ts';
import { findClient } from './client-directory.ts';
import { currentClientState, revocationReason } from './client-state.ts';
import { authenticateClient, grantedScopes } from './issuer.ts';
import { parseBasicCredentials } from './basic.ts';
import { publishedKeys } from './published-keys.ts';
import { secretVerifier } from './secret-hash.ts';

export interface AuthConfig {
  issuer: string;
  /** An external issuer's JWKS; empty: the deployment's own issuer. */
  jwksUrl: string;
  /** An external issuer's token endpoint (for Basic credentials); empty: the deployment's own issuer. */
  tokenUrl: string;
}

export interface VerifiedToken {
  clientId: string;
  scopes: string[];
  claims: JWTPayload;
}

/** 401 with the challenge RFC 6750 3 asks for; the detail never echoes the credentials. */
export class UnauthorizedError extends ProblemError {
  constructor(detail: string, error?: 'invalid_token' | 'invalid_request') {
    const challenge = `Bearer realm="vnfm"${error ? `, error="${error}", error_description="${detail.replace(/"/g, "'")}"` : ''}, Basic realm="vnfm"`;
    super(401, 'Unauthorized', detail, { headers: { 'WWW-Authenticate': challenge } });
  }
}

/** 429: too many failed client authentications from this client id or address. */
export class TooManyFailuresError extends ProblemError {
  constructor(retryAfterSeconds: number) {
    super(429, 'Too Many Requests', `Too many failed client authentications; try again in ${retryAfterSeconds} seconds`, {
      headers: { 'Retry-After': String(retryAfterSeconds) },
    });
  }
}

export class ForbiddenError extends ProblemError {
  constructor(detail: string, scope: string) {
    super(403, 'Forbidden', detail, { headers: { 'WWW-Authenticate': `Bearer realm="vnfm", error="insufficient_scope", scope="${scope}"` } });
  }
}

/** null when authentication is switched off (VNFM_AUTH=off, local experiments only). */
export function authConfig(): AuthConfig | null {
  if (process.env.VNFM_AUTH === 'off') return null;
  const { AUTH_ISSUER: issuer, AUTH_JWKS_URL: jwksUrl = '', AUTH_TOKEN_URL: tokenUrl = '' } = process.env;
  if (!issuer || !jwksUrl !== !tokenUrl)
    throw new ProblemError(500, 'Internal Server Error', 'Authentication is not configured (AUTH_ISSUER, and AUTH_JWKS_URL with AUTH_TOKEN_URL or neither)');
  return { issuer, jwksUrl, tokenUrl };
}

const keySets = new Map<string, JWTVerifyGetKey>();
function keySet(url: string): JWTVerifyGetKey {
  let found = keySets.get(url);
  if (!found) keySets.set(url, (found = url ? createRemoteJWKSet(new URL(url), { cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000 }) : ownKeySet()));
  return found;
}

/**
 * The deployment's own issuer's public keys, read from the clients table as a remote JWKS would be:
 * kept for ten minutes, and read again for a key id it does not know (a new key), at most every 30 s.
 */
function ownKeySet(): JWTVerifyGetKey {
  let keys: { set: JWTVerifyGetKey; kids: Set<string>; readAt: number } | undefined;
  let reading: Promise<void> | undefined;
  const read = () =>
    (reading ??= publishedKeys()
      .then((found) => {
        keys = { set: createLocalJWKSet({ keys: found }), kids: new Set(found.map((k) => String(k.kid))), readAt: Date.now() };
      })
      .finally(() => {
        reading = undefined;
      }));
  return async (header, token) => {
    const age = keys ? Date.now() - keys.readAt : Number.POSITIVE_INFINITY;
    if (age > 10 * 60_000 || (age > 30_000 && !keys?.kids.has(String(header.kid)))) await read();
    return (keys as NonNullable<typeof keys>).set(header, token);
  };
}

/**
 * The longest lifetime a token may claim (exp - iat): Cognito's access tokens last at most a day
 * (60 minutes as configured here). A longer-lived token, even signed with the real key, would be a
 * credential that outlives any revocation.
 */
const MAX_TOKEN_LIFETIME_SECONDS = 24 * 3600;

/**
 * Tokens verified lately, by issuer, key set and the token's exact text: a client sends the same
 * token with every request for its lifetime, and its signature verifies the same way each time. An
 * entry is used until the token expires (with the verification's clock tolerance) and for at most
 * a minute (a key withdrawn from the key set stops verifying the tokens it signed within a minute,
 * sooner than the key set is read again, every 10 minutes); the client's revocation is checked per
 * request as before (assertClientCurrent). A few hundred entries, the least recently verified go.
 */
const verifiedTokens = new Map<string, { verified: VerifiedToken; until: number }>();
const REMEMBERED_TOKENS = 512;
const REMEMBER_TOKEN_MS = 60_000;

/** Checks signature (JWKS), issuer, expiry (required, and within the longest lifetime) and that it is an access token. */
export async function verifyAccessToken(config: AuthConfig, token: string): Promise<VerifiedToken> {
  const key = `${config.issuer}\u0000${config.jwksUrl}\u0000${token}`;
  const known = verifiedTokens.get(key);
  if (known !== undefined) {
    if (known.until > Date.now()) return known.verified;
    verifiedTokens.delete(key);
  }
  const verified = await verifyAccessTokenNow(config, token);
  const expiresAt = ((verified.claims.exp as number) + 5) * 1000;
  verifiedTokens.set(key, { verified, until: Math.min(expiresAt, Date.now() + REMEMBER_TOKEN_MS) });
  if (verifiedTokens.size > REMEMBERED_TOKENS) verifiedTokens.delete(verifiedTokens.keys().next().value as string);
  return verified;
}

async function verifyAccessTokenNow(config: AuthConfig, token: string): Promise<VerifiedToken> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keySet(config.jwksUrl), { issuer: config.issuer, clockTolerance: 5, requiredClaims: ['exp'] }));
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new UnauthorizedError(code === 'ERR_JWT_EXPIRED' ? 'The access token has expired' : 'The access token is not valid', 'invalid_token');
  }
  const issuedAt = typeof payload.iat === 'number' ? payload.iat : Date.now() / 1000;
  if ((payload.exp as number) - issuedAt > MAX_TOKEN_LIFETIME_SECONDS) {
    throw new UnauthorizedError(`The access token claims a lifetime beyond ${MAX_TOKEN_LIFETIME_SECONDS} seconds`, 'invalid_token');
  }
  if (payload.token_use !== 'access') throw new UnauthorizedError('The token is not an access token', 'invalid_token');
  const clientId = typeof payload.client_id === 'string' ? payload.client_id : payload.sub;
  if (!clientId) throw new UnauthorizedError('The access token names no client', 'invalid_token');
  const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [];
  return { clientId, scopes, claims: payload };
}

/** 401 when the token's client has been deleted or its secret rotated since the token was issued. */
export async function assertClientCurrent(verified: VerifiedToken): Promise<void> {
  // An API Gateway JWT authorizer hands claims on as strings.
  const issuedAt = Number(verified.claims.iat);
  const reason = revocationReason(
    await currentClientState(verified.clientId),
    verified.claims.iat !== undefined && Number.isFinite(issuedAt) ? issuedAt : undefined,
  );
  if (reason) throw new UnauthorizedError(`${reason}; its tokens are no longer accepted`, 'invalid_token');
}

const basicTokens = new Map<string, { token: string; expiresAt: number }>();

/**
 * HTTP Basic client id:secret -> the verified token of a client credentials grant at the token
 * endpoint, cached until shortly before it expires. A cached token is checked against the client's
 * current state like any token; one that no longer passes is dropped and the secret asked about
 * afresh, so a rotated or deleted client's old secret stops working as soon as its tokens do.
 */
export async function verifyBasic(config: AuthConfig, header: string): Promise<VerifiedToken> {
  if (!config.tokenUrl) return verifyBasicHere(header);
  const key = createHash('sha256').update(header).digest('hex');
  const cached = basicTokens.get(key);
  if (cached && cached.expiresAt > Date.now()) {
    const verified = await verifyAccessToken(config, cached.token);
    try {
      await assertClientCurrent(verified);
      return verified;
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error;
      basicTokens.delete(key);
    }
  }
  const verified = await verifyAccessToken(config, await tokenForBasic(config, header, key));
  await assertClientCurrent(verified);
  return verified;
}

async function tokenForBasic(config: AuthConfig, header: string, key: string): Promise<string> {
  let response: Response;
  try {
    response = await fetch(config.tokenUrl, {
      method: 'POST',
      headers: { Authorization: header, 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: 'grant_type=client_credentials',
    });
  } catch (error) {
    throw new ProblemError(503, 'Service Unavailable', 'The token endpoint cannot be reached', { cause: error });
  }
  if (response.status === 400 || response.status === 401) throw new UnauthorizedError('The client id or secret is not valid', 'invalid_request');
  if (response.status === 429) throw new TooManyFailuresError(Number(response.headers.get('retry-after')) || 60);
  if (!response.ok) throw new ProblemError(503, 'Service Unavailable', `The token endpoint answered ${response.status}`);
  const body = (await response.json()) as { access_token?: string; expires_in?: number };
  if (!body.access_token) throw new ProblemError(503, 'Service Unavailable', 'The token endpoint answered without an access token');
  if (basicTokens.size > 1000) basicTokens.clear();
  basicTokens.set(key, { token: body.access_token, expiresAt: Date.now() + Math.max(0, (body.expires_in ?? 300) - 60) * 1000 });
  return body.access_token;
}

const verifier = secretVerifier();
/** Basic credentials checked here, by their hash, for as long as a token would last at most; the client's state is checked on every use. */
const BASIC_CACHE_MS = 5 * 60_000;
const basicChecked = new Map<string, { verified: VerifiedToken; until: number }>();
/** The API counts failed Basic authentications itself (functions/api/common/http.ts). */
const uncounted = { retryAfterSeconds: () => 0, fail: () => undefined };

/**
 * HTTP Basic client id:secret against the deployment's own clients table, as its token endpoint
 * would check them, without a token: the result is what a token of all the client's scopes would
 * say, dated now. Cached by the header's hash; a cached check whose client has since been
 * rotated or deleted is dropped and the secret checked afresh.
 */
async function verifyBasicHere(header: string): Promise<VerifiedToken> {
  const key = createHash('sha256').update(header).digest('hex');
  const cached = basicChecked.get(key);
  if (cached && cached.until > Date.now()) {
    try {
      await assertClientCurrent(cached.verified);
      return cached.verified;
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error;
      basicChecked.delete(key);
    }
  }
  const basic = parseBasicCredentials(header);
  if (!basic) throw new UnauthorizedError('The Basic credentials are not a form-urlencoded client id and secret (RFC 6749 2.3.1)', 'invalid_request');
  let authenticated: Awaited<ReturnType<typeof authenticateClient>>;
  try {
    authenticated = await authenticateClient({ find: findClient, verifier, failures: uncounted }, basic.clientId, basic.clientSecret, '');
  } catch (error) {
    throw new ProblemError(503, 'Service Unavailable', 'The client cannot be authenticated now; try again shortly', {
      cause: error,
      headers: { 'Retry-After': '1' },
    });
  }
  if (!authenticated.ok) {
    if (authenticated.answer.status === 503)
      throw new ProblemError(503, 'Service Unavailable', 'Too many client authentications are in progress', { headers: { 'Retry-After': '1' } });
    throw new UnauthorizedError('The client id or secret is not valid', 'invalid_request');
  }
  const { client } = authenticated;
  const issuedAt = Math.max(Math.floor(Date.now() / 1000), client.notBefore ?? 0);
  const verified: VerifiedToken = {
    clientId: client.clientId,
    scopes: grantedScopes(client, undefined) ?? [],
    claims: { iat: issuedAt, client_id: client.clientId, sub: client.clientId },
  };
  await assertClientCurrent(verified);
  if (basicChecked.size > 1000) basicChecked.clear();
  basicChecked.set(key, { verified, until: Date.now() + BASIC_CACHE_MS });
  return verified;
}

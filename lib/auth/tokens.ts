// Verifies the caller's credentials (SOL013 8: OAuth 2.0 client credentials): a bearer access
// token (Authorization: Bearer, or Tacker's X-Auth-Token) checked against the issuer's JWKS with
// jose, or HTTP Basic client id and secret, exchanged once at the issuer's token endpoint and then
// checked like any token. The issuer is Amazon Cognito on AWS and the local runtime's own issuer
// locally; both are named only by environment variables, so this code has no local branch.
// Whatever verified the token, its client's current state (lib/auth/client-state.ts) has the
// last word: a deleted client's tokens, or tokens issued before a secret rotation, are refused.
import { createHash } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { ProblemError } from '#lib/sol/errors.ts';
import { currentClientState, revocationReason } from './client-state.ts';

export interface AuthConfig {
  issuer: string;
  jwksUrl: string;
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
  const { AUTH_ISSUER: issuer, AUTH_JWKS_URL: jwksUrl, AUTH_TOKEN_URL: tokenUrl } = process.env;
  if (!issuer || !jwksUrl || !tokenUrl)
    throw new ProblemError(500, 'Internal Server Error', 'Authentication is not configured (AUTH_ISSUER, AUTH_JWKS_URL, AUTH_TOKEN_URL)');
  return { issuer, jwksUrl, tokenUrl };
}

const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();
function keySet(url: string): ReturnType<typeof createRemoteJWKSet> {
  let found = keySets.get(url);
  if (!found) keySets.set(url, (found = createRemoteJWKSet(new URL(url), { cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000 })));
  return found;
}

/**
 * The longest lifetime a token may claim (exp - iat): Cognito's access tokens last at most a day
 * (60 minutes as configured here). A longer-lived token, even signed with the real key, would be a
 * credential that outlives any revocation.
 */
const MAX_TOKEN_LIFETIME_SECONDS = 24 * 3600;

/** Checks signature (JWKS), issuer, expiry (required, and within the longest lifetime) and that it is an access token. */
export async function verifyAccessToken(config: AuthConfig, token: string): Promise<VerifiedToken> {
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

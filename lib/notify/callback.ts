// Calls a subscriber's callback URI (SOL013 8.3.4): the connection test at subscription time
// (GET, 204 expected) and notification delivery (POST, 204 expected), authenticated as the
// subscription asked, under the egress policy. OAuth 2.0 tokens come from the subscription's
// tokenEndpoint with the client credentials grant and are cached until they expire.
import { createHash } from 'node:crypto';
import { egressRequest, type EgressPolicy, type EgressResponse } from '#lib/egress.ts';
import type { NotificationAuth } from './model.ts';

export const CALLBACK_TIMEOUT_MS = 10_000;

export class TokenError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'TokenError';
  }
}

interface CachedToken {
  value: string;
  expiresAt: number;
}

/** Tokens by (endpoint, client, secret): per process, so a warm Lambda reuses them across invocations. */
const tokens = new Map<string, CachedToken>();
// A token without expires_in is reused this long; a token is dropped this long before it expires.
const DEFAULT_TOKEN_LIFETIME_MS = 60_000;
const EXPIRY_MARGIN_MS = 30_000;

type ClientCredentials = Extract<NotificationAuth, { authType: 'OAUTH2_CLIENT_CREDENTIALS' }>;

function tokenKey(auth: ClientCredentials): string {
  return createHash('sha256').update(`${auth.tokenEndpoint}\n${auth.clientId}\n${auth.clientPassword}`).digest('hex');
}

/** Forgets a cached token (its server refused it: it may have been revoked). */
export function forgetAccessToken(auth: ClientCredentials): void {
  tokens.delete(tokenKey(auth));
}

/** A token of the client credentials grant (RFC 6749 4.4), cached until shortly before it expires; the NFVO client uses it too. */
export async function accessToken(auth: ClientCredentials, policy: EgressPolicy, now: number): Promise<string> {
  const key = tokenKey(auth);
  const cached = tokens.get(key);
  if (cached && cached.expiresAt > now) return cached.value;
  let response: EgressResponse;
  try {
    response = await egressRequest(
      auth.tokenEndpoint,
      {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Accept: 'application/json',
          Authorization: `Basic ${Buffer.from(`${encodeURIComponent(auth.clientId)}:${encodeURIComponent(auth.clientPassword)}`).toString('base64')}`,
        },
        body: 'grant_type=client_credentials',
        timeoutMs: CALLBACK_TIMEOUT_MS,
      },
      policy,
    );
  } catch (error) {
    throw new TokenError(`the token endpoint could not be reached: ${(error as Error).message}`);
  }
  if (response.status !== 200) throw new TokenError(`the token endpoint answered ${response.status}`, response.status);
  let token: { access_token?: unknown; expires_in?: unknown };
  try {
    token = JSON.parse(response.body) as typeof token;
  } catch {
    throw new TokenError('the token endpoint did not answer JSON', response.status);
  }
  if (typeof token.access_token !== 'string' || token.access_token === '') throw new TokenError('the token endpoint returned no access_token', response.status);
  const lifetime = typeof token.expires_in === 'number' && token.expires_in > 0 ? token.expires_in * 1000 : DEFAULT_TOKEN_LIFETIME_MS;
  tokens.set(key, { value: token.access_token, expiresAt: now + lifetime - Math.min(EXPIRY_MARGIN_MS, lifetime / 10) });
  return token.access_token;
}

async function authorization(auth: NotificationAuth | undefined, policy: EgressPolicy, now: number): Promise<Record<string, string>> {
  if (!auth) return {};
  if (auth.authType === 'BASIC') return { Authorization: `Basic ${Buffer.from(`${auth.userName}:${auth.password}`).toString('base64')}` };
  return { Authorization: `Bearer ${await accessToken(auth, policy, now)}` };
}

export interface CallbackCall {
  method: 'GET' | 'POST';
  version: string;
  body?: Record<string, unknown>;
  auth?: NotificationAuth;
  policy: EgressPolicy;
  now?: () => number;
}

/**
 * One authenticated request to a callback URI. A 401 with an OAuth 2.0 token drops the cached
 * token and tries once more with a fresh one (the subscriber may have revoked it).
 */
export async function callCallback(callbackUri: string, call: CallbackCall): Promise<EgressResponse> {
  const now = call.now ?? Date.now;
  const send = async () =>
    egressRequest(
      callbackUri,
      {
        method: call.method,
        headers: {
          Accept: 'application/json',
          Version: call.version,
          ...(call.body ? { 'Content-Type': 'application/json' } : {}),
          ...(await authorization(call.auth, call.policy, now())),
        },
        body: call.body ? JSON.stringify(call.body) : undefined,
        timeoutMs: CALLBACK_TIMEOUT_MS,
      },
      call.policy,
    );
  const response = await send();
  if (response.status === 401 && call.auth?.authType === 'OAUTH2_CLIENT_CREDENTIALS') {
    forgetAccessToken(call.auth);
    return send();
  }
  return response;
}

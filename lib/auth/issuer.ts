// The deployment's own OAuth 2.0 authorization server (SOL013 8.3, RFC 6749 4.4): the client
// credentials grant, clients authenticated by HTTP Basic or form fields, against the clients table
// (lib/auth/client-directory.ts). Access tokens are JWTs signed with the deployment's Ed25519 key
// (lib/auth/token-keys.ts) carrying what the API checks: iss, sub and client_id, token_use
// "access", scope "vnfm/<scope> ... vnfm/tenant:<id>", iat, exp, jti. It replaces a managed
// identity service whose machine-to-machine clients were most of an idle deployment's cost.
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { parseBasicCredentials } from './basic.ts';
import type { ClientRecord } from './client-directory.ts';
import { RESOURCE_SERVER, TENANT_SCOPE_PREFIX } from './scopes.ts';
import { HashingBusyError, type SecretVerifier } from './secret-hash.ts';
import { TOKEN_ALGORITHM } from './published-keys.ts';
import type { SigningKey } from './token-keys.ts';

export const TOKEN_PATH = '/oauth2/token';
export const JWKS_PATH = '/.well-known/jwks.json';
export const TOKEN_LIFETIME_SECONDS = 3600;

export interface TokenRequest {
  /** The form-encoded body (application/x-www-form-urlencoded). */
  form: URLSearchParams;
  authorization?: string;
  sourceAddress: string;
}

export interface OAuthAnswer {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

export interface ClientAuthenticator {
  /** The client as it stands now, or undefined when there is no such client. */
  find(clientId: string): Promise<ClientRecord | undefined>;
  verifier: SecretVerifier;
  failures: {
    retryAfterSeconds(clientId: string, address: string): number;
    fail(clientId: string, address: string): void;
  };
}

export interface IssuerDeps extends ClientAuthenticator {
  issuer: string;
  signingKey(): Promise<SigningKey>;
  /** Called with the key before its first token, so verifiers can find it. */
  publish?(key: SigningKey): Promise<void>;
}

/** RFC 6749 5.2 error answer. */
function oauthError(status: number, error: string, description: string, headers: Record<string, string> = {}): OAuthAnswer {
  return {
    status,
    headers: {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
      ...(status === 401 ? { 'WWW-Authenticate': 'Basic realm="vnfm"' } : {}),
      ...headers,
    },
    body: { error, error_description: description },
  };
}

export type Authentication = { ok: true; client: ClientRecord & { tenantId: string; scopes: string[] } } | { ok: false; answer: OAuthAnswer };

/**
 * Checks a client id and secret: refused while the id or address has failed too often (429), a
 * busy hasher is 503, anything else that does not match is 401 invalid_client (counted as a failure).
 * A missing or deleted client costs one full hash too, so timing tells nothing about which ids exist.
 */
export async function authenticateClient(deps: ClientAuthenticator, clientId: string, clientSecret: string, address: string): Promise<Authentication> {
  const retryAfter = deps.failures.retryAfterSeconds(clientId, address);
  if (retryAfter)
    return {
      ok: false,
      answer: oauthError(429, 'slow_down', 'Too many failed client authentications; try again later', { 'Retry-After': String(retryAfter) }),
    };
  const client = await deps.find(clientId);
  const usable = client && !client.deleted && client.secretHash && client.tenantId && client.scopes ? client : undefined;
  let matches: boolean;
  try {
    matches = await deps.verifier.matches(clientSecret, usable?.secretHash);
  } catch (error) {
    if (!(error instanceof HashingBusyError)) throw error;
    return { ok: false, answer: oauthError(503, 'temporarily_unavailable', error.message, { 'Retry-After': '1' }) };
  }
  if (!usable || !matches) {
    deps.failures.fail(clientId, address);
    return { ok: false, answer: oauthError(401, 'invalid_client', 'Client authentication failed') };
  }
  return { ok: true, client: usable as ClientRecord & { tenantId: string; scopes: string[] } };
}

/** The token's scopes, resource-server prefixed: those requested (all the client's when none), and its tenant. */
export function grantedScopes(client: { tenantId: string; scopes: string[] }, requested: string[] | undefined): string[] | undefined {
  const bare = requested?.map((s) => s.replace(new RegExp(`^${RESOURCE_SERVER}/`), ''));
  const allowed = new Set(client.scopes);
  if (bare?.some((s) => !allowed.has(s) && s !== `${TENANT_SCOPE_PREFIX}${client.tenantId}`)) return undefined;
  const granted = [...(bare ?? client.scopes).filter((s) => !s.startsWith(TENANT_SCOPE_PREFIX)), `${TENANT_SCOPE_PREFIX}${client.tenantId}`];
  return granted.map((s) => `${RESOURCE_SERVER}/${s}`);
}

/** POST /oauth2/token: the client credentials grant. */
export async function clientCredentialsGrant(request: TokenRequest, deps: IssuerDeps): Promise<OAuthAnswer> {
  const { form } = request;
  let clientId = form.get('client_id') ?? '';
  let clientSecret = form.get('client_secret') ?? '';
  const authorization = request.authorization ?? '';
  if (/^basic(\s|$)/i.test(authorization)) {
    // RFC 6749 5.2: client authentication that fails, malformed included, is invalid_client.
    const basic = parseBasicCredentials(authorization);
    if (!basic) return oauthError(401, 'invalid_client', 'The Basic credentials are not a form-urlencoded client id and secret (RFC 6749 2.3.1)');
    ({ clientId, clientSecret } = basic);
  }
  if (form.get('grant_type') !== 'client_credentials') return oauthError(400, 'unsupported_grant_type', 'Only client_credentials is supported');
  const authenticated = await authenticateClient(deps, clientId, clientSecret, request.sourceAddress);
  if (!authenticated.ok) return authenticated.answer;
  const { client } = authenticated;
  const requested = form.get('scope')?.split(' ').filter(Boolean);
  const granted = grantedScopes(client, requested);
  if (!granted) return oauthError(400, 'invalid_scope', 'A requested scope is not granted to this client');
  const scope = granted.join(' ');
  const key = await deps.signingKey();
  await deps.publish?.(key);
  // Never dated before the client's notBefore: a token of the new secret is not taken for one of the old.
  const issuedAt = Math.max(Math.floor(Date.now() / 1000), client.notBefore ?? 0);
  const token = await new SignJWT({ client_id: client.clientId, token_use: 'access', scope })
    .setProtectedHeader({ alg: TOKEN_ALGORITHM, kid: key.kid, typ: 'JWT' })
    .setIssuer(deps.issuer)
    .setSubject(client.clientId)
    .setIssuedAt(issuedAt)
    .setJti(randomUUID())
    .setExpirationTime(issuedAt + TOKEN_LIFETIME_SECONDS)
    .sign(key.privateKey);
  return {
    status: 200,
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
    body: { access_token: token, token_type: 'Bearer', expires_in: TOKEN_LIFETIME_SECONDS, scope },
  };
}

// API function of the deployment's own OAuth 2.0 authorization server (SOL013 8.3): POST
// /oauth2/token (the client credentials grant, lib/auth/issuer.ts) and GET /.well-known/jwks.json
// (the public keys its tokens verify with). Both are open routes: the grant authenticates the
// client itself, and public keys are public. Failed authentications are limited per client id and
// source address in each function instance (lib/auth/failure-limit.ts).
// X-Ray subsegments for its invocations and AWS SDK calls (lib/trace.ts; not every function has room for it).
import '#lib/trace.ts';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { clientFailureLimiter } from '#lib/auth/failure-limit.ts';
import { findClient } from '#lib/auth/client-directory.ts';
import { clientCredentialsGrant, JWKS_PATH, TOKEN_PATH, type OAuthAnswer } from '#lib/auth/issuer.ts';
import { publishedKeys } from '#lib/auth/published-keys.ts';
import { secretVerifier } from '#lib/auth/secret-hash.ts';
import { publishKey, signingKey } from '#lib/auth/token-keys.ts';
import { log } from '#lib/log.ts';
import { instrumented } from '#lib/metrics.ts';

const verifier = secretVerifier();
const failures = clientFailureLimiter();
/** A token request is a short form; anything longer is not one. */
const MAX_BODY_BYTES = 8192;

function answer({ status, headers, body }: OAuthAnswer): APIGatewayProxyStructuredResultV2 {
  return { statusCode: status, headers, body: JSON.stringify(body) };
}

const error = (status: number, code: string, description: string, headers: Record<string, string> = {}) =>
  answer({
    status,
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...headers },
    body: { error: code, error_description: description },
  });

/** The public keys' route is no OAuth endpoint: its refusals are ProblemDetails like the API's. */
const problem = (status: number, title: string, detail: string, headers: Record<string, string> = {}): APIGatewayProxyStructuredResultV2 => ({
  statusCode: status,
  headers: { 'Content-Type': 'application/problem+json', ...headers },
  body: JSON.stringify({ type: 'about:blank', title, status, detail }),
});

function header(event: APIGatewayProxyEventV2, name: string): string | undefined {
  for (const [key, value] of Object.entries(event.headers ?? {})) if (key.toLowerCase() === name) return value;
  return undefined;
}

async function token(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  if (event.requestContext.http.method !== 'POST') return error(405, 'invalid_request', 'POST only', { Allow: 'POST' });
  const raw = event.body === undefined ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  if (Buffer.byteLength(raw) > MAX_BODY_BYTES) return error(413, 'invalid_request', `A token request has at most ${MAX_BODY_BYTES} bytes`);
  const contentType = header(event, 'content-type') ?? '';
  if (raw && !/^application\/x-www-form-urlencoded(\s*;|$)/i.test(contentType))
    return error(400, 'invalid_request', 'A token request is application/x-www-form-urlencoded (RFC 6749 4.4.2)');
  const result = await clientCredentialsGrant(
    { form: new URLSearchParams(raw), authorization: header(event, 'authorization'), sourceAddress: event.requestContext.http.sourceIp },
    {
      issuer: process.env.AUTH_ISSUER ?? '',
      find: findClient,
      verifier,
      failures,
      signingKey,
      publish: publishKey,
    },
  );
  if (result.status === 401) log.info('client authentication failed', { sourceIp: event.requestContext.http.sourceIp });
  return answer(result);
}

async function jwks(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  const method = event.requestContext.http.method;
  if (method !== 'GET' && method !== 'HEAD')
    return problem(405, 'Method Not Allowed', `${method} is not supported here; GET the public keys`, { Allow: 'GET' });
  // The published keys (the current one and the one before); before any token, the current key alone.
  const keys = await publishedKeys();
  if (!keys.length) {
    const key = await signingKey();
    await publishKey(key);
    keys.push(key.publicJwk);
  }
  return { statusCode: 200, headers: { 'Content-Type': 'application/json', 'Cache-Control': 'max-age=300' }, body: JSON.stringify({ keys }) };
}

export const handler = instrumented(async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
  const path = event.rawPath ?? event.requestContext.http.path;
  if (path === TOKEN_PATH) return token(event);
  if (path === JWKS_PATH) return jwks(event);
  return problem(404, 'Not Found', 'No such resource');
});

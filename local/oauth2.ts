// The local OAuth 2.0 issuer, standing in for the Amazon Cognito user pool of template.yaml:
// a client store (client id, scrypt hash of the secret, tenant, scopes), the client credentials
// grant at /oauth2/token (client authentication by HTTP Basic or form fields, as Cognito takes it)
// and the signing keys at /.well-known/jwks.json. Access tokens carry the claims Cognito's do
// (iss, sub, client_id, token_use "access", scope "vnfm/<scope> ..."), so lib/auth verifies both alike.
import type http from 'node:http';
import { randomBytes, randomUUID, scryptSync, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { ALL_SCOPES, RESOURCE_SERVER, TENANT_SCOPE_PREFIX } from '#lib/auth/scopes.ts';

export const TOKEN_PATH = '/oauth2/token';
export const JWKS_PATH = '/.well-known/jwks.json';
const TOKEN_LIFETIME_SECONDS = 3600;

export interface LocalClient {
  clientId: string;
  /** scrypt$<salt b64url>$<hash b64url> */
  secretHash: string;
  tenantId: string;
  /** Scopes without the resource server prefix, the tenant scope excluded. */
  scopes: string[];
  createdAt: string;
}

export interface IssuedCredentials {
  clientId: string;
  clientSecret: string;
  tokenUrl: string;
}

function authDir(dataDir: string): string {
  const dir = join(dataDir, 'auth');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** Writes a file readable by its owner only, atomically (a running VNFM re-reads the client store). */
function writePrivate(path: string, text: string): void {
  const temp = `${path}.${process.pid}.${randomUUID()}.tmp`;
  writeFileSync(temp, text, { mode: 0o600 });
  renameSync(temp, path);
}

export function readClients(dataDir: string): LocalClient[] {
  const path = join(authDir(dataDir), 'clients.json');
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { clients: LocalClient[] }).clients : [];
}

function writeClients(dataDir: string, clients: LocalClient[]): void {
  writePrivate(join(authDir(dataDir), 'clients.json'), `${JSON.stringify({ clients }, null, 2)}\n`);
}

function hashSecret(secret: string): string {
  const salt = randomBytes(16);
  return `scrypt$${salt.toString('base64url')}$${scryptSync(secret, salt, 32).toString('base64url')}`;
}

function secretMatches(secret: string, stored: string): boolean {
  const [kind, salt, hash] = stored.split('$');
  if (kind !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = scryptSync(secret, Buffer.from(salt, 'base64url'), expected.length);
  return timingSafeEqual(actual, expected);
}

export function validateScopes(scopes: string[]): string[] {
  const unknown = scopes.filter((scope) => !ALL_SCOPES.includes(scope));
  if (unknown.length) throw new Error(`Unknown scopes: ${unknown.join(', ')} (known: ${ALL_SCOPES.join(', ')})`);
  return scopes;
}

/** Creates a client in the store; the secret is returned once and only its hash is kept. */
export function createLocalClient(dataDir: string, options: { tenantId: string; scopes: string[]; clientId?: string }): { clientId: string; clientSecret: string } {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(options.tenantId)) throw new Error(`Tenant id "${options.tenantId}" must be 1-64 letters, digits, - or _`);
  const clients = readClients(dataDir);
  const clientId = options.clientId ?? randomBytes(13).toString('hex');
  if (clients.some((c) => c.clientId === clientId)) throw new Error(`Client ${clientId} exists already`);
  const clientSecret = randomBytes(32).toString('base64url');
  clients.push({ clientId, secretHash: hashSecret(clientSecret), tenantId: options.tenantId, scopes: validateScopes(options.scopes), createdAt: new Date().toISOString() });
  writeClients(dataDir, clients);
  return { clientId, clientSecret };
}

/** A new secret for a client; the old one stops working at once (tokens already issued live until they expire). */
export function rotateLocalClientSecret(dataDir: string, clientId: string): string {
  const clients = readClients(dataDir);
  const client = clients.find((c) => c.clientId === clientId);
  if (!client) throw new Error(`No client ${clientId}`);
  const clientSecret = randomBytes(32).toString('base64url');
  client.secretHash = hashSecret(clientSecret);
  writeClients(dataDir, clients);
  return clientSecret;
}

export function deleteLocalClient(dataDir: string, clientId: string): void {
  const clients = readClients(dataDir);
  if (!clients.some((c) => c.clientId === clientId)) throw new Error(`No client ${clientId}`);
  writeClients(dataDir, clients.filter((c) => c.clientId !== clientId));
}

async function signingKey(dataDir: string): Promise<{ privateKey: Awaited<ReturnType<typeof importJWK>>; publicJwk: JWK; kid: string }> {
  const path = join(authDir(dataDir), 'signing-key.json');
  let jwk: JWK;
  if (existsSync(path)) {
    jwk = JSON.parse(readFileSync(path, 'utf8')) as JWK;
  } else {
    const pair = await generateKeyPair('ES256', { extractable: true });
    jwk = { ...(await exportJWK(pair.privateKey)), kid: randomUUID(), alg: 'ES256', use: 'sig' };
    writePrivate(path, `${JSON.stringify(jwk)}\n`);
  }
  const { d: _private, ...publicJwk } = jwk;
  return { privateKey: await importJWK(jwk, 'ES256'), publicJwk, kid: jwk.kid as string };
}

export interface LocalIssuer {
  /** Answers the issuer's own paths; false for any other path. */
  serve(req: http.IncomingMessage, res: http.ServerResponse, pathname: string, body: Buffer): Promise<boolean>;
  /** Called once the API listens: the issuer's URL is the API's, and credentials.json names its token endpoint. */
  listening(baseUrl: string): { issuer: string; jwksUrl: string; tokenUrl: string; credentialsPath: string; created: boolean };
}

function oauthError(res: http.ServerResponse, status: number, error: string, description: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...(status === 401 ? { 'WWW-Authenticate': 'Basic realm="vnfm"' } : {}) })
    .end(JSON.stringify({ error, error_description: description }));
}

export async function startLocalIssuer(dataDir: string): Promise<LocalIssuer> {
  const key = await signingKey(dataDir);
  let issuer = '';
  return {
    listening(baseUrl) {
      issuer = baseUrl;
      const tokenUrl = `${baseUrl}${TOKEN_PATH}`;
      const credentialsPath = join(dataDir, 'credentials.json');
      let created = false;
      let credentials: IssuedCredentials | undefined;
      if (existsSync(credentialsPath)) {
        credentials = { ...(JSON.parse(readFileSync(credentialsPath, 'utf8')) as IssuedCredentials), tokenUrl };
      } else if (!readClients(dataDir).some((c) => c.scopes.includes('admin'))) {
        credentials = { ...createLocalClient(dataDir, { tenantId: 'default', scopes: [...ALL_SCOPES] }), tokenUrl };
        created = true;
      }
      // The port may change between starts; the admin client's file always names today's endpoint.
      if (credentials) writePrivate(credentialsPath, `${JSON.stringify(credentials, null, 2)}\n`);
      return { issuer, jwksUrl: `${baseUrl}${JWKS_PATH}`, tokenUrl, credentialsPath, created };
    },
    async serve(req, res, pathname, body) {
      if (pathname === JWKS_PATH) {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'max-age=300' }).end(JSON.stringify({ keys: [key.publicJwk] }));
        return true;
      }
      if (pathname !== TOKEN_PATH) return false;
      if (req.method !== 'POST') {
        res.writeHead(405, { Allow: 'POST', 'Content-Type': 'application/json' }).end(JSON.stringify({ error: 'invalid_request', error_description: 'POST only' }));
        return true;
      }
      const form = new URLSearchParams(body.toString('utf8'));
      let clientId = form.get('client_id') ?? '';
      let clientSecret = form.get('client_secret') ?? '';
      const authorization = req.headers.authorization ?? '';
      if (/^basic /i.test(authorization)) {
        const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        clientId = decodeURIComponent(decoded.slice(0, colon === -1 ? undefined : colon));
        clientSecret = colon === -1 ? '' : decodeURIComponent(decoded.slice(colon + 1));
      }
      if (form.get('grant_type') !== 'client_credentials') return oauthError(res, 400, 'unsupported_grant_type', 'Only client_credentials is supported'), true;
      const client = readClients(dataDir).find((c) => c.clientId === clientId);
      if (!client || !clientSecret || !secretMatches(clientSecret, client.secretHash)) return oauthError(res, 401, 'invalid_client', 'Client authentication failed'), true;
      const allowed = new Set(client.scopes);
      const requested = form.get('scope')?.split(' ').filter(Boolean).map((s) => s.replace(new RegExp(`^${RESOURCE_SERVER}/`), ''));
      if (requested?.some((s) => !allowed.has(s) && s !== `${TENANT_SCOPE_PREFIX}${client.tenantId}`)) return oauthError(res, 400, 'invalid_scope', 'A requested scope is not granted to this client'), true;
      const granted = [...(requested ?? client.scopes).filter((s) => !s.startsWith(TENANT_SCOPE_PREFIX)), `${TENANT_SCOPE_PREFIX}${client.tenantId}`];
      const scope = granted.map((s) => `${RESOURCE_SERVER}/${s}`).join(' ');
      const token = await new SignJWT({ client_id: client.clientId, token_use: 'access', scope })
        .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'JWT' })
        .setIssuer(issuer).setSubject(client.clientId).setIssuedAt().setJti(randomUUID())
        .setExpirationTime(`${TOKEN_LIFETIME_SECONDS}s`)
        .sign(key.privateKey);
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' })
        .end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: TOKEN_LIFETIME_SECONDS, scope }));
      return true;
    },
  };
}

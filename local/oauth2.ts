// The local OAuth 2.0 issuer, standing in for the Amazon Cognito user pool of template.yaml:
// a client store (client id, scrypt hash of the secret, tenant, scopes), the client credentials
// grant at /oauth2/token (client authentication by HTTP Basic or form fields, as Cognito takes it)
// and the signing keys at /.well-known/jwks.json. Access tokens carry the claims Cognito's do
// (iss, sub, client_id, token_use "access", scope "vnfm/<scope> ..."), so lib/auth verifies both alike.
// It also keeps the clients table (lib/auth/client-state.ts) in step with the store, as the
// `clients` operations do on AWS, so a rotated or deleted client's tokens stop working at once.
import type http from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { ALL_SCOPES, RESOURCE_SERVER, TENANT_SCOPE_PREFIX } from '#lib/auth/scopes.ts';
import { parseBasicCredentials } from '#lib/auth/basic.ts';
import { nextSecond, recordClientState, rotatedNotBefore } from '#lib/auth/client-state.ts';
import { clientFailureLimiter } from '#lib/auth/failure-limit.ts';
import { documentClient, requiredEnv } from '#lib/store/dynamo.ts';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { sendProblem } from './http-guard.ts';
import { hashSecret, HashingBusyError, secretVerifier } from './client-secrets.ts';
import { isRecord } from '#lib/json.ts';

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
  /** Epoch seconds: tokens issued before it belong to an earlier secret (or an earlier client of this id). */
  notBefore?: number;
}

export interface IssuedCredentials {
  clientId: string;
  clientSecret: string;
  tokenUrl: string;
}

function authDir(dataDir: string): string {
  const dir = join(dataDir, 'auth');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  return dir;
}

/** Writes a file readable by its owner only, atomically (a running VNFM re-reads the client store). */
function writePrivate(path: string, text: string): void {
  const temp = `${path}.${process.pid}.${randomUUID()}.tmp`;
  writeFileSync(temp, text, { mode: 0o600 });
  renameSync(temp, path);
}

/** A data file that is there (or should be) but cannot be used; the message names it and what to do. */
export class DataFileError extends Error {
  constructor(
    readonly path: string,
    problem: string,
    remedy = 'restore it from a backup, or run "npm start -- --repair" to re-create it',
  ) {
    super(`${path} ${problem}; ${remedy}`);
    this.name = 'DataFileError';
  }
}

/** A JSON data file's content, or a DataFileError naming the file when it is not JSON or not what `valid` expects. */
export function readJsonFile<T>(path: string, valid: (value: unknown) => value is T, expected: string): T {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new DataFileError(path, code === 'ENOENT' ? 'is missing' : code ? `cannot be read (${code})` : `is not valid JSON (${(error as Error).message})`);
  }
  if (!valid(value)) throw new DataFileError(path, `does not hold ${expected}`);
  return value;
}

function isClientStore(value: unknown): value is { clients: LocalClient[] } {
  return (
    isRecord(value) &&
    Array.isArray(value.clients) &&
    value.clients.every(
      (c) =>
        isRecord(c) &&
        typeof c.clientId === 'string' &&
        typeof c.secretHash === 'string' &&
        typeof c.tenantId === 'string' &&
        Array.isArray(c.scopes) &&
        c.scopes.every((scope) => typeof scope === 'string'),
    )
  );
}

export function isIssuedCredentials(value: unknown): value is IssuedCredentials {
  return isRecord(value) && typeof value.clientId === 'string' && typeof value.clientSecret === 'string';
}

export function clientsPath(dataDir: string): string {
  return join(dataDir, 'auth', 'clients.json');
}

export function signingKeyPath(dataDir: string): string {
  return join(dataDir, 'auth', 'signing-key.json');
}

export function credentialsPath(dataDir: string): string {
  return join(dataDir, 'credentials.json');
}

/** The client store; none yet is an empty one. A damaged store is a DataFileError. */
export function readClients(dataDir: string): LocalClient[] {
  const path = clientsPath(dataDir);
  return existsSync(path) ? readJsonFile(path, isClientStore, '{"clients": [...]}').clients : [];
}

function writeClients(dataDir: string, clients: LocalClient[]): void {
  authDir(dataDir);
  writePrivate(clientsPath(dataDir), `${JSON.stringify({ clients }, null, 2)}\n`);
}

export function validateScopes(scopes: string[]): string[] {
  const unknown = scopes.filter((scope) => !ALL_SCOPES.includes(scope));
  if (unknown.length) throw new Error(`Unknown scopes: ${unknown.join(', ')} (known: ${ALL_SCOPES.join(', ')})`);
  return scopes;
}

/** Creates a client in the store; the secret is returned once and only its hash is kept. */
export function createLocalClient(
  dataDir: string,
  options: { tenantId: string; scopes: string[]; clientId?: string },
): { clientId: string; clientSecret: string } {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(options.tenantId)) throw new Error(`Tenant id "${options.tenantId}" must be 1-64 letters, digits, - or _`);
  const clients = readClients(dataDir);
  const clientId = options.clientId ?? randomBytes(13).toString('hex');
  if (clients.some((c) => c.clientId === clientId)) throw new Error(`Client ${clientId} exists already`);
  const clientSecret = randomBytes(32).toString('base64url');
  // notBefore: a client re-created under a deleted one's id does not revive the old one's tokens.
  clients.push({
    clientId,
    secretHash: hashSecret(clientSecret),
    tenantId: options.tenantId,
    scopes: validateScopes(options.scopes),
    createdAt: new Date().toISOString(),
    notBefore: nextSecond(),
  });
  writeClients(dataDir, clients);
  return { clientId, clientSecret };
}

/** Creates an admin client of tenant "default" and writes its credentials to credentials.json (its tokenUrl is filled in once the API listens). */
export function issueAdminCredentials(dataDir: string): IssuedCredentials {
  const credentials = { ...createLocalClient(dataDir, { tenantId: 'default', scopes: [...ALL_SCOPES] }), tokenUrl: '' };
  writePrivate(credentialsPath(dataDir), `${JSON.stringify(credentials, null, 2)}\n`);
  return credentials;
}

/** A new secret for a client; the old one, and every token issued to it, stops working at once. */
export function rotateLocalClientSecret(dataDir: string, clientId: string): string {
  const clients = readClients(dataDir);
  const client = clients.find((c) => c.clientId === clientId);
  if (!client) throw new Error(`No client ${clientId}`);
  const clientSecret = randomBytes(32).toString('base64url');
  client.secretHash = hashSecret(clientSecret);
  client.notBefore = rotatedNotBefore(client.notBefore);
  writeClients(dataDir, clients);
  return clientSecret;
}

export function deleteLocalClient(dataDir: string, clientId: string): void {
  const clients = readClients(dataDir);
  if (!clients.some((c) => c.clientId === clientId)) throw new Error(`No client ${clientId}`);
  writeClients(
    dataDir,
    clients.filter((c) => c.clientId !== clientId),
  );
}

async function signingKey(dataDir: string): Promise<{ privateKey: Awaited<ReturnType<typeof importJWK>>; publicJwk: JWK; kid: string }> {
  authDir(dataDir);
  const path = signingKeyPath(dataDir);
  let jwk: JWK;
  if (existsSync(path)) {
    jwk = readJsonFile(path, isSigningKey, 'an ES256 private JSON Web Key');
  } else {
    const pair = await generateKeyPair('ES256', { extractable: true });
    jwk = { ...(await exportJWK(pair.privateKey)), kid: randomUUID(), alg: 'ES256', use: 'sig' };
    writePrivate(path, `${JSON.stringify(jwk)}\n`);
  }
  const { d: _private, ...publicJwk } = jwk;
  try {
    return { privateKey: await importJWK(jwk, 'ES256'), publicJwk, kid: jwk.kid as string };
  } catch (error) {
    throw new DataFileError(
      path,
      `does not hold a usable ES256 key (${(error as Error).message})`,
      'restore it from a backup, or run "npm start -- --repair" to create a new key (tokens issued before stop working)',
    );
  }
}

function isSigningKey(value: unknown): value is JWK {
  return (
    isRecord(value) &&
    value.kty === 'EC' &&
    value.crv === 'P-256' &&
    typeof value.d === 'string' &&
    typeof value.x === 'string' &&
    typeof value.y === 'string' &&
    typeof value.kid === 'string'
  );
}

export interface LocalIssuer {
  /** Answers the issuer's own paths; false for any other path. */
  serve(req: http.IncomingMessage, res: http.ServerResponse, pathname: string, body: Buffer): Promise<boolean>;
  /** Called once the API listens: the issuer's URL is the API's, and credentials.json names its token endpoint. */
  listening(baseUrl: string): { issuer: string; jwksUrl: string; tokenUrl: string; credentialsPath: string; created: boolean };
  /** Stops following the client store. */
  close(): void;
}

/** Answers with an RFC 6749 5.2 error; true, so a handler can `return oauthError(...)` to say the request was answered. */
function oauthError(res: http.ServerResponse, status: number, error: string, description: string, headers: Record<string, string> = {}): true {
  res
    .writeHead(status, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
      ...(status === 401 ? { 'WWW-Authenticate': 'Basic realm="vnfm"' } : {}),
      ...headers,
    })
    .end(JSON.stringify({ error, error_description: description }));
  return true;
}

/**
 * Keeps the clients table in step with the client store: each client's notBefore, and a deleted
 * mark for a client that has left the store. Runs on start and whenever clients.json is replaced
 * (the clients command writes it while the VNFM runs); one pass at a time, the last change last.
 */
function followClientStore(dataDir: string, log: (line: string) => void): { synced: Promise<void>; close(): void } {
  let recorded: Map<string, string> | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  const pass = async () => {
    if (!recorded) {
      const { Items = [] } = await documentClient().send(new ScanCommand({ TableName: requiredEnv('CLIENTS_TABLE') }));
      recorded = new Map(Items.map((item) => [String(item.clientId), JSON.stringify({ notBefore: item.notBefore, deleted: item.deleted === true })]));
    }
    // A store that went missing is not every client deleted: the token endpoint refuses all until it is back.
    if (!existsSync(clientsPath(dataDir))) return;
    const present = new Map(readClients(dataDir).map((c) => [c.clientId, { notBefore: c.notBefore, deleted: false }]));
    for (const [clientId, was] of recorded)
      if (!present.has(clientId) && !(JSON.parse(was) as { deleted: boolean }).deleted) present.set(clientId, { notBefore: undefined, deleted: true });
    for (const [clientId, state] of present) {
      const text = JSON.stringify(state);
      if (recorded.get(clientId) === text) continue;
      await recordClientState({ clientId, ...state });
      recorded.set(clientId, text);
    }
  };
  const sync = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await pass();
        } catch (error) {
          log(`The clients table could not be brought in step with ${clientsPath(dataDir)}: ${(error as Error).message}`);
        }
      } while (again);
      running = undefined;
    })();
    return running;
  };
  const watcher: FSWatcher = watch(authDir(dataDir), (_event, file) => {
    if (file === 'clients.json') void sync();
  });
  return { synced: sync(), close: () => watcher.close() };
}

export async function startLocalIssuer(dataDir: string, log: (line: string) => void = () => undefined): Promise<LocalIssuer> {
  const key = await signingKey(dataDir);
  const verifier = secretVerifier();
  const failures = clientFailureLimiter();
  const store = followClientStore(dataDir, log);
  await store.synced;
  let issuer = '';
  return {
    close: store.close,
    listening(baseUrl) {
      issuer = baseUrl;
      const tokenUrl = `${baseUrl}${TOKEN_PATH}`;
      const credentialsFile = credentialsPath(dataDir);
      let created = false;
      let credentials: IssuedCredentials | undefined;
      if (existsSync(credentialsFile)) {
        credentials = { ...readJsonFile(credentialsFile, isIssuedCredentials, '{"clientId", "clientSecret", "tokenUrl"}'), tokenUrl };
      } else if (!readClients(dataDir).some((c) => c.scopes.includes('admin'))) {
        credentials = { ...createLocalClient(dataDir, { tenantId: 'default', scopes: [...ALL_SCOPES] }), tokenUrl };
        created = true;
      }
      // The port may change between starts; the admin client's file always names today's endpoint.
      if (credentials) writePrivate(credentialsFile, `${JSON.stringify(credentials, null, 2)}\n`);
      return { issuer, jwksUrl: `${baseUrl}${JWKS_PATH}`, tokenUrl, credentialsPath: credentialsFile, created };
    },
    async serve(req, res, pathname, body) {
      if (pathname === JWKS_PATH) {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'max-age=300' }).end(JSON.stringify({ keys: [key.publicJwk] }));
        return true;
      }
      if (pathname !== TOKEN_PATH) return false;
      if (req.method !== 'POST') {
        res
          .writeHead(405, { Allow: 'POST', 'Content-Type': 'application/json' })
          .end(JSON.stringify({ error: 'invalid_request', error_description: 'POST only' }));
        return true;
      }
      const form = new URLSearchParams(body.toString('utf8'));
      let clientId = form.get('client_id') ?? '';
      let clientSecret = form.get('client_secret') ?? '';
      const authorization = req.headers.authorization ?? '';
      if (/^basic(\s|$)/i.test(authorization)) {
        // RFC 6749 5.2: client authentication that fails, malformed included, is invalid_client.
        const basic = parseBasicCredentials(authorization);
        if (!basic) return oauthError(res, 401, 'invalid_client', 'The Basic credentials are not a form-urlencoded client id and secret (RFC 6749 2.3.1)');
        ({ clientId, clientSecret } = basic);
      }
      if (form.get('grant_type') !== 'client_credentials') return oauthError(res, 400, 'unsupported_grant_type', 'Only client_credentials is supported');
      let clients: LocalClient[];
      try {
        // Missing now means lost: the first start created it, and deleting every client leaves an empty store.
        if (!existsSync(clientsPath(dataDir))) throw new DataFileError(clientsPath(dataDir), 'is missing');
        clients = readClients(dataDir);
      } catch (error) {
        if (!(error instanceof DataFileError)) throw error;
        log(`OAuth 2.0 token endpoint cannot authenticate clients: ${error.message}`);
        sendProblem(res, 503, "The client store cannot be read, so no client can be authenticated; the VNFM's log names the problem", {
          'Cache-Control': 'no-store',
        });
        return true;
      }
      const address = req.socket.remoteAddress ?? '';
      const retryAfter = failures.retryAfterSeconds(clientId, address);
      if (retryAfter)
        return oauthError(res, 429, 'slow_down', 'Too many failed client authentications; try again later', { 'Retry-After': String(retryAfter) });
      const client = clients.find((c) => c.clientId === clientId);
      let matches: boolean;
      try {
        matches = await verifier.matches(clientSecret, client?.secretHash);
      } catch (error) {
        if (!(error instanceof HashingBusyError)) throw error;
        return oauthError(res, 503, 'temporarily_unavailable', error.message, { 'Retry-After': '1' });
      }
      if (!client || !matches) {
        failures.fail(clientId, address);
        return oauthError(res, 401, 'invalid_client', 'Client authentication failed');
      }
      const allowed = new Set(client.scopes);
      const requested = form
        .get('scope')
        ?.split(' ')
        .filter(Boolean)
        .map((s) => s.replace(new RegExp(`^${RESOURCE_SERVER}/`), ''));
      if (requested?.some((s) => !allowed.has(s) && s !== `${TENANT_SCOPE_PREFIX}${client.tenantId}`))
        return oauthError(res, 400, 'invalid_scope', 'A requested scope is not granted to this client');
      const granted = [...(requested ?? client.scopes).filter((s) => !s.startsWith(TENANT_SCOPE_PREFIX)), `${TENANT_SCOPE_PREFIX}${client.tenantId}`];
      const scope = granted.map((s) => `${RESOURCE_SERVER}/${s}`).join(' ');
      // Never dated before the client's notBefore: a token of the new secret is not taken for one of the old.
      const issuedAt = Math.max(Math.floor(Date.now() / 1000), client.notBefore ?? 0);
      const token = await new SignJWT({ client_id: client.clientId, token_use: 'access', scope })
        .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'JWT' })
        .setIssuer(issuer)
        .setSubject(client.clientId)
        .setIssuedAt(issuedAt)
        .setJti(randomUUID())
        .setExpirationTime(issuedAt + TOKEN_LIFETIME_SECONDS)
        .sign(key.privateKey);
      res
        .writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' })
        .end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: TOKEN_LIFETIME_SECONDS, scope }));
      return true;
    },
  };
}

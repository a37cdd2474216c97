// The local runtime's OAuth 2.0 client store: the clients (client id, scrypt hash of the secret,
// tenant, scopes) in a file of the data folder, auth/clients.json, that the `clients` command
// edits, and the first admin client's credentials in credentials.json. The deployment's own issuer
// (functions/api/oauth2.ts, the same function as on AWS) authenticates clients against the clients
// table; the runtime keeps that table in step with the file, on start, whenever the file is
// replaced, and before it passes on a request that authenticates a client (a token request, or
// Basic credentials), so a client created, rotated or deleted a moment ago is what the issuer sees.
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { ALL_SCOPES } from '#lib/auth/scopes.ts';
import { putClientRecord, TENANT_ID_PATTERN, CLIENT_ID_PATTERN, validateScopes } from '#lib/auth/client-directory.ts';
import { TOKEN_PATH } from '#lib/auth/issuer.ts';
import { nextSecond, recordClientState, rotatedNotBefore } from '#lib/auth/client-state.ts';
import { documentClient, requiredEnv } from '#lib/store/dynamo.ts';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { hashSecret } from '#lib/auth/secret-hash.ts';
import { isRecord } from '#lib/json.ts';

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

/** Writes a file readable by its owner only, atomically (a running VNFM re-reads the client store; a kill mid-write leaves the old file whole). */
export function writePrivate(path: string, text: string): void {
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

export { validateScopes };

/** Creates a client in the store; the secret is returned once and only its hash is kept. */
export function createLocalClient(
  dataDir: string,
  options: { tenantId: string; scopes: string[]; clientId?: string },
): { clientId: string; clientSecret: string } {
  if (!TENANT_ID_PATTERN.test(options.tenantId)) throw new Error(`Tenant id "${options.tenantId}" must be 1-64 letters, digits, - or _`);
  const clients = readClients(dataDir);
  const clientId = options.clientId ?? randomBytes(13).toString('hex');
  if (!CLIENT_ID_PATTERN.test(clientId)) throw new Error(`Client id "${clientId}" must be 1-64 letters, digits, - or _`);
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

/** A client as the clients table keeps it, from the store; what the sync compares. */
function tableState(client: LocalClient | undefined): string {
  return client
    ? JSON.stringify({ secretHash: client.secretHash, tenantId: client.tenantId, scopes: client.scopes, notBefore: client.notBefore, deleted: false })
    : JSON.stringify({ deleted: true });
}

/**
 * Keeps the clients table in step with the client store: each client's hash, tenant, scopes and
 * notBefore, and a deleted mark for a client that has left the store. One pass at a time, the last
 * change last. A store that cannot be read leaves the table as it is and is the pass's answer.
 */
function followClientStore(dataDir: string, log: (line: string) => void) {
  let recorded: Map<string, string> | undefined;
  let running: Promise<DataFileError | undefined> | undefined;
  let again = false;
  /** The store file's identity when last read (it is replaced, never written in place). */
  let seen = '';
  const identity = (): string => {
    try {
      const stat = statSync(clientsPath(dataDir));
      return `${stat.ino}:${stat.mtimeMs}:${stat.size}`;
    } catch {
      return 'missing';
    }
  };
  const pass = async (): Promise<DataFileError | undefined> => {
    if (!recorded) {
      const { Items = [] } = await documentClient().send(new ScanCommand({ TableName: requiredEnv('CLIENTS_TABLE') }));
      recorded = new Map(
        Items.filter((item) => CLIENT_ID_PATTERN.test(String(item.clientId))).map((item) => [
          String(item.clientId),
          item.deleted === true
            ? JSON.stringify({ deleted: true })
            : JSON.stringify({ secretHash: item.secretHash, tenantId: item.tenantId, scopes: item.scopes, notBefore: item.notBefore, deleted: false }),
        ]),
      );
    }
    const now = identity();
    // Missing now means lost: the first start created it, and deleting every client leaves an empty store.
    if (now === 'missing') return new DataFileError(clientsPath(dataDir), 'is missing');
    let clients: LocalClient[];
    try {
      clients = readClients(dataDir);
    } catch (error) {
      if (error instanceof DataFileError) return error;
      throw error;
    }
    const present = new Map(clients.map((c) => [c.clientId, c]));
    for (const clientId of new Set([...recorded.keys(), ...present.keys()])) {
      const client = present.get(clientId);
      const text = tableState(client);
      if (recorded.get(clientId) === text) continue;
      if (client) await putClientRecord(client);
      else await recordClientState({ clientId, deleted: true });
      recorded.set(clientId, text);
    }
    seen = now;
    return undefined;
  };
  const sync = (): Promise<DataFileError | undefined> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      let outcome: DataFileError | undefined;
      do {
        again = false;
        try {
          outcome = await pass();
        } catch (error) {
          outcome = undefined;
          log(`The clients table could not be brought in step with ${clientsPath(dataDir)}: ${(error as Error).message}`);
        }
      } while (again);
      running = undefined;
      return outcome;
    })();
    return running;
  };
  const watcher: FSWatcher = watch(authDir(dataDir), (_event, file) => {
    if (file === 'clients.json') void sync();
  });
  return {
    synced: sync(),
    /** The table as the store is now: a pass when the store changed since the last one (cheap when it did not). */
    current: (): Promise<DataFileError | undefined> => (running || identity() !== seen ? sync() : Promise.resolve(undefined)),
    close: () => watcher.close(),
  };
}

export interface LocalClientStore {
  /**
   * Brings the clients table in step with the store if it changed; a DataFileError when the store
   * cannot be read (no client can be authenticated until it is back).
   */
  current(): Promise<DataFileError | undefined>;
  /** Called once the API listens: credentials.json names the token endpoint at the API's address. */
  listening(baseUrl: string): { tokenUrl: string; credentialsPath: string; created: boolean };
  /** Stops following the client store. */
  close(): void;
}

export async function followLocalClients(dataDir: string, log: (line: string) => void = () => undefined): Promise<LocalClientStore> {
  const store = followClientStore(dataDir, log);
  await store.synced;
  return {
    current: store.current,
    close: store.close,
    listening(baseUrl) {
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
      return { tokenUrl, credentialsPath: credentialsFile, created };
    },
  };
}

// Starts `npm start`'s entry point as a child process (the way an operator runs it) on a free
// port with its own data folder, and gives tests its URL, its output, its endpoints and the
// credentials its stand-ins demand.
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { VimConnection } from '#lib/vim/driver.ts';
import { readLocalAwsCredentials, type AwsCredentials } from '#local/sigv4.ts';
import { signingKeyFrom, type SigningKey } from '#lib/auth/token-keys.ts';
import { vnfPackageListKeys } from '#lib/store/packages.ts';
import { checkExchange } from './exchange.ts';

export const ROOT = resolve(import.meta.dirname, '../..');

export interface LocalVnfm {
  url: string;
  pid: number;
  dataDir: string;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  endpoints: {
    dynamodb: string;
    s3: string;
    sqs: string;
    region: string;
    buckets: Record<string, string>;
    queues: Record<string, { url: string; arn: string }>;
  };
  /** The key pair this start made; its stand-ins serve only requests signed with it ($VNFM_DATA_DIR/local-aws-credentials.json). */
  awsCredentials: AwsCredentials;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** kill -9 of the runtime's whole process group (started with `processGroup`), as a crash or an OOM killer would; resolves once it is gone. */
  kill(): Promise<void>;
  /** Closes this side of the runtime's stdout and stderr, as a terminal that went away or a pipe's reader that ended: its writes fail (EPIPE) from then on. */
  closeOutput(): void;
}

/**
 * The environment variables and node options `npm start` runs local/main.ts with (package.json), so
 * that the runtime under test bounds its memory as an operator's does (README "Architecture").
 */
const { START_ENV, START_OPTIONS } = (() => {
  const { start } = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts;
  const words = start.split(/\s+/);
  const node = words.indexOf('node');
  const entry = words.indexOf('local/main.ts');
  const assignments = words.slice(0, Math.max(node, 0));
  if (node < 0 || entry < node || !assignments.every((word) => /^[A-Z_][A-Z0-9_]*=\S*$/.test(word)))
    throw new Error(`package.json "start" is not "[VARIABLE=value ...] node <options> local/main.ts": ${start}`);
  const env = Object.fromEntries(assignments.map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]));
  return { START_ENV: env, START_OPTIONS: words.slice(node + 1, entry) };
})();

/** How long a start may take before startVnfm() fails (a start takes seconds; this only turns a hang into a failure). */
const START_LIMIT_MS = 180_000;

export function newDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'vnfm-test-'));
}

/** Starts the VNFM; `args` go to local/main.ts as `npm start -- <args>` passes them. Rejects, with the exit code and output, if it exits before listening. */
export async function startVnfm(options: { dataDir?: string; env?: Record<string, string>; processGroup?: boolean; args?: string[] } = {}): Promise<LocalVnfm> {
  const dataDir = options.dataDir ?? newDataDir();
  const child: ChildProcess = spawn(process.execPath, [...START_OPTIONS, 'local/main.ts', ...(options.args ?? [])], {
    cwd: ROOT,
    env: { ...process.env, ...START_ENV, PORT: '0', VNFM_DATA_DIR: dataDir, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A group of its own (with the script sandboxes it starts), so that a test can kill all of it.
    detached: options.processGroup ?? false,
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  const url = await new Promise<string>((resolveUrl, reject) => {
    // A start that never comes fails the test that asked for it, with what the runtime printed.
    const limit = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`VNFM not listening after ${START_LIMIT_MS / 1000} s:\n${output}`));
    }, START_LIMIT_MS);
    const onData = () => {
      const found = /VNFM listening on (http:\/\/\S+)/.exec(output);
      if (found) {
        clearTimeout(limit);
        child.stdout?.off('data', onData);
        resolveUrl(found[1] as string);
      }
    };
    child.stdout?.on('data', onData);
    void exited.then((code) => {
      clearTimeout(limit);
      reject(new Error(`VNFM exited with ${code} before listening:\n${output}`));
    });
  });
  const endpoints = JSON.parse(readFileSync(join(dataDir, 'endpoints.json'), 'utf8')) as LocalVnfm['endpoints'];
  return {
    url,
    pid: child.pid as number,
    dataDir,
    output: () => output,
    endpoints,
    awsCredentials: readLocalAwsCredentials(dataDir),
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
    kill: async () => {
      if (!options.processGroup) throw new Error('kill() needs startVnfm({ processGroup: true })');
      try {
        process.kill(-(child.pid as number), 'SIGKILL');
      } catch {
        // already gone
      }
      await exited;
    },
    closeOutput: () => {
      child.stdout?.destroy();
      child.stderr?.destroy();
    },
  };
}

function documents(vnfm: LocalVnfm): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: vnfm.endpoints.dynamodb,
      region: vnfm.endpoints.region,
      credentials: vnfm.awsCredentials,
    }),
    { marshallOptions: { removeUndefinedValues: true } },
  );
}

export interface SeededPackage {
  id: string;
  vnfdId: string;
}

/** Writes an onboarded VNF package record straight into the packages table (until packages can be onboarded through the API). */
export async function seedPackage(vnfm: LocalVnfm, overrides: Record<string, unknown> = {}): Promise<SeededPackage> {
  const id = crypto.randomUUID();
  const vnfdId = crypto.randomUUID();
  const record = {
    id,
    vnfdId,
    tenantId: 'default',
    vnfProvider: 'Company',
    vnfProductName: 'Sample VNF',
    vnfSoftwareVersion: '1.0',
    vnfdVersion: '1.0',
    onboardingState: 'ONBOARDED',
    operationalState: 'ENABLED',
    usageState: 'NOT_IN_USE',
    createdAt: new Date().toISOString(),
    ...overrides,
  };
  // With its list index keys, as the package store writes them.
  await documents(vnfm).send(new PutCommand({ TableName: 'VnfPackagesTable', Item: vnfPackageListKeys(record) }));
  return { id: record.id as string, vnfdId: record.vnfdId as string };
}

export async function setPackageState(vnfm: LocalVnfm, id: string, operationalState: 'ENABLED' | 'DISABLED'): Promise<void> {
  const { Item } = await documents(vnfm).send(new GetCommand({ TableName: 'VnfPackagesTable', Key: { id }, ConsistentRead: true }));
  const tenantId = String(Item?.tenantId);
  await documents(vnfm).send(
    new UpdateCommand({
      TableName: 'VnfPackagesTable',
      Key: { id },
      UpdateExpression: 'SET operationalState = :s, operationalStateKey = :k',
      ExpressionAttributeValues: { ':s': operationalState, ':k': vnfPackageListKeys({ id, tenantId, operationalState }).operationalStateKey },
    }),
  );
}

/** A VNF package's record as the store keeps it (what the API does not show, such as instanceCount). */
export async function packageRecord(vnfm: LocalVnfm, id: string): Promise<Record<string, unknown> | undefined> {
  return (await documents(vnfm).send(new GetCommand({ TableName: 'VnfPackagesTable', Key: { id }, ConsistentRead: true }))).Item;
}

/** The notification ids of the entries in the notification outbox (lib/store/outbox.ts): changes whose events the notifier has not fanned out yet. */
export async function outboxEntries(vnfm: LocalVnfm): Promise<string[]> {
  const out = await documents(vnfm).send(
    new QueryCommand({
      TableName: 'VnfLcmOpOccsTable',
      IndexName: 'sweep',
      KeyConditionExpression: 'sweep = :p',
      ExpressionAttributeValues: { ':p': 'OUTBOX' },
    }),
  );
  return (out.Items ?? []).map((item) => String(item.id).replace(/^outbox#/, ''));
}

/** A VNF instance's record as the store keeps it (what the API does not show, such as vimResources.driverState). */
export async function instanceRecord(vnfm: LocalVnfm, id: string): Promise<Record<string, unknown> | undefined> {
  return (await documents(vnfm).send(new GetCommand({ TableName: 'VnfInstancesTable', Key: { id } }))).Item;
}

/** A SOL003 accessInfo for the local OpenStack simulator, from its entry in $VNFM_DATA_DIR/vims.json. */
export function openStackAccessInfo(os: Record<string, unknown>): Record<string, unknown> {
  const { username, password, project, projectDomain, userDomain, region } = os;
  return { username, password, project, projectDomain, userDomain, region };
}

/** The runtime's simulators as a driver reaches them ($VNFM_DATA_DIR/vims.json), each with its /_sim/ control URL. */
export function localVims(vnfm: LocalVnfm): Record<'openstack' | 'kubernetes', { vim: VimConnection; control: string }> {
  const vims = JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8'));
  const os = vims['local-openstack'];
  const k8s = vims['local-kubernetes'];
  return {
    openstack: {
      vim: {
        vimId: 'local-openstack',
        vimType: os.vimType,
        interfaceInfo: { endpoint: os.authUrl },
        accessInfo: openStackAccessInfo(os),
      },
      control: os.control,
    },
    kubernetes: {
      vim: { vimId: 'local-kubernetes', vimType: k8s.vimType, interfaceInfo: { endpoint: k8s.endpoint }, accessInfo: { bearer_token: k8s.bearer_token } },
      control: k8s.control,
    },
  };
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  bytes: Buffer;
  body: unknown;
  /** From the request's start to the answer's last byte: the exchange alone, without the checks of it made here afterwards. */
  exchangeMs: number;
}

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  tokenUrl: string;
}

/** The admin client the VNFM created on its first start ($VNFM_DATA_DIR/credentials.json). */
export function adminCredentials(vnfm: LocalVnfm): ClientCredentials {
  return JSON.parse(readFileSync(join(vnfm.dataDir, 'credentials.json'), 'utf8')) as ClientCredentials;
}

const tokens = new Map<string, Promise<string>>();

/** An access token by the client credentials grant (HTTP Basic client authentication), cached per client. */
export function accessToken(credentials: ClientCredentials, scope?: string): Promise<string> {
  const key = `${credentials.tokenUrl} ${credentials.clientId} ${credentials.clientSecret} ${scope ?? ''}`;
  let found = tokens.get(key);
  if (!found) {
    found = (async () => {
      const response = await fetch(credentials.tokenUrl, {
        method: 'POST',
        headers: {
          Authorization: `Basic ${Buffer.from(`${credentials.clientId}:${credentials.clientSecret}`).toString('base64')}`,
          'Content-Type': 'application/x-www-form-urlencoded',
        },
        body: `grant_type=client_credentials${scope ? `&scope=${encodeURIComponent(scope)}` : ''}`,
      });
      if (response.status !== 200) throw new Error(`token endpoint answered ${response.status}: ${await response.text()}`);
      return ((await response.json()) as { access_token: string }).access_token;
    })();
    found.catch(() => tokens.delete(key));
    tokens.set(key, found);
  }
  return found;
}

/**
 * How a client sends its requests: `fetch` (undici, as most tests and NFVO scripts do), or `http`:
 * node:http on a keep-alive agent of its own, for a bench's timed loops. On a small machine shared
 * with the runtime, fetch's own work per exchange (about 1 ms of CPU on a 2-core box, half of it
 * inside the timed exchange) is CPU and time the runtime under test does not get.
 */
export type ClientTransport = 'fetch' | 'http';

/** One exchange over node:http (ClientTransport `http`): the status, the headers as fetch gives them, the body. */
function httpExchange(
  agent: HttpAgent,
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string | Buffer | undefined,
): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  return new Promise((resolveExchange, reject) => {
    const request = httpRequest(url, { method, headers, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const received = new Headers();
        const raw = response.rawHeaders;
        for (let i = 0; i + 1 < raw.length; i += 2) received.append(raw[i] as string, raw[i + 1] as string);
        resolveExchange({ status: response.statusCode ?? 0, headers: received, bytes: Buffer.concat(chunks) });
      });
    });
    request.on('error', reject);
    request.end(body);
  });
}

/**
 * An HTTP client for the API; `version` defaults to the v2 Version header. It authenticates with
 * the admin client's token unless told otherwise: `as` another client's credentials, or per call
 * `token` (a bearer token, or null for no credentials at all); `transport`: how it sends them.
 */
export function client(vnfm: LocalVnfm, as?: ClientCredentials, transport: ClientTransport = 'fetch') {
  const agent = transport === 'http' ? new HttpAgent({ keepAlive: true }) : undefined;
  return async function call(
    method: string,
    path: string,
    options: {
      body?: unknown;
      raw?: string | Buffer;
      headers?: Record<string, string>;
      version?: string | null;
      token?: string | null;
      /** false: the answer is not checked against the ETSI schemas and SOL013 rules here (a bench's timed loop checks a sample). */
      check?: boolean;
    } = {},
  ): Promise<Reply> {
    const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
    const token = options.token === undefined ? await accessToken(as ?? adminCredentials(vnfm)) : options.token;
    if (token !== null && headers.Authorization === undefined && headers['X-Auth-Token'] === undefined) headers.Authorization = `Bearer ${token}`;
    const pathname = new URL(path, vnfm.url).pathname;
    const version = options.version === undefined ? (pathname.startsWith('/vnflcm/v2/') ? '2.0.0' : null) : options.version;
    if (version) headers.Version = version;
    let body: string | Buffer | undefined = options.raw;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['Content-Type'] ??= 'application/json';
    }
    const url = path.startsWith('http') ? path : `${vnfm.url}${path}`;
    const started = performance.now();
    const response = agent
      ? await httpExchange(agent, url, method, headers, body)
      : await fetch(url, { method, headers, body }).then(async (fetched) => ({
          status: fetched.status,
          headers: fetched.headers,
          bytes: Buffer.from(await fetched.arrayBuffer()),
        }));
    const { bytes } = response;
    const exchangeMs = performance.now() - started;
    const text = bytes.toString('utf8');
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (options.check !== false)
      await checkExchange({
        method,
        url,
        status: response.status,
        headers: response.headers,
        body: parsed,
        text: bytes.length && !/json/.test(response.headers.get('content-type') ?? '') ? '<binary>' : text,
      });
    return { status: response.status, headers: response.headers, text, bytes, body: parsed, exchangeMs };
  };
}

/** A local control (`/_local/...` on the API's address), asked with the admin client's token as it demands. */
export async function localControl(vnfm: LocalVnfm, method: 'GET' | 'POST', path: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${vnfm.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${await accessToken(adminCredentials(vnfm))}` },
    ...(signal ? { signal } : {}),
  });
}

/**
 * How long settle() waits before it fails, naming what the runtime last said: well under the test
 * runner's per-file limit, so an operation that never ends fails its own test, with a cause, instead
 * of timing the whole file out in silence. The bench, which settles after thousands of operations,
 * lifts it.
 */
export const SETTLE_LIMIT = { ms: 240_000 };

/** Waits until every event-triggered function and state machine execution has finished (an event, not a sleep). */
export async function settle(vnfm: LocalVnfm): Promise<void> {
  const giveUp = Date.now() + SETTLE_LIMIT.ms;
  for (;;) {
    const left = giveUp - Date.now();
    if (left <= 0)
      throw new Error(
        `the runtime was not idle after ${SETTLE_LIMIT.ms / 1000} s; its queues: ${await queueCounts(vnfm)}; what it last printed:\n${tail(vnfm.output(), 60)}`,
      );
    // fetch gives up on an answer after 5 minutes (undici's headers timeout); a bench of hundreds of
    // operations on a busy machine takes longer to settle, so ask again (idle is only a wait).
    const response = await localControl(vnfm, 'POST', '/_local/idle', AbortSignal.timeout(Math.min(left, 2 ** 31 - 1))).catch((error: unknown) => {
      const failure = error as { name?: string; cause?: { code?: string } };
      if (failure.cause?.code === 'UND_ERR_HEADERS_TIMEOUT' || failure.name === 'TimeoutError') return undefined;
      throw error;
    });
    if (!response) continue;
    if (response.status !== 204) throw new Error(`idle control answered ${response.status}`);
    return;
  }
}

/** Each queue's visible, in-flight and delayed messages, for a settle() that gave up. */
async function queueCounts(vnfm: LocalVnfm): Promise<string> {
  const { sqs, queues, region } = vnfm.endpoints;
  const client = new SQSClient({ endpoint: sqs, region, credentials: vnfm.awsCredentials });
  try {
    const counts = await Promise.all(
      Object.entries(queues).map(async ([name, { url }]) => {
        const { Attributes: a = {} } = await client.send(
          new GetQueueAttributesCommand({
            QueueUrl: url,
            AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
          }),
        );
        return `${name} ${a.ApproximateNumberOfMessages}/${a.ApproximateNumberOfMessagesNotVisible}/${a.ApproximateNumberOfMessagesDelayed}`;
      }),
    );
    return `${counts.join(', ')} (visible/in flight/delayed)`;
  } catch (error) {
    return `unreadable (${String(error)})`;
  } finally {
    client.destroy();
  }
}

/** The last `lines` lines of a text. */
function tail(text: string, lines: number): string {
  return text.split('\n').slice(-lines).join('\n');
}

export async function holdExecutions(vnfm: LocalVnfm, hold: boolean): Promise<void> {
  const response = await localControl(vnfm, 'POST', `/_local/stepfunctions/${hold ? 'hold' : 'release'}`);
  if (response.status !== 204) throw new Error(`hold control answered ${response.status}`);
}

/** The deployment's token signing key, derived from its key secret (the template's PagingKeySecret) as the token function derives it. */
export async function deploymentSigningKey(vnfm: LocalVnfm): Promise<SigningKey> {
  const endpoints = JSON.parse(readFileSync(join(vnfm.dataDir, 'endpoints.json'), 'utf8')) as { secretsmanager: string };
  const secrets = new SecretsManagerClient({ endpoint: endpoints.secretsmanager, region: vnfm.endpoints.region, credentials: vnfm.awsCredentials });
  const { SecretString } = await secrets.send(new GetSecretValueCommand({ SecretId: 'vnfm-local-PagingKeySecret' }));
  return signingKeyFrom(SecretString as string);
}

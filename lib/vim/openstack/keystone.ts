// Keystone v3 password authentication scoped to the VIM's project, and the one way every other
// OpenStack client talks to its service: endpoint from the token's catalog, X-Auth-Token, and one
// re-authentication when a service answers 401 (a token can be revoked or expire early). Tokens are
// cached per (auth URL, user, project, password digest) in this process so a warm Lambda does not
// log in for every call; they never leave memory and are never logged.
import { createHash } from 'node:crypto';
import { rootCertificates } from 'node:tls';
import * as z from 'zod';
import { log } from '#lib/log.ts';
import type { VimConnection } from '#lib/vim/driver.ts';
import { VimError, serviceMessage, type OpenStackService } from './errors.ts';
import { timedVimCall } from '#lib/metrics.ts';

/** What the driver needs of a VimConnection, checked once. */
export interface OpenStackAccess {
  /** Keystone v3 base URL, ending in /v3. */
  authUrl: string;
  /** As configured, for messages. */
  endpoint: string;
  username: string;
  password: string;
  project?: string;
  projectId?: string;
  projectDomain: string;
  userDomain: string;
  region?: string;
  /** Catalog interface: public (default), internal or admin. */
  interface: string;
  caCert?: string;
}

const nonEmpty = z.string().trim().min(1);
const accessSchema = z
  .object({
    username: nonEmpty,
    password: z.string().min(1),
    project: nonEmpty.optional(),
    projectId: nonEmpty.optional(),
    projectDomain: nonEmpty.optional(),
    userDomain: nonEmpty.optional(),
    region: nonEmpty.optional(),
  })
  .passthrough();
const interfaceSchema = z
  .object({
    endpoint: z.string().url(),
    interface: z.enum(['public', 'internal', 'admin']).optional(),
    ssl_ca_cert: z.string().optional(),
    cacert: z.string().optional(),
  })
  .passthrough();

export function openStackAccess(vim: VimConnection): OpenStackAccess {
  const iface = interfaceSchema.safeParse(vim.interfaceInfo ?? {});
  if (!iface.success)
    throw new VimError(
      'keystone',
      `VIM ${vim.vimId}: interfaceInfo needs endpoint, the Keystone auth URL (${iface.error.issues.map((issue) => `${issue.path.join('.') || 'interfaceInfo'}: ${issue.message}`).join('; ')})`,
    );
  // Zod messages name the field but never echo the value, so the password cannot leak through them.
  const access = accessSchema.safeParse(vim.accessInfo ?? {});
  if (!access.success)
    throw new VimError(
      'keystone',
      `VIM ${vim.vimId}: accessInfo is incomplete (${access.error.issues.map((issue) => `${issue.path.join('.') || 'accessInfo'}: ${issue.message}`).join('; ')})`,
    );
  if (!access.data.project && !access.data.projectId) throw new VimError('keystone', `VIM ${vim.vimId}: accessInfo needs project (a name) or projectId`);
  const endpoint = iface.data.endpoint;
  const caCert = iface.data.ssl_ca_cert ?? iface.data.cacert;
  return {
    authUrl: keystoneV3(endpoint),
    endpoint,
    username: access.data.username,
    password: access.data.password,
    ...(access.data.project ? { project: access.data.project } : {}),
    ...(access.data.projectId ? { projectId: access.data.projectId } : {}),
    projectDomain: access.data.projectDomain ?? 'Default',
    userDomain: access.data.userDomain ?? 'Default',
    ...(access.data.region ? { region: access.data.region } : {}),
    interface: iface.data.interface ?? 'public',
    ...(caCert?.trim() ? { caCert } : {}),
  };
}

/** Tacker users write the auth URL with or without /v3 ("http://host/identity" or ".../identity/v3"). */
function keystoneV3(endpoint: string): string {
  const trimmed = endpoint.replace(/\/+$/, '');
  if (/\/v3$/.test(trimmed)) return trimmed;
  if (/\/v2(\.0)?$/.test(trimmed)) return trimmed.replace(/\/v2(\.0)?$/, '/v3');
  return `${trimmed}/v3`;
}

// ---------------------------------------------------------------------------------------------
// HTTP with an optional private CA

type FetchInit = Omit<RequestInit, 'dispatcher'> & { dispatcher?: unknown; duplex?: 'half' };

const dispatchers = new Map<string, Promise<unknown>>();

/**
 * Node's fetch has no `ca` option; its bundled undici does accept a `dispatcher`, but Node 22 does
 * not export undici's Agent. The global dispatcher undici registers under a well-known symbol is such
 * an Agent, so its constructor builds one that trusts the VIM's CA as well as the public roots. If a
 * Node release stops exposing it, the error says to use NODE_EXTRA_CA_CERTS instead.
 */
async function dispatcherFor(caCert: string): Promise<unknown> {
  let dispatcher = dispatchers.get(caCert);
  if (!dispatcher) {
    dispatcher = (async () => {
      const key = Symbol.for('undici.globalDispatcher.1');
      const holder = globalThis as unknown as Record<symbol, unknown>;
      if (!holder[key]) await fetch('data:,').catch(() => undefined); // undici registers its dispatcher lazily
      const global = holder[key] as { constructor?: new (options: unknown) => unknown } | undefined;
      if (typeof global?.constructor !== 'function' || global.constructor.name !== 'Agent') {
        throw new VimError(
          'keystone',
          'interfaceInfo.ssl_ca_cert is set, but this Node.js fetch cannot take a custom CA; give the CA to the VNFM with NODE_EXTRA_CA_CERTS instead',
        );
      }
      return new global.constructor({ connect: { ca: [...rootCertificates, caCert] } });
    })();
    dispatchers.set(caCert, dispatcher);
    dispatcher.catch(() => dispatchers.delete(caCert));
  }
  return dispatcher;
}

async function send(service: OpenStackService, url: string, init: FetchInit, access: OpenStackAccess, shownAs: string): Promise<Response> {
  const options: FetchInit = { ...init };
  if (access.caCert) options.dispatcher = await dispatcherFor(access.caCert);
  try {
    return await timedVimCall('openstack', service, () => fetch(url, options as RequestInit));
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    const code = cause && typeof cause === 'object' && 'code' in cause ? String((cause as { code: unknown }).code) : undefined;
    const reason = code ?? (cause instanceof Error ? cause.message : String(cause));
    throw new VimError(service, `cannot reach ${shownAs} (${reason})`, { cause: error });
  }
}

async function failure(service: OpenStackService, what: string, response: Response): Promise<VimError> {
  const text = await response.text().catch(() => '');
  const message = serviceMessage(text) || response.statusText;
  return new VimError(service, `${what}: ${service} answered ${response.status}${message ? `: ${message}` : ''}`, {
    vimStatus: response.status,
    vimMessage: message,
  });
}

// ---------------------------------------------------------------------------------------------
// Tokens

const catalogSchema = z.array(
  z
    .object({
      type: z.string(),
      name: z.string().optional(),
      endpoints: z.array(
        z
          .object({
            interface: z.string(),
            url: z.string(),
            region: z.string().nullish(),
            region_id: z.string().nullish(),
          })
          .passthrough(),
      ),
    })
    .passthrough(),
);
type Catalog = z.infer<typeof catalogSchema>;

const tokenSchema = z.object({
  token: z
    .object({
      expires_at: z.string(),
      project: z.object({ id: z.string() }).passthrough().optional(),
      catalog: catalogSchema.optional(),
    })
    .passthrough(),
});

export interface KeystoneToken {
  /** X-Subject-Token; in memory only. */
  readonly value: string;
  /** Epoch milliseconds after which the cache stops handing the token out. */
  readonly refreshAt: number;
  readonly projectId?: string;
  readonly catalog: Catalog;
}

/** Refresh this long before expires_at (less for very short-lived tokens). */
const REFRESH_MARGIN_MS = 60_000;
const REQUEST_TIMEOUT_MS = 60_000;

/** A login in progress, or its token once it succeeded. */
interface CacheEntry {
  promise: Promise<KeystoneToken>;
  token?: KeystoneToken;
}
const tokens = new Map<string, CacheEntry>();

function cacheKey(access: OpenStackAccess): string {
  // The password digest keeps a token obtained with other (e.g. since corrected) credentials from
  // vouching for these ones.
  const digest = createHash('sha256').update(access.password).digest('hex');
  return JSON.stringify([access.authUrl, access.userDomain, access.username, access.projectDomain, access.project ?? null, access.projectId ?? null, digest]);
}

/** Forgets every cached token (tests, and a VIM whose credentials were rotated). */
export function clearTokenCache(): void {
  tokens.clear();
}

/** Authenticates with Keystone v3 (password method, project scope). Never cached; see `token`. */
export async function authenticate(access: OpenStackAccess): Promise<KeystoneToken> {
  const body = {
    auth: {
      identity: {
        methods: ['password'],
        password: { user: { name: access.username, domain: { name: access.userDomain }, password: access.password } },
      },
      scope: { project: access.projectId ? { id: access.projectId } : { name: access.project, domain: { name: access.projectDomain } } },
    },
  };
  const url = `${access.authUrl}/auth/tokens`;
  const response = await send(
    'keystone',
    url,
    {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    },
    access,
    access.endpoint,
  );
  if (response.status !== 201 && response.status !== 200) {
    throw await failure('keystone', `authentication of ${access.username} at ${access.endpoint} failed`, response);
  }
  const value = response.headers.get('x-subject-token');
  const parsed = tokenSchema.safeParse(await response.json().catch(() => undefined));
  if (!value || !parsed.success) throw new VimError('keystone', `authentication at ${access.endpoint} answered ${response.status} without a token`);
  const receivedAt = Date.now();
  const expiresAt = Date.parse(parsed.data.token.expires_at);
  const lifetime = Number.isFinite(expiresAt) ? Math.max(0, expiresAt - receivedAt) : 0;
  let catalog = parsed.data.token.catalog;
  if (!catalog) {
    // Keystone leaves the catalog out when asked to (nocatalog); /auth/catalog lists it.
    const listed = await send(
      'keystone',
      `${access.authUrl}/auth/catalog`,
      {
        headers: { 'X-Auth-Token': value, Accept: 'application/json' },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      },
      access,
      access.endpoint,
    );
    if (!listed.ok) throw await failure('keystone', 'listing the service catalog', listed);
    const body = z.object({ catalog: catalogSchema }).safeParse(await listed.json().catch(() => undefined));
    if (!body.success) throw new VimError('keystone', `the service catalog at ${access.endpoint} is not a Keystone v3 catalog`);
    catalog = body.data.catalog;
  }
  log.debug('keystone token issued', { vimAuthUrl: access.authUrl, user: access.username, lifetimeMs: lifetime });
  return {
    value,
    refreshAt: receivedAt + lifetime - Math.min(REFRESH_MARGIN_MS, lifetime / 2),
    ...(parsed.data.token.project?.id ? { projectId: parsed.data.token.project.id } : {}),
    catalog,
  };
}

/** A cached token still good for a while, else a new one (one login at a time per key). */
export async function token(access: OpenStackAccess): Promise<KeystoneToken> {
  const key = cacheKey(access);
  const cached = tokens.get(key);
  if (cached && !cached.token) return cached.promise;
  if (cached?.token && Date.now() < cached.token.refreshAt) return cached.token;
  const entry: CacheEntry = { promise: authenticate(access) };
  tokens.set(key, entry);
  entry.promise.then(
    (issued) => {
      entry.token = issued;
    },
    () => {
      if (tokens.get(key) === entry) tokens.delete(key);
    },
  );
  return entry.promise;
}

/** Drops the cached token if it is still the one that was refused. */
function invalidate(access: OpenStackAccess, refused: KeystoneToken): void {
  const key = cacheKey(access);
  if (tokens.get(key)?.token === refused) tokens.delete(key);
}

/** The endpoint of a service type for the configured interface and region. */
export function endpointOf(access: OpenStackAccess, credentials: KeystoneToken, type: string): string {
  const entries = credentials.catalog.filter((entry) => entry.type === type);
  const endpoints = entries
    .flatMap((entry) => entry.endpoints)
    .filter((endpoint) => endpoint.interface === access.interface)
    .filter((endpoint) => !access.region || endpoint.region_id === access.region || endpoint.region === access.region);
  const chosen = endpoints[0];
  if (!chosen) {
    throw new VimError(
      'keystone',
      `the service catalog at ${access.endpoint} has no ${type} endpoint for interface ${access.interface}${access.region ? ` in region ${access.region}` : ''}`,
    );
  }
  // Old catalogs still carry the template form of the project id.
  const projectId = credentials.projectId ?? '';
  return chosen.url.replace(/%\(tenant_id\)s|%\(project_id\)s|\$\(tenant_id\)s|\$\(project_id\)s/g, projectId).replace(/\/+$/, '');
}

// ---------------------------------------------------------------------------------------------
// Requests to services

export interface ServiceRequest {
  method?: string;
  /** Sent as application/json. */
  json?: unknown;
  /** A body that can be made again: a retry after re-authentication cannot reuse a consumed stream. */
  body?: () => Promise<{ body: NonNullable<RequestInit['body']>; contentType: string }>;
  headers?: Record<string, string>;
  /** Statuses that are answers rather than errors (a 404 the caller handles, ...). Default: 2xx. */
  accept?: number[];
  /** Says what the request was for, in errors. */
  what: string;
  /** Requests that stream big bodies run without the usual timeout. */
  untimed?: boolean;
}

/** One VIM's services, authenticated. Cheap to make: tokens live in the module cache. */
export class OpenStackSession {
  readonly access: OpenStackAccess;

  constructor(vim: VimConnection | OpenStackAccess) {
    this.access = 'authUrl' in vim ? vim : openStackAccess(vim);
  }

  async endpoint(type: string): Promise<string> {
    return endpointOf(this.access, await token(this.access), type);
  }

  /** `path` is appended to the service's catalog URL after `prefix` (e.g. "/v2" for Glance). */
  async request(
    service: OpenStackService,
    type: string,
    path: string,
    request: ServiceRequest,
    prefix: (base: string) => string = (base) => base,
  ): Promise<Response> {
    for (let attempt = 0; ; attempt += 1) {
      const credentials = await token(this.access);
      const url = `${prefix(endpointOf(this.access, credentials, type))}${path}`;
      const headers: Record<string, string> = { Accept: 'application/json', ...request.headers, 'X-Auth-Token': credentials.value };
      const init: FetchInit = { method: request.method ?? 'GET', headers, redirect: 'follow' };
      if (request.json !== undefined) {
        headers['Content-Type'] = 'application/json';
        init.body = JSON.stringify(request.json);
      } else if (request.body) {
        const made = await request.body();
        headers['Content-Type'] = made.contentType;
        init.body = made.body;
        init.duplex = 'half';
      }
      if (!request.untimed) init.signal = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
      const response = await send(service, url, init, this.access, new URL(url).origin);
      if (response.status === 401 && attempt === 0) {
        await response.body?.cancel().catch(() => undefined);
        log.info('openstack token refused; authenticating again', { service, what: request.what });
        invalidate(this.access, credentials);
        continue;
      }
      const accepted = request.accept ? request.accept.includes(response.status) : response.ok;
      if (!accepted) throw await failure(service, request.what, response);
      return response;
    }
  }

  /** JSON of an accepted response; a VimError if the service sent something else. */
  async json<T>(service: OpenStackService, response: Response, schema: z.ZodType<T>, what: string): Promise<T> {
    const parsed = schema.safeParse(await response.json().catch(() => undefined));
    if (!parsed.success)
      throw new VimError(
        service,
        `${what}: ${service} answered ${response.status} with a body this driver does not understand (${parsed.error.issues[0]?.path.join('.') ?? ''}: ${parsed.error.issues[0]?.message ?? ''})`,
      );
    return parsed.data;
  }
}

/** Authenticates afresh and checks the catalog offers what the driver uses. */
export async function verifyAccess(access: OpenStackAccess, serviceTypes: readonly string[]): Promise<void> {
  const credentials = await authenticate(access);
  const missing = serviceTypes.filter((type) => {
    try {
      endpointOf(access, credentials, type);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length) {
    throw new VimError(
      'keystone',
      `the service catalog at ${access.endpoint} has no ${missing.join(' or ')} endpoint for interface ${access.interface}${access.region ? ` in region ${access.region}` : ''}`,
    );
  }
  tokens.set(cacheKey(access), { promise: Promise.resolve(credentials), token: credentials });
}

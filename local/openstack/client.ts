// A minimal client for the simulator (or a real cloud): password login, catalog lookup and JSON
// requests by service type. For tests, benchmarks and scripts that drive the simulator over HTTP
// exactly as an OpenStack client would; the product's driver has its own client.
import type { SimulatorCredentials } from './simulator.ts';

export interface Reply<T = unknown> {
  status: number;
  headers: Headers;
  /** Parsed JSON when the body is JSON, else the text ('' when empty). */
  body: T;
  text: string;
}

export interface Session {
  token: string;
  projectId: string;
  /** The token response body. */
  tokenBody: Record<string, unknown>;
  /** Public URL of a service type from the catalog. */
  endpoint(type: string): string;
  request<T = unknown>(
    type: string,
    path: string,
    init?: { method?: string; body?: unknown; headers?: Record<string, string>; raw?: Uint8Array | string; redirect?: 'follow' | 'manual' | 'error' },
  ): Promise<Reply<T>>;
}

interface CatalogEntry {
  type: string;
  endpoints: Array<{ interface: string; region: string; url: string }>;
}

export async function send<T = unknown>(
  url: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string>; raw?: Uint8Array | string; redirect?: 'follow' | 'manual' | 'error' } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
  let body: string | Uint8Array | undefined;
  if (init.raw !== undefined) body = init.raw;
  else if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(url, { method: init.method ?? 'GET', headers, ...(body !== undefined ? { body } : {}), redirect: init.redirect ?? 'follow' });
  const text = await response.text();
  let parsed: unknown = text;
  if ((response.headers.get('content-type') ?? '').includes('json') && text !== '') parsed = JSON.parse(text);
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

export function passwordAuth(credentials: SimulatorCredentials): Record<string, unknown> {
  return {
    auth: {
      identity: {
        methods: ['password'],
        password: { user: { name: credentials.username, domain: { name: credentials.userDomain }, password: credentials.password } },
      },
      scope: { project: { name: credentials.project, domain: { name: credentials.projectDomain } } },
    },
  };
}

export async function login(authUrl: string, credentials: SimulatorCredentials): Promise<Session> {
  const reply = await send<{ token: { project: { id: string }; catalog: CatalogEntry[] } }>(`${authUrl}/auth/tokens`, {
    method: 'POST',
    body: passwordAuth(credentials),
  });
  if (reply.status !== 201) throw new Error(`login failed: ${reply.status} ${reply.text}`);
  const token = reply.headers.get('x-subject-token') ?? '';
  const catalog = reply.body.token.catalog;
  const endpoint = (type: string) => {
    const entry = catalog.find((c) => c.type === type)?.endpoints.find((e) => e.interface === 'public' && e.region === credentials.region);
    if (!entry) throw new Error(`no ${type} endpoint in the catalog`);
    return entry.url;
  };
  return {
    token,
    projectId: reply.body.token.project.id,
    tokenBody: reply.body as unknown as Record<string, unknown>,
    endpoint,
    request: (type, path, init = {}) => send(`${endpoint(type)}${path}`, { ...init, headers: { 'x-auth-token': token, ...init.headers } }),
  };
}

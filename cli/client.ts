// The CLI's HTTP client for the VNFM API: OAuth 2.0 client credentials (a token fetched once per
// run, fetched again on a 401), the SOL013 Version header each API family wants, ProblemDetails
// turned into errors an operator can read, and lists followed through their `Link: rel="next"`.

import { apiVersionFor, problemLine } from './http-common.ts';

export { apiVersionFor, problemLine };

/** What a client authenticates with: the token endpoint and the client's id and secret. */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  tokenUrl: string;
}

/** An error the CLI reports in one line and ends with `exitCode`. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** A non-2xx answer; `problem` is the ProblemDetails body when the API sent one. */
export class ApiError extends CliError {
  readonly status: number;
  readonly problem: Record<string, unknown> | undefined;
  constructor(status: number, statusText: string, problem: Record<string, unknown> | undefined, text: string) {
    super(problemLine(status, statusText, problem, text));
    this.name = 'ApiError';
    this.status = status;
    this.problem = problem;
  }
}

export interface Reply<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Content type of `body` (default application/json). */
  contentType?: string;
  query?: Record<string, string | undefined>;
}

export interface VnfmClientOptions {
  endpoint: string;
  credentials?: ClientCredentials;
  /** The fetch to use (tests give their own). */
  fetch?: typeof fetch;
}

export class VnfmClient {
  readonly endpoint: string;
  private readonly credentials: ClientCredentials | undefined;
  private readonly fetcher: typeof fetch;
  private token: Promise<string> | undefined;

  constructor(options: VnfmClientOptions) {
    this.endpoint = options.endpoint.replace(/\/+$/, '');
    this.credentials = options.credentials;
    this.fetcher = options.fetch ?? fetch;
  }

  /** The absolute URL of an API path. */
  url(path: string, query?: Record<string, string | undefined>): string {
    const url = new URL(path.startsWith('http') ? path : `${this.endpoint}${path}`);
    for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) url.searchParams.set(name, value);
    return url.toString();
  }

  /** An access token by the client credentials grant, fetched once per run (or again after a 401). */
  accessToken(): Promise<string> | undefined {
    const credentials = this.credentials;
    if (!credentials) return undefined;
    if (!this.token) {
      this.token = this.fetchToken(credentials);
      this.token.catch(() => {
        this.token = undefined;
      });
    }
    return this.token;
  }

  private async fetchToken(credentials: ClientCredentials): Promise<string> {
    const response = await this.send(credentials.tokenUrl, {
      method: 'POST',
      headers: {
        Authorization: `Basic ${Buffer.from(`${encodeURIComponent(credentials.clientId)}:${encodeURIComponent(credentials.clientSecret)}`).toString('base64')}`,
        'Content-Type': 'application/x-www-form-urlencoded',
        Accept: 'application/json',
      },
      body: 'grant_type=client_credentials',
    });
    const text = await response.text();
    const body = parseJson(text) as Record<string, unknown> | undefined;
    if (response.status !== 200 || typeof body?.access_token !== 'string') {
      throw new ApiError(response.status, `token endpoint ${credentials.tokenUrl} refused client ${credentials.clientId}`, body, text);
    }
    return body.access_token;
  }

  /** Headers every API request carries: the token, Accept and the path's Version. */
  async headers(path: string, extra: Record<string, string> = {}): Promise<Record<string, string>> {
    const headers: Record<string, string> = { Accept: 'application/json', ...extra };
    const token = await this.accessToken();
    if (token) headers.Authorization = `Bearer ${token}`;
    const version = apiVersionFor(new URL(this.url(path)).pathname);
    if (version) headers.Version = version;
    return headers;
  }

  /** One request; a non-2xx answer is thrown as ApiError. */
  async request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<Reply<T>> {
    const url = this.url(path, options.query);
    const attempt = async (): Promise<Response> => {
      const extra: Record<string, string> = {};
      let body: string | undefined;
      if (options.body !== undefined) {
        extra['Content-Type'] = options.contentType ?? 'application/json';
        body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      }
      return this.send(url, { method, headers: await this.headers(url, extra), body });
    };
    let response = await attempt();
    if (response.status === 401 && this.credentials) {
      // The token may have expired (an hour) or been revoked by a rotation: ask for a new one once.
      await response.arrayBuffer();
      this.token = undefined;
      response = await attempt();
    }
    const text = await response.text();
    const body = parseJson(text);
    if (response.status >= 400) throw new ApiError(response.status, response.statusText, body as Record<string, unknown> | undefined, text);
    return { status: response.status, headers: response.headers, body: body as T, text };
  }

  get<T = unknown>(path: string, query?: Record<string, string | undefined>): Promise<Reply<T>> {
    return this.request<T>('GET', path, { query });
  }

  /** Every item of a list, following SOL013 paging (`Link: <...>; rel="next"`). */
  async list<T = unknown>(path: string, query?: Record<string, string | undefined>): Promise<T[]> {
    const items: T[] = [];
    let next: string | undefined = this.url(path, query);
    while (next) {
      const reply: Reply<T[]> = await this.request<T[]>('GET', next);
      if (!Array.isArray(reply.body)) throw new CliError(`${path} did not answer a list`);
      items.push(...reply.body);
      next = nextLink(reply.headers.get('link'));
    }
    return items;
  }

  /** fetch, with a network failure turned into an error naming the endpoint. */
  async send(url: string, init: RequestInit): Promise<Response> {
    try {
      return await this.fetcher(url, init);
    } catch (error) {
      throw unreachable(url, error);
    }
  }
}

/** The error for a request that never got an answer: which endpoint, and why. */
export function unreachable(url: string, error: unknown): CliError {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const reason = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
  return new CliError(`Could not reach the VNFM at ${new URL(url).origin} (${reason}); check --endpoint or VNFM_ENDPOINT`);
}

/** The target of `rel="next"` in a Link header (RFC 8288), if any. */
export function nextLink(header: string | null): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]*)>(.*)$/.exec(part);
    if (match && /;\s*rel="?next"?/i.test(match[2] ?? '')) return match[1];
  }
  return undefined;
}

export function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The id at the end of a `Location` header. */
export function locationId(reply: Reply): string {
  const location = reply.headers.get('location');
  if (!location) throw new CliError(`The VNFM answered ${reply.status} without a Location`);
  return new URL(location).pathname.split('/').pop() ?? '';
}

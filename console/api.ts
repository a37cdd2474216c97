// The console's one way to the API: every request carries the signed-in client's bearer token and
// the SOL013 Version header its API family wants, lists are followed through `Link: rel="next"`,
// and a non-2xx answer becomes an ApiError whose message is the ProblemDetails an operator reads.
// Requests go without the browser's credentials (`credentials: 'omit'`): the console uses no
// cookies, and a 401's `WWW-Authenticate: Basic` challenge then shows no browser login prompt.

import { apiVersionFor, problemLine } from '../cli/http-common.ts';

const TOKEN_KEY = 'vnfm-console-token';

/** A non-2xx answer: `Error <status>: <title>: <detail>`. */
export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** Keeps the token for this tab (sessionStorage: gone when the tab closes); null signs out. */
export function storeToken(token: string | null): void {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
  window.dispatchEvent(new Event('vnfm-token'));
}

function headersFor(path: string, extra: Record<string, string> = {}): Record<string, string> {
  const headers: Record<string, string> = { Accept: 'application/json', ...extra };
  const token = storedToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  const version = apiVersionFor(path);
  if (version) headers.Version = version;
  return headers;
}

/** The line an operator reads for a failed answer: ProblemDetails, OAuth's error, or the status. */
export function problemMessage(status: number, statusText: string, text: string): string {
  let body: Record<string, unknown> | undefined;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = undefined;
  }
  return problemLine(status, statusText, body, text);
}

async function failed(response: Response): Promise<ApiError> {
  const error = new ApiError(response.status, problemMessage(response.status, response.statusText, await response.text()));
  // An expired or revoked token: back to the sign-in page.
  if (response.status === 401) storeToken(null);
  return error;
}

export interface RequestOptions {
  body?: unknown;
  contentType?: string;
  accept?: string;
}

/** One request; the parsed JSON body (undefined for an empty one). */
export async function api<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const response = await send(method, path, options);
  const text = await response.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** One request; the Response as it came (for non-JSON bodies). */
export async function send(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
  const extra: Record<string, string> = {};
  if (options.accept) extra.Accept = options.accept;
  let body: string | undefined;
  if (options.body !== undefined) {
    extra['Content-Type'] = options.contentType ?? 'application/json';
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  }
  const response = await fetch(path, { method, headers: headersFor(path, extra), body, credentials: 'omit' });
  if (!response.ok) throw await failed(response);
  return response;
}

/** Every item of a list, following `Link: <...>; rel="next"` (at most `pages` pages). */
export async function list<T>(path: string, pages = 20): Promise<T[]> {
  const items: T[] = [];
  let next: string | undefined = path;
  for (let page = 0; next && page < pages; page += 1) {
    const response = await send('GET', next);
    items.push(...((await response.json()) as T[]));
    const link = /<([^>]+)>\s*;\s*rel="?next"?/.exec(response.headers.get('Link') ?? '')?.[1];
    next = link ? new URL(link, location.href).pathname + new URL(link, location.href).search : undefined;
  }
  return items;
}

/** OAuth 2.0 client credentials grant (RFC 6749 4.4) at the deployment's token endpoint. */
export async function signIn(clientId: string, clientSecret: string): Promise<void> {
  const response = await fetch('/oauth2/token', {
    method: 'POST',
    headers: {
      Authorization: `Basic ${btoa(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`)}`,
      'Content-Type': 'application/x-www-form-urlencoded',
      Accept: 'application/json',
    },
    body: 'grant_type=client_credentials',
    credentials: 'omit',
  });
  const text = await response.text();
  if (!response.ok) throw new ApiError(response.status, problemMessage(response.status, response.statusText, text));
  const token = (JSON.parse(text) as { access_token?: unknown }).access_token;
  if (typeof token !== 'string') throw new ApiError(response.status, 'The token endpoint answered without an access_token');
  storeToken(token);
}

/** PUT of a file with upload progress (fetch reports none), as `api` would send it. */
export function upload(path: string, file: Blob, onProgress: (fraction: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', path);
    for (const [name, value] of Object.entries(headersFor(path, { 'Content-Type': 'application/zip' }))) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve();
      else {
        if (xhr.status === 401) storeToken(null);
        reject(new ApiError(xhr.status, problemMessage(xhr.status, xhr.statusText, xhr.responseText)));
      }
    };
    xhr.onerror = () => reject(new ApiError(0, 'The upload was interrupted (network error)'));
    xhr.send(file);
  });
}

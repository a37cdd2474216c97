// Access to a Kubernetes VIM: the cluster's endpoint, bearer token and CA taken from the VIM's
// interfaceInfo and accessInfo (never from a file, never logged), a small object client that reaches
// any kind the cluster serves through discovery (the REST calls kubectl makes: discovery, create,
// replace, merge patch, read, list, delete), and the one error type the driver throws for what the
// cluster said. Error messages carry the API server's own message, never request headers or the token.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { ProblemError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { VimConnection } from '#lib/vim/driver.ts';
import { timedVimCall } from '#lib/metrics.ts';

export interface KubernetesErrorOptions {
  /** The API server's HTTP status, when it answered at all. */
  vimStatus?: number;
  cause?: unknown;
}

/** What went wrong on the cluster; a 502 like every VIM error, whatever status the API server used. */
export class KubernetesError extends ProblemError {
  readonly vimStatus?: number;

  constructor(detail: string, options: KubernetesErrorOptions = {}) {
    super(502, 'VIM error', detail, {
      extra: { vimService: 'kubernetes', ...(options.vimStatus !== undefined ? { vimStatus: options.vimStatus } : {}) },
      cause: options.cause,
    });
    if (options.vimStatus !== undefined) this.vimStatus = options.vimStatus;
  }
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() ? value.trim() : undefined);

/** The cluster a VIM names, as a kubeconfig would hold it. */
export interface KubeCluster {
  server: string;
  /** TLS checks off: only for a plain http endpoint, where there is no TLS to verify. */
  skipTLSVerify: boolean;
  /** The CA bundle (PEM), base64-encoded as in a kubeconfig. */
  caData?: string;
}

/** How to reach a VIM's API server: its cluster and the bearer token (kept out of logs and errors). */
export class KubeConfig {
  constructor(
    readonly cluster: KubeCluster,
    readonly token: string,
  ) {}

  getCurrentCluster(): KubeCluster {
    return this.cluster;
  }
}

/** Builds the access to a VIM's cluster: bearer token, optional CA, TLS checks off only for plain http. */
export function kubeConfigOf(vim: VimConnection): KubeConfig {
  const endpoint = text(vim.interfaceInfo.endpoint);
  if (!endpoint || !/^https?:\/\/[^/]/i.test(endpoint)) {
    throw new UnprocessableEntityError(`VIM ${vim.vimId}: interfaceInfo.endpoint must be the http(s) URL of the Kubernetes API server`);
  }
  const token = text(vim.accessInfo.bearer_token);
  if (!token) throw new UnprocessableEntityError(`VIM ${vim.vimId}: accessInfo.bearer_token is required for a Kubernetes VIM`);
  const ca = text(vim.interfaceInfo.ssl_ca_cert) && String(vim.interfaceInfo.ssl_ca_cert);
  const server = endpoint.replace(/\/+$/, '');
  return new KubeConfig(
    {
      server,
      skipTLSVerify: server.toLowerCase().startsWith('http:'),
      // PEM as Tacker takes it; a base64-encoded PEM (kubeconfig style) is taken as it is.
      ...(ca ? { caData: ca.includes('-----BEGIN') ? Buffer.from(ca, 'utf8').toString('base64') : ca } : {}),
    },
    token,
  );
}

/** The API server answered outside 2xx: its status and its body (usually a Status object). */
class ApiException extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
    /** Set when the answer was to discovery: the cluster does not serve that apiVersion. */
    readonly discovery = false,
  ) {
    super(`HTTP-Code: ${code}`);
  }
}

interface Answer {
  status: number;
  body: string;
}

/** One HTTPS (or, for a plain http endpoint, HTTP) request to the API server. */
function send(kc: KubeConfig, method: string, path: string, body?: { contentType: string; json: unknown }): Promise<Answer> {
  const { server, skipTLSVerify, caData } = kc.cluster;
  const url = new URL(`${server}${path}`);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body.json), 'utf8');
  const headers: Record<string, string> = { Accept: 'application/json, */*;q=0.8', Authorization: `Bearer ${kc.token}` };
  if (payload && body) Object.assign(headers, { 'Content-Type': body.contentType, 'Content-Length': String(payload.length) });
  const plainHttp = url.protocol === 'http:';
  return timedVimCall(
    'kubernetes',
    method,
    () =>
      new Promise<Answer>((resolve, reject) => {
        const answered = (response: IncomingMessage) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', reject);
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        };
        const req = plainHttp
          ? httpRequest(url, { method, headers }, answered)
          : httpsRequest(
              url,
              { method, headers, rejectUnauthorized: !skipTLSVerify, ...(caData ? { ca: Buffer.from(caData, 'base64').toString('utf8') } : {}) },
              answered,
            );
        req.on('error', reject);
        req.end(payload);
      }),
  );
}

interface ApiResource {
  name: string;
  namespaced: boolean;
  kind: string;
}

const apiVersionPath = (apiVersion: string): string => `/${apiVersion.includes('/') ? 'apis' : 'api'}/${apiVersion}`;

/** The metadata of any object, as the API server answers it. */
export interface KubeMetadata {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }[];
}

/** A plain JSON view of any object the API answered. */
export type KubeObject = { apiVersion?: string; kind?: string; metadata?: KubeMetadata } & Record<string, unknown>;

/** Where an object lives: enough to read or delete it. Cluster-scoped objects have no namespace. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

const refOf = (object: KubeObject): ObjectRef => ({
  apiVersion: String(object.apiVersion),
  kind: String(object.kind),
  ...(object.metadata?.namespace ? { namespace: object.metadata.namespace } : {}),
  name: String(object.metadata?.name),
});

export const describeRef = (ref: ObjectRef): string => `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;

/** The status code of an API error (or of the KubernetesError made from one), if the API server answered. */
export function statusOf(error: unknown): number | undefined {
  if (error instanceof KubernetesError) return error.vimStatus;
  return error instanceof ApiException ? error.code : undefined;
}

/** The API server's own message (a Status object's `message`), else the transport's. */
function messageOf(error: unknown): string {
  if (error instanceof ApiException) {
    const body: unknown = error.body;
    let parsed: unknown = body;
    if (typeof body === 'string') {
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = undefined;
      }
    }
    const message = parsed && typeof parsed === 'object' ? text((parsed as Record<string, unknown>).message) : undefined;
    const plain = typeof body === 'string' ? text(body.slice(0, 500)) : undefined;
    return `${error.code}${message ? ` ${message}` : plain ? ` ${plain}` : ''}`;
  }
  if (error instanceof Error) {
    const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
    const detail = text(cause?.code) ?? text(cause?.message);
    return detail && !error.message.includes(detail) ? `${error.message} (${detail})` : error.message;
  }
  return String(error);
}

/** A KubernetesError saying what the driver was doing and what the cluster answered. */
export function kubernetesError(doing: string, error: unknown): KubernetesError {
  if (error instanceof KubernetesError) return error;
  const status = statusOf(error);
  return new KubernetesError(`${doing}: ${messageOf(error)}`, { ...(status !== undefined ? { vimStatus: status } : {}), cause: error });
}

/** Whether the cluster does not serve this apiVersion/kind at all (discovery does not list it). */
function isUnservedKind(error: unknown): boolean {
  if (error instanceof ApiException) return error.discovery && error.code === 404;
  return error instanceof Error && /Unrecognized API version and kind/i.test(error.message);
}

/** RFC 3339 with milliseconds, as the object timestamps have always been recorded. */
const timestamp = (value: unknown): unknown => (typeof value === 'string' && !Number.isNaN(Date.parse(value)) ? new Date(value).toISOString() : value);

/** An answered object as plain JSON, its metadata timestamps in one format. */
function plain(value: unknown): KubeObject {
  const object = (value && typeof value === 'object' ? value : {}) as KubeObject;
  const metadata = object.metadata;
  if (metadata) {
    if (metadata.creationTimestamp !== undefined) metadata.creationTimestamp = timestamp(metadata.creationTimestamp) as string;
    if (metadata.deletionTimestamp !== undefined) metadata.deletionTimestamp = timestamp(metadata.deletionTimestamp) as string;
  }
  return object;
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
}

const MERGE_PATCH = 'application/merge-patch+json';

/**
 * The cluster as the driver uses it: any kind by apiVersion and kind (resolved through discovery,
 * so kinds the cluster adds later work without a code change), answers as plain JSON, 404 as
 * undefined or false where absence is an answer, every failure as a KubernetesError whose
 * vimStatus is the API server's status.
 */
export class KubeClient {
  readonly #kc: KubeConfig;
  /** Discovery answers per apiVersion, asked again when a kind is missing (the cluster may have added it). */
  readonly #resources = new Map<string, ApiResource[]>();

  constructor(readonly vim: VimConnection) {
    this.#kc = kubeConfigOf(vim);
  }

  get endpoint(): string {
    return String(this.vim.interfaceInfo.endpoint);
  }

  /** A request whose 2xx answer is JSON; anything else an ApiException. */
  async #call(method: string, path: string, body?: { contentType: string; json: unknown }, discovery = false): Promise<unknown> {
    const answer = await send(this.#kc, method, path, body);
    if (answer.status < 200 || answer.status > 299) throw new ApiException(answer.status, answer.body, discovery);
    return answer.body ? JSON.parse(answer.body) : {};
  }

  async #resource(apiVersion: string, kind: string): Promise<ApiResource | undefined> {
    const known = this.#resources.get(apiVersion)?.find((resource) => resource.kind === kind);
    if (known) return known;
    const list = (await this.#call('GET', apiVersionPath(apiVersion), undefined, true)) as { resources?: ApiResource[] };
    this.#resources.set(apiVersion, list.resources ?? []);
    return list.resources?.find((resource) => resource.kind === kind);
  }

  /**
   * The path of an object (or, for create and list, of its collection). A namespaced object without
   * a namespace is in "default", which is written into the spec too, as kubectl does.
   */
  async #path(spec: KubeObject, collection: 'create' | 'list' | false): Promise<string> {
    spec.apiVersion ||= 'v1';
    spec.metadata ??= {};
    const resource = await this.#resource(spec.apiVersion, String(spec.kind));
    if (!resource) throw new Error(`Unrecognized API version and kind: ${spec.apiVersion} ${spec.kind}`);
    if (resource.namespaced && !spec.metadata.namespace && collection !== 'list') spec.metadata.namespace = 'default';
    const namespace = resource.namespaced ? spec.metadata.namespace : undefined;
    const parts = [apiVersionPath(spec.apiVersion), ...(namespace ? ['namespaces', encodeURIComponent(namespace)] : []), resource.name];
    if (!collection) parts.push(encodeURIComponent(String(spec.metadata.name)));
    return parts.join('/').toLowerCase();
  }

  /** The spec that addresses the object `ref` names. */
  static #specOf(ref: ObjectRef): KubeObject {
    return { apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) } };
  }

  /** Reads the API versions (needs an authenticated user), saying plainly when the token or the endpoint is wrong. */
  async verify(): Promise<void> {
    try {
      await this.#call('GET', '/api/');
    } catch (error) {
      const status = statusOf(error);
      if (status === 401)
        throw new KubernetesError(`the Kubernetes API at ${this.endpoint} refused the bearer token (401 Unauthorized)`, { vimStatus: 401, cause: error });
      if (status === 403)
        throw new KubernetesError(`the Kubernetes API at ${this.endpoint} does not allow this token to read the API (403 Forbidden)`, {
          vimStatus: 403,
          cause: error,
        });
      if (status === undefined) throw kubernetesError(`cannot reach the Kubernetes API at ${this.endpoint}`, error);
      throw kubernetesError(`the Kubernetes API at ${this.endpoint} did not answer its discovery request`, error);
    }
  }

  async create(object: KubeObject): Promise<KubeObject> {
    const ref = refOf(object);
    try {
      const path = await this.#path(object, 'create');
      return plain(await this.#call('POST', path, { contentType: 'application/json', json: object }));
    } catch (error) {
      throw kubernetesError(`creating ${describeRef(ref)}`, error);
    }
  }

  async replace(object: KubeObject): Promise<KubeObject> {
    const ref = refOf(object);
    try {
      return plain(await this.#call('PUT', await this.#path(object, false), { contentType: 'application/json', json: object }));
    } catch (error) {
      throw kubernetesError(`replacing ${describeRef(ref)}`, error);
    }
  }

  /** A JSON merge patch (RFC 7386) of the object `ref` names. */
  async mergePatch(ref: ObjectRef, patch: Record<string, unknown>): Promise<KubeObject> {
    const body = {
      ...patch,
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      metadata: { ...(patch.metadata as object | undefined), name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
    };
    try {
      return plain(await this.#call('PATCH', await this.#path(body, false), { contentType: MERGE_PATCH, json: body }));
    } catch (error) {
      throw kubernetesError(`patching ${describeRef(ref)}`, error);
    }
  }

  async read(ref: ObjectRef): Promise<KubeObject | undefined> {
    try {
      return plain(await this.#call('GET', await this.#path(KubeClient.#specOf(ref), false)));
    } catch (error) {
      if (statusOf(error) === 404 && !isUnservedKind(error)) return undefined;
      throw kubernetesError(`reading ${describeRef(ref)}`, error);
    }
  }

  /** Objects of a kind in a namespace (all namespaces when none is given). */
  async list(apiVersion: string, kind: string, namespace: string | undefined, options: ListOptions = {}): Promise<KubeObject[]> {
    const items = await this.#list(apiVersion, kind, namespace, options);
    if (!items) throw new KubernetesError(`listing ${kind} objects: the cluster does not serve ${apiVersion} ${kind}`, { vimStatus: 404 });
    return items;
  }

  /** Like list, but undefined when the cluster does not serve the kind at all. */
  async listIfServed(apiVersion: string, kind: string, namespace: string | undefined, options: ListOptions = {}): Promise<KubeObject[] | undefined> {
    return this.#list(apiVersion, kind, namespace, options);
  }

  async #list(apiVersion: string, kind: string, namespace: string | undefined, options: ListOptions): Promise<KubeObject[] | undefined> {
    try {
      const query = new URLSearchParams();
      if (options.fieldSelector !== undefined) query.set('fieldSelector', options.fieldSelector);
      if (options.labelSelector !== undefined) query.set('labelSelector', options.labelSelector);
      const path = await this.#path({ apiVersion, kind, metadata: { namespace } }, 'list');
      const answer = (await this.#call('GET', query.size ? `${path}?${query}` : path)) as { items?: unknown[] };
      return (answer.items ?? []).map((item) => ({ ...plain(item), apiVersion, kind }));
    } catch (error) {
      if (isUnservedKind(error)) return undefined;
      throw kubernetesError(`listing ${kind} objects${namespace ? ` in namespace ${namespace}` : ''}`, error);
    }
  }

  /** Deletes the object; false when it was already gone. */
  async delete(ref: ObjectRef, options: { propagationPolicy?: 'Foreground' | 'Background'; gracePeriodSeconds?: number } = {}): Promise<boolean> {
    try {
      const query = new URLSearchParams();
      if (options.gracePeriodSeconds !== undefined) query.set('gracePeriodSeconds', String(options.gracePeriodSeconds));
      if (options.propagationPolicy !== undefined) query.set('propagationPolicy', options.propagationPolicy);
      const path = await this.#path(KubeClient.#specOf(ref), false);
      await this.#call('DELETE', query.size ? `${path}?${query}` : path);
      return true;
    } catch (error) {
      if (statusOf(error) === 404 && !isUnservedKind(error)) return false;
      throw kubernetesError(`deleting ${describeRef(ref)}`, error);
    }
  }
}

// Access to a Kubernetes VIM: a KubeConfig built in memory from the VIM's interfaceInfo and
// accessInfo (never from a file, never logged), the dynamic object client that reaches any kind the
// cluster serves through discovery, and the one error type the driver throws for what the cluster
// said. Error messages carry the API server's own message, never request headers or the token.
import { ApiException, CoreApi, KubeConfig, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import { ProblemError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { VimConnection } from '#lib/vim/driver.ts';

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

/** Builds the in-memory KubeConfig of a VIM: bearer token, optional CA, TLS checks off only for plain http. */
export function kubeConfigOf(vim: VimConnection): KubeConfig {
  const endpoint = text(vim.interfaceInfo.endpoint);
  if (!endpoint || !/^https?:\/\/[^/]/i.test(endpoint)) {
    throw new UnprocessableEntityError(`VIM ${vim.vimId}: interfaceInfo.endpoint must be the http(s) URL of the Kubernetes API server`);
  }
  const token = text(vim.accessInfo.bearer_token);
  if (!token) throw new UnprocessableEntityError(`VIM ${vim.vimId}: accessInfo.bearer_token is required for a Kubernetes VIM`);
  const ca = text(vim.interfaceInfo.ssl_ca_cert) && String(vim.interfaceInfo.ssl_ca_cert);
  const server = endpoint.replace(/\/+$/, '');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: 'vim',
        server,
        // client-node refuses http unless told so; there is no TLS to verify on it anyway.
        skipTLSVerify: server.toLowerCase().startsWith('http:'),
        // PEM as Tacker takes it; a base64-encoded PEM (kubeconfig style) is taken as it is.
        ...(ca ? { caData: ca.includes('-----BEGIN') ? Buffer.from(ca, 'utf8').toString('base64') : ca } : {}),
      },
    ],
    users: [{ name: 'vnfm', token }],
    contexts: [{ name: 'vim', cluster: 'vim', user: 'vnfm' }],
    currentContext: 'vim',
  });
  return kc;
}

/** A plain JSON view of any object the API answered (client-node answers class instances with Dates). */
export type KubeObject = KubernetesObject & Record<string, unknown>;

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
  if (statusOf(error) === 404 && error instanceof Error && /resource metadata/i.test(error.message)) return true;
  return error instanceof Error && !(error instanceof ApiException) && /Unrecognized API version and kind/i.test(error.message);
}

/** Plain JSON of what client-node deserialised (Dates become RFC 3339 strings). */
const plain = <T>(value: T): KubeObject => JSON.parse(JSON.stringify(value)) as KubeObject;

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
}

/**
 * The cluster as the driver uses it: any kind by apiVersion and kind (resolved through discovery,
 * so kinds the cluster adds later work without a code change), answers as plain JSON, 404 as
 * undefined or false where absence is an answer, every failure as a KubernetesError whose
 * vimStatus is the API server's status.
 */
export class KubeClient {
  readonly #objects: KubernetesObjectApi;
  readonly #core: CoreApi;

  constructor(readonly vim: VimConnection) {
    const kc = kubeConfigOf(vim);
    this.#objects = KubernetesObjectApi.makeApiClient(kc);
    this.#core = kc.makeApiClient(CoreApi);
  }

  get endpoint(): string {
    return String(this.vim.interfaceInfo.endpoint);
  }

  /** Reads the API versions (needs an authenticated user), saying plainly when the token or the endpoint is wrong. */
  async verify(): Promise<void> {
    try {
      await this.#core.getAPIVersions();
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
      return plain(await this.#objects.create(object));
    } catch (error) {
      throw kubernetesError(`creating ${describeRef(ref)}`, error);
    }
  }

  async replace(object: KubeObject): Promise<KubeObject> {
    const ref = refOf(object);
    try {
      return plain(await this.#objects.replace(object));
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
      return plain(await this.#objects.patch(body, undefined, undefined, undefined, undefined, PatchStrategy.MergePatch));
    } catch (error) {
      throw kubernetesError(`patching ${describeRef(ref)}`, error);
    }
  }

  async read(ref: ObjectRef): Promise<KubeObject | undefined> {
    try {
      return plain(
        await this.#objects.read({
          apiVersion: ref.apiVersion,
          kind: ref.kind,
          metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
        }),
      );
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
      const answer = await this.#objects.list(apiVersion, kind, namespace, undefined, undefined, undefined, options.fieldSelector, options.labelSelector);
      return (answer.items ?? []).map((item) => ({ ...plain(item), apiVersion, kind }));
    } catch (error) {
      if (isUnservedKind(error)) return undefined;
      throw kubernetesError(`listing ${kind} objects${namespace ? ` in namespace ${namespace}` : ''}`, error);
    }
  }

  /** Deletes the object; false when it was already gone. */
  async delete(ref: ObjectRef, options: { propagationPolicy?: 'Foreground' | 'Background'; gracePeriodSeconds?: number } = {}): Promise<boolean> {
    try {
      await this.#objects.delete(
        { apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) } },
        undefined,
        undefined,
        options.gracePeriodSeconds,
        undefined,
        options.propagationPolicy,
      );
      return true;
    } catch (error) {
      if (statusOf(error) === 404 && !isUnservedKind(error)) return false;
      throw kubernetesError(`deleting ${describeRef(ref)}`, error);
    }
  }
}

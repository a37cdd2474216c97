// The Kubernetes simulator: a kube-apiserver over plain HTTP with bearer-token auth, discovery,
// core/v1 (namespaces, configmaps, secrets, services, pods, nodes, persistentvolumeclaims) and
// apps/v1 (deployments, replicasets, statefulsets, daemonsets, controllerrevisions), every patch
// type including server-side apply, driven by in-process controllers on simulated nodes with
// scaled-down timings, so the product's Kubernetes driver can talk to it exactly as to a cluster;
// metrics.k8s.io (metrics.ts) as metrics-server serves it. A control API under /_sim/ injects
// faults, sets pods' CPU and memory usage, reports what exists, and waits until every controller
// has settled.
import type http from 'node:http';
import { randomBytes } from 'node:crypto';
import YAML from 'yaml';
import { closeServer, listen } from '../aws-json.ts';
import { ClientRequestError, createGuardedServer, isClientGone, requestUrl } from '../http-guard.ts';
import { Api, APPLY_PATCH, type Subresource } from './api.ts';
import { Controllers } from './controllers.ts';
import { Metrics, METRICS_GROUP, metricsDiscovery } from './metrics.ts';
import { T } from './defaults.ts';
import { DEFAULT_NODES } from './nodes.ts';
import { isObject, RESOURCES, statusObject, Store, StatusError, timestamp, type JsonObject, type KObject, type ResourceType } from './store.ts';

export interface KubernetesSimulatorOptions {
  host?: string;
  /** 0 = ephemeral. */
  port?: number;
  /** Multiplies the kubelet's delays (pod start, image pull failure); default 1. */
  timeScale?: number;
  /** The bearer token clients must send; default a random one. */
  token?: string;
  /** The nodes the cluster starts with: their names, or how many (node-1 ... node-n); default node-1 and node-2. */
  nodes?: number | string[];
  log?: (line: string) => void;
}

export type KubernetesFault =
  | { kind: 'image-pull-fail'; image: string }
  | { kind: 'http-5xx'; count: number }
  /** The pod's containers crash and the kubelet backs off (CrashLoopBackOff, not Ready) until the pod is deleted. */
  | { kind: 'pod-crash'; pod: string; namespace: string };

/** Quantities as Kubernetes writes them: cpu "250m" or "1", memory "64Mi" or "128M". */
export interface MetricsSetting {
  namespace?: string;
  pod?: string;
  workload?: { kind: 'Deployment' | 'StatefulSet' | 'DaemonSet' | 'ReplicaSet'; name: string };
  cpu?: string;
  memory?: string;
  containers?: Record<string, { cpu?: string; memory?: string }>;
}

export interface NamespaceState {
  deployments: { count: number; names: string[] };
  replicasets: { count: number; names: string[] };
  statefulsets: { count: number; names: string[] };
  daemonsets: { count: number; names: string[] };
  pods: { count: number; names: string[] };
  services: { count: number; names: string[] };
}

export interface KubernetesSimulatorState {
  namespaces: Record<string, NamespaceState>;
  nodes: { count: number; names: string[] };
  /** Queued reconcile passes plus pending kubelet timers (0 when settled). */
  busy: number;
}

export interface KubernetesSimulator {
  url: string;
  token: string;
  /** Resolves when no controller work is queued or pending. */
  settled(): Promise<void>;
  state(): KubernetesSimulatorState;
  inject(fault: KubernetesFault): void;
  clearFaults(): void;
  /** Sets pods' usage as POST /_sim/metrics does (one pod, or every pod of a workload); throws a 400/404 Status error on a bad setting. */
  setMetrics(setting: MetricsSetting): void;
  /** Back to the default usage everywhere. */
  clearMetrics(): void;
  close(): Promise<void>;
}

const VERSION = {
  major: '1',
  minor: '30',
  gitVersion: 'v1.30.0-sim',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2024-04-17T00:00:00Z',
  goVersion: 'go1.22.2',
  compiler: 'gc',
  platform: 'linux/amd64',
};

const VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update'];

export async function startKubernetesSimulator(opts: KubernetesSimulatorOptions = {}): Promise<KubernetesSimulator> {
  const log = opts.log ?? (() => {});
  const timeScale = opts.timeScale ?? 1;
  if (!(timeScale >= 0)) throw new Error('timeScale must be a number >= 0');
  const token = opts.token ?? `sim-${randomBytes(16).toString('hex')}`;

  const failingImages: string[] = [];
  let failNext = 0;
  const store = new Store();
  const controllers = new Controllers(store, {
    timeScale,
    imagePullFails: (image) => image.includes('invalid') || image.includes('badimage') || failingImages.some((f) => image.includes(f)),
    log,
  });
  const api = new Api(store);
  const metrics = new Metrics(store);
  store.create(T.namespaces, namespace('default'));
  store.create(T.namespaces, namespace('kube-system'));
  store.create(T.namespaces, namespace('kube-public'));
  const nodeNames = typeof opts.nodes === 'number' ? Array.from({ length: opts.nodes }, (_, i) => `node-${i + 1}`) : (opts.nodes ?? DEFAULT_NODES);
  for (const name of nodeNames) api.create(T.nodes, undefined, { metadata: { name } });

  const inject = (fault: KubernetesFault): void => {
    if (fault.kind === 'image-pull-fail') failingImages.push(fault.image);
    else if (fault.kind === 'pod-crash') {
      if (!controllers.crashPod(fault.namespace, fault.pod))
        throw new StatusError(404, 'NotFound', `pods "${fault.pod}" not found in namespace "${fault.namespace}"`);
    } else failNext += fault.count;
  };
  const state = (): KubernetesSimulatorState => {
    const namespaces: Record<string, NamespaceState> = {};
    const entry = (t: ResourceType, ns?: string) => {
      const names = store
        .list(t, ns)
        .map((o) => o.metadata.name)
        .sort();
      return { count: names.length, names };
    };
    for (const ns of store.list(T.namespaces)) {
      const n = ns.metadata.name;
      namespaces[n] = {
        deployments: entry(T.deployments, n),
        replicasets: entry(T.replicasets, n),
        statefulsets: entry(T.statefulsets, n),
        daemonsets: entry(T.daemonsets, n),
        pods: entry(T.pods, n),
        services: entry(T.services, n),
      };
    }
    return { namespaces, nodes: entry(T.nodes), busy: controllers.busy };
  };

  let address = '';
  async function handle(req: http.IncomingMessage): Promise<{ status: number; body: unknown }> {
    const url = requestUrl(req);
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const method = req.method ?? 'GET';
    const contentType = req.headers['content-type'] ?? '';
    const body = parseBody(await readText(req), method === 'PATCH' && contentType.toLowerCase().startsWith(APPLY_PATCH));

    if (path === '/_sim' || path.startsWith('/_sim/')) {
      const sub = path.slice('/_sim'.length);
      if (sub === '/faults' && method === 'POST') {
        const fault = parseFault(body);
        inject(fault);
        return { status: 200, body: { injected: fault } };
      }
      if (sub === '/faults' && method === 'DELETE') {
        failingImages.length = 0;
        failNext = 0;
        return { status: 200, body: { cleared: true } };
      }
      if (sub === '/state' && method === 'GET') return { status: 200, body: state() };
      if (sub === '/metrics' && method === 'POST') return { status: 200, body: { set: metrics.set(body) } };
      if (sub === '/metrics' && method === 'DELETE') {
        metrics.clear();
        return { status: 200, body: { cleared: true } };
      }
      if (sub === '/settled' && method === 'POST') {
        await controllers.settled();
        return { status: 200, body: { settled: true } };
      }
      return { status: 404, body: { error: `no control endpoint ${method} ${path}` } };
    }
    if (path === '/healthz' || path === '/livez' || path === '/readyz') return { status: 200, body: 'ok' };

    if (req.headers.authorization !== `Bearer ${token}`) {
      return { status: 401, body: statusObject('Failure', 401, 'Unauthorized', 'Unauthorized') };
    }
    if (failNext > 0) {
      failNext--;
      return {
        status: 500,
        body: statusObject('Failure', 500, 'InternalError', 'Internal error occurred: injected fault (http-5xx)', { causes: [{ message: 'injected fault' }] }),
      };
    }

    const discovery = discover(path, address);
    if (discovery) {
      if (method !== 'GET') throw new StatusError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);
      return { status: 200, body: discovery };
    }

    const measured = metrics.handle(method, path, url.searchParams);
    if (measured) return { status: 200, body: measured };

    const route = resolve(path);
    if (!route) throw new StatusError(404, 'NotFound', 'the server could not find the requested resource');
    const { type: t, namespace: ns, name, sub } = route;
    if (name === undefined) {
      if (method === 'GET') return { status: 200, body: api.list(t, ns, url.searchParams) };
      if (method === 'POST' && (ns !== undefined || !t.namespaced)) return { status: 201, body: api.create(t, ns, body) };
    } else {
      if (method === 'GET') return { status: 200, body: api.get(t, ns, name, sub) };
      if (method === 'PUT') return { status: 200, body: api.replace(t, ns, name, body, sub) };
      if (method === 'PATCH') return api.patch(t, ns, name, body, contentType, url.searchParams, sub);
      if (method === 'DELETE' && sub === undefined) return { status: 200, body: api.delete(t, ns, name, url.searchParams, body) };
    }
    throw new StatusError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);
  }

  const server = createGuardedServer(
    'Kubernetes simulator',
    async (req, res) => {
      await handle(req)
        .catch((err: unknown) => {
          if (err instanceof StatusError) return { status: err.code, body: err.toStatus() as unknown };
          if (err instanceof ClientRequestError) return { status: err.status, body: statusObject('Failure', err.status, 'BadRequest', err.message) as unknown };
          if (err instanceof URIError) return { status: 400, body: statusObject('Failure', 400, 'BadRequest', 'bad percent-encoding in the path') as unknown };
          if (isClientGone(err, req)) throw err;
          log(`kubernetes simulator: ${req.method} ${req.url} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
          return {
            status: 500,
            body: statusObject('Failure', 500, 'InternalError', `Internal error occurred: ${err instanceof Error ? err.message : String(err)}`) as unknown,
          };
        })
        .then(({ status, body }) => {
          log(`${req.method} ${req.url} -> ${status}`);
          const text = typeof body === 'string' ? body : JSON.stringify(body);
          res.writeHead(status, {
            'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
            'content-length': Buffer.byteLength(text),
            'audit-id': randomBytes(16).toString('hex'),
          });
          res.end(text);
        });
    },
    log,
  );
  const { endpoint, port } = await listen(server, { name: 'Kubernetes simulator', host: opts.host, port: opts.port });
  address = `${opts.host ?? '127.0.0.1'}:${port}`;
  log(`kubernetes simulator: listening on ${endpoint} (timeScale ${timeScale})`);

  return {
    url: endpoint,
    token,
    settled: () => controllers.settled(),
    state,
    inject,
    clearFaults: () => {
      failingImages.length = 0;
      failNext = 0;
    },
    setMetrics: (setting) => {
      metrics.set(setting as unknown);
    },
    clearMetrics: () => metrics.clear(),
    close: async () => {
      controllers.close();
      await closeServer(server);
    },
  };
}

function namespace(name: string): KObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, uid: '', resourceVersion: '', creationTimestamp: timestamp(), labels: { 'kubernetes.io/metadata.name': name } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  };
}

async function readText(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 3 * 1024 * 1024) throw new StatusError(413, 'RequestEntityTooLarge', 'the request body is too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** JSON, or for server-side apply YAML (of which JSON is a subset). */
function parseBody(text: string, yaml: boolean): unknown {
  if (text.trim() === '') return undefined;
  try {
    return yaml ? (YAML.parse(text) as unknown) : (JSON.parse(text) as unknown);
  } catch (err) {
    if (yaml) throw new StatusError(400, 'BadRequest', `error decoding YAML: ${err instanceof Error ? err.message : String(err)}`);
    throw new StatusError(400, 'BadRequest', 'the request body is not valid JSON (the simulator accepts JSON, and YAML for server-side apply; not protobuf)');
  }
}

function parseFault(body: unknown): KubernetesFault {
  if (isObject(body) && body.kind === 'image-pull-fail' && typeof body.image === 'string' && body.image !== '')
    return { kind: 'image-pull-fail', image: body.image };
  if (isObject(body) && body.kind === 'http-5xx' && typeof body.count === 'number' && body.count >= 0) return { kind: 'http-5xx', count: body.count };
  if (isObject(body) && body.kind === 'pod-crash' && typeof body.pod === 'string' && body.pod !== '') {
    return { kind: 'pod-crash', pod: body.pod, namespace: typeof body.namespace === 'string' && body.namespace !== '' ? body.namespace : 'default' };
  }
  throw new StatusError(
    400,
    'BadRequest',
    'a fault is {"kind":"image-pull-fail","image":"..."}, {"kind":"http-5xx","count":n} or {"kind":"pod-crash","pod":"...","namespace":"..."}',
  );
}

/** Maps /api/v1/... and /apis/apps/v1/... onto a resource, namespace, name and subresource. */
function resolve(path: string): { type: ResourceType; namespace?: string; name?: string; sub: Subresource } | undefined {
  let group: string;
  let rest: string[];
  if (path.startsWith('/api/v1/')) {
    group = '';
    rest = path.slice('/api/v1/'.length).split('/');
  } else if (path.startsWith('/apis/apps/v1/')) {
    group = 'apps';
    rest = path.slice('/apis/apps/v1/'.length).split('/');
  } else return undefined;
  rest = rest.map(decodeURIComponent);
  const typeNamed = (resource: string | undefined) => RESOURCES.find((r) => r.group === group && r.resource === resource);
  const subOf = (s: string | undefined): Subresource | null => (s === undefined ? undefined : s === 'status' || s === 'scale' ? s : null);

  if (group === '' && rest[0] === 'namespaces' && rest.length >= 3) {
    // namespaces/{ns}/status is the namespace's own subresource; anything else is a resource in it.
    if (rest.length === 3 && rest[2] === 'status') return { type: T.namespaces, name: rest[1]!, sub: 'status' };
  }
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const type = typeNamed(rest[2]);
    const sub = subOf(rest[4]);
    if (!type || sub === null || rest.length > 5) return undefined;
    return { type, namespace: rest[1]!, ...(rest[3] !== undefined ? { name: rest[3] } : {}), sub };
  }
  const type = typeNamed(rest[0]);
  if (!type || rest.length > 3) return undefined;
  const sub = subOf(rest[2]);
  if (sub === null) return undefined;
  if (type.namespaced && rest.length > 1) return undefined;
  return { type, ...(rest[1] !== undefined ? { name: rest[1] } : {}), sub };
}

/** Discovery documents, as kubectl and client libraries read them. */
function discover(path: string, address: string): JsonObject | undefined {
  const resourceList = (group: string, version: string): JsonObject => ({
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group ? `${group}/${version}` : version,
    resources: RESOURCES.filter((r) => r.group === group).flatMap((r) => {
      const main: JsonObject = {
        name: r.resource,
        singularName: r.kind.toLowerCase(),
        namespaced: r.namespaced,
        kind: r.kind,
        verbs: VERBS,
        ...(r.shortNames.length ? { shortNames: r.shortNames } : {}),
      };
      const subs: JsonObject[] = [];
      if (r.hasStatus) subs.push({ name: `${r.resource}/status`, singularName: '', namespaced: r.namespaced, kind: r.kind, verbs: ['get', 'patch', 'update'] });
      if (r === T.deployments || r === T.replicasets || r === T.statefulsets)
        subs.push({
          name: `${r.resource}/scale`,
          singularName: '',
          namespaced: true,
          group: 'autoscaling',
          version: 'v1',
          kind: 'Scale',
          verbs: ['get', 'patch', 'update'],
        });
      return [main, ...subs];
    }),
  });
  const apps = { name: 'apps', versions: [{ groupVersion: 'apps/v1', version: 'v1' }], preferredVersion: { groupVersion: 'apps/v1', version: 'v1' } };
  switch (path) {
    case '/version':
      return VERSION;
    case '/api':
      return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: address }] };
    case '/api/v1':
      return resourceList('', 'v1');
    case '/apis':
      // Aggregated APIs (metrics-server's) come after the built-in groups.
      return { kind: 'APIGroupList', apiVersion: 'v1', groups: [apps, METRICS_GROUP] };
    case '/apis/apps':
      return { kind: 'APIGroup', apiVersion: 'v1', ...apps };
    case '/apis/apps/v1':
      return resourceList('apps', 'v1');
    default:
      return metricsDiscovery(path);
  }
}

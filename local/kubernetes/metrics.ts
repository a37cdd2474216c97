// metrics.k8s.io/v1beta1 as metrics-server serves it through the aggregation layer: PodMetrics
// for running pods and NodeMetrics for Ready nodes, with quantities in their canonical form
// ("250m", "2127180n", "64Mi", "13540Ki"), plus the discovery documents it registers. Usage is
// plausible and steady by default (derived from each container's requests, else small idle
// values) and set by tests under /_sim/metrics for one pod or for every pod of a workload, so
// that performance management and scaling decisions can be driven from outside.
import { createHash } from 'node:crypto';
import { containersOf, T } from './defaults.ts';
import { isNodeReady } from './nodes.ts';
import {
  isObject,
  matchesLabels,
  parseLabelSelector,
  structuredSelector,
  StatusError,
  timestamp,
  type JsonObject,
  type KObject,
  type ResourceType,
  type Store,
} from './store.ts';

const GROUP = 'metrics.k8s.io';
const VERSION = 'v1beta1';
const GROUP_VERSION = `${GROUP}/${VERSION}`;
/** metrics-server's default --metric-resolution: the window each sample covers. */
const WINDOW = '15s';
/** What the node's own daemons (kubelet, container runtime) use besides the pods. */
const NODE_BASELINE = { nanocores: 120_000_000, bytes: 900 * 2 ** 20 };

/** A usage in base units: CPU in nanocores, memory in bytes. */
interface Usage {
  nanocores: number;
  bytes: number;
}

/** What a test set: for the whole pod (split evenly over its containers) and/or per container. */
interface Setting {
  pod?: Partial<Usage>;
  containers: Record<string, Partial<Usage>>;
}

interface WorkloadSetting extends Setting {
  namespace: string;
  type: ResourceType;
  name: string;
}

const WORKLOAD_KINDS: Record<string, ResourceType> = {
  deployment: T.deployments,
  statefulset: T.statefulsets,
  daemonset: T.daemonsets,
  replicaset: T.replicasets,
};

export class Metrics {
  readonly #pods = new Map<string, Setting>();
  #workloads: WorkloadSetting[] = [];

  constructor(private readonly store: Store) {}

  /** The metrics API (paths below /apis/metrics.k8s.io/v1beta1); undefined when the path is not one of it. */
  handle(method: string, path: string, query: URLSearchParams): JsonObject | undefined {
    const prefix = `/apis/${GROUP_VERSION}/`;
    if (!path.startsWith(prefix)) return undefined;
    const rest = path.slice(prefix.length).split('/').map(decodeURIComponent);
    let found: (() => JsonObject) | undefined;
    if (rest[0] === 'nodes' && rest.length <= 2) found = rest[1] === undefined ? () => this.#nodeList(query) : () => this.#node(rest[1]!);
    else if (rest[0] === 'pods' && rest.length === 1) found = () => this.#podList(undefined, query);
    else if (rest[0] === 'namespaces' && rest[2] === 'pods' && rest.length <= 4)
      found = rest[3] === undefined ? () => this.#podList(rest[1]!, query) : () => this.#pod(rest[1]!, rest[3]!);
    if (!found) throw new StatusError(404, 'NotFound', 'the server could not find the requested resource');
    if (method !== 'GET') throw new StatusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
    return found();
  }

  /**
   * POST /_sim/metrics: {"namespace", "pod" | "workload": {"kind", "name"}, "cpu", "memory",
   * "containers": {"<name>": {"cpu", "memory"}}}. A workload's setting covers the pods it has
   * later too (scale-out, replacements); a pod's own setting wins over its workload's.
   */
  set(body: unknown): JsonObject {
    if (!isObject(body)) throw badSetting('the body must be an object');
    const namespace = typeof body.namespace === 'string' && body.namespace !== '' ? body.namespace : 'default';
    const setting: Setting = { containers: {} };
    const pod = usageOf(body, 'the pod');
    if (pod) setting.pod = pod;
    if (body.containers !== undefined) {
      if (!isObject(body.containers)) throw badSetting('containers must map container names to {"cpu", "memory"}');
      for (const [name, value] of Object.entries(body.containers)) {
        const usage = isObject(value) ? usageOf(value, `container ${name}`) : undefined;
        if (!usage) throw badSetting(`container ${name} needs "cpu" and/or "memory"`);
        setting.containers[name] = usage;
      }
    }
    if (!setting.pod && Object.keys(setting.containers).length === 0) throw badSetting('say "cpu", "memory" or "containers"');
    if (typeof body.pod === 'string' && body.pod !== '') {
      if (!this.store.get(T.pods, namespace, body.pod)) throw new StatusError(404, 'NotFound', `pods "${body.pod}" not found`);
      this.#pods.set(`${namespace}/${body.pod}`, setting);
      return { namespace, pod: body.pod };
    }
    const workload = isObject(body.workload) ? body.workload : undefined;
    const type = typeof workload?.kind === 'string' ? WORKLOAD_KINDS[workload.kind.toLowerCase()] : undefined;
    if (!workload || !type || typeof workload.name !== 'string')
      throw badSetting('say "pod": "<name>" or "workload": {"kind": "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet", "name": "<name>"}');
    const name = workload.name;
    if (!this.store.get(type, namespace, name)) throw new StatusError(404, 'NotFound', `${type.resource}.${type.group} "${name}" not found`);
    this.#workloads = [
      ...this.#workloads.filter((w) => !(w.namespace === namespace && w.type === type && w.name === name)),
      { namespace, type, name, ...setting },
    ];
    return { namespace, workload: { kind: type.kind, name } };
  }

  /** DELETE /_sim/metrics: back to the defaults. */
  clear(): void {
    this.#pods.clear();
    this.#workloads = [];
  }

  /** A running pod's usage per container; undefined while it has none (not scheduled, not all containers running). */
  podUsage(pod: KObject): Array<{ name: string; usage: Usage }> | undefined {
    if (pod.status?.phase !== 'Running' || pod.metadata.deletionTimestamp) return undefined;
    // metrics-server scrapes each node's kubelet; a node that is not Ready answers nothing.
    const node = typeof pod.spec?.nodeName === 'string' ? this.store.get(T.nodes, undefined, pod.spec.nodeName) : undefined;
    if (!node || !isNodeReady(node)) return undefined;
    const statuses = Array.isArray(pod.status.containerStatuses) ? pod.status.containerStatuses.filter(isObject) : [];
    const containers = containersOf(pod);
    const running = (name: string) => statuses.some((s) => s.name === name && isObject(s.state) && isObject(s.state.running));
    // metrics-server leaves out a pod while any of its containers has no sample.
    if (containers.length === 0 || !containers.every((c) => running(String(c.name ?? '')))) return undefined;
    const settings = [this.#pods.get(`${pod.metadata.namespace}/${pod.metadata.name}`), this.#workloadSetting(pod)].filter(
      (s): s is Setting => s !== undefined,
    );
    return containers.map((c) => {
      const name = String(c.name ?? '');
      const usage = defaultUsage(pod, c);
      // The most specific setting wins: the pod's own before its workload's, a container's before the pod's share.
      for (const setting of [...settings].reverse()) {
        const share = setting.pod;
        if (share?.nanocores !== undefined) usage.nanocores = Math.round(share.nanocores / containers.length);
        if (share?.bytes !== undefined) usage.bytes = Math.round(share.bytes / containers.length / 1024) * 1024;
        const own = setting.containers[name];
        if (own?.nanocores !== undefined) usage.nanocores = own.nanocores;
        if (own?.bytes !== undefined) usage.bytes = own.bytes;
      }
      return { name, usage };
    });
  }

  #workloadSetting(pod: KObject): Setting | undefined {
    for (const w of [...this.#workloads].reverse()) {
      if (w.namespace !== pod.metadata.namespace) continue;
      const owner = this.store.get(w.type, w.namespace, w.name);
      if (owner && matchesLabels(structuredSelector(owner.spec?.selector), pod.metadata.labels)) return w;
    }
    return undefined;
  }

  #podMetrics(pod: KObject, containers: Array<{ name: string; usage: Usage }>): JsonObject {
    return {
      kind: 'PodMetrics',
      apiVersion: GROUP_VERSION,
      metadata: {
        name: pod.metadata.name,
        namespace: pod.metadata.namespace ?? '',
        creationTimestamp: timestamp(),
        ...(pod.metadata.labels ? { labels: { ...pod.metadata.labels } } : {}),
      },
      timestamp: timestamp(),
      window: WINDOW,
      containers: containers.map((c) => ({ name: c.name, usage: { cpu: cpuQuantity(c.usage.nanocores), memory: memoryQuantity(c.usage.bytes) } })),
    };
  }

  #pod(namespace: string, name: string): JsonObject {
    const pod = this.store.get(T.pods, namespace, name);
    const containers = pod ? this.podUsage(pod) : undefined;
    if (!pod || !containers)
      throw new StatusError(404, 'NotFound', `podmetrics.${GROUP} "${namespace}/${name}" not found`, { name, group: GROUP, kind: 'pods' });
    return this.#podMetrics(pod, containers);
  }

  #podList(namespace: string | undefined, query: URLSearchParams): JsonObject {
    const selector = parseLabelSelector(query.get('labelSelector') ?? '');
    const items = this.store
      .list(T.pods, namespace)
      .filter((pod) => matchesLabels(selector, pod.metadata.labels))
      .flatMap((pod) => {
        const containers = this.podUsage(pod);
        return containers ? [this.#podMetrics(pod, containers)] : [];
      });
    return { kind: 'PodMetricsList', apiVersion: GROUP_VERSION, metadata: {}, items };
  }

  #nodeMetrics(node: KObject): JsonObject {
    const total = { ...NODE_BASELINE };
    for (const pod of this.store.list(T.pods)) {
      if (pod.spec?.nodeName !== node.metadata.name) continue;
      for (const c of this.podUsage(pod) ?? []) {
        total.nanocores += c.usage.nanocores;
        total.bytes += c.usage.bytes;
      }
    }
    return {
      kind: 'NodeMetrics',
      apiVersion: GROUP_VERSION,
      metadata: { name: node.metadata.name, creationTimestamp: timestamp(), ...(node.metadata.labels ? { labels: { ...node.metadata.labels } } : {}) },
      timestamp: timestamp(),
      window: WINDOW,
      usage: { cpu: cpuQuantity(total.nanocores), memory: memoryQuantity(total.bytes) },
    };
  }

  #node(name: string): JsonObject {
    const node = this.store.get(T.nodes, undefined, name);
    if (!node || !isNodeReady(node)) throw new StatusError(404, 'NotFound', `nodemetrics.${GROUP} "${name}" not found`, { name, group: GROUP, kind: 'nodes' });
    return this.#nodeMetrics(node);
  }

  #nodeList(query: URLSearchParams): JsonObject {
    const selector = parseLabelSelector(query.get('labelSelector') ?? '');
    const items = this.store
      .list(T.nodes)
      .filter((n) => isNodeReady(n) && matchesLabels(selector, n.metadata.labels))
      .map((n) => this.#nodeMetrics(n));
    return { kind: 'NodeMetricsList', apiVersion: GROUP_VERSION, metadata: {}, items };
  }
}

/** /apis/metrics.k8s.io and its version, as metrics-server's APIService registers them. */
export const METRICS_GROUP: JsonObject = {
  name: GROUP,
  versions: [{ groupVersion: GROUP_VERSION, version: VERSION }],
  preferredVersion: { groupVersion: GROUP_VERSION, version: VERSION },
};

export function metricsDiscovery(path: string): JsonObject | undefined {
  if (path === `/apis/${GROUP}`) return { kind: 'APIGroup', apiVersion: 'v1', ...METRICS_GROUP };
  if (path === `/apis/${GROUP_VERSION}`) {
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: GROUP_VERSION,
      resources: [
        { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
        { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
      ],
    };
  }
  return undefined;
}

/** An idle container: a fifth of its CPU request and half its memory request, else a few millicores and some MiB; steady per pod. */
function defaultUsage(pod: KObject, container: JsonObject): Usage {
  const requests = isObject(container.resources) && isObject(container.resources.requests) ? container.resources.requests : {};
  const jitter =
    createHash('sha256')
      .update(`${pod.metadata.uid}/${String(container.name)}`)
      .digest()
      .readUInt32BE(0) /
    2 ** 32;
  const cpuRequest = typeof requests.cpu === 'string' || typeof requests.cpu === 'number' ? parseQuantity(String(requests.cpu)) : undefined;
  const memoryRequest = typeof requests.memory === 'string' || typeof requests.memory === 'number' ? parseQuantity(String(requests.memory)) : undefined;
  return {
    nanocores: Math.round(cpuRequest !== undefined ? cpuRequest * 1e9 * (0.15 + 0.1 * jitter) : 1_000_000 + 2_000_000 * jitter),
    bytes: Math.round((memoryRequest !== undefined ? memoryRequest * (0.4 + 0.2 * jitter) : (8 + 8 * jitter) * 2 ** 20) / 1024) * 1024,
  };
}

function usageOf(body: JsonObject, what: string): Partial<Usage> | undefined {
  const usage: Partial<Usage> = {};
  if (body.cpu !== undefined) {
    const cores = typeof body.cpu === 'string' || typeof body.cpu === 'number' ? parseQuantity(String(body.cpu)) : undefined;
    if (cores === undefined) throw badSetting(`the cpu of ${what} must be a quantity such as "250m" or "1"`);
    usage.nanocores = Math.round(cores * 1e9);
  }
  if (body.memory !== undefined) {
    const bytes = typeof body.memory === 'string' || typeof body.memory === 'number' ? parseQuantity(String(body.memory)) : undefined;
    if (bytes === undefined) throw badSetting(`the memory of ${what} must be a quantity such as "64Mi" or "128M"`);
    usage.bytes = Math.round(bytes);
  }
  return usage.nanocores === undefined && usage.bytes === undefined ? undefined : usage;
}

function badSetting(message: string): StatusError {
  return new StatusError(400, 'BadRequest', `invalid metrics setting: ${message}`);
}

const SUFFIXES: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A Kubernetes quantity ("250m", "1.5", "64Mi", "1e3") in base units; undefined when it is not one. */
export function parseQuantity(text: string): number | undefined {
  const m = /^([+]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei))?$/.exec(text.trim());
  if (!m) return undefined;
  const value = Number(m[1]) * (m[2] ? 10 ** Number(m[2].slice(1)) : SUFFIXES[m[3] ?? '']!);
  return Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** CPU as metrics-server writes it (a decimal quantity from nanocores): the largest suffix that keeps it whole. */
export function cpuQuantity(nanocores: number): string {
  const n = Math.max(0, Math.round(nanocores));
  if (n === 0) return '0';
  for (const [suffix, scale] of [
    ['', 1e9],
    ['m', 1e6],
    ['u', 1e3],
  ] as const)
    if (n % scale === 0) return `${n / scale}${suffix}`;
  return `${n}n`;
}

/** Memory as metrics-server writes it (a binary quantity from bytes): Ki, Mi, Gi... while whole, else bytes. */
export function memoryQuantity(bytes: number): string {
  let n = Math.max(0, Math.round(bytes));
  if (n === 0) return '0';
  let suffix = 0;
  const names = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
  while (n % 1024 === 0 && suffix < names.length - 1) {
    n /= 1024;
    suffix++;
  }
  return `${n}${names[suffix]}`;
}

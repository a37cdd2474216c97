// VNFC performance read from a Prometheus the operator runs, through its HTTP API, as an
// alternative to asking the VIM (the drivers' measure): the same MeasureReport, so the PM collector
// can take either. One instant query per metric answers for every VNFC on the VIM (the resource ids
// go into a regex label matcher, a few hundred at a time so the request line stays short), never
// one query per VNFC. Default queries fit the two exporters operators commonly run: for Kubernetes,
// cAdvisor (kubelet) with kube-state-metrics, series keyed by `pod`; for OpenStack, Ceilometer's
// Prometheus exporter (ceilometer_* series), keyed by `resource`, the Nova server id. Operators
// replace any of them per VIM or per instance (prometheusFrom). The server's URL may come from an
// API consumer (instance metadata), so every call goes through the egress policy, with a time limit.
// The collector's entry point is measureVim: one VIM's instances, each through the Prometheus its
// metadata or its VIM names, or else through the VIM driver.
import * as z from 'zod';
import { EgressDeniedError, egressPolicyFromEnv, egressRequest, type EgressPolicy, type EgressResponse } from '#lib/egress.ts';
import type { CpCounters, MeasureReport, MeasureTarget, VnfcMeasurement } from '#lib/vim/driver.ts';
import { canonicalVimType, OPENSTACK_VIM } from '#lib/vim/registry.ts';

export const PROMETHEUS_QUERY_NAMES = ['cpu', 'memory', 'disk', 'bytesIn', 'bytesOut', 'packetsIn', 'packetsOut'] as const;
export type PrometheusQueryName = (typeof PROMETHEUS_QUERY_NAMES)[number];

/** Where a Prometheus answers and how to authenticate; `queries` replace default queries (an empty one leaves that metric out). */
export interface PrometheusServer {
  /** The base URL of the HTTP API (what precedes /api/v1/query), e.g. http://prometheus:9090. */
  url: string;
  authentication?: { bearerToken?: string; basic?: { username: string; password: string } };
  queries?: Partial<Record<PrometheusQueryName, string>>;
}

export interface PrometheusMeasureOptions {
  /** The VIM's type: which default queries apply (Kubernetes unless it is OpenStack, as Tacker's plugin is for CNFs). */
  vimType?: string;
  policy?: EgressPolicy;
  /** Time limit of each query, in ms. */
  timeoutMs?: number;
  /** The instant evaluated (now by default); also the `at` of every result. */
  at?: Date;
  /** Longest regex alternation of resource ids in one query, in characters. */
  maxIdsLength?: number;
}

export class PrometheusError extends Error {
  /** The queries sent before the read failed (measureViaPrometheus sets it), for the cost of a collection. */
  apiCalls?: number;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PrometheusError';
  }
}

export const PROMETHEUS_TIMEOUT_MS = 10_000;
/** Keeps a query's request line (the ids URL-encoded, twice in most default queries) well under the usual 8 KB limits. */
const MAX_IDS_LENGTH = 1500;
/** A few hundred series of a handful of labels each. */
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

// cAdvisor gives a container's series and, with container="" (and "POD" under dockershim), the
// pod's own cgroup and sandbox: counting only named containers counts each once. A pod's containers
// share one network namespace, so its network counters repeat per cgroup: max, not sum.
const CONTAINERS = 'container!="",container!="POD",pod=~"$ids"';
const KUBERNETES_QUERIES: Record<PrometheusQueryName, string> = {
  cpu: `sum by (pod) (rate(container_cpu_usage_seconds_total{${CONTAINERS}}[5m])) / sum by (pod) (kube_pod_container_resource_limits{resource="cpu",pod=~"$ids"}) * 100`,
  memory: `sum by (pod) (container_memory_working_set_bytes{${CONTAINERS}}) / sum by (pod) (kube_pod_container_resource_limits{resource="memory",pod=~"$ids"}) * 100`,
  disk: `max by (pod) (container_fs_usage_bytes{${CONTAINERS}} / container_fs_limit_bytes{${CONTAINERS}}) * 100`,
  bytesIn: 'max by (pod, interface) (container_network_receive_bytes_total{interface!="lo",pod=~"$ids"})',
  bytesOut: 'max by (pod, interface) (container_network_transmit_bytes_total{interface!="lo",pod=~"$ids"})',
  packetsIn: 'max by (pod, interface) (container_network_receive_packets_total{interface!="lo",pod=~"$ids"})',
  packetsOut: 'max by (pod, interface) (container_network_transmit_packets_total{interface!="lo",pod=~"$ids"})',
};

// Ceilometer's exporter names a meter ceilometer_<meter with dots as underscores> and labels it
// `resource` with the meter's resource id: the server id for cpu (cumulative ns), vcpus, memory and
// memory.usage (MB); <server id>-<device> for a disk; <libvirt domain>-<server id>-<tap device> for
// a vNIC. Every meter also carries a `counter` label with its own name, so two meters divide on(resource).
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const vnic = (meter: string) =>
  `max by (resource, interface) (label_replace(label_replace(ceilometer_network_${meter}{resource=~".+-($ids)-.+"}, "interface", "$2", "resource", ".+-(${UUID})-(.+)"), "resource", "$1", "resource", ".+-(${UUID})-.+"))`;
const OPENSTACK_QUERIES: Record<PrometheusQueryName, string> = {
  cpu: 'sum by (resource) (rate(ceilometer_cpu{resource=~"$ids"}[5m])) / 1e9 / sum by (resource) (ceilometer_vcpus{resource=~"$ids"}) * 100',
  memory: 'sum by (resource) (ceilometer_memory_usage{resource=~"$ids"}) / sum by (resource) (ceilometer_memory{resource=~"$ids"}) * 100',
  disk: 'max by (resource) (label_replace(ceilometer_disk_device_usage{resource=~"($ids)-.+"} / on (resource) ceilometer_disk_device_capacity{resource=~"($ids)-.+"}, "resource", "$1", "resource", "(.+)-[^-]+")) * 100',
  bytesIn: vnic('incoming_bytes'),
  bytesOut: vnic('outgoing_bytes'),
  packetsIn: vnic('incoming_packets'),
  packetsOut: vnic('outgoing_packets'),
};

/** The default queries for a kind of VIM; `$ids` stands for the regex alternation of the VNFCs' resource ids. */
export function defaultPrometheusQueries(vimType: string | undefined): Record<PrometheusQueryName, string> {
  return vimType !== undefined && canonicalVimType(vimType) === OPENSTACK_VIM ? OPENSTACK_QUERIES : KUBERNETES_QUERIES;
}

/** An id as a literal in a Prometheus (RE2) regex, inside a PromQL double-quoted string. */
export function regexLiteral(id: string): string {
  return id
    .replace(/[\\.+*?()|[\]{}^$]/g, '\\$&')
    .replace(/\\/g, '\\\\')
    .replace(/"/g, '\\"');
}

/** The ids as alternations of at most `maxLength` characters (an id longer than that alone). */
export function idChunks(ids: string[], maxLength = MAX_IDS_LENGTH): string[] {
  const chunks: string[] = [];
  let current = '';
  for (const literal of [...new Set(ids)].map(regexLiteral)) {
    if (current && current.length + 1 + literal.length > maxLength) {
      chunks.push(current);
      current = '';
    }
    current = current ? `${current}|${literal}` : literal;
  }
  if (current) chunks.push(current);
  return chunks;
}

const sample = z.tuple([z.number(), z.string()]);
const answer = z.discriminatedUnion('status', [
  z.object({
    status: z.literal('success'),
    data: z.object({ resultType: z.string(), result: z.unknown() }),
  }),
  z.object({ status: z.literal('error'), errorType: z.string().optional(), error: z.string().optional() }),
]);
const vector = z.array(z.object({ metric: z.record(z.string(), z.string()), value: sample }));
export type PrometheusSeries = z.infer<typeof vector>[number];

function authorization(server: PrometheusServer): Record<string, string> {
  const auth = server.authentication;
  if (auth?.bearerToken) return { Authorization: `Bearer ${auth.bearerToken}` };
  if (auth?.basic) return { Authorization: `Basic ${Buffer.from(`${auth.basic.username}:${auth.basic.password}`).toString('base64')}` };
  return {};
}

/** One instant query (GET /api/v1/query); the instant vector it gives, or a PrometheusError saying why not. */
export async function queryPrometheus(
  server: PrometheusServer,
  promql: string,
  options: { at: Date; policy: EgressPolicy; timeoutMs: number; what: string },
): Promise<PrometheusSeries[]> {
  const base = server.url.replace(/\/+$/, '');
  const url = `${base}/api/v1/query?${new URLSearchParams({ query: promql, time: (options.at.getTime() / 1000).toFixed(3) })}`;
  const where = `Prometheus at ${base}`;
  let response: EgressResponse;
  try {
    response = await egressRequest(
      url,
      { method: 'GET', headers: { Accept: 'application/json', ...authorization(server) }, timeoutMs: options.timeoutMs, maxResponseBytes: MAX_RESPONSE_BYTES },
      options.policy,
    );
  } catch (error) {
    const reason = error instanceof EgressDeniedError ? `the egress policy refuses it: ${error.reason}` : (error as Error).message;
    throw new PrometheusError(`${where} could not be reached (${options.what} query): ${reason}`, { cause: error });
  }
  if (response.status === 401 || response.status === 403)
    throw new PrometheusError(`${where} refused the ${options.what} query (${response.status}): check the monitoring authentication`);
  if (response.truncated) throw new PrometheusError(`${where} answered the ${options.what} query with more than ${MAX_RESPONSE_BYTES} bytes`);
  let parsed: z.infer<typeof answer>;
  try {
    parsed = answer.parse(JSON.parse(response.body));
  } catch {
    throw new PrometheusError(`${where} answered the ${options.what} query with ${response.status} and no Prometheus API answer: is the URL the API's base?`);
  }
  if (parsed.status === 'error')
    throw new PrometheusError(
      `${where} refused the ${options.what} query (${response.status} ${parsed.errorType ?? 'error'}: ${parsed.error ?? 'no reason given'})`,
    );
  if (parsed.data.resultType !== 'vector')
    throw new PrometheusError(`the ${options.what} query must give an instant vector; ${where} gave a ${parsed.data.resultType}`);
  const series = vector.safeParse(parsed.data.result);
  if (!series.success) throw new PrometheusError(`${where} answered the ${options.what} query with a malformed vector`);
  return series.data;
}

type TargetVnfc = MeasureTarget['vnfcs'][number];
type TargetCp = TargetVnfc['cps'][number];
type Counter = 'bytesIn' | 'bytesOut' | 'packetsIn' | 'packetsOut';
const COUNTERS: Counter[] = ['bytesIn', 'bytesOut', 'packetsIn', 'packetsOut'];
const GAUGES = { cpu: 'cpuUsagePercent', memory: 'memoryUsagePercent', disk: 'diskUsagePercent' } as const;

/**
 * The names an `interface` label may give a CP by: its ids, the ids of its port, and the tap device
 * a Nova server plugs a Neutron port into ("tap" and the port id's first 11 characters).
 */
function interfaceNames(cp: TargetCp): Set<string> {
  const ports = [cp.portResourceId, cp.vnfLinkPortId, cp.vnfExtCpId?.replace(/^cp-/, '')].filter((id): id is string => !!id);
  return new Set([cp.cpInstanceId, cp.cpdId, ...(cp.vnfExtCpId ? [cp.vnfExtCpId] : []), ...ports, ...ports.map((port) => `tap${port.slice(0, 11)}`)]);
}

/** The CP counters of one VNFC from the series of each counter query that belong to it. */
function cpCounters(vnfc: TargetVnfc, series: Record<Counter, PrometheusSeries[]>): CpCounters[] {
  const names = vnfc.cps.map(interfaceNames);
  return vnfc.cps.map((cp, index) => {
    const counters: Partial<Record<Counter, number>> = {};
    for (const counter of COUNTERS) {
      const own = series[counter];
      const named = own.filter((item) => item.metric.interface !== undefined && names[index]?.has(item.metric.interface));
      // A VNFC of one CP and one interface (a pod's eth0, a server's one NIC) needs no names to tell them apart.
      const matched = named.length > 0 ? named : vnfc.cps.length === 1 && own.length === 1 ? own : [];
      const values = matched.map((item) => Number(item.value[1])).filter(Number.isFinite);
      if (values.length) counters[counter] = values.reduce((sum, value) => sum + value, 0);
    }
    return {
      cpInstanceId: cp.cpInstanceId,
      cpdId: cp.cpdId,
      external: cp.external,
      ...(cp.vnfExtCpId ? { vnfExtCpId: cp.vnfExtCpId } : {}),
      ...counters,
    };
  });
}

/**
 * The figures of the targets' VNFCs from a Prometheus. A series belongs to the VNFC whose resource
 * id is the value of one of its labels; a counter series to the CP its `interface` label names (see
 * interfaceNames). A VNFC no query has a series of is unavailable. A server that cannot be reached,
 * refuses a query or answers something else than an instant vector fails the whole read
 * (PrometheusError): that is the operator's configuration, not one VNFC.
 */
export async function measureViaPrometheus(server: PrometheusServer, targets: MeasureTarget[], options: PrometheusMeasureOptions = {}): Promise<MeasureReport> {
  const at = options.at ?? new Date();
  const call = { at, policy: options.policy ?? egressPolicyFromEnv(), timeoutMs: options.timeoutMs ?? PROMETHEUS_TIMEOUT_MS };
  const defaults = defaultPrometheusQueries(options.vimType);
  const queries = PROMETHEUS_QUERY_NAMES.flatMap((name) => {
    const promql = server.queries?.[name] ?? defaults[name];
    return promql.trim() ? [[name, promql] as const] : [];
  });
  const vnfcs = targets.flatMap((target) => target.vnfcs.map((vnfc) => ({ target, vnfc })));
  // Resource id -> the places in `vnfcs` of the VNFCs it is (one, unless two instances record the same).
  const byResource = new Map<string, number[]>();
  for (const [index, { vnfc }] of vnfcs.entries()) byResource.set(vnfc.resourceId, [...(byResource.get(vnfc.resourceId) ?? []), index]);

  // Per VNFC (by its place in `vnfcs`) and query: the series that name its resource.
  const found = vnfcs.map(() => new Map<PrometheusQueryName, PrometheusSeries[]>());
  let apiCalls = 0;
  try {
    for (const ids of idChunks([...byResource.keys()], options.maxIdsLength)) {
      await Promise.all(
        queries.map(async ([name, promql]) => {
          apiCalls++;
          // A function, so nothing in the ids reads as a replacement pattern.
          const series = await queryPrometheus(
            server,
            promql.replaceAll('$ids', () => ids),
            { ...call, what: name },
          );
          for (const item of series) {
            const owners = new Set(Object.values(item.metric).flatMap((value) => byResource.get(value) ?? []));
            for (const owner of owners) {
              const own = found[owner] as Map<PrometheusQueryName, PrometheusSeries[]>;
              own.set(name, [...(own.get(name) ?? []), item]);
            }
          }
        }),
      );
    }
  } catch (error) {
    if (error instanceof PrometheusError) error.apiCalls = apiCalls;
    throw error;
  }

  const report: MeasureReport = { results: [], unavailable: [], apiCalls };
  vnfcs.forEach(({ target, vnfc }, index) => {
    const own = found[index] as Map<PrometheusQueryName, PrometheusSeries[]>;
    if (own.size === 0) {
      report.unavailable.push({
        vnfInstanceId: target.vnfInstanceId,
        vnfcResourceInfoId: vnfc.vnfcResourceInfoId,
        reason: `Prometheus has no series of ${vnfc.resourceId}: its exporter does not report it (yet), or it no longer exists`,
      });
      return;
    }
    const measurement: VnfcMeasurement = {
      vnfInstanceId: target.vnfInstanceId,
      vnfcResourceInfoId: vnfc.vnfcResourceInfoId,
      vduId: vnfc.vduId,
      resourceId: vnfc.resourceId,
      at: at.toISOString(),
      cps: cpCounters(vnfc, Object.fromEntries(COUNTERS.map((counter) => [counter, own.get(counter) ?? []])) as Record<Counter, PrometheusSeries[]>),
    };
    for (const [name, field] of Object.entries(GAUGES) as Array<[keyof typeof GAUGES, (typeof GAUGES)[keyof typeof GAUGES]]>) {
      // More than one series (a query without `by`): the busiest is the VNFC's figure.
      const values = (own.get(name) ?? []).map((item) => Number(item.value[1])).filter(Number.isFinite);
      if (values.length) measurement[field] = Math.min(100, Math.max(0, Math.max(...values)));
    }
    report.results.push(measurement);
  });
  return report;
}

// ---------------------------------------------------------------------------------------------
// Where the Prometheus is: Tacker's prometheus plugin convention

type Info = Record<string, unknown>;
const record = (value: unknown): Info | undefined => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Info) : undefined);
const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);

/**
 * The Prometheus a `monitoring` object names, in the shape Tacker's prometheus plugin reads from a
 * PM job's metadata: monitorName "prometheus", driverType "external", targetsInfo[]. Tacker talks to
 * the server over SSH (to upload rules) and its reload endpoint; what is read here is the HTTP API:
 * a target's prometheusApiEndpoint, else its prometheusReloadApiEndpoint without /-/reload. Its
 * authInfo's bearer_token or basic_auth {username, password} authenticate the queries (ssh_username
 * and ssh_password are SSH's, never sent). `queries` beside targetsInfo replaces default queries.
 */
function serverFrom(monitoring: unknown): PrometheusServer | undefined {
  const info = record(monitoring);
  if (!info || text(info.monitorName)?.toLowerCase() !== 'prometheus') return undefined;
  const driverType = text(info.driverType);
  if (driverType !== undefined && driverType !== 'external') return undefined;
  const targets = Array.isArray(info.targetsInfo) ? info.targetsInfo.map(record).filter((target): target is Info => !!target) : [];
  for (const target of targets) {
    const url = text(target.prometheusApiEndpoint) ?? text(target.prometheusReloadApiEndpoint)?.replace(/\/-\/reload\/?$/, '');
    if (!url) continue;
    const auth = record(target.authInfo);
    const basic = record(auth?.basic_auth);
    const bearerToken = text(auth?.bearer_token);
    const username = text(basic?.username);
    const password = typeof basic?.password === 'string' ? basic.password : undefined;
    const authentication = bearerToken ? { bearerToken } : username && password !== undefined ? { basic: { username, password } } : undefined;
    const given = record(info.queries);
    const queries = Object.fromEntries(PROMETHEUS_QUERY_NAMES.flatMap((name) => (typeof given?.[name] === 'string' ? [[name, given[name]]] : [])));
    return { url, ...(authentication ? { authentication } : {}), ...(Object.keys(queries).length ? { queries } : {}) };
  }
  return undefined;
}

/**
 * The Prometheus that measures an instance's VNFCs: the one its metadata.monitoring names, else the
 * one its VIM's extra.monitoring names; undefined when neither does (the VIM driver measures then).
 */
export function prometheusFrom(
  vimExtra: Record<string, unknown> | undefined,
  instanceMetadata: Record<string, unknown> | undefined,
): PrometheusServer | undefined {
  return serverFrom(instanceMetadata?.monitoring) ?? serverFrom(vimExtra?.monitoring);
}

// ---------------------------------------------------------------------------------------------
// One VIM's collection: some instances through a Prometheus, the others through the VIM driver

/** An instance to measure, and the metadata it records (where metadata.monitoring may name its Prometheus). */
export interface MeasuredInstance {
  target: MeasureTarget;
  metadata?: Record<string, unknown>;
}

/**
 * The targets of one VIM's instances, by who measures them: each Prometheus named (the instance's,
 * else the VIM's; instances naming the same server share its queries), and the VIM driver for the rest.
 */
export function prometheusGroups(
  vimExtra: Record<string, unknown> | undefined,
  instances: MeasuredInstance[],
): { prometheus: Array<{ server: PrometheusServer; targets: MeasureTarget[] }>; driver: MeasureTarget[] } {
  const groups = new Map<string, { server: PrometheusServer; targets: MeasureTarget[] }>();
  const driver: MeasureTarget[] = [];
  for (const { target, metadata } of instances) {
    const server = prometheusFrom(vimExtra, metadata);
    if (!server) {
      driver.push(target);
      continue;
    }
    const key = JSON.stringify([server.url, server.authentication, server.queries]);
    const group = groups.get(key) ?? { server, targets: [] };
    group.targets.push(target);
    groups.set(key, group);
  }
  return { prometheus: [...groups.values()], driver };
}

/**
 * One VIM's MeasureReport, for the PM collector: the instances a Prometheus measures through it
 * (queries of the VIM's type), the rest through `driverMeasure` (the driver's measure on the
 * connection), merged. A Prometheus that fails leaves its instances' VNFCs unavailable with its
 * reason and the others measured; the driver failing fails the whole VIM, as it does without Prometheus.
 */
export async function measureVim(
  vim: { vimType: string; extra?: Record<string, unknown> },
  instances: MeasuredInstance[],
  driverMeasure: (targets: MeasureTarget[]) => Promise<MeasureReport>,
  options: Omit<PrometheusMeasureOptions, 'vimType'> = {},
): Promise<MeasureReport> {
  const { prometheus, driver } = prometheusGroups(vim.extra, instances);
  const reports = await Promise.all([
    driver.length ? driverMeasure(driver) : undefined,
    ...prometheus.map(({ server, targets }) =>
      measureViaPrometheus(server, targets, { ...options, vimType: vim.vimType }).catch(
        (error: unknown): MeasureReport => ({
          results: [],
          unavailable: targets.flatMap((target) =>
            target.vnfcs.map((vnfc) => ({
              vnfInstanceId: target.vnfInstanceId,
              vnfcResourceInfoId: vnfc.vnfcResourceInfoId,
              reason: (error as Error).message,
            })),
          ),
          apiCalls: error instanceof PrometheusError ? (error.apiCalls ?? 0) : 0,
        }),
      ),
    ),
  ]);
  const merged: MeasureReport = { results: [], unavailable: [], apiCalls: 0 };
  for (const report of reports) {
    if (!report) continue;
    merged.results.push(...report.results);
    merged.unavailable.push(...report.unavailable);
    merged.apiCalls += report.apiCalls;
  }
  return merged;
}

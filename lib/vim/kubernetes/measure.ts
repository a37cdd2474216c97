// VNFC performance on a Kubernetes VIM, from metrics-server (metrics.k8s.io/v1beta1 PodMetrics):
// one metrics list and one pod list per namespace answer for every VNFC of every instance there.
// A pod's CPU and memory usage is a share of what its containers may use: their limits, else their
// requests, else one core of CPU and the node's allocatable memory (a container bound by nothing
// can take all of it; the nodes are listed once, and only then). metrics.k8s.io has no network
// counters: Kubernetes tells a pod's traffic only through each kubelet's /stats/summary (one call
// per node, through the API server's node proxy), which this driver does not read, so CPs are
// reported without counters. Disk usage likewise has no source here and stays absent.
import type { CpCounters, MeasureReport, MeasureTarget, VimConnection, VnfcMeasurement } from '#lib/vim/driver.ts';
import { KubeClient, statusOf, type KubeObject } from './client.ts';
import { stoppedPods } from './operate.ts';
import { stateOf } from './state.ts';
import { nameOf } from './workloads.ts';

type Info = Record<string, unknown>;

const METRICS_API = 'metrics.k8s.io/v1beta1';

const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };

/**
 * A Kubernetes resource quantity in base units (cores, bytes): "250m" is 0.25, "2127180n"
 * 0.00212718, "64Mi" 67108864, "1e3" 1000, "1.5G" 1.5e9. Undefined for anything that is not one.
 */
export function parseQuantity(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([eE][+-]?\d+)|([a-zA-Z]*))$/.exec(value.trim());
  if (!match) return undefined;
  const [, digits, exponent, suffix = ''] = match;
  const scale = exponent !== undefined ? 10 ** Number(exponent.slice(1)) : (DECIMAL[suffix] ?? BINARY[suffix]);
  if (scale === undefined) return undefined;
  const parsed = Number(digits) * scale;
  return Number.isFinite(parsed) ? parsed : undefined;
}

/** What a container may use of a resource: its limit, else its request. */
function boundOf(container: Info, resource: 'cpu' | 'memory'): number | undefined {
  const resources = (container.resources ?? {}) as Info;
  const limit = parseQuantity(((resources.limits ?? {}) as Info)[resource]);
  if (limit !== undefined && limit > 0) return limit;
  const request = parseQuantity(((resources.requests ?? {}) as Info)[resource]);
  return request !== undefined && request > 0 ? request : undefined;
}

const percent = (used: number, of: number): number => Math.min(100, Math.max(0, (used / of) * 100));

/**
 * A pod's CPU and memory usage in percent of what its containers may use together (see the module
 * comment); `nodeMemory` is the allocatable memory of the pod's node, when known. A gauge is absent
 * when metrics-server has no sample of it, or nothing bounds a container's memory and the node's is unknown.
 */
export function podUsage(pod: KubeObject, metrics: KubeObject, nodeMemory: number | undefined): { cpuUsagePercent?: number; memoryUsagePercent?: number } {
  const specs = new Map((((pod.spec as Info | undefined)?.containers ?? []) as Info[]).map((container) => [String(container.name), container]));
  let cpu = { used: 0, of: 0, known: true };
  let memory = { used: 0, of: 0, known: true };
  const sampled = ((metrics.containers ?? []) as Info[]).filter((container) => specs.has(String(container.name)));
  for (const sample of sampled) {
    const spec = specs.get(String(sample.name)) as Info;
    const usage = (sample.usage ?? {}) as Info;
    const cores = parseQuantity(usage.cpu);
    const bytes = parseQuantity(usage.memory);
    const cpuBound = boundOf(spec, 'cpu') ?? 1;
    const memoryBound = boundOf(spec, 'memory') ?? nodeMemory;
    cpu = cores === undefined ? { ...cpu, known: false } : { used: cpu.used + cores, of: cpu.of + cpuBound, known: cpu.known };
    memory =
      bytes === undefined || memoryBound === undefined
        ? { ...memory, known: false }
        : { used: memory.used + bytes, of: memory.of + memoryBound, known: memory.known };
  }
  if (sampled.length === 0) return {};
  return {
    ...(cpu.known && cpu.of > 0 ? { cpuUsagePercent: percent(cpu.used, cpu.of) } : {}),
    ...(memory.known && memory.of > 0 ? { memoryUsagePercent: percent(memory.used, memory.of) } : {}),
  };
}

/** Whether some container of the pod has neither a memory limit nor a request (its share needs the node's memory). */
const needsNodeMemory = (pod: KubeObject): boolean =>
  (((pod.spec as Info | undefined)?.containers ?? []) as Info[]).some((container) => boundOf(container, 'memory') === undefined);

export async function kubernetesMeasure(vim: VimConnection, targets: MeasureTarget[]): Promise<MeasureReport> {
  const client = new KubeClient(vim);
  const byNamespace = new Map<string, MeasureTarget[]>();
  for (const target of targets) {
    const namespace = stateOf(target.state).namespace ?? 'default';
    byNamespace.set(namespace, [...(byNamespace.get(namespace) ?? []), target]);
  }
  // Service calls; discovery (once per API group in a client) is not counted, as in health().
  let apiCalls = 0;
  let nodes: Promise<Map<string, number>> | undefined;
  const nodeMemory = (): Promise<Map<string, number>> => {
    nodes ??= (async () => {
      apiCalls++;
      // A token confined to its namespaces may not list nodes: then such pods have no memory gauge.
      const listed = await client.list('v1', 'Node', undefined).catch(() => []);
      return new Map(
        listed.flatMap((node) => {
          const bytes = parseQuantity((((node.status as Info | undefined)?.allocatable ?? {}) as Info).memory);
          return bytes ? [[nameOf(node), bytes] as const] : [];
        }),
      );
    })();
    return nodes;
  };

  const report: MeasureReport = { results: [], unavailable: [], apiCalls: 0 };
  await Promise.all(
    [...byNamespace].map(async ([namespace, inNamespace]) => {
      let pods: KubeObject[];
      let metrics: KubeObject[] | undefined;
      try {
        [pods, metrics] = await Promise.all([client.list('v1', 'Pod', namespace), client.listIfServed(METRICS_API, 'PodMetrics', namespace)]);
      } catch (error) {
        // The API server refused (403 in this namespace, 503 from a metrics-server that is down): only
        // this namespace's VNFCs go unread. No answer at all is the whole VIM's failure.
        if (statusOf(error) === undefined) throw error;
        const reason = `cannot read namespace ${namespace}: ${error instanceof Error ? error.message : String(error)}`;
        for (const target of inNamespace)
          for (const vnfc of target.vnfcs)
            report.unavailable.push({ vnfInstanceId: target.vnfInstanceId, vnfcResourceInfoId: vnfc.vnfcResourceInfoId, reason });
        return;
      } finally {
        apiCalls += 2;
      }
      const live = new Map(pods.filter((pod) => !pod.metadata?.deletionTimestamp).map((pod) => [nameOf(pod), pod]));
      const samples = new Map((metrics ?? []).map((sample) => [nameOf(sample), sample]));
      const at = new Date().toISOString();
      for (const target of inNamespace) {
        const stopped = stoppedPods(target.state);
        for (const vnfc of target.vnfcs) {
          const unavailable = (reason: string) =>
            report.unavailable.push({ vnfInstanceId: target.vnfInstanceId, vnfcResourceInfoId: vnfc.vnfcResourceInfoId, reason });
          const pod = live.get(vnfc.resourceId);
          if (!metrics) {
            unavailable(`the cluster does not serve ${METRICS_API} (metrics-server is not installed)`);
            continue;
          }
          if (!pod) {
            unavailable(
              stopped.has(vnfc.resourceId)
                ? `pod ${vnfc.resourceId} is stopped: an OPERATE scaled its workload to 0`
                : `pod ${vnfc.resourceId} no longer exists in namespace ${namespace}`,
            );
            continue;
          }
          const sample = samples.get(vnfc.resourceId);
          if (!sample) {
            // metrics-server leaves out a pod until every container of it has run through a scrape.
            unavailable(
              `metrics-server has no sample of pod ${vnfc.resourceId} (${String((pod.status as Info | undefined)?.phase ?? 'Unknown')}, or just started)`,
            );
            continue;
          }
          const nodeName = (pod.spec as Info | undefined)?.nodeName;
          const memory = needsNodeMemory(pod) && typeof nodeName === 'string' ? (await nodeMemory()).get(nodeName) : undefined;
          const cps = vnfc.cps.map(
            (cp): CpCounters => ({
              cpInstanceId: cp.cpInstanceId,
              cpdId: cp.cpdId,
              external: cp.external,
              ...(cp.vnfExtCpId ? { vnfExtCpId: cp.vnfExtCpId } : {}),
            }),
          );
          const measurement: VnfcMeasurement = {
            vnfInstanceId: target.vnfInstanceId,
            vnfcResourceInfoId: vnfc.vnfcResourceInfoId,
            vduId: vnfc.vduId,
            resourceId: vnfc.resourceId,
            at: typeof sample.timestamp === 'string' && !Number.isNaN(Date.parse(sample.timestamp)) ? new Date(sample.timestamp).toISOString() : at,
            ...podUsage(pod, sample, memory),
            cps,
          };
          report.results.push(measurement);
        }
      }
    }),
  );
  report.apiCalls = apiCalls;
  return report;
}

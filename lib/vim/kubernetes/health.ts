// VNFC health on a Kubernetes VIM: one pod list per namespace answers for every VNFC of every
// instance there. A pod that is gone, Failed, or Running but not Ready (a container in
// CrashLoopBackOff, ImagePullBackOff, a failing readiness probe) is a fault; a Pending pod that has
// not started yet is not (its scheduling is the workload's business, and it has a VNFC only once
// an operation recorded it). A VNFC whose workload an OPERATE stopped has no pod, on purpose: healthy.
import type { HealthReport, HealthTarget, VimConnection, VnfcHealth } from '#lib/vim/driver.ts';
import { KubeClient, type KubeObject } from './client.ts';
import { stoppedPods } from './operate.ts';
import { stateOf } from './state.ts';

type Info = Record<string, unknown>;

function waitingReason(pod: KubeObject): string | undefined {
  const statuses = ((pod.status as Info | undefined)?.containerStatuses ?? []) as Info[];
  for (const status of statuses) {
    const waiting = (status.state as Info | undefined)?.waiting as Info | undefined;
    if (waiting?.reason) return `${String(status.name)}: ${String(waiting.reason)}${waiting.message ? ` (${String(waiting.message)})` : ''}`;
  }
  return undefined;
}

function podHealth(pod: KubeObject): { healthy: boolean; reason: string; vimStatus: string } {
  const status = (pod.status ?? {}) as Info;
  const phase = String(status.phase ?? 'Unknown');
  const name = String((pod.metadata as Info | undefined)?.name);
  const ready = ((status.conditions ?? []) as Info[]).find((c) => c.type === 'Ready')?.status === 'True';
  const waiting = waitingReason(pod);
  if (phase === 'Failed' || phase === 'Unknown') return { healthy: false, vimStatus: phase, reason: `pod ${name} is ${phase}${waiting ? `; ${waiting}` : ''}` };
  if (phase === 'Running' && !ready)
    return {
      healthy: false,
      vimStatus: waiting?.includes('CrashLoopBackOff') ? 'CrashLoopBackOff' : 'NotReady',
      reason: `pod ${name} is Running but not Ready${waiting ? `; ${waiting}` : ''}`,
    };
  if (phase === 'Pending' && waiting && /BackOff|ErrImagePull/.test(waiting))
    return { healthy: false, vimStatus: 'Pending', reason: `pod ${name} is Pending; ${waiting}` };
  return { healthy: true, vimStatus: phase, reason: `pod ${name} is ${phase}${ready ? ' and Ready' : ''}` };
}

export async function kubernetesHealth(vim: VimConnection, targets: HealthTarget[]): Promise<HealthReport> {
  const client = new KubeClient(vim);
  const byNamespace = new Map<string, HealthTarget[]>();
  for (const target of targets) {
    const namespace = stateOf(target.state).namespace ?? 'default';
    byNamespace.set(namespace, [...(byNamespace.get(namespace) ?? []), target]);
  }
  let apiCalls = 0;
  const results: VnfcHealth[] = [];
  await Promise.all(
    [...byNamespace].map(async ([namespace, inNamespace]) => {
      const pods = await client.list('v1', 'Pod', namespace);
      apiCalls++;
      const byName = new Map(
        pods.filter((pod) => !(pod.metadata as Info | undefined)?.deletionTimestamp).map((pod) => [String((pod.metadata as Info).name), pod]),
      );
      for (const target of inNamespace) {
        const stopped = stoppedPods(target.state);
        for (const vnfc of target.vnfcs) {
          const base = { vnfInstanceId: target.vnfInstanceId, vduId: vnfc.vduId, resourceId: vnfc.resourceId };
          const pod = byName.get(vnfc.resourceId);
          if (!pod && stopped.has(vnfc.resourceId)) {
            results.push({ ...base, healthy: true, reason: `pod ${vnfc.resourceId} is stopped: an OPERATE scaled its workload to 0` });
            continue;
          }
          if (!pod) {
            results.push({ ...base, healthy: false, fault: 'MISSING', reason: `pod ${vnfc.resourceId} no longer exists in namespace ${namespace}` });
            continue;
          }
          const health = podHealth(pod);
          results.push({ ...base, ...health, ...(health.healthy ? {} : { fault: 'FAILED' as const }) });
        }
      }
    }),
  );
  return { results, apiCalls };
}

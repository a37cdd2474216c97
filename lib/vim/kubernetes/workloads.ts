// Workloads and their pods as the driver waits on them: which pods a workload owns (through its
// ReplicaSets for a Deployment), whether it has rolled out the way `kubectl rollout status` decides
// it, and the reason a pod will not start on its own (an image that cannot be pulled, a container
// that keeps crashing), which fails the operation with the pod's own words.
import type { KubeClient, KubeObject } from './client.ts';
import { VNF_INSTANCE_LABEL } from './manifests.ts';
import { isRecord as isObj } from '#lib/json.ts';

type Json = Record<string, unknown>;

const obj = (value: unknown): Json => (isObj(value) ? value : {});
const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

export const nameOf = (object: KubeObject): string => String(object.metadata?.name ?? '');
export const uidOf = (object: KubeObject): string | undefined => str(object.metadata?.uid);
export const isTerminating = (object: KubeObject): boolean => object.metadata?.deletionTimestamp !== undefined && object.metadata?.deletionTimestamp !== null;
/** The pod's addresses on the cluster network (status.podIPs, else status.podIP). */
export function podIps(pod: KubeObject): string[] {
  const status = obj(pod.status);
  const listed = Array.isArray(status.podIPs)
    ? status.podIPs
        .filter(isObj)
        .map((entry) => String(entry.ip ?? ''))
        .filter(Boolean)
    : [];
  return listed.length ? listed : str(status.podIP) ? [String(status.podIP)] : [];
}

/** Container states from which a pod does not recover by waiting. */
const STUCK_REASONS = new Set(['ImagePullBackOff', 'ErrImagePull', 'CrashLoopBackOff', 'InvalidImageName', 'ErrImageNeverPull']);

/** Why the pod cannot come up, as `pod <name>: container <c>: <Reason>: <message>`, or undefined. */
export function podFailure(pod: KubeObject): string | undefined {
  const status = obj(pod.status);
  if (status.phase === 'Failed') {
    return `pod ${nameOf(pod)}: Failed${str(status.reason) ? `: ${String(status.reason)}` : ''}${str(status.message) ? `: ${String(status.message)}` : ''}`;
  }
  const groups: Array<[string, unknown]> = [
    ['init container', status.initContainerStatuses],
    ['container', status.containerStatuses],
  ];
  for (const [what, statuses] of groups) {
    for (const container of Array.isArray(statuses) ? statuses.filter(isObj) : []) {
      const waiting = obj(obj(container.state).waiting);
      const reason = str(waiting.reason);
      if (reason && STUCK_REASONS.has(reason)) {
        return `pod ${nameOf(pod)}: ${what} ${String(container.name ?? '')}: ${reason}${str(waiting.message) ? `: ${String(waiting.message)}` : ''}`;
      }
    }
  }
  return undefined;
}

export function isPodReady(pod: KubeObject): boolean {
  const status = obj(pod.status);
  const conditions = Array.isArray(status.conditions) ? status.conditions.filter(isObj) : [];
  return status.phase === 'Running' && conditions.some((condition) => condition.type === 'Ready' && condition.status === 'True');
}

/** The ordinal of a StatefulSet pod (`web-2` -> 2). */
const ordinalOf = (pod: KubeObject): number => Number(/-(\d+)$/.exec(nameOf(pod))?.[1] ?? Number.MAX_SAFE_INTEGER);

/**
 * Pods oldest first: by ordinal for a StatefulSet (it removes the highest first, so the newest is
 * what a scale-in takes), else by creation time, then name.
 */
export function sortPods(kind: string, pods: KubeObject[]): KubeObject[] {
  const created = (pod: KubeObject): string => String(pod.metadata?.creationTimestamp ?? '');
  return [...pods].sort(
    (a, b) => (kind === 'StatefulSet' ? ordinalOf(a) - ordinalOf(b) : 0) || created(a).localeCompare(created(b)) || nameOf(a).localeCompare(nameOf(b)),
  );
}

/** A workload's spec.selector as a label selector string, narrowed to the instance's own pods. */
export function selectorOf(workload: KubeObject, labelValue: string): string {
  const selector = obj(obj(workload.spec).selector);
  const parts = Object.entries(obj(selector.matchLabels)).map(([key, value]) => `${key}=${String(value)}`);
  for (const expression of Array.isArray(selector.matchExpressions) ? selector.matchExpressions.filter(isObj) : []) {
    const key = String(expression.key);
    const values = Array.isArray(expression.values) ? expression.values.map(String).join(',') : '';
    switch (expression.operator) {
      case 'In':
        parts.push(`${key} in (${values})`);
        break;
      case 'NotIn':
        parts.push(`${key} notin (${values})`);
        break;
      case 'Exists':
        parts.push(key);
        break;
      case 'DoesNotExist':
        parts.push(`!${key}`);
        break;
      default:
        break;
    }
  }
  parts.push(`${VNF_INSTANCE_LABEL}=${labelValue}`);
  return parts.join(',');
}

const controllerUid = (object: KubeObject): string | undefined => {
  const refs = Array.isArray(object.metadata?.ownerReferences) ? object.metadata.ownerReferences : [];
  return refs.find((ref) => ref.controller)?.uid;
};

const revisionOf = (object: KubeObject): number => Number(object.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? 0);

export interface WorkloadPods {
  /** Every pod the workload owns, terminating ones included, oldest first. */
  pods: KubeObject[];
  /** Pods of a Deployment's older ReplicaSets (a rollout not yet finished). */
  stale: number;
}

/** The pods a workload owns (for a Deployment, through its ReplicaSets); a bare Pod is its own. */
export async function podsOf(client: KubeClient, workload: KubeObject, labelValue: string): Promise<WorkloadPods> {
  const kind = String(workload.kind);
  if (kind === 'Pod') return { pods: [workload], stale: 0 };
  const namespace = str(workload.metadata?.namespace);
  const labelSelector = selectorOf(workload, labelValue);
  const all = await client.list('v1', 'Pod', namespace, { labelSelector });
  if (kind !== 'Deployment')
    return {
      pods: sortPods(
        kind,
        all.filter((pod) => controllerUid(pod) === uidOf(workload)),
      ),
      stale: 0,
    };
  const sets = (await client.list('apps/v1', 'ReplicaSet', namespace, { labelSelector })).filter((set) => controllerUid(set) === uidOf(workload));
  const wanted = revisionOf(workload);
  const newest = sets.find((set) => wanted > 0 && revisionOf(set) === wanted) ?? [...sets].sort((a, b) => revisionOf(b) - revisionOf(a))[0];
  const owners = new Set(sets.map(uidOf));
  const pods = all.filter((pod) => owners.has(controllerUid(pod)));
  return { pods: sortPods(kind, pods), stale: pods.filter((pod) => controllerUid(pod) !== (newest && uidOf(newest))).length };
}

export type Rollout = { status: 'DONE' } | { status: 'IN_PROGRESS'; waiting: string } | { status: 'FAILED'; reason: string };

const waiting = (workload: KubeObject, what: string): Rollout => ({ status: 'IN_PROGRESS', waiting: `${String(workload.kind)} ${nameOf(workload)}: ${what}` });

/**
 * Whether the workload has rolled out: its controller saw the latest spec and reports every
 * replica updated, ready and available (the checks `kubectl rollout status` makes), and the pods
 * themselves agree: as many as wanted, none terminating or left from an older template, all Ready.
 */
export function rolloutOf(workload: KubeObject, { pods, stale }: WorkloadPods): Rollout {
  const failure = pods.map(podFailure).find((reason) => reason !== undefined);
  if (failure) return { status: 'FAILED', reason: failure };
  const kind = String(workload.kind);
  const spec = obj(workload.spec);
  const status = obj(workload.status);
  if (kind !== 'Pod' && count(status.observedGeneration) < count(workload.metadata?.generation))
    return waiting(workload, 'the controller has not observed the latest spec');
  let want: number;
  switch (kind) {
    case 'Deployment': {
      const conditions = Array.isArray(status.conditions) ? status.conditions.filter(isObj) : [];
      const stalled = conditions.find((condition) => condition.type === 'Progressing' && condition.reason === 'ProgressDeadlineExceeded');
      if (stalled) return { status: 'FAILED', reason: `Deployment ${nameOf(workload)}: ${String(stalled.message ?? 'progress deadline exceeded')}` };
      want = typeof spec.replicas === 'number' ? spec.replicas : 1;
      for (const field of ['updatedReplicas', 'replicas', 'readyReplicas', 'availableReplicas']) {
        if (count(status[field]) !== want) return waiting(workload, `${field} ${count(status[field])} of ${want}`);
      }
      if (stale > 0) return waiting(workload, `${stale} pod(s) of an older ReplicaSet remain`);
      break;
    }
    case 'StatefulSet': {
      want = typeof spec.replicas === 'number' ? spec.replicas : 1;
      if (count(status.readyReplicas) < want) return waiting(workload, `readyReplicas ${count(status.readyReplicas)} of ${want}`);
      if (status.availableReplicas !== undefined && count(status.availableReplicas) < want)
        return waiting(workload, `availableReplicas ${count(status.availableReplicas)} of ${want}`);
      const strategy = obj(spec.updateStrategy);
      // Revisions (and with them updatedReplicas) are what a RollingUpdate reports; OnDelete has no rollout to wait for.
      if (strategy.type !== 'OnDelete' && status.updateRevision !== undefined) {
        const partition = count(obj(strategy.rollingUpdate).partition);
        if (count(status.updatedReplicas) < want - partition)
          return waiting(workload, `updatedReplicas ${count(status.updatedReplicas)} of ${want - partition}`);
        if (partition === 0 && status.currentRevision !== status.updateRevision) return waiting(workload, 'the update revision is not current yet');
      }
      break;
    }
    case 'DaemonSet': {
      want = count(status.desiredNumberScheduled);
      if (status.updatedNumberScheduled !== undefined && count(status.updatedNumberScheduled) < want)
        return waiting(workload, `updatedNumberScheduled ${count(status.updatedNumberScheduled)} of ${want}`);
      if (count(status.numberAvailable) < want) return waiting(workload, `numberAvailable ${count(status.numberAvailable)} of ${want}`);
      break;
    }
    case 'ReplicaSet': {
      want = typeof spec.replicas === 'number' ? spec.replicas : 1;
      for (const field of ['replicas', 'readyReplicas', 'availableReplicas']) {
        if (count(status[field]) !== want) return waiting(workload, `${field} ${count(status[field])} of ${want}`);
      }
      break;
    }
    default:
      want = 1;
  }
  if (pods.length !== want) return waiting(workload, `${pods.length} pod(s), ${want} wanted`);
  const terminating = pods.filter(isTerminating);
  if (terminating.length) return waiting(workload, `pod(s) ${terminating.map(nameOf).join(', ')} terminating`);
  const unready = pods.filter((pod) => !isPodReady(pod));
  if (unready.length) return waiting(workload, `pod(s) ${unready.map(nameOf).join(', ')} not ready`);
  return { status: 'DONE' };
}

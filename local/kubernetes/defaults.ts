// Per-kind defaulting as kube-apiserver applies it (pods, Deployments, StatefulSets, DaemonSets,
// PersistentVolumeClaims), and the small pieces the API handlers and every controller share: the
// resource table by name, pod readiness, pods stamped from a template, intstr resolution and the
// template hash that names ReplicaSets and ControllerRevisions.
import { createHash } from 'node:crypto';
import { canonicalJson, clone, isObject, RESOURCES, type Json, type JsonObject, type KObject, type OwnerReference, type ResourceType } from './store.ts';

const typeOf = (resource: string): ResourceType => RESOURCES.find((r) => r.resource === resource)!;
export const T = {
  namespaces: typeOf('namespaces'),
  configmaps: typeOf('configmaps'),
  secrets: typeOf('secrets'),
  services: typeOf('services'),
  pods: typeOf('pods'),
  nodes: typeOf('nodes'),
  persistentvolumeclaims: typeOf('persistentvolumeclaims'),
  deployments: typeOf('deployments'),
  replicasets: typeOf('replicasets'),
  statefulsets: typeOf('statefulsets'),
  daemonsets: typeOf('daemonsets'),
  controllerrevisions: typeOf('controllerrevisions'),
};

/** The kinds whose pods a controller keeps: what the API validates alike and what may be scaled. */
export const WORKLOADS: ResourceType[] = [T.deployments, T.replicasets, T.statefulsets, T.daemonsets];

/** What the API server fills into a new pod; the scheduler and kubelet add the rest. */
export function podDefaults(pod: KObject): void {
  const spec = pod.spec ?? (pod.spec = {});
  spec.restartPolicy ??= 'Always';
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.terminationGracePeriodSeconds ??= 30;
  if (Array.isArray(spec.containers)) {
    for (const c of spec.containers)
      if (isObject(c)) c.imagePullPolicy ??= String(c.image ?? '').endsWith(':latest') || !String(c.image ?? '').includes(':') ? 'Always' : 'IfNotPresent';
  }
  pod.status = { phase: 'Pending', qosClass: qosClassOf(spec) };
}

/** BestEffort without requests or limits, Guaranteed when every container's limits equal its requests. */
function qosClassOf(spec: JsonObject): string {
  const resources = [...(Array.isArray(spec.containers) ? spec.containers : []), ...(Array.isArray(spec.initContainers) ? spec.initContainers : [])]
    .filter(isObject)
    .map((c) => (isObject(c.resources) ? c.resources : {}));
  const has = (r: JsonObject, k: string) => isObject(r[k]) && Object.keys(r[k]).length > 0;
  if (resources.every((r) => !has(r, 'requests') && !has(r, 'limits'))) return 'BestEffort';
  const guaranteed = resources.every((r) => {
    const limits = isObject(r.limits) ? r.limits : {};
    const requests = isObject(r.requests) ? r.requests : limits;
    return ['cpu', 'memory'].every((k) => limits[k] !== undefined && requests[k] === limits[k]);
  });
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

export function deploymentDefaults(d: KObject): void {
  const spec = d.spec ?? (d.spec = {});
  spec.replicas ??= 1;
  spec.revisionHistoryLimit ??= 10;
  spec.progressDeadlineSeconds ??= 600;
  const strategy = isObject(spec.strategy) ? spec.strategy : (spec.strategy = {});
  strategy.type ??= 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = isObject(strategy.rollingUpdate) ? strategy.rollingUpdate : (strategy.rollingUpdate = {});
    ru.maxSurge ??= '25%';
    ru.maxUnavailable ??= '25%';
  }
  d.status ??= {};
}

export function statefulSetDefaults(s: KObject): void {
  const spec = s.spec ?? (s.spec = {});
  spec.replicas ??= 1;
  spec.podManagementPolicy ??= 'OrderedReady';
  spec.revisionHistoryLimit ??= 10;
  const strategy = isObject(spec.updateStrategy) ? spec.updateStrategy : (spec.updateStrategy = {});
  strategy.type ??= 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = isObject(strategy.rollingUpdate) ? strategy.rollingUpdate : (strategy.rollingUpdate = {});
    ru.partition ??= 0;
  }
  const retention = isObject(spec.persistentVolumeClaimRetentionPolicy)
    ? spec.persistentVolumeClaimRetentionPolicy
    : (spec.persistentVolumeClaimRetentionPolicy = {});
  retention.whenDeleted ??= 'Retain';
  retention.whenScaled ??= 'Retain';
  s.status ??= { replicas: 0, availableReplicas: 0 };
}

export function daemonSetDefaults(ds: KObject): void {
  const spec = ds.spec ?? (ds.spec = {});
  spec.revisionHistoryLimit ??= 10;
  const strategy = isObject(spec.updateStrategy) ? spec.updateStrategy : (spec.updateStrategy = {});
  strategy.type ??= 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = isObject(strategy.rollingUpdate) ? strategy.rollingUpdate : (strategy.rollingUpdate = {});
    ru.maxUnavailable ??= 1;
    ru.maxSurge ??= 0;
  }
  ds.status ??= { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 };
}

/** A claim is bound at once to a volume of the default storage class. */
export function persistentVolumeClaimDefaults(pvc: KObject): void {
  const spec = pvc.spec ?? (pvc.spec = {});
  spec.accessModes ??= ['ReadWriteOnce'];
  spec.storageClassName ??= 'standard';
  spec.volumeMode ??= 'Filesystem';
  spec.volumeName ??= `pvc-${createHash('sha256')
    .update(`${pvc.metadata.namespace ?? ''}/${pvc.metadata.name}`)
    .digest('hex')
    .slice(0, 32)}`;
  const resources = isObject(spec.resources) ? spec.resources : {};
  const requests = isObject(resources.requests) ? resources.requests : {};
  pvc.status = { phase: 'Bound', accessModes: spec.accessModes, capacity: { storage: requests.storage ?? '1Gi' } };
}

export function isPodReady(pod: KObject): boolean {
  const conditions = pod.status?.conditions;
  return pod.status?.phase === 'Running' && Array.isArray(conditions) && conditions.some((c) => isObject(c) && c.type === 'Ready' && c.status === 'True');
}

export function containersOf(pod: KObject): JsonObject[] {
  const c = pod.spec?.containers;
  return Array.isArray(c) ? c.filter(isObject) : [];
}

export function num(v: Json | undefined, fallback: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}

/** intstr like "25%" or 1; surge rounds up and unavailability rounds down, as upstream does. */
export function resolveIntOrPercent(v: Json | undefined, total: number, roundUp: boolean, fallbackPercent = 25): number {
  if (typeof v === 'number') return v;
  const m = typeof v === 'string' ? v.match(/^(\d+)%$/) : null;
  const pct = m ? Number(m[1]) : fallbackPercent;
  const exact = (pct * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/** A stable 10-character hash of a pod template (key order aside), in the alphabet upstream's SafeEncodeString uses. */
export function templateHash(template: Json): string {
  const digest = createHash('sha256').update(canonicalJson(template)).digest();
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let s = '';
  for (let i = 0; i < 10; i++) s += alphabet[digest[i]! % alphabet.length];
  return s;
}

export function controllerRef(owner: KObject): OwnerReference {
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true };
}

/** A new pod from a controller's template: named `name` or generated from `generateName`, with extra labels. */
export function podFromTemplate(
  owner: KObject,
  template: Json | undefined,
  naming: { name: string } | { generateName: string },
  labels: Record<string, string> = {},
): KObject {
  const tpl = isObject(template) ? clone(template) : {};
  const tmeta = isObject(tpl.metadata) ? tpl.metadata : {};
  const pod: KObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'name' in naming ? naming.name : '',
      ...('generateName' in naming ? { generateName: naming.generateName } : {}),
      namespace: owner.metadata.namespace!,
      uid: '',
      resourceVersion: '',
      creationTimestamp: '',
      labels: { ...((isObject(tmeta.labels) ? tmeta.labels : {}) as Record<string, string>), ...labels },
      ...(isObject(tmeta.annotations) ? { annotations: tmeta.annotations as Record<string, string> } : {}),
      ownerReferences: [controllerRef(owner)],
    },
    spec: isObject(tpl.spec) ? tpl.spec : {},
  };
  podDefaults(pod);
  return pod;
}

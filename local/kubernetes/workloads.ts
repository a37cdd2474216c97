// The StatefulSet and DaemonSet controllers, after upstream's stateful_set_control.go and
// daemon_controller.go/update.go: ControllerRevisions per pod template, StatefulSet pods
// `<name>-<ordinal>` created and removed in order (OrderedReady) or all at once (Parallel), rolling
// updates from the highest ordinal down honouring the partition, one DaemonSet pod per eligible
// node with maxUnavailable/maxSurge rolling updates, and the status fields both report.
import { controllerRef, isPodReady, num, persistentVolumeClaimDefaults, podFromTemplate, resolveIntOrPercent, T, templateHash } from './defaults.ts';
import { DAEMON_TOLERATIONS, podFitsNode } from './nodes.ts';
import { clone, isObject, type Json, type JsonObject, type KObject, type ResourceType, type Store } from './store.ts';

/** What the workload controllers need from the controller manager. */
export interface WorkloadContext {
  store: Store;
  /** Objects of type `t` whose controller reference points at `owner`. */
  ownedBy(t: ResourceType, owner: KObject): KObject[];
  /** Makes `owner` the controller of the orphans of type `t` its selector matches (and `accept` takes). */
  adopt(owner: KObject, t: ResourceType, accept?: (o: KObject) => boolean): void;
}

const REVISION_LABEL = 'controller-revision-hash';

// ---------------------------------------------------------------------------------------------
// ControllerRevisions

interface Revisions {
  update: KObject;
  current: KObject;
}

const revisionNumber = (r: KObject): number => num(r.revision as Json | undefined, 0);

/** The template a revision recorded (its data is the patch `{spec: {template: {..., $patch: replace}}}`). */
function templateOf(revision: KObject): Json {
  const data = isObject(revision.data) ? revision.data : {};
  const template = isObject(data.spec) && isObject(data.spec.template) ? { ...data.spec.template } : {};
  delete template.$patch;
  return template;
}

/**
 * Finds or creates the revision of the owner's current template (renumbering it newest when the
 * template went back to an older one), finds the revision named in status.currentRevision, and
 * prunes unused revisions beyond revisionHistoryLimit.
 */
function syncRevisions(ctx: WorkloadContext, owner: KObject, liveHashes: Set<string>): Revisions {
  ctx.adopt(owner, T.controllerrevisions, (r) => r.metadata.name.startsWith(`${owner.metadata.name}-`));
  const spec = owner.spec ?? {};
  const template = spec.template ?? {};
  const hash = templateHash(template);
  const name = `${owner.metadata.name}-${hash}`;
  const all = ctx.ownedBy(T.controllerrevisions, owner).sort((a, b) => revisionNumber(a) - revisionNumber(b));
  const newest = Math.max(0, ...all.map(revisionNumber));
  let update = all.find((r) => r.metadata.name === name);
  if (!update) {
    const tmeta = isObject(template) && isObject(template.metadata) ? template.metadata : {};
    update = ctx.store.create(T.controllerrevisions, {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        name,
        namespace: owner.metadata.namespace!,
        uid: '',
        resourceVersion: '',
        creationTimestamp: '',
        labels: { ...((isObject(tmeta.labels) ? tmeta.labels : {}) as Record<string, string>), [REVISION_LABEL]: hash },
        ownerReferences: [controllerRef(owner)],
      },
      data: { spec: { template: { ...(isObject(template) ? template : {}), $patch: 'replace' } } },
      revision: newest + 1,
    });
  } else if (revisionNumber(update) < newest) {
    update = ctx.store.update(T.controllerrevisions, { ...clone(update), revision: newest + 1 });
  }
  const currentName = typeof owner.status?.currentRevision === 'string' ? owner.status.currentRevision : '';
  const current = all.find((r) => r.metadata.name === currentName && r.metadata.name !== name) ?? update;

  const keep = new Set([update.metadata.name, current.metadata.name]);
  const unused = all.filter(
    (r) => !keep.has(r.metadata.name) && !liveHashes.has(r.metadata.labels?.[REVISION_LABEL] ?? '') && !liveHashes.has(r.metadata.name),
  );
  const limit = num(spec.revisionHistoryLimit, 10);
  for (const r of unused.slice(0, Math.max(0, unused.length - limit))) ctx.store.delete(T.controllerrevisions, r.metadata.namespace, r.metadata.name);
  return { update, current };
}

const podRevision = (pod: KObject): string => pod.metadata.labels?.[REVISION_LABEL] ?? '';
const isDeleting = (o: KObject): boolean => o.metadata.deletionTimestamp !== undefined;

function writeStatus(ctx: WorkloadContext, t: ResourceType, owner: KObject, status: JsonObject): void {
  const fresh = ctx.store.get(t, owner.metadata.namespace, owner.metadata.name);
  if (fresh) ctx.store.update(t, { ...clone(fresh), status });
}

// ---------------------------------------------------------------------------------------------
// StatefulSet controller

function ordinalOf(sts: KObject, pod: KObject): number {
  const prefix = `${sts.metadata.name}-`;
  const rest = pod.metadata.name.startsWith(prefix) ? pod.metadata.name.slice(prefix.length) : '';
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : -1;
}

/** A StatefulSet being deleted is left alone: its pods and revisions are the garbage collector's. */
export function reconcileStatefulSet(ctx: WorkloadContext, sts: KObject): void {
  if (isDeleting(sts)) return;
  ctx.adopt(sts, T.pods, (pod) => ordinalOf(sts, pod) >= 0);
  const revisions = syncRevisions(ctx, sts, new Set(ctx.ownedBy(T.pods, sts).map(podRevision)));
  statefulSetStep(ctx, sts, revisions);
  statefulSetStatus(ctx, sts, revisions);
}

/** One pass of upstream's updateStatefulSet: create, then condemn, then roll; OrderedReady returns after each change. */
function statefulSetStep(ctx: WorkloadContext, sts: KObject, revisions: Revisions): void {
  const spec = sts.spec ?? {};
  const replicaCount = num(spec.replicas, 1);
  const monotonic = spec.podManagementPolicy !== 'Parallel';
  const strategy = isObject(spec.updateStrategy) ? spec.updateStrategy : {};
  const rolling = strategy.type !== 'OnDelete';
  const partition = rolling && isObject(strategy.rollingUpdate) ? num(strategy.rollingUpdate.partition, 0) : 0;

  const replicas = new Map<number, KObject>();
  const condemned: KObject[] = [];
  for (const pod of ctx.ownedBy(T.pods, sts)) {
    const ordinal = ordinalOf(sts, pod);
    if (ordinal < 0) continue;
    if (ordinal < replicaCount) replicas.set(ordinal, pod);
    else condemned.push(pod);
  }
  condemned.sort((a, b) => ordinalOf(sts, a) - ordinalOf(sts, b));

  for (let i = 0; i < replicaCount; i++) {
    let pod = replicas.get(i);
    const phase = pod?.status?.phase;
    if (pod && (phase === 'Failed' || phase === 'Succeeded')) {
      ctx.store.delete(T.pods, pod.metadata.namespace, pod.metadata.name);
      pod = undefined;
    }
    if (!pod) {
      // Below the partition a pod comes back at the current revision, from it upward at the update revision.
      const revision = rolling && i < partition ? revisions.current : revisions.update;
      replicas.set(i, createStatefulPod(ctx, sts, revision, i));
      if (monotonic) return;
      continue;
    }
    if (monotonic && (!isPodReady(pod) || isDeleting(pod))) return;
  }

  const ordered = [...Array(replicaCount).keys()].map((i) => replicas.get(i)).filter((p): p is KObject => p !== undefined);
  const firstUnhealthy = [...ordered, ...condemned].find((p) => !isPodReady(p));
  for (const pod of [...condemned].reverse()) {
    if (monotonic && !isPodReady(pod) && pod !== firstUnhealthy) return;
    ctx.store.delete(T.pods, pod.metadata.namespace, pod.metadata.name);
    if (monotonic) return;
  }

  // OnDelete leaves replacing pods to whoever deletes them.
  if (!rolling) return;
  for (let target = ordered.length - 1; target >= partition; target--) {
    const pod = ordered[target]!;
    if (podRevision(pod) !== revisions.update.metadata.name) {
      ctx.store.delete(T.pods, pod.metadata.namespace, pod.metadata.name);
      return;
    }
    if (!isPodReady(pod)) return;
  }
}

function createStatefulPod(ctx: WorkloadContext, sts: KObject, revision: KObject, ordinal: number): KObject {
  const spec = sts.spec ?? {};
  const name = `${sts.metadata.name}-${ordinal}`;
  const pod = podFromTemplate(
    sts,
    templateOf(revision),
    { name },
    {
      [REVISION_LABEL]: revision.metadata.name,
      'statefulset.kubernetes.io/pod-name': name,
      'apps.kubernetes.io/pod-index': String(ordinal),
    },
  );
  const podSpec = pod.spec!;
  podSpec.hostname = name;
  if (typeof spec.serviceName === 'string' && spec.serviceName !== '') podSpec.subdomain = spec.serviceName;
  const claims = Array.isArray(spec.volumeClaimTemplates) ? spec.volumeClaimTemplates.filter(isObject) : [];
  if (claims.length > 0) {
    const volumes = (Array.isArray(podSpec.volumes) ? podSpec.volumes.filter(isObject) : []).filter(
      (v) => !claims.some((c) => isObject(c.metadata) && c.metadata.name === v.name),
    );
    for (const claim of claims) {
      const claimName = ensureClaim(ctx, sts, claim, ordinal);
      volumes.push({ name: isObject(claim.metadata) ? String(claim.metadata.name) : '', persistentVolumeClaim: { claimName } });
    }
    podSpec.volumes = volumes;
  }
  return ctx.store.create(T.pods, pod);
}

/** The claim `<template>-<sts>-<ordinal>`, created when missing; kept after the StatefulSet unless whenDeleted is Delete. */
function ensureClaim(ctx: WorkloadContext, sts: KObject, claim: JsonObject, ordinal: number): string {
  const cmeta = isObject(claim.metadata) ? claim.metadata : {};
  const name = `${String(cmeta.name)}-${sts.metadata.name}-${ordinal}`;
  if (ctx.store.get(T.persistentvolumeclaims, sts.metadata.namespace, name)) return name;
  const spec = sts.spec ?? {};
  const retention = isObject(spec.persistentVolumeClaimRetentionPolicy) ? spec.persistentVolumeClaimRetentionPolicy : {};
  const selector = isObject(spec.selector) && isObject(spec.selector.matchLabels) ? spec.selector.matchLabels : {};
  const pvc: KObject = {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name,
      namespace: sts.metadata.namespace!,
      uid: '',
      resourceVersion: '',
      creationTimestamp: '',
      labels: { ...((isObject(cmeta.labels) ? cmeta.labels : {}) as Record<string, string>), ...(selector as Record<string, string>) },
      ...(retention.whenDeleted === 'Delete' ? { ownerReferences: [{ ...controllerRef(sts), controller: false }] } : {}),
    },
    spec: isObject(claim.spec) ? clone(claim.spec) : {},
  };
  persistentVolumeClaimDefaults(pvc);
  ctx.store.create(T.persistentvolumeclaims, pvc);
  return name;
}

/** Upstream's computeReplicaStatus plus completeRollingUpdate, fields in StatefulSetStatus order. */
function statefulSetStatus(ctx: WorkloadContext, sts: KObject, revisions: Revisions): void {
  const pods = ctx.ownedBy(T.pods, sts).filter((p) => !isDeleting(p));
  const replicas = pods.length;
  const ready = pods.filter(isPodReady).length;
  const updated = pods.filter((p) => podRevision(p) === revisions.update.metadata.name).length;
  let current = pods.filter((p) => podRevision(p) === revisions.current.metadata.name).length;
  let currentRevision = revisions.current.metadata.name;
  const strategy = isObject(sts.spec?.updateStrategy) ? sts.spec.updateStrategy : {};
  if (strategy.type !== 'OnDelete' && updated === replicas && ready === replicas) {
    current = updated;
    currentRevision = revisions.update.metadata.name;
  }
  const status: JsonObject = {
    observedGeneration: sts.metadata.generation ?? 1,
    replicas,
    ...(ready ? { readyReplicas: ready } : {}),
    ...(current ? { currentReplicas: current } : {}),
    ...(updated ? { updatedReplicas: updated } : {}),
    currentRevision,
    updateRevision: revisions.update.metadata.name,
    collisionCount: 0,
    availableReplicas: ready,
  };
  writeStatus(ctx, T.statefulsets, sts, status);
}

// ---------------------------------------------------------------------------------------------
// DaemonSet controller

/** The DaemonSet's pod spec as the controller stamps it on a node: pinned there, tolerating node trouble. */
function daemonPodSpec(template: Json | undefined): JsonObject {
  const spec = isObject(template) && isObject(template.spec) ? clone(template.spec) : {};
  const tolerations = Array.isArray(spec.tolerations) ? spec.tolerations : [];
  spec.tolerations = [...tolerations, ...DAEMON_TOLERATIONS.filter((d) => !tolerations.some((t) => isObject(t) && isObject(d) && t.key === d.key))];
  return spec;
}

/** A DaemonSet being deleted is left alone, like a StatefulSet. */
export function reconcileDaemonSet(ctx: WorkloadContext, ds: KObject, nodes: KObject[]): void {
  if (isDeleting(ds)) return;
  ctx.adopt(ds, T.pods);
  const pods = ctx.ownedBy(T.pods, ds).filter((p) => !isDeleting(p));
  const revisions = syncRevisions(ctx, ds, new Set(pods.map(podRevision)));
  const hash = revisions.update.metadata.labels?.[REVISION_LABEL] ?? '';
  const podSpec = daemonPodSpec(ds.spec?.template);
  const byNode = new Map<string, KObject[]>();
  for (const pod of pods) {
    const node = String(pod.spec?.nodeName ?? '');
    byNode.set(
      node,
      [...(byNode.get(node) ?? []), pod].sort(
        (a, b) => a.metadata.creationTimestamp.localeCompare(b.metadata.creationTimestamp) || a.metadata.uid.localeCompare(b.metadata.uid),
      ),
    );
  }
  const eligible = nodes.filter((n) => podFitsNode(podSpec, n));
  daemonSetStep(ctx, ds, eligible, nodes, byNode, hash, podSpec);
  daemonSetStatus(ctx, ds, eligible, nodes, hash);
}

function daemonSetStep(
  ctx: WorkloadContext,
  ds: KObject,
  eligible: KObject[],
  nodes: KObject[],
  byNode: Map<string, KObject[]>,
  hash: string,
  podSpec: JsonObject,
): void {
  const del = (p: KObject) => ctx.store.delete(T.pods, p.metadata.namespace, p.metadata.name);
  const eligibleNames = new Set(eligible.map((n) => n.metadata.name));
  // Pods on nodes that should not run one go; failed pods go and come back.
  for (const node of nodes) if (!eligibleNames.has(node.metadata.name)) for (const p of byNode.get(node.metadata.name) ?? []) del(p);
  const live = new Map<string, KObject[]>();
  for (const node of eligible) {
    const mine = byNode.get(node.metadata.name) ?? [];
    for (const p of mine.filter((p) => p.status?.phase === 'Failed')) del(p);
    live.set(
      node.metadata.name,
      mine.filter((p) => p.status?.phase !== 'Failed'),
    );
  }
  for (const node of eligible) if (live.get(node.metadata.name)!.length === 0) createDaemonPod(ctx, ds, node, hash, podSpec);

  const strategy = isObject(ds.spec?.updateStrategy) ? ds.spec.updateStrategy : {};
  if (strategy.type === 'OnDelete') return;
  const ru = isObject(strategy.rollingUpdate) ? strategy.rollingUpdate : {};
  const desired = eligible.length;
  const maxSurge = resolveIntOrPercent(ru.maxSurge, desired, true, 0);
  const maxUnavailable =
    maxSurge === 0 ? Math.max(1, resolveIntOrPercent(ru.maxUnavailable ?? 1, desired, true)) : resolveIntOrPercent(ru.maxUnavailable ?? 0, desired, true);
  const onNode = (node: KObject) => live.get(node.metadata.name) ?? [];
  let unavailable = eligible.filter((n) => !onNode(n).some(isPodReady)).length;
  let surging = eligible.filter((n) => onNode(n).some((p) => podRevision(p) === hash) && onNode(n).some((p) => podRevision(p) !== hash)).length;
  for (const node of eligible) {
    const pods = onNode(node);
    const fresh = pods.find((p) => podRevision(p) === hash);
    const old = pods.filter((p) => podRevision(p) !== hash);
    if (old.length === 0) continue;
    if (fresh) {
      // Surge finished on this node once its new pod is ready.
      if (isPodReady(fresh)) old.forEach(del);
      continue;
    }
    if (!old.some(isPodReady)) {
      old.forEach(del);
    } else if (maxSurge > 0) {
      if (surging < maxSurge) {
        createDaemonPod(ctx, ds, node, hash, podSpec);
        surging++;
      }
    } else if (unavailable < maxUnavailable) {
      old.forEach(del);
      unavailable++;
    }
  }
}

function createDaemonPod(ctx: WorkloadContext, ds: KObject, node: KObject, hash: string, podSpec: JsonObject): void {
  const template = isObject(ds.spec?.template) ? { ...ds.spec.template, spec: clone(podSpec) } : { spec: clone(podSpec) };
  const pod = podFromTemplate(
    ds,
    template,
    { generateName: `${ds.metadata.name}-` },
    {
      [REVISION_LABEL]: hash,
      'pod-template-generation': String(ds.metadata.generation ?? 1),
    },
  );
  const spec = pod.spec!;
  spec.nodeName = node.metadata.name;
  spec.affinity = {
    ...(isObject(spec.affinity) ? spec.affinity : {}),
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node.metadata.name] }] }],
      },
    },
  };
  ctx.store.create(T.pods, pod);
}

/** Upstream's updateDaemonSetStatus (the oldest pod on each node counts), fields in DaemonSetStatus order. */
function daemonSetStatus(ctx: WorkloadContext, ds: KObject, eligible: KObject[], nodes: KObject[], hash: string): void {
  const pods = ctx.ownedBy(T.pods, ds).filter((p) => !isDeleting(p));
  const onNode = (name: string) =>
    pods
      .filter((p) => p.spec?.nodeName === name)
      .sort((a, b) => a.metadata.creationTimestamp.localeCompare(b.metadata.creationTimestamp) || a.metadata.name.localeCompare(b.metadata.name));
  const eligibleNames = new Set(eligible.map((n) => n.metadata.name));
  let current = 0;
  let ready = 0;
  let updated = 0;
  for (const node of eligible) {
    const pod = onNode(node.metadata.name)[0];
    if (!pod) continue;
    current++;
    if (isPodReady(pod)) ready++;
    if (podRevision(pod) === hash) updated++;
  }
  const misscheduled = nodes.filter((n) => !eligibleNames.has(n.metadata.name) && onNode(n.metadata.name).length > 0).length;
  const desired = eligible.length;
  const status: JsonObject = {
    currentNumberScheduled: current,
    numberMisscheduled: misscheduled,
    desiredNumberScheduled: desired,
    numberReady: ready,
    observedGeneration: ds.metadata.generation ?? 1,
    ...(updated ? { updatedNumberScheduled: updated } : {}),
    ...(ready ? { numberAvailable: ready } : {}),
    ...(desired - ready ? { numberUnavailable: desired - ready } : {}),
  };
  writeStatus(ctx, T.daemonsets, ds, status);
}

// The Kubernetes infra driver: a CNF is the objects of the package's manifests, applied in one
// namespace in dependency order, each labelled with the VNF instance; a VDU is the workload whose
// metadata.name is the VDU's name (or the one a blue-green package change created for it, which the
// state records), and its VNFCs are that workload's pods. Steps never wait: start steps create,
// patch or delete and return, poll steps read rollouts. The driver state names only what was
// created (apiVersion, kind, namespace, name), and terminate also finds objects by the instance
// label, so a lost or partial state still leaves nothing behind. Package changes: change-package.ts.
import * as z from 'zod';
import { log } from '#lib/log.ts';
import { UnprocessableEntityError } from '#lib/sol/errors.ts';
import {
  tackerString,
  type CollectedResources,
  type DriverState,
  type FaultWording,
  type InfraDriver,
  type OperationContext,
  type Progress,
  type UpdateChange,
  type VimConnection,
  type VimCredentials,
  type VnfcHealth,
} from '#lib/vim/driver.ts';
import { desiredCapacity, flavourOf } from '#lib/vim/flavour.ts';
import { scalingOf, type Scaling } from '#lib/vim/scaling.ts';
import { changePoll, changeRollbackPoll, changeRollbackStart, changeStart, REVISION_LABEL } from './change-package.ts';
import { flavourPoll, flavourStart } from './change-flavour.ts';
import { describeRef, KubeClient, KubernetesError, statusOf, type KubeObject, type ObjectRef } from './client.ts';
import {
  defFilesOf,
  isClusterScoped,
  namespaceOf,
  prepareObjects,
  readManifests,
  vdusWithoutWorkload,
  REPLICATED_KINDS,
  VNF_INSTANCE_LABEL,
  WORKLOAD_KINDS,
  withZoneAffinity,
} from './manifests.ts';
import { applyObject, deleteObject, keyOf, labelOf, ownedBy, podRef, progressOf, refOf, removalOrder, rollouts } from './objects.ts';
import { currentDefFiles, grantedZones, lasting, stateOf, workloadRef, type KubernetesState, type ReplacedPod } from './state.ts';
import { isTerminating, nameOf, podIps, podsOf, uidOf } from './workloads.ts';
import { kubernetesHealth } from './health.ts';
import { kubernetesMeasure } from './measure.ts';
import { operatePoll, operateRefusal, operateStart, stoppedVnfcs, vnfcStateOf } from './operate.ts';
import { deleteSnapshot, revertPoll, revertStart, snapshotPoll, snapshotStart } from './snapshots.ts';

export type { KubernetesState, ReplacedPod } from './state.ts';

/** The annotation the ReplicaSet controller reads to choose which pods a scale-in removes (Kubernetes >= 1.22). */
export const POD_DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';

// ---------------------------------------------------------------------------------------------
// Finding a VNF's objects

/** The kinds terminate also searches by label (a state may be lost or partial): what manifests usually hold, plus those recorded. */
const LABELLED_KINDS: Array<{ apiVersion: string; kind: string }> = [
  { apiVersion: 'apps/v1', kind: 'Deployment' },
  { apiVersion: 'apps/v1', kind: 'StatefulSet' },
  { apiVersion: 'apps/v1', kind: 'DaemonSet' },
  { apiVersion: 'apps/v1', kind: 'ReplicaSet' },
  { apiVersion: 'v1', kind: 'Pod' },
  { apiVersion: 'batch/v1', kind: 'Job' },
  { apiVersion: 'batch/v1', kind: 'CronJob' },
  { apiVersion: 'v1', kind: 'Service' },
  { apiVersion: 'v1', kind: 'ConfigMap' },
  { apiVersion: 'v1', kind: 'Secret' },
  { apiVersion: 'v1', kind: 'ServiceAccount' },
  { apiVersion: 'v1', kind: 'PersistentVolumeClaim' },
  { apiVersion: 'v1', kind: 'Namespace' },
];

/**
 * Objects carrying the instance label (in the VNF's namespace, or anywhere when it is unknown),
 * except those a controller owns: deleting their owner removes them. Kinds the cluster does not
 * serve are skipped.
 */
async function labelledObjects(client: KubeClient, namespace: string | undefined, label: string, extraKinds: ObjectRef[]): Promise<ObjectRef[]> {
  const kinds = new Map(LABELLED_KINDS.map((entry) => [`${entry.apiVersion}/${entry.kind}`, entry]));
  for (const ref of extraKinds) kinds.set(`${ref.apiVersion}/${ref.kind}`, { apiVersion: ref.apiVersion, kind: ref.kind });
  const found: ObjectRef[] = [];
  for (const { apiVersion, kind } of kinds.values()) {
    const items = await client.listIfServed(apiVersion, kind, isClusterScoped(kind) ? undefined : namespace, {
      labelSelector: `${VNF_INSTANCE_LABEL}=${label}`,
    });
    for (const item of items ?? []) {
      if ((item.metadata?.ownerReferences ?? []).some((owner) => owner.controller)) continue;
      found.push(refOf({ ...item, apiVersion, kind }));
    }
  }
  return found;
}

// ---------------------------------------------------------------------------------------------
// VDUs and their workloads

function vduOf(ctx: OperationContext, vduId: string): { id: string; name: string } {
  const vdu = flavourOf(ctx.vnfd, ctx.flavourId).vdus.find((candidate) => candidate.id === vduId);
  if (!vdu) throw new UnprocessableEntityError(`flavour ${ctx.flavourId} has no VDU ${vduId}`);
  return vdu;
}

async function readWorkload(
  client: KubeClient,
  ctx: OperationContext,
  state: KubernetesState,
  vduId: string,
): Promise<{ ref: ObjectRef; workload: KubeObject }> {
  const vdu = vduOf(ctx, vduId);
  const ref = workloadRef(state, vdu.name);
  if (!ref) throw new KubernetesError(`VDU ${vduId}: the VNF has no workload named ${vdu.name}`);
  const workload = await client.read(ref);
  if (!workload) throw new KubernetesError(`VDU ${vduId}: ${describeRef(ref)} no longer exists`, { vimStatus: 404 });
  return { ref, workload };
}

// ---------------------------------------------------------------------------------------------
// Steps

async function instantiateStart(ctx: OperationContext, ready?: Promise<void>): Promise<DriverState> {
  const client = new KubeClient(ctx.vim);
  const flavour = flavourOf(ctx.vnfd, ctx.flavourId);
  // Package and request problems show before anything is created.
  const manifests = await readManifests(ctx.files, defFilesOf(ctx.request));
  const skipped = vdusWithoutWorkload(flavour, manifests);
  const namespace = namespaceOf(ctx.request, manifests);
  const label = labelOf(ctx);
  const replicas = new Map(flavour.vdus.map((vdu) => [vdu.name, desiredCapacity(flavour, vdu.id, ctx.instantiationLevelId)]));
  const zones = grantedZones(ctx, flavour);
  const objects = prepareObjects(manifests, { namespace, labelValue: label, replicas, zones });
  // Nothing of a CNF is inert: every object is applied after the instantiate_start hook succeeded.
  await ready;
  const state: KubernetesState = {
    namespace,
    objects: [],
    ...(Object.keys(zones).length ? { zones } : {}),
    ...(skipped.length
      ? { warnings: skipped.map((vdu) => `VDU ${vdu.id} (${vdu.name}) was not deployed: the lcm-kubernetes-def-files hold no workload of that name`) }
      : {}),
  };
  try {
    if (!objects.some((object) => object.kind === 'Namespace' && object.metadata.name === namespace)) {
      // The VNF's own namespace when none exists; one that exists is used, and is the VNF's only if
      // it carries the label (a retried step finding the namespace its first attempt created).
      const existing = await client.read({ apiVersion: 'v1', kind: 'Namespace', name: namespace });
      if (!existing) objects.unshift({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels: { [VNF_INSTANCE_LABEL]: label } } });
      else if (ownedBy(existing, label)) state.objects.push({ apiVersion: 'v1', kind: 'Namespace', name: namespace });
    }
    log.info('kubernetes: applying manifests', {
      vnfInstanceId: ctx.vnfInstanceId,
      namespace,
      objects: objects.map((object) => `${object.kind}/${object.metadata.name}`),
    });
    for (const object of objects) await applyObject(client, object, label, state.objects);
  } catch (error) {
    // A start step that throws leaves no driver state to roll back from, so it cleans up after itself.
    for (const ref of removalOrder(state.objects)) {
      await deleteObject(client, ref).catch((cleanup: unknown) => {
        log.warn('kubernetes: could not delete an object after a failed instantiate start', {
          vnfInstanceId: ctx.vnfInstanceId,
          object: describeRef(ref),
          error: cleanup,
        });
      });
    }
    throw error;
  }
  return { ...state };
}

async function instantiatePoll(ctx: OperationContext, raw: DriverState): Promise<Progress> {
  const state = stateOf(raw);
  const client = new KubeClient(ctx.vim);
  const rollout = await rollouts(
    client,
    state.objects.filter((ref) => WORKLOAD_KINDS.has(ref.kind)),
    labelOf(ctx),
  );
  return progressOf(rollout, state, lasting(state));
}

async function collect(ctx: OperationContext, raw: DriverState): Promise<CollectedResources> {
  const state = stateOf(raw);
  const client = new KubeClient(ctx.vim);
  const label = labelOf(ctx);
  const vnfcResourceInfo: Array<Record<string, unknown>> = [];
  const flavour = flavourOf(ctx.vnfd, ctx.flavourId);
  const services = await serviceCps(ctx, client, state, label);
  const podCps: Array<Record<string, unknown>> = [];
  const running = new Set<string>();
  for (const vdu of flavour.vdus) {
    const ref = workloadRef(state, vdu.name);
    const workload = ref && (await client.read(ref));
    if (!ref || !workload) continue;
    const { pods } = await podsOf(client, workload, label);
    if (pods.some((candidate) => !isTerminating(candidate))) running.add(vdu.id);
    const cpdId = flavour.cps.find((cp) => cp.vdu === vdu.id)?.id ?? vdu.id;
    for (const pod of pods.filter((candidate) => !isTerminating(candidate))) {
      const cp = podCp(pod, cpdId, services.length === 0);
      if (cp.extCp) podCps.push(cp.extCp);
      vnfcResourceInfo.push({
        id: nameOf(pod),
        vduId: vdu.id,
        computeResource: { vimConnectionId: ctx.vim.vimId, resourceId: nameOf(pod), vimLevelResourceType: ref.kind },
        // The zone its required node affinity holds the pod to (no node read: the VNF's token may not list nodes).
        ...(state.zones?.[vdu.name] !== undefined ? { zoneId: state.zones[vdu.name] } : {}),
        vnfcCpInfo: [cp.vnfcCp],
        metadata: {
          creation_time: pod.metadata?.creationTimestamp ?? null,
          namespace: pod.metadata?.namespace ?? state.namespace ?? null,
          pod_uid: uidOf(pod) ?? null,
          workload: `${ref.kind}/${ref.name}`,
        },
      });
    }
  }
  // VDUs an OPERATE stopped keep their VNFCs on record, STOPPED.
  vnfcResourceInfo.push(...stoppedVnfcs(ctx, state, running));
  return {
    vnfcResourceInfo,
    vnfVirtualLinkResourceInfo: [],
    virtualStorageResourceInfo: [],
    extCpInfo: services.length ? services : podCps,
    vnfcInfo: vnfcResourceInfo.map((info) => ({
      id: `${String(info.vduId)}-${String(info.id)}`,
      vduId: info.vduId,
      vnfcResourceInfoId: info.id,
      vnfcState: vnfcStateOf(info),
    })),
  };
}

/** SOL003 CpProtocolInfo for addresses the cluster assigned (a dual-stack pod or Service has one of each family). */
function ipProtocolInfo(addresses: string[]): Array<Record<string, unknown>> {
  const families = (['IPV4', 'IPV6'] as const).map((type) => ({ type, addresses: addresses.filter((ip) => ip.includes(':') === (type === 'IPV6')) }));
  return [
    {
      layerProtocol: 'IP_OVER_ETHERNET',
      ipOverEthernet: { ipAddresses: families.filter((family) => family.addresses.length).map((family) => ({ ...family, isDynamic: true })) },
    },
  ];
}

/**
 * A pod's connection point on the cluster network, with the pod's addresses. Its cpdId is the
 * VDU's VduCp in the VNFD, or the VDU's id when the VNFD declares none (Kubernetes gives every pod
 * exactly this one interface). When the CNF created no Service, nothing else reaches its pods, so
 * each pod's CP is also exposed as an external CP of the VNF (SOL003 VnfExtCpInfo with
 * associatedVnfcCpId): a CNF of bare workloads, like Tacker's samples with only a Deployment, still
 * reports the 1..N external CPs SOL003 requires, and they are the addresses an NFVO can reach. No
 * extVirtualLink configures them, so their cpConfigId is the pod's name, as a Service's is its name.
 */
function podCp(pod: KubeObject, cpdId: string, exposed: boolean): { vnfcCp: Record<string, unknown>; extCp?: Record<string, unknown> } {
  const name = nameOf(pod);
  const addresses = podIps(pod);
  const cpProtocolInfo = ipProtocolInfo(addresses);
  const vnfcCpId = `${name}-${cpdId}`;
  const extCpId = `${vnfcCpId}-ext`;
  return {
    vnfcCp: { id: vnfcCpId, cpdId, ...(exposed ? { vnfExtCpId: extCpId } : {}), ...(addresses.length ? { cpProtocolInfo } : {}) },
    ...(exposed ? { extCp: { id: extCpId, cpdId, cpConfigId: name, ...(addresses.length ? { cpProtocolInfo } : {}), associatedVnfcCpId: vnfcCpId } } : {}),
  };
}

/**
 * The CNF's external CPs: each Service it created is a virtual IP in front of its pods (SOL003
 * VnfExtCpInfo with associatedVipCpId). Its cpdId is the flavour's VnfExtCp of the same name, or the
 * flavour's only VnfExtCp, or else the Service's name.
 */
async function serviceCps(ctx: OperationContext, client: KubeClient, state: KubernetesState, label: string): Promise<Array<Record<string, unknown>>> {
  const extCps = flavourOf(ctx.vnfd, ctx.flavourId).extCps.map((cp) => cp.id);
  const services = await client.list('v1', 'Service', state.namespace, { labelSelector: `${VNF_INSTANCE_LABEL}=${label}` });
  return services
    .filter((service) => !isTerminating(service))
    .map((service) => {
      const name = nameOf(service);
      const cpdId = extCps.find((id) => id.toLowerCase() === name.toLowerCase()) ?? (extCps.length === 1 ? extCps[0] : name);
      const spec = (service as { spec?: { clusterIP?: string; clusterIPs?: string[] } }).spec;
      const addresses = (spec?.clusterIPs ?? (spec?.clusterIP ? [spec.clusterIP] : [])).filter((ip) => ip && ip !== 'None');
      return {
        id: `${name}-${uidOf(service) ?? ''}`.replace(/-$/, ''),
        cpdId,
        cpConfigId: name,
        // A headless Service has no address: SOL003 wants ipOverEthernet with every IP_OVER_ETHERNET entry.
        ...(addresses.length ? { cpProtocolInfo: ipProtocolInfo(addresses) } : {}),
        associatedVipCpId: name,
      };
    });
}

async function terminateStart(ctx: OperationContext, raw: DriverState): Promise<DriverState> {
  const state = stateOf(raw);
  const client = new KubeClient(ctx.vim);
  const targets = new Map(state.objects.map((ref) => [keyOf(ref), ref]));
  for (const ref of await labelledObjects(client, state.namespace, labelOf(ctx), state.objects)) targets.set(keyOf(ref), ref);
  const ordered = removalOrder([...targets.values()]);
  // Namespaces go once everything in them is gone (poll), so their deletion is not what removes the VNF.
  for (const ref of ordered.filter((candidate) => candidate.kind !== 'Namespace')) {
    const existed = await deleteObject(client, ref);
    log.info('kubernetes: deleting', { vnfInstanceId: ctx.vnfInstanceId, object: describeRef(ref), existed });
  }
  return { ...state, deleting: ordered };
}

async function terminatePoll(ctx: OperationContext, raw: DriverState): Promise<Progress> {
  const state = stateOf(raw);
  const client = new KubeClient(ctx.vim);
  const deleting = state.deleting ?? removalOrder(state.objects);
  const remaining: string[] = [];
  for (const ref of deleting.filter((candidate) => candidate.kind !== 'Namespace')) {
    const object = await client.read(ref);
    if (!object) continue;
    remaining.push(describeRef(ref));
    // Deletion is idempotent: ask again if it was not taken.
    if (!isTerminating(object)) await deleteObject(client, ref);
  }
  const namespaces = new Set(deleting.flatMap((ref) => (ref.namespace ? [ref.namespace] : [])));
  if (state.namespace) namespaces.add(state.namespace);
  for (const namespace of namespaces.size ? namespaces : [undefined]) {
    const pods = await client.list('v1', 'Pod', namespace, { labelSelector: `${VNF_INSTANCE_LABEL}=${labelOf(ctx)}` });
    remaining.push(...pods.map((pod) => `Pod ${nameOf(pod)}`));
  }
  if (remaining.length) return { status: 'IN_PROGRESS', state: { ...state } };
  for (const ref of deleting.filter((candidate) => candidate.kind === 'Namespace')) {
    const object = await client.read(ref);
    if (!object) continue;
    remaining.push(describeRef(ref));
    if (!isTerminating(object)) await deleteObject(client, ref);
  }
  if (remaining.length) return { status: 'IN_PROGRESS', state: { ...state } };
  return { status: 'DONE', state: { ...(state.namespace ? { namespace: state.namespace } : {}), objects: [] } };
}

// ---------------------------------------------------------------------------------------------
// SCALE and HEAL

/** Deletes a VNFC's pod and returns what the poll must see gone; undefined when it already is. */
async function deletePod(
  client: KubeClient,
  namespace: string | undefined,
  vduId: string,
  name: string,
  label: string,
  recreate: boolean,
): Promise<ReplacedPod | undefined> {
  const pod = await client.read(podRef(namespace, name));
  if (!pod) return undefined;
  if (!ownedBy(pod, label)) throw new UnprocessableEntityError(`pod ${name} is not a VNFC of this VNF instance`);
  await client.delete(podRef(namespace, name));
  return { vduId, name, ...(uidOf(pod) ? { uid: uidOf(pod) } : {}), ...(recreate ? { recreate } : {}) };
}

async function scaleStart(ctx: OperationContext, client: KubeClient, state: KubernetesState, change: Scaling): Promise<ReplacedPod[]> {
  const label = labelOf(ctx);
  const replaced: ReplacedPod[] = [];
  const read = new Map<string, Awaited<ReturnType<typeof readWorkload>>>();
  const moved: Record<string, string> = {};
  const granted = grantedZones(ctx, flavourOf(ctx.vnfd, ctx.flavourId));
  for (const vduId of Object.keys(change.targets)) {
    const found = await readWorkload(client, ctx, state, vduId);
    if (!REPLICATED_KINDS.has(found.ref.kind)) throw new UnprocessableEntityError(`VDU ${vduId} is a ${found.ref.kind}, which has no replica count to scale`);
    read.set(vduId, found);
    // The pods a scale-out adds go where its grant says; all of a workload's pods share its template,
    // so a VDU that has pods elsewhere cannot take new ones in another zone without moving them all.
    const { name } = vduOf(ctx, vduId);
    const zone = Object.hasOwn(granted, name) ? granted[name] : undefined;
    if (zone === undefined || zone === state.zones?.[name]) continue;
    const current = Number((found.workload.spec as { replicas?: unknown } | undefined)?.replicas ?? 0);
    if (current > 0) {
      throw new UnprocessableEntityError(
        `the grant places the new pods of ${vduId} in zone ${zone}, but its ${current} pods are ${state.zones?.[name] ? `in zone ${state.zones[name]}` : 'in no zone'} and one workload's pods share one placement`,
      );
    }
    Object.defineProperty(moved, name, { value: zone, enumerable: true, writable: true, configurable: true });
  }
  for (const [vduId, replicas] of Object.entries(change.targets)) {
    const { ref, workload } = read.get(vduId) as Awaited<ReturnType<typeof readWorkload>>;
    const removed = change.remove.filter((vnfc) => vnfc.vduId === vduId).map((vnfc) => vnfc.resourceId);
    if (ref.kind === 'StatefulSet') {
      // A StatefulSet always removes its highest ordinals; collect lists them last, so they are what the engine names.
      const { pods } = await podsOf(client, workload, label);
      const highest = new Set(pods.slice(replicas).map(nameOf));
      if (removed.some((name) => !highest.has(name))) {
        log.warn('kubernetes: a StatefulSet scale-in removes its highest ordinals, not the pods named', {
          vnfInstanceId: ctx.vnfInstanceId,
          vduId,
          named: removed,
          removing: [...highest],
        });
      }
    } else if (removed.length) {
      // The controller chooses by its own ranking: mark the named pods as the cheapest to delete
      // (honoured by the ReplicaSet controller since Kubernetes 1.22) and lower the count, so the
      // pods it removes are exactly these. Deleting them first would race the controller, which
      // replaces a deleted pod before it sees the lower count.
      for (const name of removed) {
        try {
          await client.mergePatch(podRef(state.namespace, name), { metadata: { annotations: { [POD_DELETION_COST]: '-1000' } } });
        } catch (error) {
          if (statusOf(error) !== 404) throw error;
        }
      }
    }
    const zone = moved[vduOf(ctx, vduId).name];
    log.info('kubernetes: scaling', { vnfInstanceId: ctx.vnfInstanceId, vduId, workload: describeRef(ref), replicas, removing: removed, zone });
    const template = (workload.spec as { template?: { spec?: unknown } } | undefined)?.template;
    await client.mergePatch(ref, {
      spec: { replicas, ...(zone !== undefined ? { template: { spec: { affinity: withZoneAffinity(template?.spec, zone).affinity } } } : {}) },
    });
  }
  if (Object.keys(moved).length) state.zones = { ...state.zones, ...moved };
  return replaced;
}

async function healStart(
  ctx: OperationContext,
  client: KubeClient,
  state: KubernetesState,
  change: Extract<UpdateChange, { kind: 'HEAL' }>,
): Promise<ReplacedPod[]> {
  const replaced: ReplacedPod[] = [];
  for (const vnfc of change.vnfcs) {
    const { ref } = await readWorkload(client, ctx, state, vnfc.vduId);
    log.info('kubernetes: healing', { vnfInstanceId: ctx.vnfInstanceId, vduId: vnfc.vduId, pod: vnfc.resourceId, workload: describeRef(ref) });
    const pod = await deletePod(client, state.namespace, vnfc.vduId, vnfc.resourceId, labelOf(ctx), ref.kind === 'Pod');
    if (pod) replaced.push(pod);
    else if (ref.kind === 'Pod') replaced.push({ vduId: vnfc.vduId, name: vnfc.resourceId, recreate: true });
  }
  return replaced;
}

/**
 * A bare Pod VDU, recreated from its manifest once its old self is gone: the manifest of the VDU
 * whose workload it is (a blue-green may have given it another name and a revision label).
 */
async function recreatePod(ctx: OperationContext, client: KubeClient, state: KubernetesState, name: string): Promise<void> {
  const source = Object.entries(state.workloads ?? {}).find(([, actual]) => actual === name)?.[0] ?? name;
  const manifests = await readManifests(ctx.files, currentDefFiles(ctx, state));
  const objects = prepareObjects(
    manifests.filter((object) => object.kind === 'Pod' && object.metadata.name === source),
    {
      namespace: state.namespace ?? namespaceOf(ctx.instantiateRequest, manifests),
      labelValue: labelOf(ctx),
      replicas: new Map(),
      ...(state.zones ? { zones: state.zones } : {}),
    },
  );
  const [object] = objects;
  if (!object) throw new KubernetesError(`cannot recreate pod ${name}: the manifests no longer define it`);
  object.metadata.name = name;
  const revision = state.revisions?.[name];
  if (revision) object.metadata.labels = { ...object.metadata.labels, [REVISION_LABEL]: revision };
  await applyObject(client, object, labelOf(ctx), []);
}

async function updateStart(ctx: OperationContext, raw: DriverState, change: UpdateChange): Promise<DriverState> {
  if (change.kind === 'OPERATE') return operateStart(ctx, raw, change, { recreatePod });
  if (change.kind === 'CHANGE_FLAVOUR') return flavourStart(ctx, raw, change);
  const state = stateOf(raw);
  delete state.deleting;
  delete state.replaced;
  const client = new KubeClient(ctx.vim);
  const scaling = scalingOf(change);
  const replaced = scaling ? await scaleStart(ctx, client, state, scaling) : change.kind === 'HEAL' ? await healStart(ctx, client, state, change) : [];
  return { ...state, replaced };
}

async function updatePoll(ctx: OperationContext, raw: DriverState, change: UpdateChange): Promise<Progress> {
  if (change.kind === 'OPERATE') return operatePoll(ctx, raw, change, { recreatePod });
  if (change.kind === 'CHANGE_FLAVOUR') return flavourPoll(ctx, raw, change);
  const state = stateOf(raw);
  const client = new KubeClient(ctx.vim);
  let pending = false;
  for (const pod of state.replaced ?? []) {
    const current = await client.read(podRef(state.namespace, pod.name));
    if (current && (pod.uid === undefined || uidOf(current) === pod.uid)) {
      pending = true;
    } else if (!current && pod.recreate) {
      await recreatePod(ctx, client, state, pod.name);
      pending = true;
    }
  }
  const scaling = scalingOf(change);
  const vduIds = scaling ? Object.keys(scaling.targets) : change.kind === 'HEAL' ? [...new Set(change.vnfcs.map((vnfc) => vnfc.vduId))] : [];
  const refs: ObjectRef[] = [];
  for (const vduId of vduIds) {
    const { ref, workload } = await readWorkload(client, ctx, state, vduId);
    const target = scaling?.targets[vduId];
    const spec = (workload.spec ?? {}) as Record<string, unknown>;
    if (target !== undefined && spec.replicas !== target) {
      // The count was changed behind the VNFM's back, or the patch was lost: set it again.
      await client.mergePatch(ref, { spec: { replicas: target } });
      pending = true;
    }
    refs.push(ref);
  }
  const rollout = await rollouts(client, refs, labelOf(ctx));
  if (rollout.status === 'FAILED' || !pending) return progressOf(rollout, state, lasting(state));
  return { status: 'IN_PROGRESS', state: { ...state } };
}

async function verify(vim: VimConnection): Promise<void> {
  await new KubeClient(vim).verify();
}

// ---------------------------------------------------------------------------------------------
// The Kubernetes VIM as the VIM connection API and fault management see it

/** A service account's bearer token; the cluster's CA certificate, if any, is interfaceInfo. */
const credentials: VimCredentials = {
  accessInfo: z.object({ bearer_token: z.string().min(1) }),
  fromTacker(authCred) {
    if (!tackerString(authCred.bearer_token))
      throw new UnprocessableEntityError('A Kubernetes VIM needs auth_cred.bearer_token (username/password and OIDC are not supported)');
    return {
      accessInfo: { bearer_token: authCred.bearer_token },
      interfaceExtra: tackerString(authCred.ssl_ca_cert) ? { ssl_ca_cert: authCred.ssl_ca_cert } : {},
    };
  },
  toTacker({ interfaceInfo, vimProject }, mask) {
    return {
      authCred: { bearer_token: mask, ...(interfaceInfo.ssl_ca_cert ? { ssl_ca_cert: mask } : {}) },
      vimProject: { name: vimProject?.name ?? 'default' },
    };
  },
};

/** A pod that is gone is missing equipment; one that runs badly is a processing error of the CNF. */
function faultWording(health: VnfcHealth): FaultWording {
  if (health.fault === 'MISSING')
    return { severity: 'CRITICAL', eventType: 'EQUIPMENT_ALARM', probableCause: 'Pod missing', faultType: 'VNFC_RESOURCE_MISSING' };
  return {
    severity: 'CRITICAL',
    eventType: 'PROCESSING_ERROR_ALARM',
    probableCause: health.vimStatus === 'CrashLoopBackOff' ? 'Pod CrashLoopBackOff' : 'Pod not ready',
    faultType: 'VNFC_FAILURE',
  };
}

export const kubernetesDriver: InfraDriver = {
  credentials,
  faultWording,
  instantiateStart,
  instantiatePoll,
  collect,
  terminateStart,
  terminatePoll,
  updateStart,
  updatePoll,
  changeStart,
  changePoll,
  changeRollbackStart,
  changeRollbackPoll,
  // A CNF reaches the outside through its Services (and their load balancers), not by ports on VIM networks.
  externalConnectivity: {
    unsupported:
      'a CNF on Kubernetes is not attached to VIM networks: its external connectivity is its Services, which its manifests define (change them with CHANGE_VNFPKG)',
  },
  verify,
  health: kubernetesHealth,
  measure: kubernetesMeasure,
  operateRefusal,
  snapshotStart,
  snapshotPoll,
  deleteSnapshot,
  revertStart,
  revertPoll,
};

// CHANGE_VNFPKG on Kubernetes (seed 004). A rolling update applies the new package's manifests to
// the VNF's objects (same names, the workloads' pod templates change, the replica counts stay) and
// lets the controllers roll the pods over. A blue-green creates the VDUs' new workloads beside the
// old ones (another name when the name is taken, and a revision label in their selector and pods),
// switches the VNF's Services to them once they are Ready, and then deletes the old ones, so a
// Service always selects Ready pods. Where the seed runs CoordinateVNF a poll returns COORDINATE
// and records that it asked, so the next poll goes on.
//
// changeStart only plans (reads and checks the manifests, chooses names, reads the replica counts
// and the Services' selectors); the polls act. Every poll works from that plan and re-reads the
// manifests, so a retried poll repeats nothing harmful, and a rollback, even from a poll that threw
// half-way, knows everything the change may have touched.
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import * as z from 'zod';
import { log } from '#lib/log.ts';
import type { FlavourInfo } from '#lib/packages/vnfd/model.ts';
import { UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { Coordination, DriverState, OperationContext, PackageChange, Progress } from '#lib/vim/driver.ts';
import { desiredCapacity, flavourOf } from '#lib/vim/flavour.ts';
import { describeRef, KubeClient, type KubeObject, type ObjectRef } from './client.ts';
import {
  checkVdus,
  DEF_FILES_PARAM,
  defFilesOf,
  namespaceOf,
  prepareObjects,
  readManifests,
  REPLICATED_KINDS,
  WORKLOAD_KINDS,
  workloadOf,
  type ManifestObject,
} from './manifests.ts';
import { applyObject, deleteObject, keyOf, labelOf, ownedBy, refOf, removalOrder, rollouts } from './objects.ts';
import { currentDefFiles, lasting, objectRefSchema, stateOf, workloadRef, type KubernetesState } from './state.ts';
import { isTerminating, nameOf, podIps, podsOf, type Rollout } from './workloads.ts';
import { isRecord as isObj } from '#lib/json.ts';

/** The label that tells a blue-green's new pods from the old ones (in the new workloads' selectors, and the Services' once switched). */
export const REVISION_LABEL = 'vnf-revision';

/** The workload kinds whose controller replaces the pods when the template changes. */
const ROLLING_KINDS: ReadonlySet<string> = new Set(['Deployment', 'StatefulSet', 'DaemonSet']);

type Json = Record<string, unknown>;
type Labels = Record<string, string>;
const labelsOf = (value: unknown): Labels => (isObj(value) ? Object.fromEntries(Object.entries(value).map(([key, item]) => [key, String(item)])) : {});
const matches = (selector: Labels, labels: Labels): boolean => Object.entries(selector).every(([key, value]) => labels[key] === value);

const FORWARD_PHASES = ['apply', 'rollout', 'coordinate-new', 'coordinate-old', 'cleanup'] as const;
const ROLLBACK_PHASES = ['restore', 'rollout', 'coordinate', 'cleanup'] as const;

const planSchema = z.object({
  upgradeType: z.enum(['RollingUpdate', 'BlueGreen']),
  /** The value of REVISION_LABEL on a blue-green's new workloads, and their name suffix when they need one. */
  revision: z.string(),
  /** The new package's manifests. */
  defFiles: z.array(z.string()),
  phase: z.enum(FORWARD_PHASES),
  /** The manifests' workload name -> its name on the cluster (a VDU's new workload in a blue-green, or its renamed workload). */
  names: z.record(z.string(), z.string()),
  /** Workload name on the cluster -> the revision label its selector and pods carry. */
  revisions: z.record(z.string(), z.string()),
  /** Workload name on the cluster -> its replica count (the VNF's, read when the change started). */
  replicas: z.record(z.string(), z.number()),
  /** The new package's VDUs: the workload each runs on after the change, and before it. */
  vdus: z.array(z.object({ vduId: z.string(), vduName: z.string(), ref: objectRefSchema, old: objectRefSchema.optional() })),
  /** Objects of the new manifests the VNF did not have (a rollback deletes them). */
  created: z.array(objectRefSchema),
  /** Objects of the new manifests the VNF had, updated in place (a rollback re-applies the old manifests to them). */
  updated: z.array(objectRefSchema),
  /** Objects of the VNF the change deletes at its end: a blue-green's old workloads, what the new manifests no longer have. */
  removed: z.array(objectRefSchema),
  /** The VNF's Services and their selectors before the change. */
  services: z.array(z.object({ ref: objectRefSchema, selector: z.record(z.string(), z.string()).nullable() })),
  /** Services a blue-green switched to the new pods. */
  switched: z.array(z.string()).default([]),
  /** Coordinations asked for, as `<target>:<vduId>`. */
  asked: z.array(z.string()).default([]),
  rollback: z
    .object({
      phase: z.enum(ROLLBACK_PHASES),
      asked: z.array(z.string()).default([]),
      /** Whether a Service was switched back to the old pods (the old VNF is then coordinated). */
      switchedBack: z.boolean().default(false),
    })
    .optional(),
});

type Plan = z.infer<typeof planSchema>;
type VduPlan = Plan['vdus'][number];

/** The Progress of a rollout that is not DONE yet, or undefined when it is. */
function unfinished(rollout: Rollout, state: KubernetesState): Progress | undefined {
  if (rollout.status === 'FAILED') return { status: 'FAILED', state: { ...state }, reason: rollout.reason };
  if (rollout.status === 'IN_PROGRESS') return { status: 'IN_PROGRESS', state: { ...state } };
  return undefined;
}

function planOf(state: KubernetesState): Plan | undefined {
  const parsed = planSchema.safeParse(state.change);
  return parsed.success ? parsed.data : undefined;
}

/** The revision of a change: its op occ id as a label value (its first 8 letters and digits), else a digest of it. */
export function revisionOf(opOccId: string): string {
  const plain = opOccId
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')
    .slice(0, 8);
  return plain || createHash('sha256').update(opOccId).digest('hex').slice(0, 8);
}

/** `<name>-<revision>`, within the 63 characters of a DNS label. */
function suffixed(name: string, revision: string): string {
  return `${name.slice(0, 62 - revision.length).replace(/-+$/, '')}-${revision}`;
}

// ---------------------------------------------------------------------------------------------
// The objects as the VNF applies them

interface Shape {
  namespace: string;
  label: string;
  names: Record<string, string>;
  revisions: Record<string, string>;
  replicas: Record<string, number>;
  /** VDU name -> zone: the pods of a VDU stay in the zone its grant placed them in. */
  zones: Record<string, string>;
}

function withRevision(object: ManifestObject, revision: string): void {
  object.metadata.labels = { ...object.metadata.labels, [REVISION_LABEL]: revision };
  if (object.kind === 'Pod' || !isObj(object.spec)) return;
  const spec = object.spec;
  const selector = isObj(spec.selector) ? spec.selector : {};
  spec.selector = { ...selector, matchLabels: { ...labelsOf(selector.matchLabels), [REVISION_LABEL]: revision } };
  const template = isObj(spec.template) ? spec.template : {};
  const metadata = isObj(template.metadata) ? template.metadata : {};
  spec.template = { ...template, metadata: { ...metadata, labels: { ...labelsOf(metadata.labels), [REVISION_LABEL]: revision } } };
}

/** The manifests' objects for this VNF: its namespace and label, workloads under their names on the cluster, with their revision labels and replica counts. */
function shaped(manifests: ManifestObject[], shape: Shape): ManifestObject[] {
  return prepareObjects(manifests, { namespace: shape.namespace, labelValue: shape.label, replicas: new Map(), zones: shape.zones }).map((object) => {
    if (!WORKLOAD_KINDS.has(object.kind)) return object;
    const name = shape.names[object.metadata.name] ?? object.metadata.name;
    object.metadata.name = name;
    const replicas = shape.replicas[name];
    if (REPLICATED_KINDS.has(object.kind) && replicas !== undefined && isObj(object.spec)) object.spec.replicas = replicas;
    const revision = shape.revisions[name];
    if (revision) withRevision(object, revision);
    return object;
  });
}

/** The labels a workload's pods carry. */
function podLabelsOf(object: ManifestObject | KubeObject): Labels {
  if (object.kind === 'Pod') return labelsOf(object.metadata?.labels);
  const template = isObj(object.spec) && isObj(object.spec.template) ? object.spec.template : {};
  return labelsOf(isObj(template.metadata) ? template.metadata.labels : undefined);
}

function serviceSelectorOf(object: ManifestObject | KubeObject): Labels | null {
  const selector = isObj(object.spec) ? object.spec.selector : undefined;
  return isObj(selector) && Object.keys(selector).length ? labelsOf(selector) : null;
}

function selectorOf(object: ManifestObject | KubeObject): unknown {
  return isObj(object.spec) ? object.spec.selector : undefined;
}

function newShape(ctx: OperationContext, state: KubernetesState, plan: Plan): Shape {
  return {
    namespace: state.namespace ?? 'default',
    label: labelOf(ctx),
    names: plan.names,
    revisions: plan.revisions,
    replicas: plan.replicas,
    zones: state.zones ?? {},
  };
}

/** The old package's objects as the VNF had them (for a rollback). */
function oldShape(ctx: OperationContext, state: KubernetesState, plan: Plan): Shape {
  return {
    namespace: state.namespace ?? 'default',
    label: labelOf(ctx),
    names: state.workloads ?? {},
    revisions: state.revisions ?? {},
    replicas: plan.replicas,
    zones: state.zones ?? {},
  };
}

async function newObjects(ctx: OperationContext, state: KubernetesState, plan: Plan, change: PackageChange): Promise<ManifestObject[]> {
  return shaped(await readManifests(change.files, plan.defFiles), newShape(ctx, state, plan));
}

async function oldObjects(ctx: OperationContext, state: KubernetesState, plan: Plan): Promise<ManifestObject[]> {
  return shaped(await readManifests(ctx.files, currentDefFiles(ctx, state)), oldShape(ctx, state, plan));
}

/** A live object as something to apply again: what it is, without what the API server keeps. */
function reapplicable(object: KubeObject): ManifestObject {
  const metadata = object.metadata ?? {};
  return {
    apiVersion: String(object.apiVersion),
    kind: String(object.kind),
    metadata: {
      name: String(metadata.name),
      ...(metadata.namespace ? { namespace: metadata.namespace } : {}),
      ...(metadata.labels ? { labels: metadata.labels } : {}),
      ...(metadata.annotations ? { annotations: metadata.annotations } : {}),
    },
    spec: structuredClone(object.spec),
  };
}

// ---------------------------------------------------------------------------------------------
// Planning

function defFilesFor(ctx: OperationContext, state: KubernetesState, change: PackageChange): string[] {
  return change.defFiles?.length ? defFilesOf({ additionalParams: { [DEF_FILES_PARAM]: change.defFiles } }) : currentDefFiles(ctx, state);
}

function replicasOf(workload: KubeObject | undefined): number | undefined {
  const replicas = workload && REPLICATED_KINDS.has(String(workload.kind)) && isObj(workload.spec) ? workload.spec.replicas : undefined;
  return typeof replicas === 'number' ? replicas : undefined;
}

function checkRollable(vduId: string, object: ManifestObject): void {
  if (!ROLLING_KINDS.has(object.kind)) {
    throw new UnprocessableEntityError(
      `VDU ${vduId} is a ${object.kind}, which Kubernetes does not roll over to a new template; change its package with upgrade_type BlueGreen`,
    );
  }
  const strategy = isObj(object.spec) && isObj(object.spec.updateStrategy) ? object.spec.updateStrategy : {};
  if (strategy.type === 'OnDelete')
    throw new UnprocessableEntityError(
      `VDU ${vduId} is a ${object.kind} with updateStrategy OnDelete, which never replaces its pods by itself; change its package with upgrade_type BlueGreen`,
    );
}

async function planChange(ctx: OperationContext, client: KubeClient, state: KubernetesState, change: PackageChange): Promise<Plan> {
  const flavour = flavourOf(change.vnfd, change.flavourId);
  const oldFlavour = flavourOf(ctx.vnfd, ctx.flavourId);
  const defFiles = defFilesFor(ctx, state, change);
  // Problems of the new package show before anything changes.
  const manifests = await readManifests(change.files, defFiles);
  checkVdus(flavour, manifests);
  const namespace = state.namespace ?? namespaceOf(ctx.instantiateRequest, manifests);
  const label = labelOf(ctx);
  const revision = revisionOf(ctx.opOccId);
  const blueGreen = change.upgradeType === 'BlueGreen';
  const owned = new Set(state.objects.map(keyOf));
  const names: Record<string, string> = {};
  const revisions: Record<string, string> = { ...state.revisions };
  const replicas: Record<string, number> = {};
  const vdus: VduPlan[] = [];

  for (const vdu of flavour.vdus) {
    const manifest = workloadOf(manifests, vdu.name) as ManifestObject;
    const oldVdu = oldFlavour.vdus.find((candidate) => candidate.id === vdu.id) ?? oldFlavour.vdus.find((candidate) => candidate.name === vdu.name);
    const oldRef = oldVdu && workloadRef(state, oldVdu.name);
    const old = oldRef && (await client.read(oldRef));
    let name = state.workloads?.[vdu.name] ?? vdu.name;
    if (blueGreen) {
      // The new workload needs a name no object of its kind has, unless it is this change's own (a retried step).
      const existing = await client.read({ apiVersion: manifest.apiVersion, kind: manifest.kind, namespace, name: vdu.name });
      const ours = existing && ownedBy(existing, label) && existing.metadata?.labels?.[REVISION_LABEL] === revision;
      name = existing && !ours ? suffixed(vdu.name, revision) : vdu.name;
      revisions[name] = revision;
    } else {
      checkRollable(vdu.id, manifest);
    }
    names[vdu.name] = name;
    replicas[name] = replicasOf(old) ?? desiredCapacity(flavour, vdu.id, ctx.instantiationLevelId);
    vdus.push({
      vduId: vdu.id,
      vduName: vdu.name,
      ref: { apiVersion: manifest.apiVersion, kind: manifest.kind, namespace, name },
      ...(oldRef && old ? { old: oldRef } : {}),
    });
  }

  // Workloads that are no VDU's keep their replica counts too.
  const vduNames = new Set(flavour.vdus.map((vdu) => vdu.name));
  for (const object of manifests.filter((candidate) => WORKLOAD_KINDS.has(candidate.kind) && !vduNames.has(candidate.metadata.name))) {
    const ref = { apiVersion: object.apiVersion, kind: object.kind, namespace, name: object.metadata.name };
    const count = owned.has(keyOf(ref)) ? replicasOf(await client.read(ref)) : undefined;
    if (count !== undefined) replicas[ref.name] = count;
  }

  const plan: Plan = {
    upgradeType: change.upgradeType,
    revision,
    defFiles,
    phase: 'apply',
    names,
    revisions,
    replicas,
    vdus,
    created: [],
    updated: [],
    removed: [],
    services: [],
    switched: [],
    asked: [],
  };
  const desired = shaped(manifests, newShape(ctx, { ...state, namespace }, plan));
  for (const object of desired) {
    const ref = refOf(object);
    if (!owned.has(keyOf(ref))) {
      plan.created.push(ref);
      continue;
    }
    plan.updated.push(ref);
    if (WORKLOAD_KINDS.has(ref.kind) && ref.kind !== 'Pod') {
      // A workload's selector is immutable: a manifest that changes it cannot be applied to it.
      const live = await client.read(ref);
      if (live && !isDeepStrictEqual(selectorOf(live), selectorOf(object))) {
        throw new UnprocessableEntityError(
          `the new package's manifests change the selector of ${describeRef(ref)}, which Kubernetes does not allow on an existing ${ref.kind}${blueGreen ? '' : '; change the package with upgrade_type BlueGreen'}`,
        );
      }
    }
  }
  const desiredKeys = new Set(desired.map((object) => keyOf(refOf(object))));
  plan.removed = state.objects.filter((ref) => ref.kind !== 'Namespace' && !desiredKeys.has(keyOf(ref)));
  for (const ref of state.objects.filter((candidate) => candidate.kind === 'Service')) {
    const live = await client.read(ref);
    if (live) plan.services.push({ ref, selector: serviceSelectorOf(live) });
  }
  return plan;
}

// ---------------------------------------------------------------------------------------------
// Acting

/** Deletes what is still there (Services first, so none outlives its pods), and names what has not gone yet. */
async function removeAll(client: KubeClient, refs: ObjectRef[]): Promise<string[]> {
  const ordered = [...refs.filter((ref) => ref.kind === 'Service'), ...removalOrder(refs.filter((ref) => ref.kind !== 'Service'))];
  const remaining: string[] = [];
  for (const ref of ordered) {
    const object = await client.read(ref);
    if (!object) continue;
    remaining.push(describeRef(ref));
    if (!isTerminating(object)) await deleteObject(client, ref);
  }
  return remaining;
}

/**
 * Applies the new manifests' Services. A blue-green switches each Service that selects a new
 * workload's pods to them alone (adding the revision label to its selector): the coordinate step,
 * taken once those pods are Ready. Returns the names of the Services switched.
 */
async function applyServices(ctx: OperationContext, client: KubeClient, plan: Plan, objects: ManifestObject[]): Promise<string[]> {
  const switched: string[] = [];
  const newNames = new Set(plan.vdus.map((vdu) => vdu.ref.name));
  const newPods = objects.filter((object) => WORKLOAD_KINDS.has(object.kind) && newNames.has(object.metadata.name)).map(podLabelsOf);
  for (const service of objects.filter((object) => object.kind === 'Service')) {
    const selector = serviceSelectorOf(service);
    if (plan.upgradeType === 'BlueGreen' && selector && newPods.some((labels) => matches(selector, labels))) {
      (service.spec as Json).selector = { ...selector, [REVISION_LABEL]: plan.revision };
      switched.push(service.metadata.name);
    }
    await applyObject(client, service, labelOf(ctx), []);
  }
  if (switched.length)
    log.info('kubernetes: switched Services to the new pods', { vnfInstanceId: ctx.vnfInstanceId, services: switched, revision: plan.revision });
  return switched;
}

/**
 * Puts the VNF's Services back as they were: the old manifests' version (else the live one) with
 * the selector recorded when the change started. Returns whether a selector had to change.
 */
async function restoreServices(ctx: OperationContext, client: KubeClient, plan: Plan, oldObjects: ManifestObject[]): Promise<boolean> {
  let changed = false;
  for (const { ref, selector } of plan.services) {
    const live = await client.read(ref);
    const desired = oldObjects.find((object) => object.kind === 'Service' && object.metadata.name === ref.name) ?? (live && reapplicable(live));
    if (!desired) continue;
    const spec = isObj(desired.spec) ? desired.spec : (desired.spec = {});
    if (selector) spec.selector = selector;
    else delete spec.selector;
    if (!live || !isDeepStrictEqual(serviceSelectorOf(live), selector)) changed = true;
    await applyObject(client, desired, labelOf(ctx), []);
  }
  if (changed)
    log.info('kubernetes: switched Services back to the old pods', { vnfInstanceId: ctx.vnfInstanceId, services: plan.services.map(({ ref }) => ref.name) });
  return changed;
}

/**
 * The next CoordinateVNF to ask for on one side: the first VDU not yet asked for that has pods,
 * with its pods as the VNFCs (their IPs under each of the VDU's CPs). Undefined when all were asked.
 */
async function nextCoordination(
  client: KubeClient,
  label: string,
  flavour: FlavourInfo,
  targets: Array<{ vduId: string; ref: ObjectRef }>,
  target: Coordination['target'],
  asked: string[],
  details: Json,
): Promise<Coordination | undefined> {
  for (const { vduId, ref } of targets) {
    const key = `${target}:${vduId}`;
    if (asked.includes(key)) continue;
    asked.push(key);
    const workload = await client.read(ref);
    if (!workload) continue;
    const pods = (await podsOf(client, workload, label)).pods.filter((pod) => !isTerminating(pod));
    if (!pods.length) continue;
    const cps = flavour.cps.filter((cp) => cp.vdu === vduId).map((cp) => cp.id);
    return {
      target,
      vnfcs: pods.map((pod) => {
        const ips = podIps(pod);
        return {
          vduId,
          resourceId: nameOf(pod),
          // Old VNFCs are recorded under their pod's name; new ones are not recorded yet.
          ...(target === 'old' ? { id: nameOf(pod) } : {}),
          ...(cps.length && ips.length ? { addresses: Object.fromEntries(cps.map((cp) => [cp, ips])) } : {}),
        };
      }),
      details: { ...details, workload: `${ref.kind}/${ref.name}`, podIPs: Object.fromEntries(pods.map((pod) => [nameOf(pod), podIps(pod)])) },
    };
  }
  return undefined;
}

/** The VNF's lasting state once the change is done: its objects, VDU workloads and manifests from now on. */
function changedState(state: KubernetesState, plan: Plan): DriverState {
  const removed = new Set(plan.removed.map(keyOf));
  const objects = state.objects.filter((ref) => !removed.has(keyOf(ref)));
  const kept = new Set(objects.map(keyOf));
  for (const ref of plan.created) if (!kept.has(keyOf(ref))) objects.push(ref);
  const workloads = Object.fromEntries(plan.vdus.filter((vdu) => vdu.ref.name !== vdu.vduName).map((vdu) => [vdu.vduName, vdu.ref.name]));
  const names = new Set(objects.filter((ref) => WORKLOAD_KINDS.has(ref.kind)).map((ref) => ref.name));
  const revisions = Object.fromEntries(Object.entries(plan.revisions).filter(([name]) => names.has(name)));
  const { workloads: _workloads, revisions: _revisions, ...rest } = state;
  return lasting({
    ...rest,
    objects,
    ...(Object.keys(workloads).length ? { workloads } : {}),
    ...(Object.keys(revisions).length ? { revisions } : {}),
    defFiles: plan.defFiles,
  });
}

// ---------------------------------------------------------------------------------------------
// Steps

export async function changeStart(ctx: OperationContext, raw: DriverState, change: PackageChange): Promise<DriverState> {
  const state = stateOf(raw);
  delete state.deleting;
  delete state.replaced;
  const plan = await planChange(ctx, new KubeClient(ctx.vim), state, change);
  log.info('kubernetes: changing the VNF package', {
    vnfInstanceId: ctx.vnfInstanceId,
    upgradeType: plan.upgradeType,
    vnfPkgId: change.vnfPkgId,
    workloads: plan.vdus.map((vdu) => `${vdu.old?.name ?? '-'} -> ${vdu.ref.kind}/${vdu.ref.name}`),
    removing: plan.removed.map(describeRef),
  });
  return { ...state, namespace: state.namespace ?? plan.vdus[0]?.ref.namespace, change: plan };
}

export async function changePoll(ctx: OperationContext, raw: DriverState, change: PackageChange): Promise<Progress> {
  const state = stateOf(raw);
  const plan = planOf(state);
  if (!plan) return { status: 'FAILED', state: { ...state }, reason: 'the driver state records no package change in progress' };
  const client = new KubeClient(ctx.vim);
  const label = labelOf(ctx);
  const current = (): KubernetesState => ({ ...state, change: plan });
  for (;;) {
    switch (plan.phase) {
      case 'apply': {
        // Everything but the Services, which must keep selecting Ready pods until the new ones are.
        for (const object of (await newObjects(ctx, state, plan, change)).filter((candidate) => candidate.kind !== 'Service')) {
          await applyObject(client, object, label, []);
        }
        plan.phase = 'rollout';
        return { status: 'IN_PROGRESS', state: current() };
      }
      case 'rollout': {
        const workloads = [...plan.created, ...plan.updated].filter((ref) => WORKLOAD_KINDS.has(ref.kind));
        const waiting = unfinished(await rollouts(client, workloads, label), current());
        if (waiting) return waiting;
        plan.switched = await applyServices(ctx, client, plan, await newObjects(ctx, state, plan, change));
        plan.phase = 'coordinate-new';
        continue;
      }
      case 'coordinate-new': {
        const details = plan.upgradeType === 'BlueGreen' ? { services: plan.switched } : {};
        const ask = await nextCoordination(client, label, flavourOf(change.vnfd, change.flavourId), plan.vdus, 'new', plan.asked, details);
        if (ask) return { status: 'COORDINATE', state: current(), coordinate: ask };
        plan.phase = plan.upgradeType === 'BlueGreen' ? 'coordinate-old' : 'cleanup';
        continue;
      }
      case 'coordinate-old': {
        const olds = plan.vdus.flatMap((vdu) => (vdu.old ? [{ vduId: vdu.vduId, ref: vdu.old }] : []));
        const ask = await nextCoordination(client, label, flavourOf(ctx.vnfd, ctx.flavourId), olds, 'old', plan.asked, {});
        if (ask) return { status: 'COORDINATE', state: current(), coordinate: ask };
        plan.phase = 'cleanup';
        continue;
      }
      case 'cleanup': {
        const remaining = await removeAll(client, plan.removed);
        if (remaining.length) return { status: 'IN_PROGRESS', state: current() };
        log.info('kubernetes: VNF package changed', {
          vnfInstanceId: ctx.vnfInstanceId,
          upgradeType: plan.upgradeType,
          workloads: plan.vdus.map((vdu) => vdu.ref.name),
        });
        return { status: 'DONE', state: changedState(state, plan) };
      }
    }
  }
}

export async function changeRollbackStart(_ctx: OperationContext, raw: DriverState, _change: PackageChange): Promise<DriverState> {
  const state = stateOf(raw);
  const plan = planOf(state);
  // No plan: the change failed before its first poll, which is before it touched anything.
  if (!plan) return lasting(state);
  plan.rollback = { phase: 'restore', asked: [], switchedBack: false };
  return { ...state, change: plan };
}

export async function changeRollbackPoll(ctx: OperationContext, raw: DriverState, _change: PackageChange): Promise<Progress> {
  const state = stateOf(raw);
  const plan = planOf(state);
  if (!plan) return { status: 'DONE', state: lasting(state) };
  const rollback = plan.rollback ?? (plan.rollback = { phase: 'restore', asked: [], switchedBack: false });
  const client = new KubeClient(ctx.vim);
  const label = labelOf(ctx);
  const current = (): KubernetesState => ({ ...state, change: plan });
  const oldWorkloads = state.objects.filter((ref) => WORKLOAD_KINDS.has(ref.kind));
  for (;;) {
    switch (rollback.phase) {
      case 'restore': {
        const objects = await oldObjects(ctx, state, plan);
        if (plan.upgradeType === 'RollingUpdate') {
          // The old manifests on the same objects: the controllers roll the pods back.
          for (const object of objects.filter((candidate) => candidate.kind !== 'Service')) await applyObject(client, object, label, []);
          rollback.phase = 'rollout';
          return { status: 'IN_PROGRESS', state: current() };
        }
        // Blue-green: the old workloads, kept aside, carry the VNF again, which they can only while they exist.
        const kept = plan.removed.filter((candidate) => WORKLOAD_KINDS.has(candidate.kind));
        for (const ref of kept) {
          const live = await client.read(ref);
          if (!live || isTerminating(live)) {
            const now = plan.vdus.map((vdu) => describeRef(vdu.ref)).join(', ');
            return {
              status: 'FAILED',
              state: current(),
              reason: `cannot roll back the package change: it has already deleted the old workload ${describeRef(ref)}, and the VNF runs on the new package's ${now}; retry the change to complete it`,
            };
          }
        }
        const rollout = await rollouts(client, kept, label);
        if (rollout.status === 'FAILED')
          return { status: 'FAILED', state: current(), reason: `cannot switch the VNF back to its old workloads: ${rollout.reason}` };
        if (rollout.status === 'IN_PROGRESS') return { status: 'IN_PROGRESS', state: current() };
        rollback.switchedBack = await restoreServices(ctx, client, plan, objects);
        // What the change updated in place (objects that are no VDU's new workload) gets the old manifests' version back.
        const updated = new Set(plan.updated.map(keyOf));
        for (const object of objects.filter((candidate) => candidate.kind !== 'Service' && updated.has(keyOf(refOf(candidate)))))
          await applyObject(client, object, label, []);
        rollback.phase = 'rollout';
        continue;
      }
      case 'rollout': {
        const waiting = unfinished(await rollouts(client, oldWorkloads, label), current());
        if (waiting) return waiting;
        if (plan.upgradeType === 'RollingUpdate') {
          rollback.switchedBack = await restoreServices(ctx, client, plan, await oldObjects(ctx, state, plan));
        }
        // The old VNF is coordinated when it takes the traffic back: always after a rolling update, after a blue-green only if the Services had been switched.
        rollback.phase = plan.upgradeType === 'RollingUpdate' || rollback.switchedBack ? 'coordinate' : 'cleanup';
        continue;
      }
      case 'coordinate': {
        const flavour = flavourOf(ctx.vnfd, ctx.flavourId);
        const targets = flavour.vdus.flatMap((vdu) => {
          const ref = workloadRef(state, vdu.name);
          return ref ? [{ vduId: vdu.id, ref }] : [];
        });
        const ask = await nextCoordination(client, label, flavour, targets, 'old', rollback.asked, {});
        if (ask) return { status: 'COORDINATE', state: current(), coordinate: ask };
        rollback.phase = 'cleanup';
        continue;
      }
      case 'cleanup': {
        const remaining = await removeAll(client, plan.created);
        if (remaining.length) return { status: 'IN_PROGRESS', state: current() };
        log.info('kubernetes: VNF package change rolled back', { vnfInstanceId: ctx.vnfInstanceId, upgradeType: plan.upgradeType });
        return { status: 'DONE', state: lasting(state) };
      }
    }
  }
}

// CHANGE_FLAVOUR on Kubernetes (SOL003 5.4.7): the new flavour's manifests (the request's
// lcm-kubernetes-def-files, else those the VNF runs) are applied in the VNF's namespace as
// instantiate applies them, the VDUs' workloads at the new flavour's instance counts; objects of the
// same kind and name are replaced (a Deployment then rolls out its new pods), and the objects the
// VNF had that the new manifests lack are deleted. The state records, for this operation, what the
// VNF was before, so a retry applies again from there and a rollback applies the old flavour's
// manifests at the VNFC counts the instance had and deletes what the failed change added.
import * as z from 'zod';
import { log } from '#lib/log.ts';
import type { DriverState, FlavourChange, OperationContext, Progress } from '#lib/vim/driver.ts';
import { desiredCapacity, flavourOf } from '#lib/vim/flavour.ts';
import { describeRef, KubeClient, type ObjectRef } from './client.ts';
import { namespaceOf, prepareObjects, readManifests, vdusWithoutWorkload, WORKLOAD_KINDS } from './manifests.ts';
import { applyObject, deleteObject, keyOf, labelOf, removalOrder, rollouts } from './objects.ts';
import { currentDefFiles, grantedZones, lasting, objectRefSchema, stateOf, type KubernetesState } from './state.ts';
import { isTerminating } from './workloads.ts';

const recordSchema = z.object({
  opOccId: z.string(),
  /** The VNF's state before the change (its objects and manifests). */
  previous: z.record(z.string(), z.unknown()),
  /** The objects the change deletes; the change is done once they are gone. */
  removing: z.array(objectRefSchema).default([]),
});
type FlavourRecord = z.infer<typeof recordSchema>;

function recordOf(ctx: OperationContext, state: KubernetesState): FlavourRecord | undefined {
  const parsed = recordSchema.safeParse(state.flavourChange);
  return parsed.success && parsed.data.opOccId === ctx.opOccId ? parsed.data : undefined;
}

/** The VNF as it was before this operation changed anything (a record another operation left is history). */
function baseOf(ctx: OperationContext, state: KubernetesState): KubernetesState {
  const record = recordOf(ctx, state);
  const base = record ? stateOf(record.previous) : state;
  const { flavourChange: _history, ...rest } = lasting(base) as KubernetesState;
  return { ...rest, objects: base.objects };
}

export async function flavourStart(ctx: OperationContext, raw: DriverState, change: FlavourChange): Promise<DriverState> {
  const state = stateOf(raw);
  const base = baseOf(ctx, state);
  const client = new KubeClient(ctx.vim);
  const label = labelOf(ctx);
  const flavour = flavourOf(ctx.vnfd, ctx.flavourId);
  const defFiles = (!change.rollback && change.defFiles) || currentDefFiles(ctx, base);
  // Package and request problems show before anything is changed.
  const manifests = await readManifests(ctx.files, defFiles);
  const skipped = vdusWithoutWorkload(flavour, manifests);
  const namespace = base.namespace ?? namespaceOf(ctx.instantiateRequest, manifests);
  const replicas = new Map(flavour.vdus.map((vdu) => [vdu.name, change.capacities?.[vdu.id] ?? desiredCapacity(flavour, vdu.id, ctx.instantiationLevelId)]));
  // The VDUs stay in their zones; the new flavour's grant places the VDUs it adds.
  const zones = { ...base.zones, ...(change.rollback ? {} : grantedZones(ctx, flavour)) };
  const objects = prepareObjects(manifests, { namespace, labelValue: label, replicas, zones });
  log.info('kubernetes: applying the manifests of another deployment flavour', {
    vnfInstanceId: ctx.vnfInstanceId,
    flavourId: ctx.flavourId,
    rollback: change.rollback ?? false,
    namespace,
    objects: objects.map((object) => `${object.kind}/${object.metadata.name}`),
  });
  const applied: ObjectRef[] = [];
  for (const object of objects) await applyObject(client, object, label, applied);
  const kept = new Set(applied.map(keyOf));
  // What the VNF had, and what a failed attempt of this change had added, that the manifests lack.
  const had = new Map([...base.objects, ...state.objects].map((ref) => [keyOf(ref), ref]));
  const namespaces = [...had.values()].filter((ref) => ref.kind === 'Namespace' && !kept.has(keyOf(ref)));
  const removing = removalOrder([...had.values()].filter((ref) => ref.kind !== 'Namespace' && !kept.has(keyOf(ref))));
  for (const ref of removing) {
    const existed = await deleteObject(client, ref);
    log.info('kubernetes: deleting what the flavour lacks', { vnfInstanceId: ctx.vnfInstanceId, object: describeRef(ref), existed });
  }
  // Every VDU runs on the workload of its own name again (what a blue-green renamed is gone).
  const next: KubernetesState = { namespace, objects: [...namespaces, ...applied], defFiles, ...(Object.keys(zones).length ? { zones } : {}) };
  const record: FlavourRecord = { opOccId: ctx.opOccId, previous: { ...base }, removing };
  return {
    ...next,
    flavourChange: record,
    ...(skipped.length
      ? { warnings: skipped.map((vdu) => `VDU ${vdu.id} (${vdu.name}) was not deployed: the lcm-kubernetes-def-files hold no workload of that name`) }
      : {}),
  };
}

export async function flavourPoll(ctx: OperationContext, raw: DriverState, change: FlavourChange): Promise<Progress> {
  const state = stateOf(raw);
  const record = recordOf(ctx, state);
  if (!record) return { status: 'FAILED', state: raw, reason: `the driver state records no flavour change of operation ${ctx.opOccId} to go on with` };
  const client = new KubeClient(ctx.vim);
  let pending = false;
  for (const ref of record.removing) {
    const object = await client.read(ref);
    if (!object) continue;
    pending = true;
    // Deletion is idempotent: ask again if it was not taken.
    if (!isTerminating(object)) await deleteObject(client, ref);
  }
  const rollout = await rollouts(
    client,
    state.objects.filter((ref) => WORKLOAD_KINDS.has(ref.kind)),
    labelOf(ctx),
  );
  if (rollout.status === 'FAILED') return { status: 'FAILED', state: { ...state }, reason: rollout.reason };
  if (pending || rollout.status === 'IN_PROGRESS') return { status: 'IN_PROGRESS', state: { ...state } };
  if (change.rollback) {
    const { flavourChange: _done, ...restored } = state;
    return { status: 'DONE', state: lasting(restored as KubernetesState) };
  }
  // The record stays: a rollback asked for after the change is done still finds what the VNF was.
  return { status: 'DONE', state: { ...lasting(state), flavourChange: { ...record, removing: [] } } };
}

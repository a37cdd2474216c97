// CHANGE_FLAVOUR on OpenStack (SOL003 5.4.7): the VNF's stack is updated in place to the new
// flavour's BaseHOT (top template and nested files) with its `nfv` parameter built for that flavour
// as instantiate builds it (its flavours, images and instantiation level, the grant of this
// operation), so Heat keeps what the two flavours share, resizes or replaces what differs and
// deletes what the new one lacks. Images the new flavour needs and the VNF does not have yet are
// uploaded first. The state records, for this operation, what the VNF was before: a retry patches
// again from there, and a rollback patches the stack back to the old flavour's template with the
// nfv the instance had (its scaled capacities and its instantiate grant), removing from the scaling
// groups the members the failed attempt added rather than the oldest, then deletes the images the
// failed attempt uploaded.
import * as z from 'zod';
import { log } from '#lib/log.ts';
import type { DriverState, FlavourChange, OperationContext, Progress } from '#lib/vim/driver.ts';
import { VimError } from './errors.ts';
import { GlanceClient } from './glance.ts';
import { HeatClient, type HeatResource } from './heat.ts';
import { capacitiesOf, flavourOf, loadBaseHot } from './hot.ts';
import { createdImages, deleteImages, imageOwners, imagesReady, resolveImages } from './images.ts';
import { OpenStackSession } from './keystone.ts';
import { collectResources, serverPlacement } from './resources.ts';
import { grantChoicesOf, nfvOf, RESOURCE_NESTED_DEPTH, stackProgress, stackRef, stateOf, type GrantChoices, type OpenStackState } from './state.ts';

const recordSchema = z.object({
  opOccId: z.string(),
  /** The VNF's state before the change (its stack, images, capacities and instantiate grant). */
  previous: z.record(z.string(), z.unknown()),
  /** Whether the stack update was issued (it waits for new images to become active). */
  patched: z.boolean(),
  /** A rollback: the Glance images the failed change created, deleted once the stack no longer uses them. */
  discard: z.array(z.string()).optional(),
  /**
   * A rollback in two updates: `restore` gives the stack the old flavour's template with every
   * scaling group at its current size, `shrink` then removes the members the failed change added
   * (marked unhealthy, which a group removes first) down to the counts the instance had.
   */
  phase: z.enum(['restore', 'shrink']).optional(),
});
type FlavourRecord = z.infer<typeof recordSchema>;

/** The record of this operation's change (a record another operation left is history). */
function recordOf(ctx: OperationContext, state: OpenStackState): FlavourRecord | undefined {
  const parsed = recordSchema.safeParse(state.flavourChange);
  return parsed.success && parsed.data.opOccId === ctx.opOccId ? parsed.data : undefined;
}

/** The VNF as it was before this operation changed anything. */
function baseOf(ctx: OperationContext, state: OpenStackState): OpenStackState {
  const record = recordOf(ctx, state);
  if (record) return stateOf(ctx, record.previous);
  const { flavourChange: _history, ...rest } = state;
  return rest as OpenStackState;
}

/** What the stack is updated with: the flavour's template and files, and its nfv. */
async function patchStack(ctx: OperationContext, heat: HeatClient, state: OpenStackState, grant: GrantChoices, capacities?: Record<string, number>) {
  const hot = await loadBaseHot(ctx.files, ctx.flavourId);
  const nfv = nfvOf(ctx, { images: state.images, ...(capacities ? { capacities } : {}) }, hot, grant);
  log.info('openstack: updating stack to another deployment flavour', {
    vnfInstanceId: ctx.vnfInstanceId,
    stack: stackRef(state),
    flavourId: ctx.flavourId,
    template: hot.templatePath,
    files: Object.keys(hot.files),
  });
  // Rollback stays the LCM engine's decision, as at create.
  await heat.patchStack(stackRef(state), { parameters: { nfv }, template: hot.template, files: hot.files, disableRollback: true });
  return capacitiesOf(nfv);
}

/** VNFCs per VDU of the flavour on the stack now (whatever template it has, VDUs are known by resource name). */
async function currentCounts(
  ctx: OperationContext,
  heat: HeatClient,
  ref: string,
): Promise<{ resources: HeatResource[]; servers: Array<{ vduId: string; id: string }> }> {
  const resources = await heat.listResources(ref, RESOURCE_NESTED_DEPTH);
  const servers = collectResources({ resources, flavour: flavourOf(ctx.vnfd, ctx.flavourId), extVirtualLinks: [] }).vnfcResourceInfo.map((vnfc) => ({
    vduId: String(vnfc.vduId),
    id: String((vnfc.computeResource as { resourceId?: unknown } | undefined)?.resourceId ?? vnfc.id),
  }));
  return { resources, servers };
}

/**
 * A rollback's first update: the VDUs that have more VNFCs now than the instance had keep them
 * (within the flavour's maximum), so that a scaling group, which removes its oldest members when
 * it shrinks, removes none while its members go back to the old definition. Undefined when no VDU grew.
 */
async function restoreCapacities(
  ctx: OperationContext,
  heat: HeatClient,
  ref: string,
  capacities: Record<string, number>,
): Promise<Record<string, number> | undefined> {
  const { servers } = await currentCounts(ctx, heat, ref);
  const flavour = flavourOf(ctx.vnfd, ctx.flavourId);
  const grown = { ...capacities };
  let changed = false;
  for (const [vduId, capacity] of Object.entries(capacities)) {
    const count = servers.filter((server) => server.vduId === vduId).length;
    const max = flavour.vdus.find((vdu) => vdu.id === vduId)?.vduProfile?.maxNumberOfInstances ?? count;
    const target = Math.min(count, max);
    if (target > capacity) {
      grown[vduId] = target;
      changed = true;
    }
  }
  return changed ? grown : undefined;
}

/** A rollback's second update: the members whose servers the instance did not have are marked unhealthy and the groups shrink to `capacities`. */
async function shrink(ctx: OperationContext, heat: HeatClient, state: OpenStackState, capacities: Record<string, number>, keep: ReadonlySet<string>) {
  const { resources, servers } = await currentCounts(ctx, heat, stackRef(state));
  const reason = `added by the rolled-back VNF LCM operation ${ctx.opOccId}`;
  for (const server of servers.filter((candidate) => !keep.has(candidate.id))) {
    const member = serverPlacement(resources, server.id)?.member;
    if (member) await heat.markUnhealthy(member.stack, member.resourceName, reason);
  }
  return patchStack(ctx, heat, state, state.instantiateGrant ?? {}, capacities);
}

export async function flavourStart(ctx: OperationContext, raw: DriverState, change: FlavourChange): Promise<DriverState> {
  const state = stateOf(ctx, raw);
  const base = baseOf(ctx, state);
  const session = new OpenStackSession(ctx.vim);
  const heat = new HeatClient(session);
  const glance = new GlanceClient(session);
  const stack = await heat.getStack(stackRef(base));
  if (!stack || stack.stack_status.startsWith('DELETE_'))
    throw new VimError('heat', `the stack of VNF instance ${ctx.vnfInstanceId} (${stackRef(base)}) does not exist`);
  // Package problems show before anything is uploaded or changed.
  await loadBaseHot(ctx.files, ctx.flavourId);

  const images = [...base.images];
  let discard: string[] = [];
  if (change.rollback) {
    // A rollback asked for again still knows what the first one was to delete.
    const kept = new Set(base.images.map((image) => image.id));
    discard = [...new Set([...(recordOf(ctx, state)?.discard ?? []), ...createdImages(state.images).filter((id) => !kept.has(id))])];
  } else {
    const missing = new Set(imageOwners(ctx).flatMap(({ owner }) => (images.some((image) => image.imageId === owner) ? [] : [owner])));
    // What a failed attempt of this change already uploaded is used again.
    for (const image of state.images) {
      if (missing.delete(image.imageId)) images.push(image);
    }
    if (missing.size) await resolveImages(ctx, glance, images, { owners: missing });
  }
  const grant = change.rollback ? (base.instantiateGrant ?? grantChoicesOf({})) : grantChoicesOf(ctx.grant);
  let capacities = change.rollback ? (base.capacities ?? change.capacities) : change.capacities;
  let phase: FlavourRecord['phase'];
  if (change.rollback && capacities) {
    const grown = await restoreCapacities(ctx, heat, stackRef(base), capacities);
    if (grown) {
      capacities = grown;
      phase = 'restore';
    }
  }
  const next: OpenStackState = { ...base, stackId: stack.id, images, instantiateGrant: grant };
  const record: FlavourRecord = {
    opOccId: ctx.opOccId,
    previous: { ...base },
    patched: false,
    ...(discard.length ? { discard } : {}),
    ...(phase ? { phase } : {}),
  };
  const ready = await imagesReady(glance, images);
  if (ready.failed) throw new VimError('glance', ready.failed);
  if (!ready.pending) {
    next.capacities = await patchStack(ctx, heat, next, grant, capacities);
    record.patched = true;
  }
  return { ...next, flavourChange: record, ...(capacities && !record.patched ? { pendingCapacities: capacities } : {}) };
}

export async function flavourPoll(ctx: OperationContext, raw: DriverState, change: FlavourChange): Promise<Progress> {
  const state = stateOf(ctx, raw);
  const record = recordOf(ctx, state);
  if (!record) return { status: 'FAILED', state: raw, reason: `the driver state records no flavour change of operation ${ctx.opOccId} to go on with` };
  const session = new OpenStackSession(ctx.vim);
  const heat = new HeatClient(session);
  const glance = new GlanceClient(session);
  if (!record.patched) {
    const ready = await imagesReady(glance, state.images);
    if (ready.failed) return { status: 'FAILED', state: { ...state }, reason: ready.failed };
    if (ready.pending) return { status: 'IN_PROGRESS', state: { ...state } };
    const pending = z.record(z.string(), z.number()).safeParse(state.pendingCapacities);
    const { pendingCapacities: _done, ...rest } = state;
    const capacities = await patchStack(ctx, heat, state, state.instantiateGrant ?? {}, pending.success ? pending.data : undefined);
    return { status: 'IN_PROGRESS', state: { ...rest, capacities, flavourChange: { ...record, patched: true } } };
  }
  const progress = stackProgress(await heat.getStack(stackRef(state)), 'UPDATE', state);
  if (progress.status !== 'DONE' || !change.rollback) return progress;
  if (record.phase === 'restore') {
    const base = baseOf(ctx, state);
    const capacities = await shrink(ctx, heat, state, base.capacities ?? change.capacities ?? {}, new Set(change.keep ?? []));
    return { status: 'IN_PROGRESS', state: { ...state, capacities, flavourChange: { ...record, phase: 'shrink' } } };
  }
  // Back on the old flavour: the images only the failed change used can go.
  if (record.discard?.length) await deleteImages(glance, ctx.vnfInstanceId, record.discard, []);
  return { status: 'DONE', state: { ...baseOf(ctx, state), stackId: state.stackId } };
}

// CHANGE_FLAVOUR on OpenStack (SOL003 5.4.7): the VNF's stack is updated in place to the new
// flavour's BaseHOT (top template and nested files) with its `nfv` parameter built for that flavour
// as instantiate builds it (its flavours, images and instantiation level, the grant of this
// operation), so Heat keeps what the two flavours share, resizes or replaces what differs and
// deletes what the new one lacks. Images the new flavour needs and the VNF does not have yet are
// uploaded first. The state records, for this operation, what the VNF was before: a retry patches
// again from there, and a rollback patches the stack back to the old flavour's template with the
// nfv the instance had (its scaled capacities and its instantiate grant), then deletes the images
// the failed attempt uploaded.
import { z } from 'zod';
import { log } from '#lib/log.ts';
import type { DriverState, FlavourChange, OperationContext, Progress } from '#lib/vim/driver.ts';
import { VimError } from './errors.ts';
import { GlanceClient } from './glance.ts';
import { HeatClient } from './heat.ts';
import { capacitiesOf, loadBaseHot } from './hot.ts';
import { createdImages, deleteImages, imageOwners, imagesReady, resolveImages } from './images.ts';
import { OpenStackSession } from './keystone.ts';
import { grantChoicesOf, nfvOf, stackProgress, stackRef, stateOf, type GrantChoices, type OpenStackState } from './state.ts';

const recordSchema = z.object({
  opOccId: z.string(),
  /** The VNF's state before the change (its stack, images, capacities and instantiate grant). */
  previous: z.record(z.string(), z.unknown()),
  /** Whether the stack update was issued (it waits for new images to become active). */
  patched: z.boolean(),
  /** A rollback: the Glance images the failed change created, deleted once the stack no longer uses them. */
  discard: z.array(z.string()).optional(),
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
    const kept = new Set(base.images.map((image) => image.id));
    discard = createdImages(state.images).filter((id) => !kept.has(id));
  } else {
    const missing = new Set(imageOwners(ctx).flatMap(({ owner }) => (images.some((image) => image.imageId === owner) ? [] : [owner])));
    // What a failed attempt of this change already uploaded is used again.
    for (const image of state.images) {
      if (missing.delete(image.imageId)) images.push(image);
    }
    if (missing.size) await resolveImages(ctx, glance, images, { owners: missing });
  }
  const grant = change.rollback ? (base.instantiateGrant ?? grantChoicesOf({})) : grantChoicesOf(ctx.grant);
  const capacities = change.rollback ? (base.capacities ?? change.capacities) : change.capacities;
  const next: OpenStackState = { ...base, stackId: stack.id, images, instantiateGrant: grant };
  const record: FlavourRecord = { opOccId: ctx.opOccId, previous: { ...base }, patched: false, ...(discard.length ? { discard } : {}) };
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
  // Back on the old flavour: the images only the failed change used can go.
  if (record.discard?.length) await deleteImages(glance, ctx.vnfInstanceId, record.discard, []);
  return { status: 'DONE', state: { ...baseOf(ctx, state), stackId: state.stackId } };
}

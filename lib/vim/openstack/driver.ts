// The OpenStack infra driver: a VNF is one Heat stack `vnf-<instanceId>` built from the package's
// BaseHOT, plus the Glance images the driver uploaded from the package. Scale and heal are updates
// of that stack, as in Tacker v2: a new per-VDU desired_capacity in its `nfv` parameter, and the
// servers to remove or replace marked unhealthy first. Steps never wait: start
// steps issue requests and return ids, poll steps read status. The driver state names only VIM ids,
// and rollback or terminate also find what a lost or partial state would have named (by the
// deterministic stack and image names), so a failure half-way through leaves nothing behind.
import { z } from 'zod';
import { log } from '#lib/log.ts';
import type { SoftwareImageInfo } from '#lib/packages/vnfd.ts';
import { UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { CollectedResources, DriverState, GrantDecision, InfraDriver, OperationContext, Progress, UpdateChange, VimConnection, VnfcRef } from '#lib/vim/driver.ts';
import { VimError } from './errors.ts';
import { GlanceClient } from './glance.ts';
import { HeatClient, type HeatResource, type HeatStack } from './heat.ts';
import { buildNfv, capacitiesOf, flavourOf, loadBaseHot, parseTemplate, requestOf, type BaseHot } from './hot.ts';
import { OpenStackSession, openStackAccess, verifyAccess } from './keystone.ts';
import { collectResources, serverPlacement } from './resources.ts';

/** SOL003 vimType of an OpenStack VIM, and the short alias older records use (matched case-insensitively). */
export const OPENSTACK_VIM_TYPES = ['ETSINFV.OPENSTACK_KEYSTONE.V_3', 'openstack'] as const;

/** Deep enough for a member of an AutoScalingGroup (depth 2) whose template nests further, up to Heat's own default limit. */
export const RESOURCE_NESTED_DEPTH = 5;

const imageRecord = z.object({
  /** Glance image id. */
  id: z.string(),
  /** The VNFD node (VDU or storage) whose software image it is. */
  imageId: z.string(),
  /** Whether this driver created (and so must delete) it. */
  created: z.boolean(),
});
export type ImageRecord = z.infer<typeof imageRecord>;

/** What of the instantiate grant the `nfv` parameter depends on, so a later update rebuilds it unchanged. */
const grantChoices = z.object({
  flavours: z.record(z.string(), z.string()).optional(),
  zones: z.array(z.object({ id: z.string(), zoneId: z.string() })).optional(),
});
export type GrantChoices = z.infer<typeof grantChoices>;

const stateSchema = z.object({
  stackName: z.string().optional(),
  stackId: z.string().optional(),
  images: z.array(imageRecord).default([]),
  capacities: z.record(z.string(), z.number().int().nonnegative()).optional(),
  instantiateGrant: grantChoices.optional(),
}).passthrough();

/** What instantiate, scale, heal and terminate carry between steps. */
export interface OpenStackState {
  stackName: string;
  stackId?: string;
  images: ImageRecord[];
  /** desired_capacity per VDU the stack was last given. */
  capacities?: Record<string, number>;
  instantiateGrant?: GrantChoices;
  [key: string]: unknown;
}

export const stackNameOf = (vnfInstanceId: string): string => `vnf-${vnfInstanceId}`;
export const imageNameOf = (vnfInstanceId: string, imageId: string): string => `vnf-${vnfInstanceId}-${imageId}`;

function stateOf(ctx: OperationContext, state: DriverState): OpenStackState {
  const parsed = stateSchema.safeParse(state ?? {});
  const data = parsed.success ? parsed.data : { images: [] };
  return { ...data, stackName: data.stackName ?? stackNameOf(ctx.vnfInstanceId), images: data.images ?? [] };
}

/** Name/id when the id is known: Heat then answers without the by-name redirect, also after deletion. */
const stackRef = (state: OpenStackState): string => (state.stackId ? `${state.stackName}/${state.stackId}` : state.stackName);

const GIB = 2 ** 30;
const MIB = 2 ** 20;
/** Glance statuses from which an image will never become active. */
const DEAD_IMAGE = new Set(['killed', 'deleted', 'pending_delete', 'deactivated']);

// ---------------------------------------------------------------------------------------------
// Images

/** The VNFD nodes of the flavour that boot from or are filled with a software image. */
function imageOwners(ctx: OperationContext): Array<{ owner: string; name: string }> {
  const flavour = flavourOf(ctx.vnfd, ctx.flavourId);
  return [
    ...flavour.vdus.flatMap((vdu) => (vdu.swImage ? [{ owner: vdu.id, name: vdu.swImage.name }] : [])),
    ...flavour.storages.flatMap((storage) => (storage.swImage ? [{ owner: storage.id, name: storage.swImage.name }] : [])),
  ];
}

async function uploadPackagedImage(ctx: OperationContext, glance: GlanceClient, owner: string, image: SoftwareImageInfo): Promise<string> {
  const name = imageNameOf(ctx.vnfInstanceId, owner);
  // A retried step finds its own earlier upload: keep a finished one, drop an unfinished one.
  for (const existing of await glance.findByName(name)) {
    if (existing.status === 'active') return existing.id;
    await glance.deleteImage(existing.id);
  }
  const created = await glance.createImage({
    name,
    diskFormat: image.diskFormat,
    containerFormat: image.containerFormat,
    minDisk: Math.ceil(image.minDisk / GIB),
    ...(image.minRam !== undefined ? { minRam: Math.ceil(image.minRam / MIB) } : {}),
  });
  log.info('openstack: uploading software image', { vnfInstanceId: ctx.vnfInstanceId, imageId: owner, glanceImageId: created.id, bytes: image.size });
  try {
    await glance.uploadData(created.id, () => ctx.files.stream(image.imagePath));
  } catch (error) {
    await glance.deleteImage(created.id).catch(() => undefined);
    throw error;
  }
  return created.id;
}

/** Fills `records` as it goes, so a caller whose step fails half-way knows what to remove. */
async function resolveImages(ctx: OperationContext, glance: GlanceClient, records: ImageRecord[]): Promise<void> {
  // Nodes often share one image file (a VDU and its volume); it is uploaded once.
  const uploaded = new Map<string, string>();
  for (const { owner, name } of imageOwners(ctx)) {
    const granted = ctx.grant.images?.[owner];
    if (granted) {
      records.push({ id: granted, imageId: owner, created: false });
      continue;
    }
    const packaged = ctx.vnfd.softwareImages.find((image) => image.id === owner && image.imagePath);
    if (packaged) {
      const key = `${packaged.imagePath}\0${packaged.checksum.algorithm}\0${packaged.checksum.hash}`;
      const known = uploaded.get(key);
      if (known) {
        records.push({ id: known, imageId: owner, created: false });
      } else {
        const id = await uploadPackagedImage(ctx, glance, owner, packaged);
        uploaded.set(key, id);
        records.push({ id, imageId: owner, created: true });
      }
      continue;
    }
    const found = (await glance.findByName(name)).filter((image) => image.status === 'active');
    if (!found[0]) {
      throw new VimError('glance', `software image ${name} of ${owner} is not granted, not in the VNF package and not an active image in Glance`);
    }
    records.push({ id: found[0].id, imageId: owner, created: false });
  }
}

/** Unique ids of the images this driver created. */
const createdImages = (images: ImageRecord[]): string[] => [...new Set(images.filter((image) => image.created).map((image) => image.id))];

// ---------------------------------------------------------------------------------------------
// Stack

const grantChoicesOf = (grant: GrantDecision): GrantChoices => ({
  ...(grant.flavours ? { flavours: grant.flavours } : {}),
  ...(grant.zones ? { zones: grant.zones.map(({ id, zoneId }) => ({ id, zoneId })) } : {}),
});

/** The stack's `nfv` parameter, from the instantiate request and grant, the images in the state and the capacities a scale set. */
function nfvOf(ctx: OperationContext, state: OpenStackState, hot: BaseHot, grant: GrantChoices): Record<string, unknown> {
  return buildNfv({
    flavour: flavourOf(ctx.vnfd, ctx.flavourId),
    ...(ctx.instantiationLevelId !== undefined ? { instantiationLevelId: ctx.instantiationLevelId } : {}),
    request: ctx.instantiateRequest,
    grant,
    images: Object.fromEntries(state.images.map((image) => [image.imageId, image.id])),
    template: parseTemplate(hot),
    ...(typeof ctx.vim.extra?.availabilityZone === 'string' ? { defaultZone: ctx.vim.extra.availabilityZone } : {}),
    ...(state.capacities ? { capacities: state.capacities } : {}),
  });
}

/** Creates the stack; answers what the state must record of it. */
async function createStack(ctx: OperationContext, heat: HeatClient, state: OpenStackState): Promise<Pick<OpenStackState, 'stackId' | 'capacities' | 'instantiateGrant'>> {
  const hot = await loadBaseHot(ctx.files, ctx.flavourId);
  const instantiateGrant = grantChoicesOf(ctx.grant);
  const nfv = nfvOf(ctx, state, hot, instantiateGrant);
  const recorded = { capacities: capacitiesOf(nfv), instantiateGrant };
  log.info('openstack: creating stack', { vnfInstanceId: ctx.vnfInstanceId, stackName: state.stackName, template: hot.templatePath, files: Object.keys(hot.files) });
  const created = await heat.createStack({ stackName: state.stackName, template: hot.template, files: hot.files, parameters: { nfv }, disableRollback: true });
  if (created) return { stackId: created.id, ...recorded };
  // 409: a retried step already created it.
  const existing = await heat.getStack(state.stackName);
  if (!existing) throw new VimError('heat', `creating stack ${state.stackName}: heat answered 409 but has no stack of that name`);
  return { stackId: existing.id, ...recorded };
}

/** Where a stack action stands: done, running, or failed with Heat's reason verbatim. */
function stackProgress(stack: HeatStack | undefined, action: 'CREATE' | 'UPDATE', state: OpenStackState): Progress {
  const carried = { ...state };
  if (!stack) return { status: 'FAILED', state: carried, reason: `stack ${stackRef(state)} no longer exists` };
  switch (stack.stack_status) {
    case `${action}_COMPLETE`:
      return { status: 'DONE', state: carried };
    case `${action}_FAILED`:
      return { status: 'FAILED', state: carried, reason: stack.stack_status_reason ?? stack.stack_status };
    default:
      return stack.stack_status.endsWith('_IN_PROGRESS')
        ? { status: 'IN_PROGRESS', state: carried }
        : { status: 'FAILED', state: carried, reason: `stack ${stack.stack_name} is ${stack.stack_status}${stack.stack_status_reason ? `: ${stack.stack_status_reason}` : ''}` };
  }
}

/** Whether the images this driver created are all active yet, or why they never will be. */
async function imagesReady(glance: GlanceClient, images: ImageRecord[]): Promise<{ failed?: string; pending: boolean }> {
  let pending = false;
  for (const id of createdImages(images)) {
    const image = await glance.getImage(id);
    if (!image) return { failed: `Glance image ${id} disappeared before it became active`, pending: false };
    if (DEAD_IMAGE.has(image.status)) return { failed: `Glance image ${id} (${image.name ?? ''}) is ${image.status}`, pending: false };
    if (image.status !== 'active') pending = true;
  }
  return { pending };
}

async function deleteImages(ctx: OperationContext, glance: GlanceClient, state: OpenStackState): Promise<void> {
  const ids = new Set(createdImages(state.images));
  // What a lost or partial state would have recorded: images are named after the instance.
  for (const image of ctx.vnfd.softwareImages) {
    for (const found of await glance.findByName(imageNameOf(ctx.vnfInstanceId, image.id))) ids.add(found.id);
  }
  for (const id of ids) {
    log.info('openstack: deleting software image', { vnfInstanceId: ctx.vnfInstanceId, glanceImageId: id });
    await glance.deleteImage(id);
  }
}

// ---------------------------------------------------------------------------------------------

async function instantiateStart(ctx: OperationContext): Promise<DriverState> {
  const session = new OpenStackSession(ctx.vim);
  // Package and request problems show before anything is uploaded.
  parseTemplate(await loadBaseHot(ctx.files, ctx.flavourId));
  requestOf(ctx.instantiateRequest);
  const glance = new GlanceClient(session);
  const state: OpenStackState = { stackName: stackNameOf(ctx.vnfInstanceId), images: [] };
  try {
    await resolveImages(ctx, glance, state.images);
    const ready = await imagesReady(glance, state.images);
    if (ready.failed) throw new VimError('glance', ready.failed);
    if (!ready.pending) Object.assign(state, await createStack(ctx, new HeatClient(session), state));
  } catch (error) {
    // A start step that throws leaves no driver state to roll back from, so it cleans up after itself.
    if (!state.stackId) {
      await Promise.all(createdImages(state.images).map((id) => glance.deleteImage(id).catch((cleanup: unknown) => {
        log.warn('openstack: could not delete an image after a failed instantiate start', { vnfInstanceId: ctx.vnfInstanceId, glanceImageId: id, error: cleanup });
      })));
    }
    throw error;
  }
  return { ...state };
}

async function instantiatePoll(ctx: OperationContext, raw: DriverState): Promise<Progress> {
  const state = stateOf(ctx, raw);
  const session = new OpenStackSession(ctx.vim);
  const heat = new HeatClient(session);
  if (!state.stackId) {
    const ready = await imagesReady(new GlanceClient(session), state.images);
    if (ready.failed) return { status: 'FAILED', state: { ...state }, reason: ready.failed };
    if (ready.pending) return { status: 'IN_PROGRESS', state: { ...state } };
    return { status: 'IN_PROGRESS', state: { ...state, ...(await createStack(ctx, heat, state)) } };
  }
  return stackProgress(await heat.getStack(stackRef(state)), 'CREATE', state);
}

async function collect(ctx: OperationContext, raw: DriverState): Promise<CollectedResources> {
  const state = stateOf(ctx, raw);
  const heat = new HeatClient(new OpenStackSession(ctx.vim));
  const resources = await heat.listResources(stackRef(state), RESOURCE_NESTED_DEPTH);
  return collectResources({
    resources,
    flavour: flavourOf(ctx.vnfd, ctx.flavourId),
    extVirtualLinks: requestOf(ctx.instantiateRequest).extVirtualLinks ?? [],
    vimConnectionId: ctx.vim.vimId,
  });
}

async function terminateStart(ctx: OperationContext, raw: DriverState): Promise<DriverState> {
  const state = stateOf(ctx, raw);
  const session = new OpenStackSession(ctx.vim);
  const heat = new HeatClient(session);
  if (!state.stackId) {
    // A partial state (rollback of a start that never recorded the stack): find it by name. Heat
    // deletes only by name and id; a DELETE by name alone is a redirect not every client follows.
    const existing = await heat.getStack(state.stackName);
    if (existing && existing.stack_status !== 'DELETE_COMPLETE') state.stackId = existing.id;
  }
  const existed = state.stackId !== undefined && await heat.deleteStack(stackRef(state));
  log.info('openstack: deleting stack', { vnfInstanceId: ctx.vnfInstanceId, stack: stackRef(state), existed });
  if (!existed) {
    // Nothing to wait for: the images can go now.
    await deleteImages(ctx, new GlanceClient(session), state);
    return { ...state, imagesDeleted: true };
  }
  return { ...state };
}

async function terminatePoll(ctx: OperationContext, raw: DriverState): Promise<Progress> {
  const state = stateOf(ctx, raw);
  const session = new OpenStackSession(ctx.vim);
  const heat = new HeatClient(session);
  const stack = state.imagesDeleted ? undefined : await heat.getStack(stackRef(state));
  if (!stack || stack.stack_status === 'DELETE_COMPLETE') {
    // Images go once nothing can still be booting from them.
    if (!state.imagesDeleted) await deleteImages(ctx, new GlanceClient(session), state);
    return { status: 'DONE', state: { ...state, imagesDeleted: true } };
  }
  if (stack.stack_status === 'DELETE_FAILED') {
    return { status: 'FAILED', state: { ...state }, reason: stack.stack_status_reason ?? 'DELETE_FAILED' };
  }
  if (!stack.stack_status.startsWith('DELETE_')) {
    // Heat had not yet taken the delete (or it was lost): ask again, deletion is idempotent.
    await heat.deleteStack(stackRef(state));
  }
  return { status: 'IN_PROGRESS', state: { ...state } };
}

// ---------------------------------------------------------------------------------------------
// Scale and heal

/** The Heat resource to mark unhealthy for a VNFC: for scale-in its scaling group member (the group then removes exactly it), for heal its server. */
function unhealthyTarget(resources: HeatResource[], vnfc: VnfcRef, change: UpdateChange): { stack: string; resourceName: string } {
  const placement = serverPlacement(resources, vnfc.resourceId);
  if (!placement) throw new VimError('heat', `VNFC ${vnfc.resourceId} of ${vnfc.vduId} is not a server of the stack`);
  if (change.kind === 'HEAL') return { stack: placement.stack, resourceName: placement.resourceName };
  if (!placement.member) {
    throw new UnprocessableEntityError(`VNFC ${vnfc.resourceId} of ${vnfc.vduId} cannot be scaled in: its server is not a member of an OS::Heat::AutoScalingGroup in the BaseHOT`);
  }
  return placement.member;
}

/** A member marked unhealthy but kept by the new capacity would be replaced, not removed: refuse that. */
function checkRemovals(ctx: OperationContext, resources: HeatResource[], change: Extract<UpdateChange, { kind: 'SCALE' }>): void {
  const existing = collectResources({ resources, flavour: flavourOf(ctx.vnfd, ctx.flavourId), extVirtualLinks: [] }).vnfcResourceInfo;
  for (const vduId of new Set(change.remove.map((vnfc) => vnfc.vduId))) {
    const removals = change.remove.filter((vnfc) => vnfc.vduId === vduId).length;
    const count = existing.filter((vnfc) => vnfc.vduId === vduId).length;
    const target = change.targets[vduId];
    if (target === undefined || count - removals < target) {
      throw new UnprocessableEntityError(`scale-in would remove ${removals} of the ${count} VNFCs of ${vduId} but keep ${target ?? 'all'} of them`);
    }
  }
}

async function updateStart(ctx: OperationContext, raw: DriverState, change: UpdateChange): Promise<DriverState> {
  const state = stateOf(ctx, raw);
  const heat = new HeatClient(new OpenStackSession(ctx.vim));
  const stack = await heat.getStack(stackRef(state));
  if (!stack || stack.stack_status.startsWith('DELETE_')) throw new VimError('heat', `the stack of VNF instance ${ctx.vnfInstanceId} (${stackRef(state)}) does not exist`);
  state.stackId = stack.id;
  const ref = stackRef(state);

  // PATCH keeps every parameter it is not given: a heal changes none.
  const parameters: Record<string, unknown> = {};
  if (change.kind === 'SCALE') {
    const flavour = flavourOf(ctx.vnfd, ctx.flavourId);
    const unknown = Object.keys(change.targets).filter((vduId) => !flavour.vdus.some((vdu) => vdu.id === vduId));
    if (unknown.length) throw new UnprocessableEntityError(`flavour ${ctx.flavourId} has no VDU ${unknown.join(', ')} to scale`);
    // A state from before capacities were recorded: the stack knows them.
    state.capacities = { ...(state.capacities ?? capacitiesOf(stack.parameters?.nfv)), ...change.targets };
    // Rebuilt from the instantiate inputs, so that only the capacities differ from what the stack has.
    parameters.nfv = nfvOf(ctx, state, await loadBaseHot(ctx.files, ctx.flavourId), state.instantiateGrant ?? grantChoicesOf(ctx.grant));
  }

  const named = change.kind === 'HEAL' ? change.vnfcs : change.scaleType === 'SCALE_IN' ? change.remove : [];
  const marked: Array<{ stack: string; resourceName: string }> = [];
  if (named.length) {
    const resources = await heat.listResources(ref, RESOURCE_NESTED_DEPTH);
    // A VNFC the stack no longer has was replaced or removed by an earlier attempt of this operation
    // (a retry after a failed update): it is done, not an error.
    const vnfcs = named.filter((vnfc) => serverPlacement(resources, vnfc.resourceId));
    const gone = named.filter((vnfc) => !vnfcs.includes(vnfc));
    if (gone.length) log.info('openstack: VNFCs already replaced or removed', { vnfInstanceId: ctx.vnfInstanceId, vnfcs: gone.map((vnfc) => vnfc.resourceId) });
    if (change.kind === 'SCALE') checkRemovals(ctx, resources, { ...change, remove: vnfcs });
    // All found before any is marked, so that a VNFC that cannot be marked leaves the stack untouched.
    marked.push(...vnfcs.map((vnfc) => unhealthyTarget(resources, vnfc, change)));
  }
  const reason = `${change.kind === 'HEAL' ? 'healed' : 'scaled in'} by VNF LCM operation ${ctx.opOccId}`;
  for (const target of marked) await heat.markUnhealthy(target.stack, target.resourceName, reason);

  log.info('openstack: updating stack', { vnfInstanceId: ctx.vnfInstanceId, stack: ref, change: change.kind, capacities: state.capacities, unhealthy: marked });
  // Rollback stays the LCM engine's decision, as at create.
  await heat.patchStack(ref, { parameters, disableRollback: true });
  return { ...state };
}

async function updatePoll(ctx: OperationContext, raw: DriverState): Promise<Progress> {
  const state = stateOf(ctx, raw);
  const heat = new HeatClient(new OpenStackSession(ctx.vim));
  return stackProgress(await heat.getStack(stackRef(state)), 'UPDATE', state);
}

async function verify(vim: VimConnection): Promise<void> {
  await verifyAccess(openStackAccess(vim), ['orchestration', 'image']);
}

export const openStackDriver: InfraDriver = {
  vimTypes: OPENSTACK_VIM_TYPES,
  instantiateStart,
  instantiatePoll,
  collect,
  terminateStart,
  terminatePoll,
  updateStart,
  updatePoll,
  verify,
};

// The OpenStack infra driver: a VNF is one Heat stack `vnf-<instanceId>` built from the package's
// BaseHOT, plus the Glance images the driver uploaded from the package. Steps never wait: start
// steps issue requests and return ids, poll steps read status. The driver state names only VIM ids,
// and rollback or terminate also find what a lost or partial state would have named (by the
// deterministic stack and image names), so a failure half-way through leaves nothing behind.
import { z } from 'zod';
import { log } from '#lib/log.ts';
import type { SoftwareImageInfo } from '#lib/packages/vnfd.ts';
import type { CollectedResources, DriverState, InfraDriver, OperationContext, Progress, VimConnection } from '#lib/vim/driver.ts';
import { VimError } from './errors.ts';
import { GlanceClient } from './glance.ts';
import { HeatClient } from './heat.ts';
import { buildNfv, flavourOf, loadBaseHot, parseTemplate, requestOf } from './hot.ts';
import { OpenStackSession, openStackAccess, verifyAccess } from './keystone.ts';
import { collectResources } from './resources.ts';

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

const stateSchema = z.object({
  stackName: z.string().optional(),
  stackId: z.string().optional(),
  images: z.array(imageRecord).default([]),
}).passthrough();

/** What instantiate and terminate carry between steps. */
export interface OpenStackState {
  stackName: string;
  stackId?: string;
  images: ImageRecord[];
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

async function createStack(ctx: OperationContext, heat: HeatClient, state: OpenStackState): Promise<string> {
  const hot = await loadBaseHot(ctx.files, ctx.flavourId);
  const nfv = buildNfv({
    flavour: flavourOf(ctx.vnfd, ctx.flavourId),
    ...(ctx.instantiationLevelId !== undefined ? { instantiationLevelId: ctx.instantiationLevelId } : {}),
    request: ctx.request,
    grant: ctx.grant,
    images: Object.fromEntries(state.images.map((image) => [image.imageId, image.id])),
    template: parseTemplate(hot),
    ...(typeof ctx.vim.extra?.availabilityZone === 'string' ? { defaultZone: ctx.vim.extra.availabilityZone } : {}),
  });
  log.info('openstack: creating stack', { vnfInstanceId: ctx.vnfInstanceId, stackName: state.stackName, template: hot.templatePath, files: Object.keys(hot.files) });
  const created = await heat.createStack({ stackName: state.stackName, template: hot.template, files: hot.files, parameters: { nfv }, disableRollback: true });
  if (created) return created.id;
  // 409: a retried step already created it.
  const existing = await heat.getStack(state.stackName);
  if (!existing) throw new VimError('heat', `creating stack ${state.stackName}: heat answered 409 but has no stack of that name`);
  return existing.id;
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
  requestOf(ctx.request);
  const glance = new GlanceClient(session);
  const state: OpenStackState = { stackName: stackNameOf(ctx.vnfInstanceId), images: [] };
  try {
    await resolveImages(ctx, glance, state.images);
    const ready = await imagesReady(glance, state.images);
    if (ready.failed) throw new VimError('glance', ready.failed);
    if (!ready.pending) state.stackId = await createStack(ctx, new HeatClient(session), state);
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
    return { status: 'IN_PROGRESS', state: { ...state, stackId: await createStack(ctx, heat, state) } };
  }
  const stack = await heat.getStack(stackRef(state));
  if (!stack) return { status: 'FAILED', state: { ...state }, reason: `stack ${stackRef(state)} no longer exists` };
  switch (stack.stack_status) {
    case 'CREATE_COMPLETE':
      return { status: 'DONE', state: { ...state } };
    case 'CREATE_IN_PROGRESS':
      return { status: 'IN_PROGRESS', state: { ...state } };
    case 'CREATE_FAILED':
      return { status: 'FAILED', state: { ...state }, reason: stack.stack_status_reason ?? 'CREATE_FAILED' };
    default:
      return stack.stack_status.endsWith('_IN_PROGRESS')
        ? { status: 'IN_PROGRESS', state: { ...state } }
        : { status: 'FAILED', state: { ...state }, reason: `stack ${stack.stack_name} is ${stack.stack_status}${stack.stack_status_reason ? `: ${stack.stack_status_reason}` : ''}` };
  }
}

async function collect(ctx: OperationContext, raw: DriverState): Promise<CollectedResources> {
  const state = stateOf(ctx, raw);
  const heat = new HeatClient(new OpenStackSession(ctx.vim));
  const resources = await heat.listResources(stackRef(state), RESOURCE_NESTED_DEPTH);
  return collectResources({
    resources,
    flavour: flavourOf(ctx.vnfd, ctx.flavourId),
    extVirtualLinks: requestOf(ctx.request).extVirtualLinks ?? [],
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
  verify,
};

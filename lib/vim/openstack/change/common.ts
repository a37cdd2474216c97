// What the two kinds of CHANGE_VNFPKG on OpenStack share: the progress a change records in the
// driver state (under `change`), the names and images of the package it moves to, and the VNFCs
// of a stack as Heat lists them. The steps are driven from lib/vim/openstack/change-package.ts.
import * as z from 'zod';
import { log } from '#lib/log.ts';
import { isRecord } from '#lib/json.ts';
import type { FlavourInfo } from '#lib/packages/vnfd/model.ts';
import type { Coordination, DriverState, OperationContext, PackageChange } from '#lib/vim/driver.ts';
import { VimError } from '../errors.ts';
import { GlanceClient } from '../glance.ts';
import { HeatClient, resourceStackId, type HeatResource, type HeatStack } from '../heat.ts';
import { flavourOf } from '../hot.ts';
import { createdImages, deleteImages, imageOwners, imageRecord, resolveImages, type ImageRecord } from '../images.ts';
import { OpenStackSession } from '../keystone.ts';
import { collectResources, PORT, SERVER } from '../resources.ts';
import { grantChoices, type OpenStackState } from '../state.ts';

export type Json = Record<string, unknown>;
export type CoordinatedVnfc = Coordination['vnfcs'][number];

// ---------------------------------------------------------------------------------------------
// What the change records in the driver state (under `change`; the rest stays the old package's
// state until the change is DONE)

const targetSchema = z.object({
  vduId: z.string(),
  /** The server when the change started. */
  resourceId: z.string(),
  /** "<name>/<id>" of the stack holding the server, and its resource name there. */
  stack: z.string(),
  resourceName: z.string(),
  /** A member of an AutoScalingGroup: the group's nested stack, the member's name in it, and the group's name in the top template. */
  member: z.object({ stack: z.string(), resourceName: z.string(), group: z.string() }).optional(),
  /** The server after its update: the same id when Heat rebuilt it, another when it replaced it. */
  updatedId: z.string().optional(),
  /** pending -> updating (its stack update issued) -> coordinating (COORDINATE answered) -> done. */
  step: z.enum(['pending', 'updating', 'coordinating', 'done']),
});
export type Target = z.infer<typeof targetSchema>;

const changeSchema = z.object({
  upgradeType: z.enum(['RollingUpdate', 'BlueGreen']),
  vnfPkgId: z.string(),
  /**
   * Rolling: images -> vnfcs -> stack. Blue-green: images -> create -> coordinate-new (asked) ->
   * coordinate-old (asked) -> delete-old.
   */
  phase: z.enum(['images', 'vnfcs', 'stack', 'create', 'coordinate-new', 'coordinate-old', 'delete-old']),
  /** The new package's images (uploaded or granted). */
  newImages: z.array(imageRecord),
  /** Rolling: the VDUs updated, the image owners given new images, the VNFCs in order, and the stack's nfv before. */
  vdus: z.array(z.string()).default([]),
  owners: z.array(z.string()).default([]),
  targets: z.array(targetSchema).default([]),
  oldNfv: z.record(z.string(), z.unknown()).optional(),
  /** Blue-green: the new stack, how it is being built (a retried create updates it), and what it records. */
  newStackName: z.string().optional(),
  newStackId: z.string().optional(),
  createAction: z.enum(['CREATE', 'UPDATE']).optional(),
  newCapacities: z.record(z.string(), z.number().int().nonnegative()).optional(),
  newGrant: grantChoices.optional(),
  /** The last poll answered FAILED: the next one (a retry of the operation) issues the failed step again. */
  retry: z.boolean().optional(),
  rollback: z
    .object({
      /** Rolling: vnfcs -> stack -> images. Blue-green: coordinate-old (asked) -> delete-new -> images; impossible after the old stack went. */
      step: z.enum(['vnfcs', 'stack', 'coordinate-old', 'delete-new', 'images', 'impossible']),
      /** Rolling: the position among the VNFCs the change touched, and where that one stands. */
      index: z.number().int().nonnegative(),
      vnfc: z.enum(['updating', 'coordinating']).optional(),
    })
    .optional(),
});
export type ChangeState = z.infer<typeof changeSchema>;

/** The driver state a change step carries: the old package's state plus the change's progress. */
export type Working = OpenStackState & { change: ChangeState };

export function changeOf(raw: DriverState): ChangeState | undefined {
  const parsed = changeSchema.safeParse(raw?.change);
  return parsed.success ? parsed.data : undefined;
}

export const withoutChange = (state: OpenStackState): OpenStackState => {
  const { change: _change, ...rest } = state;
  return rest as OpenStackState;
};

export interface Env {
  ctx: OperationContext;
  change: PackageChange;
  heat: HeatClient;
  glance: GlanceClient;
}

export function envOf(ctx: OperationContext, change: PackageChange): Env {
  const session = new OpenStackSession(ctx.vim);
  return { ctx, change, heat: new HeatClient(session), glance: new GlanceClient(session) };
}

// ---------------------------------------------------------------------------------------------
// Names and the new package

/** A short tag of a package id for names: its first 8 letters and digits. */
const tagOf = (id: string): string => (id.replace(/[^A-Za-z0-9]/g, '').slice(0, 8) || 'pkg').toLowerCase();

/** Glance name of an image of the package a change moves to. */
export const changeImageNameOf = (vnfInstanceId: string, imageId: string, vnfPkgId: string): string => `vnf-${vnfInstanceId}-${imageId}-${tagOf(vnfPkgId)}`;

/** The blue-green stack: named after the instance and the new package (and the operation, should that be the current stack's name). */
export function blueGreenStackNameOf(ctx: Pick<OperationContext, 'vnfInstanceId' | 'opOccId'>, vnfPkgId: string, currentStackName: string): string {
  const name = `vnf-${ctx.vnfInstanceId}-${tagOf(vnfPkgId)}`;
  return name === currentStackName ? `${name}-${tagOf(ctx.opOccId)}` : name;
}

/** The operation context seen from the new package: its VNFD, files, flavour and grant (and the instantiation level if it has it). */
export function newPackageContext(ctx: OperationContext, change: PackageChange): OperationContext {
  const flavour = flavourOf(change.vnfd, change.flavourId);
  const { instantiationLevelId, ...rest } = ctx;
  const keepsLevel = instantiationLevelId !== undefined && Object.hasOwn(flavour.instantiationLevels.levels, instantiationLevelId);
  return { ...rest, vnfd: change.vnfd, files: change.files, flavourId: change.flavourId, grant: change.grant, ...(keepsLevel ? { instantiationLevelId } : {}) };
}

/** Uploads (or finds) the new package's images for these owners; a failure removes what it uploaded. */
export async function uploadNewImages(env: Env, owners?: ReadonlySet<string>): Promise<ImageRecord[]> {
  const records: ImageRecord[] = [];
  try {
    await resolveImages(newPackageContext(env.ctx, env.change), env.glance, records, {
      nameOf: (owner) => changeImageNameOf(env.ctx.vnfInstanceId, owner, env.change.vnfPkgId),
      ...(owners ? { owners } : {}),
    });
  } catch (error) {
    await deleteQuietly(env, createdImages(records));
    throw error;
  }
  return records;
}

export async function deleteQuietly(env: Env, ids: string[]): Promise<void> {
  await Promise.all(
    ids.map((id) =>
      env.glance.deleteImage(id).catch((error: unknown) => {
        log.warn('openstack: could not delete an image of a failed package change', { vnfInstanceId: env.ctx.vnfInstanceId, glanceImageId: id, error });
      }),
    ),
  );
}

/** An image the driver created for the instance stays the driver's to delete, whichever records name it. */
export function owned(records: ImageRecord[], previous: ImageRecord[]): ImageRecord[] {
  const created = new Set(createdImages([...records, ...previous]));
  return records.map((record) => ({ ...record, created: created.has(record.id) }));
}

/** Deletes the images the change made (also by name, for a partial state), never one the old package uses. */
export async function deleteNewImages(env: Env, state: OpenStackState, change: ChangeState): Promise<void> {
  const keep = new Set(state.images.map((image) => image.id));
  const names = imageOwners(newPackageContext(env.ctx, env.change)).map(({ owner }) => changeImageNameOf(env.ctx.vnfInstanceId, owner, env.change.vnfPkgId));
  const found = new Set(createdImages(change.newImages));
  for (const name of names) for (const image of await env.glance.findByName(name)) found.add(image.id);
  await deleteImages(
    env.glance,
    env.ctx.vnfInstanceId,
    [...found].filter((id) => !keep.has(id)),
    [],
  );
}

/** Deletes the old package's images the new state no longer uses. */
export async function deleteOldImages(env: Env, before: OpenStackState, after: OpenStackState): Promise<void> {
  const used = new Set(after.images.map((image) => image.id));
  await deleteImages(
    env.glance,
    env.ctx.vnfInstanceId,
    createdImages(before.images).filter((id) => !used.has(id)),
    [],
  );
}

// ---------------------------------------------------------------------------------------------
// Reading the stacks

export const uuidOf = (ref: string): string => ref.split('/')[1] ?? ref;
export const stackUuidOf = (resource: HeatResource): string | undefined => resourceStackId(resource)?.split('/')[1];

/** The stack's nfv parameter (Heat shows json parameters as text). */
export function nfvOfStack(stack: HeatStack | undefined): Json | undefined {
  const value = stack?.parameters?.nfv;
  if (isRecord(value)) return value;
  if (typeof value !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export async function liveStack(env: Env, ref: string, what: string): Promise<HeatStack> {
  const stack = await env.heat.getStack(ref);
  if (!stack || stack.stack_status.startsWith('DELETE_'))
    throw new VimError('heat', `the ${what} of VNF instance ${env.ctx.vnfInstanceId} (${ref}) does not exist`);
  return stack;
}

function addressesOf(value: unknown): string[] {
  let list = value;
  if (typeof list === 'string') {
    try {
      list = JSON.parse(list);
    } catch {
      return [];
    }
  }
  if (!Array.isArray(list)) return [];
  return list.flatMap((entry) => (isRecord(entry) && typeof entry.ip_address === 'string' ? [entry.ip_address] : []));
}

/** IP addresses per CP of a server, from the ports of its VDU's CPs in the server's stack (resources listed with detail). */
export function serverAddresses(resources: HeatResource[], server: HeatResource, flavour: FlavourInfo, vduId: string): Record<string, string[]> {
  const stack = stackUuidOf(server);
  const addresses: Record<string, string[]> = {};
  for (const cp of flavour.cps.filter((candidate) => candidate.vdu === vduId)) {
    const ports = resources.filter((resource) => resource.resource_type === PORT && resource.resource_name === cp.id && stackUuidOf(resource) === stack);
    const port = ports.find((candidate) => candidate.required_by?.includes(server.resource_name)) ?? ports[0];
    const ips = addressesOf(port?.attributes?.fixed_ips);
    if (ips.length) addresses[cp.id] = ips;
  }
  return addresses;
}

const creationTimeOf = (resource: HeatResource | undefined): string => resource?.creation_time ?? '';

/** The VNFCs of a stack (resources listed with detail), by VDU in the flavour's order, oldest first. */
export function vnfcsOf(resources: HeatResource[], flavour: FlavourInfo): CoordinatedVnfc[] {
  const order = flavour.vdus.map((vdu) => vdu.id);
  const servers = collectResources({ resources, flavour, extVirtualLinks: [] }).vnfcResourceInfo.flatMap((info) => {
    const server = resources.find((resource) => resource.resource_type === SERVER && resource.physical_resource_id === info.id);
    return server ? [{ server, vduId: String(info.vduId) }] : [];
  });
  servers.sort(
    (a, b) =>
      order.indexOf(a.vduId) - order.indexOf(b.vduId) ||
      creationTimeOf(a.server).localeCompare(creationTimeOf(b.server)) ||
      String(a.server.physical_resource_id).localeCompare(String(b.server.physical_resource_id)),
  );
  return servers.map(({ server, vduId }) => ({
    vduId,
    resourceId: String(server.physical_resource_id),
    id: String(server.physical_resource_id),
    addresses: serverAddresses(resources, server, flavour, vduId),
  }));
}

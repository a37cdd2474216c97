// CHANGE_VNFPKG on OpenStack (seed 004), as steps that never wait: each poll reads where Heat or
// Glance stand and issues the next request, and the state records every step taken, so a poll, a
// retry or a rollback knows exactly what has changed.
//
// Rolling update: the new package's images are uploaded beside the old ones (named with the new
// package, so nothing clashes), then each target VNFC (the request's VDUs, oldest VNFC first) moves
// on its own. A member of an AutoScalingGroup moves by an update of the group's nested stack in
// which only that member's definition changes, as Tacker v2 does (Heat keeps a member's definition
// when the group later resizes); a server of the top stack moves by a PATCH of the top stack's nfv
// for its VDU alone. After each, the new VNF's CoordinateVNF runs for that VNFC (a COORDINATE
// answer). Last the top stack takes the new package's BaseHOT and nfv, so later scale and heal build
// on it, and the old images go. Heat rebuilds a server whose image changed in place (its id stays)
// and replaces one whose boot volume changed (a new id); the COORDINATE and collect show which.
//
// Blue-green: a second stack `vnf-<instanceId>-<package>` from the new package beside the old one,
// then CoordinateVNF for the new VNFCs (the script switches the external load balancer to them),
// then for the old ones, then the old stack and images go and the new stack is the VNF's stack.
//
// Rollback works from the progress the failed attempt recorded: blue-green switches the load
// balancer back if it may have been switched, and deletes the new stack and images (it cannot
// once the old stack is being deleted, and says so); rolling moves every touched VNFC back to the
// old package one by one, with the old VNF's CoordinateVNF after each, then the top stack back to
// the old template and nfv, and deletes the new images. A retry (a poll of the state a failure left,
// or changeStart with it) issues the failed step again and goes on.
import { z } from 'zod';
import { log } from '#lib/log.ts';
import type { FlavourInfo } from '#lib/packages/vnfd/model.ts';
import { UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { Coordination, DriverState, OperationContext, PackageChange, Progress } from '#lib/vim/driver.ts';
import { VimError } from './errors.ts';
import { GlanceClient } from './glance.ts';
import { HeatClient, resourceStackId, type HeatResource, type HeatStack } from './heat.ts';
import { capacitiesOf, flavourOf, loadBaseHot, parseTemplate, requestOf, type BaseHot } from './hot.ts';
import { createdImages, deleteImages, imageOwners, imageRecord, imagesReady, resolveImages, type ImageRecord } from './images.ts';
import { OpenStackSession } from './keystone.ts';
import { collectResources, PORT, SERVER, serverPlacement } from './resources.ts';
import { createStack, grantChoices, grantChoicesOf, nfvOf, RESOURCE_NESTED_DEPTH, stackActionStatus, stackDeletion, stackRef, stateOf, type GrantChoices, type OpenStackState, type StackActionStatus } from './state.ts';
import { isRecord } from '#lib/json.ts';

type Json = Record<string, unknown>;
type CoordinatedVnfc = Coordination['vnfcs'][number];

const clone = <T>(value: T): T => structuredClone(value);

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
type Target = z.infer<typeof targetSchema>;

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
  rollback: z.object({
    /** Rolling: vnfcs -> stack -> images. Blue-green: coordinate-old (asked) -> delete-new -> images; impossible after the old stack went. */
    step: z.enum(['vnfcs', 'stack', 'coordinate-old', 'delete-new', 'images', 'impossible']),
    /** Rolling: the position among the VNFCs the change touched, and where that one stands. */
    index: z.number().int().nonnegative(),
    vnfc: z.enum(['updating', 'coordinating']).optional(),
  }).optional(),
});
type ChangeState = z.infer<typeof changeSchema>;

/** The driver state a change step carries: the old package's state plus the change's progress. */
type Working = OpenStackState & { change: ChangeState };

function changeOf(raw: DriverState): ChangeState | undefined {
  const parsed = changeSchema.safeParse(raw?.change);
  return parsed.success ? parsed.data : undefined;
}

const withoutChange = (state: OpenStackState): OpenStackState => {
  const { change: _change, ...rest } = state;
  return rest as OpenStackState;
};

interface Env {
  ctx: OperationContext;
  change: PackageChange;
  heat: HeatClient;
  glance: GlanceClient;
}

function envOf(ctx: OperationContext, change: PackageChange): Env {
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
function newPackageContext(ctx: OperationContext, change: PackageChange): OperationContext {
  const flavour = flavourOf(change.vnfd, change.flavourId);
  const { instantiationLevelId, ...rest } = ctx;
  const keepsLevel = instantiationLevelId !== undefined && Object.hasOwn(flavour.instantiationLevels.levels, instantiationLevelId);
  return { ...rest, vnfd: change.vnfd, files: change.files, flavourId: change.flavourId, grant: change.grant, ...(keepsLevel ? { instantiationLevelId } : {}) };
}

/** Uploads (or finds) the new package's images for these owners; a failure removes what it uploaded. */
async function uploadNewImages(env: Env, owners?: ReadonlySet<string>): Promise<ImageRecord[]> {
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

async function deleteQuietly(env: Env, ids: string[]): Promise<void> {
  await Promise.all(ids.map((id) => env.glance.deleteImage(id).catch((error: unknown) => {
    log.warn('openstack: could not delete an image of a failed package change', { vnfInstanceId: env.ctx.vnfInstanceId, glanceImageId: id, error });
  })));
}

/** An image the driver created for the instance stays the driver's to delete, whichever records name it. */
function owned(records: ImageRecord[], previous: ImageRecord[]): ImageRecord[] {
  const created = new Set(createdImages([...records, ...previous]));
  return records.map((record) => ({ ...record, created: created.has(record.id) }));
}

/** Deletes the images the change made (also by name, for a partial state), never one the old package uses. */
async function deleteNewImages(env: Env, state: OpenStackState, change: ChangeState): Promise<void> {
  const keep = new Set(state.images.map((image) => image.id));
  const names = imageOwners(newPackageContext(env.ctx, env.change)).map(({ owner }) => changeImageNameOf(env.ctx.vnfInstanceId, owner, env.change.vnfPkgId));
  const found = new Set(createdImages(change.newImages));
  for (const name of names) for (const image of await env.glance.findByName(name)) found.add(image.id);
  await deleteImages(env.glance, env.ctx.vnfInstanceId, [...found].filter((id) => !keep.has(id)), []);
}

/** Deletes the old package's images the new state no longer uses. */
async function deleteOldImages(env: Env, before: OpenStackState, after: OpenStackState): Promise<void> {
  const used = new Set(after.images.map((image) => image.id));
  await deleteImages(env.glance, env.ctx.vnfInstanceId, createdImages(before.images).filter((id) => !used.has(id)), []);
}

// ---------------------------------------------------------------------------------------------
// Reading the stacks

const uuidOf = (ref: string): string => ref.split('/')[1] ?? ref;
const stackUuidOf = (resource: HeatResource): string | undefined => resourceStackId(resource)?.split('/')[1];

/** The stack's nfv parameter (Heat shows json parameters as text). */
function nfvOfStack(stack: HeatStack | undefined): Json | undefined {
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

async function liveStack(env: Env, ref: string, what: string): Promise<HeatStack> {
  const stack = await env.heat.getStack(ref);
  if (!stack || stack.stack_status.startsWith('DELETE_')) throw new VimError('heat', `the ${what} of VNF instance ${env.ctx.vnfInstanceId} (${ref}) does not exist`);
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
function serverAddresses(resources: HeatResource[], server: HeatResource, flavour: FlavourInfo, vduId: string): Record<string, string[]> {
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
function vnfcsOf(resources: HeatResource[], flavour: FlavourInfo): CoordinatedVnfc[] {
  const order = flavour.vdus.map((vdu) => vdu.id);
  const servers = collectResources({ resources, flavour, extVirtualLinks: [] }).vnfcResourceInfo.flatMap((info) => {
    const server = resources.find((resource) => resource.resource_type === SERVER && resource.physical_resource_id === info.id);
    return server ? [{ server, vduId: String(info.vduId) }] : [];
  });
  servers.sort((a, b) => order.indexOf(a.vduId) - order.indexOf(b.vduId) || creationTimeOf(a.server).localeCompare(creationTimeOf(b.server)) || String(a.server.physical_resource_id).localeCompare(String(b.server.physical_resource_id)));
  return servers.map(({ server, vduId }) => ({ vduId, resourceId: String(server.physical_resource_id), id: String(server.physical_resource_id), addresses: serverAddresses(resources, server, flavour, vduId) }));
}

/** The external CPs of a flavour: those the VNFD exposes, else those on no internal VL. */
function externalCpsOf(flavour: FlavourInfo): string[] {
  return flavour.externalCps.length ? flavour.externalCps : flavour.cps.filter((cp) => !cp.virtualLink).map((cp) => cp.id);
}

/** What a load balancer in front of these VNFCs would list: their external CPs' addresses. */
function lbMembersOf(vnfcs: CoordinatedVnfc[], flavour: FlavourInfo): Json[] {
  const external = externalCpsOf(flavour);
  return vnfcs.flatMap((vnfc) => Object.entries(vnfc.addresses ?? {})
    .filter(([cpdId]) => external.includes(cpdId))
    .flatMap(([cpdId, addresses]) => addresses.map((address) => ({ vduId: vnfc.vduId, serverId: vnfc.resourceId, cpdId, address }))));
}

/** The server a target is now (Heat may have replaced it), found by where it sits, with its addresses. */
function locate(resources: HeatResource[], target: Target, flavour: FlavourInfo): CoordinatedVnfc | undefined {
  let stack: string | undefined = uuidOf(target.stack);
  if (target.member) {
    const { member } = target;
    const memberResource = resources.find((resource) => resource.resource_name === member.resourceName && stackUuidOf(resource) === uuidOf(member.stack));
    stack = memberResource?.physical_resource_id ?? undefined;
  }
  const server = resources.find((resource) => resource.resource_type === SERVER && resource.resource_name === target.resourceName && stackUuidOf(resource) === stack && resource.physical_resource_id);
  if (!server?.physical_resource_id) return undefined;
  const id = server.physical_resource_id;
  return { vduId: target.vduId, resourceId: id, ...(id === target.resourceId ? { id } : {}), addresses: serverAddresses(resources, server, flavour, target.vduId) };
}

// ---------------------------------------------------------------------------------------------
// Moving one VNFC (to the new package, or back)

type PathItem = string | number;

function dig(value: unknown, path: PathItem[]): unknown {
  let current = value;
  for (const key of path) {
    if (Array.isArray(current)) current = current[Number(key)];
    else if (isRecord(current)) current = current[String(key)];
    else return null;
    if (current === undefined) return null;
  }
  return current;
}

const INTRINSIC = /^(get_|str_|list_|map_|repeat$|digest$|if$|equals$|not$|and$|or$|contains$|yaql$|filter$|make_url$|resource_facade$|Fn::|Ref$)/;

/** A member property's value when the top template makes it from nfv (or a literal); undefined when it needs Heat (get_resource...). */
function nfvValueOf(value: unknown, nfv: Json): { value: unknown } | undefined {
  if (value === null || typeof value !== 'object') return { value };
  if (Array.isArray(value)) {
    const items = value.map((item) => nfvValueOf(item, nfv));
    return items.every((item) => item !== undefined) ? { value: items.map((item) => item?.value) } : undefined;
  }
  const keys = Object.keys(value);
  if (keys.length === 1 && INTRINSIC.test(keys[0] as string)) {
    const path = (value as Json).get_param;
    if (path === 'nfv') return { value: nfv };
    if (Array.isArray(path) && path[0] === 'nfv' && path.every((item) => typeof item === 'string' || typeof item === 'number')) return { value: dig(nfv, path.slice(1) as PathItem[]) };
    return undefined;
  }
  const out: Json = {};
  for (const [key, item] of Object.entries(value)) {
    const resolved = nfvValueOf(item, nfv);
    if (!resolved) return undefined;
    out[key] = resolved.value;
  }
  return { value: out };
}

/** The member definition a BaseHOT gives a scaling group with this nfv: its type and the properties nfv decides. */
function memberDefinitionOf(hot: BaseHot, group: string, nfv: Json): { type?: string; properties: Json } {
  const template = parseTemplate(hot);
  const resources = isRecord(template) && isRecord(template.resources) ? template.resources : {};
  const definition = resources[group];
  const member = isRecord(definition) && definition.type === 'OS::Heat::AutoScalingGroup' && isRecord(definition.properties) ? definition.properties.resource : undefined;
  if (!isRecord(member)) throw new UnprocessableEntityError(`the BaseHOT ${hot.templatePath} has no OS::Heat::AutoScalingGroup ${group} with a member resource, which the VNF's stack has`);
  const properties: Json = {};
  for (const [key, value] of Object.entries(isRecord(member.properties) ? member.properties : {})) {
    const resolved = nfvValueOf(value, nfv);
    if (resolved && resolved.value !== null && resolved.value !== undefined) properties[key] = resolved.value;
  }
  return { ...(typeof member.type === 'string' ? { type: member.type } : {}), properties };
}

/** The nfv keys of a VDU: its own entry and its storages' under VDU, its CPs under CP (in either package). */
function vduKeys(flavours: FlavourInfo[], vduId: string): { vdus: string[]; cps: string[] } {
  const vdus = new Set([vduId]);
  const cps = new Set<string>();
  for (const flavour of flavours) {
    for (const storage of flavour.vdus.find((vdu) => vdu.id === vduId)?.storages ?? []) vdus.add(storage);
    for (const cp of flavour.cps.filter((candidate) => candidate.vdu === vduId)) cps.add(cp.id);
  }
  return { vdus: [...vdus], cps: [...cps] };
}

/** `current` with the entries of one VDU taken from `source`. */
function withVduEntries(current: Json, source: Json, keys: { vdus: string[]; cps: string[] }): Json {
  const nfv = clone(current);
  for (const [section, names] of [['VDU', keys.vdus], ['CP', keys.cps]] as const) {
    const from = source[section];
    if (!isRecord(from)) continue;
    const to = isRecord(nfv[section]) ? (nfv[section] as Json) : {};
    for (const name of names) if (Object.hasOwn(from, name)) to[name] = clone(from[name]);
    nfv[section] = to;
  }
  return nfv;
}

/** The stack whose update moves the target: its scaling group's nested stack, else the top stack. */
const updatedStackOf = (state: OpenStackState, target: Target): string => target.member?.stack ?? stackRef(state);

/**
 * Moves one VNFC to the package of `hot` and `nfv`: a group member by an update of the group's
 * nested stack with that member's definition changed, another server by a PATCH of the top
 * stack's nfv for its VDU only. Answers the stack to poll.
 */
async function moveVnfc(env: Env, state: OpenStackState, target: Target, hot: BaseHot, nfv: Json): Promise<string> {
  if (target.member) {
    const { member } = target;
    const template = await env.heat.getTemplate(member.stack);
    const resources = isRecord(template.resources) ? template.resources : {};
    const current = resources[member.resourceName];
    if (!isRecord(current)) throw new VimError('heat', `scaling group ${member.group} (stack ${member.stack}) no longer has member ${member.resourceName} of VNFC ${target.resourceId}`);
    const wanted = memberDefinitionOf(hot, member.group, nfv);
    const definition = { ...current, ...(wanted.type ? { type: wanted.type } : {}), properties: { ...(isRecord(current.properties) ? current.properties : {}), ...wanted.properties } };
    log.info('openstack: updating a scaling group member', { vnfInstanceId: env.ctx.vnfInstanceId, stack: member.stack, member: member.resourceName, vnfc: target.resourceId });
    await env.heat.patchStack(member.stack, { template: { ...template, resources: { ...resources, [member.resourceName]: definition } }, files: hot.files, parameters: {}, disableRollback: true });
    return member.stack;
  }
  const ref = stackRef(state);
  const current = nfvOfStack(await liveStack(env, ref, 'stack')) ?? {};
  const flavours = [flavourOf(env.change.vnfd, env.change.flavourId), flavourOf(env.ctx.vnfd, env.ctx.flavourId)];
  log.info('openstack: updating a VDU of the stack', { vnfInstanceId: env.ctx.vnfInstanceId, stack: ref, vduId: target.vduId, vnfc: target.resourceId });
  await env.heat.patchStack(ref, { parameters: { nfv: withVduEntries(current, nfv, vduKeys(flavours, target.vduId)) }, disableRollback: true });
  return ref;
}

/** Where the update moving a VNFC stands; once done, the VNFC as it now is (its server, maybe a new one, and addresses). */
async function movedVnfc(env: Env, working: Working, target: Target, flavour: FlavourInfo): Promise<Exclude<StackActionStatus, { status: 'DONE' }> | { status: 'DONE'; vnfc: CoordinatedVnfc }> {
  const ref = updatedStackOf(working, target);
  const status = stackActionStatus(await env.heat.getStack(ref), 'UPDATE', ref);
  if (status.status !== 'DONE') return status;
  const vnfc = locate(await env.heat.listResources(stackRef(working), RESOURCE_NESTED_DEPTH, true), target, flavour);
  if (!vnfc) return { status: 'FAILED', reason: `after its update, the stack has no server ${target.resourceName} for VNFC ${target.resourceId} of ${target.vduId}` };
  return { status: 'DONE', vnfc };
}

// ---------------------------------------------------------------------------------------------
// Rolling update

/** The image owners (VDUs and their storages) of these VDUs in a flavour. */
function ownersOfVdus(flavour: FlavourInfo, vduIds: string[]): Set<string> {
  return new Set(flavour.vdus.filter((vdu) => vduIds.includes(vdu.id)).flatMap((vdu) => [vdu.id, ...vdu.storages]));
}

/** The state once the rolling update is done: the new images for what moved, the old for the rest, and flavours pinned for VDUs that did not move. */
function rollingResult(env: Env, state: OpenStackState, change: ChangeState): OpenStackState {
  const pkg = newPackageContext(env.ctx, env.change);
  const fresh = new Set(change.owners);
  const images = imageOwners(pkg).flatMap(({ owner }) => (fresh.has(owner) ? change.newImages : state.images).filter((image) => image.imageId === owner));
  const flavour = flavourOf(env.change.vnfd, env.change.flavourId);
  const oldVdus = isRecord(change.oldNfv?.VDU) ? (change.oldNfv.VDU as Json) : {};
  const flavours: Record<string, string> = {};
  for (const vdu of flavour.vdus) {
    if (change.vdus.includes(vdu.id)) {
      const granted = env.change.grant.flavours?.[vdu.id];
      if (granted) flavours[vdu.id] = granted;
    } else {
      const kept = dig(oldVdus, [vdu.id, 'computeFlavourId']);
      if (typeof kept === 'string') flavours[vdu.id] = kept;
    }
  }
  const zones = grantChoicesOf(env.change.grant).zones ?? state.instantiateGrant?.zones;
  const instantiateGrant: GrantChoices = { ...(Object.keys(flavours).length ? { flavours } : {}), ...(zones ? { zones } : {}) };
  return { ...withoutChange(state), images: owned(images, state.images), instantiateGrant };
}

/** The top stack's nfv on the new package (what each moving VNFC takes its values from, and the stack at the end). */
function newNfv(env: Env, state: OpenStackState, change: ChangeState, hot: BaseHot): Json {
  const result = rollingResult(env, state, change);
  return nfvOf(newPackageContext(env.ctx, env.change), result, hot, result.instantiateGrant ?? {});
}

/** The VNFCs of the VDUs, VDU by VDU, oldest first, with where each sits in the stack. */
function rollingTargets(resources: HeatResource[], flavour: FlavourInfo, vduIds: string[], top: string): Target[] {
  const vnfcs = vnfcsOf(resources, flavour);
  return vduIds.flatMap((vduId) => vnfcs.filter((vnfc) => vnfc.vduId === vduId).map((vnfc): Target => {
    const placement = serverPlacement(resources, vnfc.resourceId);
    if (!placement) throw new VimError('heat', `VNFC ${vnfc.resourceId} of ${vduId} is not a server of the stack`);
    if (!placement.member) return { vduId, resourceId: vnfc.resourceId, stack: placement.stack, resourceName: placement.resourceName, step: 'pending' };
    const groupStack = uuidOf(placement.member.stack);
    const group = resources.find((resource) => resource.physical_resource_id === groupStack);
    if (!group || stackUuidOf(group) !== uuidOf(top)) {
      throw new UnprocessableEntityError(`VNFC ${vnfc.resourceId} of ${vduId} is a member of a scaling group that is not a resource of the BaseHOT's top template; a rolling update moves members of top-level groups only`);
    }
    return { vduId, resourceId: vnfc.resourceId, stack: placement.stack, resourceName: placement.resourceName, member: { ...placement.member, group: group.resource_name }, step: 'pending' };
  }));
}

async function rollingStart(env: Env, state: OpenStackState): Promise<Working> {
  const { ctx, change } = env;
  const stack = await liveStack(env, stackRef(state), 'stack');
  state.stackId = stack.id;
  // Package and request problems show before anything is uploaded.
  const hot = await loadBaseHot(change.files, change.flavourId);
  parseTemplate(hot);
  requestOf(ctx.instantiateRequest);
  const oldFlavour = flavourOf(ctx.vnfd, ctx.flavourId);
  const newFlavour = flavourOf(change.vnfd, change.flavourId);
  const vdus = change.vduIds.length ? [...new Set(change.vduIds)] : newFlavour.vdus.map((vdu) => vdu.id);
  const missing = vdus.filter((vduId) => !newFlavour.vdus.some((vdu) => vdu.id === vduId) || !oldFlavour.vdus.some((vdu) => vdu.id === vduId));
  if (missing.length) throw new UnprocessableEntityError(`a rolling update moves VDUs both packages have in flavour ${change.flavourId}; ${missing.join(', ')} is not one of them`);

  const oldNfv = nfvOfStack(stack) ?? nfvOf(ctx, state, await loadBaseHot(ctx.files, ctx.flavourId), state.instantiateGrant ?? {});
  state.capacities ??= capacitiesOf(oldNfv);
  const resources = await env.heat.listResources(stackRef(state), RESOURCE_NESTED_DEPTH);
  const targets = rollingTargets(resources, oldFlavour, vdus, stackRef(state));
  // New images for the VDUs that move, and for any image the old package did not have.
  const owners = new Set([...ownersOfVdus(newFlavour, vdus), ...imageOwners({ vnfd: change.vnfd, flavourId: change.flavourId }).map(({ owner }) => owner).filter((owner) => !state.images.some((image) => image.imageId === owner))]);
  const newImages = await uploadNewImages(env, owners);
  const working: Working = { ...state, change: { upgradeType: 'RollingUpdate', vnfPkgId: change.vnfPkgId, phase: 'images', newImages, vdus, owners: [...owners], targets, oldNfv } };
  log.info('openstack: rolling update started', { vnfInstanceId: ctx.vnfInstanceId, vnfPkgId: change.vnfPkgId, vdus, vnfcs: targets.map((target) => target.resourceId) });
  try {
    const ready = await imagesReady(env.glance, newImages);
    if (ready.failed) throw new VimError('glance', ready.failed);
    if (!ready.pending) await rollingNext(env, working);
  } catch (error) {
    await deleteQuietly(env, createdImages(newImages));
    throw error;
  }
  return working;
}

/** Issues the next step: the next VNFC's move, or, when every VNFC has moved, the top stack's. */
async function rollingNext(env: Env, working: Working): Promise<void> {
  const change = working.change;
  const hot = await loadBaseHot(env.change.files, env.change.flavourId);
  const nfv = newNfv(env, working, change, hot);
  const next = change.targets.find((target) => target.step === 'pending');
  if (next) {
    change.phase = 'vnfcs';
    await moveVnfc(env, working, next, hot, nfv);
    next.step = 'updating';
    return;
  }
  change.phase = 'stack';
  log.info('openstack: moving the stack to the new package', { vnfInstanceId: env.ctx.vnfInstanceId, stack: stackRef(working), template: hot.templatePath });
  await env.heat.patchStack(stackRef(working), { template: hot.template, files: hot.files, parameters: { nfv }, disableRollback: true });
}

async function rollingPoll(env: Env, working: Working): Promise<Progress> {
  const change = working.change;
  const failed = (reason: string): Progress => {
    // A retry of the operation polls this state again: the step that failed is then issued again.
    change.retry = true;
    return { status: 'FAILED', state: working, reason };
  };
  if (change.phase === 'images') {
    const ready = await imagesReady(env.glance, change.newImages);
    if (ready.failed) return failed(ready.failed);
    if (!ready.pending) await rollingNext(env, working);
    return { status: 'IN_PROGRESS', state: working };
  }
  if (change.phase === 'vnfcs') {
    const current = change.targets.find((target) => target.step === 'updating' || target.step === 'coordinating');
    if (current?.step === 'coordinating') {
      current.step = 'done';
      await rollingNext(env, working);
      return { status: 'IN_PROGRESS', state: working };
    }
    if (!current) {
      await rollingNext(env, working);
      return { status: 'IN_PROGRESS', state: working };
    }
    const moved = await movedVnfc(env, working, current, flavourOf(env.change.vnfd, env.change.flavourId));
    if (moved.status === 'FAILED') return failed(moved.reason);
    if (moved.status === 'IN_PROGRESS') return { status: 'IN_PROGRESS', state: working };
    const { vnfc } = moved;
    current.updatedId = vnfc.resourceId;
    current.step = 'coordinating';
    log.info('openstack: VNFC moved to the new package', { vnfInstanceId: env.ctx.vnfInstanceId, vduId: current.vduId, before: current.resourceId, after: vnfc.resourceId });
    return { status: 'COORDINATE', state: working, coordinate: { target: 'new', vnfcs: [vnfc] } };
  }
  // phase 'stack'
  const status = stackActionStatus(await env.heat.getStack(stackRef(working)), 'UPDATE', stackRef(working));
  if (status.status === 'FAILED') return failed(status.reason);
  if (status.status === 'IN_PROGRESS') return { status: 'IN_PROGRESS', state: working };
  const result = rollingResult(env, working, change);
  await deleteOldImages(env, working, result);
  log.info('openstack: rolling update done', { vnfInstanceId: env.ctx.vnfInstanceId, vnfPkgId: change.vnfPkgId });
  return { status: 'DONE', state: { ...result } };
}

/** A retried change goes on from where the failed attempt stopped: the failed step is issued again. */
async function rollingResume(env: Env, working: Working): Promise<void> {
  const change = working.change;
  if (change.phase === 'images') return;
  if (change.phase === 'stack') {
    change.targets.forEach((target) => { target.step = 'done'; });
    change.phase = 'vnfcs';
    await rollingNext(env, working);
    return;
  }
  const current = change.targets.find((target) => target.step === 'updating' || target.step === 'coordinating');
  if (current?.step === 'coordinating') {
    // Its script failed: the next poll sees the update complete and asks for it again.
    current.step = 'updating';
  } else if (current) {
    current.step = 'pending';
    await rollingNext(env, working);
  }
}

/** The VNFCs the change touched, in the order it touched them. */
const touchedTargets = (change: ChangeState): Target[] => change.targets.filter((target) => target.step !== 'pending');

async function rollingRollbackNext(env: Env, working: Working): Promise<void> {
  const change = working.change;
  const rollback = change.rollback ?? { step: 'vnfcs', index: 0 };
  change.rollback = rollback;
  const touched = touchedTargets(change);
  const hot = await loadBaseHot(env.ctx.files, env.ctx.flavourId);
  const oldNfv = change.oldNfv ?? nfvOf(env.ctx, working, hot, working.instantiateGrant ?? {});
  if (rollback.step === 'vnfcs' && rollback.index < touched.length) {
    await moveVnfc(env, working, touched[rollback.index] as Target, hot, oldNfv);
    rollback.vnfc = 'updating';
    return;
  }
  delete rollback.vnfc;
  if (change.phase === 'stack' || touched.some((target) => !target.member)) {
    rollback.step = 'stack';
    log.info('openstack: moving the stack back to the old package', { vnfInstanceId: env.ctx.vnfInstanceId, stack: stackRef(working) });
    await env.heat.patchStack(stackRef(working), { template: hot.template, files: hot.files, parameters: { nfv: oldNfv }, disableRollback: true });
    return;
  }
  rollback.step = 'images';
}

async function rollingRollbackPoll(env: Env, working: Working): Promise<Progress> {
  const change = working.change;
  const rollback = change.rollback ?? { step: 'images', index: 0 };
  const failed = (reason: string): Progress => ({ status: 'FAILED', state: working, reason });
  if (rollback.step === 'vnfcs') {
    const target = touchedTargets(change)[rollback.index];
    if (!target) {
      await rollingRollbackNext(env, working);
      return { status: 'IN_PROGRESS', state: working };
    }
    if (rollback.vnfc === 'coordinating') {
      rollback.index += 1;
      await rollingRollbackNext(env, working);
      return { status: 'IN_PROGRESS', state: working };
    }
    const moved = await movedVnfc(env, working, target, flavourOf(env.ctx.vnfd, env.ctx.flavourId));
    if (moved.status === 'FAILED') return failed(moved.reason);
    if (moved.status === 'IN_PROGRESS') return { status: 'IN_PROGRESS', state: working };
    const { vnfc } = moved;
    rollback.vnfc = 'coordinating';
    log.info('openstack: VNFC moved back to the old package', { vnfInstanceId: env.ctx.vnfInstanceId, vduId: target.vduId, before: target.resourceId, after: vnfc.resourceId });
    return { status: 'COORDINATE', state: working, coordinate: { target: 'old', vnfcs: [vnfc] } };
  }
  if (rollback.step === 'stack') {
    const status = stackActionStatus(await env.heat.getStack(stackRef(working)), 'UPDATE', stackRef(working));
    if (status.status === 'FAILED') return failed(status.reason);
    if (status.status === 'IN_PROGRESS') return { status: 'IN_PROGRESS', state: working };
  }
  const old = withoutChange(working);
  await deleteNewImages(env, old, change);
  log.info('openstack: rolling update rolled back', { vnfInstanceId: env.ctx.vnfInstanceId, vnfPkgId: change.vnfPkgId });
  return { status: 'DONE', state: { ...old } };
}

// ---------------------------------------------------------------------------------------------
// Blue-green

const newStackRef = (change: ChangeState): string => stackRef({ stackName: change.newStackName ?? '', ...(change.newStackId ? { stackId: change.newStackId } : {}) });

/** The new package's context for the new stack: its grant, in the zones the VNF has unless the grant says otherwise. */
function blueGreenContext(env: Env, state: OpenStackState): OperationContext {
  const pkg = newPackageContext(env.ctx, env.change);
  const zones = env.change.grant.zones ?? state.instantiateGrant?.zones;
  return { ...pkg, grant: { ...env.change.grant, ...(zones ? { zones } : {}) } };
}

async function createNewStack(env: Env, working: Working): Promise<void> {
  const change = working.change;
  const created = await createStack(blueGreenContext(env, working), env.heat, { stackName: change.newStackName ?? '', images: change.newImages, ...(working.capacities ? { capacities: working.capacities } : {}) });
  change.phase = 'create';
  change.createAction = 'CREATE';
  change.newStackId = created.stackId;
  if (created.capacities) change.newCapacities = created.capacities;
  if (created.instantiateGrant) change.newGrant = created.instantiateGrant;
}

async function blueGreenStart(env: Env, state: OpenStackState): Promise<Working> {
  const { ctx, change } = env;
  const stack = await liveStack(env, stackRef(state), 'stack');
  state.stackId = stack.id;
  state.capacities ??= capacitiesOf(nfvOfStack(stack));
  parseTemplate(await loadBaseHot(change.files, change.flavourId));
  requestOf(ctx.instantiateRequest);
  const newStackName = blueGreenStackNameOf(ctx, change.vnfPkgId, state.stackName);
  const newImages = await uploadNewImages(env);
  const working: Working = { ...state, change: { upgradeType: 'BlueGreen', vnfPkgId: change.vnfPkgId, phase: 'images', newImages, vdus: [], owners: [], targets: [], newStackName } };
  log.info('openstack: blue-green change started', { vnfInstanceId: ctx.vnfInstanceId, vnfPkgId: change.vnfPkgId, newStackName });
  try {
    const ready = await imagesReady(env.glance, newImages);
    if (ready.failed) throw new VimError('glance', ready.failed);
    if (!ready.pending) await createNewStack(env, working);
  } catch (error) {
    if (!working.change.newStackId) await deleteQuietly(env, createdImages(newImages));
    throw error;
  }
  return working;
}

async function stackVnfcs(env: Env, ref: string, flavour: FlavourInfo): Promise<CoordinatedVnfc[]> {
  return vnfcsOf(await env.heat.listResources(ref, RESOURCE_NESTED_DEPTH, true), flavour);
}

async function blueGreenPoll(env: Env, working: Working): Promise<Progress> {
  const change = working.change;
  const failed = (reason: string): Progress => {
    // A retry of the operation polls this state again: the step that failed is then issued again.
    change.retry = true;
    return { status: 'FAILED', state: working, reason };
  };
  const newFlavour = flavourOf(env.change.vnfd, env.change.flavourId);
  const oldFlavour = flavourOf(env.ctx.vnfd, env.ctx.flavourId);
  switch (change.phase) {
    case 'images': {
      const ready = await imagesReady(env.glance, change.newImages);
      if (ready.failed) return failed(ready.failed);
      if (!ready.pending) await createNewStack(env, working);
      return { status: 'IN_PROGRESS', state: working };
    }
    case 'create': {
      const status = stackActionStatus(await env.heat.getStack(newStackRef(change)), change.createAction ?? 'CREATE', newStackRef(change));
      if (status.status === 'FAILED') return failed(status.reason);
      if (status.status === 'IN_PROGRESS') return { status: 'IN_PROGRESS', state: working };
      const vnfcs = await stackVnfcs(env, newStackRef(change), newFlavour);
      const replaced = await stackVnfcs(env, stackRef(working), oldFlavour);
      change.phase = 'coordinate-new';
      return {
        status: 'COORDINATE',
        state: working,
        coordinate: { target: 'new', vnfcs, details: { externalLb: { members: lbMembersOf(vnfcs, newFlavour), replaces: lbMembersOf(replaced, oldFlavour) }, stack: newStackRef(change) } },
      };
    }
    case 'coordinate-new': {
      const vnfcs = await stackVnfcs(env, stackRef(working), oldFlavour);
      change.phase = 'coordinate-old';
      return { status: 'COORDINATE', state: working, coordinate: { target: 'old', vnfcs, details: { stack: stackRef(working) } } };
    }
    case 'coordinate-old':
      log.info('openstack: deleting the old stack', { vnfInstanceId: env.ctx.vnfInstanceId, stack: stackRef(working) });
      await env.heat.deleteStack(stackRef(working));
      change.phase = 'delete-old';
      return { status: 'IN_PROGRESS', state: working };
    case 'delete-old': {
      const status = await stackDeletion(env.heat, stackRef(working));
      if (status.status === 'FAILED') return failed(status.reason);
      if (status.status === 'IN_PROGRESS') return { status: 'IN_PROGRESS', state: working };
      const result: OpenStackState = {
        ...withoutChange(working),
        stackName: change.newStackName ?? '',
        ...(change.newStackId ? { stackId: change.newStackId } : {}),
        images: owned(change.newImages, working.images),
        ...(change.newCapacities ? { capacities: change.newCapacities } : {}),
        ...(change.newGrant ? { instantiateGrant: change.newGrant } : {}),
      };
      await deleteOldImages(env, working, result);
      log.info('openstack: blue-green change done', { vnfInstanceId: env.ctx.vnfInstanceId, vnfPkgId: change.vnfPkgId, stack: stackRef(result) });
      return { status: 'DONE', state: { ...result } };
    }
    default:
      return failed(`a blue-green change cannot be in phase ${change.phase}`);
  }
}

async function blueGreenResume(env: Env, working: Working): Promise<void> {
  const change = working.change;
  switch (change.phase) {
    case 'create': {
      // A stack whose create failed is updated with the same template: Heat creates what failed.
      const stack = await env.heat.getStack(newStackRef(change));
      if (!stack || stack.stack_status.startsWith('DELETE_')) {
        delete change.newStackId;
        await createNewStack(env, working);
        return;
      }
      if (!stack.stack_status.endsWith('_FAILED')) return;
      const ctx = blueGreenContext(env, working);
      const hot = await loadBaseHot(ctx.files, ctx.flavourId);
      await env.heat.patchStack(newStackRef(change), { template: hot.template, files: hot.files, parameters: { nfv: nfvOf(ctx, { images: change.newImages, ...(working.capacities ? { capacities: working.capacities } : {}) }, hot, grantChoicesOf(ctx.grant)) }, disableRollback: true });
      change.createAction = 'UPDATE';
      return;
    }
    case 'coordinate-new':
      // Its script failed: ask again.
      change.phase = 'create';
      return;
    case 'coordinate-old':
      change.phase = 'coordinate-new';
      return;
    case 'delete-old':
      await env.heat.deleteStack(stackRef(working));
      return;
    default:
  }
}

async function blueGreenRollbackStart(env: Env, working: Working): Promise<void> {
  const change = working.change;
  if (change.phase === 'delete-old') {
    change.rollback = { step: 'impossible', index: 0 };
    return;
  }
  // Once the new stack is complete the new VNF's script may have run (the engine keeps the state of
  // a coordination only when its script succeeded) and pointed the load balancer at the new VNFCs:
  // the old VNF's script, run as a rollback, points it back before they go.
  const created = change.phase === 'create' && change.newStackId
    && stackActionStatus(await env.heat.getStack(newStackRef(change)), change.createAction ?? 'CREATE', newStackRef(change)).status === 'DONE';
  if (created || change.phase === 'coordinate-new' || change.phase === 'coordinate-old') {
    change.rollback = { step: 'coordinate-old', index: 0 };
    return;
  }
  change.rollback = { step: 'delete-new', index: 0 };
  await deleteNewStack(env, working);
}

async function deleteNewStack(env: Env, working: Working): Promise<void> {
  const change = working.change;
  if (!change.newStackId && change.newStackName) {
    // A partial state: the start step may have created it without recording it.
    const found = await env.heat.getStack(change.newStackName);
    if (found && !found.stack_status.startsWith('DELETE_')) change.newStackId = found.id;
  }
  if (!change.newStackId) return;
  log.info('openstack: deleting the new stack', { vnfInstanceId: env.ctx.vnfInstanceId, stack: newStackRef(change) });
  await env.heat.deleteStack(newStackRef(change));
}

async function blueGreenRollbackPoll(env: Env, working: Working): Promise<Progress> {
  const change = working.change;
  const rollback = change.rollback ?? { step: 'delete-new', index: 0 };
  change.rollback = rollback;
  const failed = (reason: string): Progress => ({ status: 'FAILED', state: working, reason });
  switch (rollback.step) {
    case 'impossible':
      return failed(`the blue-green change cannot be rolled back: the old stack ${stackRef(working)} was deleted after the switch to the new VNF, and rollback cannot bring it back; the VNF now runs on stack ${newStackRef(change)} of VNF package ${change.vnfPkgId}`);
    case 'coordinate-old': {
      const vnfcs = await stackVnfcs(env, stackRef(working), flavourOf(env.ctx.vnfd, env.ctx.flavourId));
      rollback.step = 'delete-new';
      return { status: 'COORDINATE', state: working, coordinate: { target: 'old', vnfcs, details: { stack: stackRef(working) } } };
    }
    case 'delete-new': {
      if (!change.newStackId) await deleteNewStack(env, working);
      if (change.newStackId) {
        const status = await stackDeletion(env.heat, newStackRef(change));
        if (status.status === 'FAILED') return failed(status.reason);
        if (status.status === 'IN_PROGRESS') return { status: 'IN_PROGRESS', state: working };
      }
      rollback.step = 'images';
      break;
    }
    default:
  }
  const old = withoutChange(working);
  await deleteNewImages(env, old, change);
  log.info('openstack: blue-green change rolled back', { vnfInstanceId: env.ctx.vnfInstanceId, vnfPkgId: change.vnfPkgId });
  return { status: 'DONE', state: { ...old } };
}

// ---------------------------------------------------------------------------------------------
// The driver's four steps

/** The working state of a rollback: the recorded change, or (a start that failed before recording one) one naming what it would have made. */
function workingOf(ctx: OperationContext, raw: DriverState, change: PackageChange): Working {
  const state = stateOf(ctx, raw);
  const recorded = changeOf(raw);
  if (recorded && recorded.vnfPkgId === change.vnfPkgId && recorded.upgradeType === change.upgradeType) return { ...state, change: recorded };
  return {
    ...state,
    change: {
      upgradeType: change.upgradeType,
      vnfPkgId: change.vnfPkgId,
      phase: 'images',
      newImages: [],
      vdus: [],
      owners: [],
      targets: [],
      ...(change.upgradeType === 'BlueGreen' ? { newStackName: blueGreenStackNameOf(ctx, change.vnfPkgId, state.stackName) } : {}),
    },
  };
}

/** Goes on with a change from where a failed attempt stopped: the failed step is issued again. */
async function resume(env: Env, working: Working): Promise<void> {
  delete working.change.retry;
  delete working.change.rollback;
  await (working.change.upgradeType === 'RollingUpdate' ? rollingResume(env, working) : blueGreenResume(env, working));
}

export async function changeStart(ctx: OperationContext, raw: DriverState, change: PackageChange): Promise<DriverState> {
  const env = envOf(ctx, change);
  const recorded = changeOf(raw);
  if (recorded && recorded.vnfPkgId === change.vnfPkgId && recorded.upgradeType === change.upgradeType) {
    // A retry of this change: go on from where it stopped.
    const working: Working = { ...stateOf(ctx, raw), change: recorded };
    await resume(env, working);
    return { ...working };
  }
  const state = withoutChange(stateOf(ctx, raw));
  return { ...(await (change.upgradeType === 'RollingUpdate' ? rollingStart(env, state) : blueGreenStart(env, state))) };
}

export async function changePoll(ctx: OperationContext, raw: DriverState, change: PackageChange): Promise<Progress> {
  const recorded = changeOf(raw);
  if (!recorded || recorded.vnfPkgId !== change.vnfPkgId || recorded.upgradeType !== change.upgradeType) {
    return { status: 'FAILED', state: raw, reason: `the driver state records no ${change.upgradeType} change to VNF package ${change.vnfPkgId} to go on with` };
  }
  const env = envOf(ctx, change);
  const working: Working = { ...stateOf(ctx, raw), change: recorded };
  if (recorded.retry) {
    await resume(env, working);
    return { status: 'IN_PROGRESS', state: { ...working } };
  }
  return recorded.upgradeType === 'RollingUpdate' ? rollingPoll(env, working) : blueGreenPoll(env, working);
}

export async function changeRollbackStart(ctx: OperationContext, raw: DriverState, change: PackageChange): Promise<DriverState> {
  const env = envOf(ctx, change);
  const working = workingOf(ctx, raw, change);
  delete working.change.retry;
  working.change.rollback = { step: 'vnfcs', index: 0 };
  log.info('openstack: rolling back a package change', { vnfInstanceId: ctx.vnfInstanceId, vnfPkgId: change.vnfPkgId, upgradeType: change.upgradeType, phase: working.change.phase });
  if (working.change.upgradeType === 'RollingUpdate') await rollingRollbackNext(env, working);
  else await blueGreenRollbackStart(env, working);
  return { ...working };
}

export async function changeRollbackPoll(ctx: OperationContext, raw: DriverState, change: PackageChange): Promise<Progress> {
  const env = envOf(ctx, change);
  const working = workingOf(ctx, raw, change);
  return working.change.upgradeType === 'RollingUpdate' ? rollingRollbackPoll(env, working) : blueGreenRollbackPoll(env, working);
}

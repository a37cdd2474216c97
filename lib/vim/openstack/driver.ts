// The OpenStack infra driver: a VNF is one Heat stack `vnf-<instanceId>` (after a blue-green package
// change, `vnf-<instanceId>-<package>`) built from the package's BaseHOT, plus the Glance images the
// driver uploaded from the package. Scale and heal are updates
// of that stack, as in Tacker v2: a new per-VDU desired_capacity in its `nfv` parameter, and the
// servers to remove or replace (for heal, with their volumes) marked unhealthy first. A package
// change (rolling update or blue-green) is in change-package.ts. Steps never wait: start
// steps issue requests and return ids, poll steps read status. The driver state names only VIM ids,
// and rollback or terminate also find what a lost or partial state would have named (by the
// deterministic stack and image names), so a failure half-way through leaves nothing behind.
import * as z from 'zod';
import { log } from '#lib/log.ts';
import { UnprocessableEntityError } from '#lib/sol/errors.ts';
import {
  tackerBoolean,
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
  type VnfcRef,
} from '#lib/vim/driver.ts';
import { scalingOf, type Scaling } from '#lib/vim/scaling.ts';
import { changePoll, changeRollbackPoll, changeRollbackStart, changeStart } from './change-package.ts';
import { flavourPoll, flavourStart } from './change-flavour.ts';
import { VimError } from './errors.ts';
import { openStackExternalConnectivity } from './ext-conn.ts';
import { GlanceClient } from './glance.ts';
import { NeutronClient } from './neutron.ts';
import { HeatClient, resourceStackId, type HeatResource } from './heat.ts';
import { capacitiesOf, flavourOf, loadBaseHot, parseTemplate, requestOf } from './hot.ts';
import { createdImages, deleteImages, imageNameOf, imagesReady, resolveImages } from './images.ts';
import { OpenStackSession, openStackAccess, verifyAccess } from './keystone.ts';
import { collectResources, serverPlacement, VOLUME, withPortAddresses } from './resources.ts';
import {
  createStack,
  defaultZoneOf,
  grantChoicesOf,
  nfvOf,
  scaleChoices,
  RESOURCE_NESTED_DEPTH,
  stackNameOf,
  stackDeletion,
  stackProgress,
  stackRef,
  stateOf,
  type OpenStackState,
} from './state.ts';
import { openStackHealth } from './health.ts';
import { openStackMeasure } from './measure.ts';
import { operatePoll, operateStart, withPowerStates } from './operate.ts';
import { deleteSnapshot, revertPoll, revertStart, snapshotPoll, snapshotStart } from './snapshots.ts';

export { RESOURCE_NESTED_DEPTH, stackNameOf, type GrantChoices, type OpenStackState } from './state.ts';
export { imageNameOf, type ImageRecord } from './images.ts';

/** The images of the instance's package, by the names a lost or partial state would have recorded. */
const packageImageNames = (ctx: OperationContext): string[] => ctx.vnfd.softwareImages.map((image) => imageNameOf(ctx.vnfInstanceId, image.id));

async function deleteStateImages(ctx: OperationContext, glance: GlanceClient, state: OpenStackState): Promise<void> {
  await deleteImages(glance, ctx.vnfInstanceId, createdImages(state.images), packageImageNames(ctx));
}

// ---------------------------------------------------------------------------------------------

async function instantiateStart(ctx: OperationContext, ready?: Promise<void>): Promise<DriverState> {
  const session = new OpenStackSession(ctx.vim);
  // Package and request problems show before anything is uploaded.
  parseTemplate(await loadBaseHot(ctx.files, ctx.flavourId));
  requestOf(ctx.instantiateRequest);
  const glance = new GlanceClient(session);
  const state: OpenStackState = { stackName: stackNameOf(ctx.vnfInstanceId), images: [] };
  try {
    await resolveImages(ctx, glance, state.images);
    const stored = await imagesReady(glance, state.images);
    if (stored.failed) throw new VimError('glance', stored.failed);
    // The images are stored while the instantiate_start hook runs; the stack waits for it.
    await ready;
    if (!stored.pending) Object.assign(state, await createStack(ctx, new HeatClient(session), state));
  } catch (error) {
    // A start step that throws leaves no driver state to roll back from, so it cleans up after itself.
    if (!state.stackId) {
      await Promise.all(
        createdImages(state.images).map((id) =>
          glance.deleteImage(id).catch((cleanup: unknown) => {
            log.warn('openstack: could not delete an image after a failed instantiate start', {
              vnfInstanceId: ctx.vnfInstanceId,
              glanceImageId: id,
              error: cleanup,
            });
          }),
        ),
      );
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
  const session = new OpenStackSession(ctx.vim);
  const resources = await new HeatClient(session).listResources(stackRef(state), RESOURCE_NESTED_DEPTH);
  const collected = collectResources({
    resources,
    flavour: flavourOf(ctx.vnfd, ctx.flavourId),
    extVirtualLinks: requestOf(ctx.instantiateRequest).extVirtualLinks ?? [],
    vimConnectionId: ctx.vim.vimId,
  });
  // The external CPs' addresses as Neutron allocated them (one request per 50 ports), read while Nova
  // is asked for the servers' power states.
  const portIds = collected.extCpInfo.map((cp) => cp.extLinkPortId).filter((id): id is string => typeof id === 'string');
  const [ports, powered] = await Promise.all([portIds.length ? new NeutronClient(session).ports(portIds) : [], withPowerStates(ctx, collected)]);
  return { ...powered, extCpInfo: withPortAddresses(powered.extCpInfo, ports) };
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
  const existed = state.stackId !== undefined && (await heat.deleteStack(stackRef(state)));
  log.info('openstack: deleting stack', { vnfInstanceId: ctx.vnfInstanceId, stack: stackRef(state), existed });
  if (!existed) {
    // Nothing to wait for: the images can go now.
    await deleteStateImages(ctx, new GlanceClient(session), state);
    return { ...state, imagesDeleted: true };
  }
  return { ...state };
}

async function terminatePoll(ctx: OperationContext, raw: DriverState): Promise<Progress> {
  const state = stateOf(ctx, raw);
  const session = new OpenStackSession(ctx.vim);
  const deletion = state.imagesDeleted ? { status: 'DONE' as const } : await stackDeletion(new HeatClient(session), stackRef(state));
  if (deletion.status === 'FAILED') return { status: 'FAILED', state: { ...state }, reason: deletion.reason };
  if (deletion.status === 'IN_PROGRESS') return { status: 'IN_PROGRESS', state: { ...state } };
  // Images go once nothing can still be booting from them.
  if (!state.imagesDeleted) await deleteStateImages(ctx, new GlanceClient(session), state);
  return { status: 'DONE', state: { ...state, imagesDeleted: true } };
}

// ---------------------------------------------------------------------------------------------
// Scale and heal

/**
 * The Heat resources to mark unhealthy for a VNFC: for scale-in its scaling group member (the group
 * then removes exactly it); for heal its server and the Cinder volumes of its VDU's virtual storages
 * in the same stack. Heat replaces a server by creating the new one before deleting the old, so a
 * replacement that names the same volume (block_device_mapping_v2 volume_id, e.g. a boot volume)
 * would fail: Cinder refuses to attach a volume still in-use by the old server. As Tacker v2 does
 * for a VNFC with storage (its `all` heal), the volume is replaced too: the new server boots from a
 * new volume, and the old volume goes after the old server has released it.
 */
function unhealthyTargets(
  ctx: OperationContext,
  resources: HeatResource[],
  vnfc: VnfcRef,
  change: UpdateChange,
): Array<{ stack: string; resourceName: string }> {
  const placement = serverPlacement(resources, vnfc.resourceId);
  if (!placement) throw new VimError('heat', `VNFC ${vnfc.resourceId} of ${vnfc.vduId} is not a server of the stack`);
  if (change.kind === 'HEAL') {
    const storages = flavourOf(ctx.vnfd, ctx.flavourId).vdus.find((vdu) => vdu.id === vnfc.vduId)?.storages ?? [];
    const volumes = resources.filter(
      (resource) => resource.resource_type === VOLUME && storages.includes(resource.resource_name) && resourceStackId(resource) === placement.stack,
    );
    return [
      { stack: placement.stack, resourceName: placement.resourceName },
      ...volumes.map((volume) => ({ stack: placement.stack, resourceName: volume.resource_name })),
    ];
  }
  if (!placement.member) {
    throw new UnprocessableEntityError(
      `VNFC ${vnfc.resourceId} of ${vnfc.vduId} cannot be scaled in: its server is not a member of an OS::Heat::AutoScalingGroup in the BaseHOT`,
    );
  }
  return [placement.member];
}

/** A member marked unhealthy but kept by the new capacity would be replaced, not removed: refuse that. */
function checkRemovals(ctx: OperationContext, resources: HeatResource[], change: Scaling): void {
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
  if (change.kind === 'OPERATE') return operateStart(ctx, raw, change);
  if (change.kind === 'CHANGE_FLAVOUR') return flavourStart(ctx, raw, change);
  const state = stateOf(ctx, raw);
  const heat = new HeatClient(new OpenStackSession(ctx.vim));
  const stack = await heat.getStack(stackRef(state));
  if (!stack || stack.stack_status.startsWith('DELETE_'))
    throw new VimError('heat', `the stack of VNF instance ${ctx.vnfInstanceId} (${stackRef(state)}) does not exist`);
  state.stackId = stack.id;
  const ref = stackRef(state);

  // PATCH keeps every parameter it is not given: a heal changes none.
  const parameters: Record<string, unknown> = {};
  const scaling = scalingOf(change);
  if (scaling) {
    const flavour = flavourOf(ctx.vnfd, ctx.flavourId);
    const unknown = Object.keys(scaling.targets).filter((vduId) => !flavour.vdus.some((vdu) => vdu.id === vduId));
    if (unknown.length) throw new UnprocessableEntityError(`flavour ${ctx.flavourId} has no VDU ${unknown.join(', ')} to scale`);
    // A state from before capacities were recorded: the stack knows them.
    const before = state.capacities ?? capacitiesOf(stack.parameters?.nfv);
    state.capacities = { ...before, ...scaling.targets };
    // Rebuilt from the instantiate inputs, so that only the capacities (and the zone of a VDU that had
    // no VNFC, as this grant places it) differ from what the stack has.
    state.instantiateGrant = scaleChoices(state.instantiateGrant ?? grantChoicesOf(ctx.grant), ctx.grant, before, defaultZoneOf(ctx));
    parameters.nfv = nfvOf(ctx, state, await loadBaseHot(ctx.files, ctx.flavourId), state.instantiateGrant);
  }

  const named = change.kind === 'HEAL' ? change.vnfcs : (scaling?.remove ?? []);
  const marked: Array<{ stack: string; resourceName: string }> = [];
  if (named.length) {
    const resources = await heat.listResources(ref, RESOURCE_NESTED_DEPTH);
    // A VNFC the stack no longer has was replaced or removed by an earlier attempt of this operation
    // (a retry after a failed update): it is done, not an error.
    const vnfcs = named.filter((vnfc) => serverPlacement(resources, vnfc.resourceId));
    const gone = named.filter((vnfc) => !vnfcs.includes(vnfc));
    if (gone.length) log.info('openstack: VNFCs already replaced or removed', { vnfInstanceId: ctx.vnfInstanceId, vnfcs: gone.map((vnfc) => vnfc.resourceId) });
    if (scaling) checkRemovals(ctx, resources, { ...scaling, remove: vnfcs });
    // All found before any is marked, so that a VNFC that cannot be marked leaves the stack untouched.
    for (const target of vnfcs.flatMap((vnfc) => unhealthyTargets(ctx, resources, vnfc, change))) {
      if (!marked.some((known) => known.stack === target.stack && known.resourceName === target.resourceName)) marked.push(target);
    }
  }
  const reason = `${change.kind === 'HEAL' ? 'healed' : 'scaled in'} by VNF LCM operation ${ctx.opOccId}`;
  for (const target of marked) await heat.markUnhealthy(target.stack, target.resourceName, reason);

  log.info('openstack: updating stack', { vnfInstanceId: ctx.vnfInstanceId, stack: ref, change: change.kind, capacities: state.capacities, unhealthy: marked });
  // Rollback stays the LCM engine's decision, as at create.
  await heat.patchStack(ref, { parameters, disableRollback: true });
  return { ...state };
}

async function updatePoll(ctx: OperationContext, raw: DriverState, change: UpdateChange): Promise<Progress> {
  if (change.kind === 'OPERATE') return operatePoll(ctx, raw, change);
  if (change.kind === 'CHANGE_FLAVOUR') return flavourPoll(ctx, raw, change);
  const state = stateOf(ctx, raw);
  const heat = new HeatClient(new OpenStackSession(ctx.vim));
  return stackProgress(await heat.getStack(stackRef(state)), 'UPDATE', state);
}

async function verify(vim: VimConnection): Promise<void> {
  await verifyAccess(openStackAccess(vim), ['orchestration', 'image']);
}

// ---------------------------------------------------------------------------------------------
// The OpenStack VIM as the VIM connection API and fault management see it

/** Keystone v3 password authentication, scoped to a project by name or id. */
const credentials: VimCredentials = {
  accessInfo: z
    .object({
      username: z.string().min(1),
      password: z.string().min(1),
      project: z.string().min(1).optional(),
      projectId: z.string().min(1).optional(),
      projectDomain: z.string().min(1).optional(),
      userDomain: z.string().min(1).optional(),
      region: z.string().min(1).optional(),
    })
    .refine((a) => a.project || a.projectId, { message: 'project (a name) or projectId is required' }),
  fromTacker(authCred, project, extra) {
    const accessInfo: Record<string, unknown> = {
      username: authCred.username,
      password: authCred.password,
      project: tackerString(project.name) ?? tackerString(authCred.project_name),
      projectDomain: tackerString(project.project_domain_name) ?? tackerString(authCred.project_domain_name),
      userDomain: tackerString(authCred.user_domain_name),
      region: tackerString(authCred.region) ?? tackerString(authCred.region_name) ?? tackerString(extra?.region),
    };
    for (const key of Object.keys(accessInfo)) if (accessInfo[key] === undefined || accessInfo[key] === '') delete accessInfo[key];
    const interfaceExtra: Record<string, unknown> = {};
    if (authCred.cert_verify !== undefined) interfaceExtra.cert_verify = tackerBoolean(authCred.cert_verify);
    if (tackerString(authCred.ssl_ca_cert)) interfaceExtra.ssl_ca_cert = authCred.ssl_ca_cert;
    return { accessInfo, interfaceExtra };
  },
  toTacker({ maskedAccessInfo: access, interfaceInfo: iface, vimProject }, mask) {
    return {
      authCred: {
        username: access.username ?? '',
        password: mask,
        user_domain_name: access.userDomain ?? 'Default',
        project_name: access.project ?? '',
        project_domain_name: access.projectDomain ?? 'Default',
        cert_verify: iface.cert_verify === false ? 'False' : 'True',
        auth_url: iface.endpoint,
      },
      vimProject: { name: access.project ?? vimProject?.name ?? '', project_domain_name: access.projectDomain ?? 'Default' },
    };
  },
};

/** A server that is gone or in ERROR is critical; one SHUTOFF may just have been stopped, so major. */
function faultWording(health: VnfcHealth): FaultWording {
  if (health.fault === 'MISSING')
    return { severity: 'CRITICAL', eventType: 'EQUIPMENT_ALARM', probableCause: 'Server missing', faultType: 'VNFC_RESOURCE_MISSING' };
  return {
    severity: health.vimStatus === 'SHUTOFF' ? 'MAJOR' : 'CRITICAL',
    eventType: 'EQUIPMENT_ALARM',
    probableCause: `Server ${health.vimStatus ?? 'failed'}`,
    faultType: 'VNFC_FAILURE',
  };
}

export const openStackDriver: InfraDriver = {
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
  externalConnectivity: openStackExternalConnectivity,
  verify,
  health: openStackHealth,
  measure: openStackMeasure,
  snapshotStart,
  snapshotPoll,
  deleteSnapshot,
  revertStart: (ctx, state, target) => revertStart(ctx, state, target, updateStart),
  revertPoll,
};

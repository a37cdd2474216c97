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
// Rollback moves every touched VNFC back to the old package one by one, with the old VNF's
// CoordinateVNF after each, then the top stack back to the old template and nfv, and deletes the
// new images.
import { log } from '#lib/log.ts';
import { isRecord } from '#lib/json.ts';
import type { FlavourInfo } from '#lib/packages/vnfd/model.ts';
import { UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { Progress } from '#lib/vim/driver.ts';
import { VimError } from '../errors.ts';
import type { HeatResource } from '../heat.ts';
import { capacitiesOf, flavourOf, loadBaseHot, parseTemplate, requestOf, type BaseHot } from '../hot.ts';
import { createdImages, imageOwners, imagesReady } from '../images.ts';
import { SERVER, serverPlacement } from '../resources.ts';
import {
  grantChoicesOf,
  nfvOf,
  RESOURCE_NESTED_DEPTH,
  stackActionStatus,
  stackRef,
  type GrantChoices,
  type OpenStackState,
  type StackActionStatus,
} from '../state.ts';
import {
  type ChangeState,
  type CoordinatedVnfc,
  type Env,
  type Json,
  type Target,
  type Working,
  deleteNewImages,
  deleteOldImages,
  deleteQuietly,
  liveStack,
  newPackageContext,
  nfvOfStack,
  owned,
  serverAddresses,
  stackUuidOf,
  uploadNewImages,
  uuidOf,
  vnfcsOf,
  withoutChange,
} from './common.ts';
import { dig, memberDefinitionOf, vduKeys, withVduEntries } from './heat-template.ts';

// ---------------------------------------------------------------------------------------------
// Moving one VNFC (to the new package, or back)

/** The server a target is now (Heat may have replaced it), found by where it sits, with its addresses. */
function locate(resources: HeatResource[], target: Target, flavour: FlavourInfo): CoordinatedVnfc | undefined {
  let stack: string | undefined = uuidOf(target.stack);
  if (target.member) {
    const { member } = target;
    const memberResource = resources.find((resource) => resource.resource_name === member.resourceName && stackUuidOf(resource) === uuidOf(member.stack));
    stack = memberResource?.physical_resource_id ?? undefined;
  }
  const server = resources.find(
    (resource) =>
      resource.resource_type === SERVER && resource.resource_name === target.resourceName && stackUuidOf(resource) === stack && resource.physical_resource_id,
  );
  if (!server?.physical_resource_id) return undefined;
  const id = server.physical_resource_id;
  return {
    vduId: target.vduId,
    resourceId: id,
    ...(id === target.resourceId ? { id } : {}),
    addresses: serverAddresses(resources, server, flavour, target.vduId),
  };
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
    if (!isRecord(current))
      throw new VimError(
        'heat',
        `scaling group ${member.group} (stack ${member.stack}) no longer has member ${member.resourceName} of VNFC ${target.resourceId}`,
      );
    const wanted = memberDefinitionOf(hot, member.group, nfv);
    const definition = {
      ...current,
      ...(wanted.type ? { type: wanted.type } : {}),
      properties: { ...(isRecord(current.properties) ? current.properties : {}), ...wanted.properties },
    };
    log.info('openstack: updating a scaling group member', {
      vnfInstanceId: env.ctx.vnfInstanceId,
      stack: member.stack,
      member: member.resourceName,
      vnfc: target.resourceId,
    });
    await env.heat.patchStack(member.stack, {
      template: { ...template, resources: { ...resources, [member.resourceName]: definition } },
      files: hot.files,
      parameters: {},
      disableRollback: true,
    });
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
async function movedVnfc(
  env: Env,
  working: Working,
  target: Target,
  flavour: FlavourInfo,
): Promise<Exclude<StackActionStatus, { status: 'DONE' }> | { status: 'DONE'; vnfc: CoordinatedVnfc }> {
  const ref = updatedStackOf(working, target);
  const status = stackActionStatus(await env.heat.getStack(ref), 'UPDATE', ref);
  if (status.status !== 'DONE') return status;
  const vnfc = locate(await env.heat.listResources(stackRef(working), RESOURCE_NESTED_DEPTH, true), target, flavour);
  if (!vnfc)
    return { status: 'FAILED', reason: `after its update, the stack has no server ${target.resourceName} for VNFC ${target.resourceId} of ${target.vduId}` };
  return { status: 'DONE', vnfc };
}

// ---------------------------------------------------------------------------------------------
// The rolling update and its rollback

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
  // The VNFCs are updated where they are: each VDU keeps its zone.
  const vduZones = state.instantiateGrant?.vduZones;
  const instantiateGrant: GrantChoices = {
    ...(Object.keys(flavours).length ? { flavours } : {}),
    ...(zones ? { zones } : {}),
    ...(vduZones ? { vduZones } : {}),
  };
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
  return vduIds.flatMap((vduId) =>
    vnfcs
      .filter((vnfc) => vnfc.vduId === vduId)
      .map((vnfc): Target => {
        const placement = serverPlacement(resources, vnfc.resourceId);
        if (!placement) throw new VimError('heat', `VNFC ${vnfc.resourceId} of ${vduId} is not a server of the stack`);
        if (!placement.member) return { vduId, resourceId: vnfc.resourceId, stack: placement.stack, resourceName: placement.resourceName, step: 'pending' };
        const groupStack = uuidOf(placement.member.stack);
        const group = resources.find((resource) => resource.physical_resource_id === groupStack);
        if (!group || stackUuidOf(group) !== uuidOf(top)) {
          throw new UnprocessableEntityError(
            `VNFC ${vnfc.resourceId} of ${vduId} is a member of a scaling group that is not a resource of the BaseHOT's top template; a rolling update moves members of top-level groups only`,
          );
        }
        return {
          vduId,
          resourceId: vnfc.resourceId,
          stack: placement.stack,
          resourceName: placement.resourceName,
          member: { ...placement.member, group: group.resource_name },
          step: 'pending',
        };
      }),
  );
}

export async function rollingStart(env: Env, state: OpenStackState): Promise<Working> {
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
  if (missing.length)
    throw new UnprocessableEntityError(
      `a rolling update moves VDUs both packages have in flavour ${change.flavourId}; ${missing.join(', ')} is not one of them`,
    );

  const oldNfv = nfvOfStack(stack) ?? nfvOf(ctx, state, await loadBaseHot(ctx.files, ctx.flavourId), state.instantiateGrant ?? {});
  state.capacities ??= capacitiesOf(oldNfv);
  const resources = await env.heat.listResources(stackRef(state), RESOURCE_NESTED_DEPTH);
  const targets = rollingTargets(resources, oldFlavour, vdus, stackRef(state));
  // New images for the VDUs that move, and for any image the old package did not have.
  const owners = new Set([
    ...ownersOfVdus(newFlavour, vdus),
    ...imageOwners({ vnfd: change.vnfd, flavourId: change.flavourId })
      .map(({ owner }) => owner)
      .filter((owner) => !state.images.some((image) => image.imageId === owner)),
  ]);
  const newImages = await uploadNewImages(env, owners);
  const working: Working = {
    ...state,
    change: { upgradeType: 'RollingUpdate', vnfPkgId: change.vnfPkgId, phase: 'images', newImages, vdus, owners: [...owners], targets, oldNfv },
  };
  log.info('openstack: rolling update started', {
    vnfInstanceId: ctx.vnfInstanceId,
    vnfPkgId: change.vnfPkgId,
    vdus,
    vnfcs: targets.map((target) => target.resourceId),
  });
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

export async function rollingPoll(env: Env, working: Working): Promise<Progress> {
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
    log.info('openstack: VNFC moved to the new package', {
      vnfInstanceId: env.ctx.vnfInstanceId,
      vduId: current.vduId,
      before: current.resourceId,
      after: vnfc.resourceId,
    });
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
export async function rollingResume(env: Env, working: Working): Promise<void> {
  const change = working.change;
  if (change.phase === 'images') return;
  if (change.phase === 'stack') {
    change.targets.forEach((target) => {
      target.step = 'done';
    });
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

export async function rollingRollbackNext(env: Env, working: Working): Promise<void> {
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

export async function rollingRollbackPoll(env: Env, working: Working): Promise<Progress> {
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
    log.info('openstack: VNFC moved back to the old package', {
      vnfInstanceId: env.ctx.vnfInstanceId,
      vduId: target.vduId,
      before: target.resourceId,
      after: vnfc.resourceId,
    });
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

// Blue-green: a second stack `vnf-<instanceId>-<package>` from the new package beside the old one,
// then CoordinateVNF for the new VNFCs (the script switches the external load balancer to them),
// then for the old ones, then the old stack and images go and the new stack is the VNF's stack.
//
// Rollback switches the load balancer back if it may have been switched, and deletes the new stack
// and images; it cannot once the old stack is being deleted, and says so.
import { log } from '#lib/log.ts';
import type { FlavourInfo } from '#lib/packages/vnfd/model.ts';
import type { OperationContext, Progress } from '#lib/vim/driver.ts';
import { VimError } from '../errors.ts';
import { capacitiesOf, flavourOf, loadBaseHot, parseTemplate, requestOf } from '../hot.ts';
import { createdImages, imagesReady } from '../images.ts';
import { createStack, grantChoicesOf, nfvOf, RESOURCE_NESTED_DEPTH, stackActionStatus, stackDeletion, stackRef, type OpenStackState } from '../state.ts';
import {
  type ChangeState,
  type CoordinatedVnfc,
  type Env,
  type Json,
  type Working,
  blueGreenStackNameOf,
  deleteNewImages,
  deleteOldImages,
  deleteQuietly,
  liveStack,
  newPackageContext,
  nfvOfStack,
  owned,
  uploadNewImages,
  vnfcsOf,
  withoutChange,
} from './common.ts';

/** The external CPs of a flavour: those the VNFD exposes, else those on no internal VL. */
function externalCpsOf(flavour: FlavourInfo): string[] {
  return flavour.externalCps.length ? flavour.externalCps : flavour.cps.filter((cp) => !cp.virtualLink).map((cp) => cp.id);
}

/** What a load balancer in front of these VNFCs would list: their external CPs' addresses. */
function lbMembersOf(vnfcs: CoordinatedVnfc[], flavour: FlavourInfo): Json[] {
  const external = externalCpsOf(flavour);
  return vnfcs.flatMap((vnfc) =>
    Object.entries(vnfc.addresses ?? {})
      .filter(([cpdId]) => external.includes(cpdId))
      .flatMap(([cpdId, addresses]) => addresses.map((address) => ({ vduId: vnfc.vduId, serverId: vnfc.resourceId, cpdId, address }))),
  );
}

const newStackRef = (change: ChangeState): string =>
  stackRef({ stackName: change.newStackName ?? '', ...(change.newStackId ? { stackId: change.newStackId } : {}) });

/** The new package's context for the new stack: its grant, in the zones the VNF has unless the grant says otherwise. */
function blueGreenContext(env: Env, state: OpenStackState): OperationContext {
  const pkg = newPackageContext(env.ctx, env.change);
  const zones = env.change.grant.zones ?? state.instantiateGrant?.zones;
  // Each VDU where the change's grant places its new VNFCs, else where the VNF's are.
  const vduZones = { ...state.instantiateGrant?.vduZones, ...env.change.grant.vduZones };
  return { ...pkg, grant: { ...env.change.grant, ...(zones ? { zones } : {}), ...(Object.keys(vduZones).length ? { vduZones } : {}) } };
}

async function createNewStack(env: Env, working: Working): Promise<void> {
  const change = working.change;
  const created = await createStack(blueGreenContext(env, working), env.heat, {
    stackName: change.newStackName ?? '',
    images: change.newImages,
    ...(working.capacities ? { capacities: working.capacities } : {}),
  });
  change.phase = 'create';
  change.createAction = 'CREATE';
  change.newStackId = created.stackId;
  if (created.capacities) change.newCapacities = created.capacities;
  if (created.instantiateGrant) change.newGrant = created.instantiateGrant;
}

export async function blueGreenStart(env: Env, state: OpenStackState): Promise<Working> {
  const { ctx, change } = env;
  const stack = await liveStack(env, stackRef(state), 'stack');
  state.stackId = stack.id;
  state.capacities ??= capacitiesOf(nfvOfStack(stack));
  parseTemplate(await loadBaseHot(change.files, change.flavourId));
  requestOf(ctx.instantiateRequest);
  const newStackName = blueGreenStackNameOf(ctx, change.vnfPkgId, state.stackName);
  const newImages = await uploadNewImages(env);
  const working: Working = {
    ...state,
    change: { upgradeType: 'BlueGreen', vnfPkgId: change.vnfPkgId, phase: 'images', newImages, vdus: [], owners: [], targets: [], newStackName },
  };
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

export async function blueGreenPoll(env: Env, working: Working): Promise<Progress> {
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
        coordinate: {
          target: 'new',
          vnfcs,
          details: { externalLb: { members: lbMembersOf(vnfcs, newFlavour), replaces: lbMembersOf(replaced, oldFlavour) }, stack: newStackRef(change) },
        },
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

export async function blueGreenResume(env: Env, working: Working): Promise<void> {
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
      await env.heat.patchStack(newStackRef(change), {
        template: hot.template,
        files: hot.files,
        parameters: {
          nfv: nfvOf(ctx, { images: change.newImages, ...(working.capacities ? { capacities: working.capacities } : {}) }, hot, grantChoicesOf(ctx.grant)),
        },
        disableRollback: true,
      });
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

export async function blueGreenRollbackStart(env: Env, working: Working): Promise<void> {
  const change = working.change;
  if (change.phase === 'delete-old') {
    change.rollback = { step: 'impossible', index: 0 };
    return;
  }
  // Once the new stack is complete the new VNF's script may have run (the engine keeps the state of
  // a coordination only when its script succeeded) and pointed the load balancer at the new VNFCs:
  // the old VNF's script, run as a rollback, points it back before they go.
  const created =
    change.phase === 'create' &&
    change.newStackId &&
    stackActionStatus(await env.heat.getStack(newStackRef(change)), change.createAction ?? 'CREATE', newStackRef(change)).status === 'DONE';
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

export async function blueGreenRollbackPoll(env: Env, working: Working): Promise<Progress> {
  const change = working.change;
  const rollback = change.rollback ?? { step: 'delete-new', index: 0 };
  change.rollback = rollback;
  const failed = (reason: string): Progress => ({ status: 'FAILED', state: working, reason });
  switch (rollback.step) {
    case 'impossible':
      return failed(
        `the blue-green change cannot be rolled back: the old stack ${stackRef(working)} was deleted after the switch to the new VNF, and rollback cannot bring it back; the VNF now runs on stack ${newStackRef(change)} of VNF package ${change.vnfPkgId}`,
      );
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

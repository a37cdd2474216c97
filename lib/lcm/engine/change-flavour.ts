// The steps of CHANGE_FLAVOUR (SOL003 5.4.7) and of its rollback (statemachines/update.asl.json and
// rollback.asl.json): the driver rebuilds the VNF as the new flavour defines it (the OpenStack stack
// updated to the flavour's BaseHOT, the Kubernetes objects to its manifests), the VNFD's
// change_flavour hooks of the new flavour run around it, and only once the VIM is done do the
// instance's records move to the new flavour: instantiatedVnfInfo read back from the VIM with the
// new flavour's scale levels, and the instantiate request later operations read. A rollback returns
// the VNF to the flavour (and the VNFC counts) the instance records.
import { BadRequestError } from '#lib/sol/errors.ts';
import type { VimConnectionInfo, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { FlavourChange, OperationContext, UpdateChange } from '#lib/vim/driver.ts';
import { flavourOf } from '#lib/vim/flavour.ts';
import type { ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { isRecord } from '#lib/json.ts';
import { log } from '#lib/log.ts';
import { saveDriverState, updateOpOcc } from '#lib/lcm/op-occs.ts';
import { resourceDiff, vnfcsOf } from '#lib/lcm/scale-heal.ts';
import { instantiateRequestAfterFlavour, scaleInfoAt, type FlavourChangePlan } from '#lib/lcm/change-flavour.ts';
import { driverOf, hook, instanceContext, operationContext } from './context.ts';
import { collectedOf, endHookOn, infoAfter, saveInstance } from './records.ts';
import { grant, grantPoll, restoredOnVim } from './shared-steps.ts';
import { polled, progressed, started, type Loaded, type Step, type StepTable } from './step.ts';

function planOf(opOcc: VnfLcmOpOccRecord): FlavourChangePlan {
  const plan = opOcc.change as unknown as FlavourChangePlan | undefined;
  if (plan?.kind !== 'CHANGE_FLAVOUR') throw new BadRequestError(`VNF LCM operation occurrence ${opOcc.id} records no flavour change`);
  return plan;
}

/** The context of the VNF in the new flavour: the instantiate request it will have once the change is done. */
function targetContext(deps: CoreDeps, loaded: Loaded, plan: FlavourChangePlan): Promise<OperationContext> {
  const request = instantiateRequestAfterFlavour(loaded.instance.vimResources?.instantiateRequest, plan, loaded.opOcc.operationParams ?? {});
  return operationContext(deps, loaded, loaded.instance.vimResources?.vim, request, plan.newFlavourId);
}

const changeOf = (plan: FlavourChangePlan): FlavourChange => ({ kind: 'CHANGE_FLAVOUR', ...(plan.defFiles ? { defFiles: plan.defFiles } : {}) });

const start: Step = async (deps, loaded) => {
  const { opOcc, instance } = loaded;
  const plan = planOf(opOcc);
  const ctx = await targetContext(deps, loaded, plan);
  await hook(deps, loaded, ctx, 'start');
  // A retry starts from the state the failed attempt left: the driver finds there what the VNF was before.
  const state = await (await driverOf(instance.vimResources?.vim)).updateStart(
    ctx,
    opOcc.driverState ?? instance.vimResources?.driverState ?? {},
    changeOf(plan),
  );
  await saveDriverState(deps, opOcc, state);
  // VDUs of the new flavour the manifests do not deploy, say.
  if (state.warnings?.length) await updateOpOcc(deps, opOcc, { warnings: state.warnings });
  return started();
};

const poll: Step = async (deps, loaded, polls) => {
  const { opOcc, instance } = loaded;
  const plan = planOf(opOcc);
  const driver = await driverOf(instance.vimResources?.vim);
  const progress = await driver.updatePoll(await targetContext(deps, loaded, plan), opOcc.driverState ?? {}, changeOf(plan));
  return progressed(deps, opOcc, progress, polls);
};

/** The request's VIM connections merged into the instance's (SOL003: as a JSON merge patch), their credentials by reference only. */
function connectionsAfter(loaded: Loaded): { connections: Record<string, VimConnectionInfo>; secrets: Record<string, string>; replaced: string[] } {
  const { opOcc, instance } = loaded;
  const connections = { ...(instance.vimConnectionInfo ?? {}) };
  const secrets = { ...(instance.vimAccessSecrets ?? {}) };
  const replaced: string[] = [];
  const given = isRecord(opOcc.operationParams?.vimConnectionInfo) ? opOcc.operationParams.vimConnectionInfo : {};
  for (const [key, value] of Object.entries(given)) {
    if (!isRecord(value)) continue;
    const { accessInfo: _never, ...connection } = value;
    connections[key] = { ...(connections[key] ?? {}), ...connection } as VimConnectionInfo;
    const pending = opOcc.pendingVimAccessSecrets?.[key];
    if (pending) {
      const previous = secrets[key];
      if (previous && previous !== pending && previous !== instance.vimResources?.vim.accessSecret) replaced.push(previous);
      secrets[key] = pending;
    }
  }
  return { connections, secrets, replaced };
}

const finish: Step = async (deps, loaded, polls) => {
  const { opOcc, instance, vnfd } = loaded;
  const plan = planOf(opOcc);
  const ctx = await targetContext(deps, loaded, plan);
  const driverState = opOcc.driverState ?? {};
  const collected = await (await driverOf(instance.vimResources?.vim)).collect(ctx, driverState);
  const before = collectedOf(instance.instantiatedVnfInfo);
  const info: Record<string, unknown> = {
    ...infoAfter(instance, collected),
    flavourId: plan.newFlavourId,
    ...scaleInfoAt(flavourOf(vnfd, plan.newFlavourId), plan.instantiationLevelId),
  };
  await endHookOn(deps, loaded, ctx, info);
  const { connections, secrets, replaced } = connectionsAfter(loaded);
  const params = opOcc.operationParams ?? {};
  const set: Record<string, unknown> = {
    instantiatedVnfInfo: info,
    vimResources: { ...instance.vimResources, driverState, instantiateRequest: ctx.instantiateRequest },
    vimConnectionInfo: connections,
    vimAccessSecrets: secrets,
  };
  for (const key of ['vnfConfigurableProperties', 'extensions'] as const) {
    if (isRecord(params[key])) set[key] = { ...(instance[key] ?? {}), ...params[key] };
  }
  await saveInstance(deps, loaded, set);
  for (const secretId of replaced) {
    await deps.secrets.remove(secretId).catch((error: unknown) => log.warn('could not remove replaced VIM credentials', { vnfInstanceId: instance.id, error }));
  }
  const links = Array.isArray(params.extVirtualLinks) && params.extVirtualLinks.length && Array.isArray(info.extVirtualLinkInfo) ? info.extVirtualLinkInfo : [];
  await updateOpOcc(deps, opOcc, {
    resourceChanges: resourceDiff(before, collectedOf(info), redefinedVdus(vnfd, plan)),
    ...(links.length ? { changedExtConnectivity: links } : {}),
  });
  return polled(polls);
};

/** The VDUs the new flavour defines otherwise than the old one: their VNFCs that stayed were changed (resized, rebuilt). */
function redefinedVdus(vnfd: ParsedVnfd, plan: FlavourChangePlan): Set<string> {
  const old = vnfd.flavours.find((flavour) => flavour.flavourId === plan.oldFlavourId);
  const changed = new Set<string>();
  for (const vdu of flavourOf(vnfd, plan.newFlavourId).vdus) {
    const was = old?.vdus.find((candidate) => candidate.id === vdu.id);
    if (!was || JSON.stringify(was) !== JSON.stringify(vdu)) changed.add(vdu.id);
  }
  return changed;
}

/** Back to the flavour the instance records, with as many VNFCs per VDU as it records. */
const rollbackStart: Step = async (deps, loaded) => {
  const { opOcc, instance } = loaded;
  const vim = instance.vimResources?.vim;
  const capacities: Record<string, number> = {};
  const vnfcs = vnfcsOf(instance.instantiatedVnfInfo);
  for (const vnfc of vnfcs) capacities[vnfc.vduId] = (capacities[vnfc.vduId] ?? 0) + 1;
  const change: FlavourChange = { kind: 'CHANGE_FLAVOUR', rollback: true, capacities, keep: vnfcs.map((vnfc) => vnfc.resourceId) };
  const driver = await driverOf(vim);
  const state = await driver.updateStart(await instanceContext(deps, loaded, vim), opOcc.driverState ?? instance.vimResources?.driverState ?? {}, change);
  await updateOpOcc(deps, opOcc, { rollbackChange: change, driverState: state });
  return started();
};

const rollbackPoll: Step = async (deps, loaded, polls) => {
  const { opOcc, instance } = loaded;
  if (!opOcc.rollbackChange) return polled(polls);
  const vim = instance.vimResources?.vim;
  const driver = await driverOf(vim);
  const progress = await driver.updatePoll(await instanceContext(deps, loaded, vim), opOcc.driverState ?? {}, opOcc.rollbackChange as unknown as UpdateChange);
  return progressed(deps, opOcc, progress, polls);
};

export const changeFlavourSteps: StepTable = {
  grant,
  'grant-poll': grantPoll,
  'update-start': start,
  'update-poll': poll,
  'update-finish': finish,
  'rollback-start': rollbackStart,
  'rollback-poll': rollbackPoll,
  // Back on the old flavour: the instance records what the VIM has again.
  'rollback-finish': restoredOnVim,
};

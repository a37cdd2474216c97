// The steps of CHANGE_EXT_CONN (SOL003 5.4.11; statemachines/update.asl.json): the driver moves the
// external CPs to the external VLs worked out at the request, then instantiatedVnfInfo is read back
// from the VIM and the instance's instantiate request takes the new external VLs, so that later
// operations (scale, heal, a package change) keep the new connectivity. Its rollback is the same
// change back to the external VLs the instance had. A retry starts the change again: it is absolute.
import { BadRequestError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { VimConnectionInfo, VimReference, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { ExtConnChange, ExternalConnectivity } from '#lib/vim/driver.ts';
import { log } from '#lib/log.ts';
import { saveDriverState, updateOpOcc } from '#lib/lcm/op-occs.ts';
import { changedExtConnectivity, extConnResourceChanges, type ExtConnPlan } from '#lib/lcm/ext-conn.ts';
import { driverOf, hook, instanceContext } from './context.ts';
import { endHookOn, infoAfter, saveInstance } from './records.ts';
import { grant, grantPoll, restoredOnVim } from './shared-steps.ts';
import { polled, progressed, started, type Loaded, type Step, type StepTable } from './step.ts';

type Capability = Exclude<ExternalConnectivity, { unsupported: string }>;

function planOf(opOcc: VnfLcmOpOccRecord): ExtConnPlan {
  const plan = opOcc.change as unknown as ExtConnPlan | undefined;
  if (plan?.kind !== 'CHANGE_EXT_CONN') throw new BadRequestError(`VNF LCM operation occurrence ${opOcc.id} records no change of external connectivity`);
  return plan;
}

async function capabilityOf(vim: VimReference | undefined): Promise<Capability> {
  const capability = (await driverOf(vim)).externalConnectivity;
  if (!capability || 'unsupported' in capability)
    throw new UnprocessableEntityError(
      `The ${vim?.vimType ?? ''} driver cannot change external connectivity${capability ? `: ${capability.unsupported}` : ''}`,
    );
  return capability;
}

/** The change to make: to the planned external VLs, or (rollback) back to those the instance had. */
const changeOf = (plan: ExtConnPlan, back = false): ExtConnChange => ({ extVirtualLinks: back ? plan.previous : plan.extVirtualLinks, cpdIds: plan.cpdIds });

const start: Step = async (deps, loaded) => {
  const { opOcc, instance } = loaded;
  const vim = instance.vimResources?.vim;
  const capability = await capabilityOf(vim);
  const ctx = await instanceContext(deps, loaded, vim);
  await hook(deps, loaded, ctx, 'start');
  await saveDriverState(deps, opOcc, await capability.start(ctx, instance.vimResources?.driverState ?? {}, changeOf(planOf(opOcc))));
  return started();
};

const poll: Step = async (deps, loaded, polls) => {
  const { opOcc, instance } = loaded;
  const vim = instance.vimResources?.vim;
  const capability = await capabilityOf(vim);
  const state = opOcc.driverState ?? instance.vimResources?.driverState ?? {};
  return progressed(deps, opOcc, await capability.poll(await instanceContext(deps, loaded, vim), state, changeOf(planOf(opOcc))), polls);
};

/** vimConnectionInfo of the request merged into the instance's (SOL003: as a JSON Merge Patch), its credentials by their secret ids. */
function connectionsAfter(loaded: Loaded): { connections: Record<string, VimConnectionInfo>; secrets: Record<string, string> } {
  const { opOcc, instance } = loaded;
  const connections = { ...(instance.vimConnectionInfo ?? {}) };
  const secrets = { ...(instance.vimAccessSecrets ?? {}) };
  const given = ((opOcc.operationParams ?? {}) as { vimConnectionInfo?: Record<string, VimConnectionInfo> }).vimConnectionInfo ?? {};
  for (const [key, connection] of Object.entries(given)) {
    const { accessInfo: _stored, ...visible } = connection;
    connections[key] = visible;
    const pending = opOcc.pendingVimAccessSecrets?.[key];
    if (pending) secrets[key] = pending;
  }
  return { connections, secrets };
}

const finish: Step = async (deps, loaded, polls) => {
  const { opOcc, instance } = loaded;
  const resources = instance.vimResources;
  if (!resources) throw new UnprocessableEntityError(`VNF instance ${instance.id} has no VIM resources`);
  const plan = planOf(opOcc);
  const ctx = await instanceContext(deps, loaded, resources.vim);
  const driverState = opOcc.driverState ?? resources.driverState;
  const instantiateRequest = { ...resources.instantiateRequest, extVirtualLinks: plan.extVirtualLinks };
  const collected = await (await driverOf(resources.vim)).collect({ ...ctx, instantiateRequest }, driverState);
  const info = infoAfter(instance, collected);
  await endHookOn(deps, loaded, ctx, info);
  const { connections, secrets } = connectionsAfter(loaded);
  // The op occ first: a retried step then still compares with what the instance had.
  await updateOpOcc(deps, opOcc, {
    resourceChanges: extConnResourceChanges(instance.instantiatedVnfInfo, info, collected, plan),
    changedExtConnectivity: changedExtConnectivity(info, plan),
  });
  await saveInstance(deps, loaded, {
    instantiatedVnfInfo: info,
    vimResources: { ...resources, driverState, instantiateRequest },
    vimConnectionInfo: connections,
    vimAccessSecrets: secrets,
  });
  // Credentials this change replaced are no longer referenced by anything (the VNF stays on the VIM it was reached by).
  const inUse = new Set([...Object.values(secrets), resources.vim.accessSecret]);
  for (const old of Object.values(instance.vimAccessSecrets ?? {})) {
    if (!inUse.has(old)) await deps.secrets.remove(old).catch((error: unknown) => log.warn('could not remove a replaced VIM secret', { error }));
  }
  return polled(polls);
};

const rollbackStart: Step = async (deps, loaded) => {
  const { opOcc, instance } = loaded;
  const vim = instance.vimResources?.vim;
  const capability = await capabilityOf(vim);
  const state = opOcc.driverState ?? instance.vimResources?.driverState ?? {};
  await saveDriverState(deps, opOcc, await capability.start(await instanceContext(deps, loaded, vim), state, changeOf(planOf(opOcc), true)));
  return started();
};

const rollbackPoll: Step = async (deps, loaded, polls) => {
  const { opOcc, instance } = loaded;
  const vim = instance.vimResources?.vim;
  const capability = await capabilityOf(vim);
  const state = opOcc.driverState ?? instance.vimResources?.driverState ?? {};
  return progressed(deps, opOcc, await capability.poll(await instanceContext(deps, loaded, vim), state, changeOf(planOf(opOcc), true)), polls);
};

export const changeExtConnSteps: StepTable = {
  grant,
  'grant-poll': grantPoll,
  'update-start': start,
  'update-poll': poll,
  'update-finish': finish,
  'rollback-start': rollbackStart,
  'rollback-poll': rollbackPoll,
  // Back on the external VLs it had: the instance records what the VIM has now.
  'rollback-finish': restoredOnVim,
};

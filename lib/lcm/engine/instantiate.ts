// The steps of INSTANTIATE (SOL003 5.4.4; statemachines/instantiate.asl.json): the driver creates
// the VNF's resources on the VIM the request chose, the instance records what the VIM reports. Its
// rollback (and the clean-up before a retry) removes what a failed attempt created.
import type { VimReference } from '#lib/sol/model.ts';
import type { InstantiateVnfRequest } from '#lib/sol/requests.ts';
import type { FlavourInfo } from '#lib/packages/vnfd/model.ts';
import type { CollectedResources, DriverState, OperationContext } from '#lib/vim/driver.ts';
import { flavourOf } from '#lib/vim/flavour.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { saveDriverState, updateOpOcc } from '#lib/lcm/op-occs.ts';
import { ageOrdered } from '#lib/lcm/scale-heal.ts';
import { driverOf, hook, operationContext } from './context.ts';
import { resourceChanges, saveInstance } from './records.ts';
import { forgetAttempt, grant, grantPoll } from './shared-steps.ts';
import { polled, progressed, started, type Loaded, type Step, type StepTable } from './step.ts';

/** The context of the VNF the request makes: its flavour and instantiation level are the request's. */
function requestContext(deps: CoreDeps, loaded: Loaded, vim: VimReference | undefined): Promise<OperationContext> {
  const request = loaded.opOcc.operationParams ?? {};
  return operationContext(deps, loaded, vim, request, String((request as Partial<InstantiateVnfRequest>).flavourId ?? ''));
}

function instantiatedVnfInfo(flavour: FlavourInfo, levelId: string | undefined, collected: CollectedResources): Record<string, unknown> {
  const level = flavour.instantiationLevels.levels[levelId ?? flavour.instantiationLevels.default ?? ''];
  return {
    flavourId: flavour.flavourId,
    vnfState: 'STARTED',
    scaleStatus: flavour.scalingAspects.map((aspect) => ({ aspectId: aspect.id, scaleLevel: level?.scaleInfo?.[aspect.id]?.scaleLevel ?? 0 })),
    maxScaleLevels: flavour.scalingAspects.map((aspect) => ({ aspectId: aspect.id, scaleLevel: aspect.maxScaleLevel })),
    extCpInfo: collected.extCpInfo,
    ...(collected.extVirtualLinkInfo?.length ? { extVirtualLinkInfo: collected.extVirtualLinkInfo } : {}),
    vnfcResourceInfo: collected.vnfcResourceInfo,
    vnfVirtualLinkResourceInfo: collected.vnfVirtualLinkResourceInfo,
    virtualStorageResourceInfo: collected.virtualStorageResourceInfo,
    ...(collected.vnfcInfo ? { vnfcInfo: collected.vnfcInfo } : {}),
  };
}

const start: Step = async (deps, loaded) => {
  const { opOcc } = loaded;
  const ctx = await requestContext(deps, loaded, opOcc.vim);
  // The instantiate_start hook runs while the driver prepares what is inert (the software images
  // stored in the VIM); nothing that runs is created before it succeeded (InfraDriver.instantiateStart).
  const hookRan = hook(deps, loaded, ctx, 'start');
  // Handled from now on: a hook that fails while the images upload is not an unhandled rejection.
  const hookSettled = hookRan.catch(() => undefined);
  let state: DriverState;
  try {
    state = await (await driverOf(opOcc.vim)).instantiateStart(ctx, hookRan);
  } finally {
    // Settled either way: a driver that failed first does not leave the hook running past the step.
    await hookSettled;
  }
  await saveDriverState(deps, opOcc, state);
  await hookRan;
  if (state.warnings?.length) await updateOpOcc(deps, opOcc, { warnings: state.warnings });
  return started();
};

const poll: Step = async (deps, loaded, polls) => {
  const { opOcc } = loaded;
  const driver = await driverOf(opOcc.vim);
  const progress = await driver.instantiatePoll(await requestContext(deps, loaded, opOcc.vim), opOcc.driverState ?? {});
  return progressed(deps, opOcc, progress, polls);
};

const finish: Step = async (deps, loaded, polls) => {
  const { opOcc, instance } = loaded;
  const vim = opOcc.vim;
  const params = opOcc.operationParams as InstantiateVnfRequest;
  const ctx = await requestContext(deps, loaded, vim);
  const found = await (await driverOf(vim)).collect(ctx, opOcc.driverState ?? {});
  const collected = { ...found, vnfcResourceInfo: ageOrdered(undefined, found.vnfcResourceInfo) };
  const flavour = flavourOf(loaded.vnfd, params.flavourId);
  const connections = { ...(instance.vimConnectionInfo ?? {}) };
  const secrets = { ...(instance.vimAccessSecrets ?? {}) };
  for (const [key, connection] of Object.entries((params.vimConnectionInfo ?? {}) as Record<string, Record<string, unknown>>)) {
    connections[key] = connection as unknown as (typeof connections)[string];
    const pending = opOcc.pendingVimAccessSecrets?.[key];
    if (pending) secrets[key] = pending;
  }
  if (vim && !connections[vim.connectionId]) connections[vim.connectionId] = { vimId: vim.vimId, vimType: vim.vimType, interfaceInfo: vim.interfaceInfo };
  const set: Record<string, unknown> = {
    instantiationState: 'INSTANTIATED',
    instantiatedVnfInfo: instantiatedVnfInfo(flavour, params.instantiationLevelId, collected),
    vimConnectionInfo: connections,
    vimAccessSecrets: secrets,
    vimResources: { vim, driverState: opOcc.driverState ?? {}, instantiateRequest: opOcc.operationParams ?? {} },
  };
  if (params.vnfConfigurableProperties) set.vnfConfigurableProperties = params.vnfConfigurableProperties;
  if (params.extensions) set.extensions = params.extensions;
  // As Tacker runs it, instantiate_end sees the instance as instantiated: its VNFCs, their
  // addresses and external CPs, which a script configuring the VNF needs.
  await hook(deps, { ...loaded, instance: { ...instance, ...set } as typeof instance }, ctx, 'end');
  await saveInstance(deps, loaded, set);
  await updateOpOcc(deps, opOcc, { resourceChanges: resourceChanges(collected, 'ADDED') });
  return polled(polls);
};

/**
 * Removes what the failed attempt created. Without a recorded driver state (the start step died
 * before recording it) the driver finds what it made by its deterministic names and labels.
 */
const rollbackStart: Step = async (deps, loaded, polls) => {
  const { opOcc } = loaded;
  if (!opOcc.vim) return polled(polls);
  const state = await (await driverOf(opOcc.vim)).terminateStart(await requestContext(deps, loaded, opOcc.vim), opOcc.driverState ?? {});
  await saveDriverState(deps, opOcc, state);
  return started();
};

const rollbackPoll: Step = async (deps, loaded, polls) => {
  const { opOcc } = loaded;
  if (!opOcc.driverState) return polled(polls);
  const driver = await driverOf(opOcc.vim);
  const progress = await driver.terminatePoll(await requestContext(deps, loaded, opOcc.vim), opOcc.driverState);
  return progressed(deps, opOcc, progress, polls);
};

export const instantiateSteps: StepTable = {
  grant,
  'grant-poll': grantPoll,
  'instantiate-start': start,
  'instantiate-poll': poll,
  'instantiate-finish': finish,
  'rollback-start': rollbackStart,
  'rollback-poll': rollbackPoll,
  'rollback-finish': forgetAttempt,
};

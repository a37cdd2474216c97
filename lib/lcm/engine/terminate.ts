// The steps of TERMINATE (SOL003 5.4.8; statemachines/terminate.asl.json): the driver removes
// everything the VNF has on its VIM, then the instance is NOT_INSTANTIATED again. No rollback: its
// resources may be partly deleted (lib/lcm/requests/op-occ-tasks.ts refuses one).
import { saveDriverState, updateOpOcc } from '#lib/lcm/op-occs.ts';
import { driverOf, hook, instanceContext } from './context.ts';
import { collectedOf, resourceChanges, saveInstance } from './records.ts';
import { grant, grantPoll } from './shared-steps.ts';
import { polled, progressed, started, type Step, type StepTable } from './step.ts';

const start: Step = async (deps, loaded) => {
  const { opOcc, instance } = loaded;
  const vim = instance.vimResources?.vim;
  const ctx = await instanceContext(deps, loaded, vim);
  await hook(deps, loaded, ctx, 'start');
  const state = await (await driverOf(vim)).terminateStart(ctx, instance.vimResources?.driverState ?? {});
  await saveDriverState(deps, opOcc, state);
  return started();
};

const poll: Step = async (deps, loaded, polls) => {
  const { opOcc, instance } = loaded;
  const vim = instance.vimResources?.vim;
  const driver = await driverOf(vim);
  const progress = await driver.terminatePoll(await instanceContext(deps, loaded, vim), opOcc.driverState ?? {});
  return progressed(deps, opOcc, progress, polls);
};

const finish: Step = async (deps, loaded, polls) => {
  const { opOcc, instance } = loaded;
  await hook(deps, loaded, await instanceContext(deps, loaded, instance.vimResources?.vim), 'end');
  const changes = resourceChanges(collectedOf(instance.instantiatedVnfInfo), 'REMOVED');
  await saveInstance(deps, loaded, { instantiationState: 'NOT_INSTANTIATED' }, ['instantiatedVnfInfo', 'vimResources']);
  await updateOpOcc(deps, opOcc, { resourceChanges: changes });
  return polled(polls);
};

export const terminateSteps: StepTable = {
  grant,
  'grant-poll': grantPoll,
  'terminate-start': start,
  'terminate-poll': poll,
  'terminate-finish': finish,
};

// The steps of SCALE (SOL003 5.4.5): the driver update to the aspect's new counts, the scale level
// recorded; its rollback returns to the counts the instance had, from whatever the failed attempt
// left on the VIM.
import { BadRequestError } from '#lib/sol/errors.ts';
import type { VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { UpdateChange } from '#lib/vim/driver.ts';
import { updateOpOcc } from '#lib/lcm/op-occs.ts';
import { reverseScale, scaledStatus, type ScaleChange } from '#lib/lcm/scale-heal.ts';
import { driverOf, instanceContext } from './context.ts';
import { forgetAttempt, grant, grantPoll, restoredOnVim } from './shared-steps.ts';
import { polled, progressed, started, type Step, type StepTable } from './step.ts';
import { changeOf, finishUpdate, pollUpdate, startUpdate } from './update.ts';

function scaleOf(opOcc: VnfLcmOpOccRecord, change: UpdateChange = changeOf(opOcc)): ScaleChange {
  if (change.kind !== 'SCALE') throw new BadRequestError(`VNF LCM operation occurrence ${opOcc.id} records a ${change.kind}, not a SCALE`);
  return change;
}

const finish: Step = (deps, loaded, polls) =>
  finishUpdate(deps, loaded, polls, (change) => ({
    scaleStatus: scaledStatus(loaded.instance.instantiatedVnfInfo, scaleOf(loaded.opOcc, change)),
  }));

const rollbackStart: Step = async (deps, loaded) => {
  const { opOcc, instance } = loaded;
  const vim = instance.vimResources?.vim;
  const driver = await driverOf(vim);
  const ctx = await instanceContext(deps, loaded, vim);
  const state = opOcc.driverState ?? instance.vimResources?.driverState ?? {};
  const reverse = reverseScale(scaleOf(opOcc), instance.instantiatedVnfInfo, await driver.collect(ctx, state));
  await updateOpOcc(deps, opOcc, { rollbackChange: reverse, driverState: await driver.updateStart(ctx, state, reverse) });
  return started();
};

export const rollbackPoll: Step = async (deps, loaded, polls) => {
  const { opOcc } = loaded;
  if (!opOcc.rollbackChange) return polled(polls);
  const driver = await driverOf(opOcc.vim);
  const progress = await driver.updatePoll(await instanceContext(deps, loaded, opOcc.vim), opOcc.driverState ?? {}, opOcc.rollbackChange as UpdateChange);
  return progressed(deps, opOcc, progress, polls);
};

/** A rolled-back SCALE has the VNFCs it had before (ids of VNFCs a scale-in removed are new ones). */
export const rollbackFinish: Step = (deps, loaded, polls) => (loaded.opOcc.rollbackChange ? restoredOnVim : forgetAttempt)(deps, loaded, polls);

export const scaleSteps: StepTable = {
  grant,
  'grant-poll': grantPoll,
  'update-start': startUpdate,
  'update-poll': pollUpdate,
  'update-finish': finish,
  'rollback-start': rollbackStart,
  'rollback-poll': rollbackPoll,
  'rollback-finish': rollbackFinish,
};

// The steps of SCALE_TO_LEVEL (SOL003 5.4.6; statemachines/update.asl.json): one driver update to
// the counts the target levels give (some VDUs growing, others shrinking), then every aspect's scale
// level recorded. Targets equal to the current levels complete without a VIM call. Its rollback
// returns to the levels and counts the instance had, from whatever the failed attempt left on the
// VIM, as SCALE's does; a retry applies the same absolute counts again.
import { BadRequestError } from '#lib/sol/errors.ts';
import type { VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import { updateOpOcc } from '#lib/lcm/op-occs.ts';
import { changesVim, leveledStatus, reverseScaleToLevel, type ScaleToLevelChange } from '#lib/lcm/scale-to-level.ts';
import { driverOf, hook, instanceContext } from './context.ts';
import { endHookOn, saveInstance } from './records.ts';
import { rollbackFinish, rollbackPoll } from './scale.ts';
import { grant, grantPoll } from './shared-steps.ts';
import { polled, started, type Step, type StepTable } from './step.ts';
import { changeOf, finishUpdate, pollUpdate, startUpdate } from './update.ts';

function levelsOf(opOcc: VnfLcmOpOccRecord): ScaleToLevelChange {
  const change = changeOf(opOcc);
  if (change.kind !== 'SCALE_TO_LEVEL') throw new BadRequestError(`VNF LCM operation occurrence ${opOcc.id} records a ${change.kind}, not a SCALE_TO_LEVEL`);
  return change;
}

const start: Step = async (deps, loaded, polls) => {
  if (changesVim(levelsOf(loaded.opOcc))) return startUpdate(deps, loaded, polls);
  // Nothing to change on the VIM: the machine goes straight to the finish.
  await hook(deps, loaded, await instanceContext(deps, loaded, loaded.instance.vimResources?.vim), 'start');
  return polled(polls);
};

const finish: Step = async (deps, loaded, polls) => {
  const { opOcc, instance } = loaded;
  const change = levelsOf(opOcc);
  const scaleStatus = leveledStatus(instance.instantiatedVnfInfo, change);
  if (changesVim(change)) return finishUpdate(deps, loaded, polls, () => ({ scaleStatus }));
  const info = { ...instance.instantiatedVnfInfo, scaleStatus };
  await endHookOn(deps, loaded, await instanceContext(deps, loaded, instance.vimResources?.vim), info);
  await saveInstance(deps, loaded, { instantiatedVnfInfo: info });
  await updateOpOcc(deps, opOcc, { resourceChanges: { affectedVnfcs: [], affectedVirtualLinks: [], affectedVirtualStorages: [] } });
  return polled(polls);
};

const rollbackStart: Step = async (deps, loaded) => {
  const { opOcc, instance } = loaded;
  const change = levelsOf(opOcc);
  // An attempt that had nothing to do on the VIM left nothing there to undo.
  if (!changesVim(change)) return started();
  const vim = instance.vimResources?.vim;
  const driver = await driverOf(vim);
  const ctx = await instanceContext(deps, loaded, vim);
  const state = opOcc.driverState ?? instance.vimResources?.driverState ?? {};
  const reverse = reverseScaleToLevel(change, instance.instantiatedVnfInfo, await driver.collect(ctx, state));
  await updateOpOcc(deps, opOcc, { rollbackChange: reverse, driverState: await driver.updateStart(ctx, state, reverse) });
  return started();
};

export const scaleToLevelSteps: StepTable = {
  grant,
  'grant-poll': grantPoll,
  'update-start': start,
  'update-poll': pollUpdate,
  'update-finish': finish,
  'rollback-start': rollbackStart,
  'rollback-poll': rollbackPoll,
  'rollback-finish': rollbackFinish,
};

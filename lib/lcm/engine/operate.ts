// The steps of OPERATE (SOL003 5.4.10), on the update machine (statemachines/update.asl.json): the
// VNFD's operate_start script (where a graceful stop takes the VNF out of service), the driver
// starting or stopping the VNFCs the request named, polled until the VIM shows them in the new
// state, the operate_end script, and instantiatedVnfInfo read back (vnfState and vnfcInfo[].vnfcState
// as the VIM has them). Its rollback brings the VNFCs the failed attempt changed back to the state
// they had; a retry starts the change again, from what the failed attempt left (a stopped workload's
// remembered replica count).
import { BadRequestError } from '#lib/sol/errors.ts';
import type { VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { OperateChange } from '#lib/vim/driver.ts';
import { saveDriverState, updateOpOcc } from '#lib/lcm/op-occs.ts';
import { operateChanges, reverseOperate } from '#lib/lcm/operate.ts';
import { resourceDiff } from '#lib/lcm/scale-heal.ts';
import { driverOf, hook, instanceContext } from './context.ts';
import { collectedOf, recollect } from './records.ts';
import { forgetAttempt, grant, grantPoll, restoredOnVim } from './shared-steps.ts';
import { polled, progressed, started, type Step, type StepTable } from './step.ts';
import { changeOf } from './update.ts';

function operateOf(opOcc: VnfLcmOpOccRecord, change = changeOf(opOcc)): OperateChange {
  if (change.kind !== 'OPERATE') throw new BadRequestError(`VNF LCM operation occurrence ${opOcc.id} records a ${change.kind}, not an OPERATE`);
  return change;
}

/** The driver state to work from: what a failed attempt of this op occ left (a retry), else the instance's. */
const stateOf = (loaded: Parameters<Step>[1]) => loaded.opOcc.driverState ?? loaded.instance.vimResources?.driverState ?? {};

const start: Step = async (deps, loaded) => {
  const { opOcc, instance } = loaded;
  const vim = instance.vimResources?.vim;
  const ctx = await instanceContext(deps, loaded, vim);
  await hook(deps, loaded, ctx, 'start');
  await saveDriverState(deps, opOcc, await (await driverOf(vim)).updateStart(ctx, stateOf(loaded), operateOf(opOcc)));
  return started();
};

const poll: Step = async (deps, loaded, polls) => {
  const { opOcc, instance } = loaded;
  const vim = instance.vimResources?.vim;
  const progress = await (await driverOf(vim)).updatePoll(await instanceContext(deps, loaded, vim), stateOf(loaded), operateOf(opOcc));
  return progressed(deps, opOcc, progress, polls);
};

const finish: Step = async (deps, loaded, polls) => {
  const { opOcc, instance } = loaded;
  const info = await recollect(deps, loaded, {}, true);
  const diff = resourceDiff(collectedOf(instance.instantiatedVnfInfo), collectedOf(info));
  const warnings = (opOcc.driverState as { warnings?: unknown } | undefined)?.warnings;
  await updateOpOcc(deps, opOcc, {
    resourceChanges: operateChanges(diff, instance.instantiatedVnfInfo, info),
    ...(Array.isArray(warnings) && warnings.length ? { warnings: warnings.map(String) } : {}),
  });
  return polled(polls);
};

const rollbackStart: Step = async (deps, loaded, polls) => {
  const { opOcc, instance } = loaded;
  const reverse = reverseOperate(operateOf(opOcc), instance.instantiatedVnfInfo);
  if (!reverse) return polled(polls);
  const vim = instance.vimResources?.vim;
  const ctx = await instanceContext(deps, loaded, vim);
  await updateOpOcc(deps, opOcc, { rollbackChange: reverse, driverState: await (await driverOf(vim)).updateStart(ctx, stateOf(loaded), reverse) });
  return started();
};

const rollbackPoll: Step = async (deps, loaded, polls) => {
  const { opOcc } = loaded;
  if (!opOcc.rollbackChange) return polled(polls);
  const driver = await driverOf(opOcc.vim);
  const progress = await driver.updatePoll(
    await instanceContext(deps, loaded, opOcc.vim),
    opOcc.driverState ?? {},
    operateOf(opOcc, opOcc.rollbackChange as OperateChange),
  );
  return progressed(deps, opOcc, progress, polls);
};

/** A rolled-back OPERATE has its VNFCs in the states they had; the instance records what the VIM shows. */
const rollbackFinish: Step = (deps, loaded, polls) => (loaded.opOcc.rollbackChange ? restoredOnVim : forgetAttempt)(deps, loaded, polls);

export const operateSteps: StepTable = {
  grant,
  'grant-poll': grantPoll,
  'update-start': start,
  'update-poll': poll,
  'update-finish': finish,
  'rollback-start': rollbackStart,
  'rollback-poll': rollbackPoll,
  'rollback-finish': rollbackFinish,
};

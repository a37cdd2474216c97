// The driver update SCALE and HEAL both are (statemachines/update.asl.json): the change worked out
// at the request (lib/lcm/scale-heal.ts) is applied from the driver state the instance's last
// operation left, then instantiatedVnfInfo is read back from the VIM. Each operation's own module
// says what else it records.
import { BadRequestError } from '#lib/sol/errors.ts';
import type { VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { UpdateChange } from '#lib/vim/driver.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { saveDriverState, updateOpOcc } from '#lib/lcm/op-occs.ts';
import { resourceDiff } from '#lib/lcm/scale-heal.ts';
import { driverOf, hook, instanceContext } from './context.ts';
import { collectedOf, recollect } from './records.ts';
import { polled, progressed, started, type Loaded, type Step, type StepResult } from './step.ts';

export function changeOf(opOcc: VnfLcmOpOccRecord): UpdateChange {
  if (!opOcc.change) throw new BadRequestError(`VNF LCM operation occurrence ${opOcc.id} (${opOcc.operation}) records no change to make`);
  return opOcc.change as unknown as UpdateChange;
}

export const startUpdate: Step = async (deps, loaded) => {
  const { opOcc, instance } = loaded;
  const vim = instance.vimResources?.vim;
  const ctx = await instanceContext(deps, loaded, vim);
  await hook(deps, loaded, ctx, 'start');
  const state = await (await driverOf(vim)).updateStart(ctx, instance.vimResources?.driverState ?? {}, changeOf(opOcc));
  await saveDriverState(deps, opOcc, state);
  return started();
};

export const pollUpdate: Step = async (deps, loaded, polls) => {
  const { opOcc, instance } = loaded;
  const vim = instance.vimResources?.vim;
  const progress = await (await driverOf(vim)).updatePoll(
    await instanceContext(deps, loaded, vim),
    opOcc.driverState ?? instance.vimResources?.driverState ?? {},
    changeOf(opOcc),
  );
  return progressed(deps, opOcc, progress, polls);
};

/** Records what the VIM has now, with `extra` attributes of instantiatedVnfInfo the change sets, and the resource changes. */
export async function finishUpdate(
  deps: CoreDeps,
  loaded: Loaded,
  polls: number,
  extra: (change: UpdateChange) => Record<string, unknown>,
): Promise<StepResult> {
  const { opOcc, instance } = loaded;
  const info = await recollect(deps, loaded, extra(changeOf(opOcc)), true);
  await updateOpOcc(deps, opOcc, { resourceChanges: resourceDiff(collectedOf(instance.instantiatedVnfInfo), collectedOf(info)) });
  return polled(polls);
}

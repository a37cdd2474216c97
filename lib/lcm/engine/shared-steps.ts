// Steps several operations have alike: asking for the grant, a step with nothing to do, and the
// end of a rollback (the op occ forgets what the failed attempt did; the instance records what
// the VIM has once a rollback has changed it).
import type { CoreDeps } from '#lib/ports.ts';
import { updateOpOcc } from '#lib/lcm/op-occs.ts';
import { grantFor } from '#lib/lcm/grant.ts';
import { recollect } from './records.ts';
import { polled, type Loaded, type Step, type StepResult } from './step.ts';

/** SOL003 clause 9: asked once per op occ; a retry or rollback finds it recorded. */
export const grant: Step = async (deps, loaded, polls) => {
  const { opOcc } = loaded;
  if (!opOcc.grant) {
    const { grantRequest, grant: decided } = await grantFor(deps, loaded);
    await updateOpOcc(deps, opOcc, { grantRequest, grant: decided, ...(decided.local ? {} : { grantId: decided.id }) });
  }
  return polled(polls);
};

export const nothingToDo: Step = async (_deps, _loaded, polls) => polled(polls);

/** A retried operation starts from scratch; a rolled-back one leaves nothing behind. */
export async function forgetAttempt(deps: CoreDeps, loaded: Loaded, polls: number): Promise<StepResult> {
  await updateOpOcc(deps, loaded.opOcc, {}, ['driverState', 'rollbackChange']);
  return polled(polls);
}

/** A rollback that put the VNF back as it was: the instance records what the VIM has now. */
export const restoredOnVim: Step = async (deps, loaded, polls) => {
  await recollect(deps, loaded, {}, false);
  return forgetAttempt(deps, loaded, polls);
};

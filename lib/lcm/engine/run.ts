// The LCM step engine: the task the operation state machines call with an op occ and an action
// runs that action's step in the op occ's operation's table. What an operation does is all in its
// own module's table; nothing here or in a step branches on the operation. Here too: the steps of
// an op occ whose cancel is pending, and (coordinated.ts) the LCM coordinations its request asks for.
import { ConflictError } from '#lib/sol/errors.ts';
import { log } from '#lib/log.ts';
import type { LcmOperationType } from '#lib/sol/model.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { storedPackages, type PackageAccess } from '#lib/packages/access.ts';
import { changeExtConnSteps } from './change-ext-conn.ts';
import { OperationCancelled } from '#lib/lcm/cancellation.ts';
import { changeVnfpkgSteps } from './change-vnfpkg.ts';
import { coordinatedStep } from './coordinated.ts';
import { changeFlavourSteps } from './change-flavour.ts';
import { healSteps } from './heal.ts';
import { instantiateSteps } from './instantiate.ts';
import { modifyInfoSteps } from './modify-info.ts';
import { operateSteps } from './operate.ts';
import { scaleSteps } from './scale.ts';
import { scaleToLevelSteps } from './scale-to-level.ts';
import { createSnapshotSteps, revertToSnapshotSteps } from './snapshots.ts';
import { isVimPoll, load, type Loaded, type StepAction, type StepResult, type StepTable } from './step.ts';
import { terminateSteps } from './terminate.ts';

export type { StepAction, StepResult } from './step.ts';

const STEPS: Partial<Record<LcmOperationType, StepTable>> = {
  INSTANTIATE: instantiateSteps,
  TERMINATE: terminateSteps,
  SCALE: scaleSteps,
  SCALE_TO_LEVEL: scaleToLevelSteps,
  HEAL: healSteps,
  CHANGE_VNFPKG: changeVnfpkgSteps,
  CHANGE_FLAVOUR: changeFlavourSteps,
  MODIFY_INFO: modifyInfoSteps,
  CHANGE_EXT_CONN: changeExtConnSteps,
  OPERATE: operateSteps,
  CREATE_SNAPSHOT: createSnapshotSteps,
  REVERT_TO_SNAPSHOT: revertToSnapshotSteps,
};

/** Runs one step of an op occ; `packages` is where its packages are read (tests hand in their own). */
export async function runStep(deps: CoreDeps, opOccId: string, action: StepAction, polls = 0, packages: PackageAccess = storedPackages): Promise<StepResult> {
  return runLoaded(deps, await load(deps, opOccId, packages), action, polls);
}

/**
 * A poll step as one invocation's poll loop runs it, poll after poll: the op occ is read afresh at
 * every poll (the driver state the last poll saved, a cancel), the instance and its package only at
 * the first. Poll steps write neither; the operation holds the instance's lock, and the next
 * invocation (a retry included) reads everything again.
 */
export function pollStep(
  deps: CoreDeps,
  opOccId: string,
  action: StepAction,
  packages: PackageAccess = storedPackages,
): (polls: number) => Promise<StepResult> {
  let last: Loaded | undefined;
  return async (polls) => {
    const opOcc = last ? await deps.opOccs.get(opOccId) : undefined;
    last = last && opOcc && opOcc.vnfInstanceId === last.instance.id ? { ...last, opOcc } : await load(deps, opOccId, packages);
    return runLoaded(deps, last, action, polls);
  };
}

async function runLoaded(deps: CoreDeps, loaded: Loaded, action: StepAction, polls: number): Promise<StepResult> {
  // Every line of this step names the VNF instance as well as the op occ (the event carries the op occ only).
  log.appendKeys({ vnfInstanceId: loaded.opOcc.vnfInstanceId });
  const table = STEPS[loaded.opOcc.operation];
  if (!table?.[action])
    throw new ConflictError(`VNF LCM operation occurrence ${loaded.opOcc.id} is a ${loaded.opOcc.operation}, which has no step "${action}"`);
  if (!loaded.opOcc.isCancelPending) return coordinatedStep(deps, loaded, action, polls, table);
  // A cancel is pending: no new work is started on the VIM, and work it is doing is polled to its
  // end; then the operation stops, and the machine's Catch records FAILED_TEMP (lib/lcm/cancellation.ts).
  // A coordination under way is cancelled at the EM (coordinated.ts).
  if (!isVimPoll(action)) throw new OperationCancelled(loaded.opOcc);
  const result = await coordinatedStep(deps, loaded, action, polls, table);
  if (result.status === 'DONE') throw new OperationCancelled(loaded.opOcc);
  return result;
}

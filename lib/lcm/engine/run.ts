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
import { load, type StepAction, type StepResult, type StepTable } from './step.ts';
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
  const loaded = await load(deps, opOccId, packages);
  // Every line of this step names the VNF instance as well as the op occ (the event carries the op occ only).
  log.appendKeys({ vnfInstanceId: loaded.opOcc.vnfInstanceId });
  const table = STEPS[loaded.opOcc.operation];
  if (!table?.[action]) throw new ConflictError(`VNF LCM operation occurrence ${opOccId} is a ${loaded.opOcc.operation}, which has no step "${action}"`);
  if (!loaded.opOcc.isCancelPending) return coordinatedStep(deps, loaded, action, polls, table);
  // A cancel is pending: no new work is started on the VIM, and work it is doing is polled to its
  // end; then the operation stops, and the machine's Catch records FAILED_TEMP (lib/lcm/cancellation.ts).
  // A coordination under way is cancelled at the EM (coordinated.ts).
  if (!action.endsWith('-poll')) throw new OperationCancelled(loaded.opOcc);
  const result = await coordinatedStep(deps, loaded, action, polls, table);
  if (result.status === 'DONE') throw new OperationCancelled(loaded.opOcc);
  return result;
}

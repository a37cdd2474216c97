// The cancel task of an op occ (SOL003 5.4.17): allowed while it is STARTING, PROCESSING or
// ROLLING_BACK; what each mode does is lib/lcm/cancellation.ts's.
import { ConflictError, ProblemError } from '#lib/sol/errors.ts';
import { CANCELLABLE_STATES, type CancelModeType, type VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import { log } from '#lib/log.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { Caller } from '#lib/auth/tenancy.ts';
import { finishOperation } from '#lib/lcm/operations.ts';
import { getOpOcc, moveOpOcc } from '#lib/lcm/op-occs.ts';
import { cancelledProblem, endCancelled } from '#lib/lcm/cancellation.ts';

/** How often the op occ is read again when it changed state between the read and the write. */
const ATTEMPTS = 5;

/**
 * SOL003 5.4.17 cancel. STARTING -> ROLLED_BACK now (the instance's lock released) and the execution
 * stopped. PROCESSING or ROLLING_BACK -> isCancelPending with the mode; FORCEFUL stops the execution
 * and moves the op occ to FAILED_TEMP before answering, GRACEFUL leaves that to the execution's
 * next step. A second cancel while one is pending may make it FORCEFUL, never GRACEFUL again.
 */
export async function cancelOperation(deps: CoreDeps, caller: Caller, opOccId: string, mode: CancelModeType): Promise<VnfLcmOpOccRecord> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const current = await getOpOcc(deps, caller, opOccId);
    const state = current.operationState;
    if (!CANCELLABLE_STATES.includes(state))
      throw new ConflictError(`VNF LCM operation occurrence ${opOccId} is ${state}; only one STARTING, PROCESSING or ROLLING_BACK can be cancelled`);
    const execution = current.execution ?? { machine: current.operation, name: current.id };

    if (state === 'STARTING') {
      let moved: VnfLcmOpOccRecord;
      try {
        moved = await finishOperation(deps, opOccId, 'ROLLED_BACK', { from: ['STARTING'], error: cancelledProblem(mode, state) });
      } catch (error) {
        // Its execution moved it on to PROCESSING meanwhile: cancel that instead.
        if (error instanceof ConflictError) continue;
        throw error;
      }
      // Nothing was done yet; an execution that runs on finds the op occ ROLLED_BACK and ends.
      await deps.executor.stop(execution.machine, execution.name).catch((error: unknown) => {
        log.warn('could not stop the execution of a cancelled operation', { opOccId, execution: execution.name, error });
      });
      return moved;
    }

    if (current.isCancelPending && (mode === 'GRACEFUL' || current.cancelMode === 'FORCEFUL')) return current;
    const pending = await moveOpOcc(deps, opOccId, {
      from: [state],
      to: state,
      now: current.stateEnteredTime,
      set: { isCancelPending: true, cancelMode: mode },
    });
    if (!pending) continue;
    if (mode === 'GRACEFUL') return pending;

    try {
      await deps.executor.stop(execution.machine, execution.name);
    } catch (error) {
      // The cancel stays pending: the execution's next step honours it.
      throw new ProblemError(503, 'Service Unavailable', 'The operation could not be stopped now; it stops at its next step', { cause: error });
    }
    // The stopped execution's recovery may have got there first, or the operation ended meanwhile.
    return (await endCancelled(deps, pending)) ?? (await getOpOcc(deps, caller, opOccId));
  }
  throw new ConflictError(`VNF LCM operation occurrence ${opOccId} keeps changing state; try again`);
}

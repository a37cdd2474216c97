// Cancelling an LCM operation in progress (SOL003 5.4.17 and CancelModeType). An op occ STARTING
// has done nothing yet: it goes to ROLLED_BACK at once and its execution is stopped. One PROCESSING
// or ROLLING_BACK records the pending cancel (isCancelPending, cancelMode) and ends FAILED_TEMP,
// from where retry, rollback and fail carry on from the driver state it recorded:
//   - GRACEFUL: no new work is started on the VIM. Work the VIM is doing is polled to its end;
//     then, or instead of any other step, the state machine's step refuses to run
//     (OperationCancelled) and the machine's Catch records FAILED_TEMP, as for any failed step.
//   - FORCEFUL: the execution is stopped at once and the op occ moved to FAILED_TEMP right away.
//     The stopped execution's recovery (its ABORTED event, the sweep) finds it moved already, or
//     moves it the same way.
// Whatever moves the op occ out of its state ends the pending cancel (lib/lcm/op-occs.ts).
import { ProblemError } from '#lib/sol/errors.ts';
import type { CancelModeType, LcmOperationState, ProblemDetailsRecord, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { moveOpOcc } from './op-occs.ts';

/** The error name a cancelled step fails with; the state machines' Catch hands it to the FAILED_TEMP transition. */
export const CANCELLED = 'OperationCancelled';
export const CANCELLED_TITLE = 'Operation cancelled';

function cancelledDetail(mode: CancelModeType, state: LcmOperationState): string {
  const what =
    mode === 'GRACEFUL'
      ? 'the work the VIM was doing was let finish and no further step was taken'
      : 'its execution was stopped at once, and work the VIM was doing may not have finished';
  return `The operation was cancelled (${mode}) while ${state}: ${what}. Retry it, roll it back or mark it failed.`;
}

/** What a cancelled op occ records as its error. */
export function cancelledProblem(mode: CancelModeType, state: LcmOperationState): ProblemDetailsRecord {
  return { title: CANCELLED_TITLE, status: 409, detail: cancelledDetail(mode, state) };
}

/** Thrown by a step of an op occ whose cancel is pending: the operation takes no further step. */
export class OperationCancelled extends ProblemError {
  constructor(opOcc: Pick<VnfLcmOpOccRecord, 'cancelMode' | 'operationState'>) {
    super(409, CANCELLED_TITLE, cancelledDetail(opOcc.cancelMode ?? 'GRACEFUL', opOcc.operationState));
    // Set, not inherited from the class: bundles minify class names, and the state machines read this one.
    this.name = CANCELLED;
  }
}

/** A state in which a cancel can be pending: an execution is working on the VIM. */
export const cancelCanBePending = (state: LcmOperationState): boolean => state === 'PROCESSING' || state === 'ROLLING_BACK';

/**
 * Ends the pending cancel of an op occ whose execution no longer runs: PROCESSING or ROLLING_BACK
 * -> FAILED_TEMP, its error saying it was cancelled. Undefined when the op occ was no longer in
 * the state it was read in (something else moved it on).
 */
export function endCancelled(deps: CoreDeps, opOcc: VnfLcmOpOccRecord): Promise<VnfLcmOpOccRecord | undefined> {
  if (!cancelCanBePending(opOcc.operationState)) return Promise.resolve(undefined);
  return moveOpOcc(deps, opOcc.id, {
    from: [opOcc.operationState],
    to: 'FAILED_TEMP',
    now: deps.now(),
    set: { error: cancelledProblem(opOcc.cancelMode ?? 'FORCEFUL', opOcc.operationState) },
  });
}

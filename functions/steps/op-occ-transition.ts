// Step Functions task: moves an op occ through the SOL003 5.4.1.2 state model (PROCESSING,
// COMPLETED, FAILED_TEMP, ROLLED_BACK), releasing the instance lock on final states. Throws on
// failure so the state machine's Retry/Catch sees it.
// X-Ray subsegments for its invocations and AWS SDK calls (lib/trace.ts; not every function has room for it).
import '#lib/trace.ts';
import { coreDeps } from '#lib/deps.ts';
import { finishOperation } from '#lib/lcm/operations.ts';
import type { StepTarget } from '#lib/lcm/op-occs.ts';
import { problemFromTaskFailure, type TaskFailure } from './task-failure.ts';
import { instrumented } from '#lib/metrics.ts';

export interface TransitionInput {
  opOccId: string;
  to: StepTarget;
  /** The Catch output of the failed step, for FAILED_TEMP and ROLLED_BACK. */
  failure?: TaskFailure;
  changedInfo?: Record<string, unknown>;
  /**
   * Where the op occ goes instead when it is PROCESSING already: a task that ran the grant and the
   * start together (lib/lcm/engine/chain.ts) fails in STARTING (-> ROLLED_BACK) or, past the grant,
   * in PROCESSING (-> FAILED_TEMP), SOL003 5.4.1.2.
   */
  ifProcessing?: StepTarget;
}

const handle = async (input: TransitionInput): Promise<{ opOccId: string; operationState: string }> => {
  const deps = coreDeps();
  const to = input.ifProcessing && (await deps.opOccs.get(input.opOccId))?.operationState === 'PROCESSING' ? input.ifProcessing : input.to;
  const record = await finishOperation(deps, input.opOccId, to, {
    error: input.failure ? problemFromTaskFailure(input.failure) : undefined,
    changedInfo: input.changedInfo,
  });
  return { opOccId: record.id, operationState: record.operationState };
};

export const handler = instrumented(handle, (input) => ({ opOccId: input.opOccId }));

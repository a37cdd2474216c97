// Steps of one operation run back to back in one invocation where nothing is waited for between
// them: a grant the NFVO decides at once (201), the move to PROCESSING and the start step; a poll
// that finds the VIM done, the finish step and the move to COMPLETED. Each step is the one the
// state machine would otherwise call by itself, with the same records and the same idempotence, so
// a retried invocation redoes nothing it must not. What a chain saves is an invocation and a state
// transition per link, and the time between them (statemachines/*.asl.json name the links in the
// task's Parameters).
import { finishOperation } from '#lib/lcm/operations.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { StepAction, StepResult } from './step.ts';

export interface ChainedStep {
  opOccId: string;
  action: StepAction;
  polls?: number;
  /** When `action` is done at once (a grant decided with 201): the op occ moves to PROCESSING and this step runs. */
  thenStart?: StepAction;
  /** Seconds the start must wait after PROCESSING (a graceful termination's timeout): when above 0, `thenStart` is left to the machine. */
  startAfterSeconds?: number;
  /** When `action` (or `thenStart`) is done: this step runs (the finish after a poll). */
  thenFinish?: StepAction;
  /** When the last step run is done: the op occ moves to COMPLETED. */
  complete?: boolean;
}

/**
 * The op occ could not be moved to COMPLETED after its work was done (its store did not answer):
 * the machine's Catch hands this error to the transition task, which retries that move alone.
 */
export class CompletionPending extends Error {
  constructor(cause: unknown) {
    super(`The operation's work is done; recording it as COMPLETED failed and is retried: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'CompletionPending';
  }
}

/** Runs `first` (one step, or a poll loop), then the links `input` names for as long as each is done. */
export async function runChain(
  deps: CoreDeps,
  input: ChainedStep,
  first: () => Promise<StepResult>,
  step: (action: StepAction, polls: number) => Promise<StepResult>,
): Promise<StepResult> {
  let result = await first();
  if (input.thenStart && !(Number(input.startAfterSeconds) > 0) && result.status === 'DONE') {
    await finishOperation(deps, input.opOccId, 'PROCESSING');
    result = { ...(await step(input.thenStart, 0)), started: true };
  }
  if (input.thenFinish && result.status === 'DONE') result = await step(input.thenFinish, result.polls ?? 0);
  if (input.complete && result.status === 'DONE') {
    try {
      await finishOperation(deps, input.opOccId, 'COMPLETED');
    } catch (error) {
      throw new CompletionPending(error);
    }
    result = { ...result, completed: true };
  }
  return result;
}

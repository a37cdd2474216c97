// Waiting for the VIM inside one invocation: a poll step polls again at the back-off intervals of
// step.ts until the VIM work is done, failed, or the invocation's time is up, and only then hands
// back to the state machine, whose Wait state and next invocation carry on. A Standard workflow
// bills every state transition (Wait, Poll, Choice: three per round), so polling once per
// invocation made waiting for a one-minute stack cost ~180 transitions, more than everything else
// an instantiate does; a small function waiting a minute costs a fraction of that, and polls far
// more often, so the operation also ends sooner after the VIM is done.
import type { CoreDeps } from '#lib/ports.ts';
import { storedPackages, type PackageAccess } from '#lib/packages/access.ts';
import { runStep, type StepAction, type StepResult } from './run.ts';
import { pollIntervalMs } from './step.ts';

/** At most this long polling in one invocation; the function's timeout leaves room for a slow last poll. */
export const POLL_LOOP_MS = 300_000;
/** A new poll starts only with at least this long left before the function's timeout (a poll may run a script). */
export const POLL_RESERVE_MS = 180_000;

export interface PollLoopOptions {
  /** The invocation's remaining time (Lambda's context.getRemainingTimeInMillis). */
  remainingMs: () => number;
  packages?: PackageAccess;
  /** How the loop waits between polls (tests hand in their own clock). */
  sleep?: (ms: number) => Promise<void>;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs a `*-poll` step until it is not IN_PROGRESS, or the loop's time is up (then the machine's Wait takes over). */
export async function pollUntilSettled(deps: CoreDeps, opOccId: string, action: StepAction, polls: number, options: PollLoopOptions): Promise<StepResult> {
  const sleep = options.sleep ?? realSleep;
  const packages = options.packages ?? storedPackages;
  const until = Date.now() + POLL_LOOP_MS;
  let result = await runStep(deps, opOccId, action, polls, packages);
  while (result.status === 'IN_PROGRESS') {
    const wait = pollIntervalMs(result.polls ?? polls);
    if (Date.now() + wait > until || options.remainingMs() - wait < POLL_RESERVE_MS) break;
    await sleep(wait);
    result = await runStep(deps, opOccId, action, result.polls ?? polls, packages);
  }
  return result;
}

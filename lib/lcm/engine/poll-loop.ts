// Waiting for the VIM inside one invocation: a poll step polls again at the back-off intervals of
// step.ts until the VIM work is done, failed, or the invocation's time is up, and only then hands
// back to the state machine, whose Wait state and next invocation carry on. A Standard workflow
// bills every state transition (Wait, Poll, Choice: three per round), so polling once per
// invocation made waiting for a one-minute stack cost ~180 transitions, more than everything else
// an instantiate does; a small function waiting a minute costs a fraction of that, and polls far
// more often, so the operation also ends sooner after the VIM is done.
import type { StepResult } from './step.ts';
import { pollIntervalMs } from './step.ts';

/** At most this long polling in one invocation; the function's timeout leaves room for a slow last poll. */
export const POLL_LOOP_MS = 300_000;
/** A new poll starts only with at least this long left before the function's timeout (a poll may run a script). */
export const POLL_RESERVE_MS = 180_000;

export interface PollLoopOptions {
  /** The invocation's remaining time (Lambda's context.getRemainingTimeInMillis). */
  remainingMs: () => number;
  /** How the loop waits between polls, and what time it is (tests hand in their own clock). */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `poll` (one poll step, given the number of polls so far) until it is not IN_PROGRESS or the
 * loop's time is up; then the state machine's Wait state takes over until the result's waitUntil.
 * A failed poll throws, as a single poll would.
 */
export async function pollUntilSettled(poll: (polls: number) => Promise<StepResult>, polls: number, options: PollLoopOptions): Promise<StepResult> {
  const sleep = options.sleep ?? realSleep;
  const now = options.now ?? Date.now;
  const until = now() + POLL_LOOP_MS;
  let result = await poll(polls);
  while (result.status === 'IN_PROGRESS') {
    const count = result.polls ?? polls;
    // A step may ask for a later poll than the back-off (an EM's Retry-After, lib/lcm/coordination.ts).
    const wait = Math.max(pollIntervalMs(count), Date.parse(result.waitUntil) - Date.now());
    if (now() + wait > until || options.remainingMs() - wait < POLL_RESERVE_MS) break;
    await sleep(wait);
    result = await poll(count);
  }
  return result;
}

// Test support: drives a VIM driver's poll step to an end against a simulator, letting the
// simulator finish its queued work between polls (an event, never a sleep).
import type { DriverState, Progress } from '#lib/vim/driver.ts';

/** Polls until the step is no longer in progress, or `maxPolls` polls have not ended it. */
export async function pollToEnd(
  poll: (state: DriverState) => Promise<Progress>,
  state: DriverState,
  settled: () => Promise<unknown>,
  maxPolls = 30,
): Promise<Progress> {
  let progress: Progress = { status: 'IN_PROGRESS', state };
  for (let polls = 0; polls < maxPolls && progress.status === 'IN_PROGRESS'; polls += 1) {
    progress = await poll(progress.state);
    if (progress.status === 'IN_PROGRESS') await settled();
  }
  return progress;
}

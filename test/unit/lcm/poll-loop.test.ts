// Polling the VIM within one invocation (lib/lcm/engine/poll-loop.ts): the loop polls at the
// back-off intervals until the work is done or failed, and hands back to the state machine's Wait
// before the invocation's time or the loop's own limit runs out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { POLL_LOOP_MS, POLL_RESERVE_MS, pollUntilSettled } from '#lib/lcm/engine/poll-loop.ts';
import { pollIntervalMs, polled, type StepResult } from '#lib/lcm/engine/step.ts';

/** A clock the loop's sleeps move, and a poll that is IN_PROGRESS until poll number `doneAt`. */
function harness(doneAt: number, remainingAtStart = 900_000) {
  let clock = 0;
  const sleeps: number[] = [];
  const calls: number[] = [];
  const poll = async (polls: number): Promise<StepResult> => {
    calls.push(polls);
    return polled(polls, polls + 1 >= doneAt ? 'DONE' : 'IN_PROGRESS');
  };
  const options = {
    now: () => clock,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      clock += ms;
    },
    remainingMs: () => remainingAtStart - clock,
  };
  return { poll, options, sleeps, calls, elapsed: () => clock };
}

test('polls again at the back-off intervals until the VIM work is done, in one invocation', async () => {
  const h = harness(105);
  const result = await pollUntilSettled(h.poll, 0, h.options);
  assert.equal(result.status, 'DONE');
  assert.equal(h.calls.length, 105);
  assert.deepEqual(h.calls.slice(0, 3), [0, 1, 2], 'each poll is told how many came before');
  assert.deepEqual(h.sleeps.slice(0, 99), Array(99).fill(50), 'every 50 ms for the first 100 polls (5 s)');
  assert.deepEqual(h.sleeps.slice(99), Array(5).fill(500), 'then every 500 ms');
});

test('a poll that fails ends the loop with its error', async () => {
  let n = 0;
  const failing = async (polls: number): Promise<StepResult> => {
    n += 1;
    if (n === 3) throw new Error('stack CREATE_FAILED');
    return polled(polls, 'IN_PROGRESS');
  };
  await assert.rejects(pollUntilSettled(failing, 0, harness(99).options), /CREATE_FAILED/);
  assert.equal(n, 3);
});

test("hands back to the state machine's Wait, still in progress, when the loop's own limit is reached", async () => {
  const h = harness(Number.POSITIVE_INFINITY);
  const result = await pollUntilSettled(h.poll, 0, h.options);
  assert.equal(result.status, 'IN_PROGRESS');
  assert.ok(h.elapsed() <= POLL_LOOP_MS, 'never past the limit');
  assert.ok(h.elapsed() > POLL_LOOP_MS - pollIntervalMs(1000), 'but close to it');
  assert.equal(result.polls, h.calls.length, 'the next invocation goes on counting');
});

test('starts no poll without enough of the invocation left for a slow one', async () => {
  const h = harness(Number.POSITIVE_INFINITY, POLL_RESERVE_MS + 1000);
  const result = await pollUntilSettled(h.poll, 0, h.options);
  assert.equal(result.status, 'IN_PROGRESS');
  assert.ok(h.options.remainingMs() >= POLL_RESERVE_MS, 'the reserve is kept');
  assert.equal(h.calls.length, 1 + Math.floor(1000 / pollIntervalMs(0)));
});

test('a later invocation resumes at the back-off the earlier one reached', async () => {
  const h = harness(Number.POSITIVE_INFINITY);
  await pollUntilSettled(h.poll, 350, { ...h.options, remainingMs: () => POLL_RESERVE_MS + 4000 - h.elapsed() });
  assert.deepEqual(h.sleeps, [2000, 2000], 'after 300 polls, every 2 s');
});

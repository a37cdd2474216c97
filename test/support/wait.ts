// Waiting for an event in tests: a bounded poll of a condition, never a sleep standing in for one.
import assert from 'node:assert/strict';

/** Re-checks a condition until it holds; the limit only turns a hang into a failure. */
export async function waitFor(what: string, condition: () => boolean | Promise<boolean>, limitMs = 20_000): Promise<void> {
  const giveUp = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > giveUp) assert.fail(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

// The local issuer's secret checks: every check is one full hash, whether the client id exists or
// not (so the answer's time tells nothing), and no more than the cap run at once, the rest waiting
// in a bounded queue and refused beyond it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { concurrencyLimit, hashSecret, HashingBusyError, secretVerifier, type ScryptFunction } from '#lib/auth/secret-hash.ts';
import { scryptSync } from 'node:crypto';

/** The real scrypt, counting its calls and the parameters it was given. */
function countingScrypt() {
  const calls: Array<{ saltBytes: number; length: number }> = [];
  const scrypt: ScryptFunction = async (secret, salt, length) => {
    calls.push({ saltBytes: salt.length, length });
    return scryptSync(secret, salt, length);
  };
  return { calls, scrypt };
}

describe('secretVerifier', () => {
  const stored = hashSecret('right');

  it('matches the right secret only', async () => {
    const verifier = secretVerifier();
    assert.equal(await verifier.matches('right', stored), true);
    assert.equal(await verifier.matches('wrong', stored), false);
  });

  it('does the same full hash for an unknown client id, a malformed stored hash and a known one', async () => {
    const { calls, scrypt } = countingScrypt();
    const verifier = secretVerifier({ scrypt });
    assert.equal(await verifier.matches('wrong', stored), false);
    assert.equal(await verifier.matches('wrong', undefined), false);
    assert.equal(await verifier.matches('', 'scrypt$$'), false);
    assert.equal(calls.length, 3);
    assert.deepEqual(calls[1], calls[0]);
    assert.deepEqual(calls[2], calls[0]);
    assert.deepEqual(calls[0], { saltBytes: 16, length: 32 });
  });
});

describe('concurrencyLimit', () => {
  it('runs at most `running` tasks at once, queues `waiting` more and refuses the rest', async () => {
    const limited = concurrencyLimit(2, 3);
    let active = 0;
    let most = 0;
    const releases: Array<() => void> = [];
    const task = () =>
      limited(async () => {
        active += 1;
        most = Math.max(most, active);
        await new Promise<void>((resolve) => releases.push(resolve));
        active -= 1;
      });
    const accepted = Array.from({ length: 5 }, task);
    await assert.rejects(task(), HashingBusyError);
    assert.equal(releases.length, 2);
    // Each release lets one queued task start, which then waits for its own release.
    while (releases.length) {
      releases.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(accepted);
    assert.equal(most, 2);
  });
});

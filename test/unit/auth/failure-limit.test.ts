// Failed authentications per client id and source address: refused after the limit until the
// window ends, successes never counted, one client's failures not locking out another, and the
// counters bounded.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { clientFailureLimiter, FailureLimiter } from '#lib/auth/failure-limit.ts';

describe('clientFailureLimiter', () => {
  it('refuses a client id after its limit, until its window ends', () => {
    const limiter = clientFailureLimiter({ maxFailures: 3, windowMs: 60_000 });
    for (let i = 0; i < 3; i += 1) {
      assert.equal(limiter.retryAfterSeconds('a', '10.0.0.1', 1000), 0);
      limiter.fail('a', '10.0.0.1', 1000);
    }
    assert.equal(limiter.retryAfterSeconds('a', '10.0.0.2', 1000), 60);
    assert.equal(limiter.retryAfterSeconds('a', '10.0.0.2', 31_000), 30);
    assert.equal(limiter.retryAfterSeconds('b', '10.0.0.1', 1000), 0, 'another client from the same address');
    assert.equal(limiter.retryAfterSeconds('a', '10.0.0.1', 61_000), 0, 'a new window');
  });

  it('refuses a source address after five times the limit, whatever client id it names', () => {
    const limiter = clientFailureLimiter({ maxFailures: 2, windowMs: 60_000 });
    for (let i = 0; i < 10; i += 1) limiter.fail(`guess-${i}`, '10.0.0.9', 0);
    assert.ok(limiter.retryAfterSeconds('someone-else', '10.0.0.9', 0) > 0);
    assert.equal(limiter.retryAfterSeconds('someone-else', '10.0.0.8', 0), 0);
  });
});

describe('FailureLimiter', () => {
  it('keeps at most maxKeys counters, dropping the oldest', () => {
    const limiter = new FailureLimiter({ maxFailures: 1, windowMs: 60_000, maxKeys: 3 });
    for (const key of ['k1', 'k2', 'k3', 'k4']) limiter.fail([key], 0);
    assert.equal(limiter.retryAfterSeconds([['k1', 1]], 0), 0, 'k1 was dropped');
    assert.ok(limiter.retryAfterSeconds([['k4', 1]], 0) > 0);
    assert.ok(limiter.retryAfterSeconds([['k2', 1]], 0) > 0);
  });
});

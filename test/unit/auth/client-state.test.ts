// Which tokens a client's recorded state refuses: all of a deleted client's, those issued before
// a secret rotation's notBefore, none of an unchanged client's.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { revocationReason, rotatedNotBefore } from '#lib/auth/client-state.ts';

describe('revocationReason', () => {
  it('accepts any token of a client with no recorded change', () => {
    assert.equal(revocationReason({ clientId: 'c' }, 100), undefined);
  });

  it('refuses tokens issued before a rotation, and accepts those from its second on', () => {
    const state = { clientId: 'c', notBefore: 1000 };
    assert.match(revocationReason(state, 999) ?? '', /rotated/);
    assert.match(revocationReason(state, undefined) ?? '', /rotated/);
    assert.equal(revocationReason(state, 1000), undefined);
  });

  it('refuses every token of a deleted client', () => {
    assert.match(revocationReason({ clientId: 'c', deleted: true }, 5000) ?? '', /deleted/);
  });
});

describe('rotatedNotBefore', () => {
  const now = Date.parse('2026-12-02T12:00:00.400Z');
  const second = Math.floor(now / 1000);

  it('starts at the next whole second', () => {
    assert.equal(rotatedNotBefore(undefined, now), second + 1);
    assert.equal(rotatedNotBefore(second - 60, now), second + 1);
  });

  it('always passes the previous notBefore: a token of the old secret dated at it is refused, even in the same second', () => {
    // A client created (or rotated) in this second has notBefore second + 1, and its tokens are dated no earlier.
    const next = rotatedNotBefore(second + 1, now);
    assert.equal(next, second + 2);
    assert.match(revocationReason({ clientId: 'c', notBefore: next }, second + 1) ?? '', /rotated/);
  });
});

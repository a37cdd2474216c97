// Which tokens a client's recorded state refuses: all of a deleted client's, those issued before
// a secret rotation's notBefore, none of an unchanged client's.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { revocationReason } from '#lib/auth/client-state.ts';

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

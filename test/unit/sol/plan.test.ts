// Which filters the listing planner reads through an index, and that anything it cannot narrow
// safely is read as today (the whole collection in scope).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseFilter } from '#lib/sol/filter.ts';
import { planListing } from '#lib/sol/plan.ts';

const INDEXES = { vnfInstanceId: 'byVnfInstance', operationState: 'byState' };
const plan = (raw?: string) => planListing(raw === undefined ? undefined : parseFilter(raw), INDEXES);

describe('the listing planner', () => {
  it('reads through the index of an attribute pinned by eq, keeping the whole filter as residual', () => {
    const filter = parseFilter('(eq,operation,SCALE);(eq,vnfInstanceId,abc)');
    assert.deepEqual(planListing(filter, INDEXES), { kind: 'index', index: 'byVnfInstance', attribute: 'vnfInstanceId', keyValue: 'abc', residual: filter });
  });

  it('takes the first indexed conjunct and accepts in with one value', () => {
    assert.equal((plan('(eq,operationState,FAILED_TEMP);(eq,vnfInstanceId,x)') as { index: string }).index, 'byState');
    assert.deepEqual(
      { ...plan('(in,vnfInstanceId,x)'), residual: undefined },
      {
        kind: 'index',
        index: 'byVnfInstance',
        attribute: 'vnfInstanceId',
        keyValue: 'x',
        residual: undefined,
      },
    );
  });

  it('reads through the index a value as long as a key can be', () => {
    assert.equal(plan(`(eq,vnfInstanceId,${'x'.repeat(2048)})`).kind, 'index');
  });

  it('keeps a quoted value exactly as the filter compares it', () => {
    assert.equal((plan("(eq,vnfInstanceId,'a,b''c')") as { keyValue: string }).keyValue, "a,b'c");
  });

  it('scans when nothing can narrow the read', () => {
    assert.deepEqual(plan(), { kind: 'scan' });
    for (const raw of [
      '(neq,vnfInstanceId,x)',
      '(cont,vnfInstanceId,x)',
      '(nin,vnfInstanceId,x)',
      '(gte,vnfInstanceId,x)',
      '(eq,vnfInstanceId,x,y)',
      '(in,vnfInstanceId,x,y)',
      '(eq,vnfInstanceId/id,x)',
      '(eq,operation,SCALE)',
      '(eq,id,x);(neq,operationState,FAILED)',
      "(eq,vnfInstanceId,'')",
      `(eq,vnfInstanceId,${'é'.repeat(1025)})`,
    ]) {
      assert.equal(plan(raw).kind, 'scan', raw);
      assert.deepEqual(plan(raw).residual, parseFilter(raw), raw);
    }
  });

  it('scans when the resource declares no index', () => {
    assert.equal(planListing(parseFilter('(eq,vnfInstanceId,x)'), {}).kind, 'scan');
    assert.equal(planListing(parseFilter('(eq,toString,x)'), {}).kind, 'scan', 'an inherited property is not an index');
  });
});

// Which filters the listing planner reads through an index, and that anything it cannot narrow
// safely is read as today (the whole collection in scope).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseFilter } from '#lib/sol/filter.ts';
import { MAX_INDEX_VALUES, planListing, type ListIndexes } from '#lib/sol/plan.ts';

// Most selective first: the instance's history, then the tenant-scoped state index.
const INDEXES: ListIndexes = { vnfInstanceId: 'byVnfInstance', operationState: { index: 'byState', tenantScoped: true } };
const plan = (raw?: string) => planListing(raw === undefined ? undefined : parseFilter(raw), INDEXES);

describe('the listing planner', () => {
  it('reads through the index of an attribute pinned by eq, keeping the whole filter as residual', () => {
    const filter = parseFilter('(eq,operation,SCALE);(eq,vnfInstanceId,abc)');
    assert.deepEqual(planListing(filter, INDEXES), { kind: 'index', index: 'byVnfInstance', attribute: 'vnfInstanceId', keyValues: ['abc'], residual: filter });
  });

  it('prefers the index listed first, whatever the order of the conjuncts, and accepts in with one value', () => {
    assert.equal((plan('(eq,operationState,FAILED_TEMP);(eq,vnfInstanceId,x)') as { index: string }).index, 'byVnfInstance');
    assert.equal((plan('(eq,operationState,FAILED_TEMP);(neq,vnfInstanceId,x)') as { index: string }).index, 'byState');
    assert.deepEqual(
      { ...plan('(in,vnfInstanceId,x)'), residual: undefined },
      { kind: 'index', index: 'byVnfInstance', attribute: 'vnfInstanceId', keyValues: ['x'], residual: undefined },
    );
  });

  it('reads the partitions of several values (in, or eq with several) together, each value once', () => {
    assert.deepEqual((plan('(in,operationState,FAILED_TEMP,PROCESSING,FAILED_TEMP)') as { keyValues: readonly string[] }).keyValues, [
      'FAILED_TEMP',
      'PROCESSING',
    ]);
    assert.deepEqual((plan('(eq,vnfInstanceId,x,y)') as { keyValues: readonly string[] }).keyValues, ['x', 'y']);
    const many = Array.from({ length: MAX_INDEX_VALUES + 1 }, (_, i) => `v${i}`).join(',');
    assert.equal(plan(`(in,vnfInstanceId,${many})`).kind, 'scan');
  });

  it('reads a tenant-scoped index only for one tenant, not for a list of every tenant', () => {
    const filter = parseFilter('(eq,operationState,FAILED_TEMP)');
    assert.equal(planListing(filter, INDEXES).kind, 'index');
    assert.equal(planListing(filter, INDEXES, { allTenants: true }).kind, 'scan');
    assert.equal(planListing(parseFilter('(eq,vnfInstanceId,x)'), INDEXES, { allTenants: true }).kind, 'index');
  });

  it('reads through the index a value as long as a key can be', () => {
    assert.equal(plan(`(eq,vnfInstanceId,${'x'.repeat(2048)})`).kind, 'index');
    assert.equal(plan(`(eq,operationState,${'x'.repeat(1024)})`).kind, 'index');
    assert.equal(plan(`(eq,operationState,${'x'.repeat(1025)})`).kind, 'scan', 'a tenant-scoped key holds the tenant and shard too');
  });

  it('keeps a quoted value exactly as the filter compares it', () => {
    assert.deepEqual((plan("(eq,vnfInstanceId,'a,b''c')") as { keyValues: readonly string[] }).keyValues, ["a,b'c"]);
  });

  it('scans when nothing can narrow the read', () => {
    assert.deepEqual(plan(), { kind: 'scan' });
    for (const raw of [
      '(neq,vnfInstanceId,x)',
      '(cont,vnfInstanceId,x)',
      '(nin,vnfInstanceId,x)',
      '(gte,vnfInstanceId,x)',
      '(eq,vnfInstanceId/id,x)',
      '(eq,operation,SCALE)',
      '(eq,id,x);(neq,operationState,FAILED)',
      "(eq,vnfInstanceId,'')",
      "(in,vnfInstanceId,x,'')",
      `(eq,vnfInstanceId,${'é'.repeat(1025)})`,
    ]) {
      assert.equal(plan(raw).kind, 'scan', raw);
      assert.deepEqual(plan(raw).residual, parseFilter(raw), raw);
    }
  });

  it('reads through the index of a nested attribute named by its path, and only that path', () => {
    const nested: ListIndexes = { 'filter/vnfInstanceSubscriptionFilter/vnfInstanceIds': { index: 'byVnfInstance', tenantScoped: true } };
    const filter = parseFilter('(eq,verbosity,FULL);(in,filter/vnfInstanceSubscriptionFilter/vnfInstanceIds,a,b)');
    assert.deepEqual(planListing(filter, nested), {
      kind: 'index',
      index: 'byVnfInstance',
      attribute: 'filter/vnfInstanceSubscriptionFilter/vnfInstanceIds',
      keyValues: ['a', 'b'],
      residual: filter,
    });
    for (const raw of ['(eq,filter/vnfInstanceSubscriptionFilter,a)', '(eq,filter/vnfInstanceSubscriptionFilter/vnfInstanceNames,a)', '(eq,filter,a)']) {
      assert.equal(planListing(parseFilter(raw), nested).kind, 'scan', raw);
    }
    assert.equal(planListing(filter, nested, { allTenants: true }).kind, 'scan');
  });

  it('scans when the resource declares no index', () => {
    assert.equal(planListing(parseFilter('(eq,vnfInstanceId,x)'), {}).kind, 'scan');
    assert.equal(planListing(parseFilter('(eq,toString,x)'), {}).kind, 'scan', 'an inherited property is not an index');
  });
});

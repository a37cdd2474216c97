// A filtered op occ list read through an index shows exactly what the same list read the old way
// (the whole collection in scope, filtered) shows, in the same order, on the local DynamoDB with
// the template's table: random op occs of several tenants and instances, random filters that pin
// an instance plus random further conditions, random page sizes followed marker after marker. A
// marker issued by one way of reading is refused by the other.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CoreDeps } from '#lib/ports.ts';
import { NotifyingOpOccStore } from '#lib/lcm/notifications.ts';
import { listOpOccs } from '#lib/lcm/op-occs.ts';
import { BadRequestError } from '#lib/sol/errors.ts';
import { matchesFilter, parseFilter } from '#lib/sol/filter.ts';
import { listCollection, type CollectionSpec } from '#lib/sol/listing.ts';
import { renderVnfLcmOpOcc, type VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import { ALL_TENANTS, MARKER_PARAMETER, type TenantScope } from '#lib/sol/paging.ts';
import type { ListPlan } from '#lib/sol/plan.ts';
import { DynamoVnfLcmOpOccStore, opOccListKey, type VnfLcmOpOccStore } from '#lib/store/op-occs.ts';
import { startTemplateTables } from '../support/template-tables.ts';

const BASE = 'http://vnfm.test';
const TENANTS = ['tenant-a', 'tenant-b', 'tenant-c'];
const OPERATIONS = ['INSTANTIATE', 'SCALE', 'HEAL', 'TERMINATE', 'OPERATE'];
const STATES = ['STARTING', 'PROCESSING', 'COMPLETED', 'FAILED_TEMP', 'FAILED', 'ROLLED_BACK'];

/** mulberry32: the same sequence every run. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = prng(22);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));

// Instance ids are generated per tenant; a few times are shared so that start times tie.
const instances = TENANTS.flatMap((tenantId, t) => Array.from({ length: 4 }, (_, i) => ({ tenantId, id: `vnf-${t}-${i}` })));
const startTimes = Array.from({ length: 40 }, (_, i) => `2026-12-02T10:${String(i).padStart(2, '0')}:00.000Z`);
const records: VnfLcmOpOccRecord[] = Array.from({ length: 300 }, (_, n) => {
  const instance = pick(instances);
  const startTime = pick(startTimes);
  const id = `op-${String(n).padStart(4, '0')}-${Math.floor(random() * 1e6)}`;
  return {
    id,
    tenantId: instance.tenantId,
    vnfInstanceId: instance.id,
    operation: pick(OPERATIONS),
    operationState: pick(STATES),
    stateEnteredTime: startTime,
    startTime,
    startSeq: `${startTime}#${id}`,
    isAutomaticInvocation: random() < 0.3,
    isCancelPending: false,
    apiMajorVersion: 2,
    revision: 1,
  } as unknown as VnfLcmOpOccRecord;
});

const residuals = [
  () => `(eq,operationState,${pick(STATES)})`,
  () => `(neq,operation,${pick(OPERATIONS)})`,
  () => `(in,operation,${pick(OPERATIONS)},${pick(OPERATIONS)})`,
  () => `(eq,isAutomaticInvocation,${random() < 0.5})`,
  () => `(gte,startTime,${pick(startTimes)})`,
  () => `(lt,startTime,${pick(startTimes)})`,
  () => `(cont,id,${between(0, 9)})`,
];

/** An instance filter (of any tenant's instance, or of none) with up to three further conditions, in random order. */
function randomFilter(): string {
  const pinned = random() < 0.1 ? 'vnf-none' : pick(instances).id;
  const parts = Array.from({ length: between(0, 3) }, () => pick(residuals)());
  parts.splice(between(0, parts.length), 0, `(${random() < 0.8 ? 'eq' : 'in'},vnfInstanceId,${pinned})`);
  return parts.join(';');
}

describe('op occ lists read through the instance index', () => {
  let stop: () => Promise<void>;
  let store: DynamoVnfLcmOpOccStore;
  const plans: ListPlan['kind'][] = [];

  before(async () => {
    stop = await startTemplateTables(['VnfLcmOpOccsTable']);
    store = new DynamoVnfLcmOpOccStore('VnfLcmOpOccsTable');
    for (const record of records) await store.create(record);
  });

  after(() => stop());

  /** The stores as the API has them: the notifying store around the DynamoDB one, which notes the plan it is asked to read by. */
  const deps = () => {
    const spied = {
      listPage: (scope: TenantScope, limit: number, after?: Record<string, string | number>, plan?: ListPlan) => {
        plans.push(plan?.kind ?? 'scan');
        return store.listPage(scope, limit, after, plan);
      },
    } as unknown as VnfLcmOpOccStore;
    return { opOccs: new NotifyingOpOccStore(spied, {} as never, {} as never, {} as never) } as unknown as CoreDeps;
  };

  /** The same list read the old way: no index declared. */
  const scanSpec = (scope: TenantScope): CollectionSpec<VnfLcmOpOccRecord> => ({
    resource: 'v2/vnf_lcm_op_occs',
    attributes: Object.keys(renderVnfLcmOpOcc(records[0] as VnfLcmOpOccRecord, 2, BASE)),
    defaultExcluded: [],
    alwaysIncluded: ['id', '_links'],
    scope,
    fetch: (s, limit, after) => store.listPage(s, limit, after),
    render: (record) => renderVnfLcmOpOcc(record, 2, BASE),
    keyOf: opOccListKey,
  });

  const callerOf = (scope: TenantScope) => (scope === ALL_TENANTS ? { tenantId: 'ops', admin: true } : { tenantId: scope });

  /** Every id of the list, page after page of random sizes; a repeat would show as a duplicate. */
  async function idsThroughIndex(scope: TenantScope, filter: string): Promise<string[]> {
    const ids: string[] = [];
    let query = new URLSearchParams({ filter }).toString();
    for (;;) {
      const page = await listOpOccs(deps(), callerOf(scope), 2, BASE, query, between(1, 12));
      ids.push(...page.items.map((item) => item.id as string));
      if (!page.marker) return ids;
      query = new URLSearchParams({ [MARKER_PARAMETER]: page.marker }).toString();
    }
  }

  async function idsByScan(scope: TenantScope, filter: string): Promise<string[]> {
    return (await listCollection(scanSpec(scope), new URLSearchParams({ filter }).toString(), 10_000)).items.map((item) => item.id as string);
  }

  const expected = (scope: TenantScope, filter: string) =>
    records
      .filter((r) => (scope === ALL_TENANTS || r.tenantId === scope) && matchesFilter(parseFilter(filter), renderVnfLcmOpOcc(r, 2, BASE)))
      .sort((a, b) => (a.startSeq < b.startSeq ? -1 : 1))
      .map((r) => r.id);

  it("shows a tenant exactly its scan's items in the same order, page after page, never another tenant's", async () => {
    let matched = 0;
    for (let round = 0; round < 60; round++) {
      const scope = pick(TENANTS);
      const filter = randomFilter();
      plans.length = 0;
      const viaIndex = await idsThroughIndex(scope, filter);
      assert.deepEqual(new Set(plans), new Set(['index']), filter);
      assert.deepEqual(viaIndex, await idsByScan(scope, filter), `${scope} ${filter}`);
      assert.deepEqual(viaIndex, expected(scope, filter), `${scope} ${filter}`);
      matched += viaIndex.length;
    }
    assert.ok(matched > 60, `the filters matched something (${matched} items)`);
  });

  it("shows an admin every tenant's matching items, in start order", async () => {
    for (let round = 0; round < 20; round++) {
      const filter = randomFilter();
      const viaIndex = await idsThroughIndex(ALL_TENANTS, filter);
      assert.deepEqual(viaIndex, expected(ALL_TENANTS, filter), filter);
      assert.deepEqual([...viaIndex].sort(), (await idsByScan(ALL_TENANTS, filter)).sort(), filter);
    }
  });

  it('refuses a marker issued by the other way of reading the same list', async () => {
    const instance = instances.find((i) => records.filter((r) => r.vnfInstanceId === i.id).length > 2) ?? (instances[0] as { id: string; tenantId: string });
    const query = new URLSearchParams({ filter: `(eq,vnfInstanceId,${instance.id})` }).toString();
    const indexed = await listOpOccs(deps(), callerOf(instance.tenantId), 2, BASE, query, 1);
    const scanned = await listCollection(scanSpec(instance.tenantId), query, 1);
    assert.ok(indexed.marker && scanned.marker);
    const withMarker = (marker: string) => new URLSearchParams({ [MARKER_PARAMETER]: marker }).toString();
    await assert.rejects(listCollection(scanSpec(instance.tenantId), withMarker(indexed.marker), 1), BadRequestError);
    await assert.rejects(listOpOccs(deps(), callerOf(instance.tenantId), 2, BASE, withMarker(scanned.marker), 1), BadRequestError);
    // Each still resumes its own list.
    assert.equal((await listOpOccs(deps(), callerOf(instance.tenantId), 2, BASE, withMarker(indexed.marker), 1)).items.length, 1);
  });
});

// A filtered op occ (or VNF instance, alarm, VNF package) list read through an index shows exactly
// what the same list read the old way (the whole collection in scope, filtered) shows, in the same
// order, on the local DynamoDB with the template's tables: random records of several tenants,
// random filters that pin an indexed attribute (an instance, a state, an operation; a VNFD, a name,
// a product, a provider, an instantiation state; a package's VNFD, onboarding or operational
// state) by eq or by in with several values, plus random further conditions, random page sizes
// followed marker after marker (so a skipped or repeated item would show), and again after writes
// that move records between index keys. A marker issued by one way of reading is refused by the
// other. Subscriptions are listed by the instances their filter names (an array: a subscription
// naming several, or none, is read with every such list), and the notifier's read of the
// subscriptions a change of one instance can match finds each one that matches.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CoreDeps } from '#lib/ports.ts';
import { NotifyingInstanceStore, NotifyingOpOccStore } from '#lib/lcm/notifications.ts';
import { listVnfInstances } from '#lib/lcm/vnf-instances.ts';
import { listOpOccs } from '#lib/lcm/op-occs.ts';
import { BadRequestError } from '#lib/sol/errors.ts';
import { matchesFilter, parseFilter } from '#lib/sol/filter.ts';
import { planListing } from '#lib/sol/plan.ts';
import { listCollection, type CollectionSpec, type ListResult } from '#lib/sol/listing.ts';
import { renderVnfInstance, renderVnfLcmOpOcc, type VnfInstanceRecord, type VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import { ALL_TENANTS, MARKER_PARAMETER, type Page, type TenantScope } from '#lib/sol/paging.ts';
import type { ListPlan } from '#lib/sol/plan.ts';
import { DynamoVnfLcmOpOccStore, OP_OCC_LIST_INDEXES, opOccListKey, type VnfLcmOpOccStore } from '#lib/store/op-occs.ts';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, shardKey, shardOf, tenantPage } from '#lib/store/dynamo.ts';
import { ALARM_LIST_INDEXES, DynamoAlarmStore, type AlarmRecord } from '#lib/store/alarms.ts';
import { listAlarms } from '#lib/fm/alarms.ts';
import { renderAlarm } from '#lib/fm/model.ts';
import type { FmDeps } from '#lib/fm/ports.ts';
import {
  backfillVnfInstanceListKeys,
  DynamoVnfInstanceStore,
  VNF_INSTANCE_LIST_INDEXES,
  vnfInstanceListKey,
  type VnfInstanceStore,
} from '#lib/store/vnf-instances.ts';
import { listPackages } from '#lib/packages/service.ts';
import { renderVnfPkgInfo } from '#lib/packages/model.ts';
import {
  backfillVnfPackageListKeys,
  DynamoVnfPackageStore,
  VNF_PACKAGE_LIST_INDEXES,
  type OnboardingState,
  type VnfPackageRecord,
} from '#lib/store/packages.ts';
import { listSubscriptions } from '#lib/lcm/subscriptions.ts';
import { renderSubscription, type SubscriptionRecord } from '#lib/lcm/notifications.ts';
import { ANY_INSTANCE, DynamoSubscriptionStore, keySubscriptions, SUBSCRIBED_INSTANCE_PATH, SUBSCRIPTION_LIST_INDEXES } from '#lib/store/subscriptions.ts';
import { startTemplateTables } from '../support/template-tables.ts';
import { prng } from '../../support/prng.ts';

const BASE = 'http://vnfm.test';
const TENANTS = ['tenant-a', 'tenant-b', 'tenant-c'];
const OPERATIONS = ['INSTANTIATE', 'SCALE', 'HEAL', 'TERMINATE', 'OPERATE'];
const STATES = ['STARTING', 'PROCESSING', 'COMPLETED', 'FAILED_TEMP', 'FAILED', 'ROLLED_BACK'];

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

/** `(eq,attr,v)` or `(in,attr,v1,v2,...)` with values drawn by `value`. */
function pin(attribute: string, value: () => string): string {
  if (random() < 0.6) return `(eq,${attribute},${value()})`;
  return `(in,${attribute},${Array.from({ length: between(1, 3) }, value).join(',')})`;
}

/** An instance, state or operation filter (values of any tenant's records, or of none) with up to three further conditions, in random order. */
function randomFilter(): string {
  const pinned = pick([
    () => pin('vnfInstanceId', () => (random() < 0.1 ? pick(['vnf-none', "''"]) : pick(instances).id)),
    () => pin('operationState', () => (random() < 0.1 ? 'NO_SUCH_STATE' : pick(STATES))),
    () => pin('operation', () => pick(OPERATIONS)),
  ])();
  const parts = Array.from({ length: between(0, 3) }, () => pick(residuals)());
  parts.splice(between(0, parts.length), 0, pinned);
  return parts.join(';');
}

/** Every item of a list from `first` on, page after page of random sizes, following the markers; a repeat would show as a duplicate. */
async function allPages(list: (query: string, pageSize: number) => Promise<ListResult>, first: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let query = first;
  for (;;) {
    const page = await list(query, between(1, 12));
    items.push(...page.items);
    if (!page.marker) return items;
    query = new URLSearchParams({ [MARKER_PARAMETER]: page.marker }).toString();
  }
}

/** Every id of the filtered list (allPages). */
async function everyPage(filter: string, list: (query: string, pageSize: number) => Promise<ListResult>): Promise<string[]> {
  return (await allPages(list, new URLSearchParams({ filter }).toString())).map((item) => item.id as string);
}

let stop: () => Promise<void>;
before(async () => {
  stop = await startTemplateTables(['VnfLcmOpOccsTable', 'VnfInstancesTable', 'AlarmsTable', 'VnfPackagesTable', 'SubscriptionsTable']);
});
after(() => stop());

type ListPage<R> = (scope: TenantScope, limit: number, after?: Record<string, string | number>, plan?: ListPlan) => Promise<Page<R>>;

/** A store that only lists, through `listPage`, noting the kind of plan it is asked to read by. */
function notingPlans<R>(listPage: ListPage<R>, plans: ListPlan['kind'][]): { listPage: ListPage<R> } {
  return {
    listPage: (scope, limit, after, plan) => {
      plans.push(plan?.kind ?? 'scan');
      return listPage(scope, limit, after, plan);
    },
  };
}

const callerOf = (scope: TenantScope) => (scope === ALL_TENANTS ? { tenantId: 'ops', admin: true } : { tenantId: scope });

describe('op occ lists read through the instance index', () => {
  let store: DynamoVnfLcmOpOccStore;
  const plans: ListPlan['kind'][] = [];

  before(async () => {
    store = new DynamoVnfLcmOpOccStore('VnfLcmOpOccsTable');
    for (const record of records) await store.create(record);
  });

  /** A third of the op occs move to another state through the store's transition, as the LCM moves them. */
  async function moveSomeOpOccs(): Promise<void> {
    for (const record of records.filter((_, n) => n % 3 === 0)) {
      const to = pick(STATES) as VnfLcmOpOccRecord['operationState'];
      const moved = await store.transition(record.id, { from: [record.operationState], to, now: record.startTime });
      assert.ok(moved, record.id);
      Object.assign(record, { operationState: to });
    }
  }

  /** The stores as the API has them: the notifying store around the DynamoDB one, which notes the plan it is asked to read by. */
  const deps = () => {
    const spied = notingPlans((...args) => store.listPage(...args), plans) as VnfLcmOpOccStore;
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

  const idsThroughIndex = (scope: TenantScope, filter: string) =>
    everyPage(filter, (query, pageSize) => listOpOccs(deps(), callerOf(scope), 2, BASE, query, pageSize));

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
    let indexed = 0;
    for (let round = 0; round < 80; round++) {
      // Half-way, op occs change state (moving in the state index) as the LCM moves them.
      if (round === 40) await moveSomeOpOccs();
      const scope = pick(TENANTS);
      const filter = randomFilter();
      plans.length = 0;
      const viaIndex = await idsThroughIndex(scope, filter);
      // An empty value cannot be a key: a list pinned only by one is read whole.
      const planned = planListing(parseFilter(filter), OP_OCC_LIST_INDEXES).kind;
      assert.deepEqual(new Set(plans), new Set([planned]), filter);
      indexed += planned === 'index' ? 1 : 0;
      assert.deepEqual(viaIndex, await idsByScan(scope, filter), `${scope} ${filter}`);
      assert.deepEqual(viaIndex, expected(scope, filter), `${scope} ${filter}`);
      matched += viaIndex.length;
    }
    assert.ok(matched > 60, `the filters matched something (${matched} items)`);
    assert.ok(indexed > 60, `most lists were read through an index (${indexed} of 80)`);
  });

  it("shows an admin every tenant's matching items, in start order when read through an index", async () => {
    for (let round = 0; round < 20; round++) {
      const filter = randomFilter();
      const viaIndex = await idsThroughIndex(ALL_TENANTS, filter);
      // The tenant-scoped indexes serve no all-tenant list: that is a scan, in no particular order.
      const ordered = planListing(parseFilter(filter), OP_OCC_LIST_INDEXES, { allTenants: true }).kind === 'index';
      if (ordered) assert.deepEqual(viaIndex, expected(ALL_TENANTS, filter), filter);
      else assert.deepEqual([...viaIndex].sort(), expected(ALL_TENANTS, filter).sort(), filter);
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

// VNFDs shared by tenants (each onboarded its own package of it), so the index holds other tenants' instances too.
const PROVIDERS = ['acme', 'globex'];
const VNFDS = ['vnfd-1', 'vnfd-2', 'vnfd-3', 'vnfd-4', 'vnfd-5'];
const vnfInstances: VnfInstanceRecord[] = Array.from({ length: 150 }, (_, n) => {
  const createdAt = pick(startTimes);
  const id = `vnf-${String(n).padStart(4, '0')}-${Math.floor(random() * 1e6)}`;
  return {
    id,
    tenantId: pick(TENANTS),
    createdAt,
    createdSeq: `${createdAt}#${id}`,
    vnfdId: pick(VNFDS),
    vnfProvider: pick(PROVIDERS),
    vnfProductName: pick(['fw', 'lb']),
    vnfSoftwareVersion: '1',
    vnfdVersion: '1',
    vnfPkgId: 'pkg',
    instantiationState: pick(['NOT_INSTANTIATED', 'INSTANTIATED']),
    vnfInstanceName: `name-${between(0, 9)}`,
    revision: 1,
    // Attributes a list shows by default or only when asked (none drawn: the draws above stay as they were).
    ...(n % 3 === 0 && { vnfInstanceDescription: `description ${n}`, metadata: { site: `site-${n % 5}` } }),
    ...(n % 4 === 0 && { vimConnectionInfo: { vim: { vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3', vimId: `vim-${n}` } }, extensions: { tier: n % 2 } }),
  } as unknown as VnfInstanceRecord;
});

const instanceResiduals = [
  () => `(eq,instantiationState,${pick(['NOT_INSTANTIATED', 'INSTANTIATED'])})`,
  () => `(neq,vnfProductName,${pick(['fw', 'lb'])})`,
  () => `(cont,vnfInstanceName,${between(0, 9)})`,
  () => `(in,vnfInstanceName,name-${between(0, 9)},name-${between(0, 9)})`,
];

function randomInstanceFilter(): string {
  const pinned = pick([
    () => pin('vnfdId', () => (random() < 0.1 ? 'vnfd-none' : pick(VNFDS))),
    () => pin('vnfInstanceName', () => `name-${between(0, 10)}`),
    () => pin('vnfProductName', () => pick(['fw', 'lb', 'none'])),
    () => pin('vnfProvider', () => pick(PROVIDERS)),
    () => pin('instantiationState', () => pick(['NOT_INSTANTIATED', 'INSTANTIATED'])),
  ])();
  const parts = Array.from({ length: between(0, 2) }, () => pick(instanceResiduals)());
  parts.splice(between(0, parts.length), 0, pinned);
  return parts.join(';');
}

describe('VNF instance lists read through their indexes', () => {
  let store: DynamoVnfInstanceStore;
  const plans: ListPlan['kind'][] = [];

  before(async () => {
    store = new DynamoVnfInstanceStore('VnfInstancesTable');
    for (const record of vnfInstances) await store.create(record);
  });

  /** A third of the instances change state and name (or lose it) under their lock, as LCM and modify-info write them. */
  async function changeSomeInstances(): Promise<void> {
    for (const record of vnfInstances.filter((_, n) => n % 3 === 1)) {
      const opOccId = `op-${record.id}`;
      assert.ok(await store.acquireLock(record.id, { opOccId, now: record.createdAt }));
      const state = record.instantiationState === 'INSTANTIATED' ? 'NOT_INSTANTIATED' : 'INSTANTIATED';
      const name = random() < 0.2 ? undefined : `name-${between(0, 10)}`;
      const update = { set: { instantiationState: state, ...(name && { vnfInstanceName: name }) }, remove: name ? [] : ['vnfInstanceName'] };
      assert.ok(await store.updateUnderLock(record.id, opOccId, update));
      await store.releaseLock(record.id, opOccId);
      Object.assign(record, { instantiationState: state, vnfInstanceName: name });
      if (!name) delete (record as { vnfInstanceName?: string }).vnfInstanceName;
    }
  }

  const deps = () => {
    const spied = notingPlans((...args) => store.listPage(...args), plans) as VnfInstanceStore;
    return { instances: new NotifyingInstanceStore(spied, {} as never, () => '', {} as never) } as unknown as CoreDeps;
  };

  const scanSpec = (scope: TenantScope): CollectionSpec<VnfInstanceRecord> => ({
    resource: 'v2/vnf_instances',
    attributes: ['id', 'vnfdId', 'instantiationState', 'vnfProductName', 'vnfInstanceName', 'vnfProvider'],
    defaultExcluded: [],
    alwaysIncluded: ['id', '_links'],
    scope,
    fetch: (s, limit, after) => store.listPage(s, limit, after),
    render: (record) => renderVnfInstance(record, 2, BASE),
    keyOf: vnfInstanceListKey,
  });

  const expected = (scope: TenantScope, filter: string) =>
    vnfInstances
      .filter((r) => (scope === ALL_TENANTS || r.tenantId === scope) && matchesFilter(parseFilter(filter), renderVnfInstance(r, 2, BASE)))
      .sort((a, b) => (a.createdSeq < b.createdSeq ? -1 : 1))
      .map((r) => r.id);

  it("shows a tenant exactly its scan's instances in the same order, and an admin every tenant's, page after page", async () => {
    let matched = 0;
    for (let round = 0; round < 80; round++) {
      if (round === 40) await changeSomeInstances();
      const scope = round % 5 === 4 ? ALL_TENANTS : pick(TENANTS);
      const filter = randomInstanceFilter();
      plans.length = 0;
      const viaIndex = await everyPage(filter, (query, pageSize) => listVnfInstances(deps(), callerOf(scope), 2, BASE, query, pageSize));
      // A tenant's list reads through an index; an admin's too when the VNFD pins it (the others are tenant-scoped).
      const planned = planListing(parseFilter(filter), VNF_INSTANCE_LIST_INDEXES, { allTenants: scope === ALL_TENANTS }).kind;
      assert.deepEqual(new Set(plans), new Set([planned]), filter);
      if (scope !== ALL_TENANTS) assert.equal(planned, 'index', filter);
      if (planned === 'index') assert.deepEqual(viaIndex, expected(scope, filter), `${String(scope)} ${filter}`);
      else assert.deepEqual([...viaIndex].sort(), expected(scope, filter).sort(), `${String(scope)} ${filter}`);
      const scanned = (await listCollection(scanSpec(scope), new URLSearchParams({ filter }).toString(), 10_000)).items.map((item) => item.id as string);
      assert.deepEqual(scope === ALL_TENANTS ? [...viaIndex].sort() : viaIndex, scope === ALL_TENANTS ? scanned.sort() : scanned, filter);
      matched += viaIndex.length;
    }
    assert.ok(matched > 50, `the filters matched something (${matched} instances)`);
  });
});

describe('VNF instance list pages read through the summary index', () => {
  let store: DynamoVnfInstanceStore;
  /** The lister's deps, reading through the store (and so through the summary index where it serves). */
  let viaStore: CoreDeps;
  before(() => {
    store = new DynamoVnfInstanceStore('VnfInstancesTable');
    viaStore = { instances: { listPage: (...args: Parameters<typeof store.listPage>) => store.listPage(...args) } } as unknown as CoreDeps;
  });

  it('reads a page that shows no more than SOL003 lists by default there, and shows what the whole records show', async () => {
    // The index each Query of the store names.
    const queried: string[] = [];
    const client = documentClient();
    client.middlewareStack.add(
      (next) => async (args) => {
        const index = (args.input as { IndexName?: string }).IndexName;
        if (index) queried.push(index);
        return next(args);
      },
      { step: 'initialize', name: 'notedIndexes' },
    );
    // The same pages from the whole records (byTenant), with the same attributes read.
    const viaWholeRecords = {
      instances: {
        listPage: (scope: TenantScope, limit: number, after?: Record<string, string | number>, _plan?: ListPlan, read?: readonly string[]) =>
          tenantPage('VnfInstancesTable', scope, limit, after, read),
      },
    } as unknown as CoreDeps;
    const cases: Array<[version: 1 | 2, query: string, index: string]> = [
      [2, '', 'byTenantSummary'],
      [1, '', 'byTenantSummary'],
      [2, 'filter=(cont,vnfInstanceName,1)', 'byTenantSummary'],
      [2, 'exclude_default', 'byTenantSummary'],
      [2, 'fields=metadata', 'byTenant'],
      [2, 'exclude_default&fields=vimConnectionInfo/vim', 'byTenant'],
      [2, 'exclude_fields=vnfProvider', 'byTenant'],
      [2, 'filter=(eq,metadata/site,site-1)', 'byTenant'],
      [1, 'all_fields', 'byTenant'],
    ];
    try {
      for (const tenantId of TENANTS) {
        for (const [version, query, index] of cases) {
          queried.length = 0;
          const shown = await allPages((q, size) => listVnfInstances(viaStore, { tenantId }, version, BASE, q, size), query);
          assert.deepEqual(new Set(queried), new Set([index]), `${tenantId} v${version} ${query}`);
          const whole = await allPages((q, size) => listVnfInstances(viaWholeRecords, { tenantId }, version, BASE, q, size), query);
          assert.deepEqual(shown, whole, `${tenantId} v${version} ${query}`);
          assert.ok(shown.length > 0, `${tenantId} has instances`);
          if (query === 'fields=metadata')
            assert.ok(
              shown.some((item) => item.metadata !== undefined),
              'the asked attribute is shown',
            );
        }
      }
      // An admin's list spans every tenant: a Scan of the table, which no index serves.
      queried.length = 0;
      await listVnfInstances(viaStore, callerOf(ALL_TENANTS), 2, BASE, '', 100);
      assert.deepEqual(queried, []);
    } finally {
      client.middlewareStack.remove('notedIndexes');
    }
  });

  it('reads the whole records while DynamoDB still fills the summary index, and fails on any other error', async () => {
    const client = documentClient();
    let refusal: { name: string; message: string } | undefined;
    client.middlewareStack.add(
      (next) => async (args) => {
        if (refusal && (args.input as { IndexName?: string }).IndexName === 'byTenantSummary')
          throw Object.assign(new Error(refusal.message), { name: refusal.name });
        return next(args);
      },
      { step: 'initialize', name: 'refusedSummary' },
    );
    try {
      const tenantId = pick(TENANTS);
      const shown = await allPages((q, size) => listVnfInstances(viaStore, { tenantId }, 2, BASE, q, size), '');
      refusal = { name: 'ValidationException', message: 'Cannot read from backfilling global secondary index: byTenantSummary' };
      assert.deepEqual(await allPages((q, size) => listVnfInstances(viaStore, { tenantId }, 2, BASE, q, size), ''), shown);
      refusal = { name: 'ProvisionedThroughputExceededException', message: 'byTenantSummary: rate exceeded' };
      await assert.rejects(listVnfInstances(viaStore, { tenantId }, 2, BASE, '', 10), { name: 'ProvisionedThroughputExceededException' });
    } finally {
      client.middlewareStack.remove('refusedSummary');
    }
  });
});

describe('records written before the tenant-scoped indexes', () => {
  /**
   * `count` instances of a tenant written straight to the table, as an older version wrote them,
   * created in minute `minute` of the day; `fields` adds to each.
   */
  const writtenAsBefore = async <F extends Record<string, unknown>>(
    tenantId: string,
    prefix: string,
    minute: number,
    count: number,
    fields: (n: number, id: string) => F,
  ): Promise<Array<VnfInstanceRecord & F>> => {
    const records = Array.from({ length: count }, (_, n) => {
      const createdAt = `2026-12-01T00:${String(minute).padStart(2, '0')}:${String(n).padStart(2, '0')}.000Z`;
      const id = `${prefix}-${n}`;
      return { ...(vnfInstances[0] as VnfInstanceRecord), id, tenantId, createdAt, createdSeq: `${createdAt}#${id}`, ...fields(n, id) };
    });
    for (const record of records) await documentClient().send(new PutCommand({ TableName: 'VnfInstancesTable', Item: record }));
    return records;
  };
  /** The ids a tenant's list filtered by name answers. */
  const named = async (tenantId: string, name: string) =>
    (
      await listVnfInstances(
        { instances: new DynamoVnfInstanceStore('VnfInstancesTable') } as unknown as CoreDeps,
        { tenantId },
        2,
        BASE,
        new URLSearchParams({ filter: `(eq,vnfInstanceName,${name})` }).toString(),
        100,
      )
    ).items.map((item) => item.id);

  it('are listed through them once their keys are back-filled, and a second back-fill writes none', async () => {
    // No index keys.
    await writtenAsBefore('tenant-old', 'old', 0, 12, (n) => ({ vnfInstanceName: `old-${n % 3}` }));
    assert.deepEqual(await named('tenant-old', 'old-1'), [], 'not in the index before the back-fill');
    assert.equal(await backfillVnfInstanceListKeys('VnfInstancesTable'), 12);
    assert.deepEqual(await named('tenant-old', 'old-1'), ['old-1', 'old-4', 'old-7', 'old-10']);
    assert.equal(await backfillVnfInstanceListKeys('VnfInstancesTable'), 0);
  });

  it('are found by name again once a back-fill moves keys written with four name shards to the one shard', async () => {
    // The name key as the four-shard name index wrote it.
    const moved = await writtenAsBefore('tenant-moved', 'sharded', 1, 8, (_, id) => ({
      vnfInstanceName: 'moved',
      vnfInstanceNameKey: shardKey('tenant-moved', 'moved', shardOf(id, 4)),
    }));
    assert.ok(
      moved.some((record) => record.vnfInstanceNameKey !== shardKey('tenant-moved', 'moved', 0)),
      'some keys were in another shard',
    );
    assert.ok((await named('tenant-moved', 'moved')).length < moved.length, 'records in the other shards are not found before the back-fill');
    assert.ok((await backfillVnfInstanceListKeys('VnfInstancesTable')) > 0);
    assert.deepEqual(
      await named('tenant-moved', 'moved'),
      moved.map((record) => record.id),
    );
  });
});

describe('alarm lists read through the instance index', () => {
  const SEVERITIES = ['CRITICAL', 'MAJOR', 'MINOR', 'CLEARED'];
  const alarms = Array.from({ length: 120 }, (_, n) => {
    const instance = pick(instances);
    const raised = pick(startTimes);
    const id = `alarm-${String(n).padStart(4, '0')}`;
    return {
      id,
      tenantId: instance.tenantId,
      managedObjectId: instance.id,
      vnfcInstanceIds: [],
      rootCauseFaultyResource: {},
      alarmRaisedTime: raised,
      ackState: pick(['ACKNOWLEDGED', 'UNACKNOWLEDGED']),
      perceivedSeverity: pick(SEVERITIES),
      eventTime: raised,
      eventType: 'EQUIPMENT_ALARM',
      probableCause: 'down',
      isRootCause: true,
      raisedSeq: `${raised}#${id}`,
      revision: 1,
    } as unknown as AlarmRecord;
  });

  it("shows a tenant exactly the alarms the scan shows, in raise order, page after page, and an admin every tenant's", async () => {
    const store = new DynamoAlarmStore('AlarmsTable');
    for (const alarm of alarms) await store.create(alarm);
    const deps = { alarms: store } as unknown as FmDeps;
    let matched = 0;
    for (let round = 0; round < 30; round++) {
      const scope = round % 5 === 4 ? ALL_TENANTS : pick(TENANTS);
      const parts = random() < 0.5 ? [`(eq,perceivedSeverity,${pick(SEVERITIES)})`] : [];
      parts.splice(
        between(0, parts.length),
        0,
        pin('managedObjectId', () => (random() < 0.1 ? 'vnf-none' : pick(instances).id)),
      );
      const filter = parts.join(';');
      assert.equal(planListing(parseFilter(filter), ALARM_LIST_INDEXES, { allTenants: scope === ALL_TENANTS }).kind, 'index');
      const viaIndex = await everyPage(filter, (query, pageSize) => listAlarms(deps, callerOf(scope), BASE, query, pageSize));
      const expected = alarms
        .filter((a) => (scope === ALL_TENANTS || a.tenantId === scope) && matchesFilter(parseFilter(filter), renderAlarm(a, BASE)))
        .sort((a, b) => (a.raisedSeq < b.raisedSeq ? -1 : 1))
        .map((a) => a.id);
      assert.deepEqual(viaIndex, expected, `${String(scope)} ${filter}`);
      matched += viaIndex.length;
    }
    assert.ok(matched > 20, `the filters matched something (${matched} alarms)`);
  });
});

describe('VNF package lists read through their indexes', () => {
  const ONBOARDING: OnboardingState[] = ['CREATED', 'UPLOADING', 'PROCESSING', 'ONBOARDED', 'ERROR'];
  const OPERATIONAL = ['ENABLED', 'DISABLED'] as const;
  const packages: VnfPackageRecord[] = Array.from({ length: 120 }, (_, n) => {
    const onboardingState = pick(ONBOARDING);
    const onboarded = onboardingState === 'ONBOARDED';
    return {
      id: `pkg-${String(n).padStart(4, '0')}-${Math.floor(random() * 1e6)}`,
      tenantId: pick(TENANTS),
      // Shared creation times: the list order is then decided by the id.
      createdAt: pick(startTimes),
      onboardingState,
      operationalState: onboarded ? pick(OPERATIONAL) : 'DISABLED',
      usageState: pick(['IN_USE', 'NOT_IN_USE']),
      ...(onboarded && { vnfdId: pick(VNFDS), vnfProvider: pick(PROVIDERS), vnfProductName: pick(['fw', 'lb']) }),
      revision: 1,
    } as VnfPackageRecord;
  });
  const residuals = [
    () => `(eq,usageState,${pick(['IN_USE', 'NOT_IN_USE'])})`,
    () => `(neq,vnfProductName,${pick(['fw', 'lb'])})`,
    () => `(cont,id,${between(0, 9)})`,
    () => `(eq,operationalState,${pick(OPERATIONAL)})`,
  ];
  const randomPackageFilter = () => {
    const pinned = pick([
      () => pin('vnfdId', () => (random() < 0.1 ? 'vnfd-none' : pick(VNFDS))),
      () => pin('onboardingState', () => pick(ONBOARDING)),
      () => pin('operationalState', () => pick(OPERATIONAL)),
    ])();
    const parts = Array.from({ length: between(0, 2) }, () => pick(residuals)());
    parts.splice(between(0, parts.length), 0, pinned);
    return parts.join(';');
  };
  const seq = (record: VnfPackageRecord) => `${record.createdAt}#${record.id}`;
  const expected = (scope: TenantScope, filter: string) =>
    packages
      .filter((r) => (scope === ALL_TENANTS || r.tenantId === scope) && matchesFilter(parseFilter(filter), renderVnfPkgInfo(r, 2, BASE)))
      .sort((a, b) => (seq(a) < seq(b) ? -1 : 1))
      .map((r) => r.id);

  let store: DynamoVnfPackageStore;
  const plans: ListPlan['kind'][] = [];
  const deps = () => ({ packages: notingPlans((...args) => store.listPage(...args), plans) }) as unknown as CoreDeps;

  before(async () => {
    store = new DynamoVnfPackageStore('VnfPackagesTable');
    for (const record of packages) await store.put(record);
  });

  /** A third of the packages are onboarded, enabled or disabled, as onboarding and PATCH change them (their keys move). */
  async function changeSomePackages(): Promise<void> {
    for (const record of packages.filter((_, n) => n % 3 === 0)) {
      const set =
        record.onboardingState === 'ONBOARDED'
          ? { operationalState: record.operationalState === 'ENABLED' ? 'DISABLED' : 'ENABLED' }
          : { onboardingState: 'ONBOARDED', operationalState: 'ENABLED', vnfdId: pick(VNFDS) };
      const changed = await store.change(record.id, { from: { onboardingState: [record.onboardingState] }, set });
      assert.ok(changed, record.id);
      Object.assign(record, set);
    }
  }

  it("shows a tenant exactly its scan's packages in the same order, and an admin every tenant's, page after page", async () => {
    let matched = 0;
    for (let round = 0; round < 60; round++) {
      if (round === 30) await changeSomePackages();
      const scope = round % 5 === 4 ? ALL_TENANTS : pick(TENANTS);
      const filter = randomPackageFilter();
      plans.length = 0;
      const viaIndex = await everyPage(filter, (query, pageSize) => listPackages(deps(), callerOf(scope), 2, BASE, query, pageSize));
      const planned = planListing(parseFilter(filter), VNF_PACKAGE_LIST_INDEXES, { allTenants: scope === ALL_TENANTS }).kind;
      assert.deepEqual(new Set(plans), new Set([planned]), filter);
      // Every package index is tenant-scoped: a tenant's list reads through one, an admin's scans.
      assert.equal(planned, scope === ALL_TENANTS ? 'scan' : 'index', filter);
      if (planned === 'index') assert.deepEqual(viaIndex, expected(scope, filter), `${String(scope)} ${filter}`);
      else assert.deepEqual([...viaIndex].sort(), expected(scope, filter).sort(), `${String(scope)} ${filter}`);
      matched += viaIndex.length;
    }
    assert.ok(matched > 50, `the filters matched something (${matched} packages)`);
  });

  it('lists packages written before the indexes once their keys are back-filled, and a second back-fill writes none', async () => {
    const old = Array.from({ length: 6 }, (_, n) => ({
      ...(packages[0] as VnfPackageRecord),
      id: `old-pkg-${n}`,
      tenantId: 'tenant-old',
      createdAt: `2026-12-01T00:00:0${n}.000Z`,
      onboardingState: 'ONBOARDED',
      operationalState: n % 2 ? 'ENABLED' : 'DISABLED',
      vnfdId: 'vnfd-old',
    }));
    for (const record of old) await documentClient().send(new PutCommand({ TableName: 'VnfPackagesTable', Item: record }));
    const ofVnfd = async () =>
      (
        await listPackages(
          { packages: store } as unknown as CoreDeps,
          { tenantId: 'tenant-old' },
          2,
          BASE,
          new URLSearchParams({ filter: '(eq,vnfdId,vnfd-old);(eq,operationalState,ENABLED)' }).toString(),
          100,
        )
      ).items.map((item) => item.id);
    assert.deepEqual(await ofVnfd(), [], 'not in the index before the back-fill');
    assert.equal(await backfillVnfPackageListKeys('VnfPackagesTable'), 6);
    assert.deepEqual(await ofVnfd(), ['old-pkg-1', 'old-pkg-3', 'old-pkg-5']);
    assert.equal(await backfillVnfPackageListKeys('VnfPackagesTable'), 0);
  });
});

describe('subscriptions read through the instance index', () => {
  const NAMES = ['name-0', 'name-1'];
  const TYPES = ['VnfLcmOperationOccurrenceNotification', 'VnfIdentifierCreationNotification', 'VnfIdentifierDeletionNotification'];
  let n = 0;
  /** A subscription naming one instance by id (most), several, none, or only names; of a random tenant's instances (and a few of another's). */
  function randomSubscription(tenantId: string): SubscriptionRecord {
    const own = instances.filter((i) => i.tenantId === tenantId).map((i) => i.id);
    const ids = () => (random() < 0.1 ? pick(instances).id : pick(own));
    const kind = random();
    const instanceFilter =
      kind < 0.55
        ? { vnfInstanceIds: [ids()] }
        : kind < 0.7
          ? { vnfInstanceIds: [...new Set(Array.from({ length: between(2, 3) }, ids))] }
          : kind < 0.8
            ? { vnfInstanceIds: [ids()], vnfInstanceNames: [pick(NAMES)] }
            : kind < 0.9
              ? { vnfInstanceNames: [pick(NAMES)] }
              : undefined;
    const createdAt = pick(startTimes);
    const id = `sub-${String(n++).padStart(4, '0')}`;
    return {
      id,
      tenantId,
      createdAt,
      createdSeq: `${createdAt}#${id}`,
      callbackUri: `https://nfvo.example/${id}`,
      verbosity: random() < 0.5 ? 'FULL' : 'SHORT',
      apiMajorVersion: 2,
      apiRoot: BASE,
      revision: 1,
      filter: {
        ...(instanceFilter && { vnfInstanceSubscriptionFilter: instanceFilter }),
        ...(random() < 0.4 && { notificationTypes: [pick(TYPES)] }),
      },
    } as SubscriptionRecord;
  }
  const subscriptions = Array.from({ length: 150 }, () => randomSubscription(pick(TENANTS)));
  const store = new DynamoSubscriptionStore<SubscriptionRecord>('SubscriptionsTable', true);
  const plans: ListPlan['kind'][] = [];
  const deps = () => ({ subscriptions: notingPlans((...args) => store.listPage(...args), plans) }) as never;

  function randomSubscriptionFilter(): string {
    const parts = [
      ...(random() < 0.3 ? [`(eq,verbosity,${random() < 0.5 ? 'FULL' : 'SHORT'})`] : []),
      ...(random() < 0.3 ? [`(cont,filter/notificationTypes,Identifier)`] : []),
      ...(random() < 0.2 ? [`(eq,filter/vnfInstanceSubscriptionFilter/vnfInstanceNames,${pick(NAMES)})`] : []),
    ];
    parts.splice(
      between(0, parts.length),
      0,
      pin(SUBSCRIBED_INSTANCE_PATH, () => (random() < 0.1 ? pick(['vnf-none', ANY_INSTANCE]) : pick(instances).id)),
    );
    return parts.join(';');
  }

  const expected = (scope: string, filter: string) =>
    subscriptions
      .filter((r) => r.tenantId === scope && matchesFilter(parseFilter(filter), renderSubscription(r, 2, BASE)))
      .sort((a, b) => (a.createdSeq < b.createdSeq ? -1 : 1))
      .map((r) => r.id);

  const listed = (scope: string, filter: string) =>
    everyPage(filter, (query, pageSize) => listSubscriptions(deps(), { tenantId: scope }, 2, BASE, query, pageSize));

  before(async () => {
    // Half are written as a version before the index wrote them (no instance key), then keyed.
    for (const [i, record] of subscriptions.entries()) {
      if (i % 2) await store.create(record);
      else await documentClient().send(new PutCommand({ TableName: 'SubscriptionsTable', Item: record }));
    }
  });

  it('before the subscriptions from before the index are keyed, a filtered list scans, missing none, and the notifier is told to read them all', async () => {
    const instance = pick(instances);
    assert.equal(await store.listFor(instance.tenantId, instance.id), undefined, 'the notifier is told to read every subscription of the tenant');
    for (let round = 0; round < 10; round++) {
      const scope = pick(TENANTS);
      const filter = randomSubscriptionFilter();
      plans.length = 0;
      assert.deepEqual(await listed(scope, filter), expected(scope, filter), `${scope} ${filter}`);
    }
  });

  it("once keyed, shows a tenant exactly the scan's subscriptions in creation order, page after page, through the index", async () => {
    assert.equal(await keySubscriptions('SubscriptionsTable'), 75, 'the half written without a key');
    assert.equal(await keySubscriptions('SubscriptionsTable'), 0, 'the marker says they are keyed: nothing is read again');
    let matched = 0;
    for (let round = 0; round < 60; round++) {
      const scope = pick(TENANTS);
      const filter = randomSubscriptionFilter();
      assert.equal(planListing(parseFilter(filter), SUBSCRIPTION_LIST_INDEXES).kind, 'index', filter);
      plans.length = 0;
      const viaIndex = await listed(scope, filter);
      assert.ok(plans.every((kind) => kind === 'index'));
      assert.deepEqual(viaIndex, expected(scope, filter), `${scope} ${filter}`);
      matched += viaIndex.length;
    }
    assert.ok(matched > 30, `the filters matched something (${matched} subscriptions)`);
  });

  it('gives the notifier, for a change of an instance, every subscription of the tenant that can match it and few others', async () => {
    for (const instance of [...instances, { tenantId: 'tenant-a', id: 'vnf-none' }]) {
      const candidates = (await store.listFor(instance.tenantId, instance.id)) ?? assert.fail('keyed: the store tells them');
      const ids = candidates.map((r) => r.id);
      const matching = subscriptions.filter((r) => {
        const named = r.filter?.vnfInstanceSubscriptionFilter?.vnfInstanceIds;
        return r.tenantId === instance.tenantId && (named === undefined || named.includes(instance.id));
      });
      // Every subscription whose instance ids could match is a candidate (the family's filter decides the rest) ...
      for (const r of matching) assert.ok(ids.includes(r.id), `${instance.id}: ${r.id} missing`);
      // ... and every candidate names this instance alone, or no single instance.
      for (const r of candidates) {
        const named = [...new Set(r.filter?.vnfInstanceSubscriptionFilter?.vnfInstanceIds ?? [])];
        assert.ok(r.tenantId === instance.tenantId && (named.length !== 1 || named[0] === instance.id), `${instance.id}: ${r.id} is no candidate`);
      }
      const order = candidates.map((r) => r.createdSeq);
      assert.deepEqual(order, [...order].sort(), 'in creation order, as the tenant list gives them');
    }
    for (const tenantId of TENANTS) {
      const ofTenant = expected(tenantId, '(neq,id,none)');
      assert.deepEqual(
        (await store.listIfFew(tenantId, ofTenant.length))?.map((r) => r.id),
        ofTenant,
        'a tenant with at most that many: all of them',
      );
      assert.equal(await store.listIfFew(tenantId, ofTenant.length - 1), undefined, 'one more than that many: none');
    }
    const single = subscriptions.filter((r) => r.filter?.vnfInstanceSubscriptionFilter?.vnfInstanceIds?.length === 1);
    assert.ok(single.length > 50, 'most subscriptions name one instance, so a change reads few');
  });
});

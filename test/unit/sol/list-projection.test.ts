// A list page reads only the attributes it shows or filters on (lib/sol/listing.ts `read`, a
// DynamoDB ProjectionExpression), and shows exactly what the same page read from whole records
// shows: VNF instances and op occs with large attributes a list leaves out by default, random
// attribute selectors (none, all_fields, fields, exclude_fields, exclude_default) and filters (on
// shown attributes, on left-out ones, through an index or not), v1 and v2, page after page.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CoreDeps } from '#lib/ports.ts';
import { listVnfInstances } from '#lib/lcm/vnf-instances.ts';
import { listOpOccs } from '#lib/lcm/op-occs.ts';
import type { ListResult } from '#lib/sol/listing.ts';
import type { VnfInstanceRecord, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import { MARKER_PARAMETER, type Page } from '#lib/sol/paging.ts';
import { DynamoVnfInstanceStore } from '#lib/store/vnf-instances.ts';
import { DynamoVnfLcmOpOccStore } from '#lib/store/op-occs.ts';
import { startTemplateTables } from '../support/template-tables.ts';
import { prng } from '../../support/prng.ts';

const BASE = 'http://vnfm.test';
const TENANT = 'tenant-p';

const random = prng(7);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const some = <T>(items: readonly T[]): T[] => items.filter(() => random() < 0.4);

const instances: VnfInstanceRecord[] = Array.from({ length: 40 }, (_, n) => {
  const createdAt = `2026-12-03T10:00:${String(n).padStart(2, '0')}.000Z`;
  const id = `vnf-${String(n).padStart(3, '0')}`;
  const instantiated = n % 2 === 0;
  return {
    id,
    tenantId: TENANT,
    createdAt,
    createdSeq: `${createdAt}#${id}`,
    vnfdId: pick(['vnfd-a', 'vnfd-b']),
    vnfProvider: 'Company',
    vnfProductName: pick(['fw', 'lb']),
    vnfSoftwareVersion: '1.0',
    vnfdVersion: '1.0',
    vnfPkgId: 'pkg-1',
    vnfInstanceName: `name-${n % 5}`,
    instantiationState: instantiated ? 'INSTANTIATED' : 'NOT_INSTANTIATED',
    metadata: { site: pick(['east', 'west']), rack: n },
    ...(n % 3 === 0 && { extensions: { owner: 'ops' }, vnfConfigurableProperties: { autoHealable: true } }),
    ...(instantiated && {
      instantiatedVnfInfo: {
        flavourId: 'simple',
        vnfState: 'STARTED',
        vnfcResourceInfo: Array.from({ length: 3 }, (_, j) => ({
          id: `vnfc-${n}-${j}`,
          vduId: 'VDU1',
          computeResource: { vimConnectionId: 'vim-1', resourceId: `server-${n}-${j}` },
        })),
      },
      vimConnectionInfo: { 'vim-1': { vimId: 'vim-1', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3', interfaceInfo: { endpoint: 'http://keystone' } } },
      vimResources: { stackId: `stack-${n}` },
    }),
    revision: 3,
  } as unknown as VnfInstanceRecord;
});

const opOccs: VnfLcmOpOccRecord[] = Array.from({ length: 40 }, (_, n) => {
  const startTime = `2026-12-03T11:00:${String(n).padStart(2, '0')}.000Z`;
  const id = `op-${String(n).padStart(3, '0')}`;
  return {
    id,
    tenantId: TENANT,
    vnfInstanceId: `vnf-${String(n % 7).padStart(3, '0')}`,
    operation: pick(['INSTANTIATE', 'SCALE', 'TERMINATE']),
    operationState: pick(['PROCESSING', 'COMPLETED', 'FAILED_TEMP']),
    stateEnteredTime: startTime,
    startTime,
    startSeq: `${startTime}#${id}`,
    isAutomaticInvocation: false,
    isCancelPending: false,
    operationParams: { flavourId: 'simple', additionalParams: { n } },
    resourceChanges: { affectedVnfcs: [{ id: `vnfc-${n}`, vduId: 'VDU1', changeType: 'ADDED' }] },
    ...(n % 4 === 0 && { grant: { id: `grant-${n}`, local: false, _links: { self: { href: `https://nfvo/grants/${n}` } }, zones: [{ id: 'z' }] } }),
    ...(n % 4 === 1 && { grantPending: { location: `https://nfvo/grants/pending-${n}` } }),
    ...(n % 4 === 2 && { grant: { id: `grant-${n}`, local: true } }),
    ...(n % 5 === 0 && { error: { status: 500, detail: 'failed' } }),
    apiMajorVersion: 2,
    revision: 2,
  } as unknown as VnfLcmOpOccRecord;
});

/** Random attribute selectors over the resource's attributes and its default exclusions. */
function randomSelectors(defaultExcluded: readonly string[], shown: readonly string[]): Record<string, string> {
  switch (pick(['none', 'all', 'fields', 'exclude', 'default', 'default+fields'])) {
    case 'all':
      return { all_fields: '' };
    case 'fields': {
      const fields = some(
        [...defaultExcluded, 'instantiatedVnfInfo/vnfcResourceInfo', 'operationParams/flavourId'].filter((path) =>
          shown.includes(path.split('/')[0] as string),
        ),
      );
      return fields.length ? { fields: fields.join(',') } : {};
    }
    case 'exclude': {
      const excluded = some(shown.filter((attribute) => attribute !== 'id' && attribute !== '_links'));
      return excluded.length ? { exclude_fields: excluded.join(',') } : { all_fields: '' };
    }
    case 'default':
      return { exclude_default: '' };
    case 'default+fields': {
      const fields = some(defaultExcluded);
      return fields.length ? { exclude_default: '', fields: fields.join(',') } : { exclude_default: '' };
    }
    default:
      return {};
  }
}

/** Every item of the list, page after page of `pageSize`, following the markers. */
async function everyItem(list: (query: string) => Promise<ListResult>, params: Record<string, string>): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let query = new URLSearchParams(params).toString();
  for (;;) {
    const page = await list(query);
    items.push(...page.items);
    if (!page.marker) return items;
    query = new URLSearchParams({ [MARKER_PARAMETER]: page.marker }).toString();
  }
}

type Lister<R> = (...args: [string, number, Record<string, string | number>?, unknown?, (readonly string[])?]) => Promise<Page<R>>;

/** The store's lister, noting what each page asked to read; and the same lister reading whole records. */
function listers<R>(listPage: Lister<R>, asked: Array<readonly string[] | undefined>) {
  return {
    projected: {
      listPage: (...args: Parameters<Lister<R>>) => {
        asked.push(args[4]);
        return listPage(...args);
      },
    },
    whole: { listPage: (...args: Parameters<Lister<R>>) => listPage(args[0], args[1], args[2], args[3]) },
  };
}

let stop: () => Promise<void>;
before(async () => {
  stop = await startTemplateTables(['VnfInstancesTable', 'VnfLcmOpOccsTable']);
  const instanceStore = new DynamoVnfInstanceStore('VnfInstancesTable');
  for (const record of instances) await instanceStore.create(record);
  const opOccStore = new DynamoVnfLcmOpOccStore('VnfLcmOpOccsTable');
  for (const record of opOccs) await opOccStore.create(record);
});
after(() => stop());

describe('list pages read only what they show', () => {
  it('VNF instances: the same items as from whole records, for random selectors and filters, v1 and v2', async () => {
    const store = new DynamoVnfInstanceStore('VnfInstancesTable');
    const asked: Array<readonly string[] | undefined> = [];
    const { projected, whole } = listers<VnfInstanceRecord>((...args) => store.listPage(...(args as Parameters<typeof store.listPage>)), asked);
    const filters = [
      '',
      '(eq,instantiationState,INSTANTIATED)',
      '(eq,metadata/site,east)',
      '(eq,vnfInstanceName,name-2)',
      '(cont,vnfProductName,f)',
      '(neq,extensions/owner,ops)',
    ];
    const shown = [
      'id',
      'vnfInstanceName',
      'vnfdId',
      'instantiationState',
      'vnfConfigurableProperties',
      'vimConnectionInfo',
      'instantiatedVnfInfo',
      'metadata',
      'extensions',
      '_links',
    ];
    let narrowed = 0;
    for (let round = 0; round < 60; round++) {
      const version = pick([1, 2] as const);
      const filter = pick(filters);
      const params = {
        ...randomSelectors(['vnfConfigurableProperties', 'vimConnectionInfo', 'instantiatedVnfInfo', 'metadata', 'extensions'], shown),
        ...(filter && { filter }),
      };
      const pageSize = 1 + Math.floor(random() * 15);
      asked.length = 0;
      const list = (stores: object) => (query: string) =>
        listVnfInstances({ instances: stores } as unknown as CoreDeps, { tenantId: TENANT }, version, BASE, query, pageSize);
      const read = await everyItem(list(projected), params);
      assert.deepEqual(read, await everyItem(list(whole), params), `v${version} ${JSON.stringify(params)}`);
      if (asked.some((attributes) => attributes !== undefined)) narrowed++;
    }
    assert.ok(narrowed > 20, `pages read fewer attributes (${narrowed} lists)`);
  });

  it('op occs: the same items, links to grants included, for random selectors and filters, v1 and v2', async () => {
    const store = new DynamoVnfLcmOpOccStore('VnfLcmOpOccsTable');
    const asked: Array<readonly string[] | undefined> = [];
    const { projected, whole } = listers<VnfLcmOpOccRecord>((...args) => store.listPage(...(args as Parameters<typeof store.listPage>)), asked);
    const filters = ['', '(eq,operationState,FAILED_TEMP)', '(eq,vnfInstanceId,vnf-003)', '(eq,operationParams/flavourId,simple)', '(neq,operation,SCALE)'];
    const shown = ['id', 'operationState', 'operation', 'operationParams', 'error', 'resourceChanges', 'changedInfo', 'grantId', '_links'];
    let narrowed = 0;
    for (let round = 0; round < 60; round++) {
      const version = pick([1, 2] as const);
      const filter = pick(filters);
      const params = { ...randomSelectors(['operationParams', 'error', 'resourceChanges', 'changedInfo'], shown), ...(filter && { filter }) };
      const pageSize = 1 + Math.floor(random() * 15);
      asked.length = 0;
      const list = (stores: object) => (query: string) =>
        listOpOccs({ opOccs: stores } as unknown as CoreDeps, { tenantId: TENANT }, version, BASE, query, pageSize);
      const read = await everyItem(list(projected), params);
      assert.deepEqual(read, await everyItem(list(whole), params), `v${version} ${JSON.stringify(params)}`);
      if (asked.some((attributes) => attributes !== undefined)) narrowed++;
    }
    assert.ok(narrowed > 20, `pages read fewer attributes (${narrowed} lists)`);
    // A page that leaves everything large out still links each grant it has.
    const page = await listOpOccs({ opOccs: projected } as unknown as CoreDeps, { tenantId: TENANT }, 2, BASE, '', 100);
    const links = (id: string) => (page.items.find((item) => item.id === id)?._links ?? {}) as Record<string, { href: string }>;
    assert.equal(links('op-000').grant?.href, 'https://nfvo/grants/0');
    assert.equal(links('op-001').grant?.href, 'https://nfvo/grants/pending-1');
    assert.equal(links('op-002').grant, undefined);
    assert.ok(asked.at(-1)?.includes('grant._links.self.href'), 'the page read the grant link alone');
    assert.ok(!asked.at(-1)?.includes('resourceChanges'));
  });
});

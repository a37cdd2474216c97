// What the VNFC health sweep reads and how it keeps to one sweep at a time, on the local DynamoDB
// with the tables as template.yaml defines them: the sparse `monitored` index holds exactly the
// INSTANTIATED instances (the write that changes instantiationState sets or removes the mark),
// projects only what the sweep reads, and pages; the sweep's lease lets exactly one of two
// concurrent sweeps work, is taken over once expired, and is given back when a sweep ends. And
// instances instantiated before the index existed are marked once.
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { startLocalDynamo, type LocalDynamo } from '#local/dynamodb.ts';
import { templateTable as tableInput } from '../support/template-tables.ts';
import { SWEEP_LEASE, sweep, vnfcsOfInstance } from '#lib/fm/monitor.ts';
import type { FmDeps } from '#lib/fm/ports.ts';
import type { VnfInstanceRecord } from '#lib/sol/model.ts';
import { documentClient } from '#lib/store/dynamo.ts';
import { DynamoLeaseStore, leaseId } from '#lib/store/leases.ts';
import { DynamoAlarmStore } from '#lib/store/alarms.ts';
import { getAlarm } from '#lib/fm/alarms.ts';
import type { Caller } from '#lib/auth/tenancy.ts';
import { NotFoundError } from '#lib/sol/errors.ts';
import {
  DynamoVnfInstanceStore,
  MONITORED_ATTRIBUTES,
  MONITORED_INDEX,
  markUnmonitored,
  monitoredInstances,
  monitoredVnfcsOf,
  withMonitoredAttributes,
} from '#lib/store/vnf-instances.ts';

const NOW = '2026-12-02T12:00:00.000Z';

const instance = (n: number, padding = 0): VnfInstanceRecord =>
  ({
    id: `vnf-${String(n).padStart(3, '0')}`,
    tenantId: 'tenant-a',
    createdAt: NOW,
    createdSeq: `${NOW}#${n}`,
    vnfdId: 'vnfd',
    vnfProvider: 'p',
    vnfProductName: 'n',
    vnfSoftwareVersion: '1',
    vnfdVersion: '1',
    vnfPkgId: 'pkg',
    instantiationState: 'NOT_INSTANTIATED',
    vimConnectionInfo: { vim1: { vimId: 'vim-1', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3' } },
    metadata: { note: 'x'.repeat(padding) },
    revision: 1,
  }) as unknown as VnfInstanceRecord;

const instantiated = (padding = 0) => ({
  instantiationState: 'INSTANTIATED',
  instantiatedVnfInfo: {
    flavourId: 'simple',
    vnfState: 'STARTED',
    vnfcResourceInfo: [{ id: 'vnfc-1', vduId: 'VDU1', computeResource: { resourceId: 'server-1' } }],
    vnfcInfo: [{ id: 'VDU1-vnfc-1', vduId: 'VDU1', vnfcResourceInfoId: 'vnfc-1' }],
    padding: 'y'.repeat(padding),
  },
  vimResources: {
    vim: { connectionId: 'vim1', vimId: 'vim-1', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3', interfaceInfo: {}, accessSecret: 's' },
    driverState: {},
  },
  vimAccessSecrets: { vim1: 'secret-arn' },
});

describe('what the sweep reads of an instance', () => {
  it('is marked by the write that makes an instance INSTANTIATED and unmarked by the one that ends it', () => {
    assert.deepEqual(withMonitoredAttributes({ set: { instantiationState: 'INSTANTIATED', x: 1 }, remove: [MONITORED_INDEX] }), {
      set: { instantiationState: 'INSTANTIATED', x: 1, [MONITORED_INDEX]: 'Y' },
      remove: [],
    });
    assert.deepEqual(withMonitoredAttributes({ set: { instantiationState: 'NOT_INSTANTIATED' }, remove: ['instantiatedVnfInfo', 'vimResources'] }), {
      set: { instantiationState: 'NOT_INSTANTIATED' },
      remove: ['instantiatedVnfInfo', 'vimResources', MONITORED_INDEX, 'monitoredVnfcs'],
    });
    const other = { set: { vimResources: {} }, remove: ['lockedAt'] };
    assert.equal(withMonitoredAttributes(other), other, 'a write that touches neither state nor VNFCs is left alone');
  });

  it('keeps the compact VNFC list in step with every instantiatedVnfInfo written', () => {
    const info = instantiated().instantiatedVnfInfo;
    const { set } = withMonitoredAttributes({ set: { instantiatedVnfInfo: info }, remove: [] });
    assert.deepEqual(set.monitoredVnfcs, [{ id: 'vnfc-1', vduId: 'VDU1', resourceId: 'server-1', vnfcInfoIds: ['VDU1-vnfc-1'] }]);
    assert.deepEqual(set.monitoredVnfcs, monitoredVnfcsOf(info));
  });

  it("is the template's sparse index, projecting what the store says the sweep reads", () => {
    const index = (tableInput('VnfInstancesTable').GlobalSecondaryIndexes ?? []).find((i) => i.IndexName === MONITORED_INDEX);
    assert.deepEqual(index?.KeySchema, [{ AttributeName: MONITORED_INDEX, KeyType: 'HASH' }]);
    assert.equal(index?.Projection?.ProjectionType, 'INCLUDE');
    assert.deepEqual([...(index?.Projection?.NonKeyAttributes ?? [])].sort(), [...MONITORED_ATTRIBUTES].sort());
  });
});

describe('the health sweep on the local DynamoDB', () => {
  let dynamo: LocalDynamo;
  let store: DynamoVnfInstanceStore;
  let leases: DynamoLeaseStore;

  before(async () => {
    dynamo = startLocalDynamo(await mkdtemp(join(tmpdir(), 'sweep-store-')));
    await new Promise<void>((resolve) => dynamo.server.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(dynamo.server.address() as AddressInfo).port}`;
    Object.assign(process.env, { AWS_ENDPOINT_URL_DYNAMODB: endpoint, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' });
    const client = new DynamoDBClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    await client.send(new CreateTableCommand(tableInput('VnfInstancesTable')));
    await client.send(new CreateTableCommand(tableInput('AlarmsTable')));
    client.destroy();
    store = new DynamoVnfInstanceStore('VnfInstancesTable');
    leases = new DynamoLeaseStore('AlarmsTable');
  });

  after(async () => {
    await new Promise((resolve) => dynamo.server.close(resolve));
  });

  it('reads exactly the INSTANTIATED instances, page after page, with only the projected attributes', async () => {
    // 40 instances of about 60 KB (in attributes the index does not project, but one it does): more than one 1 MB page of the index.
    for (let n = 0; n < 40; n++) await store.create({ ...instance(n), vnfInstanceName: 'z'.repeat(60_000) } as VnfInstanceRecord);
    for (let n = 0; n < 30; n++) {
      const id = instance(n).id;
      assert.equal(await store.acquireLock(id, { opOccId: `op-${n}`, now: NOW }), true);
      assert.equal(await store.updateUnderLock(id, `op-${n}`, { set: instantiated(60_000), remove: [] }), true);
      await store.releaseLock(id, `op-${n}`);
    }
    // Terminated again: no longer watched.
    for (let n = 0; n < 5; n++) {
      const id = instance(n).id;
      await store.acquireLock(id, { opOccId: `term-${n}`, now: NOW });
      await store.updateUnderLock(id, `term-${n}`, { set: { instantiationState: 'NOT_INSTANTIATED' }, remove: ['instantiatedVnfInfo', 'vimResources'] });
      await store.releaseLock(id, `term-${n}`);
    }
    // Created INSTANTIATED (an import, a benchmark): watched too.
    await store.create({ ...instance(99), ...instantiated() } as unknown as VnfInstanceRecord);

    const watched = await monitoredInstances('VnfInstancesTable');
    const expected = [...Array.from({ length: 25 }, (_, i) => instance(i + 5).id), instance(99).id];
    assert.deepEqual(watched.map((r) => r.id).sort(), expected.sort());
    const first = watched.find((r) => r.id === instance(10).id) as unknown as Record<string, unknown>;
    assert.equal(first.tenantId, 'tenant-a');
    assert.deepEqual((first.vimResources as { vim: { vimId: string } }).vim.vimId, 'vim-1');
    assert.deepEqual(vnfcsOfInstance(first as unknown as VnfInstanceRecord), monitoredVnfcsOf(instantiated().instantiatedVnfInfo));
    for (const unread of ['instantiatedVnfInfo', 'vimConnectionInfo', 'vimAccessSecrets', 'metadata', 'createdSeq', 'revision'])
      assert.equal(unread in first, false, `${unread} is not projected`);

    const terminated = await store.get(instance(0).id);
    assert.equal(terminated && MONITORED_INDEX in terminated, false, 'the mark goes with the state');
  });

  it('marks once the INSTANTIATED instances written before the index existed', async () => {
    const old = { ...instance(200), ...instantiated() };
    const idle = instance(201);
    for (const item of [old, idle]) await documentClient().send(new PutCommand({ TableName: 'VnfInstancesTable', Item: item }));
    const watchedIds = async () => (await monitoredInstances('VnfInstancesTable')).map((r) => r.id);
    assert.equal((await watchedIds()).includes(old.id), false, 'unmarked: not watched');
    assert.equal(await markUnmonitored('VnfInstancesTable'), 1);
    assert.equal((await watchedIds()).includes(old.id), true);
    const marked = (await monitoredInstances('VnfInstancesTable')).find((r) => r.id === old.id);
    assert.deepEqual(marked?.monitoredVnfcs, monitoredVnfcsOf(old.instantiatedVnfInfo), 'with its VNFCs');
    assert.equal((await watchedIds()).includes(idle.id), false);
    assert.equal(await markUnmonitored('VnfInstancesTable'), 0, 'a second run finds none');
  });

  /** Deps for a sweep over no instances: what it reads is counted, and held until `hold` resolves. */
  function sweepDeps(hold: Promise<void>) {
    const reads = { count: 0 };
    const deps = {
      leases,
      now: () => NOW,
      newId: () => crypto.randomUUID(),
      alarms: { listActive: async () => [] },
      watching: async () => true,
      instantiated: async () => {
        reads.count++;
        // The first sweep to read waits for the other to end; a second one reading would end at once.
        if (reads.count === 1) await hold;
        return [];
      },
      vimConcurrency: 1,
      vimTimeoutMs: 1000,
    } as unknown as FmDeps;
    return { deps, reads };
  }

  const leaseItem = async () => (await documentClient().send(new GetCommand({ TableName: 'AlarmsTable', Key: { id: leaseId(SWEEP_LEASE) } }))).Item;

  it('lets exactly one of two concurrent sweeps work, and gives the lease back when it ends', async () => {
    let release = () => {};
    const hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { deps, reads } = sweepDeps(hold);
    const sweeps = [sweep(deps, 60_000), sweep(deps, 60_000)];
    for (const one of sweeps) void one.finally(release);
    const reports = await Promise.all(sweeps);
    assert.equal(reports.filter((report) => report.skipped).length, 1, 'one sweep returns at once');
    assert.equal(reports.filter((report) => !report.skipped).length, 1, 'the other works');
    assert.equal(reads.count, 1, 'only one sweep read the instances');
    assert.equal(await leaseItem(), undefined, 'the lease is given back');
    assert.equal((await sweep(sweepDeps(Promise.resolve()).deps, 60_000)).skipped, undefined, 'the next sweep works');
  });

  it('takes no lease and reads no instances when nothing is instantiated and no alarm is active (an idle deployment writes nothing)', async () => {
    const { deps, reads } = sweepDeps(Promise.resolve());
    let acquired = 0;
    const idle = {
      ...deps,
      watching: async () => false,
      leases: {
        acquire: async () => {
          acquired += 1;
          return true;
        },
        release: async () => undefined,
      },
    } as unknown as FmDeps;
    const report = await sweep(idle, 60_000);
    assert.equal(report.instances, 0);
    assert.equal(acquired, 0, 'no lease taken');
    assert.equal(reads.count, 0, 'no instances read');
  });

  it('takes over an expired lease, and waits out one that has not expired', async () => {
    const now = Date.parse(NOW);
    assert.equal(await leases.acquire(SWEEP_LEASE, 'live-sweep', now - 1000, now + 1000), true);
    const blocked = await sweep(sweepDeps(Promise.resolve()).deps, 60_000);
    assert.equal(blocked.skipped, 'another sweep holds the lease');
    assert.equal((await leaseItem())?.holder, 'live-sweep', 'the live holder keeps it');
    await leases.release(SWEEP_LEASE, 'live-sweep');

    assert.equal(await leases.acquire(SWEEP_LEASE, 'dead-sweep', now - 400_000, now - 1), true);
    const { deps, reads } = sweepDeps(Promise.resolve());
    const report = await sweep(deps, 60_000);
    assert.equal(report.skipped, undefined, 'a lease past its expiry is taken over');
    assert.equal(reads.count, 1);
    assert.equal(await leaseItem(), undefined);
    // The dead sweep's late release gives back nothing of the new holder's.
    assert.equal(await leases.acquire(SWEEP_LEASE, 'new-sweep', now, now + 1000), true);
    await leases.release(SWEEP_LEASE, 'dead-sweep');
    assert.equal((await leaseItem())?.holder, 'new-sweep');
    // The lease shares the alarms table but is no alarm, not even to an admin.
    const alarms = { alarms: new DynamoAlarmStore('AlarmsTable') } as unknown as FmDeps;
    await assert.rejects(getAlarm(alarms, { tenantId: 'admin', admin: true } as Caller, leaseId(SWEEP_LEASE)), NotFoundError);
    await leases.release(SWEEP_LEASE, 'new-sweep');
  });
});

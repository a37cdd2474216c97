// Tests for the DynamoDB repository base the stores share, against the local DynamoDB stand-in:
// a create on a taken id is a RecordExistsError, a missing record reads as undefined, a tenant's
// list pages in sort-key order without losing or repeating a record, and a failed condition is an
// answer; and for the VIM store, which uses the same conditional-write helpers without the base.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { startLocalDynamo, type LocalDynamo } from '#local/dynamodb.ts';
import { ALL_TENANTS, RecordExistsError, conditionHeld, isConditionFailure, type Page } from '#lib/store/dynamo.ts';
import { TenantRecordRepository } from '#lib/store/repository.ts';
import { DynamoVimStore, type VimRecord } from '#lib/store/vims.ts';

interface Thing {
  id: string;
  tenantId: string;
  seq: string;
  state: string;
}

/** A store built on the base, with one conditional state change the way the real stores write them. */
class ThingStore extends TenantRecordRepository<Thing> {
  move(id: string, from: string, to: string): Promise<Thing | undefined> {
    return this.updatedRecord({
      Key: { id },
      UpdateExpression: 'SET #s = :to',
      ConditionExpression: '#s = :from',
      ExpressionAttributeNames: { '#s': 'state' },
      ExpressionAttributeValues: { ':from': from, ':to': to },
    });
  }

  removeIf(id: string, state: string): Promise<boolean> {
    return conditionHeld(() =>
      this.deleteItem({ Key: { id }, ConditionExpression: '#s = :s', ExpressionAttributeNames: { '#s': 'state' }, ExpressionAttributeValues: { ':s': state } }),
    );
  }
}

const thing = (n: number, tenantId = 'tenant-a'): Thing => ({ id: `thing-${n}`, tenantId, seq: `seq-${String(n).padStart(3, '0')}`, state: 'NEW' });

describe('TenantRecordRepository on the local DynamoDB', () => {
  let dynamo: LocalDynamo;
  let store: ThingStore;

  before(async () => {
    dynamo = startLocalDynamo(await mkdtemp(join(tmpdir(), 'repository-')));
    await new Promise<void>((resolve) => dynamo.server.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(dynamo.server.address() as AddressInfo).port}`;
    // The store's shared client reads the SDK's standard configuration, as it does in the runtime.
    Object.assign(process.env, { AWS_ENDPOINT_URL_DYNAMODB: endpoint, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' });
    const client = new DynamoDBClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    await client.send(
      new CreateTableCommand({
        TableName: 'Things',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'id', AttributeType: 'S' },
          { AttributeName: 'tenantId', AttributeType: 'S' },
          { AttributeName: 'seq', AttributeType: 'S' },
        ],
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        GlobalSecondaryIndexes: [
          {
            IndexName: 'byTenant',
            KeySchema: [
              { AttributeName: 'tenantId', KeyType: 'HASH' },
              { AttributeName: 'seq', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'ALL' },
          },
        ],
      }),
    );
    await client.send(
      new CreateTableCommand({
        TableName: 'Vims',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'id', AttributeType: 'S' },
          { AttributeName: 'tenantId', AttributeType: 'S' },
          { AttributeName: 'createdAt', AttributeType: 'S' },
        ],
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        GlobalSecondaryIndexes: [
          {
            IndexName: 'byTenant',
            KeySchema: [
              { AttributeName: 'tenantId', KeyType: 'HASH' },
              { AttributeName: 'createdAt', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'ALL' },
          },
        ],
      }),
    );
    client.destroy();
    store = new ThingStore('Things');
  });

  after(async () => {
    await new Promise((resolve) => dynamo.server.close(resolve));
  });

  it('creates a record once: a second create of the id is a RecordExistsError and leaves the first', async () => {
    await store.create(thing(1));
    const conflict = await store.create({ ...thing(1), state: 'OTHER' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    assert.ok(conflict instanceof RecordExistsError, `expected a RecordExistsError, got ${String(conflict)}`);
    assert.equal(conflict.id, 'thing-1');
    assert.equal(isConditionFailure(conflict), true, 'callers that treat a failed condition as an answer still see one');
    assert.equal((await store.get('thing-1'))?.state, 'NEW');
  });

  it('reads a missing record as undefined', async () => {
    assert.equal(await store.get('no-such-thing'), undefined);
  });

  it('lists a tenant a page at a time, in sort-key order, each record once', async () => {
    for (let n = 10; n < 17; n += 1) await store.create(thing(n, 'tenant-b'));
    await store.create(thing(50, 'tenant-c'));
    const seen: string[] = [];
    const sizes: number[] = [];
    let from: Page<Thing>['after'];
    do {
      const page = await store.listPage('tenant-b', 3, from);
      seen.push(...page.items.map((item) => item.id));
      sizes.push(page.items.length);
      from = page.after;
    } while (from);
    assert.deepEqual(seen, ['thing-10', 'thing-11', 'thing-12', 'thing-13', 'thing-14', 'thing-15', 'thing-16']);
    assert.ok(
      sizes.every((size) => size <= 3),
      `pages of at most the limit: ${sizes.join(', ')}`,
    );

    const all: string[] = [];
    from = undefined;
    do {
      const page = await store.listPage(ALL_TENANTS, 4, from);
      all.push(...page.items.map((item) => item.id));
      from = page.after;
    } while (from);
    assert.deepEqual(all.sort(), ['thing-1', 'thing-10', 'thing-11', 'thing-12', 'thing-13', 'thing-14', 'thing-15', 'thing-16', 'thing-50']);
  });

  it('answers a conditional update with the new record, or undefined when the condition does not hold', async () => {
    await store.create(thing(20));
    assert.equal((await store.move('thing-20', 'NEW', 'DONE'))?.state, 'DONE');
    assert.equal(await store.move('thing-20', 'NEW', 'AGAIN'), undefined);
    assert.equal((await store.get('thing-20'))?.state, 'DONE');
    assert.equal(await store.removeIf('thing-20', 'NEW'), false);
    assert.equal(await store.removeIf('thing-20', 'DONE'), true);
    assert.equal(await store.get('thing-20'), undefined);
  });

  it('passes on a failure that is not a failed condition', async () => {
    await assert.rejects(new ThingStore('NoSuchTable').move('thing-1', 'NEW', 'DONE'), { name: 'ResourceNotFoundException' });
  });

  it('VIM store: a taken id, an update of a gone VIM and a key someone else holds are false; an update may only remove', async () => {
    const vims = new DynamoVimStore('Vims');
    const vim: VimRecord = {
      id: 'vim-1',
      tenantId: 'tenant-a',
      name: 'one',
      vimType: 'openstack',
      interfaceInfo: {},
      accessSecret: 'secret-1',
      isDefault: false,
      createdAt: '2026-12-02T00:00:00Z',
      description: 'first',
    };
    assert.equal(await vims.create(vim), true);
    assert.equal(await vims.create({ ...vim, name: 'again' }), false);
    assert.equal((await vims.get('vim-1'))?.name, 'one');

    assert.equal(await vims.update('vim-1', { status: 'REACHABLE', lastError: undefined }, ['description']), true);
    assert.equal(await vims.update('vim-1', {}, ['status']), true, 'an update that only removes');
    const updated = await vims.get('vim-1');
    assert.equal(updated?.description, undefined);
    assert.equal(updated?.status, undefined);
    assert.equal(await vims.update('vim-gone', { status: 'REACHABLE' }), false);

    assert.equal(await vims.claim('name:one', 'vim-1'), true);
    assert.equal(await vims.claim('name:one', 'vim-2'), false);
    assert.equal(await vims.move('name:one', 'vim-2', 'vim-3'), false);
    await vims.release('name:one', 'vim-2');
    assert.equal(await vims.holder('name:one'), 'vim-1', 'a release by another VIM leaves the key');
    assert.equal(await vims.get('vim-key:name:one'), undefined, 'markers are not VIMs');
  });
});

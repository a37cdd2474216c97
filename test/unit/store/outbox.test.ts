// The notification outbox's store on the template's op occs table in the local DynamoDB: what the
// notifier removes of a batch goes in BatchWriteItem requests of 25, and nothing else goes with it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '#lib/store/dynamo.ts';
import { DynamoNotificationOutbox, type OutboxEntry, removeOutboxEntries } from '#lib/store/outbox.ts';
import { startTemplateTables } from '../support/template-tables.ts';

const TABLE = 'VnfLcmOpOccsTable';

const entry = (n: number): OutboxEntry => ({
  id: `n-${String(n).padStart(2, '0')}`,
  kind: 'instance',
  recordId: `vnf-${n}`,
  expect: { exists: true },
  event: { notificationId: `n-${n}` },
  createdAt: `2026-12-01T00:00:${String(n).padStart(2, '0')}Z`,
});

describe('DynamoNotificationOutbox', () => {
  let stop: () => Promise<void>;
  before(async () => {
    stop = await startTemplateTables([TABLE]);
  });
  after(() => stop());

  it('removes every entry named, past a batch of 25, one named twice once, and only outbox entries: not a record of the same id', async () => {
    const outbox = new DynamoNotificationOutbox(TABLE);
    const entries = Array.from({ length: 60 }, (_, n) => entry(n));
    for (const e of entries) await outbox.put(e);
    // An op occ whose id is a notification's: only the entry named outbox#<id> is the outbox's.
    await documentClient().send(new PutCommand({ TableName: TABLE, Item: { id: 'n-00', tenantId: 't', operationState: 'PROCESSING' } }));
    const removed = entries.slice(0, 55).map((e) => e.id);
    // A notification fanned out twice in one batch (a redriven dead letter beside its republished event) is named twice in it.
    await removeOutboxEntries([removed[1] as string, ...removed, 'never-written'], TABLE);
    assert.deepEqual(
      (await outbox.list()).map((e) => e.id),
      entries.slice(55).map((e) => e.id),
    );
    assert.deepEqual((await outbox.list())[0], entries[55]);
    const record = await documentClient().send(new GetCommand({ TableName: TABLE, Key: { id: 'n-00' } }));
    assert.equal(record.Item?.operationState, 'PROCESSING');
    await removeOutboxEntries([], TABLE);
    assert.equal((await outbox.list()).length, 5);
  });
});

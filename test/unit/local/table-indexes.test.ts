// A data folder from an earlier version: a table without an index the template now declares is
// rebuilt with it at start and keeps every record, also when the previous start was killed in the
// middle of the rebuild; a table that already matches is left alone.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  type CreateTableCommandInput,
} from '@aws-sdk/client-dynamodb';
import { startLocalDynamo, type LocalDynamo } from '#local/dynamodb.ts';
import { ensureTable } from '#local/table-indexes.ts';

let dynamo: LocalDynamo;
let client: DynamoDBClient;
let dataDir: string;

const base: CreateTableCommandInput = {
  TableName: 'Records',
  BillingMode: 'PAY_PER_REQUEST',
  AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
  KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
};
const withIndex: CreateTableCommandInput = {
  ...base,
  AttributeDefinitions: [
    { AttributeName: 'id', AttributeType: 'S' },
    { AttributeName: 'watched', AttributeType: 'S' },
  ],
  GlobalSecondaryIndexes: [{ IndexName: 'watched', KeySchema: [{ AttributeName: 'watched', KeyType: 'HASH' }], Projection: { ProjectionType: 'ALL' } }],
};

const ids = async () =>
  ((await client.send(new ScanCommand({ TableName: 'Records', ConsistentRead: true }))).Items ?? []).map((item) => item.id?.S ?? '').sort();
const watched = async () =>
  (
    (
      await client.send(
        new QueryCommand({
          TableName: 'Records',
          IndexName: 'watched',
          KeyConditionExpression: 'watched = :w',
          ExpressionAttributeValues: { ':w': { S: 'yes' } },
        }),
      )
    ).Items ?? []
  ).length;
/** Until DescribeTable no longer finds the table (the local DynamoDB deletes it after answering). */
async function gone(table: string): Promise<void> {
  for (;;) {
    const found = await client.send(new DescribeTableCommand({ TableName: table })).then(
      () => true,
      (error: Error) => error.name !== 'ResourceNotFoundException',
    );
    if (!found) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
/** Until the table is ACTIVE (the local DynamoDB creates it after answering CreateTable, CREATING). */
async function active(table: string): Promise<void> {
  for (;;) {
    const status = await client.send(new DescribeTableCommand({ TableName: table })).then(
      (out) => out.Table?.TableStatus,
      (error: Error) => {
        if (error.name !== 'ResourceNotFoundException') throw error;
        return undefined;
      },
    );
    if (status === 'ACTIVE') return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
const RECORDS = Array.from({ length: 60 }, (_, n) => `record-${String(n).padStart(2, '0')}`);

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'table-indexes-'));
  dynamo = startLocalDynamo(join(dataDir, 'dynamodb'));
  await new Promise<void>((resolve) => dynamo.server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(dynamo.server.address() as AddressInfo).port}`;
  client = new DynamoDBClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
});

after(async () => {
  client.destroy();
  await new Promise((resolve) => dynamo.server.close(resolve));
});

it('rebuilds a table that lacks an index of the template, keeping every record, and then leaves it alone', async () => {
  await client.send(new CreateTableCommand(base));
  await active('Records');
  for (const id of RECORDS) await client.send(new PutItemCommand({ TableName: 'Records', Item: { id: { S: id }, watched: { S: 'yes' } } }));
  let noted = 0;
  const note = () => {
    noted += 1;
  };
  assert.equal(await ensureTable(client, withIndex, dataDir, note), true);
  assert.equal(noted, 1, 'what must follow a rebuild is noted before it');
  assert.deepEqual(await ids(), RECORDS);
  assert.equal(await watched(), RECORDS.length, 'the new index holds the old records');
  assert.equal(existsSync(join(dataDir, 'rebuild-Records.json')), false);
  assert.equal(await ensureTable(client, withIndex, dataDir, note), false);
  assert.equal(noted, 1);
  assert.deepEqual(await ids(), RECORDS);
});

it('finishes a rebuild the previous start was killed in: every record from the saved copy is back', async () => {
  // Killed after the table was dropped and made anew, before all items were back.
  writeFileSync(join(dataDir, 'rebuild-Records.json'), JSON.stringify(RECORDS.map((id) => ({ id: { S: id }, watched: { S: 'yes' } }))));
  await client.send(new DeleteTableCommand({ TableName: 'Records' }));
  await gone('Records');
  await client.send(new CreateTableCommand(withIndex));
  await active('Records');
  await client.send(new PutItemCommand({ TableName: 'Records', Item: { id: { S: RECORDS[0] as string }, watched: { S: 'yes' } } }));
  assert.equal(await ensureTable(client, withIndex, dataDir), true);
  assert.deepEqual(await ids(), RECORDS);
  assert.equal(await watched(), RECORDS.length);
  assert.equal(existsSync(join(dataDir, 'rebuild-Records.json')), false);
});

it('creates a table that does not exist yet', async () => {
  const fresh = { ...withIndex, TableName: 'Fresh' };
  assert.equal(await ensureTable(client, fresh, dataDir), false);
  assert.equal(((await client.send(new ScanCommand({ TableName: 'Fresh' }))).Items ?? []).length, 0);
});

it('gives every record put back the attributes its store derives for the new index (the back-fill of records from before it)', async () => {
  const older = { ...base, TableName: 'Derived' };
  await client.send(new CreateTableCommand(older));
  await active('Derived');
  for (const id of RECORDS)
    await client.send(new PutItemCommand({ TableName: 'Derived', Item: { id: { S: id }, state: { S: id.endsWith('0') ? 'yes' : 'no' }, n: { N: '1' } } }));
  const derive = (item: Record<string, unknown>) => ({ ...item, watched: item.state });
  assert.equal(await ensureTable(client, { ...withIndex, TableName: 'Derived' }, dataDir, undefined, derive), true);
  const out = await client.send(
    new QueryCommand({ TableName: 'Derived', IndexName: 'watched', KeyConditionExpression: 'watched = :w', ExpressionAttributeValues: { ':w': { S: 'yes' } } }),
  );
  assert.deepEqual(
    (out.Items ?? []).map((item) => item.id?.S).sort(),
    RECORDS.filter((id) => id.endsWith('0')),
  );
  assert.deepEqual(out.Items?.[0]?.n, { N: '1' }, 'attributes of other types are kept as they were');
});

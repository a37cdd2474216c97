// Tests for the local DynamoDB, driven through the real @aws-sdk/client-dynamodb: Query and Scan
// leave no LevelDB iterator open (an open one pins its version's files and memory), and LevelDB
// cuts its table files small (each is mapped while open).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { BatchWriteItemCommand, CreateTableCommand, DynamoDBClient, PutItemCommand, QueryCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { startLocalDynamo } from '#local/dynamodb.ts';
import { waitFor } from '../../support/wait.ts';

/** Serves `dynamo` on a free port and creates a table Records keyed by `id` there; the client to it. */
async function recordsTable(dynamo: ReturnType<typeof startLocalDynamo>): Promise<DynamoDBClient> {
  await new Promise<void>((resolve) => dynamo.server.listen(0, '127.0.0.1', resolve));
  const { port } = dynamo.server.address() as AddressInfo;
  const client = new DynamoDBClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, credentials: { accessKeyId: 'l', secretAccessKey: 'l' } });
  await client.send(
    new CreateTableCommand({
      TableName: 'Records',
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
    }),
  );
  return client;
}

test('queries and scans, whole or cut short by Limit, close their iterators', async () => {
  const dynamo = startLocalDynamo(await mkdtemp(join(tmpdir(), 'local-dynamo-')));
  try {
    const client = await recordsTable(dynamo);
    for (let i = 0; i < 20; i += 1) await client.send(new PutItemCommand({ TableName: 'Records', Item: { id: { S: `r${i}` }, n: { N: String(i) } } }));
    for (let i = 0; i < 20; i += 1) {
      assert.equal((await client.send(new ScanCommand({ TableName: 'Records', Limit: 5 }))).Items?.length, 5);
      assert.equal((await client.send(new ScanCommand({ TableName: 'Records' }))).Items?.length, 20);
      const found = await client.send(
        new QueryCommand({ TableName: 'Records', KeyConditionExpression: 'id = :id', ExpressionAttributeValues: { ':id': { S: `r${i}` } } }),
      );
      assert.equal(found.Items?.[0]?.n?.N, String(i));
    }
    assert.equal(dynamo.openResources(), 0);
  } finally {
    await new Promise((resolve) => dynamo.server.close(resolve));
  }
});

test("compactions cut LevelDB's table files at 1 MiB (each file's pages count in the RSS once read through its mapping)", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'local-dynamo-'));
  const dynamo = startLocalDynamo(dir);
  try {
    const client = await recordsTable(dynamo);
    // ~40 MB of 100 KB items: LevelDB flushes its 4 MB write buffer nine times. The first two flushes
    // go to empty deeper levels, the rest overlap them and stay at level 0, which LevelDB compacts
    // into level 1 once four files are there.
    const body = 'x'.repeat(100_000);
    for (let batch = 0; batch < 16; batch += 1)
      await client.send(
        new BatchWriteItemCommand({
          RequestItems: { Records: Array.from({ length: 25 }, (_, i) => ({ PutRequest: { Item: { id: { S: `r${i}-${batch}` }, body: { S: body } } } })) },
        }),
      );
    // LevelDB logs each compaction it ends.
    await waitFor("LevelDB's compaction of level 0", () => readFileSync(join(dir, 'LOG'), 'utf8').includes('Compacted 4@0'), 30_000);
  } finally {
    await new Promise((resolve) => dynamo.server.close(resolve));
  }
  const sizes = readdirSync(dir)
    .filter((name) => name.endsWith('.ldb'))
    .map((name) => statSync(join(dir, name)).size);
  const MiB = 1024 * 1024;
  // Level 1's files end at the first item past 1 MiB; level 0's are whole write buffers (~4 MB).
  assert.ok(sizes.filter((size) => size <= 1.2 * MiB).length >= 10, `compacted files: ${sizes.join(', ')}`);
  assert.deepEqual(
    sizes.filter((size) => size > 1.2 * MiB && size < 3.5 * MiB),
    [],
    `no 2 MiB files (LevelDB's default): ${sizes.join(', ')}`,
  );
});

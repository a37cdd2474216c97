// Tests for the local DynamoDB's compaction, driven through the real @aws-sdk/client-dynamodb:
// what many overwrites leave in LevelDB's files goes, what was written last stays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DynamoDBClient, GetItemCommand, PutItemCommand, QueryCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { startLocalDynamo } from '#local/dynamodb.ts';

async function fileBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir)) if (/\.(ldb|log)$/.test(name)) total += (await stat(join(dir, name))).size;
  return total;
}

test('compaction drops overwritten versions, also after queries and scans, and keeps the latest ones', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'local-dynamo-'));
  const dynamo = startLocalDynamo(dir);
  await new Promise<void>((resolve) => dynamo.server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = dynamo.server.address() as AddressInfo;
    const client = new DynamoDBClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, credentials: { accessKeyId: 'l', secretAccessKey: 'l' } });
    await client.send(new CreateTableCommand({
      TableName: 'Records', BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }], KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
    }));
    const payload = 'x'.repeat(8_000);
    for (let version = 0; version < 40; version += 1) {
      await Promise.all(Array.from({ length: 20 }, (_, i) => client.send(new PutItemCommand({
        TableName: 'Records', Item: { id: { S: `r${i}` }, version: { N: String(version) }, payload: { S: payload } },
      }))));
    }
    // Queries and scans between the writes: an iterator left open would keep its version's files.
    for (let i = 0; i < 20; i += 1) {
      await client.send(new ScanCommand({ TableName: 'Records', Limit: 5 }));
      await client.send(new QueryCommand({ TableName: 'Records', KeyConditionExpression: 'id = :id', ExpressionAttributeValues: { ':id': { S: `r${i}` } } }));
      await client.send(new PutItemCommand({ TableName: 'Records', Item: { id: { S: `r${i}` }, version: { N: '39' }, payload: { S: payload } } }));
    }
    assert.equal(dynamo.openResources(), 0);
    // Under 32 MB of growth the periodic check leaves the files alone.
    assert.equal(await dynamo.compactIfGrown(), false);
    const before = await fileBytes(dir);
    await dynamo.compact();
    const after = await fileBytes(dir);
    assert.ok(after < before / 4, `files ${before} bytes before compaction, ${after} after`);
    const item = await client.send(new GetItemCommand({ TableName: 'Records', Key: { id: { S: 'r7' } } }));
    assert.equal(item.Item?.version?.N, '39');
  } finally {
    await dynamo.stop();
    await new Promise((resolve) => dynamo.server.close(resolve));
  }
});

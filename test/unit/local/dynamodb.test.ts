// Tests for the local DynamoDB, driven through the real @aws-sdk/client-dynamodb: Query and Scan
// leave no LevelDB iterator open (an open one pins its version's files and memory).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DynamoDBClient, PutItemCommand, QueryCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { startLocalDynamo } from '#local/dynamodb.ts';

test('queries and scans, whole or cut short by Limit, close their iterators', async () => {
  const dynamo = startLocalDynamo(await mkdtemp(join(tmpdir(), 'local-dynamo-')));
  await new Promise<void>((resolve) => dynamo.server.listen(0, '127.0.0.1', resolve));
  try {
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

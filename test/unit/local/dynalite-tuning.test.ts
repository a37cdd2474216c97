// Tests for local/dynalite-tuning.ts through the real @aws-sdk/client-dynamodb: the item operations
// read table descriptions from memory, see a table rebuilt or deleted at once, and leave the shared
// description as LevelDB holds it; an item write and its index entries are one LevelDB batch, and
// every index reads as it did; item reads are LevelDB's synchronous get; the response checksum is
// buffer-crc32's; DescribeTable's ItemCount is the table's items, across writes and a reopening.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import {
  type AttributeValue,
  BatchGetItemCommand,
  BatchWriteItemCommand,
  CreateTableCommand,
  DeleteItemCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  UpdateItemCommand,
  UpdateTableCommand,
  waitUntilTableExists,
  waitUntilTableNotExists,
} from '@aws-sdk/client-dynamodb';
import { startLocalDynamo } from '#local/dynamodb.ts';
import {
  cacheExpressions,
  cacheTableDescriptions,
  DECODED_CHARS,
  type DynaliteStore,
  decodedValuesKept,
  directPages,
  streamedPages,
} from '#local/dynalite-tuning.ts';

type Store = DynaliteStore;

/** A local DynamoDB with its dynalite store in hand, and a count of the table descriptions read from LevelDB. */
async function started(dir?: string) {
  const stores = createRequire(import.meta.url)('dynalite/db') as { create: (options: unknown) => Store };
  const create = stores.create;
  let store: Store | undefined;
  stores.create = (options) => {
    store = create(options);
    return store;
  };
  let dynamo: ReturnType<typeof startLocalDynamo>;
  try {
    dynamo = startLocalDynamo(dir ?? (await mkdtemp(join(tmpdir(), 'local-dynamo-'))));
  } finally {
    stores.create = create;
  }
  const tuned = store as Store;
  let reads = 0;
  const get = tuned.tableDb.get;
  tuned.tableDb.get = (key, cb) => {
    reads += 1;
    return get.call(tuned.tableDb, key, cb);
  };
  await new Promise<void>((resolve) => dynamo.server.listen(0, '127.0.0.1', resolve));
  const { port } = dynamo.server.address() as AddressInfo;
  const client = new DynamoDBClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, credentials: { accessKeyId: 'l', secretAccessKey: 'l' } });
  const stored = (name: string) =>
    new Promise<unknown>((resolve, reject) => get.call(tuned.tableDb, name, (err, value) => (err ? reject(err) : resolve(value))));
  return {
    client,
    store: tuned,
    reads: () => reads,
    stored,
    close: () => new Promise((resolve) => dynamo.server.close(resolve)),
  };
}

/** Waits (the SDK's waiter) until the table is ACTIVE: at once here, where dynalite creates and updates tables without delay. */
const active = (client: DynamoDBClient, name: string) =>
  waitUntilTableExists({ client, maxWaitTime: 10, minDelay: 0.01, maxDelay: 0.1 }, { TableName: name }).then(() => undefined);

const createRecords = (client: DynamoDBClient, indexed: boolean, TableName = 'Records') =>
  client.send(
    new CreateTableCommand({
      TableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }, ...(indexed ? [{ AttributeName: 'tenant', AttributeType: 'S' as const }] : [])],
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      GlobalSecondaryIndexes: indexed
        ? [{ IndexName: 'byTenant', KeySchema: [{ AttributeName: 'tenant', KeyType: 'HASH' }], Projection: { ProjectionType: 'ALL' } }]
        : undefined,
    }),
  );

test('item operations read the table description once, and leave it as stored', async () => {
  const { client, reads, stored, store, close } = await started();
  try {
    await createRecords(client, true);
    await active(client, 'Records');
    const before = reads();
    for (let i = 0; i < 10; i += 1) await client.send(new PutItemCommand({ TableName: 'Records', Item: { id: { S: `r${i}` }, tenant: { S: 't' } } }));
    await client.send(
      new UpdateItemCommand({
        TableName: 'Records',
        Key: { id: { S: 'r1' } },
        UpdateExpression: 'SET n = :n',
        ConditionExpression: 'attribute_exists(id)',
        ExpressionAttributeValues: { ':n': { N: '1' } },
      }),
    );
    await client.send(new DeleteItemCommand({ TableName: 'Records', Key: { id: { S: 'r2' } } }));
    await client.send(
      new BatchWriteItemCommand({
        RequestItems: { Records: [{ PutRequest: { Item: { id: { S: 'b' }, tenant: { S: 't' } } } }, { DeleteRequest: { Key: { id: { S: 'r3' } } } }] },
      }),
    );
    assert.equal(
      (await client.send(new BatchGetItemCommand({ RequestItems: { Records: { Keys: [{ id: { S: 'r1' } }, { id: { S: 'b' } }] } } }))).Responses?.Records
        ?.length,
      2,
    );
    assert.equal((await client.send(new GetItemCommand({ TableName: 'Records', Key: { id: { S: 'r1' } } }))).Item?.n?.N, '1');
    const query = (index?: string) =>
      client.send(
        new QueryCommand({
          TableName: 'Records',
          IndexName: index,
          KeyConditionExpression: index ? 'tenant = :t' : 'id = :t',
          ExpressionAttributeValues: { ':t': { S: index ? 't' : 'r4' } },
          Limit: 3,
        }),
      );
    assert.equal((await query('byTenant')).Items?.length, 3);
    assert.equal((await query()).Items?.length, 1);
    assert.equal((await client.send(new ScanCommand({ TableName: 'Records', IndexName: 'byTenant' }))).Items?.length, 9);
    // One read from LevelDB (the first call's), then memory.
    assert.equal(reads() - before, 1);
    // What they all shared is what LevelDB holds.
    const cached = await new Promise((resolve, reject) => store.getTable('Records', true, (err, table) => (err ? reject(err) : resolve(table))));
    assert.deepEqual(cached, await stored('Records'));
  } finally {
    await close();
  }
});

test('a table rebuilt, updated or deleted is seen at once', async () => {
  const { client, close } = await started();
  try {
    await createRecords(client, true);
    await active(client, 'Records');
    await client.send(new PutItemCommand({ TableName: 'Records', Item: { id: { S: 'a' }, tenant: { S: 't' } } }));
    const byTenant = () =>
      client.send(
        new QueryCommand({
          TableName: 'Records',
          IndexName: 'byTenant',
          KeyConditionExpression: 'tenant = :t',
          ExpressionAttributeValues: { ':t': { S: 't' } },
        }),
      );
    assert.equal((await byTenant()).Items?.length, 1);

    // Deleted: gone for the item operations at once.
    await client.send(new DeleteTableCommand({ TableName: 'Records' }));
    await assert.rejects(byTenant(), { name: 'ResourceNotFoundException' });
    await assert.rejects(client.send(new GetItemCommand({ TableName: 'Records', Key: { id: { S: 'a' } } })), { name: 'ResourceNotFoundException' });
    await waitUntilTableNotExists({ client, maxWaitTime: 10, minDelay: 0.01, maxDelay: 0.1 }, { TableName: 'Records' });

    // Rebuilt without the index: the index is gone, the table empty.
    await createRecords(client, false);
    await active(client, 'Records');
    await assert.rejects(byTenant(), /does not have the specified index/);
    assert.equal((await client.send(new GetItemCommand({ TableName: 'Records', Key: { id: { S: 'a' } } }))).Item, undefined);
    await client.send(new PutItemCommand({ TableName: 'Records', Item: { id: { S: 'b' }, tenant: { N: '1' } } }));
    assert.equal((await client.send(new GetItemCommand({ TableName: 'Records', Key: { id: { S: 'b' } } }))).Item?.tenant?.N, '1');

    // Updated (to provisioned throughput): the item operations answer from the new description.
    await client.send(
      new UpdateTableCommand({ TableName: 'Records', BillingMode: 'PROVISIONED', ProvisionedThroughput: { ReadCapacityUnits: 7, WriteCapacityUnits: 3 } }),
    );
    await active(client, 'Records');
    const described = (await client.send(new DescribeTableCommand({ TableName: 'Records' }))).Table;
    assert.equal(described?.BillingModeSummary?.BillingMode, 'PROVISIONED');
    assert.equal(described?.ProvisionedThroughput?.ReadCapacityUnits, 7);
    assert.equal((await client.send(new GetItemCommand({ TableName: 'Records', Key: { id: { S: 'b' } } }))).Item?.tenant?.N, '1');
  } finally {
    await close();
  }
});

test('an item write is one LevelDB batch with its index entries, and every index reads as before', async () => {
  const { client, store, close } = await started();
  // Every LevelDB write the store makes from here on.
  const main = store.db as unknown as Record<'put' | 'del' | 'batch', (...args: unknown[]) => unknown>;
  const writes: string[] = [];
  for (const method of ['put', 'del', 'batch'] as const) {
    const original = main[method];
    main[method] = (...args: unknown[]) => {
      writes.push(method === 'batch' ? `batch:${(args[0] as Array<{ type: string }>).map((op) => op.type).join(',')}` : method);
      return original.apply(main, args);
    };
  }
  const query = async (index: string, attribute: string, value: string) =>
    (
      await client.send(
        new QueryCommand({
          TableName: 'Indexed',
          IndexName: index,
          KeyConditionExpression: '#k = :v',
          ExpressionAttributeNames: { '#k': attribute },
          ExpressionAttributeValues: { ':v': { S: value } },
        }),
      )
    ).Items;
  try {
    await client.send(
      new CreateTableCommand({
        TableName: 'Indexed',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: ['id', 'tenant', 'state'].map((name) => ({ AttributeName: name, AttributeType: 'S' as const })),
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        GlobalSecondaryIndexes: [
          { IndexName: 'byTenant', KeySchema: [{ AttributeName: 'tenant', KeyType: 'HASH' }], Projection: { ProjectionType: 'ALL' } },
          { IndexName: 'byState', KeySchema: [{ AttributeName: 'state', KeyType: 'HASH' }], Projection: { ProjectionType: 'KEYS_ONLY' } },
        ],
      }),
    );
    await active(client, 'Indexed');
    const written = async (write: () => Promise<unknown>) => {
      writes.length = 0;
      await write();
      return [...writes];
    };
    /** An update of item "a" (`#s` names its state). */
    const updateA = (expression: string, values?: Record<string, { S: string } | { N: string }>) =>
      client.send(
        new UpdateItemCommand({
          TableName: 'Indexed',
          Key: { id: { S: 'a' } },
          UpdateExpression: expression,
          ...(expression.includes('#s') && { ExpressionAttributeNames: { '#s': 'state' } }),
          ExpressionAttributeValues: values,
        }),
      );

    // A new item: its two index entries and the item, one batch.
    assert.deepEqual(
      await written(() => client.send(new PutItemCommand({ TableName: 'Indexed', Item: { id: { S: 'a' }, tenant: { S: 't' }, state: { S: 'NEW' } } }))),
      ['batch:put,put,put'],
    );
    // An attribute no key holds: the ALL projection and the item; the KEYS_ONLY entry is left as it was.
    assert.deepEqual(await written(() => updateA('SET n = :v', { ':v': { N: '1' } })), ['batch:put,put']);
    // A key that moves: the old entry removed, the new one written, with the item.
    assert.deepEqual(await written(() => updateA('SET #s = :v', { ':v': { S: 'DONE' } })), ['batch:del,put,put,put']);
    assert.deepEqual(await query('byState', 'state', 'NEW'), []);
    assert.deepEqual(await query('byState', 'state', 'DONE'), [{ id: { S: 'a' }, state: { S: 'DONE' } }]);
    assert.deepEqual(await query('byTenant', 'tenant', 't'), [{ id: { S: 'a' }, tenant: { S: 't' }, state: { S: 'DONE' }, n: { N: '1' } }]);
    // A key removed: its entry goes; a condition that fails writes nothing.
    await updateA('REMOVE #s');
    assert.deepEqual(await query('byState', 'state', 'DONE'), []);
    assert.deepEqual(
      await written(() =>
        assert.rejects(
          client.send(
            new PutItemCommand({ TableName: 'Indexed', Item: { id: { S: 'a' }, tenant: { S: 'u' } }, ConditionExpression: 'attribute_not_exists(id)' }),
          ),
          { name: 'ConditionalCheckFailedException' },
        ),
      ),
      [],
    );
    // A batch of writes and a delete: each item with its entries; the deleted item leaves no entry behind.
    await client.send(
      new BatchWriteItemCommand({
        RequestItems: {
          Indexed: [{ PutRequest: { Item: { id: { S: 'b' }, tenant: { S: 't' }, state: { S: 'NEW' } } } }, { DeleteRequest: { Key: { id: { S: 'a' } } } }],
        },
      }),
    );
    assert.deepEqual(await query('byTenant', 'tenant', 't'), [{ id: { S: 'b' }, tenant: { S: 't' }, state: { S: 'NEW' } }]);
    assert.deepEqual(await written(() => client.send(new DeleteItemCommand({ TableName: 'Indexed', Key: { id: { S: 'b' } } }))), ['batch:del,del,del']);
    assert.deepEqual(await query('byTenant', 'tenant', 't'), []);
    assert.deepEqual(await query('byState', 'state', 'NEW'), []);
    // A table without indexes: the item's own write, as dynalite makes it.
    await createRecords(client, false);
    await active(client, 'Records');
    assert.deepEqual(await written(() => client.send(new PutItemCommand({ TableName: 'Records', Item: { id: { S: 'r' } } }))), ['put']);
  } finally {
    await close();
  }
});

test("DescribeTable's ItemCount is the items a Scan counts, after every kind of write and across a reopening", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'local-dynamo-'));
  const scanned = async (client: DynamoDBClient, table: string) => {
    let count = 0;
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await client.send(new ScanCommand({ TableName: table, Select: 'COUNT', Limit: 3, ExclusiveStartKey: start }));
      count += page.Count ?? 0;
      start = page.LastEvaluatedKey;
    } while (start);
    return count;
  };
  const itemCount = async (client: DynamoDBClient, table: string) => (await client.send(new DescribeTableCommand({ TableName: table }))).Table?.ItemCount;
  /** The count DescribeTable answers, once it is checked against a Scan's. */
  const counted = async (client: DynamoDBClient, table: string) => {
    const count = await itemCount(client, table);
    assert.equal(count, await scanned(client, table), `${table}: DescribeTable's ItemCount against a Scan's count`);
    return count;
  };
  let { client, close } = await started(dir);
  try {
    await createRecords(client, true);
    await active(client, 'Records');
    assert.equal(await counted(client, 'Records'), 0);
    const put = (id: string, condition?: string) =>
      client.send(new PutItemCommand({ TableName: 'Records', Item: { id: { S: id }, tenant: { S: 't' } }, ConditionExpression: condition }));
    // New items count; an item written again, or a write whose condition fails, does not.
    await Promise.all(['a', 'b', 'c', 'd'].map((id) => put(id)));
    assert.equal(await counted(client, 'Records'), 4);
    await put('a');
    await assert.rejects(put('b', 'attribute_not_exists(id)'), { name: 'ConditionalCheckFailedException' });
    assert.equal(await counted(client, 'Records'), 4);
    // An update makes an item that was not there, or changes one that was.
    const update = (id: string) =>
      client.send(
        new UpdateItemCommand({
          TableName: 'Records',
          Key: { id: { S: id } },
          UpdateExpression: 'SET n = :n',
          ExpressionAttributeValues: { ':n': { N: '1' } },
        }),
      );
    await update('e');
    await update('a');
    assert.equal(await counted(client, 'Records'), 5);
    // A delete of an item counts; of none, not; nor one whose condition fails.
    await client.send(new DeleteItemCommand({ TableName: 'Records', Key: { id: { S: 'c' } } }));
    await client.send(new DeleteItemCommand({ TableName: 'Records', Key: { id: { S: 'nothing' } } }));
    await assert.rejects(
      client.send(new DeleteItemCommand({ TableName: 'Records', Key: { id: { S: 'd' } }, ConditionExpression: 'attribute_not_exists(id)' })),
      { name: 'ConditionalCheckFailedException' },
    );
    assert.equal(await counted(client, 'Records'), 4);
    // A batch of puts and deletes, new and old.
    await client.send(
      new BatchWriteItemCommand({
        RequestItems: {
          Records: [
            { PutRequest: { Item: { id: { S: 'f' }, tenant: { S: 't' } } } },
            { PutRequest: { Item: { id: { S: 'a' }, tenant: { S: 'u' } } } },
            { DeleteRequest: { Key: { id: { S: 'b' } } } },
            { DeleteRequest: { Key: { id: { S: 'none' } } } },
          ],
        },
      }),
    );
    assert.equal(await counted(client, 'Records'), 4);
    // A table without indexes counts as well.
    await createRecords(client, false, 'Plain');
    await active(client, 'Plain');
    for (const id of ['x', 'y', 'x']) await client.send(new PutItemCommand({ TableName: 'Plain', Item: { id: { S: id } } }));
    assert.equal(await counted(client, 'Plain'), 2);

    // Reopened: counted from what LevelDB holds.
    await close();
    ({ client, close } = await started(dir));
    assert.equal(await counted(client, 'Records'), 4);
    assert.equal(await counted(client, 'Plain'), 2);
    await put('g');
    assert.equal(await counted(client, 'Records'), 5);

    // Deleted and made again: empty.
    await client.send(new DeleteTableCommand({ TableName: 'Records' }));
    await waitUntilTableNotExists({ client, maxWaitTime: 10, minDelay: 0.01, maxDelay: 0.1 }, { TableName: 'Records' });
    await createRecords(client, false);
    await active(client, 'Records');
    assert.equal(await counted(client, 'Records'), 0);
    await put('h');
    assert.equal(await counted(client, 'Records'), 1);
  } finally {
    await close();
  }
});

test("item reads take LevelDB's synchronous get, and every answer is as before", async () => {
  const { client, store, close } = await started();
  // The two ways classic-level reads a key: through libuv's thread pool (_get), or at once (_getSync).
  const level = store.db as unknown as Record<'_get' | '_getSync', (...args: unknown[]) => unknown>;
  const calls = { _get: 0, _getSync: 0 };
  for (const method of ['_get', '_getSync'] as const) {
    const original = level[method];
    level[method] = (...args: unknown[]) => {
      calls[method] += 1;
      return original.apply(level, args);
    };
  }
  const item = { id: { S: 'a' }, tenant: { S: 't' }, n: { N: '1' } };
  const get = async (id: string) => (await client.send(new GetItemCommand({ TableName: 'Records', Key: { id: { S: id } }, ConsistentRead: true }))).Item;
  try {
    await createRecords(client, true);
    await active(client, 'Records');
    calls._get = 0;
    calls._getSync = 0;
    // A conditional create reads the key first: missing, so it writes; found, so the condition fails.
    await client.send(new PutItemCommand({ TableName: 'Records', Item: item, ConditionExpression: 'attribute_not_exists(id)' }));
    await assert.rejects(client.send(new PutItemCommand({ TableName: 'Records', Item: item, ConditionExpression: 'attribute_not_exists(id)' })), {
      name: 'ConditionalCheckFailedException',
    });
    assert.deepEqual(await get('a'), item);
    assert.equal(await get('missing'), undefined);
    // An update reads the item it changes (its condition, its old index entries) and sees the write before it.
    const updated = await client.send(
      new UpdateItemCommand({
        TableName: 'Records',
        Key: { id: { S: 'a' } },
        UpdateExpression: 'SET n = n + :one',
        ConditionExpression: 'n = :one',
        ExpressionAttributeValues: { ':one': { N: '1' } },
        ReturnValues: 'ALL_NEW',
      }),
    );
    assert.equal(updated.Attributes?.n?.N, '2');
    const batch = await client.send(new BatchGetItemCommand({ RequestItems: { Records: { Keys: [{ id: { S: 'a' } }, { id: { S: 'missing' } }] } } }));
    assert.deepEqual(batch.Responses?.Records, [{ ...item, n: { N: '2' } }]);
    const deleted = await client.send(new DeleteItemCommand({ TableName: 'Records', Key: { id: { S: 'a' } }, ReturnValues: 'ALL_OLD' }));
    assert.equal(deleted.Attributes?.n?.N, '2');
    assert.equal(await get('a'), undefined);
    assert.equal(calls._get, 0, 'no item read went through the thread pool');
    assert.ok(calls._getSync >= 8, `every item read was synchronous (${calls._getSync})`);
  } finally {
    await close();
  }
});

test('the response checksum is the one buffer-crc32 computes', () => {
  const fromDynalite = createRequire(createRequire(import.meta.url).resolve('dynalite'));
  const crc32 = fromDynalite('buffer-crc32') as { unsigned: (input: unknown, previous?: unknown) => number; signed: (input: unknown) => number };
  // Patched by now (startLocalDynamo ran above, or this file's import of it did not: then patch).
  for (const body of ['', '{"Items":[]}', JSON.stringify({ a: 'é✓'.repeat(1000) })]) {
    assert.equal(crc32.unsigned(body), crc32.signed(body) >>> 0);
  }
});

test('a store not shaped as the cache expects fails loudly', () => {
  assert.throws(() => cacheTableDescriptions({} as DynaliteStore), /dynalite is not as local\/dynalite-tuning.ts expects/);
  const getTable = (_name: string, _checkStatus: unknown, _cb?: unknown) => undefined;
  const lifecycleManager = { getState: () => 'open' };
  assert.throws(
    () => cacheTableDescriptions({ getTable, lifecycleManager, tableDb: { get() {} } } as unknown as DynaliteStore),
    /store\.tableDb\.put is not a function/,
  );
  const tableDb = { get() {}, put() {}, del() {}, batch() {} };
  assert.throws(
    () => cacheTableDescriptions({ getTable: (_name: string, cb: unknown) => cb, lifecycleManager, tableDb } as unknown as DynaliteStore),
    /getTable\(name, checkStatus, cb\)/,
  );
});

test("Query and Scan pages read from LevelDB's iterator answer as dynalite's streams did, page by page", async () => {
  const { client, store, close } = await started();
  try {
    await client.send(
      new CreateTableCommand({
        TableName: 'Pages',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'N' },
          { AttributeName: 'group', AttributeType: 'S' },
          { AttributeName: 'seq', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: 'byGroup',
            KeySchema: [
              { AttributeName: 'group', KeyType: 'HASH' },
              { AttributeName: 'seq', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['colour', 'n'] },
          },
          { IndexName: 'keysOfGroup', KeySchema: [{ AttributeName: 'group', KeyType: 'HASH' }], Projection: { ProjectionType: 'KEYS_ONLY' } },
          { IndexName: 'all', KeySchema: [{ AttributeName: 'seq', KeyType: 'HASH' }], Projection: { ProjectionType: 'ALL' } },
        ],
      }),
    );
    await active(client, 'Pages');
    // A seeded generator: the same items and requests every run.
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const colours = ['red', 'green', 'blue'];
    const writes = [];
    for (let i = 0; i < 260; i += 1) {
      const item: Record<string, { S: string } | { N: string }> = {
        pk: { S: `p${random(4)}` },
        sk: { N: String(i) },
        group: { S: `g${random(3)}` },
        seq: { S: `s${String(random(1000)).padStart(4, '0')}-${i}` },
        colour: { S: colours[random(3)] as string },
        n: { N: String(random(50)) },
      };
      // A few large items, so that pages also end at dynalite's 1 MB.
      if (i % 40 === 0) item.blob = { S: 'x'.repeat(300_000) };
      writes.push(client.send(new PutItemCommand({ TableName: 'Pages', Item: item })));
    }
    await Promise.all(writes);

    type Request = Record<string, unknown>;
    const requests: Array<{ kind: 'query' | 'scan'; input: Request }> = [];
    for (let i = 0; i < 120; i += 1) {
      const index = [undefined, 'byGroup', 'keysOfGroup', 'all'][random(4)];
      const common: Request = {
        TableName: 'Pages',
        IndexName: index,
        Limit: [undefined, 1, 3, 10, 50, 300][random(6)],
        ReturnConsumedCapacity: [undefined, 'TOTAL', 'INDEXES', 'NONE'][random(4)],
        ...(random(3) === 0 ? { FilterExpression: 'colour = :c', ExpressionAttributeValues: { ':c': { S: colours[random(3)] } } } : {}),
        ...(random(3) === 0 ? { ProjectionExpression: index === 'keysOfGroup' ? 'pk, sk' : 'pk, sk, n' } : {}),
        ...(random(5) === 0 ? { Select: 'COUNT' } : {}),
      };
      if (common.Select && common.ProjectionExpression) delete common.Select;
      if (random(3) === 0 && index !== 'all') {
        requests.push({ kind: 'scan', input: { ...common, ...(random(2) === 0 ? { Segment: random(3), TotalSegments: 3 } : {}) } });
        continue;
      }
      const values = { ...(common.ExpressionAttributeValues as Request | undefined) };
      let condition: string;
      if (index === undefined) {
        values[':h'] = { S: `p${random(4)}` };
        const range = ['', ' AND sk > :r', ' AND sk <= :r', ' AND sk BETWEEN :r AND :r2', ' AND sk = :r'][random(5)] as string;
        if (range) values[':r'] = { N: String(random(200)) };
        if (range.includes(':r2')) values[':r2'] = { N: String(200 + random(60)) };
        condition = `pk = :h${range}`;
      } else if (index === 'all') {
        values[':h'] = { S: 'no-such-seq' };
        condition = 'seq = :h';
      } else {
        values[':h'] = { S: `g${random(3)}` };
        const range = index === 'byGroup' ? (['', ' AND begins_with(seq, :r)', ' AND seq >= :r'][random(3)] as string) : '';
        if (range) values[':r'] = { S: `s0${random(10)}` };
        condition = `#g = :h${range}`;
        common.ExpressionAttributeNames = { '#g': 'group' };
      }
      requests.push({
        kind: 'query',
        input: { ...common, KeyConditionExpression: condition, ExpressionAttributeValues: values, ScanIndexForward: random(3) !== 0 },
      });
    }

    /** Every page of the request, each started where the last one ended. */
    const pages = async ({ kind, input }: (typeof requests)[number]) => {
      const answers: unknown[] = [];
      let start: Record<string, unknown> | undefined;
      for (let page = 0; page < 40; page += 1) {
        const request = { ...input, ExclusiveStartKey: start } as never;
        const out = kind === 'query' ? await client.send(new QueryCommand(request)) : await client.send(new ScanCommand(request));
        const { $metadata: _metadata, ...answer } = out;
        answers.push(answer);
        start = out.LastEvaluatedKey;
        if (!start) break;
      }
      return answers;
    };
    let pagesRead = 0;
    for (const request of requests) {
      const direct = await pages(request);
      streamedPages(store);
      const streamed = await pages(request);
      directPages(store, 128, 1024 * 1024);
      assert.deepEqual(direct, streamed, JSON.stringify(request.input));
      pagesRead += direct.length;
    }
    // The requests did page (many pages, some cut at 1 MB), and the direct path was the one in use.
    assert.ok(pagesRead > 300, `only ${pagesRead} pages`);
    // Values read again came decoded from the cache (the answers above compared equal all the same), which stayed within its bound.
    const kept = decodedValuesKept();
    assert.ok(kept.hits > 1000 && kept.entries > 0 && kept.chars <= DECODED_CHARS, JSON.stringify(kept));
    const db = createRequire(import.meta.url)('dynalite/db') as { queryTable: { name: string } };
    assert.notEqual(db.queryTable.name, 'queryTable');
  } finally {
    await close();
  }
});

test('a request whose expressions were parsed before is answered as a parse of its own would answer it', async () => {
  const { client, close } = await started();
  try {
    for (const TableName of ['Parsed', 'Kept']) {
      await client.send(
        new CreateTableCommand({
          TableName,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [
            { AttributeName: 'valueOf', AttributeType: 'S' },
            { AttributeName: 'sk', AttributeType: 'N' },
          ],
          KeySchema: [
            { AttributeName: 'valueOf', KeyType: 'HASH' },
            { AttributeName: 'sk', KeyType: 'RANGE' },
          ],
        }),
      );
      await active(client, TableName);
    }
    // The hash key named as a property every plain object has: the trees' null-prototype maps must stay so.
    const item = (hash: string, sk: number) => ({
      valueOf: { S: hash },
      sk: { N: String(sk) },
      name: { S: `n${sk % 3}` },
      tags: { L: [{ S: 'a' }, { S: `t${sk}` }] },
      nested: { M: { count: { N: String(sk * 2) }, constructor: { S: 'x' } } },
    });
    const v = (value: string) => ({ S: value });
    const n = (value: number) => ({ N: String(value) });
    // Reads and writes (kind, input without TableName), the same expressions again and again, as the product sends them.
    const requests: Array<[string, Record<string, unknown>]> = [];
    for (let i = 0; i < 12; i += 1) {
      requests.push(['put', { Item: item('p', i), ConditionExpression: 'attribute_not_exists(valueOf)' }]);
      requests.push(['put', { Item: item(i % 2 ? 'p' : 'q', i % 4), ConditionExpression: 'attribute_not_exists(valueOf)' }]);
    }
    // Updates as the product sends them: the same expressions, other values each time (a timestamp, a count).
    const update = (sk: number, values: Record<string, unknown>) =>
      [
        'update',
        {
          Key: { valueOf: v('p'), sk: n(sk) },
          UpdateExpression: 'ADD nested.#c :one SET #t = :at, tags = list_append(tags, :more), #n = if_not_exists(#n, :at) REMOVE gone',
          ConditionExpression: 'attribute_exists(valueOf) AND #n <> :never',
          ExpressionAttributeNames: { '#c': 'count', '#t': 'takenAt', '#n': 'name' },
          ExpressionAttributeValues: { ':one': n(1), ':at': v(`2026-12-04T10:00:0${sk}Z`), ':more': { L: [v(`m${sk}`)] }, ':never': v('n1'), ...values },
          ReturnValues: 'ALL_NEW',
        },
      ] as [string, Record<string, unknown>];
    for (let i = 0; i < 6; i += 1) requests.push(update(i % 4, {}));
    requests.push(
      // A value that does not validate, in a set kept per its types; a value of another type (ADD of a string).
      update(1, { ':one': { N: 'one' } }),
      update(1, { ':one': v('1') }),
      update(2, { ':more': v('not a list') }),
      update(3, {}),
    );
    requests.push(
      ['query', { KeyConditionExpression: 'valueOf = :h', ExpressionAttributeValues: { ':h': v('p') } }],
      // The key attribute second: dynalite turns this tree around as it reads it.
      ['query', { KeyConditionExpression: ':h = valueOf AND :s < sk', ExpressionAttributeValues: { ':h': v('p'), ':s': n(3) } }],
      ['query', { KeyConditionExpression: 'valueOf = :h AND sk BETWEEN :a AND :b', ExpressionAttributeValues: { ':h': v('p'), ':a': n(2), ':b': n(9) } }],
      [
        'query',
        {
          KeyConditionExpression: '#k = :h',
          FilterExpression: '(contains(tags, :t) OR size(tags) > :two) AND NOT #n IN (:n0, :n1) AND attribute_exists(nested.#c)',
          ProjectionExpression: 'valueOf, sk, tags[1], nested.#c, #n',
          ExpressionAttributeNames: { '#k': 'valueOf', '#n': 'name', '#c': 'constructor' },
          ExpressionAttributeValues: { ':h': v('p'), ':t': v('t4'), ':two': n(2), ':n0': v('n0'), ':n1': v('n1') },
        },
      ],
      [
        'scan',
        { FilterExpression: 'nested.#c = :x AND sk >= :s', ExpressionAttributeNames: { '#c': 'count' }, ExpressionAttributeValues: { ':x': n(8), ':s': n(0) } },
      ],
      ['get', { Key: { valueOf: v('p'), sk: n(4) }, ProjectionExpression: 'tags[0], nested' }],
      [
        'delete',
        {
          Key: { valueOf: v('q'), sk: n(0) },
          ConditionExpression: '#n = :n',
          ExpressionAttributeNames: { '#n': 'name' },
          ExpressionAttributeValues: { ':n': v('n2') },
        },
      ],
      [
        'delete',
        {
          Key: { valueOf: v('q'), sk: n(0) },
          ConditionExpression: '#n = :n',
          ExpressionAttributeNames: { '#n': 'name' },
          ExpressionAttributeValues: { ':n': v('n0') },
        },
      ],
      // BETWEEN's bounds and attribute_type's type name are read at parse: such a set is kept per values.
      ['query', { KeyConditionExpression: 'valueOf = :h AND sk BETWEEN :a AND :b', ExpressionAttributeValues: { ':h': v('p'), ':a': n(9), ':b': n(2) } }],
      ['scan', { FilterExpression: 'attribute_type(#n, :ty)', ExpressionAttributeNames: { '#n': 'name' }, ExpressionAttributeValues: { ':ty': v('S') } }],
      ['scan', { FilterExpression: 'attribute_type(#n, :ty)', ExpressionAttributeNames: { '#n': 'name' }, ExpressionAttributeValues: { ':ty': v('Q') } }],
      // A set too large to keep: parsed every time.
      [
        'query',
        {
          KeyConditionExpression: 'valueOf = :h',
          FilterExpression: '#n <> :long',
          ExpressionAttributeNames: { '#n': 'name' },
          ExpressionAttributeValues: { ':h': v('p'), ':long': v('x'.repeat(3000)) },
        },
      ],
      // Refused: a name not used, an expression that does not parse.
      ['query', { KeyConditionExpression: 'valueOf = :h', ExpressionAttributeNames: { '#unused': 'x' }, ExpressionAttributeValues: { ':h': v('p') } }],
      ['query', { KeyConditionExpression: 'valueOf = = :h', ExpressionAttributeValues: { ':h': v('p') } }],
    );
    const send = async (table: string, [kind, input]: [string, Record<string, unknown>]) => {
      const request = { TableName: table, ...input } as never;
      try {
        const out =
          kind === 'put'
            ? await client.send(new PutItemCommand(request))
            : kind === 'delete'
              ? await client.send(new DeleteItemCommand(request))
              : kind === 'update'
                ? await client.send(new UpdateItemCommand(request))
                : kind === 'get'
                  ? await client.send(new GetItemCommand(request))
                  : kind === 'scan'
                    ? await client.send(new ScanCommand(request))
                    : await client.send(new QueryCommand(request));
        const { $metadata: _metadata, ...answer } = out;
        return answer;
      } catch (error) {
        return { error: (error as Error).name, message: (error as Error).message };
      }
    };
    cacheExpressions(false);
    const parsed = [];
    for (const request of requests) parsed.push(await send('Parsed', request));
    cacheExpressions(true);
    for (const [i, request] of requests.entries()) {
      const reads = ['put', 'delete', 'update'].includes(request[0]) ? 1 : 3;
      for (let time = 0; time < reads; time += 1) assert.deepEqual(await send('Kept', request), parsed[i], `${JSON.stringify(request)}, time ${time + 1}`);
    }
    // The answers said something: items found, a condition failed, a request refused.
    assert.ok(parsed.some((answer) => ((answer as { Items?: unknown[] }).Items?.length ?? 0) > 2));
    assert.ok(parsed.some((answer) => (answer as { error?: string }).error === 'ConditionalCheckFailedException'));
    assert.ok(parsed.some((answer) => (answer as { error?: string }).error === 'ValidationException'));
  } finally {
    cacheExpressions(true);
    await close();
  }
});

// A data folder made by an earlier version keeps its tables as they were then; a template that
// has since gained a global secondary index (the health sweep's `monitored` index, say) would
// find it missing, and the local DynamoDB (dynalite) cannot add an index to a table. So at start,
// a table whose indexes differ from the template's is rebuilt: its items are first written to a
// file in the data folder, then the table is made anew and the items put back, and only then is
// the file removed. A start that finds such a file (the previous one was killed half-way) puts
// its items back before anything else reads the table, so no record is lost either way. Each item
// put back gets the attributes the template's indexes are keyed by that its store derives (the
// tenant-scoped list indexes' keys, lib/store/dynamo.ts withShardedKeys): the back-fill of records
// written before an index existed.
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BatchWriteItemCommand,
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  ScanCommand,
  type AttributeValue,
  type CreateTableCommandInput,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';

type Item = Record<string, AttributeValue>;

const backupPath = (dataDir: string, table: string) => join(dataDir, `rebuild-${table}.json`);

const indexNames = (indexes: Array<{ IndexName?: string }> | undefined) =>
  (indexes ?? [])
    .map((index) => index.IndexName ?? '')
    .sort()
    .join(',');

async function scanAll(client: DynamoDBClient, table: string): Promise<Item[]> {
  const items: Item[] = [];
  let start: Item | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: table, ConsistentRead: true, ExclusiveStartKey: start }));
    items.push(...((page.Items ?? []) as Item[]));
    start = page.LastEvaluatedKey as Item | undefined;
  } while (start);
  return items;
}

/** What a rebuild does to each item it puts back: the attributes the new indexes are keyed by, derived from the rest. */
export type PrepareItem = (item: Record<string, unknown>) => Record<string, unknown>;

/** The item with the string attributes `prepare` adds or changes, given the item's string attributes (index keys are strings). */
function prepared(item: Item, prepare: PrepareItem): Item {
  const strings = Object.fromEntries(Object.entries(item).flatMap(([name, value]) => (value.S === undefined ? [] : [[name, value.S]])));
  const changed = Object.entries(prepare(strings)).filter(([name, value]) => typeof value === 'string' && strings[name] !== value);
  return changed.length ? { ...item, ...Object.fromEntries(changed.map(([name, value]) => [name, { S: value as string }])) } : item;
}

async function putAll(client: DynamoDBClient, table: string, items: Item[], prepare?: PrepareItem): Promise<void> {
  const ready = prepare ? items.map((item) => prepared(item, prepare)) : items;
  for (let i = 0; i < ready.length; i += 25) {
    let pending = ready.slice(i, i + 25).map((item) => ({ PutRequest: { Item: item } }));
    while (pending.length) {
      const out = await client.send(new BatchWriteItemCommand({ RequestItems: { [table]: pending } }));
      pending = (out.UnprocessedItems?.[table] ?? []) as typeof pending;
    }
  }
}

/** The table's status, or undefined once it is gone. */
async function statusOf(client: DynamoDBClient, table: string): Promise<string | undefined> {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: table }))).Table?.TableStatus;
  } catch (error) {
    if ((error as Error).name === 'ResourceNotFoundException') return undefined;
    throw error;
  }
}

/** Deleting and creating a table take effect after the call returns (DELETING, CREATING): wait for the end state. */
async function settled(client: DynamoDBClient, table: string, wanted: 'ACTIVE' | undefined): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await statusOf(client, table)) !== wanted) {
    if (Date.now() > deadline) throw new Error(`Table ${table} did not become ${wanted ?? 'deleted'} within a minute`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function recreate(client: DynamoDBClient, input: CreateTableCommandInput): Promise<void> {
  const table = input.TableName as string;
  await client.send(new DeleteTableCommand({ TableName: table })).catch((error: Error) => {
    if (error.name !== 'ResourceNotFoundException') throw error;
  });
  await settled(client, table, undefined);
  await client.send(new CreateTableCommand(input));
  await settled(client, table, 'ACTIVE');
}

/**
 * Creates the table as the template defines it, or brings an existing one to the template's
 * indexes, calling `beforeRebuild` first (to note what must follow a rebuild, should this start be
 * killed before it). Returns whether the table's indexes were rebuilt (its items are all back in it).
 */
export async function ensureTable(
  client: DynamoDBClient,
  input: CreateTableCommandInput,
  dataDir: string,
  beforeRebuild?: () => void,
  prepare?: PrepareItem,
): Promise<boolean> {
  const table = input.TableName as string;
  const backup = backupPath(dataDir, table);
  if (existsSync(backup)) {
    // The last start was killed while rebuilding this table: the file holds every item.
    await recreate(client, input);
    await putAll(client, table, JSON.parse(readFileSync(backup, 'utf8')) as Item[], prepare);
    rmSync(backup);
    return true;
  }
  const existing = await client.send(new DescribeTableCommand({ TableName: table })).catch((error: Error) => {
    if (error.name === 'ResourceNotFoundException') return undefined;
    throw error;
  });
  if (!existing) {
    await client.send(new CreateTableCommand(input));
    await settled(client, table, 'ACTIVE');
    return false;
  }
  if (indexNames(existing.Table?.GlobalSecondaryIndexes) === indexNames(input.GlobalSecondaryIndexes)) return false;
  beforeRebuild?.();
  const items = await scanAll(client, table);
  writeFileSync(`${backup}.tmp`, JSON.stringify(items), { mode: 0o600 });
  renameSync(`${backup}.tmp`, backup);
  await recreate(client, input);
  await putAll(client, table, items, prepare);
  rmSync(backup);
  return true;
}

// One DynamoDB document client per process (created once at module scope, reused across Lambda
// invocations). The endpoint comes from the SDK's standard configuration (AWS_ENDPOINT_URL_DYNAMODB
// locally), so nothing here knows whether it runs on AWS or on the local stand-in.
import { ALL_TENANTS, type Page, type TenantScope } from '#lib/sol/paging.ts';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  type BatchGetCommandOutput,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
  type QueryCommandInput,
  type ScanCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { awsClient } from '#lib/aws-client.ts';
import type { ListIndexes, ListPlan } from '#lib/sol/plan.ts';

// The scope and page types are the API's (SOL013 paging); the stores speak them.
export { ALL_TENANTS, type Page, type TenantScope };

let client: DynamoDBDocumentClient | undefined;

export function documentClient(): DynamoDBDocumentClient {
  client ??= DynamoDBDocumentClient.from(awsClient(new DynamoDBClient({})), {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  return client;
}

export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Environment variable ${name} is not set`);
  return value;
}

/** A create whose id is taken already: the conditional put's failure, named for what it means. */
export class RecordExistsError extends Error {
  constructor(
    readonly table: string,
    readonly id: string,
    options?: { cause?: unknown },
  ) {
    super(`A record with id ${id} exists already in ${table}`, options);
    this.name = 'RecordExistsError';
  }
}

export function isConditionFailure(error: unknown): boolean {
  return error instanceof RecordExistsError || (error instanceof Error && error.name === 'ConditionalCheckFailedException');
}

/**
 * Runs a conditional write and returns what it returns, or undefined when its condition did not
 * hold: for these stores a failed condition is an answer ("not in that state"), not a fault.
 */
export async function ifConditionHeld<T>(write: () => Promise<T>): Promise<T | undefined> {
  try {
    return await write();
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** Runs a conditional write; false when its condition did not hold. */
export async function conditionHeld(write: () => Promise<unknown>): Promise<boolean> {
  return (
    (await ifConditionHeld(async () => {
      await write();
      return true;
    })) ?? false
  );
}

export interface UpdateParts {
  expression: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
}

/**
 * Builds `SET a = :a, ... REMOVE b, ...` (a clause with nothing in it left out) with placeholders
 * for every attribute, on top of the clauses, names and values the caller already has (conditions,
 * counters).
 */
export function updateExpression(
  base: { sets: string[]; names?: Record<string, string>; values: Record<string, unknown> },
  set: Record<string, unknown>,
  remove: readonly string[] = [],
): UpdateParts {
  const names = { ...base.names };
  const values = { ...base.values };
  const sets = [...base.sets];
  Object.entries(set).forEach(([attribute, value], i) => {
    names[`#s${i}`] = attribute;
    values[`:s${i}`] = value;
    sets.push(`#s${i} = :s${i}`);
  });
  const removes = remove.map((attribute, i) => {
    names[`#r${i}`] = attribute;
    return `#r${i}`;
  });
  const clauses = [sets.length ? `SET ${sets.join(', ')}` : '', removes.length ? `REMOVE ${removes.join(', ')}` : ''];
  return { expression: clauses.filter(Boolean).join(' '), names, values };
}

/**
 * A store's list page: in list order, of the scope's records or of those `plan` pins through one of
 * the store's list indexes; `read`, when given, only these attributes of each (lib/sol/listing.ts).
 */
export type ListPage<R> = (
  scope: TenantScope,
  limit: number,
  after?: Record<string, string | number>,
  plan?: ListPlan,
  read?: readonly string[],
) => Promise<Page<R>>;

/**
 * A ProjectionExpression of the attributes (top-level names, or dotted document paths) a list page
 * reads, with its name placeholders (`#p0`...), always with `id` and `tenantId` (and `also`, such as
 * an index's sort key, which a page resumes after); nothing when `read` is undefined (whole items).
 */
export function projection(
  read: readonly string[] | undefined,
  also: readonly string[] = [],
): { ProjectionExpression?: string; ExpressionAttributeNames?: Record<string, string> } {
  if (read === undefined) return {};
  const names: Record<string, string> = {};
  const placeholders = new Map<string, string>();
  const paths = [...new Set(['id', 'tenantId', ...also, ...read])].map((path) =>
    path
      .split('.')
      .map((name) => {
        let placeholder = placeholders.get(name);
        if (placeholder === undefined) {
          placeholder = `#p${placeholders.size}`;
          placeholders.set(name, placeholder);
          names[placeholder] = name;
        }
        return placeholder;
      })
      .join('.'),
  );
  return { ProjectionExpression: paths.join(', '), ExpressionAttributeNames: names };
}

/**
 * An index keyed as `byTenant` (tenantId, createdSeq) whose projection holds only `attributes`
 * (besides the keys): a list page that reads none but these is read there, at a fraction of the
 * whole records' read units, and gets the same items in the same order, with the same markers.
 */
export interface ListSummary {
  index: string;
  /** The record's attributes the index holds: its keys (id, tenantId, createdSeq) and its projection's. */
  attributes: readonly string[];
}

/**
 * One page of a tenant's records from a table's `byTenant` index (or `index`, one keyed as it is:
 * ListSummary), in its sort-key order; for ALL_TENANTS, one page of a Scan of the table (in no
 * particular order) of the records that have a tenant (marker items have none). `after` may be a
 * key of either shape (the record's id, tenant and index sort key, as list markers carry): a Scan
 * resumes after its `id`. `read`: only these attributes of each record (projection).
 */
export async function tenantPage<T>(
  table: string,
  scope: TenantScope,
  limit: number,
  after?: Record<string, string | number>,
  read?: readonly string[],
  index = 'byTenant',
): Promise<Page<T>> {
  const out =
    scope === ALL_TENANTS
      ? await documentClient().send(
          new ScanCommand({
            TableName: table,
            FilterExpression: 'attribute_exists(tenantId)',
            Limit: limit,
            ExclusiveStartKey: after && { id: after.id },
            ...projection(read),
          }),
        )
      : await documentClient().send(
          new QueryCommand({
            TableName: table,
            IndexName: index,
            KeyConditionExpression: 'tenantId = :t',
            ExpressionAttributeValues: { ':t': scope },
            Limit: limit,
            ExclusiveStartKey: after,
            ...projection(read),
          }),
        );
  return { items: (out.Items ?? []) as T[], after: out.LastEvaluatedKey as Page<T>['after'] };
}

/**
 * A secondary index a list can read some keys of, in the table's list order (its sort key). Two kinds:
 * - keyed by the attribute itself (`partitionKey` is the attribute, projection ALL): one partition
 *   per value, shared by every tenant; the read keeps the scope's tenant by a filter.
 * - `sharded`: tenant-scoped, its partition key the derived attribute `partitionKey` holding
 *   shardKey(tenant, value, shard), KEYS_ONLY (the read fetches the items by id). A tenant's records
 *   of one value are spread over `shards` partitions, read together and merged in sort-key order.
 */
export interface ListIndex {
  name: string;
  /** The top-level attribute (as the record and the API hold it) the index pins; defaults to partitionKey. */
  attribute?: string;
  partitionKey: string;
  sortKey: string;
  sharded?: boolean;
  /**
   * Partitions per tenant and value of a sharded index (default LIST_SHARDS). An attribute of many
   * values (a name) has partitions spread by its values already: one shard spares its reads the extra
   * queries. One of few values (a state, a product) needs the shards.
   */
  shards?: number;
  /**
   * The sort key's value when the store derives it rather than keeping it in the record (a sharded
   * index only): written with the index's partition key, and by the back-fill. It must be unique
   * per record (a page resumes after the last sort key shown) and follow from attributes that
   * never change.
   */
  sortKeyOf?: (record: { id: string; [attribute: string]: unknown }) => string | undefined;
  /**
   * The value the record is keyed by when it follows from the record rather than being one of its
   * top-level attributes (a sharded index only; `attribute` is then the filter path it answers,
   * e.g. `filter/vnfInstanceSubscriptionFilter/vnfInstanceIds`); undefined: no key. Written when
   * the record is created and by the back-fill: what it derives from must never change.
   */
  keyValueOf?: (record: Record<string, unknown>) => string | undefined;
  /**
   * A value whose partitions every read of the index reads too, merged with the asked ones: where
   * `keyValueOf` puts the records that may match any value (a subscription naming no single instance,
   * say). The read's residual filter keeps those that match.
   */
  alsoRead?: string;
  /** A sharded index that holds whole records (projection ALL): a read takes them from it rather than by id. */
  projectsAll?: boolean;
}

/** Partitions per tenant and value of a sharded index (README "Architecture": why, and what it limits). */
export const LIST_SHARDS = 4;
/** A value longer than this is no key of a sharded index (its record is not in it; the planner scans for it). */
export const MAX_SHARDED_VALUE_BYTES = 1024;

const attributeOf = (index: ListIndex) => index.attribute ?? index.partitionKey;

const shardsOf = (index: ListIndex) => index.shards ?? LIST_SHARDS;

/** The shard of a record among `shards`: a hash of its id (FNV-1a), so a record stays in one shard for good. */
export function shardOf(id: string, shards = LIST_SHARDS): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % shards;
}

/** A sharded index's key: the tenant (length-prefixed, so no tenant and value pair reads as another), the value, the shard. */
export const shardKey = (tenantId: string, value: string, shard: number): string => `${tenantId.length}:${tenantId}#${value}#${shard}`;

/** Whether a value can be a sharded index key (DynamoDB refuses an empty key; keys are at most 2,048 bytes). */
export const isShardableValue = (value: unknown): value is string =>
  typeof value === 'string' && value !== '' && Buffer.byteLength(value) <= MAX_SHARDED_VALUE_BYTES;

/** Attribute -> index, what the listing planner takes (most selective first: the planner prefers earlier ones). */
export function listIndexesByAttribute(indexes: readonly ListIndex[]): ListIndexes {
  return Object.fromEntries(indexes.map((index) => [attributeOf(index), index.sharded ? { index: index.name, tenantScoped: true } : index.name]));
}

/**
 * The sharded index keys of a record as it is after a write of `set` (and `remove`): for each
 * sharded index whose attribute the write sets or removes, the key to set, or the key attribute to
 * remove (no value, or none a key can hold). `tenantId` and `id` are the record's.
 */
export function shardedKeyChanges(
  indexes: readonly ListIndex[],
  record: { id: string; tenantId: string },
  set: Record<string, unknown>,
  remove: readonly string[] = [],
): { set: Record<string, string>; remove: string[] } {
  const out = { set: {} as Record<string, string>, remove: [] as string[] };
  for (const index of indexes) {
    // A derived key is written once, at create (withShardedKeys): no later write changes what it derives from.
    if (!index.sharded || index.keyValueOf) continue;
    const attribute = attributeOf(index);
    if (Object.hasOwn(set, attribute)) {
      const value = set[attribute];
      if (isShardableValue(value)) out.set[index.partitionKey] = shardKey(record.tenantId, value, shardOf(record.id, shardsOf(index)));
      else out.remove.push(index.partitionKey);
    } else if (remove.includes(attribute)) out.remove.push(index.partitionKey);
  }
  return out;
}

/** The sort keys the store derives (ListIndex sortKeyOf) that `record` lacks. */
function derivedSortKeys(indexes: readonly ListIndex[], record: { id: string; [attribute: string]: unknown }): Record<string, string> {
  const keys: Record<string, string> = {};
  for (const index of indexes) {
    if (!index.sharded || !index.sortKeyOf || record[index.sortKey] !== undefined) continue;
    const value = index.sortKeyOf(record);
    if (value !== undefined) keys[index.sortKey] = value;
  }
  return keys;
}

/** The keys of the sharded indexes whose value the store derives (ListIndex keyValueOf). */
function derivedKeys(indexes: readonly ListIndex[], record: Record<string, unknown> & { id: string; tenantId: string }): Record<string, string> {
  const keys: Record<string, string> = {};
  for (const index of indexes) {
    if (!index.sharded || !index.keyValueOf) continue;
    const value = index.keyValueOf(record);
    if (isShardableValue(value)) keys[index.partitionKey] = shardKey(record.tenantId, value, shardOf(record.id, shardsOf(index)));
  }
  return keys;
}

/** A new record with its sharded index keys (and the sort keys the store derives). */
export function withShardedKeys<T extends { id: string; tenantId: string }>(indexes: readonly ListIndex[], record: T): T {
  const fields = record as unknown as Record<string, unknown> & { id: string; tenantId: string };
  const keys = { ...shardedKeyChanges(indexes, record, fields).set, ...derivedKeys(indexes, fields), ...derivedSortKeys(indexes, fields) };
  return Object.keys(keys).length ? { ...record, ...keys } : record;
}

/**
 * Writes the tenant-scoped list index keys of the records written before those indexes existed
 * (once, after an upgrade; a second run finds none): a Scan, then for each record missing a key (or
 * a derived sort key), a write of it conditional on the record still existing and the attributes
 * its keys derive from being still as read, so a record changed meanwhile (whose own write set its
 * keys) is left alone. Answers how many records it wrote.
 */
export async function backfillShardedKeys(table: string, indexes: readonly ListIndex[]): Promise<number> {
  const sharded = indexes.filter((index) => index.sharded);
  let written = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await documentClient().send(new ScanCommand({ TableName: table, FilterExpression: 'attribute_exists(tenantId)', ExclusiveStartKey: start }));
    for (const item of (page.Items ?? []) as Array<Record<string, unknown> & { id: string; tenantId: string }>) {
      const keys = withShardedKeys(sharded, item) as Record<string, unknown>;
      const missing = sharded.filter((index) => keys[index.partitionKey] !== item[index.partitionKey]);
      const sortKeys = [...new Set(sharded.filter((index) => index.sortKeyOf).map((index) => index.sortKey))].filter((name) => keys[name] !== item[name]);
      if (missing.length === 0 && sortKeys.length === 0) continue;
      const names: Record<string, string> = {};
      const values: Record<string, unknown> = {};
      const sets = missing.map((index, i) => {
        names[`#k${i}`] = index.partitionKey;
        values[`:k${i}`] = keys[index.partitionKey];
        return `#k${i} = :k${i}`;
      });
      // A key read from an attribute is written only while the attribute is as read; a derived one follows from what never changes.
      const read = missing.filter((index) => !index.keyValueOf);
      read.forEach((index, i) => {
        names[`#a${i}`] = attributeOf(index);
        values[`:a${i}`] = item[attributeOf(index)];
      });
      sortKeys.forEach((name, i) => {
        names[`#d${i}`] = name;
        values[`:d${i}`] = keys[name];
        sets.push(`#d${i} = :d${i}`);
      });
      // A derived sort key follows from attributes that never change: the record need only still exist.
      const conditions = ['attribute_exists(id)', ...read.map((_, i) => `#a${i} = :a${i}`)];
      const held = await conditionHeld(() =>
        documentClient().send(
          new UpdateCommand({
            TableName: table,
            Key: { id: item.id },
            UpdateExpression: `SET ${sets.join(', ')}`,
            ConditionExpression: conditions.join(' AND '),
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          }),
        ),
      );
      if (held) written++;
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return written;
}

/**
 * A store's tenant-scoped list index keys outside its writes: a stored item (a plain object, as a
 * local table rebuild hands it) with its keys; items without a tenant (outbox entries) as they are.
 * (The back-fill of the records from before the indexes is each store's own export, calling
 * backfillShardedKeys: a function that lists only, or runs LCM steps, does not bundle it.)
 */
export function shardedKeysOf(indexes: readonly ListIndex[]): (item: Record<string, unknown>) => Record<string, unknown> {
  return (item) =>
    typeof item.tenantId === 'string' && typeof item.id === 'string' ? withShardedKeys(indexes, item as { id: string; tenantId: string }) : item;
}

type Key = Record<string, string | number>;

/** One partition of an index being read: what it has read and not yet handed out, and where it goes on. */
interface Cursor<T> {
  value: string;
  buffer: T[];
  next?: Record<string, unknown>;
  done: boolean;
}

/**
 * One page of the records whose `index` attribute is one of `keyValues`, in sort-key order, of the
 * scope's tenant (for ALL_TENANTS, of every tenant: only an index keyed by the attribute itself can).
 * Each partition (a value, or a value's shard) is queried from just after `after`'s sort key and the
 * partitions are merged, so a page resumes from the last record shown whichever partition it came
 * from. A page may hold fewer than `limit` records, even none, and still go on. `read`: only these
 * attributes of each record (projection).
 */
export async function indexPage<T>(
  table: string,
  index: ListIndex,
  keyValues: readonly string[],
  scope: TenantScope,
  limit: number,
  after?: Key,
  read?: readonly string[],
): Promise<Page<T>> {
  if (index.sharded && scope === ALL_TENANTS) throw new Error(`${index.name} is tenant-scoped: it cannot list every tenant's records`);
  const partitionValues = index.alsoRead === undefined || keyValues.includes(index.alsoRead) ? keyValues : [...keyValues, index.alsoRead];
  const partitions = index.sharded
    ? partitionValues.flatMap((value) => Array.from({ length: shardsOf(index) }, (_, shard) => shardKey(scope as string, value, shard)))
    : [...partitionValues];
  const cursors: Cursor<Record<string, unknown>>[] = partitions.map((value) => ({ value, buffer: [], done: false }));
  const each = Math.min(limit, Math.max(10, Math.ceil((limit * 1.25) / cursors.length)));
  const values: Record<string, unknown> = {};
  const names: Record<string, string> = { '#k': index.partitionKey };
  if (after !== undefined) {
    names['#s'] = index.sortKey;
    values[':after'] = after[index.sortKey];
  }
  if (!index.sharded && scope !== ALL_TENANTS) values[':t'] = scope;
  // A KEYS_ONLY index holds just the keys; the records are read by id, projected there.
  const byId = index.sharded && !index.projectsAll;
  const projected = byId ? {} : projection(read, [index.sortKey]);
  const fill = async (cursor: Cursor<Record<string, unknown>>) => {
    while (!cursor.done && cursor.buffer.length === 0) {
      const out = await documentClient().send(
        new QueryCommand({
          TableName: table,
          IndexName: index.name,
          KeyConditionExpression: after === undefined ? '#k = :k' : '#k = :k AND #s > :after',
          ...(!index.sharded && { FilterExpression: scope === ALL_TENANTS ? 'attribute_exists(tenantId)' : 'tenantId = :t' }),
          ...(projected.ProjectionExpression !== undefined && { ProjectionExpression: projected.ProjectionExpression }),
          ExpressionAttributeNames: { ...names, ...projected.ExpressionAttributeNames },
          ExpressionAttributeValues: { ...values, ':k': cursor.value },
          Limit: each,
          ExclusiveStartKey: cursor.next,
        }),
      );
      cursor.buffer.push(...((out.Items ?? []) as Record<string, unknown>[]));
      cursor.next = out.LastEvaluatedKey;
      cursor.done = out.LastEvaluatedKey === undefined;
    }
  };
  const merged: Record<string, unknown>[] = [];
  while (merged.length < limit) {
    await Promise.all(cursors.map(fill));
    let first: Cursor<Record<string, unknown>> | undefined;
    for (const cursor of cursors) {
      const head = cursor.buffer[0];
      if (
        head !== undefined &&
        (first === undefined || (head[index.sortKey] as string) < ((first.buffer[0] as Record<string, unknown>)[index.sortKey] as string))
      ) {
        first = cursor;
      }
    }
    if (first === undefined) break;
    merged.push(first.buffer.shift() as Record<string, unknown>);
  }
  const more = cursors.some((cursor) => cursor.buffer.length > 0 || !cursor.done);
  const last = merged[merged.length - 1];
  const items = byId ? await itemsByKeys<T>(table, merged, scope as string, read) : (merged as T[]);
  return { items, after: more && last ? { id: last.id as string, [index.sortKey]: last[index.sortKey] as string } : undefined };
}

/**
 * The records a KEYS_ONLY index read found, read by id (eventually consistent, as the index is) in
 * the order found; one deleted since, or (never expected) of another tenant, is left out.
 */
async function itemsByKeys<T>(table: string, keys: readonly Record<string, unknown>[], tenantId: string, read?: readonly string[]): Promise<T[]> {
  const found = new Map<string, Record<string, unknown>>();
  const projected = projection(read);
  for (let i = 0; i < keys.length; i += 100) {
    let pending: Record<string, unknown>[] | undefined = keys.slice(i, i + 100).map((key) => ({ id: key.id }));
    while (pending?.length) {
      const out: BatchGetCommandOutput = await documentClient().send(new BatchGetCommand({ RequestItems: { [table]: { Keys: pending, ...projected } } }));
      for (const item of out.Responses?.[table] ?? []) found.set(item.id as string, item);
      pending = out.UnprocessedKeys?.[table]?.Keys;
    }
  }
  return keys.flatMap((key) => {
    const item = found.get(key.id as string);
    return item && item.tenantId === tenantId ? [item as T] : [];
  });
}

/** Every item a Query (with `IndexName`/`KeyConditionExpression`) or a Scan finds, page after page. */
export async function allItems<T>(input: QueryCommandInput | ScanCommandInput): Promise<T[]> {
  const all: T[] = [];
  let after: Record<string, unknown> | undefined;
  do {
    const page = { ...input, ExclusiveStartKey: after };
    const out =
      'KeyConditionExpression' in input
        ? await documentClient().send(new QueryCommand(page as QueryCommandInput))
        : await documentClient().send(new ScanCommand(page));
    all.push(...((out.Items ?? []) as T[]));
    after = out.LastEvaluatedKey;
  } while (after);
  return all;
}

/** Every record of a scope, page after page. */
export async function tenantItems<T>(table: string, scope: TenantScope): Promise<T[]> {
  const all: T[] = [];
  let after: Page<T>['after'];
  do {
    const page = await tenantPage<T>(table, scope, 1000, after);
    all.push(...page.items);
    after = page.after;
  } while (after);
  return all;
}

/** Writes a new record; fails with RecordExistsError if the id exists already. */
export async function putNew(table: string, item: { id: string }): Promise<void> {
  try {
    await documentClient().send(new PutCommand({ TableName: table, Item: item, ConditionExpression: 'attribute_not_exists(id)' }));
  } catch (error) {
    if (isConditionFailure(error)) throw new RecordExistsError(table, item.id, { cause: error });
    throw error;
  }
}

/** Reads a record by id, strongly consistent (a state check must see the latest write). */
export async function getById<T>(table: string, id: string): Promise<T | undefined> {
  const out = await documentClient().send(new GetCommand({ TableName: table, Key: { id }, ConsistentRead: true }));
  return out.Item as T | undefined;
}

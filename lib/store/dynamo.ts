// One DynamoDB document client per process (created once at module scope, reused across Lambda
// invocations). The endpoint comes from the SDK's standard configuration (AWS_ENDPOINT_URL_DYNAMODB
// locally), so nothing here knows whether it runs on AWS or on the local stand-in.
import { ALL_TENANTS, type Page, type TenantScope } from '#lib/sol/paging.ts';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  type QueryCommandInput,
  type ScanCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { tracedClient } from '#lib/tracing.ts';

// The scope and page types are the API's (SOL013 paging); the stores speak them.
export { ALL_TENANTS, type Page, type TenantScope };

let client: DynamoDBDocumentClient | undefined;

export function documentClient(): DynamoDBDocumentClient {
  client ??= DynamoDBDocumentClient.from(tracedClient(new DynamoDBClient({})), {
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
 * One page of a tenant's records from a table's `byTenant` index, in its sort-key order; for
 * ALL_TENANTS, one page of a Scan of the table (in no particular order) of the records that have a
 * tenant (marker items have none). `after` may be a key of either shape (the record's id, tenant
 * and index sort key, as list markers carry): a Scan resumes after its `id`.
 */
export async function tenantPage<T>(table: string, scope: TenantScope, limit: number, after?: Record<string, string | number>): Promise<Page<T>> {
  const out =
    scope === ALL_TENANTS
      ? await documentClient().send(
          new ScanCommand({
            TableName: table,
            FilterExpression: 'attribute_exists(tenantId)',
            Limit: limit,
            ExclusiveStartKey: after && { id: after.id },
          }),
        )
      : await documentClient().send(
          new QueryCommand({
            TableName: table,
            IndexName: 'byTenant',
            KeyConditionExpression: 'tenantId = :t',
            ExpressionAttributeValues: { ':t': scope },
            Limit: limit,
            ExclusiveStartKey: after,
          }),
        );
  return { items: (out.Items ?? []) as T[], after: out.LastEvaluatedKey as Page<T>['after'] };
}

/** A secondary index a list can read one key of: its partition key and the sort key it shares with the table's list order. */
export interface ListIndex {
  name: string;
  partitionKey: string;
  sortKey: string;
}

/** Attribute -> index name, what the listing planner takes, for indexes keyed by the attribute the API shows. */
export function listIndexesByAttribute(indexes: readonly ListIndex[]): Readonly<Record<string, string>> {
  return Object.fromEntries(indexes.map((index) => [index.partitionKey, index.name]));
}

/**
 * One page of the records whose `index.partitionKey` is `keyValue`, in sort-key order, limited to
 * the scope's tenant by a filter (for ALL_TENANTS, to records that have a tenant, as tenantPage).
 * `after` is a key the list issued (id and sort key; the partition key is `keyValue`) or this
 * index's LastEvaluatedKey. A page may hold fewer than `limit` records, even none, and still go on.
 */
export async function indexPage<T>(
  table: string,
  index: ListIndex,
  keyValue: string,
  scope: TenantScope,
  limit: number,
  after?: Record<string, string | number>,
): Promise<Page<T>> {
  const out = await documentClient().send(
    new QueryCommand({
      TableName: table,
      IndexName: index.name,
      KeyConditionExpression: '#k = :k',
      FilterExpression: scope === ALL_TENANTS ? 'attribute_exists(tenantId)' : 'tenantId = :t',
      ExpressionAttributeNames: { '#k': index.partitionKey },
      ExpressionAttributeValues: { ':k': keyValue, ...(scope !== ALL_TENANTS && { ':t': scope }) },
      Limit: limit,
      ExclusiveStartKey: after && { id: after.id, [index.partitionKey]: keyValue, [index.sortKey]: after[index.sortKey] },
    }),
  );
  return { items: (out.Items ?? []) as T[], after: out.LastEvaluatedKey as Page<T>['after'] };
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

// Subscriptions of every API family in DynamoDB, one table per family; the family's module owns
// the record type. The record never holds the subscriber's credentials: only the id of the secret
// that does.
//
// The families whose filter names VNF instances (VNF LCM, VNF FM) also key each subscription by
// the one instance its filter names by id, or by ANY_INSTANCE when it names none or several (index
// `byVnfInstance`, whole records, one partition per tenant and key). A change of an instance is
// then matched against that instance's subscriptions and the ANY_INSTANCE ones only, not against
// every subscription of the tenant: an NFVO that subscribes once per VNF instance makes each
// event read two partitions instead of thousands of records. A filtered list of subscriptions
// reads the same two through the planner (lib/sol/plan.ts). Subscriptions are never changed
// (SOL003 has no PATCH of them), so the key written at create stays true.
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { ListPlan } from '#lib/sol/plan.ts';
import {
  allItems,
  backfillShardedKeys,
  documentClient,
  isShardableValue,
  listIndexesByAttribute,
  requiredEnv,
  shardKey,
  tenantItems,
  tenantPage,
  type ListIndex,
  type Page,
  type TenantScope,
} from './dynamo.ts';
import { TenantRecordRepository } from './repository.ts';

/** Subscriptions of any API family (VNF LCM, VNF FM, VNF packages): the same store over each family's table. */
export interface SubscriptionStore<R extends StoredSubscription> {
  create(record: R): Promise<void>;
  get(id: string): Promise<R | undefined>;
  /** A page in creation order of the scope's subscriptions, or of those `plan` pins through SUBSCRIPTION_LIST_INDEXES (a keyed family's). */
  listPage(scope: TenantScope, limit: number, after?: Record<string, string | number>, plan?: ListPlan): Promise<Page<R>>;
  /** Every subscription of a tenant (the notifier matches each change against all of them). */
  listAll(tenantId: string): Promise<R[]>;
  /**
   * Every subscription of a tenant that a change of VNF instance `instanceId` can match, in
   * creation order: those naming it alone and those naming no single one. Undefined when the store
   * cannot tell them (not keyed by instance, or not yet every subscription): then read listAll.
   */
  listFor?(tenantId: string, instanceId: string): Promise<R[] | undefined>;
  /** Every subscription of a tenant in creation order, if it has at most `atMost` (one read); otherwise undefined. */
  listIfFew?(tenantId: string, atMost: number): Promise<R[] | undefined>;
  /** Deletes the record; returns it, or undefined when it did not exist. */
  delete(id: string): Promise<R | undefined>;
}

export interface StoredSubscription {
  id: string;
  tenantId: string;
  createdSeq: string;
}

export const subscriptionListKey = <R extends StoredSubscription>(r: R): Record<string, string> => ({
  id: r.id,
  tenantId: r.tenantId,
  createdSeq: r.createdSeq,
});

/** The key of the subscriptions that name no single VNF instance by id (they may match a change of any). */
export const ANY_INSTANCE = '*';

/** The filter path the instance index answers (SOL003 VnfInstanceSubscriptionFilter). */
export const SUBSCRIBED_INSTANCE_PATH = 'filter/vnfInstanceSubscriptionFilter/vnfInstanceIds';

/** The VNF instance a subscription is keyed by: the one its filter names by id, or ANY_INSTANCE. */
export function subscribedInstance(record: Record<string, unknown>): string {
  const filter = record.filter as { vnfInstanceSubscriptionFilter?: { vnfInstanceIds?: unknown } } | undefined;
  const ids = filter?.vnfInstanceSubscriptionFilter?.vnfInstanceIds;
  const distinct = Array.isArray(ids) ? [...new Set(ids)] : [];
  // An id no key can hold is keyed as any: those partitions are read with every read.
  return distinct.length === 1 && isShardableValue(distinct[0]) ? distinct[0] : ANY_INSTANCE;
}

const BY_INSTANCE: ListIndex = {
  name: 'byVnfInstance',
  attribute: SUBSCRIBED_INSTANCE_PATH,
  partitionKey: 'instanceKey',
  sortKey: 'createdSeq',
  sharded: true,
  // One partition per tenant and instance already spreads the keys; the ANY_INSTANCE one holds the few general subscriptions.
  shards: 1,
  keyValueOf: subscribedInstance,
  alsoRead: ANY_INSTANCE,
  projectsAll: true,
};

/** What the listing planner may read a keyed family's subscriptions through. */
export const SUBSCRIPTION_LIST_INDEXES = /* @__PURE__ */ listIndexesByAttribute([BY_INSTANCE]);

/**
 * The item saying every subscription of the table carries its instance key: written by
 * keySubscriptions once it has keyed those from before the index. Until it exists, listFor
 * answers undefined (the notifier then reads every subscription of the tenant), so none from
 * before is missed.
 */
const KEYED_MARKER = '#keyed-by-instance';

/** Tables whose marker this process has seen (it is never removed), so each is read once. */
const keyedTables = new Set<string>();

/** Whether every subscription of the table carries its instance key (the marker exists). */
async function isKeyed(table: string): Promise<boolean> {
  if (keyedTables.has(table)) return true;
  const out = await documentClient().send(new GetCommand({ TableName: table, Key: { id: KEYED_MARKER }, ConsistentRead: true }));
  if (out.Item) keyedTables.add(table);
  return out.Item !== undefined;
}

export class DynamoSubscriptionStore<R extends StoredSubscription> extends TenantRecordRepository<R> implements SubscriptionStore<R> {
  constructor(
    table = requiredEnv('SUBSCRIPTIONS_TABLE'),
    /** Whether the family's filter names VNF instances and its table has the byVnfInstance index. */
    private readonly byInstance = false,
  ) {
    super(table, byInstance ? [BY_INSTANCE] : []);
  }

  listAll(tenantId: string): Promise<R[]> {
    return tenantItems<R>(this.table, tenantId);
  }

  async listIfFew(tenantId: string, atMost: number): Promise<R[] | undefined> {
    const page = await tenantPage<R>(this.table, tenantId, atMost + 1);
    return page.items.length <= atMost ? page.items : undefined;
  }

  async listFor(tenantId: string, instanceId: string): Promise<R[] | undefined> {
    if (!this.byInstance || !(await isKeyed(this.table))) return undefined;
    const keys = [...new Set([instanceId, ANY_INSTANCE])].filter(isShardableValue).map((value) => shardKey(tenantId, value, 0));
    const found = await Promise.all(
      keys.map((key) =>
        allItems<R>({
          TableName: this.table,
          IndexName: BY_INSTANCE.name,
          KeyConditionExpression: '#k = :k',
          ExpressionAttributeNames: { '#k': BY_INSTANCE.partitionKey },
          ExpressionAttributeValues: { ':k': key },
        }),
      ),
    );
    return found.flat().sort((a, b) => (a.createdSeq < b.createdSeq ? -1 : a.createdSeq > b.createdSeq ? 1 : 0));
  }

  /** Through the instance index only once every subscription is keyed (until then, a scan in the same order finds those from before too). */
  override listPage(scope: TenantScope, limit: number, after?: Record<string, string | number>, plan?: ListPlan, read?: readonly string[]): Promise<Page<R>> {
    if (plan?.kind !== 'index') return super.listPage(scope, limit, after, plan, read);
    return isKeyed(this.table).then((keyed) => super.listPage(scope, limit, after, keyed ? plan : undefined, read));
  }

  async delete(id: string): Promise<R | undefined> {
    const out = await this.deleteItem({ Key: { id }, ReturnValues: 'ALL_OLD' });
    return out.Attributes as R | undefined;
  }
}

/**
 * Keys the subscriptions of a keyed family's table written before the instance index existed, then
 * writes the marker that lets the notifier read through the index; answers how many it keyed.
 * Once the marker is there it reads it once per process (the reconciliation runs this every time).
 */
export async function keySubscriptions(table: string): Promise<number> {
  if (await isKeyed(table)) return 0;
  const keyed = await backfillShardedKeys(table, [BY_INSTANCE]);
  await documentClient().send(new PutCommand({ TableName: table, Item: { id: KEYED_MARKER, index: BY_INSTANCE.name } }));
  keyedTables.add(table);
  return keyed;
}

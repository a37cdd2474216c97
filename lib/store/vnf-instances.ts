// VNF instance records in DynamoDB, including the per-instance LCM operation lock: one
// conditional write on the instance item (`attribute_not_exists(lockOpOccId)`), so racing
// requests get exactly one winner without transactions.
//
// What the VNFC health sweep watches is the sparse index `monitored`: an instance carries
// `monitored` only while it is INSTANTIATED, set and removed by the very write that changes
// instantiationState, and `monitoredVnfcs`, the few fields of its VNFCs the sweep uses, written with
// every instantiatedVnfInfo (`withMonitoredAttributes`, applied by `create` and `updateUnderLock`,
// the only writes of either). The index projects only what the sweep reads (MONITORED_ATTRIBUTES),
// so a sweep reads a few hundred bytes per watched instance, not the whole table. Instances
// instantiated before the index existed are marked once by `markUnmonitored` (the sweep function's
// `{"markUnmonitored": true}` event).
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { VNF_INSTANCE_ATTRIBUTES_V1, VNF_INSTANCE_DEFAULT_EXCLUDED, type VnfInstanceRecord } from '#lib/sol/model.ts';
import {
  allItems,
  conditionHeld,
  documentClient,
  ifConditionHeld,
  listIndexesByAttribute,
  shardedKeysOf,
  backfillShardedKeys,
  requiredEnv,
  updateExpression,
  type ListIndex,
  type ListSummary,
  type ListPage,
} from './dynamo.ts';
import { TenantRecordRepository } from './repository.ts';

export interface LockRequest {
  opOccId: string;
  now: string;
  /** Take the lock over from this op occ (it is dead or finished) instead of requiring it free. */
  takeOverFrom?: string;
  /** The instance must be in this instantiation state. */
  requireState?: VnfInstanceRecord['instantiationState'];
}

export interface InstanceUpdate {
  set: Record<string, unknown>;
  remove: string[];
}

export interface VnfInstanceStore {
  /**
   * Writes a new instance once `first` (a precondition of the caller's, such as taking its package
   * into use) has succeeded; when `first` fails nothing is written and the create fails with its
   * error. A store may do its own preparations while `first` runs.
   */
  create(record: VnfInstanceRecord, first?: () => Promise<void>): Promise<void>;
  get(id: string): Promise<VnfInstanceRecord | undefined>;
  /** A page in creation order (list indexes: VNF_INSTANCE_LIST_INDEXES). */
  listPage: ListPage<VnfInstanceRecord>;
  /** True when taken; false when the condition failed (caller reads the record to explain why). */
  acquireLock(id: string, lock: LockRequest): Promise<boolean>;
  releaseLock(id: string, opOccId: string): Promise<void>;
  /** Applies an update only while `opOccId` holds the lock. False when it does not. */
  updateUnderLock(id: string, opOccId: string, update: InstanceUpdate): Promise<boolean>;
  /** Deletes an idle NOT_INSTANTIATED instance; returns the deleted record, or undefined when the condition failed. */
  deleteIdle(id: string): Promise<VnfInstanceRecord | undefined>;
}

/** The sparse index of the instances the health sweep watches, and its key attribute. */
export const MONITORED_INDEX = 'monitored';
/** The attributes the index projects (template.yaml VnfInstancesTable): what the sweep reads of an instance. */
export const MONITORED_ATTRIBUTES = [
  'tenantId',
  'vnfdId',
  'vnfProvider',
  'vnfProductName',
  'vnfSoftwareVersion',
  'vnfdVersion',
  'vnfInstanceName',
  'instantiationState',
  'monitoredVnfcs',
  'vimResources',
  'lockOpOccId',
  'vnfConfigurableProperties',
] as const;

/** A VNFC as the health sweep sees it: its VDU, its VIM resource and the vnfcInfo ids an alarm names. */
export interface MonitoredVnfc {
  id: string;
  vduId: string;
  resourceId: string;
  vimLevelResourceType?: string;
  vnfcInfoIds: string[];
}

/** An instance as the sweep reads it from the index (or a whole record, which may lack `monitoredVnfcs`). */
export type MonitoredInstance = VnfInstanceRecord & { monitoredVnfcs?: MonitoredVnfc[] };

type Info = Record<string, unknown>;

/** The VNFCs of an instantiatedVnfInfo, in the few fields the health sweep uses. */
export function monitoredVnfcsOf(instantiatedVnfInfo: unknown): MonitoredVnfc[] {
  const info = (instantiatedVnfInfo ?? {}) as Info;
  const resources = (Array.isArray(info.vnfcResourceInfo) ? info.vnfcResourceInfo : []) as Info[];
  const vnfcInfo = (Array.isArray(info.vnfcInfo) ? info.vnfcInfo : []) as Info[];
  return resources.map((vnfc) => {
    const compute = (vnfc.computeResource ?? {}) as Info;
    return {
      id: String(vnfc.id),
      vduId: String(vnfc.vduId),
      resourceId: String(compute.resourceId ?? vnfc.id),
      ...(compute.vimLevelResourceType ? { vimLevelResourceType: String(compute.vimLevelResourceType) } : {}),
      vnfcInfoIds: vnfcInfo.filter((entry) => entry.vnfcResourceInfoId === vnfc.id).map((entry) => String(entry.id)),
    };
  });
}

const VNFCS = 'monitoredVnfcs';

/**
 * A write with what the sweep reads kept in step: the `monitored` mark follows the
 * instantiationState it sets, `monitoredVnfcs` the instantiatedVnfInfo it sets or removes (a write
 * that touches neither is left alone).
 */
export function withMonitoredAttributes(update: InstanceUpdate): InstanceUpdate {
  const set = { ...update.set };
  const drop = new Set<string>();
  const state = update.set.instantiationState;
  if (state === 'INSTANTIATED') set[MONITORED_INDEX] = 'Y';
  else if (state !== undefined) drop.add(MONITORED_INDEX);
  if (update.set.instantiatedVnfInfo !== undefined) set[VNFCS] = monitoredVnfcsOf(update.set.instantiatedVnfInfo);
  else if (update.remove.includes('instantiatedVnfInfo')) drop.add(VNFCS);
  if (Object.keys(set).length === Object.keys(update.set).length && drop.size === 0) return update;
  return { set, remove: [...new Set([...update.remove.filter((name) => !(name in set)), ...drop])] };
}

/**
 * Every INSTANTIATED instance of every tenant, with the attributes the health sweep reads: a paged
 * Query of the sparse index (eventually consistent, as a GSI is; a change missed is the next sweep's).
 */
export function monitoredInstances(table = requiredEnv('VNF_INSTANCES_TABLE')): Promise<MonitoredInstance[]> {
  return allItems<MonitoredInstance>({
    TableName: table,
    IndexName: MONITORED_INDEX,
    KeyConditionExpression: '#m = :y',
    ExpressionAttributeNames: { '#m': MONITORED_INDEX },
    ExpressionAttributeValues: { ':y': 'Y' },
  });
}

/** Whether any instance is INSTANTIATED (one item read from the sparse index, at most). */
export async function anyMonitored(table = requiredEnv('VNF_INSTANCES_TABLE')): Promise<boolean> {
  const { Items = [] } = await documentClient().send(
    new QueryCommand({
      TableName: table,
      IndexName: MONITORED_INDEX,
      KeyConditionExpression: '#m = :y',
      ExpressionAttributeNames: { '#m': MONITORED_INDEX },
      ExpressionAttributeValues: { ':y': 'Y' },
      Limit: 1,
    }),
  );
  return Items.length > 0;
}

/**
 * Marks the INSTANTIATED instances written before the `monitored` index existed (once, after an
 * upgrade): a Scan for them, then a conditional write each, so one terminated meanwhile stays
 * unmarked. Answers how many it marked; a second run finds none.
 */
export async function markUnmonitored(table = requiredEnv('VNF_INSTANCES_TABLE')): Promise<number> {
  const names = { '#m': MONITORED_INDEX, '#s': 'instantiationState' };
  const unmarked = await allItems<Pick<VnfInstanceRecord, 'id' | 'instantiatedVnfInfo' | 'revision'>>({
    TableName: table,
    FilterExpression: '#s = :i AND attribute_not_exists(#m)',
    ProjectionExpression: 'id, instantiatedVnfInfo, revision',
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: { ':i': 'INSTANTIATED' },
  });
  let marked = 0;
  for (const { id, instantiatedVnfInfo, revision } of unmarked) {
    // Only the record as read: a write since (revision) may have changed its VNFCs or its state.
    const held = await conditionHeld(() =>
      documentClient().send(
        new UpdateCommand({
          TableName: table,
          Key: { id },
          UpdateExpression: 'SET #m = :y, #v = :v',
          ConditionExpression: '#s = :i AND attribute_not_exists(#m) AND revision = :r',
          ExpressionAttributeNames: { ...names, '#v': VNFCS },
          ExpressionAttributeValues: { ':i': 'INSTANTIATED', ':y': 'Y', ':v': monitoredVnfcsOf(instantiatedVnfInfo), ':r': revision },
        }),
      ),
    );
    if (held) marked++;
  }
  return marked;
}

/**
 * The indexes an instance list can read through (lib/sol/plan.ts), by the attribute they pin. A
 * VNFD's instances are keyed by vnfdId alone, which tenants may share (each onboards its own
 * package of the same VNFD): the read keeps only the scope's tenant, so a tenant sees just its own.
 * The name, product, provider and state indexes are tenant-scoped and sharded (lib/store/dynamo.ts
 * ListIndex): KEYS_ONLY, keyed by derived attributes `create` writes and `updateUnderLock` moves.
 * Names are many (an NFVO names each instance), so their partitions are spread by name already and
 * the name index has one shard: a filter by name is one query, not four.
 */
const LIST_INDEXES: readonly ListIndex[] = [
  // Most selective first: the planner reads through the first one a filter pins.
  { name: 'byName', attribute: 'vnfInstanceName', partitionKey: 'vnfInstanceNameKey', sortKey: 'createdSeq', sharded: true, shards: 1 },
  { name: 'byVnfd', partitionKey: 'vnfdId', sortKey: 'createdSeq' },
  { name: 'byProductName', attribute: 'vnfProductName', partitionKey: 'vnfProductNameKey', sortKey: 'createdSeq', sharded: true },
  { name: 'byProvider', attribute: 'vnfProvider', partitionKey: 'vnfProviderKey', sortKey: 'createdSeq', sharded: true },
  { name: 'byInstantiationState', attribute: 'instantiationState', partitionKey: 'instantiationStateKey', sortKey: 'createdSeq', sharded: true },
];
export const VNF_INSTANCE_LIST_INDEXES = /* @__PURE__ */ listIndexesByAttribute(LIST_INDEXES);

/** Records with their tenant-scoped list index keys (a local rebuild), and the back-fill of those from before the indexes (lib/store/dynamo.ts). */
export const vnfInstanceListKeys = /* @__PURE__ */ shardedKeysOf(LIST_INDEXES);
export const backfillVnfInstanceListKeys = (table = requiredEnv('VNF_INSTANCES_TABLE')): Promise<number> => backfillShardedKeys(table, LIST_INDEXES);

/**
 * The index a list page reads when it shows what SOL003 lists by default and no more (template.yaml
 * VnfInstancesTable byTenantSummary: its keys, and as its projection's NonKeyAttributes the v1 and
 * v2 representations' attributes but the default exclusions).
 */
export const LIST_SUMMARY: ListSummary = {
  index: 'byTenantSummary',
  attributes: [
    'tenantId',
    'createdSeq',
    ...VNF_INSTANCE_ATTRIBUTES_V1.filter((name) => name !== '_links' && !(VNF_INSTANCE_DEFAULT_EXCLUDED as readonly string[]).includes(name)),
  ],
};

export const vnfInstanceListKey = (r: VnfInstanceRecord): Record<string, string> => ({ id: r.id, tenantId: r.tenantId, createdSeq: r.createdSeq });

export class DynamoVnfInstanceStore extends TenantRecordRepository<VnfInstanceRecord> implements VnfInstanceStore {
  constructor(table = requiredEnv('VNF_INSTANCES_TABLE')) {
    super(table, LIST_INDEXES, LIST_SUMMARY);
  }

  override async create(record: VnfInstanceRecord, first?: () => Promise<void>): Promise<void> {
    await first?.();
    const { set } = withMonitoredAttributes({ set: { ...record }, remove: [] });
    await super.create(set as unknown as VnfInstanceRecord);
  }

  acquireLock(id: string, lock: LockRequest): Promise<boolean> {
    const names: Record<string, string> = { '#lock': 'lockOpOccId' };
    const values: Record<string, unknown> = { ':op': lock.opOccId, ':now': lock.now, ':one': 1 };
    let condition = lock.takeOverFrom ? '#lock = :stale' : 'attribute_not_exists(#lock)';
    if (lock.takeOverFrom) values[':stale'] = lock.takeOverFrom;
    condition = `attribute_exists(id) AND ${condition}`;
    if (lock.requireState) {
      names['#state'] = 'instantiationState';
      values[':state'] = lock.requireState;
      condition += ' AND #state = :state';
    }
    return conditionHeld(() =>
      this.updateItem({
        Key: { id },
        UpdateExpression: 'SET #lock = :op, lockedAt = :now, revision = revision + :one',
        ConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
  }

  async releaseLock(id: string, opOccId: string): Promise<void> {
    // A failed condition: already released (a retried step) or taken over, nothing of ours to release.
    await conditionHeld(() =>
      this.updateItem({
        Key: { id },
        UpdateExpression: 'REMOVE lockOpOccId, lockedAt SET revision = revision + :one',
        ConditionExpression: 'lockOpOccId = :op',
        ExpressionAttributeValues: { ':op': opOccId, ':one': 1 },
      }),
    );
  }

  async updateUnderLock(id: string, opOccId: string, update: InstanceUpdate): Promise<boolean> {
    const { set, remove } = withMonitoredAttributes(update);
    const keys = await this.shardedKeysOf(id, set, remove);
    const parts = updateExpression({ sets: ['revision = revision + :one'], values: { ':op': opOccId, ':one': 1 } }, { ...set, ...keys.set }, [
      ...remove,
      ...keys.remove,
    ]);
    return conditionHeld(() =>
      this.updateItem({
        Key: { id },
        UpdateExpression: parts.expression,
        ConditionExpression: 'lockOpOccId = :op',
        ExpressionAttributeNames: Object.keys(parts.names).length ? parts.names : undefined,
        ExpressionAttributeValues: parts.values,
      }),
    );
  }

  deleteIdle(id: string): Promise<VnfInstanceRecord | undefined> {
    return ifConditionHeld(
      async () =>
        (
          await this.deleteItem({
            Key: { id },
            ConditionExpression: 'attribute_exists(id) AND instantiationState = :ni AND attribute_not_exists(lockOpOccId)',
            ExpressionAttributeValues: { ':ni': 'NOT_INSTANTIATED' },
            ReturnValues: 'ALL_OLD',
          })
        ).Attributes as VnfInstanceRecord | undefined,
    );
  }
}

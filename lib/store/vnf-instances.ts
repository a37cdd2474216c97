// VNF instance records in DynamoDB, including the per-instance LCM operation lock: one
// conditional write on the instance item (`attribute_not_exists(lockOpOccId)`), so racing
// requests get exactly one winner without transactions.
//
// What the VNFC health sweep watches is the sparse index `monitored`: an instance carries
// `monitored` only while it is INSTANTIATED, set and removed by the very write that changes
// instantiationState (`withMonitoredMark`, applied by `create` and `updateUnderLock`, the only
// writes that set it), and the index projects only what the sweep reads (MONITORED_ATTRIBUTES). So
// a sweep reads the watched instances' few attributes, not the whole table. Instances instantiated
// before the index existed are marked once by `markUnmonitored` (the sweep function's
// `{"markUnmonitored": true}` event).
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { VnfInstanceRecord } from '#lib/sol/model.ts';
import { allItems, conditionHeld, documentClient, ifConditionHeld, putNew, requiredEnv, updateExpression, type Page, type TenantScope } from './dynamo.ts';
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
  create(record: VnfInstanceRecord): Promise<void>;
  get(id: string): Promise<VnfInstanceRecord | undefined>;
  listPage(scope: TenantScope, limit: number, after?: Record<string, string | number>): Promise<Page<VnfInstanceRecord>>;
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
  'instantiatedVnfInfo',
  'vimResources',
  'lockOpOccId',
  'vnfConfigurableProperties',
] as const;

/** A write with the `monitored` mark following the instantiationState it sets (a write that leaves the state alone leaves the mark alone). */
export function withMonitoredMark(update: InstanceUpdate): InstanceUpdate {
  const state = update.set.instantiationState;
  if (state === 'INSTANTIATED') return { set: { ...update.set, [MONITORED_INDEX]: 'Y' }, remove: update.remove.filter((name) => name !== MONITORED_INDEX) };
  if (state !== undefined) return { set: update.set, remove: [...new Set([...update.remove, MONITORED_INDEX])] };
  return update;
}

/**
 * Every INSTANTIATED instance of every tenant, with the attributes the health sweep reads: a paged
 * Query of the sparse index (eventually consistent, as a GSI is; a change missed is the next sweep's).
 */
export function monitoredInstances(table = requiredEnv('VNF_INSTANCES_TABLE')): Promise<VnfInstanceRecord[]> {
  return allItems<VnfInstanceRecord>({
    TableName: table,
    IndexName: MONITORED_INDEX,
    KeyConditionExpression: '#m = :y',
    ExpressionAttributeNames: { '#m': MONITORED_INDEX },
    ExpressionAttributeValues: { ':y': 'Y' },
  });
}

/**
 * Marks the INSTANTIATED instances written before the `monitored` index existed (once, after an
 * upgrade): a Scan for them, then a conditional write each, so one terminated meanwhile stays
 * unmarked. Answers how many it marked; a second run finds none.
 */
export async function markUnmonitored(table = requiredEnv('VNF_INSTANCES_TABLE')): Promise<number> {
  const state = { '#m': MONITORED_INDEX, '#s': 'instantiationState' };
  const unmarked = await allItems<{ id: string }>({
    TableName: table,
    FilterExpression: '#s = :i AND attribute_not_exists(#m)',
    ProjectionExpression: 'id',
    ExpressionAttributeNames: state,
    ExpressionAttributeValues: { ':i': 'INSTANTIATED' },
  });
  let marked = 0;
  for (const { id } of unmarked) {
    const held = await conditionHeld(() =>
      documentClient().send(
        new UpdateCommand({
          TableName: table,
          Key: { id },
          UpdateExpression: 'SET #m = :y',
          ConditionExpression: '#s = :i AND attribute_not_exists(#m)',
          ExpressionAttributeNames: state,
          ExpressionAttributeValues: { ':i': 'INSTANTIATED', ':y': 'Y' },
        }),
      ),
    );
    if (held) marked++;
  }
  return marked;
}

export const vnfInstanceListKey = (r: VnfInstanceRecord): Record<string, string> => ({ id: r.id, tenantId: r.tenantId, createdSeq: r.createdSeq });

export class DynamoVnfInstanceStore extends TenantRecordRepository<VnfInstanceRecord> implements VnfInstanceStore {
  constructor(table = requiredEnv('VNF_INSTANCES_TABLE')) {
    super(table);
  }

  override async create(record: VnfInstanceRecord): Promise<void> {
    const { set } = withMonitoredMark({ set: { ...record }, remove: [] });
    await putNew(this.table, set as unknown as VnfInstanceRecord);
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

  updateUnderLock(id: string, opOccId: string, update: InstanceUpdate): Promise<boolean> {
    const { set, remove } = withMonitoredMark(update);
    const parts = updateExpression({ sets: ['revision = revision + :one'], values: { ':op': opOccId, ':one': 1 } }, set, remove);
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

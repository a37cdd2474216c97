// VNF instance records in DynamoDB, including the per-instance LCM operation lock: one
// conditional write on the instance item (`attribute_not_exists(lockOpOccId)`), so racing
// requests get exactly one winner without transactions.
import type { VnfInstanceRecord } from '#lib/sol/model.ts';
import { conditionHeld, ifConditionHeld, requiredEnv, updateExpression, type Page, type TenantScope } from './dynamo.ts';
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

export const vnfInstanceListKey = (r: VnfInstanceRecord): Record<string, string> => ({ id: r.id, tenantId: r.tenantId, createdSeq: r.createdSeq });

export class DynamoVnfInstanceStore extends TenantRecordRepository<VnfInstanceRecord> implements VnfInstanceStore {
  constructor(table = requiredEnv('VNF_INSTANCES_TABLE')) {
    super(table);
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
    const parts = updateExpression({ sets: ['revision = revision + :one'], values: { ':op': opOccId, ':one': 1 } }, update.set, update.remove);
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

// VNF instance records in DynamoDB, including the per-instance LCM operation lock: one
// conditional write on the instance item (`attribute_not_exists(lockOpOccId)`), so racing
// requests get exactly one winner without transactions.
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { VnfInstanceRecord } from '#lib/sol/model.ts';
import { documentClient, getById, isConditionFailure, putNew, requiredEnv, tenantPage, updateExpression, type Page, type TenantScope } from './dynamo.ts';

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

export class DynamoVnfInstanceStore implements VnfInstanceStore {
  constructor(private readonly table = requiredEnv('VNF_INSTANCES_TABLE')) {}

  async create(record: VnfInstanceRecord): Promise<void> {
    await putNew(this.table, record);
  }

  get(id: string): Promise<VnfInstanceRecord | undefined> {
    return getById<VnfInstanceRecord>(this.table, id);
  }

  async listPage(scope: TenantScope, limit: number, after?: Record<string, string | number>): Promise<Page<VnfInstanceRecord>> {
    return tenantPage<VnfInstanceRecord>(this.table, scope, limit, after);
  }

  async acquireLock(id: string, lock: LockRequest): Promise<boolean> {
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
    try {
      await documentClient().send(new UpdateCommand({
        TableName: this.table,
        Key: { id },
        UpdateExpression: 'SET #lock = :op, lockedAt = :now, revision = revision + :one',
        ConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }));
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async releaseLock(id: string, opOccId: string): Promise<void> {
    try {
      await documentClient().send(new UpdateCommand({
        TableName: this.table,
        Key: { id },
        UpdateExpression: 'REMOVE lockOpOccId, lockedAt SET revision = revision + :one',
        ConditionExpression: 'lockOpOccId = :op',
        ExpressionAttributeValues: { ':op': opOccId, ':one': 1 },
      }));
    } catch (error) {
      // Already released (a retried step) or taken over: nothing of ours to release.
      if (!isConditionFailure(error)) throw error;
    }
  }

  async updateUnderLock(id: string, opOccId: string, update: InstanceUpdate): Promise<boolean> {
    const parts = updateExpression({ sets: ['revision = revision + :one'], values: { ':op': opOccId, ':one': 1 } }, update.set, update.remove);
    try {
      await documentClient().send(new UpdateCommand({
        TableName: this.table,
        Key: { id },
        UpdateExpression: parts.expression,
        ConditionExpression: 'lockOpOccId = :op',
        ExpressionAttributeNames: Object.keys(parts.names).length ? parts.names : undefined,
        ExpressionAttributeValues: parts.values,
      }));
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async deleteIdle(id: string): Promise<VnfInstanceRecord | undefined> {
    try {
      const out = await documentClient().send(new DeleteCommand({
        TableName: this.table,
        Key: { id },
        ConditionExpression: 'attribute_exists(id) AND instantiationState = :ni AND attribute_not_exists(lockOpOccId)',
        ExpressionAttributeValues: { ':ni': 'NOT_INSTANTIATED' },
        ReturnValues: 'ALL_OLD',
      }));
      return out.Attributes as VnfInstanceRecord | undefined;
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }
}

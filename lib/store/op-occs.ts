// VNF LCM operation occurrences in DynamoDB. State changes are conditional on the current
// state, so a retried or late Step Functions task can never move an op occ backwards.
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { LcmOperationState, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import { documentClient, getById, isConditionFailure, putNew, requiredEnv, tenantPage, updateExpression, type Page, type TenantScope } from './dynamo.ts';

export interface Transition {
  from: readonly LcmOperationState[];
  to: LcmOperationState;
  now: string;
  set?: Record<string, unknown>;
  remove?: string[];
}

export interface VnfLcmOpOccStore {
  create(record: VnfLcmOpOccRecord): Promise<void>;
  get(id: string): Promise<VnfLcmOpOccRecord | undefined>;
  listPage(scope: TenantScope, limit: number, after?: Record<string, string | number>): Promise<Page<VnfLcmOpOccRecord>>;
  /** Moves the op occ to `to` if it is in one of `from`; returns the new record, or undefined when it was not. */
  transition(id: string, transition: Transition): Promise<VnfLcmOpOccRecord | undefined>;
}

export const opOccListKey = (r: VnfLcmOpOccRecord): Record<string, string> => ({ id: r.id, tenantId: r.tenantId, startSeq: r.startSeq });

export class DynamoVnfLcmOpOccStore implements VnfLcmOpOccStore {
  constructor(private readonly table = requiredEnv('VNF_LCM_OP_OCCS_TABLE')) {}

  async create(record: VnfLcmOpOccRecord): Promise<void> {
    await putNew(this.table, record);
  }

  get(id: string): Promise<VnfLcmOpOccRecord | undefined> {
    return getById<VnfLcmOpOccRecord>(this.table, id);
  }

  async listPage(scope: TenantScope, limit: number, after?: Record<string, string | number>): Promise<Page<VnfLcmOpOccRecord>> {
    return tenantPage<VnfLcmOpOccRecord>(this.table, scope, limit, after);
  }

  async transition(id: string, t: Transition): Promise<VnfLcmOpOccRecord | undefined> {
    const values: Record<string, unknown> = { ':to': t.to, ':now': t.now, ':one': 1 };
    const froms = t.from.map((state, i) => {
      values[`:f${i}`] = state;
      return `:f${i}`;
    });
    const parts = updateExpression({
      sets: ['#state = :to', 'stateEnteredTime = :now', 'revision = revision + :one'],
      names: { '#state': 'operationState' },
      values,
    }, t.set ?? {}, t.remove);
    try {
      const out = await documentClient().send(new UpdateCommand({
        TableName: this.table,
        Key: { id },
        UpdateExpression: parts.expression,
        ConditionExpression: `#state IN (${froms.join(', ')})`,
        ExpressionAttributeNames: parts.names,
        ExpressionAttributeValues: parts.values,
        ReturnValues: 'ALL_NEW',
      }));
      return out.Attributes as VnfLcmOpOccRecord;
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }
}

// VNF LCM operation occurrences in DynamoDB. State changes are conditional on the current
// state, so a retried or late Step Functions task can never move an op occ backwards. Op occs in
// flight (STARTING, PROCESSING, ROLLING_BACK) carry `sweep: IN_FLIGHT`, the key of a sparse index
// (shared with the notification outbox, lib/store/outbox.ts), so the reconciliation sweep reads
// just them however long the history grows.
import type { LcmOperationState, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import { sweepItems, IN_FLIGHT } from './outbox.ts';
import {
  allItems,
  listIndexesByAttribute,
  shardedKeysOf,
  backfillShardedKeys,
  requiredEnv,
  updateExpression,
  type ListIndex,
  type ListPage,
} from './dynamo.ts';
import { TenantRecordRepository } from './repository.ts';

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
  /** A page in start order of the scope's op occs, or of those `plan` pins through one of OP_OCC_LIST_INDEXES. */
  listPage: ListPage<VnfLcmOpOccRecord>;
  /** Moves the op occ to `to` if it is in one of `from`; returns the new record, or undefined when it was not. */
  transition(id: string, transition: Transition): Promise<VnfLcmOpOccRecord | undefined>;
  /** Every op occ STARTING, PROCESSING or ROLLING_BACK, of every tenant. */
  listInFlight(): Promise<VnfLcmOpOccRecord[]>;
}

/** States in which an execution drives the op occ (SOL003 5.4.1.2); FAILED_TEMP waits for the NFVO. */
export const IN_FLIGHT_STATES: readonly LcmOperationState[] = ['STARTING', 'PROCESSING', 'ROLLING_BACK'];

/**
 * The indexes an op occ list can read through (lib/sol/plan.ts), by the attribute they pin. The
 * instance index is the table's `byVnfInstance` (the instance's operation history), sorted like the
 * tenant list by startSeq. It is keyed by the instance alone, so it needs no tenant-scoped copy
 * and no back-fill: the read keeps only the scope's tenant (a condition on what it reads, which
 * holds for every op occ of a tenant's instance and for none of another tenant's, instance ids
 * being generated here), and an admin's all-tenant list reads the same index without it. The state
 * and operation indexes are a tenant's own (a tenant's FAILED_TEMP op occs are not another's).
 */
const LIST_INDEXES: readonly ListIndex[] = [
  { name: 'byVnfInstance', partitionKey: 'vnfInstanceId', sortKey: 'startSeq' },
  // Tenant-scoped and sharded (lib/store/dynamo.ts ListIndex): KEYS_ONLY, keyed by derived attributes
  // every create writes and every state change moves.
  { name: 'byOperationState', attribute: 'operationState', partitionKey: 'operationStateKey', sortKey: 'startSeq', sharded: true },
  { name: 'byOperation', attribute: 'operation', partitionKey: 'operationKey', sortKey: 'startSeq', sharded: true },
];
export const OP_OCC_LIST_INDEXES = /* @__PURE__ */ listIndexesByAttribute(LIST_INDEXES);

/** Records with their tenant-scoped list index keys (a local rebuild), and the back-fill of those from before the indexes (lib/store/dynamo.ts). */
export const opOccListKeys = /* @__PURE__ */ shardedKeysOf(LIST_INDEXES);
export const backfillOpOccListKeys = (table = requiredEnv('VNF_LCM_OP_OCCS_TABLE')): Promise<number> => backfillShardedKeys(table, LIST_INDEXES);

export const opOccListKey = (r: VnfLcmOpOccRecord): Record<string, string> => ({ id: r.id, tenantId: r.tenantId, startSeq: r.startSeq });

export class DynamoVnfLcmOpOccStore extends TenantRecordRepository<VnfLcmOpOccRecord> implements VnfLcmOpOccStore {
  constructor(table = requiredEnv('VNF_LCM_OP_OCCS_TABLE')) {
    super(table, LIST_INDEXES);
  }

  override async create(record: VnfLcmOpOccRecord): Promise<void> {
    const item: VnfLcmOpOccRecord & { sweep?: string } = IN_FLIGHT_STATES.includes(record.operationState) ? { ...record, sweep: IN_FLIGHT } : record;
    await super.create(item);
  }

  async transition(id: string, t: Transition): Promise<VnfLcmOpOccRecord | undefined> {
    const values: Record<string, unknown> = { ':to': t.to, ':now': t.now, ':one': 1 };
    const inFlight = IN_FLIGHT_STATES.includes(t.to);
    if (inFlight) values[':sweep'] = IN_FLIGHT;
    const froms = t.from.map((state, i) => {
      values[`:f${i}`] = state;
      return `:f${i}`;
    });
    // A change of state moves the op occ in the state index (an attribute update keeps it where it is).
    const moves = !(t.from.length === 1 && t.from[0] === t.to);
    const keys = moves ? await this.shardedKeysOf(id, { operationState: t.to }, []) : { set: {}, remove: [] };
    const parts = updateExpression(
      {
        sets: ['#state = :to', 'stateEnteredTime = :now', 'revision = revision + :one', ...(inFlight ? ['sweep = :sweep'] : [])],
        names: { '#state': 'operationState' },
        values,
      },
      { ...t.set, ...keys.set },
      [...(t.remove ?? []), ...keys.remove, ...(inFlight ? [] : ['sweep'])],
    );
    return this.updatedRecord({
      Key: { id },
      UpdateExpression: parts.expression,
      ConditionExpression: `#state IN (${froms.join(', ')})`,
      ExpressionAttributeNames: parts.names,
      ExpressionAttributeValues: parts.values,
    });
  }

  async listInFlight(): Promise<VnfLcmOpOccRecord[]> {
    try {
      return await sweepItems<VnfLcmOpOccRecord>(this.table, IN_FLIGHT);
    } catch (error) {
      // A table created before the index existed (a local data folder from an older version): scan it.
      if (!(error instanceof Error && error.name === 'ValidationException' && /index/i.test(error.message))) throw error;
    }
    return allItems<VnfLcmOpOccRecord>({
      TableName: this.table,
      FilterExpression: 'operationState IN (:a, :b, :c)',
      ExpressionAttributeValues: { ':a': IN_FLIGHT_STATES[0], ':b': IN_FLIGHT_STATES[1], ':c': IN_FLIGHT_STATES[2] },
    });
  }
}

// "Individual VNF snapshot" resources (SOL003 5.4.23) in DynamoDB. A resource is in use while the
// op occ named by `usedBy` (a CREATE_SNAPSHOT filling it or a REVERT_TO_SNAPSHOT reading it) has not
// ended: taking it is one conditional write naming the op occ it may take it over from, so two
// operations racing for one snapshot get exactly one winner.
import type { VnfSnapshotInfoRecord } from '#lib/sol/model.ts';
import { conditionHeld, ifConditionHeld, requiredEnv, updateExpression, type Page, type TenantScope } from './dynamo.ts';
import { TenantRecordRepository } from './repository.ts';

export interface SnapshotClaim {
  opOccId: string;
  now: string;
  /** The op occ that used it last (ended, or never written); undefined when no operation ever used it. */
  takeOverFrom?: string;
  /** CREATE_SNAPSHOT fills only a resource that holds no snapshot yet. */
  requireEmpty?: boolean;
}

export interface VnfSnapshotStore {
  create(record: VnfSnapshotInfoRecord): Promise<void>;
  get(id: string): Promise<VnfSnapshotInfoRecord | undefined>;
  listPage(scope: TenantScope, limit: number, after?: Record<string, string | number>): Promise<Page<VnfSnapshotInfoRecord>>;
  /** True when taken for `claim.opOccId`; false when the condition failed (the caller reads the record to explain why). */
  claim(id: string, claim: SnapshotClaim): Promise<boolean>;
  /** Gives it up again, if `opOccId` still has it (an operation that did not start). */
  release(id: string, opOccId: string): Promise<void>;
  /** Changes attributes while `opOccId` uses it; false when it does not. */
  updateFor(id: string, opOccId: string, set: Record<string, unknown>, remove?: string[]): Promise<boolean>;
  /** Deletes it unless it was taken by another operation than `lastUser` meanwhile; the deleted record, or undefined. */
  deleteUnused(id: string, lastUser: string | undefined): Promise<VnfSnapshotInfoRecord | undefined>;
}

export const vnfSnapshotListKey = (r: VnfSnapshotInfoRecord): Record<string, string> => ({ id: r.id, tenantId: r.tenantId, createdSeq: r.createdSeq });

export class DynamoVnfSnapshotStore extends TenantRecordRepository<VnfSnapshotInfoRecord> implements VnfSnapshotStore {
  constructor(table = requiredEnv('VNF_SNAPSHOTS_TABLE')) {
    super(table);
  }

  claim(id: string, claim: SnapshotClaim): Promise<boolean> {
    const values: Record<string, unknown> = { ':op': claim.opOccId, ':now': claim.now, ':one': 1 };
    let condition = 'attribute_exists(id) AND ';
    if (claim.takeOverFrom) {
      values[':last'] = claim.takeOverFrom;
      condition += 'usedBy = :last';
    } else {
      condition += 'attribute_not_exists(usedBy)';
    }
    if (claim.requireEmpty) condition += ' AND attribute_not_exists(vnfSnapshot)';
    return conditionHeld(() =>
      this.updateItem({
        Key: { id },
        UpdateExpression: 'SET usedBy = :op, usedSince = :now, revision = revision + :one',
        ConditionExpression: condition,
        ExpressionAttributeValues: values,
      }),
    );
  }

  async release(id: string, opOccId: string): Promise<void> {
    await conditionHeld(() =>
      this.updateItem({
        Key: { id },
        UpdateExpression: 'REMOVE usedBy, usedSince SET revision = revision + :one',
        ConditionExpression: 'usedBy = :op',
        ExpressionAttributeValues: { ':op': opOccId, ':one': 1 },
      }),
    );
  }

  updateFor(id: string, opOccId: string, set: Record<string, unknown>, remove: string[] = []): Promise<boolean> {
    const parts = updateExpression({ sets: ['revision = revision + :one'], values: { ':op': opOccId, ':one': 1 } }, set, remove);
    return conditionHeld(() =>
      this.updateItem({
        Key: { id },
        UpdateExpression: parts.expression,
        ConditionExpression: 'usedBy = :op',
        ExpressionAttributeNames: Object.keys(parts.names).length ? parts.names : undefined,
        ExpressionAttributeValues: parts.values,
      }),
    );
  }

  deleteUnused(id: string, lastUser: string | undefined): Promise<VnfSnapshotInfoRecord | undefined> {
    return ifConditionHeld(
      async () =>
        (
          await this.deleteItem({
            Key: { id },
            ConditionExpression: lastUser ? 'attribute_exists(id) AND usedBy = :last' : 'attribute_exists(id) AND attribute_not_exists(usedBy)',
            ...(lastUser ? { ExpressionAttributeValues: { ':last': lastUser } } : {}),
            ReturnValues: 'ALL_OLD',
          })
        ).Attributes as VnfSnapshotInfoRecord | undefined,
    );
  }
}

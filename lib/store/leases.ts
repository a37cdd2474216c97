// A lease: one small item a scheduled job takes with a conditional write before it works, so two
// runs never work at once without relying on reserved concurrency. The item carries its expiry; a
// run that died holding it (a timeout, a crash) is taken over once the expiry has passed. The item
// lives in a table of tenant records under a reserved id and has no tenantId, so no tenant list,
// index or query of that table sees it.
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { conditionHeld, documentClient, requiredEnv } from './dynamo.ts';

export interface LeaseStore {
  /** Takes the lease for `holder` until `expiresAt` (epoch ms) when it is free or expired at `now`; false when another holder has it. */
  acquire(name: string, holder: string, now: number, expiresAt: number): Promise<boolean>;
  /** Gives the lease back if `holder` still has it. */
  release(name: string, holder: string): Promise<void>;
}

export const leaseId = (name: string): string => `lease#${name}`;

export class DynamoLeaseStore implements LeaseStore {
  /** The alarms table by default: the health sweep's lease is the only one, and its function writes that table. */
  constructor(private readonly table = requiredEnv('ALARMS_TABLE')) {}

  acquire(name: string, holder: string, now: number, expiresAt: number): Promise<boolean> {
    return conditionHeld(() =>
      documentClient().send(
        new PutCommand({
          TableName: this.table,
          Item: { id: leaseId(name), holder, expiresAt, takenAt: new Date(now).toISOString() },
          ConditionExpression: 'attribute_not_exists(id) OR expiresAt < :now',
          ExpressionAttributeValues: { ':now': now },
        }),
      ),
    );
  }

  async release(name: string, holder: string): Promise<void> {
    // A failed condition: the lease expired and another run has it now; nothing of ours to give back.
    await conditionHeld(() =>
      documentClient().send(
        new DeleteCommand({
          TableName: this.table,
          Key: { id: leaseId(name) },
          ConditionExpression: 'holder = :h',
          ExpressionAttributeValues: { ':h': holder },
        }),
      ),
    );
  }
}

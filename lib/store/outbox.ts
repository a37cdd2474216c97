// The notification outbox: an entry is written before the record change it announces and removed
// by the notifier once it has fanned the notification's event out (lib/notify/notifier.ts), so a
// process that dies between the record write and the queue send leaves the entry for the
// reconciliation sweep to publish from the record, and so does a queue that lost the event. Entries are
// items of the op-occs table (ids `outbox#<notification id>`, no tenant, so no list or tenant index
// sees them) on its sparse `sweep` index, which also holds the op occs in flight.
import { setTimeout as delay } from 'node:timers/promises';
import { BatchWriteCommand, DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { allItems, documentClient, requiredEnv } from './dynamo.ts';

/** `sweep` values: op occs in flight, and outbox entries. */
export const IN_FLIGHT = 'IN_FLIGHT';
const OUTBOX = 'OUTBOX';
const ID_PREFIX = 'outbox#';

/** Every item of one partition of the sparse `sweep` index, oldest first. */
export function sweepItems<T>(table: string, partition: string): Promise<T[]> {
  return allItems<T>({ TableName: table, IndexName: 'sweep', KeyConditionExpression: 'sweep = :p', ExpressionAttributeValues: { ':p': partition } });
}

/** A notification meant for a record change, kept until it is queued. */
export interface OutboxEntry {
  /** The notification's id. */
  id: string;
  /** Which record announces it: an op occ or an alarm (the event is rebuilt from it), or a VNF instance, VNF package, PM job or threshold (the event is kept whole). */
  kind: 'opOcc' | 'instance' | 'alarm' | 'package' | 'pm';
  recordId: string;
  /**
   * What the record shows once the change is made. opOcc: its state and entry time; instance:
   * whether it exists; alarm: the notification (raised or cleared) and its time; package: whether
   * it exists and, if it does, its onboarding and operational state.
   */
  expect: {
    operationState?: string;
    stateEnteredTime?: string;
    exists?: boolean;
    notificationType?: string;
    at?: string;
    onboardingState?: string;
    operationalState?: string;
  };
  /** instance, package, pm: the whole event (a deleted record could not rebuild it; a PM notification is no record's state). */
  event?: Record<string, unknown>;
  createdAt: string;
}

export interface NotificationOutbox {
  put(entry: OutboxEntry): Promise<void>;
  remove(id: string): Promise<void>;
  list(): Promise<OutboxEntry[]>;
}

/** BatchWriteItem takes 25 requests; what DynamoDB leaves unprocessed (throttling) is sent again, a few times. */
const BATCH_WRITE = 25;
const UNPROCESSED_ATTEMPTS = 5;

export class DynamoNotificationOutbox implements NotificationOutbox {
  constructor(private readonly table = requiredEnv('VNF_LCM_OP_OCCS_TABLE')) {}

  async put(entry: OutboxEntry): Promise<void> {
    await documentClient().send(
      new PutCommand({ TableName: this.table, Item: { ...entry, id: `${ID_PREFIX}${entry.id}`, sweep: OUTBOX, startSeq: `${entry.createdAt}#${entry.id}` } }),
    );
  }

  async remove(id: string): Promise<void> {
    await documentClient().send(new DeleteCommand({ TableName: this.table, Key: { id: `${ID_PREFIX}${id}` } }));
  }

  async list(): Promise<OutboxEntry[]> {
    const items = await sweepItems<OutboxEntry & { sweep?: string; startSeq?: string }>(this.table, OUTBOX);
    return items.map(({ sweep: _sweep, startSeq: _seq, ...entry }) => ({ ...entry, id: entry.id.slice(ID_PREFIX.length) }));
  }
}

/**
 * Removes the entries of these notifications from the outbox in `table`, in as few writes as
 * DynamoDB allows: the notifier's, once a batch is fanned out. (A function of its own, not a method
 * of the outbox: the functions that only write entries do not bundle it.) An id named twice is
 * removed once: BatchWriteItem refuses a request that names a key twice.
 */
export async function removeOutboxEntries(ids: string[], table = requiredEnv('VNF_LCM_OP_OCCS_TABLE')): Promise<void> {
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += BATCH_WRITE) {
    let requests = unique.slice(i, i + BATCH_WRITE).map((id) => ({ DeleteRequest: { Key: { id: `${ID_PREFIX}${id}` } } }));
    for (let attempt = 1; requests.length; attempt++) {
      if (attempt > UNPROCESSED_ATTEMPTS) throw new Error(`DynamoDB left ${requests.length} outbox removal(s) unprocessed`);
      if (attempt > 1) await delay(50 * 2 ** attempt);
      const out = await documentClient().send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
      requests = (out.UnprocessedItems?.[table] ?? []) as typeof requests;
    }
  }
}

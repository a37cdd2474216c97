// How a recorded change becomes a queued notification, for every API family: the outbox entry is
// written before the change so that no crash between the write and the queue loses it, the event
// is queued after it without ever failing the write, and the reconciliation sweep queues what a
// dead process left in the outbox. The families' stores (NotifyingOpOccStore and
// NotifyingInstanceStore in lib/lcm/notifications.ts, NotifyingPackageStore in
// lib/packages/notifications.ts) and the alarm monitor decide what a change announces.
import type { NotificationOutbox, OutboxEntry } from '#lib/store/outbox.ts';
import { log } from '#lib/log.ts';
import type { NotificationQueue, QueuedEvent } from './queue.ts';

/**
 * What announcing a change came to: its event is on the queue, could not be queued (the sweep will
 * queue it from the outbox), or there was nothing to announce (the change was not made, or what it
 * changed is gone).
 */
export type Announced = 'queued' | 'unqueued' | 'nothing';

/**
 * Queues events, never failing the write they follow: the record is already written, and an
 * exception here would leave the operation half-done (an op occ moved on with no execution
 * behind it). The SQS client retries; what still fails is logged with the whole event.
 */
export async function publishAfterWrite(queue: NotificationQueue, events: QueuedEvent[]): Promise<Announced> {
  try {
    await queue.publish(events);
    return 'queued';
  } catch (error) {
    log.error('could not queue a notification; the reconciliation sweep will queue it again from the outbox', { events, error });
    return 'unqueued';
  }
}

/**
 * Announces a record change through the outbox: the entry is written before the change and the
 * notification queued after it; the notifier removes the entry once it has fanned the event out
 * (with the other entries of its batch, in one write, off the path of the request that made the
 * change). A change that failed, or announces nothing, removes its entry at once; a process that
 * dies in between, or a queue that lost the event, leaves it to the sweep (republishUnsent).
 * `first`, when given, is what the change waits for besides the entry (a precondition of its own,
 * such as taking a package into use): it runs while the entry is written, and when it fails the
 * change is not made and its entry is removed.
 */
export async function withOutbox<T>(
  outbox: NotificationOutbox | undefined,
  entry: OutboxEntry,
  change: () => Promise<T>,
  publishAfter: (result: T) => Promise<Announced>,
  first?: () => Promise<void>,
): Promise<T> {
  if (!outbox) {
    await first?.();
    const result = await change();
    await publishAfter(result);
    return result;
  }
  const record = async () => {
    try {
      await outbox.put(entry);
      return true;
    } catch (error) {
      // The change still happens; only its protection against a crash is missing.
      log.error('could not record a notification in the outbox', { notificationId: entry.id, error });
      return false;
    }
  };
  const [recorded, ready] = await Promise.allSettled([record(), first?.()]);
  const kept = recorded.status === 'fulfilled' && recorded.value;
  let result: T;
  try {
    if (ready.status === 'rejected') throw ready.reason;
    result = await change();
  } catch (error) {
    if (kept) await outbox.remove(entry.id).catch(() => undefined);
    throw error;
  }
  // Queued or not, the entry stays: for the notifier to remove once it has fanned the event out, or
  // for the sweep to publish again.
  if ((await publishAfter(result)) === 'nothing' && kept) await outbox.remove(entry.id).catch(() => undefined);
  return result;
}

/**
 * Per outbox entry kind, the family's way back from an entry to its event: read the record, and
 * return the event if the record shows the change happened (undefined: it never did).
 */
export type OutboxReplay = Partial<Record<OutboxEntry['kind'], (entry: OutboxEntry) => Promise<QueuedEvent | undefined>>>;

/**
 * The sweep's part: queues what the outbox still holds from before `olderThan` (a process died
 * between a record change and its notification), if the record shows the change happened; the
 * entries of changes that never happened are dropped. Entries of a kind `replay` cannot read are
 * left for a sweep that can. Returns the ids queued.
 */
export async function republishUnsent(outbox: NotificationOutbox, replay: OutboxReplay, queue: NotificationQueue, olderThan: string): Promise<string[]> {
  const sent: string[] = [];
  for (const entry of await outbox.list()) {
    if (entry.createdAt > olderThan) continue;
    const rebuild = replay[entry.kind];
    if (!rebuild) continue;
    const event = await rebuild(entry);
    if (event) {
      await queue.publish([event]);
      sent.push(entry.id);
    }
    await outbox.remove(entry.id);
  }
  if (sent.length) log.warn('queued notifications a dead process had not', { notificationIds: sent });
  return sent;
}

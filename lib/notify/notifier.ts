// The notifier: one batch of the notification queue. An event (a recorded change) fans out into
// one delivery per matching subscription of its API family; a delivery is POSTed to the
// subscriber's callback. It knows the families only as the NotificationFamily each hands in.
//
// Ordering and retries on a FIFO queue, where SQS cannot delay single messages: a message that
// fails stays in flight — its visibility is set to the backoff and it is reported as a batch item
// failure — and so do the later messages of its group in the batch, so nothing of that group
// overtakes it. The backoff doubles with the time since the message was queued (1 s, 2 s, 4 s,
// ... at most 5 min). Connection errors, timeouts, 429 and 5xx are retried until the retry period
// has passed since the message was queued; then, and at once for other answers (4xx, 3xx), the
// message goes to the dead-letter queue with the reason, for an operator to inspect and redrive.
//
// A change's outbox entry (lib/notify/publisher.ts withOutbox) is removed here, once its event is
// fanned out or in the dead-letter queue: the entries of a batch in one write, after its deliveries
// are queued. Until then the recovery sweep would queue the event again from the record, under the
// same deduplication id.
import { EgressDeniedError } from '#lib/egress.ts';
import { log } from '#lib/log.ts';
import { countNotification } from '#lib/metrics.ts';
import { callCallback, CALLBACK_TIMEOUT_MS, TokenError } from './callback.ts';
import type { DeliverableSubscription, NotificationFamily, NotifierDeps } from './ports.ts';
import type { FamilyEvent, NotificationAuth, NotificationDelivery, NotificationMessage } from './model.ts';

export interface ReceivedMessage {
  messageId: string;
  receiptHandle: string;
  body: string;
  groupId: string;
  /** When the message was queued (SentTimestamp), ms since the epoch. */
  sentAt: number;
}

export interface BatchOptions {
  /** Time left in this invocation, ms. */
  remainingMs(): number;
}

export interface BatchResult {
  failedMessageIds: string[];
  delivered: number;
  deadLettered: number;
}

type Outcome = (
  | { kind: 'done'; delivered?: boolean }
  | { kind: 'retry'; reason: string; status?: number }
  | { kind: 'dead'; reason: string; status?: number }
) & {
  /** The notification id of the event the message is (not a delivery): its outbox entry goes once the event is fanned out or dead-lettered. */
  event?: string;
};

const MIN_BACKOFF_S = 1;
const MAX_BACKOFF_S = 300;
// A delivery is only started with time for it (and its token request) left in the invocation.
const TIME_NEEDED_MS = 2 * CALLBACK_TIMEOUT_MS + 2_000;

/** Seconds to keep a failed message in flight: the time it has waited so far (so attempts double), within bounds and the retry period. */
export function backoffSeconds(waitedMs: number, retryPeriodMs: number, random = Math.random): number {
  const doubled = Math.max(MIN_BACKOFF_S, Math.min(MAX_BACKOFF_S, waitedMs / 1000));
  const jittered = doubled * (0.9 + 0.2 * random());
  const untilDeadline = Math.max(MIN_BACKOFF_S, (retryPeriodMs - waitedMs) / 1000);
  return Math.ceil(Math.min(jittered, untilDeadline));
}

/** Up to this many subscriptions, a tenant's are all read at once for a batch (one Query) rather than per instance (two a change). */
const FEW_SUBSCRIPTIONS = 100;

/** Subscription auth never changes (SOL003 has no PATCH of subscriptions), so a warm notifier reads each secret once. */
const authBySecret = new Map<string, Promise<NotificationAuth>>();

function readAuth(deps: NotifierDeps, secretId: string): Promise<NotificationAuth> {
  let auth = authBySecret.get(secretId);
  if (!auth) {
    auth = deps.secrets.read(secretId) as Promise<unknown> as Promise<NotificationAuth>;
    authBySecret.set(secretId, auth);
    auth.catch(() => authBySecret.delete(secretId));
  }
  return auth;
}

/** Reads shared by the messages of one batch, keyed by what is read and the family (subscription ids are unique only within one). */
class BatchReads {
  private readonly reads = new Map<string, Promise<unknown>>();

  /** The read `key` names, made once per batch. */
  private once<T>(key: string, read: () => Promise<T>): Promise<T> {
    let found = this.reads.get(key) as Promise<T> | undefined;
    if (!found) this.reads.set(key, (found = read()));
    return found;
  }

  /**
   * The tenant's subscriptions of the family a change can match. A tenant with few subscriptions:
   * all of them, in one read the whole batch shares. One with more, for a change of a known
   * instance when the store can tell them: those that can match a change of that instance (two
   * small reads per instance), not all of them.
   */
  async subscriptionsOf(family: NotificationFamily, tenantId: string, instanceId: string | undefined): Promise<DeliverableSubscription[]> {
    const store = family.subscriptions;
    const { listFor, listIfFew } = store;
    const tenant = `${family.family}/${tenantId}`;
    const all = () => this.once(`all ${tenant}`, () => store.listAll(tenantId));
    if (instanceId === undefined || listFor === undefined) return all();
    const few = listIfFew && (await this.once(`few ${tenant}`, () => listIfFew.call(store, tenantId, FEW_SUBSCRIPTIONS)));
    if (few) return few;
    return this.once(`for ${tenant}/${instanceId}`, async () => (await listFor.call(store, tenantId, instanceId)) ?? all());
  }

  subscription(family: NotificationFamily, id: string): Promise<DeliverableSubscription | undefined> {
    return this.once(`id ${family.family}/${id}`, () => family.subscriptions.get(id));
  }
}

/** A change: one notification per subscription of its family whose filter matches. */
async function fanOut(deps: NotifierDeps, reads: BatchReads, family: NotificationFamily, event: FamilyEvent): Promise<Outcome> {
  const deliveries: NotificationDelivery[] = [];
  const candidates = family.recipientsOf ? await family.recipientsOf(event) : await reads.subscriptionsOf(family, event.tenantId, family.instanceOf?.(event));
  for (const subscription of candidates) {
    const body = family.render(event, subscription);
    if (body)
      deliveries.push({
        kind: 'delivery',
        ...(family.unnamedDeliveries ? {} : { family: family.family }),
        subscriptionId: subscription.id,
        notificationId: event.notificationId,
        body,
      });
  }
  if (deliveries.length) await deps.queue.enqueueDeliveries(deliveries, family.groupOf?.(event) ?? event.groupId);
  return { kind: 'done' };
}

/** The family whose subscription a delivery is for. */
function familyOf(deps: NotifierDeps, delivery: NotificationDelivery): NotificationFamily | undefined {
  return deps.families.find((f) => (delivery.family === undefined ? f.unnamedDeliveries === true : f.family === delivery.family));
}

function retryable(status: number): boolean {
  return status === 429 || status >= 500;
}

async function deliver(deps: NotifierDeps, reads: BatchReads, delivery: NotificationDelivery): Promise<Outcome> {
  const family = familyOf(deps, delivery);
  if (!family)
    return {
      kind: 'dead',
      reason: delivery.family
        ? `this notifier does not deliver ${delivery.family} notifications`
        : 'no family of this notifier takes deliveries that name no family',
    };
  const subscription = await reads.subscription(family, delivery.subscriptionId);
  // SOL003 5.4.19.3.5: once a subscription is deleted, nothing more is sent for it.
  if (!subscription) return { kind: 'done' };
  const auth = subscription.authSecret ? await readAuth(deps, subscription.authSecret) : undefined;
  let status: number;
  try {
    status = (
      await callCallback(subscription.callbackUri, {
        method: 'POST',
        version: family.version(subscription),
        body: delivery.body,
        auth,
        policy: deps.egress,
      })
    ).status;
  } catch (error) {
    if (error instanceof EgressDeniedError) return { kind: 'dead', reason: `the egress policy refuses the callback: ${error.reason}` };
    if (error instanceof TokenError && error.status !== undefined && !retryable(error.status))
      return { kind: 'dead', reason: error.message, status: error.status };
    return { kind: 'retry', reason: (error as Error).message };
  }
  if (status >= 200 && status < 300) return { kind: 'done', delivered: true };
  if (retryable(status)) return { kind: 'retry', reason: `the callback answered ${status}`, status };
  return { kind: 'dead', reason: `the callback answered ${status}`, status };
}

async function handle(deps: NotifierDeps, reads: BatchReads, message: ReceivedMessage): Promise<Outcome> {
  let parsed: NotificationMessage;
  try {
    parsed = JSON.parse(message.body) as NotificationMessage;
  } catch {
    return { kind: 'dead', reason: 'the message is not JSON' };
  }
  let event: string | undefined;
  try {
    if (parsed.kind === 'delivery') return await deliver(deps, reads, parsed as NotificationDelivery);
    const change = parsed as FamilyEvent;
    if (typeof change.notificationId === 'string') event = change.notificationId;
    const family = deps.families.find((f) => f.eventKind === change.kind);
    if (family) return { ...(await fanOut(deps, reads, family, change)), event };
  } catch (error) {
    // The VNFM's own dependencies (DynamoDB, Secrets Manager, SQS): worth retrying.
    return { kind: 'retry', reason: (error as Error).message, event };
  }
  return { kind: 'dead', reason: `unknown message kind "${String((parsed as { kind?: unknown }).kind)}"`, event };
}

function describe(message: ReceivedMessage): Record<string, string> {
  try {
    const parsed = JSON.parse(message.body) as { kind?: string; notificationId?: unknown; subscriptionId?: unknown; notificationType?: unknown };
    return {
      notificationId: String(parsed.notificationId ?? ''),
      ...(parsed.kind === 'delivery' ? { subscriptionId: String(parsed.subscriptionId) } : { notificationType: String(parsed.notificationType ?? '') }),
    };
  } catch {
    return {};
  }
}

export async function processNotificationBatch(deps: NotifierDeps, messages: ReceivedMessage[], options: BatchOptions): Promise<BatchResult> {
  const reads = new BatchReads();
  const groups = new Map<string, ReceivedMessage[]>();
  for (const message of messages) groups.set(message.groupId, [...(groups.get(message.groupId) ?? []), message]);
  const failed = new Set<string>();
  const visibility: Array<{ receiptHandle: string; seconds: number }> = [];
  // The events fanned out or dead-lettered: their outbox entries go.
  const announced: string[] = [];
  const result: BatchResult = { failedMessageIds: [], delivered: 0, deadLettered: 0 };

  const deadLetter = async (message: ReceivedMessage, reason: string, status?: number): Promise<boolean> => {
    try {
      await deps.queue.deadLetter([
        {
          body: message.body,
          groupId: message.groupId,
          reason: {
            reason,
            failedAt: new Date(deps.clock()).toISOString(),
            ...(status !== undefined ? { lastStatus: String(status) } : {}),
            ...describe(message),
          },
        },
      ]);
      result.deadLettered++;
      countNotification('DeadLettered');
      log.warn('notification moved to the dead-letter queue', { reason, status, ...describe(message) });
      return true;
    } catch (error) {
      log.error('could not move a notification to the dead-letter queue; it will be retried', { error, ...describe(message) });
      return false;
    }
  };

  await Promise.all(
    [...groups.values()].map(async (group) => {
      for (const [index, message] of group.entries()) {
        // Out of time: give back the rest of the group, in order, to be received again at once.
        if (options.remainingMs() < TIME_NEEDED_MS) {
          for (const rest of group.slice(index)) {
            failed.add(rest.messageId);
            visibility.push({ receiptHandle: rest.receiptHandle, seconds: 0 });
          }
          return;
        }
        const outcome = await handle(deps, reads, message);
        if (outcome.kind === 'done') {
          if (outcome.event) announced.push(outcome.event);
          if (outcome.delivered) {
            result.delivered++;
            countNotification('Delivered');
          }
          continue;
        }
        const waited = deps.clock() - message.sentAt;
        if (outcome.kind === 'dead' || waited >= deps.retryPeriodMs) {
          const reason =
            outcome.kind === 'dead'
              ? outcome.reason
              : `${outcome.reason}; retried for ${Math.round(waited / 1000)} s (retry period ${deps.retryPeriodMs / 1000} s)`;
          if (await deadLetter(message, reason, outcome.status)) {
            if (outcome.event) announced.push(outcome.event);
            continue;
          }
        } else {
          log.info('notification delivery failed; retrying later', { reason: outcome.reason, ...describe(message) });
        }
        // This message and everything after it in its group wait for the backoff.
        countNotification('Retried');
        const seconds = backoffSeconds(waited, deps.retryPeriodMs);
        for (const rest of group.slice(index)) {
          failed.add(rest.messageId);
          visibility.push({ receiptHandle: rest.receiptHandle, seconds });
        }
        return;
      }
    }),
  );

  if (announced.length && deps.outbox) {
    // Best effort: an entry left behind makes the sweep queue its event again, which the queue drops
    // as a duplicate within its deduplication window (and a subscriber may get twice after it).
    await deps.outbox
      .removeAll(announced)
      .catch((error: unknown) => log.warn('could not remove the outbox entries of fanned-out events; the sweep will', { notificationIds: announced, error }));
  }
  if (visibility.length) {
    // Best effort: without it the messages come back after the queue's visibility timeout.
    await deps.queue.changeVisibility(visibility).catch((error: unknown) => log.warn('could not set the backoff of failed notifications', { error }));
  }
  result.failedMessageIds = messages.filter((m) => failed.has(m.messageId)).map((m) => m.messageId);
  return result;
}

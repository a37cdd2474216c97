// The ports subscriptions and the notifier depend on, and the NotificationFamily every API family
// plugs in through (lib/deps.ts wires them; tests hand in others).
import type { EgressPolicy } from '#lib/egress.ts';
import type { SecretStore } from '#lib/secrets/vim-access.ts';
import type { StoredSubscription, SubscriptionStore } from '#lib/store/subscriptions.ts';
import type { FamilyEvent } from './model.ts';
import type { NotificationQueue } from './queue.ts';

/** What creating, reading and deleting a subscription of any family needs besides the family's own store. */
export interface NotifyDeps {
  secrets: SecretStore;
  egress: EgressPolicy;
  now(): string;
  newId(): string;
}

/** A subscription as the notifier delivers to it, whatever its API family. */
export interface DeliverableSubscription extends StoredSubscription {
  callbackUri: string;
  /** The secret holding its NotificationAuth, if any. */
  authSecret?: string;
}

/**
 * An API family whose notifications go through the notifier without the notifier knowing the
 * family's model (VNF LCM, VNF FM, VNF packages): the kind of its events, its subscriptions, and how
 * an event becomes one subscription's notification. The function that runs the notifier hands the
 * families in.
 */
export interface NotificationFamily<S extends DeliverableSubscription = DeliverableSubscription, E extends FamilyEvent = FamilyEvent> {
  /** Names the family in its deliveries (and keys its subscriptions in the notifier's reads). */
  family: string;
  /** Its deliveries carry no family name, and a delivery without one is its (VNF LCM: the format from before families). */
  unnamedDeliveries?: boolean;
  /** The `kind` of its events. */
  eventKind: string;
  subscriptions: Pick<SubscriptionStore<S>, 'get' | 'listAll' | 'listFor' | 'listIfFew'>;
  /**
   * Families whose every event names its one recipient (a PM job's or a threshold's callback): that
   * recipient, or none when it is gone. Without it, an event is matched against every subscription
   * of its tenant.
   */
  recipientsOf?(event: E): Promise<S[]>;
  /**
   * The VNF instance an event is a change of, for families whose subscriptions can name instances:
   * the event is then matched only against the subscriptions that can match a change of it
   * (SubscriptionStore listFor).
   */
  instanceOf?(event: E): string | undefined;
  /** The notification for this subscription, or undefined when its filter does not match. */
  render(event: E, subscription: S): Record<string, unknown> | undefined;
  /** The Version header of a delivery to this subscription. */
  version(subscription: S): string;
  /** The FIFO group of an event's deliveries, when not its groupId (events queued before events carried one). */
  groupOf?(event: E): string;
}

export interface NotifierDeps extends NotifyDeps {
  /** The API families fanned out and delivered here. */
  families: NotificationFamily[];
  queue: NotificationQueue;
  /** How long a failing delivery is retried before it goes to the dead-letter queue. */
  retryPeriodMs: number;
  clock(): number;
  /** The outbox the changes' entries are in: the notifier removes those of the events it has fanned out (none: nothing to remove). */
  outbox?: { removeAll(ids: string[]): Promise<void> };
}

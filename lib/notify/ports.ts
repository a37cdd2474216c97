// The ports subscriptions and the notifier depend on (lib/deps.ts wires them; tests hand in others).
import type { EgressPolicy } from '#lib/egress.ts';
import type { SecretStore } from '#lib/secrets/vim-access.ts';
import type { StoredSubscription, SubscriptionStore } from '#lib/store/subscriptions.ts';
import type { FmSubscriptionRecord } from '#lib/fm/model.ts';
import type { FamilyEvent, NotificationDelivery } from './model.ts';
import type { NotificationQueue } from './queue.ts';

export interface NotifyDeps {
  subscriptions: SubscriptionStore;
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
 * An API family whose notifications go through this notifier without the notifier knowing the
 * family's model (VNF package management): the kind of its events, its subscriptions, and how an
 * event becomes one subscription's notification. The function that runs the notifier hands it in.
 */
export interface NotificationFamily<S extends DeliverableSubscription = DeliverableSubscription> {
  family: NonNullable<NotificationDelivery['family']>;
  eventKind: string;
  subscriptions: Pick<SubscriptionStore<S>, 'get' | 'listAll'>;
  /** The notification for this subscription, or undefined when its filter does not match. */
  render(event: FamilyEvent, subscription: S): Record<string, unknown> | undefined;
  /** The Version header of a delivery to this subscription. */
  version(subscription: S): string;
}

export interface NotifierDeps extends NotifyDeps {
  /** Other API families fanned out and delivered here. */
  families?: NotificationFamily[];
  /** VNF FM subscriptions (/vnffm/v1/subscriptions). */
  fmSubscriptions: SubscriptionStore<FmSubscriptionRecord>;
  queue: NotificationQueue;
  /** How long a failing delivery is retried before it goes to the dead-letter queue. */
  retryPeriodMs: number;
  clock(): number;
}

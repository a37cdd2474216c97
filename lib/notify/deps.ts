// The ports subscriptions and the notifier depend on, wired once per process to their AWS
// implementations (tests can hand in others).
import { egressPolicyFromEnv, type EgressPolicy } from '#lib/egress.ts';
import { SecretsManagerStore, type SecretStore } from '#lib/secrets/vim-access.ts';
import { DynamoSubscriptionStore, type SubscriptionStore } from '#lib/store/subscriptions.ts';
import type { FmSubscriptionRecord } from '#lib/fm/model.ts';
import { SqsNotificationQueue, type NotificationQueue } from './queue.ts';

export interface NotifyDeps {
  subscriptions: SubscriptionStore;
  secrets: SecretStore;
  egress: EgressPolicy;
  now(): string;
  newId(): string;
}

export interface NotifierDeps extends NotifyDeps {
  /** VNF FM subscriptions (/vnffm/v1/subscriptions). */
  fmSubscriptions: SubscriptionStore<FmSubscriptionRecord>;
  queue: NotificationQueue;
  /** How long a failing delivery is retried before it goes to the dead-letter queue. */
  retryPeriodMs: number;
  clock(): number;
}

let deps: NotifierDeps | undefined;

export function notifyDeps(): NotifierDeps {
  deps ??= {
    subscriptions: new DynamoSubscriptionStore(),
    secrets: new SecretsManagerStore(),
    egress: egressPolicyFromEnv(),
    now: () => new Date().toISOString(),
    newId: () => crypto.randomUUID(),
    queue: new SqsNotificationQueue(),
    fmSubscriptions: new DynamoSubscriptionStore<FmSubscriptionRecord>(process.env.FM_SUBSCRIPTIONS_TABLE ?? 'FmSubscriptionsTable'),
    retryPeriodMs: Number(process.env.NOTIFICATION_RETRY_PERIOD ?? 86_400) * 1000,
    clock: () => Date.now(),
  };
  return deps;
}

// The composition root: every port wired once per process to its AWS implementation (the local
// runtime points the same SDK clients at its stand-ins). Only functions/ (and the benchmark) import
// this; everything under lib/ takes its ports as arguments.
import { egressPolicyFromEnv } from '#lib/egress.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { FmDeps } from '#lib/fm/ports.ts';
import type { NotifierDeps } from '#lib/notify/ports.ts';
import type { VimRegistryDeps } from '#lib/vim-connections/ports.ts';
import type { FmSubscriptionRecord } from '#lib/fm/model.ts';
import { notifyingInstanceStore, notifyingOpOccStore, republishUnsent } from '#lib/notify/publisher.ts';
import { SqsNotificationQueue } from '#lib/notify/queue.ts';
import { notifyingPackageStore } from '#lib/packages/notifications.ts';
import { SecretsManagerStore } from '#lib/secrets/vim-access.ts';
import { DynamoAlarmStore, scanInstantiated } from '#lib/store/alarms.ts';
import { StepFunctionsExecutor } from '#lib/store/executions.ts';
import { DynamoVnfLcmOpOccStore } from '#lib/store/op-occs.ts';
import { DynamoNotificationOutbox } from '#lib/store/outbox.ts';
import { DynamoVnfPackageStore } from '#lib/store/packages.ts';
import { DynamoSubscriptionStore } from '#lib/store/subscriptions.ts';
import { DynamoVnfInstanceStore } from '#lib/store/vnf-instances.ts';
import { DynamoVimStore } from '#lib/store/vims.ts';

let core: CoreDeps | undefined;

export function coreDeps(): CoreDeps {
  core ??= withNotifications({
    instances: new DynamoVnfInstanceStore(),
    opOccs: new DynamoVnfLcmOpOccStore(),
    packages: new DynamoVnfPackageStore(),
    vims: new DynamoVimStore(),
    secrets: new SecretsManagerStore(),
    executor: new StepFunctionsExecutor(),
    now: () => new Date().toISOString(),
    newId: () => crypto.randomUUID(),
  });
  return core;
}

/** Every op occ, instance and package change written through these deps is queued for notification (SOL003 5.6.2, SOL005 9.6.2). */
function withNotifications(base: CoreDeps): CoreDeps {
  if (!process.env.NOTIFICATION_QUEUE_URL) return base;
  const queue = new SqsNotificationQueue();
  const outbox = new DynamoNotificationOutbox();
  return {
    ...base,
    instances: notifyingInstanceStore(base.instances, queue, base.now, outbox),
    opOccs: notifyingOpOccStore(base.opOccs, base.instances, queue, outbox),
    packages: notifyingPackageStore(base.packages, queue, base.now, outbox),
    republishUnsent: (olderThan) => republishUnsent(outbox, { opOccs: base.opOccs, instances: base.instances, alarms: new DynamoAlarmStore(), packages: base.packages }, queue, olderThan),
  };
}

let notifier: NotifierDeps | undefined;

export function notifyDeps(): NotifierDeps {
  notifier ??= {
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
  return notifier;
}

const numberFromEnv = (name: string, fallback: number): number => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};

let fm: FmDeps | undefined;

export function fmDeps(): FmDeps {
  fm ??= {
    alarms: new DynamoAlarmStore(),
    lcm: coreDeps(),
    notify: notifyDeps(),
    queue: process.env.NOTIFICATION_QUEUE_URL ? new SqsNotificationQueue() : undefined,
    outbox: process.env.NOTIFICATION_QUEUE_URL ? new DynamoNotificationOutbox() : undefined,
    instantiated: () => scanInstantiated(),
    autoHeal: { maxHeals: numberFromEnv('AUTO_HEAL_MAX_ATTEMPTS', 3), windowSeconds: numberFromEnv('AUTO_HEAL_WINDOW', 3600) },
    vimTimeoutMs: numberFromEnv('HEALTH_VIM_TIMEOUT_MS', 10_000),
    vimConcurrency: numberFromEnv('HEALTH_VIM_CONCURRENCY', 8),
    now: () => new Date().toISOString(),
    newId: () => crypto.randomUUID(),
  };
  return fm;
}

let vimConnections: VimRegistryDeps | undefined;

/** The registered VIMs' API and reachability sweep: plain stores, as a VIM record change notifies no one. */
export function vimRegistryDeps(): VimRegistryDeps {
  vimConnections ??= {
    vims: new DynamoVimStore(),
    secrets: new SecretsManagerStore(),
    instances: new DynamoVnfInstanceStore(),
    now: () => new Date().toISOString(),
    newId: () => crypto.randomUUID(),
  };
  return vimConnections;
}

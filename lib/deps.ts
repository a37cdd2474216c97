// The composition root: every port wired once per process to its AWS implementation (the local
// runtime points the same SDK clients at its stand-ins). Only functions/ (and the benchmark) import
// this; everything under lib/ takes its ports as arguments.
import { requestScale } from '#lib/lcm/requests/scale-heal.ts';
import { egressPolicyFromEnv } from '#lib/egress.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { FmDeps } from '#lib/fm/ports.ts';
import type { NotificationFamily, NotifierDeps } from '#lib/notify/ports.ts';
import type { VimRegistryDeps } from '#lib/vim-connections/ports.ts';
import type { FmSubscriptionRecord } from '#lib/fm/model.ts';
import { alarmOutboxReplay, fmNotificationFamily, type FmSubscriptionDeps } from '#lib/fm/notifications.ts';
import { pmNotificationFamily, pmOutboxReplay } from '#lib/pm/notifications.ts';
import type { PmDeps } from '#lib/pm/ports.ts';
import { lcmNotificationFamily, lcmOutboxReplay, NotifyingInstanceStore, NotifyingOpOccStore, type SubscriptionRecord } from '#lib/lcm/notifications.ts';
import type { LcmSubscriptionDeps } from '#lib/lcm/subscriptions.ts';
import { republishUnsent } from '#lib/notify/publisher.ts';
import { anyInstanceOfPackage, clearUnbackedCount, countedPackages } from '#lib/store/package-usage.ts';
import { SqsNotificationQueue } from '#lib/notify/queue.ts';
import { NotifyingPackageStore, packageNotificationFamily, packageOutboxReplay } from '#lib/packages/notifications.ts';
import { SecretsManagerStore } from '#lib/secrets/vim-access.ts';
import { DynamoAlarmStore } from '#lib/store/alarms.ts';
import { StepFunctionsExecutor, type OperationExecutor } from '#lib/store/executions.ts';
import { DynamoVnfLcmOpOccStore } from '#lib/store/op-occs.ts';
import { DynamoNotificationOutbox, removeOutboxEntries } from '#lib/store/outbox.ts';
import { DynamoVnfPackageStore } from '#lib/store/packages.ts';
import { DynamoSubscriptionStore } from '#lib/store/subscriptions.ts';
import { DynamoLeaseStore } from '#lib/store/leases.ts';
import { DynamoPmJobStore, DynamoThresholdStore } from '#lib/store/pm.ts';
import { DynamoVnfInstanceStore, monitoredInstances, anyMonitored } from '#lib/store/vnf-instances.ts';
import { DynamoVimStore } from '#lib/store/vims.ts';
import { DynamoVnfSnapshotStore } from '#lib/store/vnf-snapshots.ts';

let core: CoreDeps | undefined;
/** The plain stores under the notifying ones, for the recovery sweep's replay (recoveryDeps). */
let plainCore: CoreDeps | undefined;
let stepCore: CoreDeps | undefined;

function plainStores(executor: OperationExecutor): CoreDeps {
  return {
    instances: new DynamoVnfInstanceStore(),
    opOccs: new DynamoVnfLcmOpOccStore(),
    packages: new DynamoVnfPackageStore(),
    vims: new DynamoVimStore(),
    ...(process.env.VNF_SNAPSHOTS_TABLE ? { snapshots: new DynamoVnfSnapshotStore() } : {}),
    secrets: new SecretsManagerStore(),
    executor,
    now: () => new Date().toISOString(),
    newId: () => crypto.randomUUID(),
  };
}

export function coreDeps(): CoreDeps {
  if (core) return core;
  plainCore = plainStores(new StepFunctionsExecutor());
  core = withNotifications(plainCore);
  return core;
}

/** Refuses what an LCM step never does: start, stop or look up a state machine execution. */
const NO_EXECUTIONS: OperationExecutor = {
  start: () => Promise.reject(new Error('An LCM step starts no state machine execution')),
  status: () => Promise.reject(new Error('An LCM step looks up no state machine execution')),
  stop: () => Promise.reject(new Error('An LCM step stops no state machine execution')),
};

/**
 * The ports of the LCM step and poll functions: coreDeps without the Step Functions executor, as
 * no step starts, stops or looks up an execution (the request side and the recovery sweep do), so
 * the two functions that run every step do not bundle the Step Functions client. Kept apart from
 * coreDeps: the local runtime runs every function in one process.
 */
export function stepDeps(): CoreDeps {
  stepCore ??= withNotifications(plainStores(NO_EXECUTIONS));
  return stepCore;
}

/**
 * WHERE EVERY LCM AND VNF PACKAGE NOTIFICATION STARTS (SOL003 5.6.2, SOL005 9.6.2). With a
 * notification queue, the op-occ, instance and package stores are the notifying ones: each change
 * they write, whatever code path writes it, first gets an outbox entry, is then written, and is
 * then queued for the notifier; a failure to queue never fails the write (the sweep,
 * republishUnsent, queues what the outbox still holds). Alarms are announced by the health
 * monitor (lib/fm/monitor.ts) through the same outbox and queue (fmDeps).
 */
function withNotifications(base: CoreDeps): CoreDeps {
  if (!process.env.NOTIFICATION_QUEUE_URL) return base;
  const queue = new SqsNotificationQueue();
  const outbox = new DynamoNotificationOutbox();
  return {
    ...base,
    instances: new NotifyingInstanceStore(base.instances, queue, base.now, outbox),
    opOccs: new NotifyingOpOccStore(base.opOccs, base.instances, queue, outbox),
    packages: new NotifyingPackageStore(base.packages, queue, base.now, outbox),
  };
}

let recovery: CoreDeps | undefined;

/**
 * The recovery sweep's ports: coreDeps and, with a notification queue, republishUnsent, which
 * queues what the outbox still holds. Only the sweep wires it (with the alarm, LCM and package
 * replays), so no other function bundles the replay of every family.
 */
export function recoveryDeps(): CoreDeps {
  const deps = coreDeps();
  recovery ??= {
    ...withRepublishing(deps, plainCore ?? deps),
    packageUsage: {
      counted: () => countedPackages(),
      anyInstanceOf: (vnfdId, vnfPkgId) => anyInstanceOfPackage(vnfdId, vnfPkgId),
      clear: (id, seen) => clearUnbackedCount(id, seen),
    },
  };
  return recovery;
}

function withRepublishing(deps: CoreDeps, base: CoreDeps): CoreDeps {
  if (!process.env.NOTIFICATION_QUEUE_URL) return deps;
  const queue = new SqsNotificationQueue();
  const outbox = new DynamoNotificationOutbox();
  return {
    ...deps,
    // The alarm store only when the sweep runs: not every function has the alarms table.
    republishUnsent: (olderThan) =>
      republishUnsent(
        outbox,
        {
          ...lcmOutboxReplay(base.opOccs, base.instances),
          ...alarmOutboxReplay(new DynamoAlarmStore()),
          ...packageOutboxReplay(base.packages),
          ...pmOutboxReplay(),
        },
        queue,
        olderThan,
      ),
  };
}

/** The subscription APIs' ports: what every family shares, and the VNF LCM and VNF FM subscription tables. */
export type SubscriptionDeps = LcmSubscriptionDeps & FmSubscriptionDeps;

let subscriptionDeps: SubscriptionDeps | undefined;

export function notifyDeps(): SubscriptionDeps {
  subscriptionDeps ??= {
    subscriptions: new DynamoSubscriptionStore<SubscriptionRecord>(undefined, true),
    fmSubscriptions: new DynamoSubscriptionStore<FmSubscriptionRecord>(process.env.FM_SUBSCRIPTIONS_TABLE ?? 'FmSubscriptionsTable', true),
    secrets: new SecretsManagerStore(),
    egress: egressPolicyFromEnv(),
    now: () => new Date().toISOString(),
    newId: () => crypto.randomUUID(),
  };
  return subscriptionDeps;
}

/** Every API family the notifier fans out and delivers: VNF LCM, VNF FM, VNF packages, VNF PM (where its tables are configured). */
export function notificationFamilies(): NotificationFamily[] {
  const { subscriptions, fmSubscriptions } = notifyDeps();
  const families: NotificationFamily[] = [lcmNotificationFamily(subscriptions), fmNotificationFamily(fmSubscriptions), packageNotificationFamily()];
  if (process.env.PM_JOBS_TABLE && process.env.PM_THRESHOLDS_TABLE) families.push(pmNotificationFamily(new DynamoPmJobStore(), new DynamoThresholdStore()));
  return families;
}

/** The notifier's ports, delivering the families handed in. */
export function notifierDeps(families: NotificationFamily[]): NotifierDeps {
  const { secrets, egress, now, newId } = notifyDeps();
  return {
    families,
    secrets,
    egress,
    now,
    newId,
    queue: new SqsNotificationQueue(),
    retryPeriodMs: Number(process.env.NOTIFICATION_RETRY_PERIOD ?? 86_400) * 1000,
    clock: () => Date.now(),
    outbox: { removeAll: (ids) => removeOutboxEntries(ids) },
  };
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
    instantiated: () => monitoredInstances(),
    watching: async () => (await Promise.all([anyMonitored(), (fm as FmDeps).alarms.anyActive()])).some(Boolean),
    leases: new DynamoLeaseStore(),
    autoHeal: { maxHeals: numberFromEnv('AUTO_HEAL_MAX_ATTEMPTS', 3), windowSeconds: numberFromEnv('AUTO_HEAL_WINDOW', 3600) },
    vimTimeoutMs: numberFromEnv('HEALTH_VIM_TIMEOUT_MS', 10_000),
    vimConcurrency: numberFromEnv('HEALTH_VIM_CONCURRENCY', 8),
    now: () => new Date().toISOString(),
    newId: () => crypto.randomUUID(),
  };
  return fm;
}

let pm: PmDeps | undefined;

/** The PM API's and the PM collector's ports. */
export function pmDeps(): PmDeps {
  pm ??= {
    jobs: new DynamoPmJobStore(),
    thresholds: new DynamoThresholdStore(),
    instances: new DynamoVnfInstanceStore(),
    notify: { secrets: new SecretsManagerStore(), egress: egressPolicyFromEnv(), now: () => new Date().toISOString(), newId: () => crypto.randomUUID() },
    queue: process.env.NOTIFICATION_QUEUE_URL ? new SqsNotificationQueue() : undefined,
    outbox: process.env.NOTIFICATION_QUEUE_URL ? new DynamoNotificationOutbox() : undefined,
    // The collector's lease lives with the jobs (id lease#vnf-pm-collector).
    leases: new DynamoLeaseStore(process.env.PM_JOBS_TABLE),
    sweepRateSeconds: numberFromEnv('PM_SWEEP_RATE_SECONDS', 60),
    reportRetentionSeconds: numberFromEnv('PM_REPORT_RETENTION_SECONDS', 86_400),
    vimTimeoutMs: numberFromEnv('PM_VIM_TIMEOUT_MS', 10_000),
    vimConcurrency: numberFromEnv('PM_VIM_CONCURRENCY', 8),
    scale: async (tenantId, vnfInstanceId, request) =>
      (await requestScale(coreDeps(), { tenantId }, vnfInstanceId, request, 2, { isAutomaticInvocation: true })).id,
  };
  return pm;
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

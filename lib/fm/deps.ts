// The ports fault management depends on, wired once per process to their AWS implementations
// (tests and the benchmark hand in others).
import { defaultDeps, type LcmDeps } from '#lib/lcm/deps.ts';
import { notifyDeps, type NotifierDeps } from '#lib/notify/deps.ts';
import { SqsNotificationQueue, type NotificationQueue } from '#lib/notify/queue.ts';
import { DynamoAlarmStore, scanInstantiated, type AlarmStore } from '#lib/store/alarms.ts';
import { DynamoNotificationOutbox, type NotificationOutbox } from '#lib/store/outbox.ts';
import type { VnfInstanceRecord } from '#lib/sol/model.ts';

export interface AutoHealPolicy {
  /** Automatic HEALs of one VDU of one instance allowed within `windowSeconds`; beyond that the alarm stays. */
  maxHeals: number;
  windowSeconds: number;
}

export interface FmDeps {
  alarms: AlarmStore;
  lcm: LcmDeps;
  notify: Pick<NotifierDeps, 'fmSubscriptions' | 'secrets' | 'egress' | 'now' | 'newId' | 'subscriptions'>;
  /** Alarm events go on the notification queue (undefined: nobody is notified). */
  queue?: NotificationQueue;
  /** Where an alarm's notification is kept until it is queued. */
  outbox?: NotificationOutbox;
  instantiated(): Promise<VnfInstanceRecord[]>;
  autoHeal: AutoHealPolicy;
  /** How long one VIM may take to answer a health check. */
  vimTimeoutMs: number;
  /** VIMs checked at once. */
  vimConcurrency: number;
  now(): string;
  newId(): string;
}

const numberFromEnv = (name: string, fallback: number): number => {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
};

let deps: FmDeps | undefined;

export function fmDeps(): FmDeps {
  deps ??= {
    alarms: new DynamoAlarmStore(),
    lcm: defaultDeps(),
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
  return deps;
}

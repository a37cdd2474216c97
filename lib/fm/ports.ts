// The ports fault management depends on (lib/deps.ts wires them; tests and the benchmark hand in others).
import type { CoreDeps } from '#lib/ports.ts';
import type { NotificationQueue } from '#lib/notify/queue.ts';
import type { AlarmStore } from '#lib/store/alarms.ts';
import type { LeaseStore } from '#lib/store/leases.ts';
import type { NotificationOutbox } from '#lib/store/outbox.ts';
import type { MonitoredInstance } from '#lib/store/vnf-instances.ts';
import type { FmSubscriptionDeps } from './notifications.ts';

export interface AutoHealPolicy {
  /** Automatic HEALs of one VDU of one instance allowed within `windowSeconds`; beyond that the alarm stays. */
  maxHeals: number;
  windowSeconds: number;
}

export interface FmDeps {
  alarms: AlarmStore;
  lcm: CoreDeps;
  notify: FmSubscriptionDeps;
  /** Alarm events go on the notification queue (undefined: nobody is notified). */
  queue?: NotificationQueue;
  /** Where an alarm's notification is kept until it is queued. */
  outbox?: NotificationOutbox;
  /** Every INSTANTIATED instance, with at least the attributes the sweep reads (lib/store/vnf-instances.ts MONITORED_ATTRIBUTES). */
  instantiated(): Promise<MonitoredInstance[]>;
  /** Whether a sweep has anything to do: an instantiated instance to watch, or an active alarm (two one-item index reads). */
  watching(): Promise<boolean>;
  /** The sweep's lease (one sweep at a time). */
  leases: LeaseStore;
  autoHeal: AutoHealPolicy;
  /** How long one VIM may take to answer a health check. */
  vimTimeoutMs: number;
  /** VIMs checked at once. */
  vimConcurrency: number;
  now(): string;
  newId(): string;
}

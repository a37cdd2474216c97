// The ports performance management depends on (lib/deps.ts wires them; tests hand in others).
import type { NotifyDeps } from '#lib/notify/ports.ts';
import type { NotificationQueue } from '#lib/notify/queue.ts';
import type { LeaseStore } from '#lib/store/leases.ts';
import type { NotificationOutbox } from '#lib/store/outbox.ts';
import type { PmJobStore, ThresholdStore } from '#lib/store/pm.ts';
import type { VnfInstanceStore } from '#lib/store/vnf-instances.ts';

export interface PmDeps {
  jobs: PmJobStore;
  thresholds: ThresholdStore;
  instances: Pick<VnfInstanceStore, 'get'>;
  /** Callback tests, the notification credentials' secrets (and the VIMs'), the egress policy, time and ids. */
  notify: NotifyDeps;
  /** Notifications go on the notification queue (undefined: nobody is notified). */
  queue?: NotificationQueue;
  /** Where a notification is kept until it is queued. */
  outbox?: NotificationOutbox;
  /** The collector's lease (one collection sweep at a time). */
  leases: LeaseStore;
  /** How often the collector's schedule runs: shorter collection periods are served at this rate. */
  sweepRateSeconds: number;
  /** How long a report stays available (its expiryTime). */
  reportRetentionSeconds: number;
  /** How long one VIM may take to answer. */
  vimTimeoutMs: number;
  /** VIMs measured at once. */
  vimConcurrency: number;
  /**
   * Starts a SCALE of a VNF instance the VNFM decided on itself (isAutomaticInvocation): a threshold's
   * scaling rule. Answers the op occ id; refuses as the LCM API would (a ProblemError).
   */
  scale(tenantId: string, vnfInstanceId: string, request: { type: 'SCALE_OUT' | 'SCALE_IN'; aspectId: string; numberOfSteps: number }): Promise<string>;
}

// SOL003 VNF performance management notifications as one family of the notifier: the events the
// collector queues, PerformanceInformationAvailableNotification (6.5.2.5) for a PM job's report and
// ThresholdCrossedNotification (6.5.2.4) for a threshold, each with its one recipient (the job's or
// the threshold's callback, not a subscription), the family the notification-delivery function
// hands the notifier, and the recovery sweep's way back from an outbox entry (the event is kept
// whole). lib/notify never imports this module.
import { stableId, type FamilyEvent } from '#lib/notify/model.ts';
import type { NotificationFamily } from '#lib/notify/ports.ts';
import type { OutboxReplay } from '#lib/notify/publisher.ts';
import type { OutboxEntry } from '#lib/store/outbox.ts';
import type { PmJobStore, ThresholdStore } from '#lib/store/pm.ts';
import { PM_NOTIFICATION_API_VERSION, reportHref } from './links.ts';
import type { PmJobRecord, ThresholdRecord } from './model.ts';

/** A PM notification as queued: its body is complete (it goes to one recipient), its group the job or threshold. */
export interface PmEvent extends FamilyEvent {
  kind: 'pm-event';
  notificationType: 'PerformanceInformationAvailableNotification' | 'ThresholdCrossedNotification';
  recipient: 'job' | 'threshold';
  recipientId: string;
  body: Record<string, unknown>;
}

const instanceLink = (apiRoot: string, id: string) => ({ href: `${apiRoot}/vnflcm/v2/vnf_instances/${id}` });

/** SOL003 6.5.2.5: a report of `job` is ready, for one of its measured VNF instances. */
export function reportAvailableEvent(job: PmJobRecord, reportId: string, vnfInstanceId: string, at: string): PmEvent {
  const id = stableId(`${job.id}/${reportId}/${vnfInstanceId}`);
  return {
    kind: 'pm-event',
    notificationId: id,
    notificationType: 'PerformanceInformationAvailableNotification',
    tenantId: job.tenantId,
    groupId: job.id,
    timeStamp: at,
    recipient: 'job',
    recipientId: job.id,
    body: {
      id,
      notificationType: 'PerformanceInformationAvailableNotification',
      timeStamp: at,
      pmJobId: job.id,
      objectType: job.objectType,
      objectInstanceId: vnfInstanceId,
      ...(job.subObjectInstanceIds ? { subObjectInstanceIds: job.subObjectInstanceIds } : {}),
      _links: {
        objectInstance: instanceLink(job.apiRoot, vnfInstanceId),
        pmJob: { href: `${job.apiRoot}/vnfpm/v2/pm_jobs/${job.id}` },
        performanceReport: { href: reportHref(job.apiRoot, job.id, reportId) },
      },
    },
  };
}

/** SOL003 6.5.2.4: `threshold` was crossed by the value measured for one sub-object at `at`. */
export function thresholdCrossedEvent(
  threshold: ThresholdRecord,
  crossing: { direction: 'UP' | 'DOWN'; subObjectInstanceId: string; value: number },
  at: string,
): PmEvent {
  const id = stableId(`${threshold.id}/${crossing.subObjectInstanceId}/${crossing.direction}/${at}`);
  return {
    kind: 'pm-event',
    notificationId: id,
    notificationType: 'ThresholdCrossedNotification',
    tenantId: threshold.tenantId,
    groupId: threshold.id,
    timeStamp: at,
    recipient: 'threshold',
    recipientId: threshold.id,
    body: {
      id,
      notificationType: 'ThresholdCrossedNotification',
      timeStamp: at,
      thresholdId: threshold.id,
      crossingDirection: crossing.direction,
      objectType: threshold.objectType,
      objectInstanceId: threshold.objectInstanceId,
      subObjectInstanceId: crossing.subObjectInstanceId,
      performanceMetric: threshold.criteria.performanceMetric,
      performanceValue: crossing.value,
      _links: {
        objectInstance: instanceLink(threshold.apiRoot, threshold.objectInstanceId),
        threshold: { href: `${threshold.apiRoot}/vnfpm/v2/thresholds/${threshold.id}` },
      },
    },
  };
}

/** The outbox entry of a PM notification: the whole event (no record's state says it was due). */
export function pmOutboxEntry(event: PmEvent): OutboxEntry {
  return { id: event.notificationId, kind: 'pm', recordId: event.recipientId, expect: {}, event: { ...event }, createdAt: event.timeStamp };
}

type Recipient = PmJobRecord | ThresholdRecord;

/** How the notifier delivers PM notifications: each to its job's or threshold's callback, as long as that exists. */
export function pmNotificationFamily(jobs: Pick<PmJobStore, 'get'>, thresholds: Pick<ThresholdStore, 'get'>): NotificationFamily<Recipient, PmEvent> {
  const recipient = async (id: string, kind?: PmEvent['recipient']): Promise<Recipient | undefined> =>
    kind === 'threshold' ? thresholds.get(id) : ((await jobs.get(id)) ?? (kind === 'job' ? undefined : thresholds.get(id)));
  return {
    family: 'vnfpm',
    eventKind: 'pm-event',
    subscriptions: { get: (id) => recipient(id), listAll: async () => [] },
    recipientsOf: async (event) => {
      const found = await recipient(event.recipientId, event.recipient);
      return found ? [found] : [];
    },
    render: (event, to) => (to.id === event.recipientId ? event.body : undefined),
    version: () => PM_NOTIFICATION_API_VERSION,
  };
}

/** The recovery sweep's way back from a PM notification's outbox entry: the event it kept. */
export function pmOutboxReplay(): OutboxReplay {
  return { pm: async (entry) => (entry.event as PmEvent | undefined) ?? undefined };
}

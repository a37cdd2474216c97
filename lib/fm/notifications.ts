// SOL003 VNF fault management notifications as one family of the notifier: the alarm events the
// health monitor queues when it raises or clears an alarm, which FM subscriptions one concerns,
// AlarmNotification and AlarmClearedNotification (7.5.2.5-6) rendered from it for one
// subscription, the family the notification-delivery function hands the notifier
// (fmNotificationFamily), and the sweep's way back from an alarm's outbox entry. lib/notify never
// imports this module.
import { redactSecrets } from '#lib/redact.ts';
import { stableId, type FamilyEvent } from '#lib/notify/model.ts';
import type { NotificationFamily, NotifyDeps } from '#lib/notify/ports.ts';
import type { OutboxReplay } from '#lib/notify/publisher.ts';
import type { AlarmStore } from '#lib/store/alarms.ts';
import type { SubscriptionStore } from '#lib/store/subscriptions.ts';
import { instanceMatches } from '#lib/sol/subscription-filter.ts';
import {
  FM_NOTIFICATION_API_VERSION,
  renderAlarm,
  type AlarmRecord,
  type FmNotificationsFilter,
  type FmNotificationType,
  type FmSubscriptionRecord,
} from './model.ts';

/** What FM subscriptions (/vnffm/v1/subscriptions) need: the shared subscription ports and the FM subscriptions table. */
export interface FmSubscriptionDeps extends NotifyDeps {
  fmSubscriptions: SubscriptionStore<FmSubscriptionRecord>;
}

/** An alarm raised or cleared, as queued for the notifier (grouped by VNF instance, like LCM events). */
export interface AlarmEvent extends FamilyEvent {
  kind: 'fm-event';
  notificationType: Exclude<FmNotificationType, 'AlarmListRebuiltNotification'>;
  vnfInstanceId: string;
  /** The alarm as it was then, internal attributes included (rendered per subscription). */
  alarm: AlarmRecord;
}

/** The event of an alarm raised or cleared at `at` (its id the same for every retry and sweep). */
export function alarmEvent(alarm: AlarmRecord, type: AlarmEvent['notificationType'], at: string): AlarmEvent {
  return {
    kind: 'fm-event',
    notificationId: stableId(`${alarm.id}/${type}/${at}`),
    notificationType: type,
    tenantId: alarm.tenantId,
    groupId: alarm.managedObjectId,
    vnfInstanceId: alarm.managedObjectId,
    timeStamp: at,
    alarm,
  };
}

/**
 * SOL003 7.5.3.2 FmNotificationsFilter: every attribute present must match (AND), an array when one
 * of its values does (OR). A cleared alarm is matched by the severity it was raised with, so a
 * subscriber to CRITICAL alarms also learns when they clear.
 */
export function fmSubscriptionMatches(filter: FmNotificationsFilter | undefined, event: AlarmEvent): boolean {
  if (!filter) return true;
  const alarm = event.alarm;
  if (filter.notificationTypes && !filter.notificationTypes.includes(event.notificationType)) return false;
  if (filter.vnfInstanceSubscriptionFilter && !instanceMatches(filter.vnfInstanceSubscriptionFilter, alarm.managedObjectId, alarm.instance)) return false;
  if (filter.faultyResourceTypes && !filter.faultyResourceTypes.includes(alarm.rootCauseFaultyResource.faultyResourceType)) return false;
  if (filter.perceivedSeverities && !filter.perceivedSeverities.includes(alarm.raisedSeverity)) return false;
  if (filter.eventTypes && !filter.eventTypes.includes(alarm.eventType)) return false;
  if (filter.probableCauses && !filter.probableCauses.includes(alarm.probableCause)) return false;
  return true;
}

/** Renders AlarmNotification (7.5.2.5) or AlarmClearedNotification (7.5.2.6) for one subscription. */
export function renderAlarmNotification(event: AlarmEvent, subscription: Pick<FmSubscriptionRecord, 'id' | 'apiRoot'>): Record<string, unknown> {
  const common = { id: event.notificationId, notificationType: event.notificationType, subscriptionId: subscription.id, timeStamp: event.timeStamp };
  const links = {
    subscription: { href: `${subscription.apiRoot}/vnffm/v1/subscriptions/${subscription.id}` },
    alarm: { href: `${subscription.apiRoot}/vnffm/v1/alarms/${event.alarm.id}` },
  };
  if (event.notificationType === 'AlarmClearedNotification') {
    return { ...common, alarmId: event.alarm.id, alarmClearedTime: event.alarm.alarmClearedTime ?? event.timeStamp, _links: links };
  }
  return { ...common, alarm: renderAlarm(event.alarm, subscription.apiRoot), _links: { subscription: links.subscription } };
}

/** How the notifier fans alarm events out to FM subscriptions and delivers them. */
export function fmNotificationFamily(
  subscriptions: Pick<SubscriptionStore<FmSubscriptionRecord>, 'get' | 'listAll' | 'listFor' | 'listIfFew'>,
): NotificationFamily<FmSubscriptionRecord, AlarmEvent> {
  return {
    family: 'vnffm',
    eventKind: 'fm-event',
    subscriptions,
    render: (event, subscription) =>
      fmSubscriptionMatches(subscription.filter, event) ? redactSecrets(renderAlarmNotification(event, subscription)) : undefined,
    version: () => FM_NOTIFICATION_API_VERSION,
    groupOf: (event) => event.vnfInstanceId,
    instanceOf: (event) => event.vnfInstanceId,
  };
}

/** The sweep's way back from an alarm's outbox entry: the raise or clearing, if the alarm record shows it. */
export function alarmOutboxReplay(alarms: Pick<AlarmStore, 'get'>): OutboxReplay {
  return {
    alarm: async (entry) => {
      const alarm = await alarms.get(entry.recordId);
      const type = entry.expect.notificationType === 'AlarmClearedNotification' ? 'AlarmClearedNotification' : 'AlarmNotification';
      const happened = type === 'AlarmNotification' ? alarm !== undefined : alarm?.alarmClearedTime === entry.expect.at;
      return alarm && happened ? alarmEvent(alarm, type, entry.expect.at ?? entry.createdAt) : undefined;
    },
  };
}

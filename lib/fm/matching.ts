// Which FM subscriptions an alarm event concerns: SOL003 7.5.3.2 FmNotificationsFilter. Every
// attribute present must match (AND), an array matches when one of its values does (OR). A cleared
// alarm is matched by the severity it was raised with, so a subscriber to CRITICAL alarms also
// learns when they clear.
import { instanceMatches } from '#lib/notify/matching.ts';
import type { AlarmEvent, FmNotificationsFilter } from './model.ts';

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

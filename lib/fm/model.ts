// SOL003 VNF fault management (clause 7) as this product's API shows it: the Alarm (7.5.2.4) a
// VNFC fault raises, AlarmModifications (7.5.2.8), FmSubscriptionRequest / FmSubscription
// (7.5.2.2-3) with FmNotificationsFilter (7.5.3.2). Its notifications are in notifications.ts.
import * as z from 'zod';
import { subscriptionRequestFields } from '#lib/notify/model.ts';
import { nonEmpty, vnfInstanceSubscriptionFilter } from '#lib/sol/subscription-filter.ts';
import { ACK_STATES, EVENT_TYPES, FAULTY_RESOURCE_TYPES, PERCEIVED_SEVERITIES, type AlarmRecord } from '#lib/store/alarms.ts';

// The alarm record and its enumerations are the alarm store's (lib/store/alarms.ts); FM code reads them here.
export {
  ACK_STATES,
  EVENT_TYPES,
  FAULTY_RESOURCE_TYPES,
  PERCEIVED_SEVERITIES,
  type AckState,
  type AlarmRecord,
  type AutoHealAttempt,
  type EventType,
  type FaultyResourceType,
  type PerceivedSeverity,
} from '#lib/store/alarms.ts';

export const FM_NOTIFICATION_TYPES = ['AlarmNotification', 'AlarmClearedNotification', 'AlarmListRebuiltNotification'] as const;
export type FmNotificationType = (typeof FM_NOTIFICATION_TYPES)[number];

/** The Version header of FM notifications (the VNFFaultManagementNotification API of SOL003 V3.7.1). */
export const FM_NOTIFICATION_API_VERSION = '1.5.0';

/** Attributes of the Alarm representation: what filters and selectors may name. */
export const ALARM_ATTRIBUTES = [
  'id',
  'managedObjectId',
  'vnfcInstanceIds',
  'rootCauseFaultyResource',
  'alarmRaisedTime',
  'alarmChangedTime',
  'alarmClearedTime',
  'alarmAcknowledgedTime',
  'ackState',
  'perceivedSeverity',
  'eventTime',
  'eventType',
  'faultType',
  'probableCause',
  'isRootCause',
  'correlatedAlarmIds',
  'faultDetails',
  '_links',
] as const;

/** SOL003 7.5.2.4 Alarm, as the API shows it (internal attributes left out). */
export function renderAlarm(record: AlarmRecord, baseUrl: string): Record<string, unknown> {
  const body: Record<string, unknown> = {
    id: record.id,
    managedObjectId: record.managedObjectId,
    vnfcInstanceIds: record.vnfcInstanceIds,
    rootCauseFaultyResource: record.rootCauseFaultyResource,
    alarmRaisedTime: record.alarmRaisedTime,
  };
  for (const key of ['alarmChangedTime', 'alarmClearedTime', 'alarmAcknowledgedTime'] as const) if (record[key]) body[key] = record[key];
  Object.assign(body, {
    ackState: record.ackState,
    perceivedSeverity: record.perceivedSeverity,
    eventTime: record.eventTime,
    eventType: record.eventType,
    ...(record.faultType ? { faultType: record.faultType } : {}),
    probableCause: record.probableCause,
    isRootCause: record.isRootCause,
    ...(record.correlatedAlarmIds?.length ? { correlatedAlarmIds: record.correlatedAlarmIds } : {}),
    ...(record.faultDetails?.length ? { faultDetails: record.faultDetails } : {}),
    _links: {
      self: { href: `${baseUrl}/vnffm/v1/alarms/${record.id}` },
      objectInstance: { href: `${baseUrl}/vnflcm/v2/vnf_instances/${record.managedObjectId}` },
    },
  });
  return body;
}

/** SOL003 7.5.2.8 AlarmModifications (the PATCH body, application/merge-patch+json). */
export const alarmModifications = z.object({ ackState: z.enum(ACK_STATES) }).strict();

/** SOL003 7.5.3.2 FmNotificationsFilter */
export const fmNotificationsFilter = z
  .object({
    vnfInstanceSubscriptionFilter: vnfInstanceSubscriptionFilter.optional(),
    notificationTypes: nonEmpty(z.enum(FM_NOTIFICATION_TYPES)).optional(),
    faultyResourceTypes: nonEmpty(z.enum(FAULTY_RESOURCE_TYPES)).optional(),
    perceivedSeverities: nonEmpty(z.enum(PERCEIVED_SEVERITIES)).optional(),
    eventTypes: nonEmpty(z.enum(EVENT_TYPES)).optional(),
    probableCauses: nonEmpty(z.string().min(1)).optional(),
  })
  .strict();
export type FmNotificationsFilter = z.infer<typeof fmNotificationsFilter>;

/** SOL003 7.5.2.2 FmSubscriptionRequest */
export const fmSubscriptionRequest = z
  .object({
    filter: fmNotificationsFilter.optional(),
    ...subscriptionRequestFields,
  })
  .strict();
export type FmSubscriptionRequest = z.infer<typeof fmSubscriptionRequest>;

export interface FmSubscriptionRecord {
  id: string;
  tenantId: string;
  createdAt: string;
  createdSeq: string;
  callbackUri: string;
  filter?: FmNotificationsFilter;
  apiRoot: string;
  authSecret?: string;
  revision: number;
}

export const FM_SUBSCRIPTION_ATTRIBUTES = ['id', 'filter', 'callbackUri', '_links'] as const;

/** SOL003 7.5.2.3 FmSubscription */
export function renderFmSubscription(record: FmSubscriptionRecord, baseUrl: string): Record<string, unknown> {
  return {
    id: record.id,
    ...(record.filter ? { filter: record.filter } : {}),
    callbackUri: record.callbackUri,
    _links: { self: { href: `${baseUrl}/vnffm/v1/subscriptions/${record.id}` } },
  };
}

// SOL003 VNF fault management (clause 7) as this product stores, renders and queues it: the Alarm
// (7.5.2.4) a VNFC fault raises, AlarmModifications (7.5.2.8), FmSubscriptionRequest /
// FmSubscription (7.5.2.2-3) with FmNotificationsFilter (7.5.3.2), and the AlarmNotification /
// AlarmClearedNotification (7.5.2.5-6) rendered for one subscription from a queued alarm event.
import { z } from 'zod';
import { stableId, subscriptionAuthentication, vnfInstanceSubscriptionFilter, type InstanceSnapshot } from '#lib/notify/model.ts';

/** SOL003 7.5.4.3 PerceivedSeverityType */
export const PERCEIVED_SEVERITIES = ['CRITICAL', 'MAJOR', 'MINOR', 'WARNING', 'INDETERMINATE', 'CLEARED'] as const;
export type PerceivedSeverity = (typeof PERCEIVED_SEVERITIES)[number];
/** SOL003 7.5.4.5 EventType */
export const EVENT_TYPES = ['COMMUNICATIONS_ALARM', 'PROCESSING_ERROR_ALARM', 'ENVIRONMENTAL_ALARM', 'QOS_ALARM', 'EQUIPMENT_ALARM'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
/** SOL003 7.5.4.4 FaultyResourceType */
export const FAULTY_RESOURCE_TYPES = ['COMPUTE', 'STORAGE', 'NETWORK'] as const;
export type FaultyResourceType = (typeof FAULTY_RESOURCE_TYPES)[number];
/** SOL003 7.5.2.4 ackState */
export const ACK_STATES = ['UNACKNOWLEDGED', 'ACKNOWLEDGED'] as const;
export type AckState = (typeof ACK_STATES)[number];

export const FM_NOTIFICATION_TYPES = ['AlarmNotification', 'AlarmClearedNotification', 'AlarmListRebuiltNotification'] as const;
export type FmNotificationType = (typeof FM_NOTIFICATION_TYPES)[number];

/** The Version header of FM notifications (the VNFFaultManagementNotification API of SOL003 V3.7.1). */
export const FM_NOTIFICATION_API_VERSION = '1.5.0';

/** An automatic HEAL the VNFM started for this alarm's VNFC. */
export interface AutoHealAttempt {
  opOccId: string;
  at: string;
}

export interface AlarmRecord {
  id: string;
  tenantId: string;
  /** The VNF instance. */
  managedObjectId: string;
  /** vnfcInfo ids of the faulty VNFC. */
  vnfcInstanceIds: string[];
  rootCauseFaultyResource: {
    faultyResource: { vimConnectionId?: string; resourceProviderId?: string; resourceId: string; vimLevelResourceType?: string };
    faultyResourceType: FaultyResourceType;
  };
  alarmRaisedTime: string;
  alarmChangedTime?: string;
  alarmClearedTime?: string;
  alarmAcknowledgedTime?: string;
  ackState: AckState;
  perceivedSeverity: PerceivedSeverity;
  eventTime: string;
  eventType: EventType;
  faultType?: string;
  probableCause: string;
  isRootCause: boolean;
  correlatedAlarmIds?: string[];
  faultDetails?: string[];
  /** GSI sort key (byTenant, byVnfInstance): alarmRaisedTime#id. */
  raisedSeq: string;
  /** Sparse GSI `active` (hash: active = "Y", range: activeKey): present only while the alarm is not cleared. */
  active?: 'Y';
  /** `<vnfInstanceId>#<resourceId>`: one active alarm per faulty VNFC. */
  activeKey?: string;
  /** Internal: the VNFC's VDU and VIM resource (the heal-storm window counts heals per VDU). */
  vduId: string;
  resourceId: string;
  /** Internal: the severity it was raised with (filters match a cleared alarm by it). */
  raisedSeverity: PerceivedSeverity;
  /** Internal: what raised it (the health sweep, an Alertmanager alert, a server notification). */
  source: 'health-check' | 'alertmanager' | 'server-notification';
  /** Internal: automatic HEALs started for it. */
  autoHeals?: AutoHealAttempt[];
  /** Internal: the instance's attributes that FM subscription filters look at. */
  instance: InstanceSnapshot;
  revision: number;
}

/** Attributes of the Alarm representation: what filters and selectors may name. */
export const ALARM_ATTRIBUTES = [
  'id', 'managedObjectId', 'vnfcInstanceIds', 'rootCauseFaultyResource', 'alarmRaisedTime', 'alarmChangedTime', 'alarmClearedTime',
  'alarmAcknowledgedTime', 'ackState', 'perceivedSeverity', 'eventTime', 'eventType', 'faultType', 'probableCause', 'isRootCause',
  'correlatedAlarmIds', 'faultDetails', '_links',
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

const nonEmpty = <T extends z.ZodType>(item: T) => z.array(item).min(1);

/** SOL003 7.5.3.2 FmNotificationsFilter */
export const fmNotificationsFilter = z.object({
  vnfInstanceSubscriptionFilter: vnfInstanceSubscriptionFilter.optional(),
  notificationTypes: nonEmpty(z.enum(FM_NOTIFICATION_TYPES)).optional(),
  faultyResourceTypes: nonEmpty(z.enum(FAULTY_RESOURCE_TYPES)).optional(),
  perceivedSeverities: nonEmpty(z.enum(PERCEIVED_SEVERITIES)).optional(),
  eventTypes: nonEmpty(z.enum(EVENT_TYPES)).optional(),
  probableCauses: nonEmpty(z.string().min(1)).optional(),
}).strict();
export type FmNotificationsFilter = z.infer<typeof fmNotificationsFilter>;

/** SOL003 7.5.2.2 FmSubscriptionRequest */
export const fmSubscriptionRequest = z.object({
  filter: fmNotificationsFilter.optional(),
  callbackUri: z.string().min(1).max(2048),
  authentication: subscriptionAuthentication.optional(),
}).strict();
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

/** An alarm raised or cleared, as queued for the notifier (grouped by VNF instance, like LCM events). */
export interface AlarmEvent {
  kind: 'fm-event';
  notificationId: string;
  notificationType: Exclude<FmNotificationType, 'AlarmListRebuiltNotification'>;
  tenantId: string;
  vnfInstanceId: string;
  timeStamp: string;
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
    vnfInstanceId: alarm.managedObjectId,
    timeStamp: at,
    alarm,
  };
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

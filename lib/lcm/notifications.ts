// SOL003 VNF LCM subscriptions and notifications as one family of the notifier: the
// LccnSubscriptionRequest schema (clause 5.5.2.15) with its LifecycleChangeNotificationsFilter
// (5.5.3.12), the stored subscription (its authentication lives in the secret store, never here) and
// its LccnSubscription representation (5.5.2.16); the events the op-occ and instance stores queue
// when a change is written (NotifyingOpOccStore, NotifyingInstanceStore: where every LCM
// notification starts), which subscriptions one concerns, and the notifications (5.5.2.17-19)
// rendered from it for one subscription; the family the notification-delivery function hands the
// notifier (lcmNotificationFamily) and the sweep's way back from the outbox. lib/notify never
// imports this module.
import * as z from 'zod';
import { log } from '#lib/log.ts';
import { redactSecrets } from '#lib/redact.ts';
import { stableId, subscriptionRequestFields, type FamilyEvent } from '#lib/notify/model.ts';
import type { NotificationFamily } from '#lib/notify/ports.ts';
import { type Announced, publishAfterWrite, withOutbox, type OutboxReplay } from '#lib/notify/publisher.ts';
import { MAX_EVENT_BYTES, type NotificationQueue } from '#lib/notify/queue.ts';
import {
  LCM_OPERATION_STATES,
  LCM_OPERATION_TYPES,
  v1OpOccParts,
  type ApiMajorVersion,
  type LcmOperationState,
  type LcmOperationType,
  type ProblemDetailsRecord,
  type VnfInstanceRecord,
  type VnfLcmOpOccRecord,
} from '#lib/sol/model.ts';
import { instanceMatches, instanceSnapshot, nonEmpty, vnfInstanceSubscriptionFilter, type InstanceSnapshot } from '#lib/sol/subscription-filter.ts';
import type { Page } from '#lib/store/dynamo.ts';
import type { Transition, VnfLcmOpOccStore } from '#lib/store/op-occs.ts';
import type { NotificationOutbox, OutboxEntry } from '#lib/store/outbox.ts';
import type { SubscriptionStore } from '#lib/store/subscriptions.ts';
import type { InstanceUpdate, LockRequest, VnfInstanceStore } from '#lib/store/vnf-instances.ts';

/** SOL003 5.5.4.x: the notification types of the VNF LCM interface. */
export const NOTIFICATION_TYPES = ['VnfLcmOperationOccurrenceNotification', 'VnfIdentifierCreationNotification', 'VnfIdentifierDeletionNotification'] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** SOL003 5.5.4.7 LcmOpOccNotificationVerbosityType */
export const VERBOSITY = ['FULL', 'SHORT'] as const;
export type Verbosity = (typeof VERBOSITY)[number];

/** The Version header of a notification: the API version of the subscription's major version. */
export const NOTIFICATION_API_VERSION: Record<ApiMajorVersion, string> = { 1: '1.3.0', 2: '2.0.0' };

/** SOL003 5.5.3.12 LifecycleChangeNotificationsFilter */
export const lifecycleChangeNotificationsFilter = z
  .object({
    vnfInstanceSubscriptionFilter: vnfInstanceSubscriptionFilter.optional(),
    notificationTypes: nonEmpty(z.enum(NOTIFICATION_TYPES)).optional(),
    operationTypes: nonEmpty(z.enum(LCM_OPERATION_TYPES)).optional(),
    operationStates: nonEmpty(z.enum(LCM_OPERATION_STATES)).optional(),
  })
  .strict()
  .refine((f) => !(f.operationTypes || f.operationStates) || !f.notificationTypes || f.notificationTypes.includes('VnfLcmOperationOccurrenceNotification'), {
    message: 'operationTypes and operationStates apply only when notificationTypes contains VnfLcmOperationOccurrenceNotification',
    path: ['operationTypes'],
  });
export type LifecycleChangeNotificationsFilter = z.infer<typeof lifecycleChangeNotificationsFilter>;

/** SOL003 5.5.2.15 LccnSubscriptionRequest */
export const lccnSubscriptionRequest = z
  .object({
    filter: lifecycleChangeNotificationsFilter.optional(),
    ...subscriptionRequestFields,
    verbosity: z.enum(VERBOSITY).optional(),
  })
  .strict();
export type LccnSubscriptionRequest = z.infer<typeof lccnSubscriptionRequest>;

export interface SubscriptionRecord {
  id: string;
  tenantId: string;
  createdAt: string;
  /** GSI sort key: createdAt#id. */
  createdSeq: string;
  callbackUri: string;
  filter?: LifecycleChangeNotificationsFilter;
  verbosity: Verbosity;
  /** Internal: the API the subscription was made through; its notifications link to the same API. */
  apiMajorVersion: ApiMajorVersion;
  apiRoot: string;
  /** Internal: the secret holding the NotificationAuth, when the subscriber asked for authentication. */
  authSecret?: string;
  revision: number;
}

export const SUBSCRIPTION_ATTRIBUTES = ['id', 'filter', 'callbackUri', 'verbosity', '_links'] as const;

export function renderSubscription(record: SubscriptionRecord, version: ApiMajorVersion, baseUrl: string): Record<string, unknown> {
  const body: Record<string, unknown> = { id: record.id };
  if (record.filter) body.filter = record.filter;
  body.callbackUri = record.callbackUri;
  body.verbosity = record.verbosity;
  body._links = { self: { href: `${baseUrl}/vnflcm/v${version}/subscriptions/${record.id}` } };
  return body;
}

export interface OpOccSnapshot {
  id: string;
  operation: LcmOperationType;
  operationState: LcmOperationState;
  isAutomaticInvocation: boolean;
  error?: ProblemDetailsRecord;
  resourceChanges?: Record<string, unknown>;
  changedInfo?: Record<string, unknown>;
  changedExtConnectivity?: unknown[];
  modificationsTriggeredByVnfPkgChange?: Record<string, unknown>;
}

/**
 * A change the LCM recorded, as queued for the notifier (SQS FIFO, grouped by VNF instance: its
 * groupId is vnfInstanceId). It carries everything a notification needs, so matching and rendering
 * never read records that may have moved on (or been deleted) since.
 */
export interface NotificationEvent extends FamilyEvent {
  kind: 'event';
  notificationType: NotificationType;
  vnfInstanceId: string;
  instance: InstanceSnapshot;
  opOcc?: OpOccSnapshot;
}

/**
 * Which subscriptions a change concerns: SOL003 5.5.3.12 LifecycleChangeNotificationsFilter. All
 * attributes present must match (AND); an array matches when one of its values does (OR); an absent
 * filter matches everything.
 */
export function subscriptionMatches(filter: LifecycleChangeNotificationsFilter | undefined, event: NotificationEvent): boolean {
  if (!filter) return true;
  if (filter.notificationTypes && !filter.notificationTypes.includes(event.notificationType)) return false;
  if (event.notificationType === 'VnfLcmOperationOccurrenceNotification') {
    if (filter.operationTypes && !(event.opOcc && filter.operationTypes.includes(event.opOcc.operation))) return false;
    if (filter.operationStates && !(event.opOcc && filter.operationStates.includes(event.opOcc.operationState))) return false;
  }
  if (filter.vnfInstanceSubscriptionFilter && !instanceMatches(filter.vnfInstanceSubscriptionFilter, event.vnfInstanceId, event.instance)) return false;
  return true;
}

/** States whose notification carries `error` (SOL003 5.5.2.17). */
const ERROR_STATES: readonly LcmOperationState[] = ['FAILED_TEMP', 'FAILED', 'ROLLED_BACK'];

/** Renders the notification an event makes for one subscription (SOL003 5.5.2.17-19). */
export function renderNotification(
  event: NotificationEvent,
  subscription: Pick<SubscriptionRecord, 'id' | 'verbosity' | 'apiMajorVersion' | 'apiRoot'>,
): Record<string, unknown> {
  const prefix = `${subscription.apiRoot}/vnflcm/v${subscription.apiMajorVersion}`;
  const links: Record<string, { href: string }> = {
    vnfInstance: { href: `${prefix}/vnf_instances/${event.vnfInstanceId}` },
    subscription: { href: `${prefix}/subscriptions/${subscription.id}` },
  };
  const common = {
    id: event.notificationId,
    notificationType: event.notificationType,
    subscriptionId: subscription.id,
    timeStamp: event.timeStamp,
  };
  const opOcc = event.opOcc;
  if (event.notificationType !== 'VnfLcmOperationOccurrenceNotification' || !opOcc) {
    return { ...common, vnfInstanceId: event.vnfInstanceId, _links: links };
  }
  links.vnfLcmOpOcc = { href: `${prefix}/vnf_lcm_op_occs/${opOcc.id}` };
  const start = opOcc.operationState === 'STARTING';
  const body: Record<string, unknown> = {
    ...common,
    notificationStatus: start ? 'START' : 'RESULT',
    operationState: opOcc.operationState,
    vnfInstanceId: event.vnfInstanceId,
    operation: opOcc.operation,
    isAutomaticInvocation: opOcc.isAutomaticInvocation,
    verbosity: subscription.verbosity,
    vnfLcmOpOccId: opOcc.id,
  };
  if (!start && subscription.verbosity === 'FULL') {
    // NOTE 1: the cumulative resource changes, present only when there are some.
    for (const key of ['affectedVnfcs', 'affectedVirtualLinks', 'affectedExtLinkPorts', 'affectedVirtualStorages'] as const) {
      const changes = opOcc.resourceChanges?.[key];
      if (Array.isArray(changes) && changes.length > 0) body[key] = changes;
    }
    // NOTE 3: a CHANGE_VNFPKG reports modificationsTriggeredByVnfPkgChange instead of changedInfo.
    if (opOcc.operation === 'CHANGE_VNFPKG') {
      if (opOcc.modificationsTriggeredByVnfPkgChange && Object.keys(opOcc.modificationsTriggeredByVnfPkgChange).length > 0)
        body.modificationsTriggeredByVnfPkgChange = opOcc.modificationsTriggeredByVnfPkgChange;
    } else if (opOcc.changedInfo && Object.keys(opOcc.changedInfo).length > 0) {
      body.changedInfo = opOcc.changedInfo;
    }
    if (opOcc.changedExtConnectivity?.length) body.changedExtConnectivity = opOcc.changedExtConnectivity;
  }
  if (opOcc.error && ERROR_STATES.includes(opOcc.operationState)) body.error = opOcc.error;
  if (subscription.apiMajorVersion === 1) v1OpOccParts(body);
  body._links = links;
  return body;
}

const opOccNotificationId = (id: string, state: string, time: string) => stableId(`${id}/${state}/${time}`);

export function opOccEvent(record: VnfLcmOpOccRecord, instance: InstanceSnapshot): NotificationEvent {
  const event: NotificationEvent = {
    kind: 'event',
    // One state entered at one time by one op occ: a retried step that finds the state already
    // reached republishes the same id.
    notificationId: opOccNotificationId(record.id, record.operationState, record.stateEnteredTime),
    notificationType: 'VnfLcmOperationOccurrenceNotification',
    tenantId: record.tenantId,
    groupId: record.vnfInstanceId,
    vnfInstanceId: record.vnfInstanceId,
    timeStamp: record.stateEnteredTime,
    instance,
    opOcc: {
      id: record.id,
      operation: record.operation,
      operationState: record.operationState,
      isAutomaticInvocation: record.isAutomaticInvocation,
      error: record.error,
      resourceChanges: record.resourceChanges,
      changedInfo: record.changedInfo,
      changedExtConnectivity: record.changedExtConnectivity,
      modificationsTriggeredByVnfPkgChange: (record as unknown as { modificationsTriggeredByVnfPkgChange?: Record<string, unknown> })
        .modificationsTriggeredByVnfPkgChange,
    },
  };
  if (Buffer.byteLength(JSON.stringify(event)) > MAX_EVENT_BYTES && event.opOcc) {
    // The NFVO reads the details from the op occ (SHORT-style) rather than losing the notification.
    log.warn('notification too large for the queue; change details left out', { opOccId: record.id });
    delete event.opOcc.resourceChanges;
    delete event.opOcc.changedInfo;
    delete event.opOcc.changedExtConnectivity;
    delete event.opOcc.modificationsTriggeredByVnfPkgChange;
  }
  return event;
}

export function instanceEvent(
  record: VnfInstanceRecord,
  notificationType: Exclude<NotificationType, 'VnfLcmOperationOccurrenceNotification'>,
  timeStamp: string,
): NotificationEvent {
  return {
    kind: 'event',
    notificationId: stableId(`${record.id}/${notificationType}`),
    notificationType,
    tenantId: record.tenantId,
    groupId: record.id,
    vnfInstanceId: record.id,
    timeStamp,
    instance: instanceSnapshot(record),
  };
}

function isAttributeUpdate(transition: { from: readonly LcmOperationState[]; to: LcmOperationState }): boolean {
  return transition.from.includes(transition.to);
}

/**
 * The op-occ store, announcing every op occ change it writes, whatever code path writes it, through
 * the outbox and the notification queue. A creation is STARTING (notificationStatus START); every
 * transition that changes the state is a RESULT; a transition whose from-states include its target
 * is an attribute update and announces nothing.
 */
export class NotifyingOpOccStore implements VnfLcmOpOccStore {
  constructor(
    private readonly inner: VnfLcmOpOccStore,
    /** Where the instance snapshot of a notification is read (filters match on it). */
    private readonly instances: Pick<VnfInstanceStore, 'get'>,
    private readonly queue: NotificationQueue,
    private readonly outbox: NotificationOutbox,
  ) {}

  get(id: string): Promise<VnfLcmOpOccRecord | undefined> {
    return this.inner.get(id);
  }

  // Every argument, whatever the store takes (the list plan that picks an index among them).
  listPage(...args: Parameters<VnfLcmOpOccStore['listPage']>): Promise<Page<VnfLcmOpOccRecord>> {
    return this.inner.listPage(...args);
  }

  listInFlight(): Promise<VnfLcmOpOccRecord[]> {
    return this.inner.listInFlight();
  }

  async create(record: VnfLcmOpOccRecord): Promise<void> {
    await withOutbox(
      this.outbox,
      this.entry(record.id, record.operationState, record.stateEnteredTime),
      () => this.inner.create(record),
      () => this.publish(record),
    );
  }

  async transition(id: string, transition: Transition): Promise<VnfLcmOpOccRecord | undefined> {
    if (isAttributeUpdate(transition)) return this.inner.transition(id, transition);
    return withOutbox(
      this.outbox,
      this.entry(id, transition.to, transition.now),
      () => this.inner.transition(id, transition),
      async (record) => {
        if (record) return this.publish(record);
        // Not moved. If it is already in the target state, this is a retried step whose first run
        // may have died between the write and the publish: publish again (same id; deduplicated).
        const current = await this.inner.get(id);
        return current?.operationState === transition.to ? this.publish(current) : 'nothing';
      },
    );
  }

  private async publish(record: VnfLcmOpOccRecord): Promise<Announced> {
    const instance = await this.instances.get(record.vnfInstanceId);
    if (!instance) {
      log.warn('no notification for an op occ whose VNF instance is gone', { opOccId: record.id });
      return 'nothing';
    }
    return publishAfterWrite(this.queue, [opOccEvent(record, instanceSnapshot(instance))]);
  }

  private entry(id: string, operationState: string, stateEnteredTime: string): OutboxEntry {
    return {
      id: opOccNotificationId(id, operationState, stateEnteredTime),
      kind: 'opOcc',
      recordId: id,
      expect: { operationState, stateEnteredTime },
      createdAt: stateEnteredTime,
    };
  }
}

/** The VNF instance store, announcing creations and deletions (the identifier notifications) through the outbox and the notification queue. */
export class NotifyingInstanceStore implements VnfInstanceStore {
  constructor(
    private readonly inner: VnfInstanceStore,
    private readonly queue: NotificationQueue,
    private readonly now: () => string,
    private readonly outbox: NotificationOutbox,
  ) {}

  get(id: string): Promise<VnfInstanceRecord | undefined> {
    return this.inner.get(id);
  }

  listPage(...args: Parameters<VnfInstanceStore['listPage']>): Promise<Page<VnfInstanceRecord>> {
    return this.inner.listPage(...args);
  }

  acquireLock(id: string, lock: LockRequest): Promise<boolean> {
    return this.inner.acquireLock(id, lock);
  }

  releaseLock(id: string, opOccId: string): Promise<void> {
    return this.inner.releaseLock(id, opOccId);
  }

  updateUnderLock(id: string, opOccId: string, update: InstanceUpdate): Promise<boolean> {
    return this.inner.updateUnderLock(id, opOccId, update);
  }

  async create(record: VnfInstanceRecord, first?: () => Promise<void>): Promise<void> {
    const event = instanceEvent(record, 'VnfIdentifierCreationNotification', record.createdAt);
    await withOutbox(
      this.outbox,
      this.entry(event, true),
      () => this.inner.create(record),
      () => publishAfterWrite(this.queue, [event]),
      first,
    );
  }

  async deleteIdle(id: string): Promise<VnfInstanceRecord | undefined> {
    const current = await this.inner.get(id);
    if (!current) return this.inner.deleteIdle(id);
    const event = instanceEvent(current, 'VnfIdentifierDeletionNotification', this.now());
    return withOutbox(
      this.outbox,
      this.entry(event, false),
      () => this.inner.deleteIdle(id),
      async (deleted) => (deleted ? publishAfterWrite(this.queue, [event]) : 'nothing'),
    );
  }

  /** The event is kept whole: a deleted instance could not rebuild it. */
  private entry(event: NotificationEvent, exists: boolean): OutboxEntry {
    return {
      id: event.notificationId,
      kind: 'instance',
      recordId: event.vnfInstanceId,
      expect: { exists },
      event: event as unknown as Record<string, unknown>,
      createdAt: event.timeStamp,
    };
  }
}

/** The sweep's way back from the LCM's outbox entries: the op occ's state change or the instance's creation or deletion, if the records show it. */
export function lcmOutboxReplay(opOccs: Pick<VnfLcmOpOccStore, 'get'>, instances: Pick<VnfInstanceStore, 'get'>): OutboxReplay {
  return {
    opOcc: async (entry) => {
      const record = await opOccs.get(entry.recordId);
      const instance = record && (await instances.get(record.vnfInstanceId));
      const happened = record?.operationState === entry.expect.operationState && record?.stateEnteredTime === entry.expect.stateEnteredTime;
      return record && instance && happened ? opOccEvent(record, instanceSnapshot(instance)) : undefined;
    },
    instance: async (entry) => {
      if (!entry.event || ((await instances.get(entry.recordId)) !== undefined) !== entry.expect.exists) return undefined;
      const event = entry.event as unknown as NotificationEvent;
      // An entry kept before events carried their group.
      return { ...event, groupId: event.groupId ?? event.vnfInstanceId };
    },
  };
}

/** How the notifier fans LCM changes out to VNF LCM subscriptions and delivers them. */
export function lcmNotificationFamily(
  subscriptions: Pick<SubscriptionStore<SubscriptionRecord>, 'get' | 'listAll' | 'listFor' | 'listIfFew'>,
): NotificationFamily<SubscriptionRecord, NotificationEvent> {
  return {
    family: 'vnflcm',
    unnamedDeliveries: true,
    eventKind: 'event',
    subscriptions,
    render: (event, subscription) => (subscriptionMatches(subscription.filter, event) ? redactSecrets(renderNotification(event, subscription)) : undefined),
    version: (subscription) => NOTIFICATION_API_VERSION[subscription.apiMajorVersion],
    groupOf: (event) => event.vnfInstanceId,
    instanceOf: (event) => event.vnfInstanceId,
  };
}

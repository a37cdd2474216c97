// Where notifications start: decorators around the op-occ and VNF instance stores, so every
// recorded change is queued the moment it is written, whatever code path wrote it, with an outbox
// entry written before the change so that no crash between the write and the queue loses it. An op occ
// creation is STARTING (notificationStatus START); every transition that changes the state is a
// RESULT; a `transition` whose from-states include its target is an attribute update and queues
// nothing. Creating and deleting an instance queue the identifier notifications.
import type { LcmOperationState, VnfInstanceRecord, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { Transition, VnfLcmOpOccStore } from '#lib/store/op-occs.ts';
import type { VnfInstanceStore } from '#lib/store/vnf-instances.ts';
import type { NotificationOutbox, OutboxEntry } from '#lib/store/outbox.ts';
import type { AlarmStore } from '#lib/store/alarms.ts';
import type { VnfPackageStore } from '#lib/store/packages.ts';
import { alarmEvent } from '#lib/fm/model.ts';
import { log } from '#lib/log.ts';
import { MAX_EVENT_BYTES, type NotificationQueue, type QueuedEvent } from './queue.ts';
import { stableId, type InstanceSnapshot, type NotificationEvent, type NotificationType } from './model.ts';

export function instanceSnapshot(record: VnfInstanceRecord): InstanceSnapshot {
  return {
    vnfdId: record.vnfdId,
    vnfProvider: record.vnfProvider,
    vnfProductName: record.vnfProductName,
    vnfSoftwareVersion: record.vnfSoftwareVersion,
    vnfdVersion: record.vnfdVersion,
    vnfInstanceName: record.vnfInstanceName,
  };
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
      modificationsTriggeredByVnfPkgChange: (record as unknown as { modificationsTriggeredByVnfPkgChange?: Record<string, unknown> }).modificationsTriggeredByVnfPkgChange,
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

export function instanceEvent(record: VnfInstanceRecord, notificationType: Exclude<NotificationType, 'VnfLcmOperationOccurrenceNotification'>, timeStamp: string): NotificationEvent {
  return {
    kind: 'event',
    notificationId: stableId(`${record.id}/${notificationType}`),
    notificationType,
    tenantId: record.tenantId,
    vnfInstanceId: record.id,
    timeStamp,
    instance: instanceSnapshot(record),
  };
}

/**
 * Queues events, never failing the write they follow: the record is already written, and an
 * exception here would leave the operation half-done (an op occ moved on with no execution
 * behind it). The SQS client retries; what still fails is logged with the whole event.
 */
export async function publishAfterWrite(queue: NotificationQueue, events: QueuedEvent[]): Promise<boolean> {
  try {
    await queue.publish(events);
    return true;
  } catch (error) {
    log.error('could not queue a notification; the reconciliation sweep will queue it again from the outbox', { events, error });
    return false;
  }
}

/** `inner` with some methods replaced; every other method (including ones added later) passes through. */
export function decorate<T extends object>(inner: T, overrides: Partial<T>): T {
  return new Proxy(inner, {
    get(target, property, receiver) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof T];
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function isAttributeUpdate(transition: { from: readonly LcmOperationState[]; to: LcmOperationState }): boolean {
  return transition.from.includes(transition.to);
}

/**
 * Announces a record change through the outbox: the entry is written before the change, the
 * notification queued after it, and the entry removed once queued. A write the change did not make
 * removes its entry at once; a process that dies in between leaves it to the sweep (republishUnsent).
 */
export async function withOutbox<T>(outbox: NotificationOutbox | undefined, entry: OutboxEntry, change: () => Promise<T>, publishAfter: (result: T) => Promise<boolean>): Promise<T> {
  if (!outbox) {
    const result = await change();
    await publishAfter(result);
    return result;
  }
  let kept = false;
  try {
    await outbox.put(entry);
    kept = true;
  } catch (error) {
    // The change still happens; only its protection against a crash is missing.
    log.error('could not record a notification in the outbox', { notificationId: entry.id, error });
  }
  let result: T;
  try {
    result = await change();
  } catch (error) {
    if (kept) await outbox.remove(entry.id).catch(() => undefined);
    throw error;
  }
  const queued = await publishAfter(result);
  // Not queued: the entry stays for the sweep to publish again.
  if (kept && queued) await outbox.remove(entry.id).catch((error: unknown) => log.warn('could not remove an outbox entry; the sweep will', { notificationId: entry.id, error }));
  return result;
}

export function notifyingOpOccStore(inner: VnfLcmOpOccStore, instances: VnfInstanceStore, queue: NotificationQueue, outbox: NotificationOutbox): VnfLcmOpOccStore {
  /** True when queued (or nothing is to be sent). */
  const publish = async (record: VnfLcmOpOccRecord): Promise<boolean> => {
    const instance = await instances.get(record.vnfInstanceId);
    if (!instance) {
      log.warn('no notification for an op occ whose VNF instance is gone', { opOccId: record.id });
      return true;
    }
    return publishAfterWrite(queue, [opOccEvent(record, instanceSnapshot(instance))]);
  };
  const entry = (id: string, operationState: string, stateEnteredTime: string): OutboxEntry => ({
    id: opOccNotificationId(id, operationState, stateEnteredTime), kind: 'opOcc', recordId: id, expect: { operationState, stateEnteredTime }, createdAt: stateEnteredTime,
  });
  return decorate(inner, {
    async create(record: VnfLcmOpOccRecord): Promise<void> {
      await withOutbox(outbox, entry(record.id, record.operationState, record.stateEnteredTime), () => inner.create(record), () => publish(record));
    },
    async transition(id: string, transition: Transition): Promise<VnfLcmOpOccRecord | undefined> {
      if (isAttributeUpdate(transition)) return inner.transition(id, transition);
      return withOutbox(outbox, entry(id, transition.to, transition.now), () => inner.transition(id, transition), async (record) => {
        if (record) return publish(record);
        // Not moved. If it is already in the target state, this is a retried step whose first run
        // may have died between the write and the publish: publish again (same id; deduplicated).
        const current = await inner.get(id);
        if (current?.operationState === transition.to) await publish(current);
        return true;
      });
    },
  });
}

export function notifyingInstanceStore(inner: VnfInstanceStore, queue: NotificationQueue, now: () => string, outbox: NotificationOutbox): VnfInstanceStore {
  const entry = (event: NotificationEvent, exists: boolean): OutboxEntry => ({
    id: event.notificationId, kind: 'instance', recordId: event.vnfInstanceId, expect: { exists }, event: event as unknown as Record<string, unknown>, createdAt: event.timeStamp,
  });
  return decorate(inner, {
    async create(record: VnfInstanceRecord): Promise<void> {
      const event = instanceEvent(record, 'VnfIdentifierCreationNotification', record.createdAt);
      await withOutbox(outbox, entry(event, true), () => inner.create(record), () => publishAfterWrite(queue, [event]));
    },
    async deleteIdle(id: string): Promise<VnfInstanceRecord | undefined> {
      const current = await inner.get(id);
      if (!current) return inner.deleteIdle(id);
      const event = instanceEvent(current, 'VnfIdentifierDeletionNotification', now());
      return withOutbox(outbox, entry(event, false), () => inner.deleteIdle(id), async (deleted) => (deleted ? publishAfterWrite(queue, [event]) : true));
    },
  });
}

/**
 * The sweep's part: queues what the outbox still holds from before `olderThan` (a process died
 * between a record change and its notification), if the record shows the change happened; the
 * entries of changes that never happened are dropped. Returns the ids queued.
 */
export async function republishUnsent(
  outbox: NotificationOutbox,
  stores: { opOccs: VnfLcmOpOccStore; instances: VnfInstanceStore; alarms: Pick<AlarmStore, 'get'>; packages?: Pick<VnfPackageStore, 'get'> },
  queue: NotificationQueue,
  olderThan: string,
): Promise<string[]> {
  const { opOccs, instances } = stores;
  const sent: string[] = [];
  for (const entry of await outbox.list()) {
    if (entry.createdAt > olderThan) continue;
    let event: QueuedEvent | undefined;
    if (entry.kind === 'opOcc') {
      const record = await opOccs.get(entry.recordId);
      const instance = record && await instances.get(record.vnfInstanceId);
      if (record && instance && record.operationState === entry.expect.operationState && record.stateEnteredTime === entry.expect.stateEnteredTime) {
        event = opOccEvent(record, instanceSnapshot(instance));
      }
    } else if (entry.kind === 'alarm') {
      const alarm = await stores.alarms.get(entry.recordId);
      const type = entry.expect.notificationType === 'AlarmClearedNotification' ? 'AlarmClearedNotification' : 'AlarmNotification';
      const happened = type === 'AlarmNotification' ? alarm !== undefined : alarm?.alarmClearedTime === entry.expect.at;
      if (alarm && happened) event = alarmEvent(alarm, type, entry.expect.at ?? entry.createdAt);
    } else if (entry.kind === 'package') {
      // Left for a sweep that can read packages.
      if (!stores.packages) continue;
      const record = await stores.packages.get(entry.recordId);
      const happened = (record !== undefined) === entry.expect.exists
        && (entry.expect.onboardingState === undefined || record?.onboardingState === entry.expect.onboardingState)
        && (entry.expect.operationalState === undefined || record?.operationalState === entry.expect.operationalState);
      if (happened && entry.event) event = entry.event as unknown as QueuedEvent;
    } else if (entry.event && (await instances.get(entry.recordId) !== undefined) === entry.expect.exists) {
      event = entry.event as unknown as NotificationEvent;
    }
    if (event) {
      await queue.publish([event]);
      sent.push(entry.id);
    }
    await outbox.remove(entry.id);
  }
  if (sent.length) log.warn('queued notifications a dead process had not', { notificationIds: sent });
  return sent;
}

// Where notifications start: decorators around the op-occ and VNF instance stores, so every
// recorded change is queued the moment it is written, whatever code path wrote it. An op occ
// creation is STARTING (notificationStatus START); every transition that changes the state is a
// RESULT; a `transition` whose from-states include its target is an attribute update and queues
// nothing. Creating and deleting an instance queue the identifier notifications.
import type { LcmOperationState, VnfInstanceRecord, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { Transition, VnfLcmOpOccStore } from '#lib/store/op-occs.ts';
import type { VnfInstanceStore } from '#lib/store/vnf-instances.ts';
import { log } from '#lib/log.ts';
import { MAX_EVENT_BYTES, type NotificationQueue } from './queue.ts';
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

export function opOccEvent(record: VnfLcmOpOccRecord, instance: InstanceSnapshot): NotificationEvent {
  const event: NotificationEvent = {
    kind: 'event',
    // One state entered at one time by one op occ: a retried step that finds the state already
    // reached republishes the same id.
    notificationId: stableId(`${record.id}/${record.operationState}/${record.stateEnteredTime}`),
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
async function publishAfterWrite(queue: NotificationQueue, events: NotificationEvent[]): Promise<void> {
  try {
    await queue.publish(events);
  } catch (error) {
    log.error('could not queue a notification; it is lost unless re-published', { events, error });
  }
}

/** `inner` with some methods replaced; every other method (including ones added later) passes through. */
function decorate<T extends object>(inner: T, overrides: Partial<T>): T {
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

export function notifyingOpOccStore(inner: VnfLcmOpOccStore, instances: VnfInstanceStore, queue: NotificationQueue): VnfLcmOpOccStore {
  const publish = async (record: VnfLcmOpOccRecord): Promise<void> => {
    const instance = await instances.get(record.vnfInstanceId);
    if (!instance) {
      log.warn('no notification for an op occ whose VNF instance is gone', { opOccId: record.id });
      return;
    }
    await publishAfterWrite(queue, [opOccEvent(record, instanceSnapshot(instance))]);
  };
  return decorate(inner, {
    async create(record: VnfLcmOpOccRecord): Promise<void> {
      await inner.create(record);
      await publish(record);
    },
    async transition(id: string, transition: Transition): Promise<VnfLcmOpOccRecord | undefined> {
      const record = await inner.transition(id, transition);
      if (isAttributeUpdate(transition)) return record;
      if (record) {
        await publish(record);
        return record;
      }
      // Not moved. If it is already in the target state, this is a retried step whose first run
      // may have died between the write and the publish: publish again (same id; deduplicated).
      const current = await inner.get(id);
      if (current?.operationState === transition.to) await publish(current);
      return undefined;
    },
  });
}

export function notifyingInstanceStore(inner: VnfInstanceStore, queue: NotificationQueue, now: () => string): VnfInstanceStore {
  return decorate(inner, {
    async create(record: VnfInstanceRecord): Promise<void> {
      await inner.create(record);
      await publishAfterWrite(queue, [instanceEvent(record, 'VnfIdentifierCreationNotification', record.createdAt)]);
    },
    async deleteIdle(id: string): Promise<VnfInstanceRecord | undefined> {
      const deleted = await inner.deleteIdle(id);
      if (deleted) await publishAfterWrite(queue, [instanceEvent(deleted, 'VnfIdentifierDeletionNotification', now())]);
      return deleted;
    },
  });
}

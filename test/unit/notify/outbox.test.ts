// The notification outbox around the op-occ and instance stores, with in-memory stores and queue:
// an entry is written before each change and left for the notifier to remove once it has fanned the
// event out (test/unit/notify/notifier.test.ts), or removed at once when nothing is announced; a change
// whose notification could not be queued (a process that died, a queue that failed) is queued by the
// sweep from the record; entries of changes that never happened are dropped without a notification.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { republishUnsent } from '#lib/notify/publisher.ts';
import type { NotificationQueue } from '#lib/notify/queue.ts';
import { lcmOutboxReplay, NotifyingInstanceStore, NotifyingOpOccStore, type NotificationEvent } from '#lib/lcm/notifications.ts';
import { alarmOutboxReplay } from '#lib/fm/notifications.ts';
import type { NotificationOutbox, OutboxEntry } from '#lib/store/outbox.ts';
import type { Transition, VnfLcmOpOccStore } from '#lib/store/op-occs.ts';
import type { VnfInstanceStore } from '#lib/store/vnf-instances.ts';
import type { VnfInstanceRecord, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { AlarmRecord } from '#lib/fm/model.ts';

function world() {
  const outbox = new Map<string, OutboxEntry>();
  const published: NotificationEvent[] = [];
  let queueDown = false;
  const opOccs = new Map<string, VnfLcmOpOccRecord>();
  const instances = new Map<string, VnfInstanceRecord>();
  const alarms = new Map<string, AlarmRecord>();
  const box: NotificationOutbox = {
    put: async (entry) => {
      outbox.set(entry.id, entry);
    },
    remove: async (id) => {
      outbox.delete(id);
    },
    list: async () => [...outbox.values()],
  };
  const queue: NotificationQueue = {
    publish: async (events) => {
      if (queueDown) throw new Error('queue unavailable');
      published.push(...(events as NotificationEvent[]));
    },
    enqueueDeliveries: async () => undefined,
    changeVisibility: async () => undefined,
    deadLetter: async () => undefined,
  };
  const rawOpOccs = {
    create: async (record: VnfLcmOpOccRecord) => {
      if (opOccs.has(record.id)) throw Object.assign(new Error('exists'), { name: 'ConditionalCheckFailedException' });
      opOccs.set(record.id, { ...record });
    },
    get: async (id: string) => opOccs.get(id),
    transition: async (id: string, t: Transition) => {
      const current = opOccs.get(id);
      if (!current || !t.from.includes(current.operationState)) return undefined;
      const next = { ...current, ...t.set, operationState: t.to, stateEnteredTime: t.now };
      opOccs.set(id, next);
      return next;
    },
  } as unknown as VnfLcmOpOccStore;
  const rawInstances = {
    create: async (record: VnfInstanceRecord) => {
      instances.set(record.id, record);
    },
    get: async (id: string) => instances.get(id),
    deleteIdle: async (id: string) => {
      const record = instances.get(id);
      instances.delete(id);
      return record;
    },
  } as unknown as VnfInstanceStore;
  const store = new NotifyingOpOccStore(rawOpOccs, rawInstances, queue, box);
  const instanceStore = new NotifyingInstanceStore(rawInstances, queue, () => '2026-12-01T00:00:09Z', box);
  return {
    outbox,
    published,
    opOccs,
    alarms,
    store,
    instanceStore,
    rawOpOccs,
    rawInstances,
    queue,
    box,
    setQueueDown: (down: boolean) => {
      queueDown = down;
    },
    /** What the notifier does once it has fanned out what was queued: removes those entries. */
    notified: () => {
      for (const e of published) outbox.delete(e.notificationId);
    },
    sweep: () =>
      republishUnsent(
        box,
        { ...lcmOutboxReplay(rawOpOccs, rawInstances), ...alarmOutboxReplay({ get: async (id: string) => alarms.get(id) }) },
        queue,
        '9999-01-01T00:00:00Z',
      ),
  };
}

const INSTANCE = {
  id: 'vnf-1',
  tenantId: 't',
  vnfdId: 'd',
  vnfProvider: 'p',
  vnfProductName: 'n',
  vnfSoftwareVersion: '1',
  vnfdVersion: '1',
  createdAt: '2026-12-01T00:00:00Z',
  instantiationState: 'NOT_INSTANTIATED',
} as unknown as VnfInstanceRecord;
const OP_OCC = {
  id: 'occ-1',
  tenantId: 't',
  vnfInstanceId: 'vnf-1',
  operation: 'INSTANTIATE',
  operationState: 'STARTING',
  stateEnteredTime: '2026-12-01T00:00:01Z',
  startTime: '2026-12-01T00:00:01Z',
  isAutomaticInvocation: false,
} as unknown as VnfLcmOpOccRecord;

describe('the notification outbox', () => {
  it('leaves the entry of each queued notification for the notifier, and removes at once that of a change that announces nothing', async () => {
    const w = world();
    await w.instanceStore.create(INSTANCE);
    await w.store.create(OP_OCC);
    await w.store.transition('occ-1', { from: ['STARTING'], to: 'PROCESSING', now: '2026-12-01T00:00:02Z' });
    assert.deepEqual(
      w.published.map((e) => e.notificationType),
      ['VnfIdentifierCreationNotification', 'VnfLcmOperationOccurrenceNotification', 'VnfLcmOperationOccurrenceNotification'],
    );
    assert.deepEqual(
      [...w.outbox.keys()],
      w.published.map((e) => e.notificationId),
    );
    // Not moved, and not in the target state either: nothing is announced, and its entry goes.
    assert.equal(await w.store.transition('occ-1', { from: ['STARTING'], to: 'COMPLETED', now: '2026-12-01T00:00:03Z' }), undefined);
    assert.equal(w.published.length, 3);
    assert.equal(w.outbox.size, 3);
    // An op occ whose instance is gone announces nothing either.
    await w.rawInstances.deleteIdle('vnf-1');
    await w.store.transition('occ-1', { from: ['PROCESSING'], to: 'COMPLETED', now: '2026-12-01T00:00:04Z' });
    assert.equal(w.opOccs.get('occ-1')?.operationState, 'COMPLETED');
    assert.equal(w.published.length, 3);
    assert.equal(w.outbox.size, 3);
  });

  it('keeps what could not be queued, and the sweep queues it from the record, once', async () => {
    const w = world();
    await w.instanceStore.create(INSTANCE);
    await w.store.create(OP_OCC);
    await w.notified();
    w.setQueueDown(true);
    const moved = await w.store.transition('occ-1', { from: ['STARTING'], to: 'PROCESSING', now: '2026-12-01T00:00:02Z' });
    assert.equal(moved?.operationState, 'PROCESSING', 'the change is made even though its notification could not be queued');
    assert.equal(w.outbox.size, 1);
    w.setQueueDown(false);
    const before = w.published.length;
    const sent = await w.sweep();
    assert.equal(sent.length, 1);
    const event = w.published[before];
    assert.equal(event?.opOcc?.operationState, 'PROCESSING');
    assert.equal(event?.timeStamp, '2026-12-01T00:00:02Z');
    assert.equal(w.outbox.size, 0);
    assert.deepEqual(await w.sweep(), []);
  });

  it('a process that died between the change and the queue: the sweep queues it; one that died before the change: nothing is sent', async () => {
    const w = world();
    await w.rawInstances.create(INSTANCE);
    // Died after the write: the entry and the record agree.
    await w.box.put({
      id: 'n-written',
      kind: 'opOcc',
      recordId: 'occ-1',
      expect: { operationState: 'STARTING', stateEnteredTime: OP_OCC.stateEnteredTime },
      createdAt: OP_OCC.stateEnteredTime,
    });
    await w.rawOpOccs.create(OP_OCC);
    // Died before the write: the op occ never reached PROCESSING at that time, the instance never was deleted.
    await w.box.put({
      id: 'n-never',
      kind: 'opOcc',
      recordId: 'occ-1',
      expect: { operationState: 'PROCESSING', stateEnteredTime: '2026-12-01T00:00:05Z' },
      createdAt: '2026-12-01T00:00:05Z',
    });
    await w.box.put({
      id: 'n-not-deleted',
      kind: 'instance',
      recordId: 'vnf-1',
      expect: { exists: false },
      event: { notificationId: 'n-not-deleted' },
      createdAt: '2026-12-01T00:00:06Z',
    });
    const sent = await w.sweep();
    assert.equal(sent.length, 1);
    assert.equal(w.published.length, 1);
    assert.equal(w.published[0]?.opOcc?.operationState, 'STARTING');
    assert.equal(w.outbox.size, 0);
  });

  it('an instance deletion is announced from the record read before it, and a failed write leaves no entry', async () => {
    const w = world();
    await w.instanceStore.create(INSTANCE);
    await w.notified();
    w.setQueueDown(true);
    await w.instanceStore.deleteIdle('vnf-1');
    assert.equal(w.outbox.size, 1);
    w.setQueueDown(false);
    await w.sweep();
    assert.equal(w.published.at(-1)?.notificationType, 'VnfIdentifierDeletionNotification');
    await w.store.create(OP_OCC);
    await w.notified();
    const sent = w.published.length;
    await assert.rejects(w.store.create({ ...OP_OCC, stateEnteredTime: '2026-12-01T00:00:07Z' }), { name: 'ConditionalCheckFailedException' });
    assert.equal(w.outbox.size, 0, 'a change that throws removes its entry');
    assert.equal(w.published.length, sent, 'and announces nothing');
  });

  it('alarms: a raise or a clearing the record shows is queued from it; one it does not show is dropped', async () => {
    const w = world();
    const alarm = { id: 'alarm-1', tenantId: 't', managedObjectId: 'vnf-1', alarmRaisedTime: '2026-12-01T00:00:03Z' } as unknown as AlarmRecord;
    w.alarms.set(alarm.id, { ...alarm, alarmClearedTime: '2026-12-01T00:00:04Z' } as AlarmRecord);
    await w.box.put({
      id: 'raised',
      kind: 'alarm',
      recordId: 'alarm-1',
      expect: { notificationType: 'AlarmNotification', at: '2026-12-01T00:00:03Z' },
      createdAt: '2026-12-01T00:00:03Z',
    });
    await w.box.put({
      id: 'cleared',
      kind: 'alarm',
      recordId: 'alarm-1',
      expect: { notificationType: 'AlarmClearedNotification', at: '2026-12-01T00:00:04Z' },
      createdAt: '2026-12-01T00:00:04Z',
    });
    await w.box.put({
      id: 'cleared-later',
      kind: 'alarm',
      recordId: 'alarm-1',
      expect: { notificationType: 'AlarmClearedNotification', at: '2026-12-01T00:00:08Z' },
      createdAt: '2026-12-01T00:00:08Z',
    });
    await w.box.put({
      id: 'never-raised',
      kind: 'alarm',
      recordId: 'alarm-2',
      expect: { notificationType: 'AlarmNotification', at: '2026-12-01T00:00:05Z' },
      createdAt: '2026-12-01T00:00:05Z',
    });
    await w.sweep();
    assert.deepEqual(
      w.published.map((e) => [(e as unknown as { notificationType: string }).notificationType, e.timeStamp]),
      [
        ['AlarmNotification', '2026-12-01T00:00:03Z'],
        ['AlarmClearedNotification', '2026-12-01T00:00:04Z'],
      ],
    );
    assert.equal(w.outbox.size, 0);
  });
});

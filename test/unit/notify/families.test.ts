// The notifier delivers whatever API families it is handed, and only those: a fake family, which
// lib/notify has never heard of, is fanned out, rendered and delivered with its own Version header;
// two families whose subscriptions share an id are kept apart (one subscription cache, keyed by
// family); a family that writes unnamed deliveries receives the deliveries that name no family.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { DeliverableSubscription, NotificationFamily } from '#lib/notify/ports.ts';
import { processNotificationBatch } from '#lib/notify/notifier.ts';
import type { FamilyEvent } from '#lib/notify/model.ts';
import { notifierHarness, recordingCallback } from './support.ts';

interface FakeSubscription extends DeliverableSubscription {
  colour: string;
}

interface FakeEvent extends FamilyEvent {
  kind: 'fake-event';
  colour: string;
}

const callback = recordingCallback();
const received = callback.received;

/** A family lib/notify does not know: subscriptions match events of their colour. */
function fakeFamily(
  name: string,
  subscriptions: FakeSubscription[],
  extra: Partial<NotificationFamily<FakeSubscription, FakeEvent>> = {},
): NotificationFamily<FakeSubscription, FakeEvent> {
  return {
    family: name,
    eventKind: `${name}-event`,
    subscriptions: {
      get: async (id) => subscriptions.find((s) => s.id === id),
      listAll: async (tenantId) => subscriptions.filter((s) => s.tenantId === tenantId),
    },
    render: (event, subscription) =>
      subscription.colour === event.colour ? { id: event.notificationId, family: name, subscriptionId: subscription.id } : undefined,
    version: (subscription) => `${name}-${subscription.colour}`,
    ...extra,
  };
}

const harness = notifierHarness;

let serial = 0;
const message = (body: unknown, groupId = 'g') => {
  serial++;
  return { messageId: `m${serial}`, receiptHandle: `r${serial}`, body: JSON.stringify(body), groupId, sentAt: 1_000_000 };
};
const forever = { remainingMs: () => 60_000 };
const subscription = (id: string, colour: string, path: string, tenantId = 't'): FakeSubscription => ({
  id,
  tenantId,
  createdSeq: '',
  callbackUri: `${callback.base()}/${path}`,
  colour,
});
const event = (kind: string, colour: string): FakeEvent => ({
  kind: kind as 'fake-event',
  notificationId: `${kind}-${colour}`,
  notificationType: 'FakeNotification',
  tenantId: 't',
  groupId: 'thing-1',
  timeStamp: '2026-12-01T10:00:00Z',
  colour,
});

describe('the notifier with families it is handed', () => {
  it("fans a fake family's event out to its matching subscriptions and delivers each with the family's Version", async () => {
    received.length = 0;
    const h = harness([
      fakeFamily('fake', [subscription('red', 'red', 'red'), subscription('blue', 'blue', 'blue'), subscription('other-tenant', 'red', 'x', 'u')]),
    ]);
    await processNotificationBatch(h.deps, [message(event('fake-event', 'red'))], forever);
    assert.deepEqual(
      h.queued.map((q) => [q.delivery.family, q.delivery.subscriptionId, q.group]),
      [['fake', 'red', 'thing-1']],
    );

    const result = await processNotificationBatch(
      h.deps,
      h.queued.map((q) => message(q.delivery)),
      forever,
    );
    assert.equal(result.delivered, 1);
    assert.deepEqual(
      received.map((r) => [r.path, r.version, r.body.subscriptionId]),
      [['/red', 'fake-red', 'red']],
    );
  });

  it('keeps two families apart when their subscriptions share an id (one cache, keyed by family)', async () => {
    received.length = 0;
    const h = harness([fakeFamily('one', [subscription('s', 'red', 'one')]), fakeFamily('two', [subscription('s', 'red', 'two')])]);
    await processNotificationBatch(h.deps, [message(event('one-event', 'red')), message(event('two-event', 'red'))], forever);
    assert.deepEqual(
      h.queued.map((q) => [q.delivery.family, q.delivery.subscriptionId]),
      [
        ['one', 's'],
        ['two', 's'],
      ],
    );
    // In one batch, so the second family's read of `s` could only come from a cache keyed by id alone.
    await processNotificationBatch(
      h.deps,
      h.queued.map((q) => message(q.delivery)),
      forever,
    );
    assert.deepEqual(received.map((r) => [r.path, r.version, r.body.family]).sort(), [
      ['/one', 'one-red', 'one'],
      ['/two', 'two-red', 'two'],
    ]);
  });

  it('routes deliveries that name no family to the family that writes them so, and dead-letters what no family handed in takes', async () => {
    received.length = 0;
    const h = harness([
      fakeFamily('named', [subscription('s', 'red', 'named')]),
      fakeFamily('legacy', [subscription('s', 'red', 'legacy')], { unnamedDeliveries: true, groupOf: (e) => `legacy:${e.groupId}` }),
    ]);
    await processNotificationBatch(h.deps, [message(event('legacy-event', 'red'))], forever);
    assert.deepEqual(
      h.queued.map((q) => [q.delivery.family, q.group]),
      [[undefined, 'legacy:thing-1']],
    );
    assert.equal('family' in (h.queued[0]?.delivery ?? {}), false, 'the delivery is written without a family');

    await processNotificationBatch(
      h.deps,
      [message(h.queued[0]!.delivery), message({ ...h.queued[0]!.delivery, family: 'nobody' }), message(event('nobody-event', 'red'))],
      forever,
    );
    assert.deepEqual(
      received.map((r) => [r.path, r.version]),
      [['/legacy', 'legacy-red']],
    );
    assert.deepEqual(h.dead, ['this notifier does not deliver nobody notifications', 'unknown message kind "nobody-event"']);
  });
});

// The notifier's handling of one batch, with an in-memory queue and subscription store and a real
// HTTP subscriber: fan-out, ordering within a group under failures, backoff, the retry period,
// the dead-letter queue, and deleted subscriptions.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NotifierDeps } from '#lib/notify/ports.ts';
import { backoffSeconds, processNotificationBatch, type ReceivedMessage } from '#lib/notify/notifier.ts';
import { stableId, type NotificationDelivery } from '#lib/notify/model.ts';
import { lcmNotificationFamily, type NotificationEvent, type SubscriptionRecord } from '#lib/lcm/notifications.ts';
import type { NotificationQueue } from '#lib/notify/queue.ts';

let server: http.Server;
let base: string;
/** Status per callback path; POST bodies received per path. */
const answers = new Map<string, number>();
const received = new Map<string, string[]>();

before(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      received.set(path, [...(received.get(path) ?? []), (JSON.parse(Buffer.concat(chunks).toString()) as { id: string }).id]);
      res.writeHead(answers.get(path) ?? 204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

function subscription(id: string, extra: Partial<SubscriptionRecord> = {}): SubscriptionRecord {
  return {
    id,
    tenantId: 't',
    createdAt: '',
    createdSeq: '',
    callbackUri: `${base}/${id}`,
    verbosity: 'FULL',
    apiMajorVersion: 2,
    apiRoot: 'https://vnfm',
    revision: 1,
    ...extra,
  };
}

function harness(subscriptions: SubscriptionRecord[], now = 1_000_000) {
  const queued: NotificationDelivery[] = [];
  const visibility: Array<{ receiptHandle: string; seconds: number }> = [];
  const dead: Array<{ body: string; groupId: string; reason: Record<string, string> }> = [];
  const queue: NotificationQueue = {
    publish: async () => undefined,
    enqueueDeliveries: async (deliveries) => {
      queued.push(...deliveries);
    },
    changeVisibility: async (entries) => {
      visibility.push(...entries);
    },
    deadLetter: async (messages) => {
      dead.push(...messages);
    },
  };
  const deps: NotifierDeps = {
    families: [
      lcmNotificationFamily({
        get: async (id) => subscriptions.find((s) => s.id === id),
        listAll: async (tenantId) => subscriptions.filter((s) => s.tenantId === tenantId),
      }),
    ],
    secrets: { create: async () => '', put: async () => '', read: async () => ({}), remove: async () => undefined },
    egress: { allowPrivateNetworks: true },
    now: () => new Date(now).toISOString(),
    newId: () => 'id',
    queue,
    retryPeriodMs: 60_000,
    clock: () => now,
  };
  return { deps, queued, visibility, dead };
}

let serial = 0;
function message(body: NotificationEvent | NotificationDelivery, groupId: string, sentAt = 1_000_000): ReceivedMessage {
  serial++;
  return { messageId: `m${serial}`, receiptHandle: `r${serial}`, body: JSON.stringify(body), groupId, sentAt };
}

function delivery(subscriptionId: string, key: string): NotificationDelivery {
  return { kind: 'delivery', subscriptionId, notificationId: stableId(key), body: { id: key } };
}

const forever = { remainingMs: () => 60_000 };

/**
 * Subscriptions `mine` (naming instance i) and `any`, in a harness whose store notes each read the
 * notifier makes of it: `few` says whether it has a listIfFew and what it answers; `tell: false`, a
 * store not yet keyed by instance.
 */
function instanceHarness(answers: { few?: 'all' | 'many'; tell?: boolean }) {
  const all = [subscription('mine', { filter: { vnfInstanceSubscriptionFilter: { vnfInstanceIds: ['i'] } } }), subscription('any')];
  const asked: string[] = [];
  const h = harness(all);
  h.deps.families = [
    lcmNotificationFamily({
      get: async (id) => all.find((s) => s.id === id),
      listAll: async (tenantId) => {
        asked.push(`all ${tenantId}`);
        return all;
      },
      ...(answers.few && {
        listIfFew: async (tenantId: string, atMost: number) => {
          asked.push(`few ${tenantId} ${atMost}`);
          return answers.few === 'all' ? all : undefined;
        },
      }),
      listFor: async (tenantId, instanceId) => {
        asked.push(`${tenantId}/${instanceId}`);
        if (answers.tell === false) return undefined;
        return instanceId === 'i' ? all : [all[1] as SubscriptionRecord];
      },
    }),
  ];
  return { h, asked };
}

/** A VnfIdentifierCreationNotification event of instance `vnfInstanceId` of tenant t. */
const created = (key: string, vnfInstanceId: string): NotificationEvent => ({
  kind: 'event',
  notificationId: stableId(key),
  notificationType: 'VnfIdentifierCreationNotification',
  tenantId: 't',
  groupId: vnfInstanceId,
  vnfInstanceId,
  timeStamp: '2026-12-01T10:00:00Z',
  instance: { vnfdId: 'vnfd', vnfProvider: 'p', vnfProductName: 'n', vnfSoftwareVersion: '1', vnfdVersion: '1' },
});

describe('processNotificationBatch', () => {
  it('fans an event out to the subscriptions whose filter matches, rendered for each', async () => {
    const h = harness([
      subscription('all'),
      subscription('short', { verbosity: 'SHORT' }),
      subscription('other-vnfd', { filter: { vnfInstanceSubscriptionFilter: { vnfdIds: ['nope'] } } }),
      subscription('other-tenant', { tenantId: 'u' }),
    ]);
    const event: NotificationEvent = {
      kind: 'event',
      notificationId: stableId('e'),
      notificationType: 'VnfIdentifierCreationNotification',
      tenantId: 't',
      groupId: 'i',
      vnfInstanceId: 'i',
      timeStamp: '2026-12-01T10:00:00Z',
      instance: { vnfdId: 'vnfd', vnfProvider: 'p', vnfProductName: 'n', vnfSoftwareVersion: '1', vnfdVersion: '1' },
    };
    const result = await processNotificationBatch(h.deps, [message(event, 'i')], forever);
    assert.deepEqual(result.failedMessageIds, []);
    assert.deepEqual(
      h.queued.map((d) => d.subscriptionId),
      ['all', 'short'],
    );
    assert.ok(
      h.queued.every((d) => d.notificationId === event.notificationId && d.body.id === event.notificationId && d.body.subscriptionId === d.subscriptionId),
    );
  });

  it("matches a change against the subscriptions the store gives for the event's instance, once per instance in a batch, when it can tell them", async () => {
    const { h, asked } = instanceHarness({});
    const batch = [message(created('a', 'i'), 'i'), message(created('b', 'i'), 'i'), message(created('c', 'j'), 'j')];
    assert.deepEqual((await processNotificationBatch(h.deps, batch, forever)).failedMessageIds, []);
    assert.deepEqual(asked, ['t/i', 't/j'], 'never every subscription of the tenant');
    assert.deepEqual(h.queued.map((d) => `${d.subscriptionId}:${d.body.vnfInstanceId}`).sort(), ['any:i', 'any:i', 'any:j', 'mine:i', 'mine:i']);
  });

  it('reads all of a tenant with few subscriptions once for the whole batch, and per instance only for a tenant with more', async () => {
    for (const few of ['all', 'many'] as const) {
      const { h, asked } = instanceHarness({ few });
      const batch = [message(created('a', 'i'), 'i'), message(created('b', 'j'), 'j'), message(created('c', 'k'), 'k')];
      assert.deepEqual((await processNotificationBatch(h.deps, batch, forever)).failedMessageIds, []);
      assert.deepEqual(asked.sort(), few === 'many' ? ['few t 100', 't/i', 't/j', 't/k'] : ['few t 100']);
      // Either way each subscription hears of what its filter matches.
      assert.deepEqual(h.queued.map((d) => `${d.subscriptionId}:${d.body.vnfInstanceId}`).sort(), ['any:i', 'any:j', 'any:k', 'mine:i']);
    }
  });

  it('reads all of a tenant once for the batch when the store cannot yet tell the subscriptions of an instance', async () => {
    const { h, asked } = instanceHarness({ few: 'many', tell: false });
    const batch = [message(created('a', 'i'), 'i'), message(created('b', 'j'), 'j')];
    assert.deepEqual((await processNotificationBatch(h.deps, batch, forever)).failedMessageIds, []);
    assert.deepEqual(asked.sort(), ['all t', 'few t 100', 't/i', 't/j']);
    assert.deepEqual(h.queued.map((d) => `${d.subscriptionId}:${d.body.vnfInstanceId}`).sort(), ['any:i', 'any:j', 'mine:i']);
  });

  it('a failing delivery and the rest of its group stay in flight for the backoff; other groups go on', async () => {
    answers.set('/flaky', 503);
    const h = harness([subscription('flaky'), subscription('fine')]);
    const batch = [
      message(delivery('flaky', 'f1'), 'flaky:i'),
      message(delivery('fine', 'g1'), 'fine:i'),
      message(delivery('flaky', 'f2'), 'flaky:i'),
      message(delivery('fine', 'g2'), 'fine:i'),
    ];
    const result = await processNotificationBatch(h.deps, batch, forever);
    assert.deepEqual(result.failedMessageIds, [batch[0]?.messageId, batch[2]?.messageId]);
    assert.deepEqual(received.get('/flaky'), ['f1'], 'f2 was not tried after f1 failed');
    assert.deepEqual(received.get('/fine'), ['g1', 'g2']);
    assert.deepEqual(
      h.visibility.map((v) => v.receiptHandle),
      [batch[0]?.receiptHandle, batch[2]?.receiptHandle],
    );
    assert.ok(h.visibility.every((v) => v.seconds === h.visibility[0]?.seconds && v.seconds >= 1));
    assert.deepEqual(h.dead, []);
    answers.delete('/flaky');
  });

  it('after the retry period a retryable failure goes to the dead-letter queue; a 4xx goes at once; the group then moves on', async () => {
    answers.set('/gone-for-long', 500);
    answers.set('/refuses', 400);
    const h = harness([subscription('gone-for-long'), subscription('refuses')]);
    const batch = [
      message(delivery('gone-for-long', 'l1'), 'long:i', 1_000_000 - 61_000),
      message(delivery('refuses', 'r1'), 'refuses:i'),
      message(delivery('refuses', 'r2'), 'refuses:i'),
    ];
    const result = await processNotificationBatch(h.deps, batch, forever);
    assert.deepEqual(result.failedMessageIds, []);
    assert.equal(result.deadLettered, 3);
    assert.deepEqual(received.get('/refuses'), ['r1', 'r2'], 'once each, no retry');
    const reasons = h.dead.map((d) => [d.groupId, d.reason.lastStatus, d.reason.subscriptionId, d.reason.notificationId]);
    assert.deepEqual(reasons, [
      ['long:i', '500', 'gone-for-long', stableId('l1')],
      ['refuses:i', '400', 'refuses', stableId('r1')],
      ['refuses:i', '400', 'refuses', stableId('r2')],
    ]);
    assert.match(h.dead[0]?.reason.reason ?? '', /retry period 60 s/);
    assert.equal(h.dead[0]?.body, batch[0]?.body, 'the dead letter can be redriven as it is');
  });

  it("removes the outbox entries of the events it fanned out or dead-lettered, in one call once their deliveries are queued; not a retried event's", async () => {
    const h = harness([subscription('all')]);
    h.deps.families = [
      lcmNotificationFamily({
        get: async () => undefined,
        listAll: async (tenantId) => {
          if (tenantId === 'down') throw new Error('DynamoDB unavailable');
          return [subscription('all')];
        },
      }),
    ];
    const removals: Array<{ ids: string[]; queuedBefore: number }> = [];
    h.deps.outbox = {
      removeAll: async (ids) => {
        removals.push({ ids, queuedBefore: h.queued.length });
      },
    };
    const unknown = { ...created('u', 'k'), kind: 'from-a-newer-version' } as unknown as NotificationEvent;
    const failing = { ...created('f', 'm'), tenantId: 'down' };
    const batch = [
      message(created('a', 'i'), 'i'),
      message(created('b', 'j'), 'j'),
      message(delivery('gone', 'd'), 'gone:i'),
      message(unknown, 'k'),
      message(failing, 'm'),
    ];
    const result = await processNotificationBatch(h.deps, batch, forever);
    assert.deepEqual(result.failedMessageIds, [batch[4]?.messageId], 'the event whose fan-out failed is retried');
    assert.equal(result.deadLettered, 1);
    assert.deepEqual(
      removals.map((r) => ({ ...r, ids: r.ids.sort() })),
      [{ ids: [stableId('a'), stableId('b'), stableId('u')].sort(), queuedBefore: 2 }],
    );

    // An outbox that cannot be written fails nothing: the sweep deals with the entries left.
    h.deps.outbox = { removeAll: async () => Promise.reject(new Error('throttled')) };
    assert.deepEqual((await processNotificationBatch(h.deps, [message(created('c', 'i'), 'i')], forever)).failedMessageIds, []);
    assert.equal(h.queued.length, 3);
  });

  it('drops deliveries of deleted subscriptions, and gives back what it has no time for', async () => {
    const h = harness([subscription('present')]);
    const gone = message(delivery('deleted', 'd1'), 'deleted:i');
    assert.deepEqual((await processNotificationBatch(h.deps, [gone], forever)).failedMessageIds, []);
    assert.equal(received.get('/deleted'), undefined);

    const late = [message(delivery('present', 'p1'), 'present:i'), message(delivery('present', 'p2'), 'present:i')];
    const result = await processNotificationBatch(h.deps, late, { remainingMs: () => 1_000 });
    assert.deepEqual(
      result.failedMessageIds,
      late.map((m) => m.messageId),
    );
    assert.deepEqual(
      h.visibility.map((v) => v.seconds),
      [0, 0],
    );
  });
});

describe('backoffSeconds', () => {
  it('doubles with the time waited, between 1 s and 5 min, and never past the retry period', () => {
    const half = () => 0.5;
    assert.equal(backoffSeconds(0, 86_400_000, half), 1);
    assert.equal(backoffSeconds(4_000, 86_400_000, half), 4);
    assert.equal(backoffSeconds(64_000, 86_400_000, half), 64);
    assert.equal(backoffSeconds(3_600_000, 86_400_000, half), 300);
    assert.equal(backoffSeconds(55_000, 60_000, half), 5, 'the last attempt is at the end of the retry period');
    assert.ok(backoffSeconds(10_000, 86_400_000, () => 0) >= 9 && backoffSeconds(10_000, 86_400_000, () => 1) <= 11, 'jitter of ±10%');
  });
});

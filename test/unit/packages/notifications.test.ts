// VNF package notifications without the runtime: PkgmNotificationsFilter matching, the request
// schema's SOL005 rules, the package store announcing its changes through the outbox (and the sweep
// queuing what a failed queue left), and the notifier fanning package events out and delivering them
// as the family it is handed (Version per subscription, nothing for another tenant, unknown family
// dead-lettered).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { processNotificationBatch } from '#lib/notify/notifier.ts';
import { republishUnsent } from '#lib/notify/publisher.ts';
import type { NotificationQueue, QueuedEvent } from '#lib/notify/queue.ts';
import {
  NotifyingPackageStore,
  packageEvent,
  packageOutboxReplay,
  packageNotificationFamily,
  pkgmSubscriptionMatches,
  pkgmSubscriptionRequest,
  type PackageEvent,
  type PkgmNotificationsFilter,
  type PkgmSubscriptionRecord,
} from '#lib/packages/notifications.ts';
import type { NotificationOutbox, OutboxEntry } from '#lib/store/outbox.ts';
import type { PackageChange, VnfPackageRecord, VnfPackageStore } from '#lib/store/packages.ts';
import { notifierHarness, recordingCallback } from '../notify/support.ts';

const PACKAGE: VnfPackageRecord = {
  id: 'pkg-1',
  tenantId: 't',
  createdAt: '2026-12-01T09:00:00Z',
  onboardingState: 'ONBOARDED',
  operationalState: 'ENABLED',
  usageState: 'NOT_IN_USE',
  vnfdId: 'vnfd-1',
  vnfProvider: 'Company',
  vnfProductName: 'Sample VNF',
  vnfSoftwareVersion: '1.0',
  vnfdVersion: '1.0',
  vnfmInfo: ['Tacker'],
  revision: 1,
};
const onboarded = packageEvent(PACKAGE, 'VnfPackageOnboardingNotification', undefined, '2026-12-01T10:00:00Z');
const disabled = packageEvent({ ...PACKAGE, operationalState: 'DISABLED' }, 'VnfPackageChangeNotification', 'OP_STATE_CHANGE', '2026-12-01T10:01:00Z');

describe('PkgmNotificationsFilter', () => {
  const matches = (filter: PkgmNotificationsFilter) => [onboarded, disabled].map((event) => pkgmSubscriptionMatches(filter, event));

  it('matches every attribute present (AND), any value of an array (OR)', () => {
    assert.deepEqual(matches({}), [true, true]);
    assert.deepEqual(matches({ notificationTypes: ['VnfPackageChangeNotification'] }), [false, true]);
    assert.deepEqual(matches({ vnfdId: ['other', 'vnfd-1'] }), [true, true]);
    assert.deepEqual(matches({ vnfdId: ['other'] }), [false, false]);
    assert.deepEqual(matches({ vnfPkgId: ['pkg-1'], operationalState: ['DISABLED'] }), [false, true]);
    assert.deepEqual(matches({ usageState: ['IN_USE'] }), [false, false]);
    assert.deepEqual(matches({ vnfmInfo: ['Tacker'] }), [true, true]);
    assert.deepEqual(
      matches({
        vnfProductsFromProviders: [{ vnfProvider: 'Company', vnfProducts: [{ vnfProductName: 'Sample VNF', versions: [{ vnfSoftwareVersion: '1.0' }] }] }],
      }),
      [true, true],
    );
    assert.deepEqual(matches({ vnfProductsFromProviders: [{ vnfProvider: 'Company', vnfProducts: [{ vnfProductName: 'Other' }] }] }), [false, false]);
  });

  it('refuses what SOL005 forbids: two ways to name packages, change-only attributes without VnfPackageChangeNotification', () => {
    const parse = (filter: unknown) => pkgmSubscriptionRequest.safeParse({ callbackUri: 'http://nfvo/cb', filter }).success;
    assert.equal(parse({ vnfdId: ['a'] }), true);
    assert.equal(parse({ notificationTypes: ['VnfPackageChangeNotification'], operationalState: ['DISABLED'], vnfPkgId: ['p'] }), true);
    assert.equal(parse({ vnfdId: ['a'], vnfPkgId: ['b'] }), false);
    assert.equal(parse({ notificationTypes: ['VnfPackageOnboardingNotification'], usageState: ['IN_USE'] }), false);
    assert.equal(parse({ notificationTypes: [] }), false);
  });
});

describe('the package store with notifications', () => {
  function world() {
    const packages = new Map<string, VnfPackageRecord>();
    const outbox = new Map<string, OutboxEntry>();
    const published: PackageEvent[] = [];
    let queueDown = false;
    const queue: NotificationQueue = {
      publish: async (events: QueuedEvent[]) => {
        if (queueDown) throw new Error('queue unavailable');
        published.push(...(events as PackageEvent[]));
      },
      enqueueDeliveries: async () => undefined,
      changeVisibility: async () => undefined,
      deadLetter: async () => undefined,
    };
    const box: NotificationOutbox = {
      put: async (e) => {
        outbox.set(e.id, e);
      },
      remove: async (id) => {
        outbox.delete(id);
      },
      list: async () => [...outbox.values()],
    };
    const raw = {
      get: async (id: string) => packages.get(id),
      change: async (id: string, change: PackageChange) => {
        const current = packages.get(id);
        if (!current || (change.from.onboardingState && !change.from.onboardingState.includes(current.onboardingState))) return undefined;
        const next = { ...current, ...change.set } as VnfPackageRecord;
        packages.set(id, next);
        return next;
      },
      deleteUnused: async (id: string) => packages.get(id)?.operationalState === 'DISABLED' && packages.delete(id),
    } as unknown as VnfPackageStore;
    const store = new NotifyingPackageStore(raw, queue, () => '2026-12-01T10:05:00Z', box);
    const sweep = () => republishUnsent(box, packageOutboxReplay(raw), queue, '9999-01-01T00:00:00Z');
    return {
      packages,
      outbox,
      published,
      store,
      sweep,
      setQueueDown: (down: boolean) => {
        queueDown = down;
      },
    };
  }

  it('announces onboarding, operationalState changes and deletion of an onboarded package, and nothing else', async () => {
    const w = world();
    w.packages.set('pkg-1', { ...PACKAGE, onboardingState: 'PROCESSING', operationalState: 'DISABLED', vnfdId: undefined });
    await w.store.change('pkg-1', {
      from: { onboardingState: ['PROCESSING'] },
      set: { onboardingState: 'ONBOARDED', operationalState: 'ENABLED', vnfdId: 'vnfd-1', stateSince: '2026-12-01T10:00:00Z' },
    });
    await w.store.change('pkg-1', { from: { onboardingState: ['ONBOARDED'], operationalState: 'ENABLED' }, set: { userDefinedData: { a: 1 } } });
    await w.store.change('pkg-1', { from: { onboardingState: ['ONBOARDED'], operationalState: 'ENABLED' }, set: { operationalState: 'DISABLED' } });
    assert.equal(await w.store.deleteUnused('pkg-1'), true);
    assert.deepEqual(
      w.published.map((e) => [e.notificationType, e.changeType, e.package.vnfdId, e.package.operationalState, e.timeStamp]),
      [
        ['VnfPackageOnboardingNotification', undefined, 'vnfd-1', 'ENABLED', '2026-12-01T10:00:00Z'],
        ['VnfPackageChangeNotification', 'OP_STATE_CHANGE', 'vnfd-1', 'DISABLED', '2026-12-01T10:05:00Z'],
        ['VnfPackageChangeNotification', 'PKG_DELETE', 'vnfd-1', 'DISABLED', '2026-12-01T10:05:00Z'],
      ],
    );
    // Each queued notification's entry waits for the notifier, which removes it once the event is fanned out.
    assert.deepEqual(
      [...w.outbox.keys()],
      w.published.map((e) => e.notificationId),
    );
    // A change whose condition fails announces nothing, and leaves no entry.
    assert.equal(
      await w.store.change('pkg-1', { from: { onboardingState: ['PROCESSING'] }, set: { onboardingState: 'ONBOARDED', stateSince: 'x' } }),
      undefined,
    );
    assert.equal(w.outbox.size, 3);
    // A package never onboarded is deleted without a notification.
    w.packages.set('pkg-2', { ...PACKAGE, id: 'pkg-2', onboardingState: 'CREATED', operationalState: 'DISABLED' });
    assert.equal(await w.store.deleteUnused('pkg-2'), true);
    assert.equal(w.published.length, 3);
  });

  it('keeps what could not be queued for the sweep, which queues it only if the change happened', async () => {
    const w = world();
    w.packages.set('pkg-1', { ...PACKAGE });
    w.setQueueDown(true);
    const changed = await w.store.change('pkg-1', {
      from: { onboardingState: ['ONBOARDED'], operationalState: 'ENABLED' },
      set: { operationalState: 'DISABLED' },
    });
    assert.equal(changed?.operationalState, 'DISABLED', 'the change is made even though its notification could not be queued');
    assert.equal(w.outbox.size, 1);
    w.setQueueDown(false);
    // An entry for a deletion that never happened (the package is still there) is dropped.
    await w.store.deleteUnused('pkg-missing');
    w.outbox.set('never', { id: 'never', kind: 'package', recordId: 'pkg-1', expect: { exists: false }, event: {}, createdAt: '2026-12-01T10:06:00Z' });
    assert.equal((await w.sweep()).length, 1);
    assert.deepEqual(
      w.published.map((e) => [e.changeType, e.package.operationalState]),
      [['OP_STATE_CHANGE', 'DISABLED']],
    );
    assert.equal(w.outbox.size, 0);
  });
});

describe('the notifier with the package family', () => {
  const callback = recordingCallback();
  const received = callback.received;

  it("fans a package event out to its tenant's matching subscriptions and delivers with each one's Version; an unknown family is dead-lettered", async () => {
    const subscription = (id: string, extra: Partial<PkgmSubscriptionRecord> = {}): PkgmSubscriptionRecord => ({
      id,
      tenantId: 't',
      createdAt: '',
      createdSeq: '',
      callbackUri: `${callback.base()}/${id}`,
      apiMajorVersion: 2,
      apiRoot: 'https://vnfm',
      revision: 1,
      ...extra,
    });
    const subscriptions = [
      subscription('v2'),
      subscription('v1', { apiMajorVersion: 1 }),
      subscription('changes', { filter: { notificationTypes: ['VnfPackageChangeNotification'] } }),
      subscription('other-tenant', { tenantId: 'u' }),
    ];
    const { deps, queued, dead } = notifierHarness([
      packageNotificationFamily({
        get: async (id) => subscriptions.find((s) => s.id === id),
        listAll: async (tenant) => subscriptions.filter((s) => s.tenantId === tenant),
      }),
    ]);
    const message = (body: unknown, i: number) => ({ messageId: `m${i}`, receiptHandle: `r${i}`, body: JSON.stringify(body), groupId: 'g', sentAt: 1_000_000 });
    const forever = { remainingMs: () => 60_000 };

    await processNotificationBatch(deps, [message(onboarded, 1)], forever);
    assert.deepEqual(
      queued.map((q) => [q.delivery.subscriptionId, q.delivery.family, q.group]),
      [
        ['v2', 'vnfpkgm', 'pkg-1'],
        ['v1', 'vnfpkgm', 'pkg-1'],
      ],
    );

    const result = await processNotificationBatch(
      deps,
      [...queued.map((q, i) => message(q.delivery, 10 + i)), message({ ...queued[0]!.delivery, family: 'vnfpm' }, 20)],
      forever,
    );
    assert.equal(result.delivered, 2);
    assert.deepEqual(
      received.map((r) => [r.path, r.version, (r.body._links as { vnfPackage: { href: string } }).vnfPackage.href]),
      [
        ['/v2', '2.4.0', 'https://vnfm/vnfpkgm/v2/vnf_packages/pkg-1'],
        ['/v1', '1.3.0', 'https://vnfm/vnfpkgm/v1/vnf_packages/pkg-1'],
      ],
    );
    assert.deepEqual(dead, ['this notifier does not deliver vnfpm notifications']);
  });
});

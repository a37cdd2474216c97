// SOL005 VNF package management subscriptions and notifications as this product stores, renders and
// queues them: PkgmSubscriptionRequest / PkgmSubscription (9.5.2.6-7) with PkgmNotificationsFilter
// (9.5.3.4), the package events recorded when a package is onboarded, changes its operationalState
// or is deleted, and VnfPackageOnboardingNotification / VnfPackageChangeNotification (9.5.2.8-9)
// rendered from an event for one subscription. The package store announces them as it writes
// (NotifyingPackageStore: where every package notification starts); the notifier delivers them as
// one of its families (packageNotificationFamily), so lib/notify never imports this module.
import * as z from 'zod';
import type { NotificationFamily } from '#lib/notify/ports.ts';
import { stableId, subscriptionRequestFields, type FamilyEvent } from '#lib/notify/model.ts';
import { publishAfterWrite, withOutbox, type OutboxReplay } from '#lib/notify/publisher.ts';
import type { NotificationQueue } from '#lib/notify/queue.ts';
import type { SubscriptionBase } from '#lib/notify/subscriptions.ts';
import { identifier, instanceMatches, nonEmpty, vnfInstanceSubscriptionFilter } from '#lib/sol/subscription-filter.ts';
import type { Page, TenantScope } from '#lib/store/dynamo.ts';
import type { NotificationOutbox, OutboxEntry } from '#lib/store/outbox.ts';
import type { OperationalState, PackageChange, UsageState, VnfPackageRecord, VnfPackageStore } from '#lib/store/packages.ts';
import type { ListPlan } from '#lib/sol/plan.ts';
import { DynamoSubscriptionStore, type SubscriptionStore } from '#lib/store/subscriptions.ts';

export const PKGM_NOTIFICATION_TYPES = ['VnfPackageOnboardingNotification', 'VnfPackageChangeNotification'] as const;
export type PkgmNotificationType = (typeof PKGM_NOTIFICATION_TYPES)[number];
/** SOL005 9.5.4.6 PackageChangeType */
export type PackageChangeType = 'OP_STATE_CHANGE' | 'PKG_DELETE';

/**
 * The Version header of package notifications: per API major version, the VNF package management
 * notification API of SOL005 V2.6.1 (Tacker's /vnfpkgm/v1) and of V3.7.1 (its OpenAPI info.version).
 */
export const PKGM_NOTIFICATION_API_VERSION: Record<1 | 2, string> = { 1: '1.3.0', 2: '2.4.0' };

const ALTERNATIVES = ['vnfProductsFromProviders', 'vnfdId', 'vnfPkgId'] as const;
const CHANGE_ONLY = ['vnfPkgId', 'operationalState', 'usageState'] as const;

/** SOL005 9.5.3.4 PkgmNotificationsFilter */
export const pkgmNotificationsFilter = z
  .object({
    notificationTypes: nonEmpty(z.enum(PKGM_NOTIFICATION_TYPES)).optional(),
    vnfProductsFromProviders: vnfInstanceSubscriptionFilter.shape.vnfProductsFromProviders,
    vnfdId: nonEmpty(identifier).optional(),
    vnfPkgId: nonEmpty(identifier).optional(),
    operationalState: nonEmpty(z.enum(['ENABLED', 'DISABLED'])).optional(),
    usageState: nonEmpty(z.enum(['IN_USE', 'NOT_IN_USE'])).optional(),
    vnfmInfo: nonEmpty(z.string().min(1)).optional(),
  })
  .strict()
  .refine(
    // NOTE 2: alternative ways to name packages, one per filter.
    (f) => ALTERNATIVES.filter((name) => f[name] !== undefined).length <= 1,
    { message: 'vnfProductsFromProviders, vnfdId and vnfPkgId are alternatives; give at most one', path: ['vnfdId'] },
  )
  .refine((f) => !f.notificationTypes || f.notificationTypes.includes('VnfPackageChangeNotification') || CHANGE_ONLY.every((name) => f[name] === undefined), {
    message: 'vnfPkgId, operationalState and usageState apply only when notificationTypes contains VnfPackageChangeNotification',
    path: ['notificationTypes'],
  });
export type PkgmNotificationsFilter = z.infer<typeof pkgmNotificationsFilter>;

/** SOL005 9.5.2.6 PkgmSubscriptionRequest */
export const pkgmSubscriptionRequest = z
  .object({
    filter: pkgmNotificationsFilter.optional(),
    ...subscriptionRequestFields,
  })
  .strict();
export type PkgmSubscriptionRequest = z.infer<typeof pkgmSubscriptionRequest>;

export interface PkgmSubscriptionRecord extends SubscriptionBase {
  filter?: PkgmNotificationsFilter;
  /** Internal: the API the subscription was made through; its notifications link to the same API. */
  apiMajorVersion: 1 | 2;
  apiRoot: string;
}

export const PKGM_SUBSCRIPTION_ATTRIBUTES = ['id', 'filter', 'callbackUri', '_links'] as const;

/** SOL005 9.5.2.7 PkgmSubscription */
export function renderPkgmSubscription(record: PkgmSubscriptionRecord, version: 1 | 2, baseUrl: string): Record<string, unknown> {
  return {
    id: record.id,
    ...(record.filter ? { filter: record.filter } : {}),
    callbackUri: record.callbackUri,
    _links: { self: { href: `${baseUrl}/vnfpkgm/v${version}/subscriptions/${record.id}` } },
  };
}

let store: SubscriptionStore<PkgmSubscriptionRecord> | undefined;

/** The package subscriptions table (PKGM_SUBSCRIPTIONS_TABLE). */
export function pkgmSubscriptionStore(): SubscriptionStore<PkgmSubscriptionRecord> {
  store ??= new DynamoSubscriptionStore<PkgmSubscriptionRecord>(process.env.PKGM_SUBSCRIPTIONS_TABLE ?? 'PkgmSubscriptionsTable');
  return store;
}

/** The package attributes filters look at, as they were when the change happened. */
export interface PackageSnapshot {
  vnfdId: string;
  vnfProvider: string;
  vnfProductName: string;
  vnfSoftwareVersion: string;
  vnfdVersion: string;
  vnfmInfo: string[];
  operationalState: OperationalState;
  usageState: UsageState;
}

/** A package onboarded, enabled or disabled, or deleted, as queued for the notifier (grouped by package). */
export interface PackageEvent extends FamilyEvent {
  kind: 'pkgm-event';
  notificationType: PkgmNotificationType;
  changeType?: PackageChangeType;
  /** The package (also the FIFO group). */
  vnfPkgId: string;
  package: PackageSnapshot;
}

function snapshot(record: VnfPackageRecord): PackageSnapshot {
  return {
    vnfdId: record.vnfdId ?? '',
    vnfProvider: record.vnfProvider ?? '',
    vnfProductName: record.vnfProductName ?? '',
    vnfSoftwareVersion: record.vnfSoftwareVersion ?? '',
    vnfdVersion: record.vnfdVersion ?? '',
    vnfmInfo: record.vnfmInfo ?? [],
    operationalState: record.operationalState,
    usageState: record.usageState,
  };
}

export function packageEvent(
  record: VnfPackageRecord,
  notificationType: PkgmNotificationType,
  changeType: PackageChangeType | undefined,
  timeStamp: string,
): PackageEvent {
  return {
    kind: 'pkgm-event',
    // One change of one package at one time: a retried write republishes the same id.
    notificationId: stableId(`${record.id}/${notificationType}/${changeType ?? ''}/${record.operationalState}/${timeStamp}`),
    notificationType,
    ...(changeType ? { changeType } : {}),
    tenantId: record.tenantId,
    groupId: record.id,
    timeStamp,
    vnfPkgId: record.id,
    package: snapshot(record),
  };
}

/** SOL005 9.5.3.4: every attribute present must match (AND), an array when one of its values does (OR). */
export function pkgmSubscriptionMatches(filter: PkgmNotificationsFilter | undefined, event: PackageEvent): boolean {
  if (!filter) return true;
  const pkg = event.package;
  if (filter.notificationTypes && !filter.notificationTypes.includes(event.notificationType)) return false;
  if (!instanceMatches({ vnfdIds: filter.vnfdId, vnfProductsFromProviders: filter.vnfProductsFromProviders }, event.vnfPkgId, pkg)) return false;
  if (filter.vnfPkgId && !filter.vnfPkgId.includes(event.vnfPkgId)) return false;
  if (filter.operationalState && !filter.operationalState.includes(pkg.operationalState)) return false;
  if (filter.usageState && !filter.usageState.includes(pkg.usageState)) return false;
  if (filter.vnfmInfo && !filter.vnfmInfo.some((vnfm) => pkg.vnfmInfo.includes(vnfm))) return false;
  return true;
}

/** Renders VnfPackageOnboardingNotification (9.5.2.8) or VnfPackageChangeNotification (9.5.2.9) for one subscription. */
export function renderPackageNotification(
  event: PackageEvent,
  subscription: Pick<PkgmSubscriptionRecord, 'id' | 'apiMajorVersion' | 'apiRoot'>,
): Record<string, unknown> {
  const prefix = `${subscription.apiRoot}/vnfpkgm/v${subscription.apiMajorVersion}`;
  const body: Record<string, unknown> = {
    id: event.notificationId,
    notificationType: event.notificationType,
    subscriptionId: subscription.id,
    timeStamp: event.timeStamp,
    vnfPkgId: event.vnfPkgId,
    vnfdId: event.package.vnfdId,
  };
  if (event.notificationType === 'VnfPackageOnboardingNotification') body.vnfmInfo = event.package.vnfmInfo;
  else {
    body.changeType = event.changeType;
    if (event.changeType === 'OP_STATE_CHANGE') body.operationalState = event.package.operationalState;
  }
  // PkgmLinks requires vnfPackage for every notification, a deleted package's too.
  body._links = {
    vnfPackage: { href: `${prefix}/vnf_packages/${event.vnfPkgId}` },
    subscription: { href: `${prefix}/subscriptions/${subscription.id}` },
  };
  return body;
}

/** How the notifier fans package events out and delivers them. */
export function packageNotificationFamily(
  subscriptions: Pick<SubscriptionStore<PkgmSubscriptionRecord>, 'get' | 'listAll'> = pkgmSubscriptionStore(),
): NotificationFamily<PkgmSubscriptionRecord, PackageEvent> {
  return {
    family: 'vnfpkgm',
    eventKind: 'pkgm-event',
    subscriptions,
    render: (event, subscription) => (pkgmSubscriptionMatches(subscription.filter, event) ? renderPackageNotification(event, subscription) : undefined),
    version: (subscription) => PKGM_NOTIFICATION_API_VERSION[subscription.apiMajorVersion],
  };
}

/** What a package change announces, if anything: onboarding, or a new operationalState of an onboarded package. */
function announced(change: PackageChange): { notificationType: PkgmNotificationType; changeType?: PackageChangeType } | undefined {
  if (change.set?.onboardingState === 'ONBOARDED') return { notificationType: 'VnfPackageOnboardingNotification' };
  const onboardedOnly = change.from.onboardingState?.length === 1 && change.from.onboardingState[0] === 'ONBOARDED';
  if (onboardedOnly && change.set?.operationalState !== undefined && change.set.operationalState !== change.from.operationalState) {
    return { notificationType: 'VnfPackageChangeNotification', changeType: 'OP_STATE_CHANGE' };
  }
  return undefined;
}

/**
 * The package store, announcing through the outbox and the notification queue (as the LCM's stores
 * do) every onboarding, every operationalState change of an onboarded package and every deletion
 * of one, whatever code path makes it. usageState and other onboardingState changes are not
 * announced (SOL005 9.5.2.9).
 */
export class NotifyingPackageStore implements VnfPackageStore {
  constructor(
    private readonly inner: VnfPackageStore,
    private readonly queue: NotificationQueue,
    private readonly now: () => string,
    private readonly outbox: NotificationOutbox,
  ) {}

  put(record: VnfPackageRecord): Promise<void> {
    return this.inner.put(record);
  }

  get(id: string): Promise<VnfPackageRecord | undefined> {
    return this.inner.get(id);
  }

  findByVnfdId(vnfdId: string): Promise<VnfPackageRecord[]> {
    return this.inner.findByVnfdId(vnfdId);
  }

  listPage(scope: TenantScope, limit: number, after?: Record<string, string | number>, plan?: ListPlan): Promise<Page<VnfPackageRecord>> {
    return this.inner.listPage(scope, limit, after, plan);
  }

  acquireUse(id: string): Promise<VnfPackageRecord | undefined> {
    return this.inner.acquireUse(id);
  }

  acquireUseIf(id: string, expected: Readonly<Record<string, string>>): Promise<boolean> {
    return this.inner.acquireUseIf(id, expected);
  }

  releaseUse(id: string): Promise<void> {
    return this.inner.releaseUse(id);
  }

  listOnboarding(): Promise<VnfPackageRecord[]> {
    return this.inner.listOnboarding();
  }

  async change(id: string, change: PackageChange): Promise<VnfPackageRecord | undefined> {
    const what = announced(change);
    const current = what && (await this.inner.get(id));
    if (!what || !current) return this.inner.change(id, change);
    const at = typeof change.set?.stateSince === 'string' && what.changeType === undefined ? change.set.stateSince : this.now();
    const event = packageEvent({ ...current, ...change.set } as VnfPackageRecord, what.notificationType, what.changeType, at);
    const expect = what.changeType ? { exists: true, operationalState: event.package.operationalState } : { exists: true, onboardingState: 'ONBOARDED' };
    return withOutbox(
      this.outbox,
      this.entry(event, expect),
      () => this.inner.change(id, change),
      async (updated) => (updated ? publishAfterWrite(this.queue, [event]) : 'nothing'),
    );
  }

  async deleteUnused(id: string): Promise<boolean> {
    const current = await this.inner.get(id);
    // Only the deletion of an onboarded package is announced.
    if (current?.onboardingState !== 'ONBOARDED') return this.inner.deleteUnused(id);
    const event = packageEvent(current, 'VnfPackageChangeNotification', 'PKG_DELETE', this.now());
    return withOutbox(
      this.outbox,
      this.entry(event, { exists: false }),
      () => this.inner.deleteUnused(id),
      async (deleted) => (deleted ? publishAfterWrite(this.queue, [event]) : 'nothing'),
    );
  }

  /** The event is kept whole: a deleted package could not rebuild it. */
  private entry(event: PackageEvent, expect: OutboxEntry['expect']): OutboxEntry {
    return {
      id: event.notificationId,
      kind: 'package',
      recordId: event.vnfPkgId,
      expect,
      event: event as unknown as Record<string, unknown>,
      createdAt: event.timeStamp,
    };
  }
}

/** The sweep's way back from a package's outbox entry: the kept event, if the package record shows the change happened. */
export function packageOutboxReplay(packages: Pick<VnfPackageStore, 'get'>): OutboxReplay {
  return {
    package: async (entry) => {
      const record = await packages.get(entry.recordId);
      const happened =
        (record !== undefined) === entry.expect.exists &&
        (entry.expect.onboardingState === undefined || record?.onboardingState === entry.expect.onboardingState) &&
        (entry.expect.operationalState === undefined || record?.operationalState === entry.expect.operationalState);
      return happened && entry.event ? (entry.event as unknown as PackageEvent) : undefined;
    },
  };
}

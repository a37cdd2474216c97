// SOL005 9.4.8-9 VNF package management subscriptions (/vnfpkgm/v1 and /v2): create (after testing
// the callback), list, read, delete, for the caller's tenant. The steps every API family shares
// (callback test, credentials in the secret store) come from lib/notify.
import type { ListResult } from '#lib/sol/listing.ts';
import type { Caller } from '#lib/auth/tenancy.ts';
import type { NotifyDeps } from '#lib/notify/ports.ts';
import { createSubscriptionRecord, deleteSubscriptionRecord, listSubscriptionRecords, readSubscriptionRecord } from '#lib/notify/subscriptions.ts';
import type { SubscriptionStore } from '#lib/store/subscriptions.ts';
import {
  PKGM_NOTIFICATION_API_VERSION,
  PKGM_SUBSCRIPTION_ATTRIBUTES,
  renderPkgmSubscription,
  type PkgmSubscriptionRecord,
  type PkgmSubscriptionRequest,
} from './notifications.ts';

export interface PkgmSubscriptionDeps {
  notify: NotifyDeps;
  subscriptions: SubscriptionStore<PkgmSubscriptionRecord>;
}

/**
 * SOL005 9.4.8.3.1: like the LCM subscriptions, every request makes a new subscription (the 303
 * for an identical one is optional and not used).
 */
export function createPkgmSubscription(
  deps: PkgmSubscriptionDeps,
  caller: Caller,
  request: PkgmSubscriptionRequest,
  version: 1 | 2,
  apiRoot: string,
): Promise<PkgmSubscriptionRecord> {
  return createSubscriptionRecord(deps.notify, caller, request, {
    requestName: 'PkgmSubscriptionRequest',
    version: PKGM_NOTIFICATION_API_VERSION[version],
    store: deps.subscriptions,
    build: (base) => ({ ...base, filter: request.filter, apiMajorVersion: version, apiRoot }),
  });
}

export function getPkgmSubscription(deps: PkgmSubscriptionDeps, caller: Caller, id: string): Promise<PkgmSubscriptionRecord> {
  return readSubscriptionRecord(deps.subscriptions, caller, id);
}

export function listPkgmSubscriptions(
  deps: PkgmSubscriptionDeps,
  caller: Caller,
  version: 1 | 2,
  baseUrl: string,
  rawQuery: string,
  pageSize: number,
): Promise<ListResult> {
  return listSubscriptionRecords(
    deps.subscriptions,
    caller,
    {
      resource: `vnfpkgm/v${version}/subscriptions`,
      attributes: PKGM_SUBSCRIPTION_ATTRIBUTES,
      render: (record) => renderPkgmSubscription(record, version, baseUrl),
    },
    rawQuery,
    pageSize,
  );
}

export function deletePkgmSubscription(deps: PkgmSubscriptionDeps, caller: Caller, id: string): Promise<void> {
  return deleteSubscriptionRecord(deps.subscriptions, deps.notify.secrets, caller, id);
}

// SOL003 5.4.18-19 VNF LCM subscriptions (/vnflcm/v1 and /v2): create (after testing the callback),
// list, read, delete, for the caller's tenant. The steps every API family shares (callback test,
// credentials in the secret store, egress policy) come from lib/notify; the LCM request, record and
// representation from notifications.ts.
import type { Caller } from '#lib/auth/tenancy.ts';
import type { NotifyDeps } from '#lib/notify/ports.ts';
import {
  checkNamedInstances,
  createSubscriptionRecord,
  deleteSubscriptionRecord,
  listSubscriptionRecords,
  readSubscriptionRecord,
  type InstanceLookup,
} from '#lib/notify/subscriptions.ts';
import type { ListResult } from '#lib/sol/listing.ts';
import type { ApiMajorVersion } from '#lib/sol/model.ts';
import { SUBSCRIPTION_LIST_INDEXES, type SubscriptionStore } from '#lib/store/subscriptions.ts';
import { DynamoVnfInstanceStore } from '#lib/store/vnf-instances.ts';
import {
  NOTIFICATION_API_VERSION,
  renderSubscription,
  SUBSCRIPTION_ATTRIBUTES,
  type LccnSubscriptionRequest,
  type SubscriptionRecord,
} from './notifications.ts';

/** What VNF LCM subscriptions need: the shared subscription ports and the LCM subscriptions table. */
export interface LcmSubscriptionDeps extends NotifyDeps {
  subscriptions: SubscriptionStore<SubscriptionRecord>;
}

let instanceStore: InstanceLookup | undefined;
const defaultInstances = (): InstanceLookup => (instanceStore ??= new DynamoVnfInstanceStore());

export function createSubscription(
  deps: LcmSubscriptionDeps,
  caller: Caller,
  request: LccnSubscriptionRequest,
  version: ApiMajorVersion,
  apiRoot: string,
  instances: InstanceLookup = defaultInstances(),
): Promise<SubscriptionRecord> {
  return createSubscriptionRecord(deps, caller, request, {
    requestName: 'LccnSubscriptionRequest',
    version: NOTIFICATION_API_VERSION[version],
    store: deps.subscriptions,
    check: () => checkNamedInstances(instances, caller, request.filter?.vnfInstanceSubscriptionFilter),
    build: (base) => ({ ...base, filter: request.filter, verbosity: request.verbosity ?? 'FULL', apiMajorVersion: version, apiRoot }),
  });
}

export function getSubscription(deps: LcmSubscriptionDeps, caller: Caller, id: string): Promise<SubscriptionRecord> {
  return readSubscriptionRecord(deps.subscriptions, caller, id);
}

export function listSubscriptions(
  deps: LcmSubscriptionDeps,
  caller: Caller,
  version: ApiMajorVersion,
  baseUrl: string,
  rawQuery: string,
  pageSize: number,
): Promise<ListResult> {
  return listSubscriptionRecords(
    deps.subscriptions,
    caller,
    {
      resource: `v${version}/subscriptions`,
      attributes: SUBSCRIPTION_ATTRIBUTES,
      render: (record) => renderSubscription(record, version, baseUrl),
      indexes: SUBSCRIPTION_LIST_INDEXES,
    },
    rawQuery,
    pageSize,
  );
}

export function deleteSubscription(deps: LcmSubscriptionDeps, caller: Caller, id: string): Promise<void> {
  return deleteSubscriptionRecord(deps.subscriptions, deps.secrets, caller, id);
}

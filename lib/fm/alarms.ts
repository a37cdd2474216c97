// SOL003 7.4.2-3 alarms (list, read, acknowledge) and 7.4.4-5 FM subscriptions, for the caller's
// tenant. FM subscriptions go through the subscription steps every API family shares (callback
// test, credentials in the secret store, egress policy); only their filter and notifications
// (notifications.ts) differ.
import { listCollection, type ListResult } from '#lib/sol/listing.ts';
import { canSee, listScope, type Caller } from '#lib/auth/tenancy.ts';
import {
  checkNamedInstances,
  createSubscriptionRecord,
  deleteSubscriptionRecord,
  listSubscriptionRecords,
  readSubscriptionRecord,
} from '#lib/notify/subscriptions.ts';
import { ConflictError, NotFoundError } from '#lib/sol/errors.ts';
import { ALARM_LIST_INDEXES, alarmListKey } from '#lib/store/alarms.ts';
import { SUBSCRIPTION_LIST_INDEXES } from '#lib/store/subscriptions.ts';
import type { FmDeps } from '#lib/fm/ports.ts';
import {
  ALARM_ATTRIBUTES,
  FM_NOTIFICATION_API_VERSION,
  FM_SUBSCRIPTION_ATTRIBUTES,
  renderAlarm,
  renderFmSubscription,
  type AckState,
  type AlarmRecord,
  type FmSubscriptionRecord,
  type FmSubscriptionRequest,
} from './model.ts';

export function listAlarms(deps: FmDeps, caller: Caller, baseUrl: string, rawQuery: string, pageSize: number): Promise<ListResult> {
  return listCollection(
    {
      resource: 'vnffm/alarms',
      attributes: ALARM_ATTRIBUTES,
      defaultExcluded: [],
      alwaysIncluded: ['id', '_links'],
      scope: listScope(caller),
      indexes: ALARM_LIST_INDEXES,
      fetch: (scope, limit, after, plan) => deps.alarms.listPage(scope, limit, after, plan),
      render: (record) => renderAlarm(record, baseUrl),
      keyOf: alarmListKey,
    },
    rawQuery,
    pageSize,
  );
}

export async function getAlarm(deps: FmDeps, caller: Caller, id: string): Promise<AlarmRecord> {
  const record = await deps.alarms.get(id);
  // Only alarms have a tenant: the health sweep's lease, kept in the same table, is no alarm to anyone.
  if (!record?.tenantId || !canSee(caller, record.tenantId)) throw new NotFoundError(`Alarm ${id} does not exist`);
  return record;
}

/** SOL003 7.4.3.3.4: 409 when the alarm already is in the requested ackState. */
export async function acknowledgeAlarm(deps: FmDeps, caller: Caller, id: string, ackState: AckState): Promise<AlarmRecord> {
  const current = await getAlarm(deps, caller, id);
  if (current.ackState === ackState) throw new ConflictError(`Alarm ${id} is already ${ackState}`);
  const updated = await deps.alarms.acknowledge(id, ackState, deps.now());
  if (!updated) throw new ConflictError(`Alarm ${id} is already ${ackState}`);
  return updated;
}

export function createFmSubscription(deps: FmDeps, caller: Caller, request: FmSubscriptionRequest, apiRoot: string): Promise<FmSubscriptionRecord> {
  return createSubscriptionRecord(deps.notify, caller, request, {
    requestName: 'FmSubscriptionRequest',
    version: FM_NOTIFICATION_API_VERSION,
    store: deps.notify.fmSubscriptions,
    check: () => checkNamedInstances(deps.lcm.instances, caller, request.filter?.vnfInstanceSubscriptionFilter),
    build: (base) => ({ ...base, filter: request.filter, apiRoot }),
  });
}

export function getFmSubscription(deps: FmDeps, caller: Caller, id: string): Promise<FmSubscriptionRecord> {
  return readSubscriptionRecord(deps.notify.fmSubscriptions, caller, id);
}

export function listFmSubscriptions(deps: FmDeps, caller: Caller, baseUrl: string, rawQuery: string, pageSize: number): Promise<ListResult> {
  return listSubscriptionRecords(
    deps.notify.fmSubscriptions,
    caller,
    {
      resource: 'vnffm/subscriptions',
      attributes: FM_SUBSCRIPTION_ATTRIBUTES,
      render: (record) => renderFmSubscription(record, baseUrl),
      indexes: SUBSCRIPTION_LIST_INDEXES,
    },
    rawQuery,
    pageSize,
  );
}

export function deleteFmSubscription(deps: FmDeps, caller: Caller, id: string): Promise<void> {
  return deleteSubscriptionRecord(deps.notify.fmSubscriptions, deps.notify.secrets, caller, id);
}

// SOL003 7.4.2-3 alarms (list, read, acknowledge) and 7.4.4-5 FM subscriptions, for the caller's
// tenant. FM subscriptions go through the LCM subscription machinery (callback test, credentials
// in the secret store, egress policy); only their filter and notifications differ.
import { listCollection, type ListResult } from '#lib/lcm/listing.ts';
import { canSee, listScope, type Caller } from '#lib/lcm/vnf-instances.ts';
import { log } from '#lib/log.ts';
import { checkNamedInstances, chooseAuth, testCallback } from '#lib/notify/subscriptions.ts';
import { EgressDeniedError, parseEgressUrl } from '#lib/egress.ts';
import { BadRequestError, ConflictError, NotFoundError } from '#lib/sol/errors.ts';
import { alarmListKey } from '#lib/store/alarms.ts';
import { subscriptionListKey } from '#lib/store/subscriptions.ts';
import type { FmDeps } from './deps.ts';
import {
  ALARM_ATTRIBUTES, FM_NOTIFICATION_API_VERSION, FM_SUBSCRIPTION_ATTRIBUTES, renderAlarm, renderFmSubscription,
  type AckState, type AlarmRecord, type FmSubscriptionRecord, type FmSubscriptionRequest,
} from './model.ts';

export function listAlarms(deps: FmDeps, caller: Caller, baseUrl: string, rawQuery: string, pageSize: number): Promise<ListResult> {
  return listCollection({
    resource: 'vnffm/alarms',
    attributes: ALARM_ATTRIBUTES,
    defaultExcluded: [],
    alwaysIncluded: ['id', '_links'],
    scope: listScope(caller),
    fetch: (scope, limit, after) => deps.alarms.listPage(scope, limit, after),
    render: (record) => renderAlarm(record, baseUrl),
    keyOf: alarmListKey,
  }, rawQuery, pageSize);
}

export async function getAlarm(deps: FmDeps, caller: Caller, id: string): Promise<AlarmRecord> {
  const record = await deps.alarms.get(id);
  if (!record || !canSee(caller, record.tenantId)) throw new NotFoundError(`Alarm ${id} does not exist`);
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

export async function createFmSubscription(deps: FmDeps, caller: Caller, request: FmSubscriptionRequest, apiRoot: string): Promise<FmSubscriptionRecord> {
  try {
    parseEgressUrl(request.callbackUri);
  } catch (error) {
    throw new BadRequestError(`Invalid FmSubscriptionRequest: callbackUri: ${(error as EgressDeniedError).reason}`);
  }
  const auth = chooseAuth(request.authentication);
  await checkNamedInstances(deps.lcm.instances, caller, request.filter?.vnfInstanceSubscriptionFilter);
  await testCallback(deps.notify, request.callbackUri, auth, FM_NOTIFICATION_API_VERSION);
  const id = deps.newId();
  const now = deps.now();
  const authSecret = auth ? await deps.notify.secrets.create(`subscriptions/${id}`, auth) : undefined;
  const record: FmSubscriptionRecord = {
    id, tenantId: caller.tenantId, createdAt: now, createdSeq: `${now}#${id}`,
    callbackUri: request.callbackUri, filter: request.filter, apiRoot, authSecret, revision: 1,
  };
  try {
    await deps.notify.fmSubscriptions.create(record);
  } catch (error) {
    if (authSecret) await deps.notify.secrets.remove(authSecret).catch(() => undefined);
    throw error;
  }
  return record;
}

export async function getFmSubscription(deps: FmDeps, caller: Caller, id: string): Promise<FmSubscriptionRecord> {
  const record = await deps.notify.fmSubscriptions.get(id);
  if (!record || !canSee(caller, record.tenantId)) throw new NotFoundError(`Subscription ${id} does not exist`);
  return record;
}

export function listFmSubscriptions(deps: FmDeps, caller: Caller, baseUrl: string, rawQuery: string, pageSize: number): Promise<ListResult> {
  return listCollection({
    resource: 'vnffm/subscriptions',
    attributes: FM_SUBSCRIPTION_ATTRIBUTES,
    defaultExcluded: [],
    alwaysIncluded: ['id', '_links'],
    scope: listScope(caller),
    fetch: (scope, limit, after) => deps.notify.fmSubscriptions.listPage(scope, limit, after),
    render: (record) => renderFmSubscription(record, baseUrl),
    keyOf: subscriptionListKey,
  }, rawQuery, pageSize);
}

export async function deleteFmSubscription(deps: FmDeps, caller: Caller, id: string): Promise<void> {
  await getFmSubscription(deps, caller, id);
  const deleted = await deps.notify.fmSubscriptions.delete(id);
  if (!deleted) throw new NotFoundError(`Subscription ${id} does not exist`);
  if (deleted.authSecret) {
    await deps.notify.secrets.remove(deleted.authSecret).catch((error: unknown) => log.warn('could not remove a deleted FM subscription\'s secret', { subscriptionId: id, error }));
  }
}

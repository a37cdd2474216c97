// The checks PM job and threshold requests share: the measured VNF instances are the caller's own
// and INSTANTIATED, the metrics are known and fit the object type, the sub-objects exist; and the
// merge patch of a job's or threshold's notification target (callback tested again, credentials
// replaced in the secret store, never shown).
import { type EgressDeniedError, parseEgressUrl } from '#lib/egress.ts';
import type { Caller } from '#lib/auth/tenancy.ts';
import type { NotificationAuth } from '#lib/notify/model.ts';
import { chooseAuth, testCallback } from '#lib/notify/subscriptions.ts';
import { BadRequestError, NotFoundError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { VnfInstanceRecord } from '#lib/sol/model.ts';
import type { NotificationTargetChange } from '#lib/store/pm.ts';
import { log } from '#lib/log.ts';
import type { PmDeps } from './ports.ts';
import {
  groupMetrics,
  parseMetric,
  PM_NOTIFICATION_API_VERSION,
  subObjectKind,
  type MetricName,
  type NotificationModifications,
  type ObjectType,
} from './model.ts';
import { subObjectsOf } from './targets.ts';

/**
 * The VNF instances a job or threshold measures: each must be the caller's tenant's (any other id,
 * another tenant's or none at all, gets the same 422, so nothing tells whether it exists) and
 * INSTANTIATED (there is nothing to measure otherwise).
 */
export async function measuredInstances(deps: PmDeps, caller: Caller, ids: string[], attribute: string): Promise<VnfInstanceRecord[]> {
  const found: VnfInstanceRecord[] = [];
  for (const id of new Set(ids)) {
    const instance = await deps.instances.get(id);
    if (instance?.tenantId !== caller.tenantId) throw new UnprocessableEntityError(`${attribute}: no such VNF instance ${id}`);
    if (instance.instantiationState !== 'INSTANTIATED')
      throw new UnprocessableEntityError(
        `${attribute}: VNF instance ${id} is ${instance.instantiationState}; only an INSTANTIATED VNF instance can be measured`,
      );
    found.push(instance);
  }
  return found;
}

/** A metric the object type can be measured by, limited (when suffixed) to one of the measured instances. */
export function checkedMetric(requested: string, objectType: ObjectType, instanceIds: string[], attribute: string): MetricName {
  const metric = parseMetric(requested);
  if (!metric) throw new UnprocessableEntityError(`${attribute}: "${requested}" is not a performance metric this VNFM collects (SOL003 7.4)`);
  if (!metric.measurement.objectTypes.includes(objectType))
    throw new UnprocessableEntityError(
      `${attribute}: ${metric.name} measures objects of type ${metric.measurement.objectTypes.join(' or ')}, not ${objectType}`,
    );
  if (metric.vnfInstanceId && !instanceIds.includes(metric.vnfInstanceId))
    throw new UnprocessableEntityError(`${attribute}: ${requested} names VNF instance ${metric.vnfInstanceId}, which is not measured here`);
  return metric;
}

/** The metrics of PmJobCriteria, groups expanded; a group that does not exist or does not fit the object type is a 422. */
export function checkedJobMetrics(
  criteria: { performanceMetric?: string[]; performanceMetricGroup?: string[] },
  objectType: ObjectType,
  instanceIds: string[],
): MetricName[] {
  const metrics = (criteria.performanceMetric ?? []).map((name) => checkedMetric(name, objectType, instanceIds, 'criteria.performanceMetric'));
  for (const group of criteria.performanceMetricGroup ?? []) {
    const names = groupMetrics(group);
    if (!names) throw new UnprocessableEntityError(`criteria.performanceMetricGroup: "${group}" is not a metric group this VNFM collects (SOL003 7.4)`);
    const fitting = names.map(parseMetric).filter((m): m is MetricName => m?.measurement.objectTypes.includes(objectType) === true);
    if (fitting.length === 0) throw new UnprocessableEntityError(`criteria.performanceMetricGroup: ${group} has no metric of objects of type ${objectType}`);
    metrics.push(...fitting);
  }
  return metrics;
}

/** Sub-objects named in a request must be ones the (single) measured instance has, of the object type's kind. */
export function checkSubObjects(instance: VnfInstanceRecord, objectType: ObjectType, ids: string[] | undefined): void {
  if (!ids) return;
  const kind = subObjectKind(objectType);
  const known = subObjectsOf(instance, kind);
  const what = kind === 'vnfc' ? 'VNFC' : kind === 'intCp' ? 'internal connection point' : 'external connection point';
  for (const id of ids) if (!known.has(id)) throw new UnprocessableEntityError(`subObjectInstanceIds: VNF instance ${instance.id} has no ${what} ${id}`);
}

/**
 * SOL003 6.4.3.3.4 / 6.4.6.3.4 PATCH of a job's or threshold's notification target: a new
 * callbackUri is tested (GET, 204) with the authentication it will have; new credentials go to the
 * secret store under a new name (a warm notifier keeps the ones it read by name), `authentication:
 * null` removes them. Returns the modifications as applied (authentication is never shown).
 */
export async function modifyNotificationTarget(
  deps: PmDeps,
  store: { modify(id: string, change: NotificationTargetChange): Promise<unknown> },
  current: { id: string; callbackUri: string; authSecret?: string },
  modifications: NotificationModifications,
  what: string,
): Promise<Record<string, unknown>> {
  if (modifications.callbackUri !== undefined) {
    try {
      parseEgressUrl(modifications.callbackUri);
    } catch (error) {
      throw new BadRequestError(`callbackUri: ${(error as EgressDeniedError).reason}`);
    }
  }
  let auth: NotificationAuth | undefined;
  if (modifications.authentication === undefined) {
    auth = current.authSecret ? ((await deps.notify.secrets.read(current.authSecret)) as unknown as NotificationAuth) : undefined;
  } else if (modifications.authentication !== null) {
    auth = chooseAuth(modifications.authentication);
  }
  const callbackUri = modifications.callbackUri ?? current.callbackUri;
  if (modifications.callbackUri !== undefined || modifications.authentication) await testCallback(deps.notify, callbackUri, auth, PM_NOTIFICATION_API_VERSION);
  const change: NotificationTargetChange = modifications.callbackUri !== undefined ? { callbackUri } : {};
  let created: string | undefined;
  if (modifications.authentication === null) change.authSecret = null;
  else if (modifications.authentication && auth) {
    created = await deps.notify.secrets.create(`subscriptions/${current.id}-${deps.notify.newId()}`, auth);
    change.authSecret = created;
  }
  if (!(await store.modify(current.id, change))) {
    await removeSecret(deps, created, what);
    throw new NotFoundError(`${what} does not exist`);
  }
  if (change.authSecret !== undefined) await removeSecret(deps, current.authSecret, what);
  return modifications.callbackUri !== undefined ? { callbackUri: modifications.callbackUri } : {};
}

/** Deletes a job or threshold and its notification credentials: nothing is collected or sent for it any more. */
export async function deleteNotificationTarget(
  deps: PmDeps,
  store: { delete(id: string): Promise<{ authSecret?: string } | undefined> },
  id: string,
  what: string,
): Promise<void> {
  const deleted = await store.delete(id);
  if (!deleted) throw new NotFoundError(`${what} does not exist`);
  await removeSecret(deps, deleted.authSecret, what);
}

/** Removes a secret nothing refers to any more; a failure only leaves it behind. */
async function removeSecret(deps: PmDeps, secret: string | undefined, what: string): Promise<void> {
  if (!secret) return;
  await deps.notify.secrets.remove(secret).catch((error: unknown) => log.warn(`could not remove the secret of ${what}`, { error }));
}

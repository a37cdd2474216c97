// SOL003 6.4.5-6 thresholds (create after testing the callback, list, read, modify, delete) for the
// caller's tenant. The collector (collector.ts) evaluates every threshold at each of its sweeps.
import { canSee, listScope, type Caller } from '#lib/auth/tenancy.ts';
import { createSubscriptionRecord } from '#lib/notify/subscriptions.ts';
import { NotFoundError } from '#lib/sol/errors.ts';
import { listCollection, type ListResult } from '#lib/sol/listing.ts';
import { pmListKey } from '#lib/store/pm.ts';
import type { PmDeps } from './ports.ts';
import {
  PM_NOTIFICATION_API_VERSION,
  renderThreshold,
  THRESHOLD_ATTRIBUTES,
  type CreateThresholdRequest,
  type NotificationModifications,
  type ThresholdRecord,
} from './model.ts';
import { checkedMetric, checkSubObjects, measuredInstances, deleteNotificationTarget, modifyNotificationTarget } from './requests.ts';

export function createThreshold(deps: PmDeps, caller: Caller, request: CreateThresholdRequest, apiRoot: string): Promise<ThresholdRecord> {
  return createSubscriptionRecord(deps.notify, caller, request, {
    requestName: 'CreateThresholdRequest',
    version: PM_NOTIFICATION_API_VERSION,
    store: deps.thresholds,
    check: async () => {
      checkedMetric(request.criteria.performanceMetric, request.objectType, [request.objectInstanceId], 'criteria.performanceMetric');
      const [instance] = await measuredInstances(deps, caller, [request.objectInstanceId], 'objectInstanceId');
      if (instance) checkSubObjects(instance, request.objectType, request.subObjectInstanceIds);
    },
    build: (base) => ({
      ...base,
      objectType: request.objectType,
      objectInstanceId: request.objectInstanceId,
      ...(request.subObjectInstanceIds ? { subObjectInstanceIds: request.subObjectInstanceIds } : {}),
      criteria: request.criteria,
      ...(request.autoScale ? { autoScale: request.autoScale } : {}),
      apiRoot,
      crossings: {},
    }),
  });
}

export async function getThreshold(deps: PmDeps, caller: Caller, id: string): Promise<ThresholdRecord> {
  const record = await deps.thresholds.get(id);
  if (!record?.tenantId || !canSee(caller, record.tenantId)) throw new NotFoundError(`Threshold ${id} does not exist`);
  return record;
}

export function listThresholds(deps: PmDeps, caller: Caller, baseUrl: string, rawQuery: string, pageSize: number): Promise<ListResult> {
  return listCollection(
    {
      resource: 'vnfpm/thresholds',
      attributes: THRESHOLD_ATTRIBUTES,
      defaultExcluded: [],
      alwaysIncluded: ['id', '_links'],
      scope: listScope(caller),
      fetch: (scope, limit, after) => deps.thresholds.listPage(scope, limit, after),
      render: (record) => renderThreshold(record, baseUrl),
      keyOf: (record) => pmListKey(record),
    },
    rawQuery,
    pageSize,
  );
}

/** SOL003 6.4.6.3.4: returns the modifications as applied (authentication never shown). */
export async function modifyThreshold(deps: PmDeps, caller: Caller, id: string, modifications: NotificationModifications): Promise<Record<string, unknown>> {
  return modifyNotificationTarget(deps, deps.thresholds, await getThreshold(deps, caller, id), modifications, `Threshold ${id}`);
}

/** SOL003 6.4.6.3.5: the threshold is no longer evaluated. */
export async function deleteThreshold(deps: PmDeps, caller: Caller, id: string): Promise<void> {
  await getThreshold(deps, caller, id);
  await deleteNotificationTarget(deps, deps.thresholds, id, `Threshold ${id}`);
}

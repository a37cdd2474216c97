// SOL003 6.4.2-4 PM jobs (create after testing the callback, list, read, modify, delete) and their
// performance reports, for the caller's tenant. A job's notification credentials go to the secret
// store like a subscription's (lib/notify/subscriptions.ts) and are never shown.
import { canSee, listScope, type Caller } from '#lib/auth/tenancy.ts';
import { createSubscriptionRecord } from '#lib/notify/subscriptions.ts';
import { NotFoundError } from '#lib/sol/errors.ts';
import { listCollection, type ListResult } from '#lib/sol/listing.ts';
import { pmListKey } from '#lib/store/pm.ts';
import type { PmDeps } from './ports.ts';
import {
  PM_JOB_ATTRIBUTES,
  PM_JOB_DEFAULT_EXCLUDED,
  PM_NOTIFICATION_API_VERSION,
  renderPmJob,
  type CreatePmJobRequest,
  type NotificationModifications,
  type PmJobRecord,
  type PmReportRecord,
} from './model.ts';
import { checkedJobMetrics, checkSubObjects, measuredInstances, deleteNotificationTarget, modifyNotificationTarget } from './requests.ts';

export function createPmJob(deps: PmDeps, caller: Caller, request: CreatePmJobRequest, apiRoot: string): Promise<PmJobRecord> {
  return createSubscriptionRecord(deps.notify, caller, request, {
    requestName: 'CreatePmJobRequest',
    version: PM_NOTIFICATION_API_VERSION,
    store: deps.jobs,
    check: async () => {
      checkedJobMetrics(request.criteria, request.objectType, request.objectInstanceIds);
      const instances = await measuredInstances(deps, caller, request.objectInstanceIds, 'objectInstanceIds');
      if (instances[0]) checkSubObjects(instances[0], request.objectType, request.subObjectInstanceIds);
    },
    build: (base) => ({
      ...base,
      objectType: request.objectType,
      objectInstanceIds: request.objectInstanceIds,
      ...(request.subObjectInstanceIds ? { subObjectInstanceIds: request.subObjectInstanceIds } : {}),
      criteria: request.criteria,
      apiRoot,
      reports: [],
      period: { collections: 0, usage: {}, growth: {} },
      counters: {},
      // The first collection is the collector's next sweep.
      due: 'Y',
      nextCollectionAt: base.createdAt,
    }),
  });
}

export async function getPmJob(deps: PmDeps, caller: Caller, id: string): Promise<PmJobRecord> {
  const record = await deps.jobs.get(id);
  if (!record || !canSee(caller, record.tenantId)) throw new NotFoundError(`PM job ${id} does not exist`);
  return record;
}

export function listPmJobs(deps: PmDeps, caller: Caller, baseUrl: string, rawQuery: string, pageSize: number): Promise<ListResult> {
  return listCollection(
    {
      resource: 'vnfpm/pm_jobs',
      attributes: PM_JOB_ATTRIBUTES,
      defaultExcluded: PM_JOB_DEFAULT_EXCLUDED,
      alwaysIncluded: ['id', '_links'],
      scope: listScope(caller),
      fetch: (scope, limit, after) => deps.jobs.listPage(scope, limit, after),
      render: (record) => renderPmJob(record, baseUrl),
      keyOf: (record) => pmListKey(record),
    },
    rawQuery,
    pageSize,
  );
}

/** SOL003 6.4.3.3.4: returns the modifications as applied (authentication never shown). */
export async function modifyPmJob(deps: PmDeps, caller: Caller, id: string, modifications: NotificationModifications): Promise<Record<string, unknown>> {
  return modifyNotificationTarget(deps, deps.jobs, await getPmJob(deps, caller, id), modifications, `PM job ${id}`);
}

/** SOL003 6.4.3.3.5: the job stops collecting and reporting; its reports go with it. */
export async function deletePmJob(deps: PmDeps, caller: Caller, id: string): Promise<void> {
  await getPmJob(deps, caller, id);
  await deleteNotificationTarget(deps, deps.jobs, id, `PM job ${id}`);
}

/** SOL003 6.4.4.3.2: a report of the caller's job, while it is available. */
export async function getPmReport(deps: PmDeps, caller: Caller, jobId: string, reportId: string): Promise<PmReportRecord> {
  const job = await getPmJob(deps, caller, jobId);
  const report = job.reports.some((ref) => ref.id === reportId) ? await deps.jobs.getReport(jobId, reportId) : undefined;
  if (!report) throw new NotFoundError(`PM job ${jobId} has no report ${reportId}`);
  return report;
}

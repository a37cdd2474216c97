// API function for SOL003 VNF performance management (/vnfpm/v2): PM jobs (create after testing the
// callback, list, read, modify, delete), their performance reports, and thresholds (likewise).
import { pmDeps } from '#lib/deps.ts';
import { createPmJob, deletePmJob, getPmJob, getPmReport, listPmJobs, modifyPmJob } from '#lib/pm/jobs.ts';
import { createPmJobRequest, createThresholdRequest, notificationModifications, renderPmJob, renderReport, renderThreshold } from '#lib/pm/model.ts';
import { pmWebhookReceived } from '#lib/pm/webhooks.ts';
import { createThreshold, deleteThreshold, getThreshold, listThresholds, modifyThreshold } from '#lib/pm/thresholds.ts';
import { created, httpApi, pagedList, pageSize, route, type RouteTable } from './common/http.ts';

export const routes: RouteTable = {
  // Tacker's Alertmanager webhooks (its prometheus plugin): measurements for PM jobs and thresholds.
  '/pm_event': {
    POST: {
      handler: async (request) => {
        await pmWebhookReceived(pmDeps(), request.caller, request.body, 'pm_event');
        return { status: 204 };
      },
    },
  },
  '/pm_threshold': {
    POST: {
      handler: async (request) => {
        await pmWebhookReceived(pmDeps(), request.caller, request.body, 'pm_threshold');
        return { status: 204 };
      },
    },
  },
  '/vnfpm/v2/pm_jobs': {
    POST: route({
      schema: createPmJobRequest,
      title: 'CreatePmJobRequest',
      handler: async (request) => created(renderPmJob(await createPmJob(pmDeps(), request.caller, request.body, request.baseUrl), request.baseUrl)),
    }),
    GET: {
      handler: async (request) =>
        pagedList(await listPmJobs(pmDeps(), request.caller, request.baseUrl, request.rawQuery, pageSize()), `${request.baseUrl}/vnfpm/v2/pm_jobs`),
    },
  },
  '/vnfpm/v2/pm_jobs/{pmJobId}': {
    GET: {
      handler: async (request) => ({ status: 200, body: renderPmJob(await getPmJob(pmDeps(), request.caller, request.params.pmJobId ?? ''), request.baseUrl) }),
    },
    PATCH: route({
      schema: notificationModifications,
      title: 'PmJobModifications',
      handler: async (request) => ({ status: 200, body: await modifyPmJob(pmDeps(), request.caller, request.params.pmJobId ?? '', request.body) }),
    }),
    DELETE: {
      handler: async (request) => {
        await deletePmJob(pmDeps(), request.caller, request.params.pmJobId ?? '');
        return { status: 204 };
      },
    },
  },
  '/vnfpm/v2/pm_jobs/{pmJobId}/reports/{reportId}': {
    GET: {
      handler: async (request) => ({
        status: 200,
        body: renderReport(await getPmReport(pmDeps(), request.caller, request.params.pmJobId ?? '', request.params.reportId ?? '')),
      }),
    },
  },
  '/vnfpm/v2/thresholds': {
    POST: route({
      schema: createThresholdRequest,
      title: 'CreateThresholdRequest',
      handler: async (request) => created(renderThreshold(await createThreshold(pmDeps(), request.caller, request.body, request.baseUrl), request.baseUrl)),
    }),
    GET: {
      handler: async (request) =>
        pagedList(await listThresholds(pmDeps(), request.caller, request.baseUrl, request.rawQuery, pageSize()), `${request.baseUrl}/vnfpm/v2/thresholds`),
    },
  },
  '/vnfpm/v2/thresholds/{thresholdId}': {
    GET: {
      handler: async (request) => ({
        status: 200,
        body: renderThreshold(await getThreshold(pmDeps(), request.caller, request.params.thresholdId ?? ''), request.baseUrl),
      }),
    },
    PATCH: route({
      schema: notificationModifications,
      title: 'ThresholdModifications',
      handler: async (request) => ({ status: 200, body: await modifyThreshold(pmDeps(), request.caller, request.params.thresholdId ?? '', request.body) }),
    }),
    DELETE: {
      handler: async (request) => {
        await deleteThreshold(pmDeps(), request.caller, request.params.thresholdId ?? '');
        return { status: 204 };
      },
    },
  },
};

export const handler = httpApi(routes);

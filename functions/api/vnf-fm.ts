// API function for SOL003 VNF fault management (/vnffm/v1): alarms (list, read, acknowledge) and
// FM subscriptions (create after testing the callback, list, read, delete).
// X-Ray subsegments for its invocations and AWS SDK calls (lib/trace.ts; not every function has room for it).
import '#lib/trace.ts';
import { fmDeps } from '#lib/deps.ts';
import { acknowledgeAlarm, createFmSubscription, deleteFmSubscription, getAlarm, getFmSubscription, listAlarms, listFmSubscriptions } from '#lib/fm/alarms.ts';
import { alarmModifications, fmSubscriptionRequest, renderAlarm, renderFmSubscription } from '#lib/fm/model.ts';
import { httpApi, pagedList, pageSize, route, type RouteTable } from './common/http.ts';

export const routes: RouteTable = {
  '/vnffm/v1/alarms': {
    GET: {
      handler: async (request) =>
        pagedList(await listAlarms(fmDeps(), request.caller, request.baseUrl, request.rawQuery, pageSize()), `${request.baseUrl}/vnffm/v1/alarms`),
    },
  },
  '/vnffm/v1/alarms/{alarmId}': {
    GET: {
      handler: async (request) => ({ status: 200, body: renderAlarm(await getAlarm(fmDeps(), request.caller, request.params.alarmId ?? ''), request.baseUrl) }),
    },
    PATCH: route({
      schema: alarmModifications,
      title: 'AlarmModifications',
      handler: async (request) => {
        await acknowledgeAlarm(fmDeps(), request.caller, request.params.alarmId ?? '', request.body.ackState);
        // SOL003 7.4.3.3.4: 200 with the AlarmModifications applied.
        return { status: 200, body: { ackState: request.body.ackState } };
      },
    }),
  },
  '/vnffm/v1/subscriptions': {
    POST: route({
      schema: fmSubscriptionRequest,
      title: 'FmSubscriptionRequest',
      handler: async (request) => {
        const record = await createFmSubscription(fmDeps(), request.caller, request.body, request.baseUrl);
        const representation = renderFmSubscription(record, request.baseUrl);
        return { status: 201, body: representation, headers: { Location: `${request.baseUrl}/vnffm/v1/subscriptions/${record.id}` } };
      },
    }),
    GET: {
      handler: async (request) =>
        pagedList(
          await listFmSubscriptions(fmDeps(), request.caller, request.baseUrl, request.rawQuery, pageSize()),
          `${request.baseUrl}/vnffm/v1/subscriptions`,
        ),
    },
  },
  '/vnffm/v1/subscriptions/{subscriptionId}': {
    GET: {
      handler: async (request) => ({
        status: 200,
        body: renderFmSubscription(await getFmSubscription(fmDeps(), request.caller, request.params.subscriptionId ?? ''), request.baseUrl),
      }),
    },
    DELETE: {
      handler: async (request) => {
        await deleteFmSubscription(fmDeps(), request.caller, request.params.subscriptionId ?? '');
        return { status: 204 };
      },
    },
  },
};

export const handler = httpApi(routes);

// API function for the SOL003 "Subscriptions" and "Individual subscription" resources
// (/vnflcm/v1 and /vnflcm/v2).
// X-Ray subsegments for its invocations and AWS SDK calls (lib/trace.ts; not every function has room for it).
import '#lib/trace.ts';
import { notifyDeps } from '#lib/deps.ts';
import { lccnSubscriptionRequest, renderSubscription } from '#lib/lcm/notifications.ts';
import { createSubscription, deleteSubscription, getSubscription, listSubscriptions } from '#lib/lcm/subscriptions.ts';
import { bothVersions, created, httpApi, pagedList, pageSize, route, type ApiRequest, type RouteTable } from './common/http.ts';

const version = (request: ApiRequest) => request.apiMajorVersion ?? 2;
const subscriptionId = (request: ApiRequest) => request.params.subscriptionId ?? '';

export const routes: RouteTable = {
  ...bothVersions('/subscriptions', {
    POST: route({
      schema: lccnSubscriptionRequest,
      title: 'LccnSubscriptionRequest',
      handler: async (request) => {
        const record = await createSubscription(notifyDeps(), request.caller, request.body, version(request), request.baseUrl);
        return created(renderSubscription(record, version(request), request.baseUrl));
      },
    }),
    GET: {
      handler: async (request) => {
        const page = await listSubscriptions(notifyDeps(), request.caller, version(request), request.baseUrl, request.rawQuery, pageSize());
        return pagedList(page, `${request.baseUrl}/vnflcm/v${version(request)}/subscriptions`);
      },
    },
  }),
  ...bothVersions('/subscriptions/{subscriptionId}', {
    GET: {
      handler: async (request) => {
        const record = await getSubscription(notifyDeps(), request.caller, subscriptionId(request));
        return { status: 200, body: renderSubscription(record, version(request), request.baseUrl) };
      },
    },
    DELETE: {
      handler: async (request) => {
        await deleteSubscription(notifyDeps(), request.caller, subscriptionId(request));
        return { status: 204 };
      },
    },
  }),
};

export const handler = httpApi(routes);

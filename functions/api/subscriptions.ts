// API function for the SOL003 "Subscriptions" and "Individual subscription" resources
// (/vnflcm/v1 and /vnflcm/v2).
import { notifyDeps } from '#lib/deps.ts';
import { lccnSubscriptionRequest, renderSubscription } from '#lib/lcm/notifications.ts';
import { createSubscription, deleteSubscription, getSubscription, listSubscriptions } from '#lib/lcm/subscriptions.ts';
import { parseRequest } from '#lib/sol/requests.ts';
import { bothVersions, httpApi, pagedList, pageSize, type ApiRequest } from './common/http.ts';

const version = (request: ApiRequest) => request.apiMajorVersion ?? 2;
const subscriptionId = (request: ApiRequest) => request.params.subscriptionId ?? '';

export const handler = httpApi({
  ...bothVersions('/subscriptions', {
    POST: async (request) => {
      const body = parseRequest(lccnSubscriptionRequest, request.body, 'LccnSubscriptionRequest');
      const record = await createSubscription(notifyDeps(), request.caller, body, version(request), request.baseUrl);
      const representation = renderSubscription(record, version(request), request.baseUrl);
      return { status: 201, body: representation, headers: { Location: (representation._links as { self: { href: string } }).self.href } };
    },
    GET: async (request) => {
      const page = await listSubscriptions(notifyDeps(), request.caller, version(request), request.baseUrl, request.rawQuery, pageSize());
      return pagedList(page, `${request.baseUrl}/vnflcm/v${version(request)}/subscriptions`);
    },
  }),
  ...bothVersions('/subscriptions/{subscriptionId}', {
    GET: async (request) => {
      const record = await getSubscription(notifyDeps(), request.caller, subscriptionId(request));
      return { status: 200, body: renderSubscription(record, version(request), request.baseUrl) };
    },
    DELETE: async (request) => {
      await deleteSubscription(notifyDeps(), request.caller, subscriptionId(request));
      return { status: 204 };
    },
  }),
});

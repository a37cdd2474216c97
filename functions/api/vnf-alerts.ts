// API function for Tacker's external fault triggers: Prometheus Alertmanager webhooks
// (/alert/auto_healing, /alert/auto_scaling) and the v1 server notification
// (/server_notification/vnf_instances/{id}/servers/{serverId}/notify). 204 when read.
// The payloads are checked by lib/fm/alerts.ts (one webhook envelope around two alert shapes),
// so these routes take the JSON as sent.
import { fmDeps } from '#lib/deps.ts';
import { alertAutoHealing, alertAutoScaling, serverNotified } from '#lib/fm/alerts.ts';
import { httpApi, type RouteTable } from './common/http.ts';

export const routes: RouteTable = {
  '/alert/auto_healing': {
    POST: {
      handler: async (request) => {
        await alertAutoHealing(fmDeps(), request.caller, request.body);
        return { status: 204 };
      },
    },
  },
  '/alert/auto_scaling': {
    POST: {
      handler: async (request) => {
        await alertAutoScaling(fmDeps(), request.caller, request.body);
        return { status: 204 };
      },
    },
  },
  '/server_notification/vnf_instances/{vnfInstanceId}/servers/{serverId}/notify': {
    POST: {
      handler: async (request) => {
        await serverNotified(fmDeps(), request.caller, request.params.vnfInstanceId ?? '', request.params.serverId ?? '', request.body);
        return { status: 204 };
      },
    },
  },
};

export const handler = httpApi(routes);

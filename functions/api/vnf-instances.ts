// API function for the SOL003 "VNF instances" and "Individual VNF instance" resources
// (/vnflcm/v1 and /vnflcm/v2).
// X-Ray subsegments for its invocations and AWS SDK calls (lib/trace.ts; not every function has room for it).
import '#lib/trace.ts';
import * as z from 'zod';
import { coreDeps } from '#lib/deps.ts';
import { createVnfInstance, deleteVnfInstance, getVnfInstance, listVnfInstances, requestModifyInfo } from '#lib/lcm/vnf-instances.ts';
import { packageFromNfvo } from '#lib/nfvo/packages.ts';
import { applyPkgmNotification, PKGM_CALLBACK_PATH } from '#lib/nfvo/package-notifications.ts';
import { nfvoSettings } from '#lib/nfvo/client.ts';
import { NotFoundError } from '#lib/sol/errors.ts';
import { renderVnfInstance } from '#lib/sol/model.ts';
import { createVnfRequest, normaliseV1Modification, vnfInfoModificationRequest } from '#lib/sol/requests.ts';
import { bothVersions, created, httpApi, pagedList, pageSize, route, type ApiRequest, type RouteTable } from './common/http.ts';

const version = (request: ApiRequest) => request.apiMajorVersion ?? 2;
const instanceId = (request: ApiRequest) => request.params.vnfInstanceId ?? '';

export const routes: RouteTable = {
  ...bothVersions('/vnf_instances', {
    POST: route({
      schema: createVnfRequest,
      title: 'CreateVnfRequest',
      handler: async (request) => {
        const record = await createVnfInstance(coreDeps(), request.caller, request.body, (deps, caller, vnfdId) =>
          packageFromNfvo(deps, caller, vnfdId, request.baseUrl),
        );
        return created(renderVnfInstance(record, version(request), request.baseUrl));
      },
    }),
    GET: {
      handler: async (request) => {
        const page = await listVnfInstances(coreDeps(), request.caller, version(request), request.baseUrl, request.rawQuery, pageSize());
        return pagedList(page, `${request.baseUrl}/vnflcm/v${version(request)}/vnf_instances`);
      },
    },
  }),
  ...bothVersions('/vnf_instances/{vnfInstanceId}', (major) => ({
    GET: {
      handler: async (request) => {
        const record = await getVnfInstance(coreDeps(), request.caller, instanceId(request));
        return { status: 200, body: renderVnfInstance(record, version(request), request.baseUrl) };
      },
    },
    PATCH: route({
      // v1 writes vimConnectionInfo as an array of {id, ...}; it is read as v2's map.
      schema: major === 1 ? z.preprocess(normaliseV1Modification, vnfInfoModificationRequest) : vnfInfoModificationRequest,
      title: 'VnfInfoModificationRequest',
      handler: async (request) => {
        const opOcc = await requestModifyInfo(coreDeps(), request.caller, instanceId(request), request.body, version(request));
        return { status: 202, headers: { Location: `${request.baseUrl}/vnflcm/v${version(request)}/vnf_lcm_op_occs/${opOcc.id}` } };
      },
    }),
    DELETE: {
      handler: async (request) => {
        await deleteVnfInstance(coreDeps(), request.caller, instanceId(request));
        return { status: 204 };
      },
    },
  })),
};

/** The NFVO configured, or 404: without one there is nothing to be told. */
function configuredNfvo() {
  const settings = nfvoSettings();
  if (!settings) throw new NotFoundError('No NFVO is configured (NfvoEndpoint)');
  return settings;
}

// The NFVO's package notifications (lib/nfvo/package-notifications.ts); GET is its test of the callback.
routes[PKGM_CALLBACK_PATH] = {
  GET: {
    handler: async () => {
      configuredNfvo();
      return { status: 204 };
    },
  },
  POST: {
    handler: async (request) => {
      await applyPkgmNotification(coreDeps(), configuredNfvo(), request.caller, request.body);
      return { status: 204 };
    },
  },
};

export const handler = httpApi(routes);

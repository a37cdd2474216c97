// API function for the SOL003 task resources: instantiate, terminate, scale and heal a VNF
// instance (/vnflcm/v1 and /vnflcm/v2), change its VNF package (/vnflcm/v2 only, as in SOL003
// V3.x), take and revert to VNF snapshots (/vnflcm/v2 only), and retry, roll back or fail an
// operation occurrence.
import { z } from 'zod';
import { coreDeps } from '#lib/deps.ts';
import { requestInstantiate } from '#lib/lcm/requests/instantiate.ts';
import { requestTerminate } from '#lib/lcm/requests/terminate.ts';
import { failOperation, retryOperation, rollbackOperation } from '#lib/lcm/requests/op-occ-tasks.ts';
import { requestHeal, requestScale } from '#lib/lcm/requests/scale-heal.ts';
import { requestChangeVnfpkg } from '#lib/lcm/requests/change-vnfpkg.ts';
import { requestCreateSnapshot, requestRevertToSnapshot } from '#lib/lcm/requests/snapshots.ts';
import { renderVnfLcmOpOcc, type VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import {
  changeCurrentVnfPkgRequest,
  createVnfSnapshotRequest,
  healVnfRequest,
  instantiateVnfRequest,
  normaliseV1Instantiate,
  revertToVnfSnapshotRequest,
  scaleVnfRequest,
  terminateVnfRequest,
} from '#lib/sol/requests.ts';
import { bothVersions, httpApi, route, type ApiRequest, type ApiResult, type RouteTable } from './common/http.ts';

const version = (request: ApiRequest) => request.apiMajorVersion ?? 2;
const instanceId = (request: ApiRequest) => request.params.vnfInstanceId ?? '';
const opOccId = (request: ApiRequest) => request.params.vnfLcmOpOccId ?? '';
const accepted = (request: ApiRequest, opOcc: VnfLcmOpOccRecord): ApiResult => ({
  status: 202,
  headers: { Location: `${request.baseUrl}/vnflcm/v${version(request)}/vnf_lcm_op_occs/${opOcc.id}` },
});

export const routes: RouteTable = {
  ...bothVersions('/vnf_instances/{vnfInstanceId}/instantiate', (major) => ({
    POST: route({
      // v1 writes vimConnectionInfo and extVirtualLinks in its own shapes; they are read as v2's.
      schema: major === 1 ? z.preprocess(normaliseV1Instantiate, instantiateVnfRequest) : instantiateVnfRequest,
      title: 'InstantiateVnfRequest',
      handler: async (request) => accepted(request, await requestInstantiate(coreDeps(), request.caller, instanceId(request), request.body, version(request))),
    }),
  })),
  ...bothVersions('/vnf_instances/{vnfInstanceId}/terminate', {
    POST: route({
      schema: terminateVnfRequest,
      title: 'TerminateVnfRequest',
      handler: async (request) => accepted(request, await requestTerminate(coreDeps(), request.caller, instanceId(request), request.body, version(request))),
    }),
  }),
  ...bothVersions('/vnf_instances/{vnfInstanceId}/scale', {
    POST: route({
      schema: scaleVnfRequest,
      title: 'ScaleVnfRequest',
      handler: async (request) => accepted(request, await requestScale(coreDeps(), request.caller, instanceId(request), request.body, version(request))),
    }),
  }),
  ...bothVersions('/vnf_instances/{vnfInstanceId}/heal', {
    POST: route({
      schema: healVnfRequest,
      title: 'HealVnfRequest',
      handler: async (request) => accepted(request, await requestHeal(coreDeps(), request.caller, instanceId(request), request.body, version(request))),
    }),
  }),
  '/vnflcm/v2/vnf_instances/{vnfInstanceId}/change_vnfpkg': {
    POST: route({
      schema: changeCurrentVnfPkgRequest,
      title: 'ChangeCurrentVnfPkgRequest',
      handler: async (request) => accepted(request, await requestChangeVnfpkg(coreDeps(), request.caller, instanceId(request), request.body, version(request))),
    }),
  },
  // VNF snapshots exist in SOL003 V3.x only: /vnflcm/v2.
  '/vnflcm/v2/vnf_instances/{vnfInstanceId}/create_snapshot': {
    POST: route({
      schema: createVnfSnapshotRequest,
      title: 'CreateVnfSnapshotRequest',
      handler: async (request) =>
        accepted(request, await requestCreateSnapshot(coreDeps(), request.caller, instanceId(request), request.body, version(request))),
    }),
  },
  '/vnflcm/v2/vnf_instances/{vnfInstanceId}/revert_to_snapshot': {
    POST: route({
      schema: revertToVnfSnapshotRequest,
      title: 'RevertToVnfSnapshotRequest',
      handler: async (request) =>
        accepted(request, await requestRevertToSnapshot(coreDeps(), request.caller, instanceId(request), request.body, version(request))),
    }),
  },
  ...bothVersions('/vnf_lcm_op_occs/{vnfLcmOpOccId}/retry', {
    POST: {
      handler: async (request) => {
        await retryOperation(coreDeps(), request.caller, opOccId(request));
        return { status: 202 };
      },
    },
  }),
  ...bothVersions('/vnf_lcm_op_occs/{vnfLcmOpOccId}/rollback', {
    POST: {
      handler: async (request) => {
        await rollbackOperation(coreDeps(), request.caller, opOccId(request));
        return { status: 202 };
      },
    },
  }),
  ...bothVersions('/vnf_lcm_op_occs/{vnfLcmOpOccId}/fail', {
    POST: {
      handler: async (request) => {
        const record = await failOperation(coreDeps(), request.caller, opOccId(request));
        return { status: 200, body: renderVnfLcmOpOcc(record, version(request), request.baseUrl) };
      },
    },
  }),
};

export const handler = httpApi(routes);

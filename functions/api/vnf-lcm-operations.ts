// API function for the SOL003 task resources: instantiate, terminate, scale and heal a VNF
// instance (/vnflcm/v1 and /vnflcm/v2), change its VNF package (/vnflcm/v2 only, as in SOL003
// V3.x), and retry, roll back or fail an operation occurrence.
import { coreDeps } from '#lib/deps.ts';
import { requestInstantiate } from '#lib/lcm/requests/instantiate.ts';
import { requestTerminate } from '#lib/lcm/requests/terminate.ts';
import { failOperation, retryOperation, rollbackOperation } from '#lib/lcm/requests/op-occ-tasks.ts';
import { requestHeal, requestScale } from '#lib/lcm/requests/scale-heal.ts';
import { requestChangeVnfpkg } from '#lib/lcm/requests/change-vnfpkg.ts';
import { renderVnfLcmOpOcc, type VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import { changeCurrentVnfPkgRequest, healVnfRequest, instantiateVnfRequest, normaliseV1Instantiate, parseRequest, scaleVnfRequest, terminateVnfRequest } from '#lib/sol/requests.ts';
import { bothVersions, httpApi, type ApiRequest, type ApiResult } from './common/http.ts';

const version = (request: ApiRequest) => request.apiMajorVersion ?? 2;
const accepted = (request: ApiRequest, opOcc: VnfLcmOpOccRecord): ApiResult => ({
  status: 202,
  headers: { Location: `${request.baseUrl}/vnflcm/v${version(request)}/vnf_lcm_op_occs/${opOcc.id}` },
});

export const handler = httpApi({
  ...bothVersions('/vnf_instances/{vnfInstanceId}/instantiate', {
    POST: async (request) => {
      const raw = version(request) === 1 ? normaliseV1Instantiate(request.body) : request.body;
      const body = parseRequest(instantiateVnfRequest, raw, 'InstantiateVnfRequest');
      return accepted(request, await requestInstantiate(coreDeps(), request.caller, request.params.vnfInstanceId ?? '', body, version(request)));
    },
  }),
  ...bothVersions('/vnf_instances/{vnfInstanceId}/terminate', {
    POST: async (request) => {
      const body = parseRequest(terminateVnfRequest, request.body, 'TerminateVnfRequest');
      return accepted(request, await requestTerminate(coreDeps(), request.caller, request.params.vnfInstanceId ?? '', body, version(request)));
    },
  }),
  ...bothVersions('/vnf_instances/{vnfInstanceId}/scale', {
    POST: async (request) => {
      const body = parseRequest(scaleVnfRequest, request.body, 'ScaleVnfRequest');
      return accepted(request, await requestScale(coreDeps(), request.caller, request.params.vnfInstanceId ?? '', body, version(request)));
    },
  }),
  ...bothVersions('/vnf_instances/{vnfInstanceId}/heal', {
    POST: async (request) => {
      const body = parseRequest(healVnfRequest, request.body, 'HealVnfRequest');
      return accepted(request, await requestHeal(coreDeps(), request.caller, request.params.vnfInstanceId ?? '', body, version(request)));
    },
  }),
  '/vnflcm/v2/vnf_instances/{vnfInstanceId}/change_vnfpkg': {
    POST: async (request) => {
      const body = parseRequest(changeCurrentVnfPkgRequest, request.body, 'ChangeCurrentVnfPkgRequest');
      return accepted(request, await requestChangeVnfpkg(coreDeps(), request.caller, request.params.vnfInstanceId ?? '', body, version(request)));
    },
  },
  ...bothVersions('/vnf_lcm_op_occs/{vnfLcmOpOccId}/retry', {
    POST: async (request) => {
      await retryOperation(coreDeps(), request.caller, request.params.vnfLcmOpOccId ?? '');
      return { status: 202 };
    },
  }),
  ...bothVersions('/vnf_lcm_op_occs/{vnfLcmOpOccId}/rollback', {
    POST: async (request) => {
      await rollbackOperation(coreDeps(), request.caller, request.params.vnfLcmOpOccId ?? '');
      return { status: 202 };
    },
  }),
  ...bothVersions('/vnf_lcm_op_occs/{vnfLcmOpOccId}/fail', {
    POST: async (request) => {
      const record = await failOperation(coreDeps(), request.caller, request.params.vnfLcmOpOccId ?? '');
      return { status: 200, body: renderVnfLcmOpOcc(record, version(request), request.baseUrl) };
    },
  }),
});

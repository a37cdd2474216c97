// API function for the SOL003 task resources: instantiate, terminate, scale and heal a VNF
// instance and change its external connectivity (/vnflcm/v1 and /vnflcm/v2), change its VNF
// package, flavour or operational state and take and revert to VNF snapshots (/vnflcm/v2 only, as
// in SOL003 V3.x), and retry, roll back, fail or cancel an operation occurrence.
import * as z from 'zod';
import { coreDeps } from '#lib/deps.ts';
import { requestInstantiate } from '#lib/lcm/requests/instantiate.ts';
import { requestTerminate } from '#lib/lcm/requests/terminate.ts';
import { failOperation, retryOperation, rollbackOperation } from '#lib/lcm/requests/op-occ-tasks.ts';
import { requestHeal, requestScale } from '#lib/lcm/requests/scale-heal.ts';
import { requestChangeVnfpkg } from '#lib/lcm/requests/change-vnfpkg.ts';
import { packageFromNfvo } from '#lib/nfvo/packages.ts';
import { requestScaleToLevel } from '#lib/lcm/requests/scale-to-level.ts';
import { requestChangeExtConn } from '#lib/lcm/requests/change-ext-conn.ts';
import { cancelOperation } from '#lib/lcm/requests/cancel.ts';
import { requestOperate } from '#lib/lcm/requests/operate.ts';
import { requestChangeFlavour } from '#lib/lcm/requests/change-flavour.ts';
import { requestCreateSnapshot, requestRevertToSnapshot } from '#lib/lcm/requests/snapshots.ts';
import { renderVnfLcmOpOcc, type ApiMajorVersion, type VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { Caller } from '#lib/auth/tenancy.ts';
import {
  cancelModeRequest,
  changeCurrentVnfPkgRequest,
  changeExtVnfConnectivityRequest,
  changeVnfFlavourRequest,
  createVnfSnapshotRequest,
  healVnfRequest,
  instantiateVnfRequest,
  normaliseV1Instantiate,
  operateVnfRequest,
  revertToVnfSnapshotRequest,
  scaleVnfRequest,
  scaleVnfToLevelRequest,
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

/** A task resource of a VNF instance: its request body as `schema` reads it, handed to the operation's request function, answered 202 with the op occ's Location. */
function task<Body>(
  schema: z.ZodType<Body>,
  title: string,
  start: (deps: CoreDeps, caller: Caller, id: string, body: Body, version: ApiMajorVersion) => Promise<VnfLcmOpOccRecord>,
) {
  return route({
    schema,
    title,
    handler: async (request) => accepted(request, await start(coreDeps(), request.caller, instanceId(request), request.body, version(request))),
  });
}

export const routes: RouteTable = {
  ...bothVersions('/vnf_instances/{vnfInstanceId}/instantiate', (major) => ({
    // v1 writes vimConnectionInfo and extVirtualLinks in its own shapes; they are read as v2's.
    POST: task(major === 1 ? z.preprocess(normaliseV1Instantiate, instantiateVnfRequest) : instantiateVnfRequest, 'InstantiateVnfRequest', requestInstantiate),
  })),
  ...bothVersions('/vnf_instances/{vnfInstanceId}/terminate', {
    POST: task(terminateVnfRequest, 'TerminateVnfRequest', requestTerminate),
  }),
  ...bothVersions('/vnf_instances/{vnfInstanceId}/scale', {
    POST: task(scaleVnfRequest, 'ScaleVnfRequest', requestScale),
  }),
  // SOL003 V3.x only: Tacker's v1 API (V2.6.1) has no scale to level.
  '/vnflcm/v2/vnf_instances/{vnfInstanceId}/scale_to_level': {
    POST: task(scaleVnfToLevelRequest, 'ScaleVnfToLevelRequest', requestScaleToLevel),
  },
  ...bothVersions('/vnf_instances/{vnfInstanceId}/heal', {
    POST: task(healVnfRequest, 'HealVnfRequest', requestHeal),
  }),
  '/vnflcm/v2/vnf_instances/{vnfInstanceId}/change_vnfpkg': {
    // A vnfdId the VNFM has no package for is fetched from the NFVO, as for a create.
    POST: route({
      schema: changeCurrentVnfPkgRequest,
      title: 'ChangeCurrentVnfPkgRequest',
      handler: async (request) =>
        accepted(
          request,
          await requestChangeVnfpkg(coreDeps(), request.caller, instanceId(request), request.body, version(request), (deps, caller, vnfdId) =>
            packageFromNfvo(deps, caller, vnfdId, request.baseUrl),
          ),
        ),
    }),
  },
  ...bothVersions('/vnf_instances/{vnfInstanceId}/change_ext_conn', (major) => ({
    // v1 (SOL003 V2.6.1) writes vimConnectionInfo and cpConfig as arrays, as in its InstantiateVnfRequest.
    POST: task(
      major === 1 ? z.preprocess(normaliseV1Instantiate, changeExtVnfConnectivityRequest) : changeExtVnfConnectivityRequest,
      'ChangeExtVnfConnectivityRequest',
      requestChangeExtConn,
    ),
  })),
  // SOL003 5.4.10, on /vnflcm/v2 only.
  '/vnflcm/v2/vnf_instances/{vnfInstanceId}/operate': {
    POST: task(operateVnfRequest, 'OperateVnfRequest', requestOperate),
  },
  // SOL003 V3.x (v2 only): the VNF moves to another deployment flavour of its VNFD.
  '/vnflcm/v2/vnf_instances/{vnfInstanceId}/change_flavour': {
    POST: task(changeVnfFlavourRequest, 'ChangeVnfFlavourRequest', requestChangeFlavour),
  },
  // VNF snapshots exist in SOL003 V3.x only: /vnflcm/v2.
  '/vnflcm/v2/vnf_instances/{vnfInstanceId}/create_snapshot': {
    POST: task(createVnfSnapshotRequest, 'CreateVnfSnapshotRequest', requestCreateSnapshot),
  },
  '/vnflcm/v2/vnf_instances/{vnfInstanceId}/revert_to_snapshot': {
    POST: task(revertToVnfSnapshotRequest, 'RevertToVnfSnapshotRequest', requestRevertToSnapshot),
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
  // SOL003 5.4.17; Tacker's v1 serves it too, with the same CancelMode.
  ...bothVersions('/vnf_lcm_op_occs/{vnfLcmOpOccId}/cancel', {
    POST: route({
      schema: cancelModeRequest,
      title: 'CancelMode',
      handler: async (request) => {
        await cancelOperation(coreDeps(), request.caller, opOccId(request), request.body.cancelMode);
        return { status: 202 };
      },
    }),
  }),
};

export const handler = httpApi(routes);

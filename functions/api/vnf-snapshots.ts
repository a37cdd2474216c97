// API function for the SOL003 "VNF snapshots" and "Individual VNF snapshot" resources
// (/vnflcm/v2/vnf_snapshots, SOL003 V3.x 5.4.23): create an empty resource for the create_snapshot
// task to fill, list, read and delete (with the snapshots it holds on the VIM).
// X-Ray subsegments for its invocations and AWS SDK calls (lib/trace.ts; not every function has room for it).
import '#lib/trace.ts';
import { coreDeps } from '#lib/deps.ts';
import { createVnfSnapshotInfo, deleteVnfSnapshotInfo, getVnfSnapshotInfo, listVnfSnapshotInfos } from '#lib/lcm/vnf-snapshots.ts';
import { renderVnfSnapshotInfo } from '#lib/sol/model.ts';
import { createVnfSnapshotInfoRequest } from '#lib/sol/requests.ts';
import { created, httpApi, pagedList, pageSize, route, type ApiRequest, type RouteTable } from './common/http.ts';

const snapshotId = (request: ApiRequest) => request.params.vnfSnapshotInfoId ?? '';

export const routes: RouteTable = {
  '/vnflcm/v2/vnf_snapshots': {
    POST: route({
      schema: createVnfSnapshotInfoRequest,
      title: 'CreateVnfSnapshotInfoRequest',
      handler: async (request) => created(renderVnfSnapshotInfo(await createVnfSnapshotInfo(coreDeps(), request.caller, request.body), request.baseUrl)),
    }),
    GET: {
      handler: async (request) => {
        const page = await listVnfSnapshotInfos(coreDeps(), request.caller, request.baseUrl, request.rawQuery, pageSize());
        return pagedList(page, `${request.baseUrl}/vnflcm/v2/vnf_snapshots`);
      },
    },
  },
  '/vnflcm/v2/vnf_snapshots/{vnfSnapshotInfoId}': {
    GET: {
      handler: async (request) => ({
        status: 200,
        body: renderVnfSnapshotInfo(await getVnfSnapshotInfo(coreDeps(), request.caller, snapshotId(request)), request.baseUrl),
      }),
    },
    DELETE: {
      handler: async (request) => {
        await deleteVnfSnapshotInfo(coreDeps(), request.caller, snapshotId(request));
        return { status: 204 };
      },
    },
  },
};

export const handler = httpApi(routes);

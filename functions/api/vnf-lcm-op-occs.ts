// API function for the SOL003 "VNF LCM operation occurrences" and "Individual VNF LCM operation
// occurrence" resources (/vnflcm/v1 and /vnflcm/v2).
// X-Ray subsegments for its invocations and AWS SDK calls (lib/trace.ts; not every function has room for it).
import '#lib/trace.ts';
import { coreDeps } from '#lib/deps.ts';
import { getOpOcc, listOpOccs } from '#lib/lcm/op-occs.ts';
import { renderVnfLcmOpOcc } from '#lib/sol/model.ts';
import { bothVersions, httpApi, pagedList, pageSize, type ApiRequest, type RouteTable } from './common/http.ts';

const version = (request: ApiRequest) => request.apiMajorVersion ?? 2;

export const routes: RouteTable = {
  ...bothVersions('/vnf_lcm_op_occs', {
    GET: {
      handler: async (request) => {
        const page = await listOpOccs(coreDeps(), request.caller, version(request), request.baseUrl, request.rawQuery, pageSize());
        return pagedList(page, `${request.baseUrl}/vnflcm/v${version(request)}/vnf_lcm_op_occs`);
      },
    },
  }),
  ...bothVersions('/vnf_lcm_op_occs/{vnfLcmOpOccId}', {
    GET: {
      handler: async (request) => {
        const record = await getOpOcc(coreDeps(), request.caller, request.params.vnfLcmOpOccId ?? '');
        return { status: 200, body: renderVnfLcmOpOcc(record, version(request), request.baseUrl) };
      },
    },
  }),
};

export const handler = httpApi(routes);

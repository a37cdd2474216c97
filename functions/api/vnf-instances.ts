// API function for the SOL003 "VNF instances" and "Individual VNF instance" resources
// (/vnflcm/v1 and /vnflcm/v2).
import { coreDeps } from '#lib/deps.ts';
import { createVnfInstance, deleteVnfInstance, getVnfInstance, listVnfInstances, requestModifyInfo } from '#lib/lcm/vnf-instances.ts';
import { renderVnfInstance } from '#lib/sol/model.ts';
import { createVnfRequest, normaliseV1Modification, parseRequest, vnfInfoModificationRequest } from '#lib/sol/requests.ts';
import { bothVersions, httpApi, pagedList, pageSize, type ApiRequest } from './common/http.ts';

const version = (request: ApiRequest) => request.apiMajorVersion ?? 2;
const instanceId = (request: ApiRequest) => request.params.vnfInstanceId ?? '';

export const handler = httpApi({
  ...bothVersions('/vnf_instances', {
    POST: async (request) => {
      const body = parseRequest(createVnfRequest, request.body, 'CreateVnfRequest');
      const record = await createVnfInstance(coreDeps(), request.caller, body);
      const representation = renderVnfInstance(record, version(request), request.baseUrl);
      return { status: 201, body: representation, headers: { Location: (representation._links as { self: { href: string } }).self.href } };
    },
    GET: async (request) => {
      const page = await listVnfInstances(coreDeps(), request.caller, version(request), request.baseUrl, request.rawQuery, pageSize());
      return pagedList(page, `${request.baseUrl}/vnflcm/v${version(request)}/vnf_instances`);
    },
  }),
  ...bothVersions('/vnf_instances/{vnfInstanceId}', {
    GET: async (request) => {
      const record = await getVnfInstance(coreDeps(), request.caller, instanceId(request));
      return { status: 200, body: renderVnfInstance(record, version(request), request.baseUrl) };
    },
    PATCH: async (request) => {
      const raw = version(request) === 1 ? normaliseV1Modification(request.body) : request.body;
      const body = parseRequest(vnfInfoModificationRequest, raw, 'VnfInfoModificationRequest');
      const opOcc = await requestModifyInfo(coreDeps(), request.caller, instanceId(request), body, version(request));
      return { status: 202, headers: { Location: `${request.baseUrl}/vnflcm/v${version(request)}/vnf_lcm_op_occs/${opOcc.id}` } };
    },
    DELETE: async (request) => {
      await deleteVnfInstance(coreDeps(), request.caller, instanceId(request));
      return { status: 204 };
    },
  }),
});

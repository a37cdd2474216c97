// The SCALE_TO_LEVEL request (SOL003 5.4.6): checked against the VNFD and the instance before 202,
// the levels and counts it leads to worked out (lib/lcm/scale-to-level.ts) and kept on the op occ
// for the grant and the steps. Only an INSTANTIATED instance can be scaled (409 otherwise).
import type { ApiMajorVersion, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { ScaleVnfToLevelRequest } from '#lib/sol/requests.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { Caller } from '#lib/auth/tenancy.ts';
import { parsedVnfd } from '#lib/packages/access.ts';
import { requestedBy, startOperation } from '#lib/lcm/operations.ts';
import { getVnfInstance } from '#lib/lcm/vnf-instances.ts';
import { scaleToLevelChange } from '#lib/lcm/scale-to-level.ts';
import { flavourOfInstance, instantiatedOrConflict } from './scale-heal.ts';

export async function requestScaleToLevel(
  deps: CoreDeps,
  caller: Caller,
  id: string,
  request: ScaleVnfToLevelRequest,
  version: ApiMajorVersion,
): Promise<VnfLcmOpOccRecord> {
  const instance = await getVnfInstance(deps, caller, id);
  instantiatedOrConflict(instance, 'it can be scaled to a level');
  const flavour = flavourOfInstance(await parsedVnfd(instance.vnfPkgId), instance);
  const change = scaleToLevelChange(flavour, instance.instantiatedVnfInfo, request, instance.vnfdId);
  return startOperation(deps, {
    tenantId: instance.tenantId,
    ...requestedBy(caller),
    vnfInstanceId: instance.id,
    operation: 'SCALE_TO_LEVEL',
    operationParams: request,
    apiMajorVersion: version,
    requireState: 'INSTANTIATED',
    internal: { vim: instance.vimResources?.vim, change },
  });
}

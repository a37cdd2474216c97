// The OPERATE request (SOL003 5.4.10): the instance must be INSTANTIATED (409); the VNFCs named
// must be the instance's (422), and ones its VIM can start or stop as named (the driver's
// operateRefusal, e.g. not one pod of a multi-replica workload: 422). The change is worked out
// here (lib/lcm/operate.ts) and kept on the op occ for the steps.
import { ConflictError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { ApiMajorVersion, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { OperateVnfRequest } from '#lib/sol/requests.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { Caller } from '#lib/auth/tenancy.ts';
import { loadDriver } from '#lib/vim/registry.ts';
import { requestedBy, startOperation } from '#lib/lcm/operations.ts';
import { operateChange } from '#lib/lcm/operate.ts';
import { getVnfInstance } from '#lib/lcm/vnf-instances.ts';

export async function requestOperate(
  deps: CoreDeps,
  caller: Caller,
  id: string,
  request: OperateVnfRequest,
  version: ApiMajorVersion,
): Promise<VnfLcmOpOccRecord> {
  const instance = await getVnfInstance(deps, caller, id);
  const vim = instance.vimResources?.vim;
  if (instance.instantiationState !== 'INSTANTIATED' || !vim) {
    throw new ConflictError(`VNF instance ${id} is NOT_INSTANTIATED; it must be instantiated before its operational state can change`);
  }
  const change = operateChange(instance.instantiatedVnfInfo, request);
  if (change.vnfcs.length === 0) throw new ConflictError(`VNF instance ${id} has no VNFCs to ${request.changeStateTo === 'STOPPED' ? 'stop' : 'start'}`);
  const driver = await loadDriver(vim.vimType);
  if (!driver) throw new UnprocessableEntityError(`No driver for VIM type ${vim.vimType}`);
  const vnfcResourceInfo = (instance.instantiatedVnfInfo?.vnfcResourceInfo ?? []) as Array<Record<string, unknown>>;
  const refusal = driver.operateRefusal?.(vnfcResourceInfo, change);
  if (refusal) throw new UnprocessableEntityError(refusal);
  return startOperation(deps, {
    tenantId: instance.tenantId,
    ...requestedBy(caller),
    vnfInstanceId: id,
    operation: 'OPERATE',
    operationParams: request,
    apiMajorVersion: version,
    requireState: 'INSTANTIATED',
    internal: { vim, change },
  });
}

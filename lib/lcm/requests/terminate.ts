// The TERMINATE request (SOL003 5.4.8): the instance must be INSTANTIATED; a GRACEFUL one makes
// its state machine wait gracefulTerminationTimeout before the VIM resources go.
import { ConflictError } from '#lib/sol/errors.ts';
import type { ApiMajorVersion, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { TerminateVnfRequest } from '#lib/sol/requests.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { Caller } from '#lib/auth/tenancy.ts';
import { requestedBy, startOperation } from '#lib/lcm/operations.ts';
import { getVnfInstance } from '#lib/lcm/vnf-instances.ts';

export async function requestTerminate(
  deps: CoreDeps,
  caller: Caller,
  id: string,
  request: TerminateVnfRequest,
  version: ApiMajorVersion,
): Promise<VnfLcmOpOccRecord> {
  const instance = await getVnfInstance(deps, caller, id);
  if (instance.instantiationState !== 'INSTANTIATED') throw new ConflictError(`VNF instance ${id} is NOT_INSTANTIATED; there is nothing to terminate`);
  return startOperation(deps, {
    tenantId: instance.tenantId,
    ...requestedBy(caller),
    vnfInstanceId: id,
    operation: 'TERMINATE',
    operationParams: request,
    apiMajorVersion: version,
    requireState: 'INSTANTIATED',
    internal: { vim: instance.vimResources?.vim },
    executionInput: { gracefulSeconds: request.terminationType === 'GRACEFUL' ? (request.gracefulTerminationTimeout ?? 0) : 0 },
  });
}

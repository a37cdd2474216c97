// The INSTANTIATE request (SOL003 5.4.4): checked against the instance, its package's VNFD and
// the VIMs before 202; the VIM it will work on is chosen now and kept on the op occ, and the
// credentials the request brings go to the secret store (removed again if it does not start).
import { ConflictError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { ApiMajorVersion, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { InstantiateVnfRequest } from '#lib/sol/requests.ts';
import { flavourOf } from '#lib/vim/flavour.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { Caller } from '#lib/auth/tenancy.ts';
import { checkDefinitionFiles, parsedVnfd } from '#lib/packages/access.ts';
import { removingSecretsOnFailure, requestedBy, startOperation, storeVimCredentials } from '#lib/lcm/operations.ts';
import { getVnfInstance } from '#lib/lcm/vnf-instances.ts';
import { chooseVim, vimTypeFor } from '#lib/lcm/vim-choice.ts';
import { KUBERNETES_VIM, OPENSTACK_VIM } from '#lib/vim/registry.ts';

export async function requestInstantiate(
  deps: CoreDeps,
  caller: Caller,
  id: string,
  request: InstantiateVnfRequest,
  version: ApiMajorVersion,
): Promise<VnfLcmOpOccRecord> {
  const instance = await getVnfInstance(deps, caller, id);
  if (instance.instantiationState !== 'NOT_INSTANTIATED') throw new ConflictError(`VNF instance ${id} is already INSTANTIATED`);
  const pkg = await deps.packages.get(instance.vnfPkgId);
  if (pkg?.onboardingState !== 'ONBOARDED') throw new UnprocessableEntityError(`The VNF package of VNF instance ${id} is no longer onboarded`);
  const vnfd = await parsedVnfd(pkg.id);
  const flavour = flavourOf(vnfd, request.flavourId);
  if (request.instantiationLevelId && !flavour.instantiationLevels.levels[request.instantiationLevelId]) {
    throw new UnprocessableEntityError(`Deployment flavour ${request.flavourId} has no instantiation level "${request.instantiationLevelId}"`);
  }
  const vimType = vimTypeFor(request);
  // The API function checks against the list, not the driver registry: drivers load only in the step function.
  if (![OPENSTACK_VIM, KUBERNETES_VIM].includes(vimType)) throw new UnprocessableEntityError(`VIMs of type ${vimType} are not supported`);
  checkDefinitionFiles(pkg, request.additionalParams?.['lcm-kubernetes-def-files']);
  const pending: Record<string, string> = {};
  return removingSecretsOnFailure(deps, pending, async () => {
    const vim = await chooseVim(deps, caller, instance, request, vimType, pending, deps.newId());
    // Credentials of other connections in the request are kept too, as MODIFY_INFO would.
    await storeVimCredentials(deps, id, request.vimConnectionInfo, pending);
    return startOperation(deps, {
      tenantId: instance.tenantId,
      ...requestedBy(caller),
      vnfInstanceId: id,
      operation: 'INSTANTIATE',
      operationParams: request,
      apiMajorVersion: version,
      requireState: 'NOT_INSTANTIATED',
      pendingVimAccessSecrets: pending,
      internal: { vim },
    });
  });
}

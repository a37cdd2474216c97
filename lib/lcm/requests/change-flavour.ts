// The CHANGE_FLAVOUR request (SOL003 5.4.7, /vnflcm/v2 only): move an instantiated VNF to another
// deployment flavour of its VNFD. Checked before 202 (lib/lcm/change-flavour.ts): the instance
// INSTANTIATED and not in that flavour already, the flavour and its instantiation level in the VNFD,
// the manifests it names in the package, for an OpenStack VNF the flavour's BaseHOT. Credentials of
// vimConnectionInfo go to the secret store as at instantiate (removed again if the operation does
// not start or does not complete), never into a record.
import type { ApiMajorVersion, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { ChangeVnfFlavourRequest } from '#lib/sol/requests.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { Caller } from '#lib/auth/tenancy.ts';
import { checkDefinitionFiles, packageFiles, parsedVnfd } from '#lib/packages/access.ts';
import { OPENSTACK_VIM, sameVimType } from '#lib/vim/registry.ts';
import { removingSecretsOnFailure, requestedBy, startOperation, storeVimCredentials } from '#lib/lcm/operations.ts';
import { getVnfInstance } from '#lib/lcm/vnf-instances.ts';
import { DEF_FILES_PARAM, flavourChangePlan } from '#lib/lcm/change-flavour.ts';
import { UnprocessableEntityError } from '#lib/sol/errors.ts';

export async function requestChangeFlavour(
  deps: CoreDeps,
  caller: Caller,
  id: string,
  request: ChangeVnfFlavourRequest,
  version: ApiMajorVersion,
): Promise<VnfLcmOpOccRecord> {
  const instance = await getVnfInstance(deps, caller, id);
  const pkg = await deps.packages.get(instance.vnfPkgId);
  if (!pkg) throw new UnprocessableEntityError(`The VNF package of VNF instance ${id} no longer exists`);
  const vnfd = await parsedVnfd(pkg.id);
  const plan = flavourChangePlan(vnfd, instance, request, checkDefinitionFiles(pkg, request.additionalParams?.[DEF_FILES_PARAM]));
  // An OpenStack VNF is built from the flavour's BaseHOT: a package without one is refused now, not half-way.
  const vim = instance.vimResources?.vim;
  const dir = `BaseHOT/${plan.newFlavourId}/`;
  if (vim && sameVimType(vim.vimType, OPENSTACK_VIM) && !(await packageFiles(pkg).list()).some((path) => path.startsWith(dir)))
    throw new UnprocessableEntityError(
      `The VNF package has no BaseHOT for deployment flavour ${plan.newFlavourId} (nothing under ${dir}); its VNF on OpenStack cannot change to it`,
    );
  const pending: Record<string, string> = {};
  return removingSecretsOnFailure(deps, pending, async () => {
    await storeVimCredentials(deps, id, request.vimConnectionInfo, pending);
    return startOperation(deps, {
      tenantId: instance.tenantId,
      ...requestedBy(caller),
      vnfInstanceId: id,
      operation: 'CHANGE_FLAVOUR',
      operationParams: request,
      apiMajorVersion: version,
      requireState: 'INSTANTIATED',
      pendingVimAccessSecrets: pending,
      internal: { vim: instance.vimResources?.vim, change: plan as unknown as Record<string, unknown> },
    });
  });
}

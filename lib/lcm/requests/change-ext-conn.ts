// The CHANGE_EXT_CONN request (SOL003 5.4.11): checked before 202 against the instance (INSTANTIATED,
// else 409), its VIM (whose driver must be able to move external CPs, else 422 saying why) and its
// VNFD (every CPD named must be an external CP of its flavour, else 422). The external VLs the VNF
// has afterwards are worked out now (lib/lcm/ext-conn.ts) and kept on the op occ for the steps;
// credentials of the connections the request brings go to the secret store, as at INSTANTIATE.
import { ConflictError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { ApiMajorVersion, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { ChangeExtVnfConnectivityRequest } from '#lib/sol/requests.ts';
import { redactSecrets } from '#lib/redact.ts';
import { loadDriver, supportedVimType } from '#lib/vim/registry.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { Caller } from '#lib/auth/tenancy.ts';
import { parsedVnfd } from '#lib/packages/access.ts';
import { removingSecretsOnFailure, requestedBy, startOperation, storeVimCredentials } from '#lib/lcm/operations.ts';
import { getVnfInstance } from '#lib/lcm/vnf-instances.ts';
import { registeredVim } from '#lib/lcm/vim-choice.ts';
import { checkExtVirtualLinks, checkLinkConnections, extConnPlan, type ExtVirtualLink } from '#lib/lcm/ext-conn.ts';

export async function requestChangeExtConn(
  deps: CoreDeps,
  caller: Caller,
  id: string,
  request: ChangeExtVnfConnectivityRequest,
  version: ApiMajorVersion,
): Promise<VnfLcmOpOccRecord> {
  const instance = await getVnfInstance(deps, caller, id);
  const resources = instance.vimResources;
  if (instance.instantiationState !== 'INSTANTIATED' || !resources)
    throw new ConflictError(`VNF instance ${id} is NOT_INSTANTIATED; only an instantiated VNF has external connectivity to change`);

  const driver = await loadDriver(resources.vim.vimType);
  const capability = driver?.externalConnectivity;
  if (!capability || 'unsupported' in capability) {
    const reason = capability && 'unsupported' in capability ? capability.unsupported : `the ${resources.vim.vimType} driver cannot change it`;
    throw new UnprocessableEntityError(`The external connectivity of VNF instance ${id} cannot be changed: ${reason}`);
  }

  const vnfd = await parsedVnfd(instance.vnfPkgId);
  const flavourId = String(instance.instantiatedVnfInfo?.flavourId ?? '');
  const flavour = vnfd.flavours.find((candidate) => candidate.flavourId === flavourId);
  if (!flavour) throw new UnprocessableEntityError(`The VNFD ${vnfd.vnfdId} no longer has the instance's deployment flavour "${flavourId}"`);
  // External VLs carry no credentials; whatever is named like one is not kept.
  const requested = redactSecrets(request.extVirtualLinks) as ExtVirtualLink[];
  checkExtVirtualLinks(flavour, requested);
  checkLinkConnections(requested, { ...instance.vimConnectionInfo, ...request.vimConnectionInfo }, resources.vim);
  const current = ((resources.instantiateRequest as { extVirtualLinks?: ExtVirtualLink[] } | undefined)?.extVirtualLinks ?? []) as ExtVirtualLink[];
  const plan = extConnPlan(current, requested);

  // Every connection is checked before any credential is stored.
  for (const [connectionId, connection] of Object.entries(request.vimConnectionInfo ?? {})) {
    supportedVimType(connection.vimType);
    if (!connection.accessInfo && connection.vimId && !connection.interfaceInfo) await registeredVim(deps, caller, connection.vimId, connectionId);
  }
  const pending: Record<string, string> = {};
  return removingSecretsOnFailure(deps, pending, async () => {
    // startOperation records the request without its accessInfo (now in the secret store).
    await storeVimCredentials(deps, id, request.vimConnectionInfo, pending);
    return startOperation(deps, {
      tenantId: instance.tenantId,
      ...requestedBy(caller),
      vnfInstanceId: id,
      operation: 'CHANGE_EXT_CONN',
      operationParams: request,
      apiMajorVersion: version,
      requireState: 'INSTANTIATED',
      pendingVimAccessSecrets: pending,
      internal: { vim: resources.vim, change: plan as unknown as Record<string, unknown> },
    });
  });
}

// Which VIM an INSTANTIATE works on: the VIM types the VNFM knows, the type a request needs, and
// the choice among the connections a request brings, those the instance already has and the
// registered VIMs of the caller's tenant.
import { UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { VimReference, VnfInstanceRecord } from '#lib/sol/model.ts';
import type { InstantiateVnfRequest } from '#lib/sol/requests.ts';
import { assertReachable } from '#lib/vim-connections/model.ts';
import { KUBERNETES_VIM, OPENSTACK_VIM, sameVimType } from '#lib/vim/registry.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { canSee, type Caller } from '#lib/auth/tenancy.ts';

/** Which kind of VIM a package needs: Kubernetes when it brings manifests for the operation, else OpenStack. */
export function vimTypeFor(request: { additionalParams?: Record<string, unknown> }): string {
  return request.additionalParams?.['lcm-kubernetes-def-files'] ? KUBERNETES_VIM : OPENSTACK_VIM;
}

/**
 * The VIM an INSTANTIATE works on: a connection in the request (its credentials go to the secret
 * store), a connection the instance already has, a registered VIM named by vimId, or the default
 * VIM of the type the package needs.
 */
export async function chooseVim(
  deps: CoreDeps,
  caller: Caller,
  instance: VnfInstanceRecord,
  request: InstantiateVnfRequest,
  vimType: string,
  pending: Record<string, string>,
  scope: string,
): Promise<VimReference> {
  const candidates = Object.entries(request.vimConnectionInfo ?? {}).filter(([, c]) => sameVimType(c.vimType, vimType));
  for (const [connectionId, connection] of candidates) {
    if (connection.accessInfo && connection.interfaceInfo) {
      pending[connectionId] = await deps.secrets.create(`vnf-instances/${instance.id}/${scope}/${connectionId}`, connection.accessInfo);
      return {
        connectionId,
        vimId: connection.vimId ?? connectionId,
        vimType: connection.vimType,
        interfaceInfo: connection.interfaceInfo,
        accessSecret: pending[connectionId],
        extra: connection.extra,
      };
    }
    if (connection.vimId) return registeredVim(deps, caller, connection.vimId, connectionId);
  }
  for (const [connectionId, connection] of Object.entries(instance.vimConnectionInfo ?? {})) {
    const secret = instance.vimAccessSecrets?.[connectionId];
    if (!sameVimType(connection.vimType, vimType)) continue;
    if (secret && connection.interfaceInfo)
      return {
        connectionId,
        vimId: connection.vimId ?? connectionId,
        vimType: connection.vimType,
        interfaceInfo: connection.interfaceInfo,
        accessSecret: secret,
        extra: connection.extra,
      };
    if (connection.vimId) return registeredVim(deps, caller, connection.vimId, connectionId);
  }
  const defaults = (await deps.vims.listForTenant(caller.tenantId)).filter((v) => v.isDefault && sameVimType(v.vimType, vimType));
  const vim = defaults[0];
  if (!vim) throw new UnprocessableEntityError(`No VIM of type ${vimType} is given in vimConnectionInfo and none is registered as the default`);
  assertReachable(vim);
  return { connectionId: vim.id, vimId: vim.id, vimType: vim.vimType, interfaceInfo: vim.interfaceInfo, accessSecret: vim.accessSecret, extra: vim.extra };
}

export async function registeredVim(deps: CoreDeps, caller: Caller, vimId: string, connectionId: string): Promise<VimReference> {
  const vim = await deps.vims.get(vimId);
  if (!vim || !canSee(caller, vim.tenantId))
    throw new UnprocessableEntityError(`vimConnectionInfo.${connectionId} names VIM ${vimId}, which is not registered`);
  assertReachable(vim);
  return { connectionId, vimId: vim.id, vimType: vim.vimType, interfaceInfo: vim.interfaceInfo, accessSecret: vim.accessSecret, extra: vim.extra };
}

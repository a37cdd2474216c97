// The SCALE and HEAL requests (SOL003 5.4.5, 5.4.9), from the NFVO or started by the VNFM itself
// (auto-scale, auto-heal): checked against the VNFD and the instance before 202, with the change
// each makes worked out (lib/lcm/scale-heal.ts) and kept on the op occ for the steps.
import { ConflictError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { ApiMajorVersion, VnfInstanceRecord, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { HealVnfRequest, ScaleVnfRequest } from '#lib/sol/requests.ts';
import type { FlavourInfo, ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import type { UpdateChange } from '#lib/vim/driver.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { Caller } from '#lib/auth/tenancy.ts';
import { parsedVnfd } from '#lib/packages/access.ts';
import { requestedBy, startOperation } from '#lib/lcm/operations.ts';
import { getVnfInstance } from '#lib/lcm/instance-records.ts';
import { healChange, scaleChange } from '#lib/lcm/scale-heal.ts';

export function instantiatedOrConflict(instance: VnfInstanceRecord, operation: string): void {
  if (instance.instantiationState !== 'INSTANTIATED' || !instance.vimResources) {
    throw new ConflictError(`VNF instance ${instance.id} is NOT_INSTANTIATED; it must be instantiated before ${operation}`);
  }
}

export function flavourOfInstance(vnfd: ParsedVnfd, instance: VnfInstanceRecord): FlavourInfo {
  const flavourId = String(instance.instantiatedVnfInfo?.flavourId ?? '');
  const flavour = vnfd.flavours.find((candidate) => candidate.flavourId === flavourId);
  if (!flavour) throw new UnprocessableEntityError(`The VNFD ${vnfd.vnfdId} no longer has the instance's deployment flavour "${flavourId}"`);
  return flavour;
}

/** Records the op occ of a SCALE or HEAL of `instance`, with the change it makes, and starts it. */
function startUpdate(
  deps: CoreDeps,
  caller: Caller,
  instance: VnfInstanceRecord,
  operation: 'SCALE' | 'HEAL',
  request: ScaleVnfRequest | HealVnfRequest,
  version: ApiMajorVersion,
  options: AutomaticOptions,
  change: UpdateChange,
): Promise<VnfLcmOpOccRecord> {
  return startOperation(deps, {
    tenantId: instance.tenantId,
    ...requestedBy(caller),
    vnfInstanceId: instance.id,
    operation,
    operationParams: request,
    apiMajorVersion: version,
    requireState: 'INSTANTIATED',
    isAutomaticInvocation: options.isAutomaticInvocation ?? false,
    internal: { vim: instance.vimResources?.vim, change },
  });
}

export async function requestScale(
  deps: CoreDeps,
  caller: Caller,
  id: string,
  request: ScaleVnfRequest,
  version: ApiMajorVersion,
  options: AutomaticOptions = {},
): Promise<VnfLcmOpOccRecord> {
  const instance = await getVnfInstance(deps, caller, id);
  instantiatedOrConflict(instance, 'it can be scaled');
  const change = scaleChange(flavourOfInstance(await parsedVnfd(instance.vnfPkgId), instance), instance.instantiatedVnfInfo, request);
  return startUpdate(deps, caller, instance, 'SCALE', request, version, options, change);
}

/** Operations the VNFM starts itself (auto-heal, auto-scale) are op occs with isAutomaticInvocation true (SOL003 5.5.2.13). */
export interface AutomaticOptions {
  isAutomaticInvocation?: boolean;
}

export async function requestHeal(
  deps: CoreDeps,
  caller: Caller,
  id: string,
  request: HealVnfRequest,
  version: ApiMajorVersion,
  options: AutomaticOptions = {},
): Promise<VnfLcmOpOccRecord> {
  const instance = await getVnfInstance(deps, caller, id);
  instantiatedOrConflict(instance, 'it can be healed');
  const change = healChange(instance.instantiatedVnfInfo, request);
  if (change.vnfcs.length === 0) throw new ConflictError(`VNF instance ${id} has no VNFCs to heal`);
  return startUpdate(deps, caller, instance, 'HEAL', request, version, options, change);
}

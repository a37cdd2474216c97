// The two helpers the LCM steps share with the VNF instance API, kept apart from it so that the
// step functions' bundles do not carry the API's request schemas (lib/sol/requests.ts).
import { NotFoundError } from '#lib/sol/errors.ts';
import type { VnfInstanceRecord } from '#lib/sol/model.ts';
import type { VnfPackageRecord } from '#lib/store/packages.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { canSee, type Caller } from '#lib/auth/tenancy.ts';

export function packageAttributes(
  pkg: VnfPackageRecord,
): Pick<VnfInstanceRecord, 'vnfdId' | 'vnfPkgId' | 'vnfProvider' | 'vnfProductName' | 'vnfSoftwareVersion' | 'vnfdVersion'> {
  return {
    vnfdId: pkg.vnfdId ?? '',
    vnfPkgId: pkg.id,
    vnfProvider: pkg.vnfProvider ?? '',
    vnfProductName: pkg.vnfProductName ?? '',
    vnfSoftwareVersion: pkg.vnfSoftwareVersion ?? '',
    vnfdVersion: pkg.vnfdVersion ?? '',
  };
}

export async function getVnfInstance(deps: CoreDeps, caller: Caller, id: string): Promise<VnfInstanceRecord> {
  const record = await deps.instances.get(id);
  // Another tenant's instance looks exactly like a missing one.
  if (!record || !canSee(caller, record.tenantId)) throw new NotFoundError(`VNF instance ${id} does not exist`);
  return record;
}

// The CREATE_SNAPSHOT and REVERT_TO_SNAPSHOT requests (SOL003 5.4.21, 5.4.22): the instance must be
// INSTANTIATED (409), the "Individual VNF snapshot" named must be the caller's (422), empty to be
// filled (409) or a complete snapshot of this very instance to be reverted to (409/422), and not in
// use by another operation (409). The snapshot resource is taken for the op occ before it starts.
import { ConflictError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { ApiMajorVersion, VnfInstanceRecord, VnfLcmOpOccRecord, VnfSnapshotInfoRecord } from '#lib/sol/model.ts';
import type { CreateVnfSnapshotRequest, RevertToVnfSnapshotRequest } from '#lib/sol/requests.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { SnapshotState } from '#lib/vim/driver.ts';
import { canSee, type Caller } from '#lib/auth/tenancy.ts';
import { requestedBy, startOperation } from '#lib/lcm/operations.ts';
import { getVnfInstance } from '#lib/lcm/vnf-instances.ts';
import { claimVnfSnapshotInfo, snapshotStore } from '#lib/lcm/vnf-snapshots.ts';
import { driverOf } from '#lib/lcm/engine/context.ts';
import { vnfcResourceInfoIdOf } from '#lib/lcm/snapshot-content.ts';
import { instantiatedOrConflict } from './scale-heal.ts';

/** The snapshot resource a request names: the caller's, in the instance's tenant (else 422: the body names something that does not exist). */
async function namedSnapshot(deps: CoreDeps, caller: Caller, instance: VnfInstanceRecord, id: string): Promise<VnfSnapshotInfoRecord> {
  const record = await snapshotStore(deps).get(id);
  if (!record || !canSee(caller, record.tenantId) || record.tenantId !== instance.tenantId) {
    throw new UnprocessableEntityError(`Individual VNF snapshot ${id} does not exist; create it with POST /vnflcm/v2/vnf_snapshots first`);
  }
  return record;
}

/** Takes the snapshot resource for a new op occ and starts the operation; gives the resource back if it does not start. */
async function startWithSnapshot(
  deps: CoreDeps,
  caller: Caller,
  instance: VnfInstanceRecord,
  snapshot: VnfSnapshotInfoRecord,
  operation: 'CREATE_SNAPSHOT' | 'REVERT_TO_SNAPSHOT',
  request: CreateVnfSnapshotRequest | RevertToVnfSnapshotRequest,
  version: ApiMajorVersion,
): Promise<VnfLcmOpOccRecord> {
  const opOccId = deps.newId();
  await claimVnfSnapshotInfo(deps, snapshot, opOccId, operation === 'CREATE_SNAPSHOT');
  try {
    return await startOperation(deps, {
      id: opOccId,
      tenantId: instance.tenantId,
      ...requestedBy(caller),
      vnfInstanceId: instance.id,
      operation,
      operationParams: request,
      apiMajorVersion: version,
      requireState: 'INSTANTIATED',
      internal: { vim: instance.vimResources?.vim, vnfSnapshotInfoId: snapshot.id },
    });
  } catch (error) {
    await snapshotStore(deps).release(snapshot.id, opOccId);
    throw error;
  }
}

export async function requestCreateSnapshot(
  deps: CoreDeps,
  caller: Caller,
  id: string,
  request: CreateVnfSnapshotRequest,
  version: ApiMajorVersion,
): Promise<VnfLcmOpOccRecord> {
  const instance = await getVnfInstance(deps, caller, id);
  instantiatedOrConflict(instance, 'a snapshot of it can be taken');
  if (request.vnfcInstanceId !== undefined && !vnfcResourceInfoIdOf(instance.instantiatedVnfInfo, request.vnfcInstanceId)) {
    throw new UnprocessableEntityError(`VNF instance ${id} has no VNFC ${request.vnfcInstanceId}; vnfcInstanceId names an id of its vnfcInfo`);
  }
  const driver = await driverOf(instance.vimResources?.vim);
  if (!driver.snapshotStart) throw new UnprocessableEntityError(`The VIM of VNF instance ${id} (${instance.vimResources?.vim.vimType}) cannot take snapshots`);
  const snapshot = await namedSnapshot(deps, caller, instance, request.vnfSnapshotInfoId);
  return startWithSnapshot(deps, caller, instance, snapshot, 'CREATE_SNAPSHOT', request, version);
}

export async function requestRevertToSnapshot(
  deps: CoreDeps,
  caller: Caller,
  id: string,
  request: RevertToVnfSnapshotRequest,
  version: ApiMajorVersion,
): Promise<VnfLcmOpOccRecord> {
  const instance = await getVnfInstance(deps, caller, id);
  instantiatedOrConflict(instance, 'it can be reverted to a snapshot');
  const snapshot = await namedSnapshot(deps, caller, instance, request.vnfSnapshotInfoId);
  const taken = snapshot.vnfSnapshot;
  if (!taken) throw new ConflictError(`Individual VNF snapshot ${snapshot.id} holds no VNF snapshot yet`);
  if (taken.vnfInstanceId !== instance.id) {
    throw new UnprocessableEntityError(`Individual VNF snapshot ${snapshot.id} is a snapshot of VNF instance ${taken.vnfInstanceId}, not of ${instance.id}`);
  }
  if (!taken.creationFinishedAt || !snapshot.driverState) throw new ConflictError(`The VNF snapshot in ${snapshot.id} is not complete`);
  const driver = await driverOf(instance.vimResources?.vim);
  if (!driver.revertStart)
    throw new UnprocessableEntityError(`The VIM of VNF instance ${id} (${instance.vimResources?.vim.vimType}) cannot revert to snapshots`);
  if (request.vnfcInstanceId !== undefined) {
    if ((snapshot.driverState as SnapshotState).wholeVnfOnly) {
      throw new UnprocessableEntityError(`The VNFCs in ${snapshot.id} are reverted together (pods of one workload are alike): revert the whole VNF`);
    }
    const current = vnfcResourceInfoIdOf(instance.instantiatedVnfInfo, request.vnfcInstanceId);
    if (!current) throw new UnprocessableEntityError(`VNF instance ${id} has no VNFC ${request.vnfcInstanceId}; vnfcInstanceId names an id of its vnfcInfo`);
    const vnfc = taken.vnfcSnapshots.find((candidate) => candidate.id === request.vnfcSnapshotInfoId);
    if (!vnfc) throw new UnprocessableEntityError(`The VNF snapshot in ${snapshot.id} has no VNFC snapshot ${request.vnfcSnapshotInfoId}`);
    const vduOf = (vnfcResourceInfoId: string) =>
      ((instance.instantiatedVnfInfo?.vnfcResourceInfo ?? []) as Array<{ id: string; vduId: string }>).find((entry) => entry.id === vnfcResourceInfoId)?.vduId;
    if (vduOf(current) !== vnfc.vduId) {
      throw new UnprocessableEntityError(`VNFC ${request.vnfcInstanceId} is of ${vduOf(current)}; VNFC snapshot ${vnfc.id} is of ${vnfc.vduId}`);
    }
  }
  return startWithSnapshot(deps, caller, instance, snapshot, 'REVERT_TO_SNAPSHOT', request, version);
}

// What a VNF snapshot is made of, worked out from the instance's records (pure): the VNFCs a
// CREATE_SNAPSHOT takes, the SOL003 VnfSnapshot it records (the instance as it was, a VnfcSnapshotInfo
// per VNFC with the VIM's snapshot resources), and what a REVERT_TO_SNAPSHOT asks of the driver.
import { publicVimConnectionInfo, VNF_INSTANCE_ATTRIBUTES, type VnfcSnapshotRecord, type VnfInstanceRecord, type VnfSnapshotRecord } from '#lib/sol/model.ts';
import type { RevertTarget, SnapshotState, SnapshotTarget, VnfcRef } from '#lib/vim/driver.ts';

type Info = Record<string, unknown> | undefined;

const list = (info: Info, key: string): Array<Record<string, unknown>> => (Array.isArray(info?.[key]) ? (info[key] as Array<Record<string, unknown>>) : []);

/** The vnfcResourceInfo id of a VNFC named by its vnfcInfo id (or by its vnfcResourceInfo id), if the instance has it. */
export function vnfcResourceInfoIdOf(info: Info, vnfcInstanceId: string): string | undefined {
  const byInfo = list(info, 'vnfcInfo').find((entry) => entry.id === vnfcInstanceId);
  if (byInfo && typeof byInfo.vnfcResourceInfoId === 'string') return byInfo.vnfcResourceInfoId;
  return list(info, 'vnfcResourceInfo').some((entry) => entry.id === vnfcInstanceId) ? vnfcInstanceId : undefined;
}

/** The vnfcInfo id of a VNFC (SOL003 VnfcSnapshotInfo.vnfcInstanceId), its vnfcResourceInfo id when it has none. */
function vnfcInstanceIdOf(info: Info, vnfcResourceInfoId: string): string {
  const entry = list(info, 'vnfcInfo').find((candidate) => candidate.vnfcResourceInfoId === vnfcResourceInfoId);
  return typeof entry?.id === 'string' ? entry.id : vnfcResourceInfoId;
}

/** The instance's VNFCs, as the engine names them to a driver, in the order instantiatedVnfInfo has them (oldest first). */
export function vnfcsOf(info: Info): Array<VnfcRef & { id: string }> {
  return list(info, 'vnfcResourceInfo').map((vnfc) => ({
    id: String(vnfc.id),
    vduId: String(vnfc.vduId),
    resourceId: String((vnfc.computeResource as { resourceId?: unknown } | undefined)?.resourceId ?? ''),
  }));
}

/** The VNFCs a snapshot takes: all, or the one `vnfcInstanceId` names; each with its storage's VIM resources. */
export function snapshotTarget(info: Info, name: string, vnfcInstanceId?: string): SnapshotTarget {
  const only = vnfcInstanceId === undefined ? undefined : vnfcResourceInfoIdOf(info, vnfcInstanceId);
  const storages = new Map(
    list(info, 'virtualStorageResourceInfo').map((storage) => [
      String(storage.id),
      String((storage.storageResource as { resourceId?: unknown } | undefined)?.resourceId ?? ''),
    ]),
  );
  return {
    name,
    vnfcs: list(info, 'vnfcResourceInfo')
      .filter((vnfc) => only === undefined || vnfc.id === only)
      .map((vnfc) => ({
        vnfcResourceInfoId: String(vnfc.id),
        vduId: String(vnfc.vduId),
        resourceId: String((vnfc.computeResource as { resourceId?: unknown } | undefined)?.resourceId ?? ''),
        storages: (Array.isArray(vnfc.storageResourceIds) ? (vnfc.storageResourceIds as string[]) : [])
          .filter((id) => storages.get(id))
          .map((id) => ({ storageResourceId: id, resourceId: storages.get(id) as string })),
      })),
  };
}

/** The instance's API-visible attributes (no credentials, no internal state), as a VnfSnapshot keeps them. */
export function publicInstance(instance: VnfInstanceRecord): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of VNF_INSTANCE_ATTRIBUTES) {
    const value = (instance as unknown as Record<string, unknown>)[key];
    if (value !== undefined && key !== '_links') copy[key] = value;
  }
  const vim = publicVimConnectionInfo(instance.vimConnectionInfo);
  if (vim) copy.vimConnectionInfo = vim;
  return copy;
}

/**
 * The VNF snapshot a CREATE_SNAPSHOT records from its driver's snapshot state: one VnfcSnapshotInfo per
 * VNFC, keeping the ids (and start times) `previous` gave them, finished once the driver says so.
 */
export function vnfSnapshotOf(
  base: Omit<VnfSnapshotRecord, 'vnfcSnapshots' | 'vnfInstance'> & { vnfInstance: VnfInstanceRecord },
  state: SnapshotState,
  newId: () => string,
  previous: VnfcSnapshotRecord[] = [],
): VnfSnapshotRecord {
  const info = base.vnfInstance.instantiatedVnfInfo;
  const vnfcSnapshots = state.vnfcSnapshots.map((vnfc): VnfcSnapshotRecord => {
    const before = previous.find((candidate) => candidate.vnfcResourceInfoId === vnfc.vnfcResourceInfoId);
    return {
      id: before?.id ?? newId(),
      vnfcInstanceId: vnfcInstanceIdOf(info, vnfc.vnfcResourceInfoId),
      vnfcResourceInfoId: vnfc.vnfcResourceInfoId,
      vduId: vnfc.vduId,
      creationStartedAt: before?.creationStartedAt ?? base.creationStartedAt,
      ...(vnfc.finishedAt ? { creationFinishedAt: vnfc.finishedAt } : {}),
      ...(vnfc.computeSnapshotResource ? { computeSnapshotResource: vnfc.computeSnapshotResource } : {}),
      ...(vnfc.storageSnapshotResources.length ? { storageSnapshotResources: vnfc.storageSnapshotResources } : {}),
    };
  });
  return { ...base, vnfInstance: publicInstance(base.vnfInstance), vnfcSnapshots };
}

/** VNFCs per VDU in an instantiatedVnfInfo. */
export function countsOf(info: Info): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const vnfc of vnfcsOf(info)) counts[vnfc.vduId] = (counts[vnfc.vduId] ?? 0) + 1;
  return counts;
}

/**
 * What a REVERT_TO_SNAPSHOT asks of the driver: the whole VNF back to the snapshot's VNFC counts and
 * content, or (vnfcInstanceId + vnfcSnapshotInfoId) one VNFC back to one VNFC snapshot.
 */
export function revertTarget(
  snapshot: VnfSnapshotRecord,
  state: SnapshotState,
  info: Info,
  request: { vnfcInstanceId?: string; vnfcSnapshotInfoId?: string },
): RevertTarget {
  const current = vnfcsOf(info).map(({ vduId, resourceId }) => ({ vduId, resourceId }));
  if (request.vnfcInstanceId !== undefined && request.vnfcSnapshotInfoId !== undefined) {
    const id = vnfcResourceInfoIdOf(info, request.vnfcInstanceId);
    const resourceId = vnfcsOf(info).find((vnfc) => vnfc.id === id)?.resourceId ?? '';
    const vnfc = snapshot.vnfcSnapshots.find((candidate) => candidate.id === request.vnfcSnapshotInfoId);
    return { snapshot: state, current, only: { resourceId, vnfcResourceInfoId: vnfc?.vnfcResourceInfoId ?? '' } };
  }
  return { snapshot: state, current, counts: countsOf(snapshot.vnfInstance.instantiatedVnfInfo as Info) };
}

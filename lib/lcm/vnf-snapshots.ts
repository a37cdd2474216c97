// SOL003 "VNF snapshots" and "Individual VNF snapshot" resources (5.4.23): create an empty one for
// CREATE_SNAPSHOT to fill, read, list, delete (with the snapshots it holds on the VIM). A resource
// is in use while the op occ that took it (filling it, or reverting to it) has not ended; rules
// only, no HTTP.
import { ConflictError, NotFoundError, ProblemError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import {
  renderVnfSnapshotInfo,
  TERMINAL_STATES,
  VNF_SNAPSHOT_INFO_ATTRIBUTES,
  VNF_SNAPSHOT_INFO_DEFAULT_EXCLUDED,
  type VnfSnapshotInfoRecord,
} from '#lib/sol/model.ts';
import type { CreateVnfSnapshotInfoRequest } from '#lib/sol/requests.ts';
import type { SnapshotState, VimConnection } from '#lib/vim/driver.ts';
import { vnfSnapshotListKey, type VnfSnapshotStore } from '#lib/store/vnf-snapshots.ts';
import { listCollection, type ListResult } from '#lib/sol/listing.ts';
import { canSee, listScope, type Caller } from '#lib/auth/tenancy.ts';
import { log } from '#lib/log.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { driverOf, vimConnection } from './engine/context.ts';

/** A claim whose op occ was never written (the request died between the two writes) is taken over after this long. */
const ORPHAN_CLAIM_GRACE_MS = 60_000;

export function snapshotStore(deps: CoreDeps): VnfSnapshotStore {
  if (!deps.snapshots) throw new ProblemError(503, 'Service Unavailable', 'VNF snapshots are not available in this deployment');
  return deps.snapshots;
}

export async function createVnfSnapshotInfo(deps: CoreDeps, caller: Caller, request: CreateVnfSnapshotInfoRequest): Promise<VnfSnapshotInfoRecord> {
  if (request.vnfSnapshotPkgId !== undefined) {
    throw new UnprocessableEntityError(
      'This VNFM does not extract VNF snapshot packages; create the resource empty (no vnfSnapshotPkgId, no vnfSnapshot) and fill it with the create_snapshot task',
    );
  }
  const id = deps.newId();
  const now = deps.now();
  const record: VnfSnapshotInfoRecord = { id, tenantId: caller.tenantId, createdAt: now, createdSeq: `${now}#${id}`, revision: 1 };
  await snapshotStore(deps).create(record);
  return record;
}

export async function getVnfSnapshotInfo(deps: CoreDeps, caller: Caller, id: string): Promise<VnfSnapshotInfoRecord> {
  const record = await snapshotStore(deps).get(id);
  // Another tenant's resource looks exactly like a missing one.
  if (!record || !canSee(caller, record.tenantId)) throw new NotFoundError(`Individual VNF snapshot ${id} does not exist`);
  return record;
}

export function listVnfSnapshotInfos(deps: CoreDeps, caller: Caller, baseUrl: string, rawQuery: string, pageSize: number): Promise<ListResult> {
  const store = snapshotStore(deps);
  return listCollection(
    {
      resource: 'v2/vnf_snapshots',
      attributes: VNF_SNAPSHOT_INFO_ATTRIBUTES,
      defaultExcluded: VNF_SNAPSHOT_INFO_DEFAULT_EXCLUDED,
      alwaysIncluded: ['id', '_links'],
      scope: listScope(caller),
      fetch: (scope, limit, after) => store.listPage(scope, limit, after),
      render: (record) => renderVnfSnapshotInfo(record, baseUrl),
      keyOf: vnfSnapshotListKey,
    },
    rawQuery,
    pageSize,
  );
}

/** What uses the resource now (a sentence for a 409), or undefined when nothing does. */
export async function userOf(deps: CoreDeps, record: VnfSnapshotInfoRecord): Promise<string | undefined> {
  if (!record.usedBy) return undefined;
  const occ = await deps.opOccs.get(record.usedBy);
  if (occ) return TERMINAL_STATES.includes(occ.operationState) ? undefined : `LCM operation occurrence ${occ.id} (${occ.operation}, ${occ.operationState})`;
  const orphaned = Date.parse(record.usedSince ?? '') < Date.parse(deps.now()) - ORPHAN_CLAIM_GRACE_MS;
  return orphaned ? undefined : 'an operation that is starting, or its deletion';
}

/** Takes the resource for `opOccId`, or explains (409) why it cannot be taken. */
export async function claimVnfSnapshotInfo(deps: CoreDeps, record: VnfSnapshotInfoRecord, opOccId: string, requireEmpty: boolean): Promise<void> {
  const user = await userOf(deps, record);
  if (user) throw new ConflictError(`Individual VNF snapshot ${record.id} is in use by ${user}`);
  if (requireEmpty && record.vnfSnapshot) {
    throw new ConflictError(`Individual VNF snapshot ${record.id} already holds VNF snapshot ${record.vnfSnapshot.id}; create a new one to snapshot into`);
  }
  const claimed = await snapshotStore(deps).claim(record.id, { opOccId, now: deps.now(), takeOverFrom: record.usedBy, requireEmpty });
  if (!claimed) throw new ConflictError(`Individual VNF snapshot ${record.id} changed concurrently; try again`);
}

/** Removes what a snapshot holds on its VIM (images, volume snapshots), if anything. */
export async function deleteVimSnapshot(deps: CoreDeps, record: Pick<VnfSnapshotInfoRecord, 'id' | 'vim' | 'driverState'>): Promise<void> {
  if (!record.vim || !record.driverState) return;
  const driver = await driverOf(record.vim);
  if (!driver.deleteSnapshot) return;
  const snapshot = record.driverState as SnapshotState;
  let vim: VimConnection;
  try {
    vim = await vimConnection(deps, record.vim);
  } catch (error) {
    if ((error as { name?: string }).name !== 'ResourceNotFoundException') throw error;
    // The credentials went with the VNF instance they belonged to (deleted since): the VNFM can no
    // longer reach the VIM for this snapshot, so what it holds there is named for the operator.
    log.warn("a VNF snapshot's VIM credentials are gone; its snapshots stay on the VIM", {
      vnfSnapshotInfoId: record.id,
      vimId: record.vim.vimId,
      vimResources: (snapshot.vnfcSnapshots ?? []).flatMap((vnfc) => [
        ...(vnfc.computeSnapshotResource ? [vnfc.computeSnapshotResource.resourceId] : []),
        ...vnfc.storageSnapshotResources.map((storage) => String(storage.storageSnapshotResource?.resourceId ?? '')),
      ]),
    });
    return;
  }
  await driver.deleteSnapshot(vim, snapshot);
  log.info('deleted the VIM snapshots of a VNF snapshot', { vnfSnapshotInfoId: record.id, vimId: record.vim.vimId });
}

/** SOL003 5.4.23.3.5: deletes the resource and the snapshots it holds on the VIM; 409 while an operation uses it. */
export async function deleteVnfSnapshotInfo(deps: CoreDeps, caller: Caller, id: string): Promise<void> {
  const record = await getVnfSnapshotInfo(deps, caller, id);
  const store = snapshotStore(deps);
  // Taken for the deletion first, so no operation starts on it while its VIM snapshots go.
  const deletion = `deletion-${deps.newId()}`;
  await claimVnfSnapshotInfo(deps, record, deletion, false);
  try {
    await deleteVimSnapshot(deps, record);
  } catch (error) {
    await store.release(id, deletion);
    throw error;
  }
  if (!(await store.deleteUnused(id, deletion))) throw new ConflictError(`Individual VNF snapshot ${id} changed concurrently; try again`);
}

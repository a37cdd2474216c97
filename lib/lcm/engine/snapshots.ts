// The steps of CREATE_SNAPSHOT and REVERT_TO_SNAPSHOT (SOL003 5.4.21, 5.4.22), run by the update
// machine. CREATE_SNAPSHOT: the driver snapshots the VNFCs, the "Individual VNF snapshot" records
// the VnfSnapshot from the start (with what the VIM is making) and is complete when the VIM is; its
// rollback deletes what the attempt made. REVERT_TO_SNAPSHOT: the driver puts the VNF back as the
// snapshot has it, then instantiatedVnfInfo is read back from the VIM. Neither asks for a grant:
// a snapshot adds no VNF resources, and a revert only returns to counts the VNF had.
import { BadRequestError, ConflictError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { VnfSnapshotInfoRecord, VnfSnapshotRecord } from '#lib/sol/model.ts';
import type { RevertToVnfSnapshotRequest } from '#lib/sol/requests.ts';
import type { InfraDriver, RevertTarget, SnapshotState } from '#lib/vim/driver.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { resourceDiff } from '#lib/lcm/scale-heal.ts';
import { saveDriverState, updateOpOcc } from '#lib/lcm/op-occs.ts';
import { revertTarget, snapshotTarget, vnfSnapshotOf } from '#lib/lcm/snapshot-content.ts';
import { deleteVimSnapshot, snapshotStore } from '#lib/lcm/vnf-snapshots.ts';
import { driverOf, hook, instanceContext } from './context.ts';
import { collectedOf, recollect } from './records.ts';
import { forgetAttempt, nothingToDo, restoredOnVim } from './shared-steps.ts';
import { polled, progressed, started, type Loaded, type Step, type StepTable } from './step.ts';

async function snapshotInfoOf(deps: CoreDeps, { opOcc }: Loaded): Promise<VnfSnapshotInfoRecord> {
  const id = opOcc.vnfSnapshotInfoId;
  const record = id ? await snapshotStore(deps).get(id) : undefined;
  if (!record) throw new BadRequestError(`VNF LCM operation occurrence ${opOcc.id} names no Individual VNF snapshot that still exists (${id ?? 'none'})`);
  return record;
}

/** Writes the snapshot resource; only the operation that took it may. */
async function saveSnapshotInfo(deps: CoreDeps, loaded: Loaded, id: string, set: Record<string, unknown>, remove: string[] = []): Promise<void> {
  if (!(await snapshotStore(deps).updateFor(id, loaded.opOcc.id, set, remove))) {
    throw new ConflictError(`VNF LCM operation occurrence ${loaded.opOcc.id} no longer holds Individual VNF snapshot ${id}`);
  }
}

function capable<K extends keyof InfraDriver>(driver: InfraDriver, method: K, vimType: string | undefined): NonNullable<InfraDriver[K]> {
  const found = driver[method];
  if (!found) throw new UnprocessableEntityError(`VIMs of type ${vimType ?? '(none)'} cannot take or revert to VNF snapshots`);
  return found as NonNullable<InfraDriver[K]>;
}

// ---------------------------------------------------------------------------------------------
// CREATE_SNAPSHOT

const createStart: Step = async (deps, loaded) => {
  const { opOcc, instance } = loaded;
  const vim = instance.vimResources?.vim;
  const driver = await driverOf(vim);
  const start = capable(driver, 'snapshotStart', vim?.vimType);
  const record = await snapshotInfoOf(deps, loaded);
  // A retried attempt starts afresh: what the failed one made on the VIM goes first.
  await deleteVimSnapshot(deps, record);
  const ctx = await instanceContext(deps, loaded, vim);
  await hook(deps, loaded, ctx, 'start');
  const params = opOcc.operationParams as { vnfcInstanceId?: string; userDefinedData?: Record<string, unknown> };
  const vnfSnapshotId = deps.newId();
  const creationStartedAt = deps.now();
  const state = await start.call(
    driver,
    ctx,
    instance.vimResources?.driverState ?? {},
    snapshotTarget(instance.instantiatedVnfInfo, `vnf-snapshot-${vnfSnapshotId}`, params.vnfcInstanceId),
  );
  const vnfSnapshot = vnfSnapshotOf(
    {
      id: vnfSnapshotId,
      vnfInstanceId: instance.id,
      creationStartedAt,
      vnfdId: instance.vnfdId,
      vnfInstance: instance,
      ...(params.userDefinedData ? { userDefinedData: params.userDefinedData } : {}),
    },
    state,
    deps.newId,
  );
  await saveSnapshotInfo(deps, loaded, record.id, { vnfSnapshot, vim, driverState: state });
  await saveDriverState(deps, opOcc, state);
  return started();
};

const createPoll: Step = async (deps, loaded, polls) => {
  const { opOcc, instance } = loaded;
  const vim = instance.vimResources?.vim;
  const driver = await driverOf(vim);
  const poll = capable(driver, 'snapshotPoll', vim?.vimType);
  const progress = await poll.call(driver, await instanceContext(deps, loaded, vim), (opOcc.driverState ?? { vnfcSnapshots: [] }) as SnapshotState);
  return progressed(deps, opOcc, progress, polls);
};

const createFinish: Step = async (deps, loaded, polls) => {
  const { opOcc, instance } = loaded;
  const record = await snapshotInfoOf(deps, loaded);
  const previous = record.vnfSnapshot;
  if (!previous) throw new ConflictError(`Individual VNF snapshot ${record.id} lost the VNF snapshot this operation started`);
  await hook(deps, loaded, await instanceContext(deps, loaded, instance.vimResources?.vim), 'end');
  const state = (opOcc.driverState ?? { vnfcSnapshots: [] }) as SnapshotState;
  const { vnfcSnapshots: _vnfcs, vnfInstance: _instance, ...base } = previous;
  const vnfSnapshot: VnfSnapshotRecord = {
    ...vnfSnapshotOf({ ...base, vnfInstance: instance }, state, deps.newId, previous.vnfcSnapshots),
    // The instance as it was when the snapshot started (this operation has not changed it).
    vnfInstance: previous.vnfInstance,
    creationFinishedAt: deps.now(),
  };
  await saveSnapshotInfo(deps, loaded, record.id, { vnfSnapshot, driverState: state });
  return polled(polls);
};

/** A rolled-back CREATE_SNAPSHOT leaves the snapshot resource empty and nothing on the VIM. */
const createRollbackStart: Step = async (deps, loaded) => {
  const record = await snapshotInfoOf(deps, loaded);
  const state = loaded.opOcc.driverState ?? record.driverState;
  await deleteVimSnapshot(deps, { id: record.id, vim: record.vim ?? loaded.instance.vimResources?.vim, driverState: state });
  await saveSnapshotInfo(deps, loaded, record.id, {}, ['vnfSnapshot', 'driverState', 'vim']);
  return started();
};

export const createSnapshotSteps: StepTable = {
  grant: nothingToDo,
  'update-start': createStart,
  'update-poll': createPoll,
  'update-finish': createFinish,
  'rollback-start': createRollbackStart,
  'rollback-poll': nothingToDo,
  'rollback-finish': forgetAttempt,
};

// ---------------------------------------------------------------------------------------------
// REVERT_TO_SNAPSHOT

async function targetOf(deps: CoreDeps, loaded: Loaded): Promise<RevertTarget> {
  const record = await snapshotInfoOf(deps, loaded);
  if (!record.vnfSnapshot || !record.driverState) throw new ConflictError(`Individual VNF snapshot ${record.id} holds no complete VNF snapshot`);
  const request = loaded.opOcc.operationParams as Partial<RevertToVnfSnapshotRequest>;
  return revertTarget(record.vnfSnapshot, record.driverState as SnapshotState, loaded.instance.instantiatedVnfInfo, request);
}

const revertStart: Step = async (deps, loaded) => {
  const { opOcc, instance } = loaded;
  const vim = instance.vimResources?.vim;
  const driver = await driverOf(vim);
  const start = capable(driver, 'revertStart', vim?.vimType);
  const ctx = await instanceContext(deps, loaded, vim);
  await hook(deps, loaded, ctx, 'start');
  const target = await targetOf(deps, loaded);
  // The target is kept on the op occ: a retry or the polls work on the VNFCs the instance had when it started.
  await updateOpOcc(deps, opOcc, { change: { kind: 'REVERT', target } });
  await saveDriverState(deps, opOcc, await start.call(driver, ctx, instance.vimResources?.driverState ?? {}, target));
  return started();
};

const recordedTarget = (loaded: Loaded): RevertTarget => {
  const change = loaded.opOcc.change as { kind?: string; target?: RevertTarget } | undefined;
  if (change?.kind !== 'REVERT' || !change.target) throw new BadRequestError(`VNF LCM operation occurrence ${loaded.opOcc.id} records no revert target`);
  return change.target;
};

const revertPoll: Step = async (deps, loaded, polls) => {
  const { opOcc, instance } = loaded;
  const vim = instance.vimResources?.vim;
  const driver = await driverOf(vim);
  const poll = capable(driver, 'revertPoll', vim?.vimType);
  const progress = await poll.call(
    driver,
    await instanceContext(deps, loaded, vim),
    opOcc.driverState ?? instance.vimResources?.driverState ?? {},
    recordedTarget(loaded),
  );
  return progressed(deps, opOcc, progress, polls);
};

/** instantiatedVnfInfo read back from the VIM; the scale levels the snapshot had, when the whole VNF went back to it. */
const revertFinish: Step = async (deps, current, polls) => {
  let loaded = current;
  // What the driver could not revert is said on the op occ (SOL003 5.5.2.13 warnings), not kept in the VNF's driver state.
  const { warnings, ...driverState } = loaded.opOcc.driverState ?? {};
  if (Array.isArray(warnings) && warnings.length) {
    await updateOpOcc(deps, loaded.opOcc, { warnings, driverState });
    loaded = { ...loaded, opOcc: { ...loaded.opOcc, driverState } };
  }
  const { opOcc, instance } = loaded;
  const target = recordedTarget(loaded);
  const record = await snapshotInfoOf(deps, loaded);
  const scaleStatus = (record.vnfSnapshot?.vnfInstance.instantiatedVnfInfo as { scaleStatus?: unknown } | undefined)?.scaleStatus;
  const info = await recollect(deps, loaded, target.only || scaleStatus === undefined ? {} : { scaleStatus }, true);
  // The VDUs whose VNFCs got their content back from a compute snapshot (rebuilt servers) are MODIFIED.
  const reverted = new Set(
    (record.vnfSnapshot?.vnfcSnapshots ?? [])
      .filter((vnfc) => vnfc.computeSnapshotResource && (!target.only || vnfc.vnfcResourceInfoId === target.only.vnfcResourceInfoId))
      .map((vnfc) => vnfc.vduId),
  );
  await updateOpOcc(deps, opOcc, { resourceChanges: resourceDiff(collectedOf(instance.instantiatedVnfInfo), collectedOf(info), reverted) });
  return polled(polls);
};

export const revertToSnapshotSteps: StepTable = {
  grant: nothingToDo,
  'update-start': revertStart,
  'update-poll': revertPoll,
  'update-finish': revertFinish,
  // What a failed revert rebuilt cannot be un-rebuilt: a rollback records the VNF as the VIM has it.
  'rollback-start': nothingToDo,
  'rollback-poll': nothingToDo,
  'rollback-finish': restoredOnVim,
};

// The bookkeeping of a step on the records: the instance written under the operation's lock,
// instantiatedVnfInfo rebuilt from what the VIM reports, and the op occ's resourceChanges.
import { ConflictError } from '#lib/sol/errors.ts';
import type { VnfInstanceRecord } from '#lib/sol/model.ts';
import type { CollectedResources, OperationContext } from '#lib/vim/driver.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { ageOrdered } from '#lib/lcm/scale-heal.ts';
import { vnfStateOf } from '#lib/lcm/operate.ts';
import { driverOf, hook, instanceContext } from './context.ts';
import type { Loaded } from './step.ts';

export function lostLock({ opOcc, instance }: Loaded): ConflictError {
  return new ConflictError(`VNF LCM operation occurrence ${opOcc.id} lost the lock of VNF instance ${instance.id}`);
}

/**
 * Writes the instance; only the operation holding its lock may, and only while its op occ is still
 * in the state the step began in: a step that runs on after its execution was stopped (a FORCEFUL
 * cancel moved the op occ to FAILED_TEMP meanwhile) leaves the instance as retry and rollback expect it.
 */
export async function saveInstance(deps: CoreDeps, loaded: Loaded, set: Record<string, unknown>, remove: string[] = []): Promise<void> {
  const state = (await deps.opOccs.get(loaded.opOcc.id))?.operationState;
  if (state !== loaded.opOcc.operationState)
    throw new ConflictError(`VNF LCM operation occurrence ${loaded.opOcc.id} is ${state ?? 'gone'}; the step no longer writes its VNF instance`);
  if (!(await deps.instances.updateUnderLock(loaded.instance.id, loaded.opOcc.id, { set, remove }))) throw lostLock(loaded);
}

/** SOL003 resourceChanges of resources all added (INSTANTIATE) or all removed (TERMINATE). */
export function resourceChanges(collected: CollectedResources, changeType: 'ADDED' | 'REMOVED'): Record<string, unknown> {
  return {
    affectedVnfcs: collected.vnfcResourceInfo.map((vnfc) => ({
      id: vnfc.id,
      vduId: vnfc.vduId,
      changeType,
      computeResource: vnfc.computeResource,
      ...(Array.isArray(vnfc.vnfcCpInfo) ? { affectedVnfcCpIds: (vnfc.vnfcCpInfo as Array<{ id: string }>).map((cp) => cp.id) } : {}),
      ...(Array.isArray(vnfc.storageResourceIds) && vnfc.storageResourceIds.length
        ? { [changeType === 'ADDED' ? 'addedStorageResourceIds' : 'removedStorageResourceIds']: vnfc.storageResourceIds }
        : {}),
    })),
    affectedVirtualLinks: collected.vnfVirtualLinkResourceInfo.map((vl) => ({
      id: vl.id,
      vnfVirtualLinkDescId: vl.vnfVirtualLinkDescId,
      changeType,
      networkResource: vl.networkResource,
    })),
    affectedVirtualStorages: collected.virtualStorageResourceInfo.map((st) => ({
      id: st.id,
      virtualStorageDescId: st.virtualStorageDescId,
      changeType,
      storageResource: st.storageResource,
    })),
  };
}

/** The collected resources of an instance, rebuilt from its instantiatedVnfInfo (for REMOVED changes). */
export function collectedOf(info: Record<string, unknown> | undefined): CollectedResources {
  const list = (key: string) => (Array.isArray(info?.[key]) ? info[key] : []) as Array<Record<string, unknown>>;
  return {
    vnfcResourceInfo: list('vnfcResourceInfo'),
    vnfVirtualLinkResourceInfo: list('vnfVirtualLinkResourceInfo'),
    virtualStorageResourceInfo: list('virtualStorageResourceInfo'),
    extCpInfo: list('extCpInfo'),
  };
}

/**
 * instantiatedVnfInfo once an operation has changed the VNF's resources: what the VIM reports now,
 * the VNFCs the instance already had keeping their places (oldest first), the rest as it was.
 */
export function infoAfter(instance: VnfInstanceRecord, collected: CollectedResources): Record<string, unknown> {
  return {
    ...instance.instantiatedVnfInfo,
    extCpInfo: collected.extCpInfo,
    vnfcResourceInfo: ageOrdered(collectedOf(instance.instantiatedVnfInfo).vnfcResourceInfo, collected.vnfcResourceInfo),
    vnfVirtualLinkResourceInfo: collected.vnfVirtualLinkResourceInfo,
    virtualStorageResourceInfo: collected.virtualStorageResourceInfo,
    ...(collected.vnfcInfo ? { vnfcInfo: collected.vnfcInfo } : {}),
    // The VNF's operational state follows its VNFCs' as the VIM shows them (OPERATE, or a VNFC
    // replaced by a heal).
    ...(vnfStateOf(collected.vnfcInfo) ? { vnfState: vnfStateOf(collected.vnfcInfo) } : {}),
    ...(collected.extVirtualLinkInfo?.length ? { extVirtualLinkInfo: collected.extVirtualLinkInfo } : {}),
  };
}

/**
 * Reads the instance's resources back from the VIM after its driver state changed (SCALE, HEAL,
 * a rolled-back SCALE or CHANGE_VNFPKG) and stores them, with the new driver state and `extra`
 * attributes of instantiatedVnfInfo, under the operation's lock. `finishing`: the operation ends
 * here, and its `_end` script runs on the new instantiatedVnfInfo before it is recorded; a rollback
 * records what the VIM has without running it.
 */
export async function recollect(deps: CoreDeps, loaded: Loaded, extra: Record<string, unknown>, finishing: boolean): Promise<Record<string, unknown>> {
  const { opOcc, instance } = loaded;
  const vim = instance.vimResources?.vim;
  if (!vim || !instance.vimResources) throw new ConflictError(`VNF instance ${instance.id} has no VIM resources`);
  const driverState = opOcc.driverState ?? instance.vimResources.driverState;
  const ctx = await instanceContext(deps, loaded, vim);
  const collected = await (await driverOf(vim)).collect(ctx, driverState);
  const info = { ...infoAfter(instance, collected), ...extra };
  if (finishing) await endHookOn(deps, loaded, ctx, info);
  await saveInstance(deps, loaded, { instantiatedVnfInfo: info, vimResources: { ...instance.vimResources, driverState } });
  return info;
}

/**
 * The operation's `_end` script, run on the VNF as the operation left it (its new
 * instantiatedVnfInfo) before that is recorded, as Tacker runs it: a script configuring the VNF
 * after a scale or a heal finds the VNFCs it has now.
 */
export function endHookOn(deps: CoreDeps, loaded: Loaded, ctx: OperationContext, info: Record<string, unknown>): Promise<void> {
  return hook(deps, { ...loaded, instance: { ...loaded.instance, instantiatedVnfInfo: info } as VnfInstanceRecord }, ctx, 'end');
}

// OPERATE (SOL003 5.4.10): the change it makes, worked out once here for the request
// (lib/lcm/requests/operate.ts) and the steps (lib/lcm/engine/operate.ts): the VNFCs named (every
// VNFC when none are) are brought to the requested state, those already there left alone by the
// driver. What the VNF's and each VNFC's state is, is read back from the VIM (vnfcInfo[].vnfcState);
// the VNF is STOPPED when it has VNFCs and none of them is STARTED.
import { UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { OperateVnfRequest } from '#lib/sol/requests.ts';
import type { OperateChange, VnfcRef } from '#lib/vim/driver.ts';
import { vnfcsOf } from './scale-heal.ts';

type Info = Record<string, unknown>;

const list = (info: Info | undefined, key: string): Info[] => (Array.isArray(info?.[key]) ? info[key] : []) as Info[];

/** The change an OPERATE makes: the VNFCs named by vnfcInfo id (or vnfcResourceInfo id), all when none are; 422 for an id the instance does not have. */
export function operateChange(info: Info | undefined, request: OperateVnfRequest): OperateChange {
  const vnfcs = vnfcsOf(info);
  const byInfoId = new Map(list(info, 'vnfcInfo').map((entry) => [String(entry.id), String(entry.vnfcResourceInfoId)]));
  let chosen: VnfcRef[];
  if (!request.vnfcInstanceId?.length) {
    chosen = vnfcs.map(({ vduId, resourceId }) => ({ vduId, resourceId }));
  } else {
    chosen = [];
    const unknown: string[] = [];
    for (const id of new Set(request.vnfcInstanceId)) {
      const vnfc = vnfcs.find((candidate) => candidate.id === (byInfoId.get(id) ?? id));
      if (!vnfc) unknown.push(id);
      else if (!chosen.some((known) => known.resourceId === vnfc.resourceId)) chosen.push({ vduId: vnfc.vduId, resourceId: vnfc.resourceId });
    }
    if (unknown.length) throw new UnprocessableEntityError(`The VNF instance has no VNFC ${unknown.join(', ')}; vnfcInstanceId names ids of its vnfcInfo`);
  }
  return {
    kind: 'OPERATE',
    changeStateTo: request.changeStateTo,
    ...(request.changeStateTo === 'STOPPED' ? { stopType: request.stopType ?? 'FORCEFUL' } : {}),
    ...(request.gracefulStopTimeout !== undefined ? { gracefulStopTimeout: request.gracefulStopTimeout } : {}),
    vnfcs: chosen,
  };
}

/** Each VNFC's state (by vnfcResourceInfo id) as vnfcInfo records it; a VNFC without one is STARTED. */
export function vnfcStates(info: Info | undefined): Map<string, string> {
  const states = new Map(vnfcsOf(info).map((vnfc) => [vnfc.id, 'STARTED']));
  for (const entry of list(info, 'vnfcInfo')) if (typeof entry.vnfcState === 'string') states.set(String(entry.vnfcResourceInfoId), entry.vnfcState);
  return states;
}

/** The VNF's operational state from its VNFCs' (vnfcInfo): STOPPED when it has some and none is STARTED; undefined when it has none. */
export function vnfStateOf(vnfcInfo: Info[] | undefined): 'STARTED' | 'STOPPED' | undefined {
  if (!vnfcInfo?.length) return undefined;
  return vnfcInfo.some((entry) => entry.vnfcState !== 'STOPPED') ? 'STARTED' : 'STOPPED';
}

/**
 * The OPERATE that undoes a failed one: the VNFCs it named that were in the other state before go
 * back to it (a stop's rollback starts those that were running; a start's stops those that were
 * stopped). Undefined when none was.
 */
export function reverseOperate(change: OperateChange, before: Info | undefined): OperateChange | undefined {
  const states = vnfcStates(before);
  const idOf = new Map(vnfcsOf(before).map((vnfc) => [vnfc.resourceId, vnfc.id]));
  const previous = change.changeStateTo === 'STOPPED' ? 'STARTED' : 'STOPPED';
  const vnfcs = change.vnfcs.filter((vnfc) => states.get(idOf.get(vnfc.resourceId) ?? vnfc.resourceId) === previous);
  if (vnfcs.length === 0) return undefined;
  return { kind: 'OPERATE', changeStateTo: previous, ...(previous === 'STOPPED' ? { stopType: 'FORCEFUL' as const } : {}), vnfcs };
}

/**
 * SOL003 resourceChanges of an OPERATE: the VNFCs whose state changed are MODIFIED (their resources
 * stay); VNFCs the VIM replaced while starting them (a Deployment's new pods) are REMOVED and ADDED,
 * as `diff` (lib/lcm/scale-heal.ts resourceDiff) found them.
 */
export function operateChanges(diff: Info, before: Info | undefined, after: Info | undefined): Info {
  const affected = list(diff, 'affectedVnfcs');
  const listed = new Set(affected.map((vnfc) => String(vnfc.id)));
  const was = vnfcStates(before);
  const now = vnfcStates(after);
  const modified = list(after, 'vnfcResourceInfo')
    .filter((vnfc) => !listed.has(String(vnfc.id)) && was.has(String(vnfc.id)) && was.get(String(vnfc.id)) !== now.get(String(vnfc.id)))
    .map((vnfc) => ({
      id: vnfc.id,
      vduId: vnfc.vduId,
      changeType: 'MODIFIED',
      computeResource: vnfc.computeResource,
      ...(Array.isArray(vnfc.vnfcCpInfo) && vnfc.vnfcCpInfo.length ? { affectedVnfcCpIds: (vnfc.vnfcCpInfo as Info[]).map((cp) => cp.id) } : {}),
    }));
  return { ...diff, affectedVnfcs: [...affected, ...modified] };
}

// SCALE and HEAL (SOL003 5.4.5, 5.4.9): the change each makes, worked out once here (for the
// request, lib/lcm/requests/scale-heal.ts, and the steps, lib/lcm/engine/) so that every VIM driver
// does the same thing: SCALE moves an aspect's scale level by whole steps, each VDU the aspect governs
// gaining or losing the VNFCs its VduScalingAspectDeltas say, scale-in removing the newest VNFCs
// first; HEAL replaces the VNFCs named (all of them when none are) and no others.
import { BadRequestError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { HealVnfRequest, ScaleVnfRequest } from '#lib/sol/requests.ts';
import type { FlavourInfo } from '#lib/packages/vnfd/model.ts';
import type { CollectedResources, UpdateChange, VnfcRef } from '#lib/vim/driver.ts';

type Info = Record<string, unknown>;
export type ScaleChange = Extract<UpdateChange, { kind: 'SCALE' }>;

const list = (info: Info | undefined, key: string): Info[] => (Array.isArray(info?.[key]) ? info[key] : []) as Info[];

/**
 * VNFC records oldest first: those an earlier operation recorded keep their places, the others
 * follow in creation order. VIMs report creation times to the second (Heat, Kubernetes), so VNFCs a
 * later operation created can tie with older ones; the record's own order is what says which is newer.
 */
export function ageOrdered(previous: Info[] | undefined, current: Info[]): Info[] {
  const byId = new Map(current.map((vnfc) => [String(vnfc.id), vnfc]));
  const known = (previous ?? []).flatMap((vnfc): Info[] => {
    const same = byId.get(String(vnfc.id));
    return same ? [same] : [];
  });
  const created = (vnfc: Info): string => String((vnfc.metadata as Info | undefined)?.creation_time ?? '');
  const fresh = current
    .filter((vnfc) => !known.includes(vnfc))
    .map((vnfc, index) => ({ vnfc, index }))
    .sort((a, b) => created(a.vnfc).localeCompare(created(b.vnfc)) || a.index - b.index)
    .map(({ vnfc }) => vnfc);
  return [...known, ...fresh];
}

/** The VNFCs of an instance, oldest first (the order the engine records them in). */
export function vnfcsOf(info: Info | undefined): Array<VnfcRef & { id: string }> {
  return list(info, 'vnfcResourceInfo').map((vnfc) => ({
    id: String(vnfc.id),
    vduId: String(vnfc.vduId),
    resourceId: String((vnfc.computeResource as Info | undefined)?.resourceId ?? vnfc.id),
  }));
}

export function countsOf(info: Info | undefined): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const vnfc of vnfcsOf(info)) counts[vnfc.vduId] = (counts[vnfc.vduId] ?? 0) + 1;
  return counts;
}

export function scaleLevelOf(info: Info | undefined, aspectId: string): number {
  const status = list(info, 'scaleStatus').find((entry) => entry.aspectId === aspectId);
  return typeof status?.scaleLevel === 'number' ? status.scaleLevel : 0;
}

/** How many VNFCs each VDU the aspect governs gains between scale levels `from` and `to` (from < to). */
export function deltasBetween(flavour: FlavourInfo, aspectId: string, from: number, to: number): Record<string, number> {
  const aspect = flavour.scalingAspects.find((candidate) => candidate.id === aspectId);
  const gained: Record<string, number> = {};
  for (const deltas of flavour.vduScalingAspectDeltas.filter((candidate) => candidate.aspectId === aspectId)) {
    const deltaIds = Object.keys(deltas.deltas);
    for (let level = from; level < to; level++) {
      // step_deltas lists the delta of each step; the last one repeats (SOL001 6.8.7).
      const stepDeltas = aspect?.stepDeltas?.length ? aspect.stepDeltas : deltaIds;
      const deltaId = stepDeltas[Math.min(level, stepDeltas.length - 1)];
      const perVdu = deltaId !== undefined ? deltas.deltas[deltaId] : undefined;
      for (const vduId of deltas.targets) gained[vduId] = (gained[vduId] ?? 0) + (perVdu?.[vduId] ?? 0);
    }
  }
  return gained;
}

/** The change a SCALE makes to an instance, or the 400 that explains why it cannot. */
export function scaleChange(flavour: FlavourInfo, info: Info | undefined, request: ScaleVnfRequest): ScaleChange {
  const aspect = flavour.scalingAspects.find((candidate) => candidate.id === request.aspectId);
  if (!aspect) {
    throw new BadRequestError(
      `Deployment flavour ${flavour.flavourId} has no scaling aspect "${request.aspectId}"${flavour.scalingAspects.length ? `; it has ${flavour.scalingAspects.map((a) => a.id).join(', ')}` : ''}`,
    );
  }
  const level = scaleLevelOf(info, aspect.id);
  const steps = request.numberOfSteps;
  const next = request.type === 'SCALE_OUT' ? level + steps : level - steps;
  if (next > aspect.maxScaleLevel) {
    throw new BadRequestError(
      `Scaling out aspect ${aspect.id} by ${steps} step(s) from scale level ${level} would exceed its max_scale_level ${aspect.maxScaleLevel}`,
    );
  }
  if (next < 0) throw new BadRequestError(`Scaling in aspect ${aspect.id} by ${steps} step(s) from scale level ${level} would go below scale level 0`);
  const gained = request.type === 'SCALE_OUT' ? deltasBetween(flavour, aspect.id, level, next) : deltasBetween(flavour, aspect.id, next, level);
  const counts = countsOf(info);
  const targets: Record<string, number> = {};
  const remove: VnfcRef[] = [];
  const vnfcs = vnfcsOf(info);
  for (const [vduId, delta] of Object.entries(gained)) {
    const current = counts[vduId] ?? 0;
    const target = request.type === 'SCALE_OUT' ? current + delta : Math.max(0, current - delta);
    const max = flavour.vdus.find((vdu) => vdu.id === vduId)?.vduProfile?.maxNumberOfInstances;
    if (typeof max === 'number' && target > max) {
      throw new BadRequestError(
        `Scaling out aspect ${aspect.id} would give ${vduId} ${target} instances, more than its vdu_profile max_number_of_instances ${max}`,
      );
    }
    targets[vduId] = target;
    if (target < current) {
      remove.push(
        ...vnfcs
          .filter((vnfc) => vnfc.vduId === vduId)
          .slice(target)
          .reverse()
          .map(({ vduId: vdu, resourceId }) => ({ vduId: vdu, resourceId })),
      );
    }
  }
  return { kind: 'SCALE', scaleType: request.type, aspectId: aspect.id, steps, targets, remove };
}

/** The VNFCs a HEAL replaces: those named by vnfcInfo id (or vnfcResourceInfo id), all when none are. */
export function healChange(info: Info | undefined, request: HealVnfRequest): Extract<UpdateChange, { kind: 'HEAL' }> {
  const vnfcs = vnfcsOf(info);
  if (!request.vnfcInstanceId?.length) return { kind: 'HEAL', vnfcs: vnfcs.map(({ vduId, resourceId }) => ({ vduId, resourceId })) };
  const byInfoId = new Map(list(info, 'vnfcInfo').map((entry) => [String(entry.id), String(entry.vnfcResourceInfoId)]));
  const chosen: VnfcRef[] = [];
  const unknown: string[] = [];
  for (const id of new Set(request.vnfcInstanceId)) {
    const resourceInfoId = byInfoId.get(id) ?? id;
    const vnfc = vnfcs.find((candidate) => candidate.id === resourceInfoId);
    if (vnfc) chosen.push({ vduId: vnfc.vduId, resourceId: vnfc.resourceId });
    else unknown.push(id);
  }
  if (unknown.length) throw new UnprocessableEntityError(`The VNF instance has no VNFC ${unknown.join(', ')}; vnfcInstanceId names ids of its vnfcInfo`);
  return { kind: 'HEAL', vnfcs: chosen };
}

/** The SCALE that undoes `change`, given what is on the VIM now: back to the counts the instance had. */
export function reverseScale(change: ScaleChange, before: Info | undefined, now: CollectedResources): ScaleChange {
  const counts = countsOf(before);
  const known = new Set(vnfcsOf(before).map((vnfc) => vnfc.id));
  const current = vnfcsOf({ vnfcResourceInfo: ageOrdered(list(before, 'vnfcResourceInfo'), now.vnfcResourceInfo) });
  const targets: Record<string, number> = {};
  const remove: VnfcRef[] = [];
  for (const vduId of Object.keys(change.targets)) {
    targets[vduId] = counts[vduId] ?? 0;
    remove.push(
      ...current
        .filter((vnfc) => vnfc.vduId === vduId && !known.has(vnfc.id))
        .reverse()
        .map(({ vduId: vdu, resourceId }) => ({ vduId: vdu, resourceId })),
    );
  }
  return {
    kind: 'SCALE',
    scaleType: change.scaleType === 'SCALE_OUT' ? 'SCALE_IN' : 'SCALE_OUT',
    aspectId: change.aspectId,
    steps: change.steps,
    targets,
    remove,
  };
}

/** scaleStatus after a completed SCALE. */
export function scaledStatus(info: Info | undefined, change: ScaleChange): Info[] {
  return list(info, 'scaleStatus').map((entry) =>
    entry.aspectId === change.aspectId
      ? { ...entry, scaleLevel: scaleLevelOf(info, change.aspectId) + (change.scaleType === 'SCALE_OUT' ? change.steps : -change.steps) }
      : entry,
  );
}

/** SOL003 resourceChanges between what an instance had and what it has now (VNFCs of `modifiedVdus` that stayed are MODIFIED). */
export function resourceDiff(before: CollectedResources, after: CollectedResources, modifiedVdus: ReadonlySet<string> = new Set()): Info {
  const byId = (items: Info[]) => new Map(items.map((item) => [String(item.id), item]));
  const changes = <T>(old: Info[], now: Info[], render: (item: Info, changeType: string) => T, resourceOf: (item: Info) => unknown): T[] => {
    const oldById = byId(old);
    const nowById = byId(now);
    const out: T[] = [];
    for (const [id, item] of nowById) {
      const previous = oldById.get(id);
      if (!previous) out.push(render(item, 'ADDED'));
      else if (JSON.stringify(resourceOf(previous)) !== JSON.stringify(resourceOf(item)) || modifiedVdus.has(String(item.vduId)))
        out.push(render(item, 'MODIFIED'));
    }
    for (const [id, item] of oldById) if (!nowById.has(id)) out.push(render(item, 'REMOVED'));
    return out;
  };
  return {
    affectedVnfcs: changes(
      before.vnfcResourceInfo,
      after.vnfcResourceInfo,
      (vnfc, changeType) => ({
        id: vnfc.id,
        vduId: vnfc.vduId,
        changeType,
        computeResource: vnfc.computeResource,
        ...(Array.isArray(vnfc.vnfcCpInfo) && vnfc.vnfcCpInfo.length ? { affectedVnfcCpIds: (vnfc.vnfcCpInfo as Info[]).map((cp) => cp.id) } : {}),
        // A VNFC keeps its id when the VIM recreates it under the same name (a StatefulSet pod): its uid tells.
      }),
      (vnfc) => [(vnfc.computeResource as Info | undefined)?.resourceId, (vnfc.metadata as Info | undefined)?.pod_uid],
    ),
    affectedVirtualLinks: changes(
      before.vnfVirtualLinkResourceInfo,
      after.vnfVirtualLinkResourceInfo,
      (vl, changeType) => ({
        id: vl.id,
        vnfVirtualLinkDescId: vl.vnfVirtualLinkDescId,
        changeType,
        networkResource: vl.networkResource,
      }),
      (vl) => (vl.networkResource as Info | undefined)?.resourceId,
    ),
    affectedVirtualStorages: changes(
      before.virtualStorageResourceInfo,
      after.virtualStorageResourceInfo,
      (st, changeType) => ({
        id: st.id,
        virtualStorageDescId: st.virtualStorageDescId,
        changeType,
        storageResource: st.storageResource,
      }),
      (st) => (st.storageResource as Info | undefined)?.resourceId,
    ),
  };
}

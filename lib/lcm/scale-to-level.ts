// SCALE_TO_LEVEL (SOL003 5.4.6): the change it makes, worked out once here (for the request,
// lib/lcm/requests/scale-to-level.ts, the grant and the steps, lib/lcm/engine/scale-to-level.ts).
// The target is a scale level per aspect: those of an instantiation level of the instance's
// flavour (its scale_info; an aspect it does not name goes to level 0, as at instantiation), or
// those scaleInfo names (the other aspects keep theirs). Each aspect then moves as that many SCALE
// steps would, its VDUs gaining or losing the VNFCs its VduScalingAspectDeltas say, so one request
// can scale one aspect out and another in; where a VDU shrinks, its newest VNFCs go, exactly those a
// SCALE would remove. Every VIM applies the whole change as one update.
import { BadRequestError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { ScaleVnfToLevelRequest } from '#lib/sol/requests.ts';
import type { FlavourInfo } from '#lib/packages/vnfd/model.ts';
import type { CollectedResources, UpdateChange, VnfcRef } from '#lib/vim/driver.ts';
import { ageOrdered, countsOf, deltasBetween, scaleLevelOf, vnfcsOf } from './scale-heal.ts';

type Info = Record<string, unknown>;
export type ScaleToLevelChange = Extract<UpdateChange, { kind: 'SCALE_TO_LEVEL' }>;

const list = (info: Info | undefined, key: string): Info[] => (Array.isArray(info?.[key]) ? info[key] : []) as Info[];

/** The scale level every aspect of the flavour is to have, or the 400/422 that explains why the request cannot be met. */
export function targetLevels(flavour: FlavourInfo, info: Info | undefined, request: ScaleVnfToLevelRequest, vnfdId: string): Record<string, number> {
  const aspects = flavour.scalingAspects;
  const levels: Record<string, number> = Object.fromEntries(aspects.map((aspect) => [aspect.id, scaleLevelOf(info, aspect.id)]));
  if (request.instantiationLevelId !== undefined) {
    const levelId = request.instantiationLevelId;
    const level = Object.hasOwn(flavour.instantiationLevels.levels, levelId) ? flavour.instantiationLevels.levels[levelId] : undefined;
    if (!level) {
      const known = Object.keys(flavour.instantiationLevels.levels);
      throw new BadRequestError(
        `Deployment flavour ${flavour.flavourId} has no instantiation level "${levelId}"${known.length ? `; it has ${known.join(', ')}` : ''}`,
      );
    }
    for (const aspect of aspects) {
      const wanted = level.scaleInfo?.[aspect.id]?.scaleLevel ?? 0;
      if (wanted > aspect.maxScaleLevel) {
        throw new UnprocessableEntityError(
          `Instantiation level ${levelId} of the VNFD gives aspect ${aspect.id} scale level ${wanted}, above its max_scale_level ${aspect.maxScaleLevel}`,
        );
      }
      levels[aspect.id] = wanted;
    }
    return levels;
  }
  for (const entry of request.scaleInfo ?? []) {
    if (entry.vnfdId !== undefined && entry.vnfdId !== vnfdId) {
      throw new UnprocessableEntityError(`scaleInfo for aspect ${entry.aspectId} names VNFD ${entry.vnfdId}; the VNF instance's VNFD is ${vnfdId}`);
    }
    const aspect = aspects.find((candidate) => candidate.id === entry.aspectId);
    if (!aspect) {
      throw new BadRequestError(
        `Deployment flavour ${flavour.flavourId} has no scaling aspect "${entry.aspectId}"${aspects.length ? `; it has ${aspects.map((a) => a.id).join(', ')}` : ''}`,
      );
    }
    if (entry.scaleLevel > aspect.maxScaleLevel) {
      throw new BadRequestError(`Scale level ${entry.scaleLevel} of aspect ${aspect.id} is above its max_scale_level ${aspect.maxScaleLevel}`);
    }
    levels[aspect.id] = entry.scaleLevel;
  }
  return levels;
}

/**
 * The change that takes an instance from its scale levels to `levels`: the VDUs whose VNFC count
 * changes, with their new counts, and the VNFCs removed from those that shrink (newest first).
 */
export function changeToLevels(flavour: FlavourInfo, info: Info | undefined, levels: Record<string, number>): ScaleToLevelChange {
  const net: Record<string, number> = {};
  for (const aspect of flavour.scalingAspects) {
    const from = scaleLevelOf(info, aspect.id);
    const to = levels[aspect.id] ?? from;
    if (to === from) continue;
    const sign = to > from ? 1 : -1;
    for (const [vduId, delta] of Object.entries(deltasBetween(flavour, aspect.id, Math.min(from, to), Math.max(from, to)))) {
      net[vduId] = (net[vduId] ?? 0) + sign * delta;
    }
  }
  const counts = countsOf(info);
  const vnfcs = vnfcsOf(info);
  const targets: Record<string, number> = {};
  const remove: VnfcRef[] = [];
  for (const [vduId, delta] of Object.entries(net)) {
    const current = counts[vduId] ?? 0;
    const target = Math.max(0, current + delta);
    if (target === current) continue;
    const max = flavour.vdus.find((vdu) => vdu.id === vduId)?.vduProfile?.maxNumberOfInstances;
    if (typeof max === 'number' && target > max) {
      throw new BadRequestError(`These scale levels would give ${vduId} ${target} instances, more than its vdu_profile max_number_of_instances ${max}`);
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
  return { kind: 'SCALE_TO_LEVEL', levels, targets, remove };
}

/** The change a SCALE_TO_LEVEL makes to an instance, or the 400/422 that explains why it cannot. */
export function scaleToLevelChange(flavour: FlavourInfo, info: Info | undefined, request: ScaleVnfToLevelRequest, vnfdId: string): ScaleToLevelChange {
  return changeToLevels(flavour, info, targetLevels(flavour, info, request, vnfdId));
}

/** Whether the change does anything on the VIM (targets equal to the current levels do not). */
export const changesVim = (change: ScaleToLevelChange): boolean => Object.keys(change.targets).length > 0;

/**
 * The change that undoes `change`, given what is on the VIM now: back to the levels and counts the
 * instance had, removing (newest first) the VNFCs the failed attempt added beyond them.
 */
export function reverseScaleToLevel(change: ScaleToLevelChange, before: Info | undefined, now: CollectedResources): ScaleToLevelChange {
  const counts = countsOf(before);
  const known = new Set(vnfcsOf(before).map((vnfc) => vnfc.id));
  const current = vnfcsOf({ vnfcResourceInfo: ageOrdered(list(before, 'vnfcResourceInfo'), now.vnfcResourceInfo) });
  const levels = Object.fromEntries(Object.keys(change.levels).map((aspectId) => [aspectId, scaleLevelOf(before, aspectId)]));
  const targets: Record<string, number> = {};
  const remove: VnfcRef[] = [];
  for (const vduId of Object.keys(change.targets)) {
    const target = counts[vduId] ?? 0;
    const onVim = current.filter((vnfc) => vnfc.vduId === vduId);
    targets[vduId] = target;
    const added = onVim.filter((vnfc) => !known.has(vnfc.id)).reverse();
    remove.push(...added.slice(0, Math.max(0, onVim.length - target)).map(({ vduId: vdu, resourceId }) => ({ vduId: vdu, resourceId })));
  }
  return { kind: 'SCALE_TO_LEVEL', levels, targets, remove };
}

/** scaleStatus after a completed SCALE_TO_LEVEL: every aspect at the level the change gave it (an aspect it lacked added). */
export function leveledStatus(info: Info | undefined, change: ScaleToLevelChange): Info[] {
  const status = list(info, 'scaleStatus');
  const known = new Set(status.map((entry) => String(entry.aspectId)));
  return [
    ...status.map((entry) => (Object.hasOwn(change.levels, String(entry.aspectId)) ? { ...entry, scaleLevel: change.levels[String(entry.aspectId)] } : entry)),
    ...Object.entries(change.levels)
      .filter(([aspectId]) => !known.has(aspectId))
      .map(([aspectId, scaleLevel]) => ({ aspectId, scaleLevel })),
  ];
}

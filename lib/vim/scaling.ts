// What the two scale changes (SCALE, SCALE_TO_LEVEL) ask of a VIM driver alike: the VNFC count each
// VDU is to have, and the VNFCs to remove to get there. A driver applies both the same way (Heat
// capacities with the removed members marked unhealthy, Kubernetes replicas with the removed pods
// chosen), so it reads them through this and never by the kind of change.
import type { UpdateChange, VnfcRef } from './driver.ts';

export interface Scaling {
  /** vduId -> the number of VNFCs it is to have. */
  targets: Record<string, number>;
  /** The VNFCs to remove, newest first; the driver must remove exactly these. */
  remove: VnfcRef[];
}

/** The counts and removals of a scale change; undefined for a change that is not one. */
export function scalingOf(change: UpdateChange): Scaling | undefined {
  switch (change.kind) {
    // A scale-out removes nothing (its `remove` is empty, but only a scale-in's is meant).
    case 'SCALE':
      return { targets: change.targets, remove: change.scaleType === 'SCALE_IN' ? change.remove : [] };
    case 'SCALE_TO_LEVEL':
      return { targets: change.targets, remove: change.remove };
    default:
      return undefined;
  }
}

// Threshold-driven auto-scaling (the product's extension of SOL003 thresholds): a threshold with a
// scaling rule (`autoScale`: aspect, steps, cool-down) starts a SCALE of its VNF instance when it is
// crossed, out on UP and in on DOWN, as an operation the VNFM decided on itself
// (isAutomaticInvocation), the way auto-heal starts HEAL. The storm limits: one scale per threshold
// per cool-down, none while the instance's isAutoscaleEnabled is false (the operator's switch),
// and whatever the LCM API refuses (an operation in progress, a level beyond the aspect's bounds)
// is logged and left, never retried in a loop.
import { log } from '#lib/log.ts';
import { ProblemError } from '#lib/sol/errors.ts';
import type { ThresholdRecord } from './model.ts';
import type { PmDeps } from './ports.ts';

export type CrossingDirection = 'UP' | 'DOWN';

/** Starts the scale a threshold's crossings call for, if any; answers its op occ id. */
export async function autoScaleOnCrossing(deps: PmDeps, threshold: ThresholdRecord, directions: CrossingDirection[], now: string): Promise<string | undefined> {
  const rule = threshold.autoScale;
  // Several sub-objects may cross in one evaluation: the last crossing decides.
  const direction = directions.at(-1);
  if (!rule || !direction) return undefined;
  const last = threshold.lastAutoScale;
  const keys = { thresholdId: threshold.id, vnfInstanceId: threshold.objectInstanceId, direction };
  if (last && Date.parse(now) - Date.parse(last.at) < rule.coolDownSeconds * 1000) {
    log.info('automatic scale not started: the threshold is in its cool-down', { ...keys, lastOpOccId: last.opOccId });
    return undefined;
  }
  const instance = await deps.instances.get(threshold.objectInstanceId);
  if (instance?.instantiationState !== 'INSTANTIATED') return undefined;
  if ((instance.vnfConfigurableProperties as Record<string, unknown> | undefined)?.isAutoscaleEnabled === false) {
    log.info('automatic scale not started: isAutoscaleEnabled is false', keys);
    return undefined;
  }
  try {
    const opOccId = await deps.scale(threshold.tenantId, instance.id, {
      type: direction === 'UP' ? 'SCALE_OUT' : 'SCALE_IN',
      aspectId: rule.aspectId,
      numberOfSteps: rule.numberOfSteps,
    });
    await deps.thresholds.recordAutoScale(threshold.id, { at: now, opOccId });
    log.info('threshold crossing started a scale', { ...keys, opOccId });
    return opOccId;
  } catch (error) {
    if (!(error instanceof ProblemError)) throw error;
    log.warn('automatic scale not started', { ...keys, reason: error.message });
    return undefined;
  }
}

// The arithmetic of performance management, apart from any store or VIM: a VIM's measurements as
// one collection sample, a reporting period's samples as PerformanceReport entries (usage: the mean
// or the peak of the samples; traffic: the growth of the cumulative counters between reads, a
// counter that went down being a restarted one, whose step is left out), and a simple threshold's
// crossing with its hysteresis.
import type { VnfcMeasurement } from '#lib/vim/driver.ts';
import { parseMetric, subObjectKind, type MetricName, type ObjectType } from './model.ts';
import type { CrossingState, PmReportEntry, PmSample } from './model.ts';

/** Names the VNFCs of a measurement as the API does: vnfcResourceInfo id -> the VNFC's vnfcInfo id. */
export type VnfcNaming = (vnfInstanceId: string, vnfcResourceInfoId: string) => string;

/** The measurements of one collection as a sample (a VNFC's usage percents, a CP's counters). */
export function sampleOf(at: string, measurements: VnfcMeasurement[], vnfcName: VnfcNaming): PmSample {
  const values: PmSample['values'] = [];
  for (const m of measurements) {
    const figures: Record<string, number> = {};
    for (const key of ['cpuUsagePercent', 'memoryUsagePercent', 'diskUsagePercent'] as const) {
      const value = m[key];
      if (typeof value === 'number' && Number.isFinite(value)) figures[key] = value;
    }
    values.push({ vnfInstanceId: m.vnfInstanceId, subObjectInstanceId: vnfcName(m.vnfInstanceId, m.vnfcResourceInfoId), kind: 'vnfc', figures });
    for (const cp of m.cps) {
      const counters: Record<string, number> = {};
      for (const key of ['bytesIn', 'bytesOut', 'packetsIn', 'packetsOut'] as const) {
        const value = cp[key];
        if (typeof value === 'number' && Number.isFinite(value)) counters[key] = value;
      }
      values.push({
        vnfInstanceId: m.vnfInstanceId,
        subObjectInstanceId: cp.external ? (cp.vnfExtCpId ?? cp.cpInstanceId) : cp.cpInstanceId,
        kind: cp.external ? 'extCp' : 'intCp',
        figures: counters,
      });
    }
  }
  return { at, values };
}

/** The metrics a job's criteria name, groups expanded (each once). */
export function metricsOf(criteria: { performanceMetric?: string[]; performanceMetricGroup?: string[] }, groups: (group: string) => string[]): MetricName[] {
  const names = [...(criteria.performanceMetric ?? []), ...(criteria.performanceMetricGroup ?? []).flatMap(groups)];
  return [...new Set(names)].map(parseMetric).filter((m): m is MetricName => m !== undefined);
}

/** The figure of one sub-object in a sample, if the VIM reported it. */
function figureIn(sample: PmSample, vnfInstanceId: string, subObjectInstanceId: string, key: string): number | undefined {
  return sample.values.find((v) => v.vnfInstanceId === vnfInstanceId && v.subObjectInstanceId === subObjectInstanceId)?.figures[key];
}

/** The growth of a cumulative counter over readings in order, restarted counters' steps left out; undefined with fewer than two readings. */
export function counterGrowth(readings: number[]): number | undefined {
  if (readings.length < 2) return undefined;
  let growth = 0;
  for (let i = 1; i < readings.length; i++) {
    const step = (readings[i] as number) - (readings[i - 1] as number);
    if (step >= 0) growth += step;
  }
  return growth;
}

export const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
export const peak = (values: number[]): number => Math.max(...values);

export interface ReportScope {
  objectType: ObjectType;
  objectInstanceIds: string[];
  subObjectInstanceIds?: string[];
  metrics: MetricName[];
}

/**
 * The entries of a report over a reporting period's samples: one per metric and measured
 * sub-object, its value the mean or peak of the samples (usage) or the counter's growth since
 * `previous`, the last reading before the period (traffic), stamped with the last sample's time.
 */
export function reportEntries(scope: ReportScope, samples: PmSample[], previous?: PmSample): PmReportEntry[] {
  const kind = subObjectKind(scope.objectType);
  const entries: PmReportEntry[] = [];
  for (const metric of scope.metrics) {
    if (!metric.measurement.objectTypes.includes(scope.objectType)) continue;
    const source = metric.measurement.source;
    for (const vnfInstanceId of scope.objectInstanceIds) {
      if (metric.vnfInstanceId && metric.vnfInstanceId !== vnfInstanceId) continue;
      const subObjects = [
        ...new Set(samples.flatMap((s) => s.values.filter((v) => v.vnfInstanceId === vnfInstanceId && v.kind === kind).map((v) => v.subObjectInstanceId))),
      ].filter((id) => !scope.subObjectInstanceIds || scope.subObjectInstanceIds.includes(id));
      for (const subObjectInstanceId of subObjects) {
        const key = source.kind === 'vnfc' ? source.figure : source.counter;
        const series = (source.kind === 'cp' && previous ? [previous, ...samples] : samples)
          .map((s) => ({ at: s.at, value: figureIn(s, vnfInstanceId, subObjectInstanceId, key) }))
          .filter((p): p is { at: string; value: number } => p.value !== undefined);
        if (series.length === 0) continue;
        const values = series.map((p) => p.value);
        const value = source.kind === 'vnfc' ? (source.stat === 'mean' ? mean(values) : peak(values)) : counterGrowth(values);
        if (value === undefined) continue;
        entries.push({
          objectType: scope.objectType,
          objectInstanceId: vnfInstanceId,
          subObjectInstanceId,
          performanceMetric: metric.requested,
          performanceValues: [{ timeStamp: (series.at(-1) as { at: string }).at, value }],
        });
      }
    }
  }
  return entries;
}

/**
 * SOL003 6.5.3.4 simple threshold with hysteresis: crossed UP when the value rises above
 * thresholdValue + hysteresis from below (or is above it at the first measurement), DOWN when it
 * falls below thresholdValue - hysteresis after an UP. A value in between changes nothing, so a
 * value hovering around the threshold notifies once, not at every collection. (The YAML's
 * description says "reaches or exceeds"; with a hysteresis of 0 that would notify again and again
 * for a value sitting on the threshold, so the crossing must go beyond it.)
 */
export function crossing(
  state: CrossingState | undefined,
  value: number,
  details: { thresholdValue: number; hysteresis: number },
): { state: CrossingState | undefined; crossed?: CrossingState } {
  if (value > details.thresholdValue + details.hysteresis) return state === 'UP' ? { state } : { state: 'UP', crossed: 'UP' };
  if (value < details.thresholdValue - details.hysteresis) return state === 'UP' ? { state: 'DOWN', crossed: 'DOWN' } : { state: 'DOWN' };
  return { state };
}

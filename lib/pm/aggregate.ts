// The arithmetic of performance management, apart from any store or VIM: a VIM's measurements as
// one collection sample, folded into the reporting period's running aggregates (usage: count, sum
// and peak; traffic: the growth of the cumulative counters between reads, a counter that went down
// being a restarted one, whose step is left out), the period as PerformanceReport entries, and a
// simple threshold's crossing with its hysteresis.
import type { VnfcMeasurement } from '#lib/vim/driver.ts';
import { parseMetric, subObjectKind, type MetricName, type ObjectType } from './model.ts';
import type { CounterReadings, CrossingState, PmPeriod, PmReportEntry, PmSample } from './model.ts';

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

/** The key of one figure of one sub-object in a period's aggregates and the counter readings. */
const keyOf = (v: PmSample['values'][number], figure: string) => `${v.vnfInstanceId}|${v.kind}|${v.subObjectInstanceId}|${figure}`;

export const emptyPeriod = (): PmPeriod => ({ collections: 0, usage: {}, growth: {} });

/**
 * A collection folded into the period's aggregates: a usage figure's count, sum and peak; a
 * counter's growth since its last reading (none at its first reading; a counter that went down was
 * restarted, and that step is left out). Returns the new period and counter readings.
 */
export function fold(period: PmPeriod, counters: CounterReadings, sample: PmSample): { period: PmPeriod; counters: CounterReadings } {
  const usage = { ...period.usage };
  const growth = { ...period.growth };
  const readings = { ...counters };
  for (const value of sample.values) {
    for (const [figure, x] of Object.entries(value.figures)) {
      const key = keyOf(value, figure);
      if (value.kind === 'vnfc') {
        const acc = usage[key];
        usage[key] = acc ? { n: acc.n + 1, sum: acc.sum + x, peak: Math.max(acc.peak, x) } : { n: 1, sum: x, peak: x };
        continue;
      }
      const last = readings[key];
      if (last !== undefined) growth[key] = (growth[key] ?? 0) + (x >= last ? x - last : 0);
      readings[key] = x;
    }
  }
  return { period: { collections: period.collections + 1, lastAt: sample.at, usage, growth }, counters: readings };
}

export interface ReportScope {
  objectType: ObjectType;
  objectInstanceIds: string[];
  subObjectInstanceIds?: string[];
  metrics: MetricName[];
}

/**
 * The entries of a report over a reporting period: one per metric and measured sub-object, its
 * value the mean or peak of the period's collections (usage) or the counter's growth over the
 * period (traffic), stamped with the period's last collection.
 */
export function reportEntries(scope: ReportScope, period: PmPeriod): PmReportEntry[] {
  const kind = subObjectKind(scope.objectType);
  const entries: PmReportEntry[] = [];
  const timeStamp = period.lastAt;
  if (!timeStamp) return entries;
  for (const metric of scope.metrics) {
    if (!metric.measurement.objectTypes.includes(scope.objectType)) continue;
    const source = metric.measurement.source;
    const figure = source.kind === 'vnfc' ? source.figure : source.counter;
    const found = Object.keys(source.kind === 'vnfc' ? period.usage : period.growth)
      .map((key) => key.split('|'))
      .filter(([, k, , f]) => k === kind && f === figure);
    for (const [vnfInstanceId = '', , subObjectInstanceId = ''] of found) {
      if (!scope.objectInstanceIds.includes(vnfInstanceId)) continue;
      if (metric.vnfInstanceId && metric.vnfInstanceId !== vnfInstanceId) continue;
      if (scope.subObjectInstanceIds && !scope.subObjectInstanceIds.includes(subObjectInstanceId)) continue;
      const key = `${vnfInstanceId}|${kind}|${subObjectInstanceId}|${figure}`;
      const acc = period.usage[key];
      const value = source.kind === 'cp' ? period.growth[key] : acc && (source.stat === 'mean' ? acc.sum / acc.n : acc.peak);
      if (value === undefined) continue;
      entries.push({
        objectType: scope.objectType,
        objectInstanceId: vnfInstanceId,
        subObjectInstanceId,
        performanceMetric: metric.requested,
        performanceValues: [{ timeStamp, value }],
      });
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

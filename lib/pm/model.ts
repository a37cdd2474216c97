// SOL003 VNF performance management (clause 6) as this product's API shows it: the measurements of
// SOL003 7.4 / IFA027 7.2 it collects and their groups, CreatePmJobRequest / PmJob /
// PmJobModifications (6.5.2.6-8, 6.5.3.3 PmJobCriteria), PerformanceReport (6.5.2.10),
// CreateThresholdRequest / Threshold / ThresholdModifications (6.5.2.8-9, 6.5.3.4 ThresholdCriteria).
// The records are the PM store's (lib/store/pm.ts).
import * as z from 'zod';
import { subscriptionAuthentication } from '#lib/notify/model.ts';
import type { PmJobRecord, PmReportRecord, ThresholdRecord } from '#lib/store/pm.ts';
import { PM_NOTIFICATION_API_VERSION, reportHref } from './links.ts';

export { PM_NOTIFICATION_API_VERSION, reportHref };

export type { CounterReadings, CrossingState, PmJobRecord, PmPeriod, PmReportEntry, PmReportRecord, PmSample, ThresholdRecord } from '#lib/store/pm.ts';

/** The Version header of PM notifications (the VNFPerformanceManagementNotification API of SOL003 V3.7.1). */

/** IFA027 7.2 measured object types of the measurements below. */
export const OBJECT_TYPES = ['Vnf', 'Vnfc', 'VnfIntCp', 'VnfExtCp'] as const;
export type ObjectType = (typeof OBJECT_TYPES)[number];

/** What a measurement is made of: a VNFC figure (mean or peak over the samples), or a CP counter (its growth). */
export type MetricSource =
  | { kind: 'vnfc'; figure: 'cpuUsagePercent' | 'memoryUsagePercent' | 'diskUsagePercent'; stat: 'mean' | 'peak' }
  | { kind: 'cp'; counter: 'bytesIn' | 'bytesOut' | 'packetsIn' | 'packetsOut' };

export interface Measurement {
  group: MetricGroup;
  objectTypes: readonly ObjectType[];
  source: MetricSource;
}

export const METRIC_GROUPS = ['VirtualisedComputeResource', 'VnfInternalCp', 'VnfExternalCp'] as const;
export type MetricGroup = (typeof METRIC_GROUPS)[number];

const compute = (figure: 'cpuUsagePercent' | 'memoryUsagePercent' | 'diskUsagePercent', stat: 'mean' | 'peak'): Measurement => ({
  group: 'VirtualisedComputeResource',
  objectTypes: ['Vnf', 'Vnfc'],
  source: { kind: 'vnfc', figure, stat },
});
const cp = (external: boolean, counter: 'bytesIn' | 'bytesOut' | 'packetsIn' | 'packetsOut'): Measurement => ({
  group: external ? 'VnfExternalCp' : 'VnfInternalCp',
  objectTypes: [external ? 'VnfExtCp' : 'VnfIntCp'],
  source: { kind: 'cp', counter },
});

/** SOL003 7.4 / IFA027 7.2: the measurements collected, by Measurement Name. */
export const MEASUREMENTS: Readonly<Record<string, Measurement>> = {
  VCpuUsageMeanVnf: compute('cpuUsagePercent', 'mean'),
  VCpuUsagePeakVnf: compute('cpuUsagePercent', 'peak'),
  VMemoryUsageMeanVnf: compute('memoryUsagePercent', 'mean'),
  VMemoryUsagePeakVnf: compute('memoryUsagePercent', 'peak'),
  VDiskUsageMeanVnf: compute('diskUsagePercent', 'mean'),
  VDiskUsagePeakVnf: compute('diskUsagePercent', 'peak'),
  ByteIncomingVnfIntCp: cp(false, 'bytesIn'),
  ByteOutgoingVnfIntCp: cp(false, 'bytesOut'),
  PacketIncomingVnfIntCp: cp(false, 'packetsIn'),
  PacketOutgoingVnfIntCp: cp(false, 'packetsOut'),
  ByteIncomingVnfExtCp: cp(true, 'bytesIn'),
  ByteOutgoingVnfExtCp: cp(true, 'bytesOut'),
  PacketIncomingVnfExtCp: cp(true, 'packetsIn'),
  PacketOutgoingVnfExtCp: cp(true, 'packetsOut'),
};

/** A metric as requested: its Measurement Name, and the VNF instance it is limited to when named `<name>.<vnfInstanceId>`. */
export interface MetricName {
  requested: string;
  name: string;
  measurement: Measurement;
  vnfInstanceId?: string;
}

/** Reads `VCpuUsageMeanVnf` or `VCpuUsageMeanVnf.<vnfInstanceId>`; undefined for an unknown measurement. */
export function parseMetric(requested: string): MetricName | undefined {
  const dot = requested.indexOf('.');
  const name = dot === -1 ? requested : requested.slice(0, dot);
  const vnfInstanceId = dot === -1 ? undefined : requested.slice(dot + 1);
  const measurement = Object.hasOwn(MEASUREMENTS, name) ? MEASUREMENTS[name] : undefined;
  if (!measurement || vnfInstanceId === '') return undefined;
  return { requested, name, measurement, ...(vnfInstanceId ? { vnfInstanceId } : {}) };
}

/** The measurement names of a group. */
export function groupMetrics(group: string): string[] | undefined {
  if (!(METRIC_GROUPS as readonly string[]).includes(group)) return undefined;
  return Object.entries(MEASUREMENTS)
    .filter(([, m]) => m.group === group)
    .map(([name]) => name);
}

/** The sub-objects of an object type (IFA027 6.2): VNFCs, internal CPs or external CPs. */
export function subObjectKind(objectType: ObjectType): 'vnfc' | 'intCp' | 'extCp' {
  return objectType === 'VnfIntCp' ? 'intCp' : objectType === 'VnfExtCp' ? 'extCp' : 'vnfc';
}

const identifier = z.string().min(1).max(255);

/** SOL003 6.5.3.3 PmJobCriteria */
export const pmJobCriteria = z
  .object({
    performanceMetric: z.array(z.string().min(1)).min(1).optional(),
    performanceMetricGroup: z.array(z.string().min(1)).min(1).optional(),
    collectionPeriod: z.number().int().positive(),
    reportingPeriod: z.number().int().positive(),
    reportingBoundary: z.iso.datetime({ offset: true }).optional(),
  })
  .strict()
  .refine((c) => c.performanceMetric !== undefined || c.performanceMetricGroup !== undefined, {
    message: 'at least one of performanceMetric and performanceMetricGroup is required',
  })
  .refine((c) => c.reportingPeriod % c.collectionPeriod === 0, {
    message: 'reportingPeriod must be a multiple of collectionPeriod',
    path: ['reportingPeriod'],
  });
export type PmJobCriteria = z.infer<typeof pmJobCriteria>;

/** SOL003 6.5.2.6 CreatePmJobRequest */
export const createPmJobRequest = z
  .object({
    objectType: z.enum(OBJECT_TYPES),
    objectInstanceIds: z.array(identifier).min(1).max(100),
    subObjectInstanceIds: z.array(identifier).min(1).optional(),
    criteria: pmJobCriteria,
    callbackUri: z.string().min(1).max(2048),
    authentication: subscriptionAuthentication.optional(),
  })
  .strict()
  .refine((r) => r.subObjectInstanceIds === undefined || r.objectInstanceIds.length === 1, {
    message: 'with subObjectInstanceIds, objectInstanceIds must name exactly one VNF instance',
    path: ['objectInstanceIds'],
  });
export type CreatePmJobRequest = z.infer<typeof createPmJobRequest>;

/** SOL003 6.5.2.12 PmJobModifications / 6.5.2.11 ThresholdModifications (merge patch: authentication null removes it). */
export const notificationModifications = z
  .object({
    callbackUri: z.string().min(1).max(2048).optional(),
    authentication: subscriptionAuthentication.nullable().optional(),
  })
  .strict()
  .refine((m) => m.callbackUri !== undefined || m.authentication !== undefined, { message: 'at least one of callbackUri and authentication is required' });
export type NotificationModifications = z.infer<typeof notificationModifications>;

/** SOL003 6.5.3.4 ThresholdCriteria */
export const thresholdCriteria = z
  .object({
    performanceMetric: z.string().min(1),
    thresholdType: z.literal('SIMPLE'),
    simpleThresholdDetails: z.object({ thresholdValue: z.number().finite(), hysteresis: z.number().finite().min(0) }).strict(),
  })
  .strict();
export type ThresholdCriteria = z.infer<typeof thresholdCriteria>;

/** SOL003 6.5.2.8 CreateThresholdRequest */
/**
 * The product's extension of CreateThresholdRequest: scale the VNF instance when the threshold is
 * crossed, out on UP and in on DOWN, by `numberOfSteps` of the aspect, at most once per
 * `coolDownSeconds` (SCALE with isAutomaticInvocation, as auto-heal starts HEAL).
 */
export const thresholdAutoScale = z
  .object({
    aspectId: identifier,
    numberOfSteps: z.number().int().min(1).max(10).default(1),
    coolDownSeconds: z.number().int().min(0).max(86_400).default(300),
  })
  .strict();

export const createThresholdRequest = z
  .object({
    objectType: z.enum(OBJECT_TYPES),
    objectInstanceId: identifier,
    subObjectInstanceIds: z.array(identifier).min(1).optional(),
    criteria: thresholdCriteria,
    callbackUri: z.string().min(1).max(2048),
    authentication: subscriptionAuthentication.optional(),
    autoScale: thresholdAutoScale.optional(),
  })
  .strict();
export type CreateThresholdRequest = z.infer<typeof createThresholdRequest>;

/** Attributes of the PmJob representation: what filters and selectors may name. */
export const PM_JOB_ATTRIBUTES = ['id', 'objectType', 'objectInstanceIds', 'subObjectInstanceIds', 'criteria', 'callbackUri', 'reports', '_links'] as const;
/** SOL003 6.4.2.3.2: what a list of PM jobs leaves out unless asked. */
export const PM_JOB_DEFAULT_EXCLUDED = ['reports'] as const;
export const THRESHOLD_ATTRIBUTES = ['id', 'objectType', 'objectInstanceId', 'subObjectInstanceIds', 'criteria', 'callbackUri', '_links'] as const;

const instanceLink = (apiRoot: string, id: string) => ({ href: `${apiRoot}/vnflcm/v2/vnf_instances/${id}` });

/** SOL003 6.5.2.7 PmJob (authentication is never shown). */
export function renderPmJob(record: PmJobRecord, baseUrl: string): Record<string, unknown> {
  return {
    id: record.id,
    objectType: record.objectType,
    objectInstanceIds: record.objectInstanceIds,
    ...(record.subObjectInstanceIds ? { subObjectInstanceIds: record.subObjectInstanceIds } : {}),
    criteria: record.criteria,
    callbackUri: record.callbackUri,
    reports: record.reports.map((report) => ({
      href: reportHref(baseUrl, record.id, report.id),
      readyTime: report.readyTime,
      expiryTime: report.expiryTime,
      fileSize: report.fileSize,
    })),
    _links: {
      self: { href: `${baseUrl}/vnfpm/v2/pm_jobs/${record.id}` },
      objects: record.objectInstanceIds.map((id) => instanceLink(baseUrl, id)),
    },
  };
}

/** SOL003 6.5.2.10 PerformanceReport */
export function renderReport(report: PmReportRecord): Record<string, unknown> {
  return { entries: report.entries };
}

/** SOL003 6.5.2.9 Threshold (authentication is never shown). */
export function renderThreshold(record: ThresholdRecord, baseUrl: string): Record<string, unknown> {
  return {
    id: record.id,
    objectType: record.objectType,
    objectInstanceId: record.objectInstanceId,
    ...(record.subObjectInstanceIds ? { subObjectInstanceIds: record.subObjectInstanceIds } : {}),
    criteria: record.criteria,
    callbackUri: record.callbackUri,
    ...(record.autoScale ? { autoScale: record.autoScale } : {}),
    _links: { self: { href: `${baseUrl}/vnfpm/v2/thresholds/${record.id}` }, object: instanceLink(baseUrl, record.objectInstanceId) },
  };
}

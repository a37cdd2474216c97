// PM jobs, their performance reports and thresholds (SOL003 clause 6) in DynamoDB, and the records
// this store keeps (lib/pm reads them from here, so the store imports nothing above it).
//
// PmJobsTable holds the jobs (tenant records, listed through `byTenant`), their reports (items
// `report#<jobId>#<reportId>` without a tenant, so no list sees them, removed by DynamoDB's TTL at
// their expiryTime) and the collector's lease. A job carries `due` ("Y") and `nextCollectionAt`,
// the keys of the sparse index `due`, while it still collects: the collector Queries that index for
// the jobs due by now, so it reads nothing at all when there are none, and a job past its
// reportingBoundary drops out of it. ThresholdsTable holds only thresholds, each with its crossing
// state per measured sub-object.
import { allItems, getById, ifConditionHeld, putNew, requiredEnv, updateExpression, type Page, type TenantScope } from './dynamo.ts';
import { TenantRecordRepository } from './repository.ts';

/** One collection: the figures of each measured sub-object (a VNFC: usage percents; a CP: cumulative counters). */
export interface PmSample {
  at: string;
  values: Array<{
    vnfInstanceId: string;
    /** The VNFC (vnfcInfo id) or connection point the figures are of. */
    subObjectInstanceId: string;
    kind: 'vnfc' | 'intCp' | 'extCp';
    figures: Record<string, number>;
  }>;
}

/**
 * The reporting period in progress, as running aggregates (its size does not grow with the number
 * of collections): per `<vnfInstanceId>|<kind>|<subObjectInstanceId>|<figure>`, a usage figure's
 * count, sum and peak, and a counter's growth so far.
 */
export interface PmPeriod {
  collections: number;
  lastAt?: string;
  usage: Record<string, { n: number; sum: number; peak: number }>;
  growth: Record<string, number>;
}

/** The last reading of each cumulative counter, by the same key: where the next growth starts. */
export type CounterReadings = Record<string, number>;

export interface PmReportRef {
  id: string;
  readyTime: string;
  expiryTime: string;
  fileSize: number;
}

/** SOL003 6.5.2.10 PerformanceReport entries. */
export interface PmReportEntry {
  objectType: string;
  objectInstanceId: string;
  subObjectInstanceId?: string;
  performanceMetric: string;
  performanceValues: Array<{ timeStamp: string; value: number }>;
}

export interface PmReportRecord {
  jobId: string;
  reportId: string;
  entries: PmReportEntry[];
  readyTime: string;
}

export interface PmJobRecord {
  id: string;
  tenantId: string;
  createdAt: string;
  /** GSI sort key (byTenant): createdAt#id. */
  createdSeq: string;
  objectType: string;
  objectInstanceIds: string[];
  subObjectInstanceIds?: string[];
  criteria: {
    performanceMetric?: string[];
    performanceMetricGroup?: string[];
    collectionPeriod: number;
    reportingPeriod: number;
    reportingBoundary?: string;
  };
  callbackUri: string;
  /** The secret holding the notifications' authentication (never shown). */
  authSecret?: string;
  /** The API root the links of its notifications name. */
  apiRoot: string;
  /** The reports still available, oldest first. */
  reports: PmReportRef[];
  /** Sparse GSI `due` (hash: due = "Y", range: nextCollectionAt): present while the job collects. */
  due?: 'Y';
  nextCollectionAt?: string;
  /** The reporting period in progress. */
  period: PmPeriod;
  counters: CounterReadings;
  revision: number;
}

/** UP after a crossing upward, DOWN after one downward; a sub-object never measured has none. */
export type CrossingState = 'UP' | 'DOWN';

/** A threshold's scaling rule: the aspect, the steps of each scale, and how long after one no other starts. */
export interface ThresholdAutoScale {
  aspectId: string;
  numberOfSteps: number;
  coolDownSeconds: number;
}

export interface ThresholdRecord {
  id: string;
  tenantId: string;
  createdAt: string;
  createdSeq: string;
  objectType: string;
  objectInstanceId: string;
  subObjectInstanceIds?: string[];
  criteria: { performanceMetric: string; thresholdType: 'SIMPLE'; simpleThresholdDetails: { thresholdValue: number; hysteresis: number } };
  callbackUri: string;
  authSecret?: string;
  apiRoot: string;
  /** Per measured sub-object: the side of the threshold it was last found on. */
  crossings: Record<string, CrossingState>;
  /** Last counter readings per CP, for thresholds on traffic (their growth between collections). */
  counters?: CounterReadings;
  /** The product's extension: scale the VNF when the threshold is crossed (UP: out, DOWN: in). */
  autoScale?: ThresholdAutoScale;
  /** The last scale this threshold started, for its cool-down. */
  lastAutoScale?: { at: string; opOccId: string };
  revision: number;
}

export const pmListKey = (r: { id: string; tenantId: string; createdSeq: string }): Record<string, string> => ({
  id: r.id,
  tenantId: r.tenantId,
  createdSeq: r.createdSeq,
});

const reportKey = (jobId: string, reportId: string) => `report#${jobId}#${reportId}`;

/** What a PM job's notifications and its API may change: its callback and its authentication's secret. */
export interface NotificationTargetChange {
  callbackUri?: string;
  authSecret?: string | null;
}

export interface PmJobStore {
  create(record: PmJobRecord): Promise<void>;
  get(id: string): Promise<PmJobRecord | undefined>;
  listPage(scope: TenantScope, limit: number, after?: Record<string, string | number>): Promise<Page<PmJobRecord>>;
  /** Deletes the job; returns it, or undefined when it did not exist. */
  delete(id: string): Promise<PmJobRecord | undefined>;
  modify(id: string, change: NotificationTargetChange): Promise<PmJobRecord | undefined>;
  /** Every job whose next collection is at or before `until`. */
  listDue(until: string): Promise<PmJobRecord[]>;
  /** Records a collection (and the report it completed) if the job is still at `revision`; false when it moved on or is gone. */
  recordCollection(id: string, revision: number, set: Partial<PmJobRecord>, remove: string[]): Promise<boolean>;
  putReport(report: PmReportRecord, expiresAt: string): Promise<void>;
  getReport(jobId: string, reportId: string): Promise<PmReportRecord | undefined>;
}

export interface ThresholdStore {
  create(record: ThresholdRecord): Promise<void>;
  get(id: string): Promise<ThresholdRecord | undefined>;
  listPage(scope: TenantScope, limit: number, after?: Record<string, string | number>): Promise<Page<ThresholdRecord>>;
  delete(id: string): Promise<ThresholdRecord | undefined>;
  modify(id: string, change: NotificationTargetChange): Promise<ThresholdRecord | undefined>;
  /** Every threshold of every tenant (the collector evaluates each at every sweep). */
  listAll(): Promise<ThresholdRecord[]>;
  /** Records the crossing state (and counter readings) a collection left. */
  recordCrossings(id: string, crossings: Record<string, CrossingState>, counters: CounterReadings | undefined): Promise<void>;
  /** Records the scale a crossing started (the cool-down counts from it). */
  recordAutoScale(id: string, scale: { at: string; opOccId: string }): Promise<void>;
}

function targetUpdate(change: NotificationTargetChange): { set: Record<string, unknown>; remove: string[] } {
  const set: Record<string, unknown> = {};
  const remove: string[] = [];
  if (change.callbackUri !== undefined) set.callbackUri = change.callbackUri;
  if (change.authSecret === null) remove.push('authSecret');
  else if (change.authSecret !== undefined) set.authSecret = change.authSecret;
  return { set, remove };
}

/** The shared part of both stores: tenant records that can be deleted and have their notification target changed. */
class NotificationTargetRepository<T extends { id: string }> extends TenantRecordRepository<T> {
  delete(id: string): Promise<T | undefined> {
    return ifConditionHeld(
      async () =>
        (await this.deleteItem({ Key: { id }, ConditionExpression: 'attribute_exists(tenantId)', ReturnValues: 'ALL_OLD' })).Attributes as T | undefined,
    );
  }

  modify(id: string, change: NotificationTargetChange): Promise<T | undefined> {
    const { set, remove } = targetUpdate(change);
    const parts = updateExpression({ sets: ['revision = revision + :one'], values: { ':one': 1 } }, set, remove);
    return this.updatedRecord({
      Key: { id },
      UpdateExpression: parts.expression,
      ConditionExpression: 'attribute_exists(tenantId)',
      ExpressionAttributeNames: parts.names,
      ExpressionAttributeValues: parts.values,
    });
  }
}

export class DynamoPmJobStore extends NotificationTargetRepository<PmJobRecord> implements PmJobStore {
  constructor(table = requiredEnv('PM_JOBS_TABLE')) {
    super(table);
  }

  override async get(id: string): Promise<PmJobRecord | undefined> {
    const record = await getById<PmJobRecord>(this.table, id);
    // Reports and the lease share the table; only jobs have a tenant.
    return record?.tenantId ? record : undefined;
  }

  listDue(until: string): Promise<PmJobRecord[]> {
    return allItems<PmJobRecord>({
      TableName: this.table,
      IndexName: 'due',
      KeyConditionExpression: 'due = :y AND nextCollectionAt <= :until',
      ExpressionAttributeValues: { ':y': 'Y', ':until': until },
    });
  }

  async recordCollection(id: string, revision: number, set: Partial<PmJobRecord>, remove: string[]): Promise<boolean> {
    const parts = updateExpression({ sets: ['revision = revision + :one'], values: { ':one': 1, ':rev': revision } }, set, remove);
    const updated = await this.updatedRecord({
      Key: { id },
      UpdateExpression: parts.expression,
      ConditionExpression: 'revision = :rev',
      ExpressionAttributeNames: parts.names,
      ExpressionAttributeValues: parts.values,
    });
    return updated !== undefined;
  }

  async putReport(report: PmReportRecord, expiresAt: string): Promise<void> {
    // `ttl` (epoch seconds) is the table's TimeToLiveSpecification attribute.
    const item = { id: reportKey(report.jobId, report.reportId), ...report, ttl: Math.ceil(Date.parse(expiresAt) / 1000) };
    await putNew(this.table, item);
  }

  async getReport(jobId: string, reportId: string): Promise<PmReportRecord | undefined> {
    const item = await getById<PmReportRecord & { ttl?: number }>(this.table, reportKey(jobId, reportId));
    if (!item) return undefined;
    // TTL removes expired items within days, not at once.
    if (item.ttl !== undefined && item.ttl * 1000 < Date.now()) return undefined;
    return { jobId: item.jobId, reportId: item.reportId, entries: item.entries, readyTime: item.readyTime };
  }
}

export class DynamoThresholdStore extends NotificationTargetRepository<ThresholdRecord> implements ThresholdStore {
  constructor(table = requiredEnv('PM_THRESHOLDS_TABLE')) {
    super(table);
  }

  listAll(): Promise<ThresholdRecord[]> {
    return allItems<ThresholdRecord>({ TableName: this.table, FilterExpression: 'attribute_exists(tenantId)' });
  }

  async recordCrossings(id: string, crossings: Record<string, CrossingState>, counters: CounterReadings | undefined): Promise<void> {
    // A threshold deleted meanwhile stays deleted.
    await this.updatedRecord({
      Key: { id },
      UpdateExpression: counters ? 'SET crossings = :c, counters = :l' : 'SET crossings = :c',
      ConditionExpression: 'attribute_exists(tenantId)',
      ExpressionAttributeValues: { ':c': crossings, ...(counters ? { ':l': counters } : {}) },
    });
  }

  async recordAutoScale(id: string, scale: { at: string; opOccId: string }): Promise<void> {
    await this.updatedRecord({
      Key: { id },
      UpdateExpression: 'SET lastAutoScale = :s',
      ConditionExpression: 'attribute_exists(tenantId)',
      ExpressionAttributeValues: { ':s': scale },
    });
  }
}

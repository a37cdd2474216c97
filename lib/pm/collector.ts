// The PM collector: one scheduled sweep that serves every PM job due and every threshold. It reads
// the jobs due from the sparse `due` index (nothing at all when there are none) and the thresholds,
// asks each VIM once for the figures of the VNFCs they measure (driver.measure, bounded
// concurrency, a timeout each), then per job folds the collection into its period's running
// aggregates (the job item does not grow with the collections) and, once a reporting period's
// collections are in (reportingPeriod / collectionPeriod of them), stores a PerformanceReport and
// announces it (PerformanceInformationAvailableNotification); per threshold it evaluates the
// crossing of each measured sub-object and announces each crossing (ThresholdCrossedNotification).
// Notifications take the durable path of every other family: outbox entry, record write, queue.
//
// Time: a job is served at the sweep whose time is nearest its next collection (due when that is
// before now + half the sweep's rate), so collection periods shorter than the sweep's rate are
// served at the sweep's rate, and a report covers its collections however far apart the sweeps ran.
// Sweeps never overlap: one with work takes a lease first (as the VNFC health sweep does); one with
// nothing due and no threshold writes nothing at all.
import { log } from '#lib/log.ts';
import { publishAfterWrite } from '#lib/notify/publisher.ts';
import type { VimReference, VnfInstanceRecord } from '#lib/sol/model.ts';
import type { MeasureTarget, VnfcMeasurement } from '#lib/vim/driver.ts';
import { loadDriver } from '#lib/vim/registry.ts';
import { pool, rereadCredentials, sweepConnection, vimGroupKey, withTimeout } from '#lib/vim/sweeps.ts';
import { crossing, emptyPeriod, fold, metricsOf, reportEntries, sampleOf } from './aggregate.ts';
import {
  groupMetrics,
  parseMetric,
  renderReport,
  type CounterReadings,
  type ObjectType,
  type PmJobRecord,
  type PmReportEntry,
  type PmSample,
  type ThresholdRecord,
} from './model.ts';
import { pmOutboxEntry, reportAvailableEvent, thresholdCrossedEvent, type PmEvent } from './notifications.ts';
import type { PmDeps } from './ports.ts';
import { currentVim, measureTargetOf, vnfcNameOf } from './targets.ts';
import { measureVim } from './prometheus.ts';
import { autoScaleOnCrossing, type CrossingDirection } from './auto-scale.ts';

export interface CollectionReport {
  /** Set when this sweep did nothing because another one holds the lease. */
  skipped?: string;
  jobs: number;
  thresholds: number;
  instances: number;
  vims: number;
  vimApiCalls: number;
  vimFailures: Array<{ vimId: string; reason: string }>;
  /** VNFCs the VIMs could not measure this time. */
  unavailable: number;
  collected: number;
  reports: string[];
  crossings: number;
  /** SCALE op occs thresholds' scaling rules started. */
  scalesStarted: string[];
  durationMs: number;
}

export const COLLECTOR_LEASE = 'vnf-pm-collector';
const LEASE_MARGIN_MS = 30_000;
/** Reports a job lists at most (the oldest go first); each also expires after the retention. */
const MAX_LISTED_REPORTS = 100;

const emptyReport = (): CollectionReport => ({
  jobs: 0,
  thresholds: 0,
  instances: 0,
  vims: 0,
  vimApiCalls: 0,
  vimFailures: [],
  unavailable: 0,
  collected: 0,
  reports: [],
  crossings: 0,
  scalesStarted: [],
  durationMs: 0,
});

/**
 * One collection sweep, unless another is at work; `maxDurationMs` is the longest it can take (its
 * lease lasts that and a margin). With nothing due and no threshold it stops after those two reads,
 * before any write: an idle deployment pays for the reads of two empty results a minute.
 */
export async function collect(deps: PmDeps, maxDurationMs: number): Promise<CollectionReport> {
  const first = await workOf(deps);
  if (first.jobs.length === 0 && first.thresholds.length === 0) return emptyReport();
  const holder = deps.notify.newId();
  const now = Date.parse(deps.notify.now());
  if (!(await deps.leases.acquire(COLLECTOR_LEASE, holder, now, now + maxDurationMs + LEASE_MARGIN_MS))) {
    log.info('PM collection skipped: another sweep is at work');
    return { ...emptyReport(), skipped: 'another sweep holds the lease' };
  }
  try {
    // Read again under the lease: a sweep that just ended may have served these jobs and thresholds.
    return await collectAll(deps, await workOf(deps));
  } finally {
    await deps.leases.release(COLLECTOR_LEASE, holder);
  }
}

/** The jobs whose next collection is nearer this sweep than the next one, and every threshold. */
async function workOf(deps: PmDeps): Promise<{ now: string; jobs: PmJobRecord[]; thresholds: ThresholdRecord[] }> {
  const now = deps.notify.now();
  const horizon = new Date(Date.parse(now) + (deps.sweepRateSeconds * 1000) / 2).toISOString();
  const [jobs, thresholds] = await Promise.all([deps.jobs.listDue(horizon), deps.thresholds.listAll()]);
  return { now, jobs, thresholds };
}

/** When a job collects next: one period after the last slot, or one period from now when the sweeps fell behind it. */
export function nextCollectionAt(previous: string, periodSeconds: number, nowMs: number): string {
  const next = Date.parse(previous) + periodSeconds * 1000;
  return new Date(next >= nowMs ? next : nowMs + periodSeconds * 1000).toISOString();
}

async function collectAll(deps: PmDeps, { now, jobs, thresholds }: Awaited<ReturnType<typeof workOf>>): Promise<CollectionReport> {
  const started = Date.now();
  const nowMs = Date.parse(now);
  const report: CollectionReport = { ...emptyReport(), jobs: jobs.length, thresholds: thresholds.length };
  if (jobs.length === 0 && thresholds.length === 0) return report;

  const instances = await measuredInstances(deps, [...jobs.flatMap((job) => job.objectInstanceIds), ...thresholds.map((t) => t.objectInstanceId)]);
  report.instances = instances.size;
  const samples = await measure(deps, [...instances.values()], now, report);

  for (const job of jobs) await collectJob(deps, job, samples, instances, nowMs, report);
  for (const threshold of thresholds) await evaluateThreshold(deps, threshold, samples.get(threshold.objectInstanceId), now, report);
  report.durationMs = Date.now() - started;
  log.info('PM collection done', { ...report, reports: report.reports.length, vimFailures: report.vimFailures.length });
  return report;
}

/** The INSTANTIATED instances among `ids` (one that is gone or terminated has nothing to measure). */
async function measuredInstances(deps: PmDeps, ids: string[]): Promise<Map<string, VnfInstanceRecord>> {
  const found = new Map<string, VnfInstanceRecord>();
  for (const id of new Set(ids)) {
    const instance = await deps.instances.get(id);
    if (instance?.instantiationState === 'INSTANTIATED' && instance.vimResources?.vim) found.set(id, instance);
  }
  return found;
}

/** Each instance's sample of this collection: one measure call per VIM. */
async function measure(deps: PmDeps, instances: VnfInstanceRecord[], at: string, report: CollectionReport): Promise<Map<string, PmSample>> {
  const groups = new Map<string, { vim: VimReference; instances: VnfInstanceRecord[] }>();
  for (const instance of instances) {
    const vim = currentVim(instance) as VimReference;
    const key = vimGroupKey(vim);
    const group = groups.get(key) ?? { vim, instances: [] };
    group.instances.push(instance);
    groups.set(key, group);
  }
  report.vims = groups.size;
  const measurements: VnfcMeasurement[] = [];
  await pool([...groups.values()], deps.vimConcurrency, async ({ vim, instances: onVim }) => {
    const driver = await loadDriver(vim.vimType);
    if (!driver) {
      report.vimFailures.push({ vimId: vim.vimId, reason: `no driver for VIM type ${vim.vimType}` });
      return;
    }
    // An instance (or its VIM) naming a Prometheus is measured there (lib/pm/prometheus.ts); the rest by the VIM.
    const onVimTargets = onVim.map((instance) => ({ target: measureTargetOf(instance), metadata: instance.metadata }));
    try {
      const measured = await withTimeout(
        sweepConnection(deps.notify.secrets, vim).then((connection) =>
          measureVim(connection, onVimTargets, (targets: MeasureTarget[]) => driver.measure(connection, targets), { policy: deps.notify.egress }),
        ),
        deps.vimTimeoutMs,
        `VIM ${vim.vimId}`,
      );
      report.vimApiCalls += measured.apiCalls;
      report.unavailable += measured.unavailable.length;
      measurements.push(...measured.results);
    } catch (error) {
      // A VIM that cannot answer gives no sample: its jobs collect at the next sweep.
      report.vimFailures.push({ vimId: vim.vimId, reason: error instanceof Error ? error.message : String(error) });
      rereadCredentials(vim);
      log.warn('PM measurement failed for a VIM', { vimId: vim.vimId, error });
    }
  });
  const byInstance = new Map(instances.map((instance) => [instance.id, instance]));
  const samples = new Map<string, PmSample>();
  for (const instance of instances) {
    const own = measurements.filter((m) => m.vnfInstanceId === instance.id);
    if (own.length)
      samples.set(
        instance.id,
        sampleOf(at, own, (id, resourceInfoId) => vnfcNameOf(byInstance.get(id) ?? instance, resourceInfoId)),
      );
  }
  return samples;
}

/**
 * Announces PM notifications through the outbox: the entries are written before the change and the
 * events queued after it; the notifier removes each entry once it has fanned its event out (a
 * process that dies in between, or a queue that lost an event, leaves them to the recovery sweep).
 * A change that was not made removes them at once.
 */
async function announce(deps: PmDeps, events: PmEvent[], change: () => Promise<boolean>): Promise<boolean> {
  const kept: string[] = [];
  for (const event of events) {
    try {
      await deps.outbox?.put(pmOutboxEntry(event));
      if (deps.outbox) kept.push(event.notificationId);
    } catch (error) {
      log.error('could not record a notification in the outbox', { notificationId: event.notificationId, error });
    }
  }
  const removeKept = () => Promise.all(kept.map((id) => deps.outbox?.remove(id).catch(() => undefined)));
  let made: boolean;
  try {
    made = await change();
  } catch (error) {
    await removeKept();
    throw error;
  }
  if (!made) {
    await removeKept();
    return false;
  }
  if (!deps.queue) await removeKept();
  else if (events.length) await publishAfterWrite(deps.queue, events);
  return true;
}

async function collectJob(
  deps: PmDeps,
  job: PmJobRecord,
  samples: Map<string, PmSample>,
  instances: Map<string, VnfInstanceRecord>,
  nowMs: number,
  report: CollectionReport,
): Promise<void> {
  const now = new Date(nowMs).toISOString();
  const parts = job.objectInstanceIds.map((id) => samples.get(id)).filter((s): s is PmSample => s !== undefined);
  const boundary = job.criteria.reportingBoundary;
  const finishing = boundary !== undefined && Date.parse(boundary) <= nowMs;
  const next = nextCollectionAt(job.nextCollectionAt ?? job.createdAt, job.criteria.collectionPeriod, nowMs);
  if (parts.length === 0 && !finishing) {
    // No instance left to measure (terminated, deleted): the job waits a period, reading nothing more.
    if (!job.objectInstanceIds.some((id) => instances.has(id))) await deps.jobs.recordCollection(job.id, job.revision, { nextCollectionAt: next }, []);
    // Otherwise its VIM did not answer: the job stays due and collects at the next sweep.
    return;
  }
  const folded = parts.length
    ? fold(job.period, job.counters, { at: now, values: parts.flatMap((p) => p.values) })
    : { period: job.period, counters: job.counters };
  if (parts.length) report.collected++;
  const perReport = job.criteria.reportingPeriod / job.criteria.collectionPeriod;
  const stop = finishing ? ['due', 'nextCollectionAt'] : [];
  if (folded.period.collections < perReport && !finishing) {
    await deps.jobs.recordCollection(job.id, job.revision, { ...folded, nextCollectionAt: next }, []);
    return;
  }
  const entries = reportEntries(
    {
      objectType: job.objectType as ObjectType,
      objectInstanceIds: job.objectInstanceIds,
      subObjectInstanceIds: job.subObjectInstanceIds,
      metrics: metricsOf(job.criteria, (group) => groupMetrics(group) ?? []),
    },
    folded.period,
  );
  const reset = { period: emptyPeriod(), counters: folded.counters, ...(finishing ? {} : { nextCollectionAt: next }) };
  if (entries.length === 0) {
    // Nothing to report (e.g. counters read once only): the next period starts.
    await deps.jobs.recordCollection(job.id, job.revision, reset, stop);
    return;
  }
  const reportId = await publishReport(deps, job, entries, nowMs, reset, stop);
  if (reportId) report.reports.push(reportId);
}

/**
 * Stores a performance report of a job, lists it on the job (with `set` and `remove` applied in the
 * same conditional write) and announces it to the job's callback; answers its id, or undefined when
 * the job changed meanwhile (nothing is announced then).
 */
export async function publishReport(
  deps: PmDeps,
  job: PmJobRecord,
  entries: PmReportEntry[],
  nowMs: number,
  set: Partial<PmJobRecord>,
  remove: string[],
): Promise<string | undefined> {
  const now = new Date(nowMs).toISOString();
  const reportId = deps.notify.newId();
  const expiryTime = new Date(nowMs + deps.reportRetentionSeconds * 1000).toISOString();
  const fileSize = Buffer.byteLength(JSON.stringify(renderReport({ jobId: job.id, reportId, entries, readyTime: now })));
  await deps.jobs.putReport({ jobId: job.id, reportId, entries, readyTime: now }, expiryTime);
  const reports = [...job.reports.filter((ref) => ref.expiryTime > now), { id: reportId, readyTime: now, expiryTime, fileSize }].slice(-MAX_LISTED_REPORTS);
  const events = [...new Set(entries.map((entry) => entry.objectInstanceId))].map((id) => reportAvailableEvent(job, reportId, id, now));
  const recorded = await announce(deps, events, () => deps.jobs.recordCollection(job.id, job.revision, { ...set, reports }, remove));
  if (!recorded) return undefined;
  log.info('performance report ready', { pmJobId: job.id, reportId, entries: entries.length });
  return reportId;
}

async function evaluateThreshold(deps: PmDeps, threshold: ThresholdRecord, sample: PmSample | undefined, now: string, report: CollectionReport): Promise<void> {
  const metric = parseMetric(threshold.criteria.performanceMetric);
  if (!sample || !metric) return;
  // One collection is the period a threshold is evaluated over; traffic compares the counters with the last sweep's.
  const folded = fold(emptyPeriod(), threshold.counters ?? {}, sample);
  const entries = reportEntries(
    {
      objectType: threshold.objectType as ObjectType,
      objectInstanceIds: [threshold.objectInstanceId],
      subObjectInstanceIds: threshold.subObjectInstanceIds,
      metrics: [metric],
    },
    folded.period,
  );
  const values = entries.flatMap((entry) => {
    const value = entry.performanceValues[0]?.value;
    return value === undefined ? [] : [{ subObjectInstanceId: entry.subObjectInstanceId ?? entry.objectInstanceId, value }];
  });
  // Traffic thresholds compare the counters' growth since the last sweep: their readings are kept.
  const counters = metric.measurement.source.kind === 'cp' ? folded.counters : undefined;
  const outcome = await applyThresholdValues(deps, threshold, values, now, counters);
  report.crossings += outcome.crossings;
  if (outcome.scaled) report.scalesStarted.push(outcome.scaled);
}

/**
 * Evaluates a threshold on values measured now (per sub-object, or the object itself): records
 * where each now stands, announces each crossing, and starts the scale its rule calls for.
 */
export async function applyThresholdValues(
  deps: PmDeps,
  threshold: ThresholdRecord,
  values: Array<{ subObjectInstanceId: string; value: number }>,
  now: string,
  counters?: CounterReadings,
): Promise<{ crossings: number; scaled?: string }> {
  const crossings = { ...threshold.crossings };
  const events: PmEvent[] = [];
  const directions: CrossingDirection[] = [];
  for (const { subObjectInstanceId, value } of values) {
    const result = crossing(crossings[subObjectInstanceId], value, threshold.criteria.simpleThresholdDetails);
    if (result.state) crossings[subObjectInstanceId] = result.state;
    if (result.crossed) {
      events.push(thresholdCrossedEvent(threshold, { direction: result.crossed, subObjectInstanceId, value }, now));
      directions.push(result.crossed);
    }
  }
  await announce(deps, events, async () => {
    await deps.thresholds.recordCrossings(threshold.id, crossings, counters);
    return true;
  });
  for (const event of events) log.info('threshold crossed', { thresholdId: threshold.id, notificationId: event.notificationId });
  const scaled = await autoScaleOnCrossing(deps, threshold, directions, now);
  return { crossings: events.length, ...(scaled ? { scaled } : {}) };
}

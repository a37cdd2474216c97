// Tacker's Alertmanager webhooks for performance management, served beside the product's own
// collection: POST /pm_event (a Prometheus rule measured a PM job's metric: a performance report
// of that value, announced like any) and POST /pm_threshold (a rule measured a threshold's metric:
// the threshold is evaluated on it, crossings announced, its scaling rule applied). Alerts name
// their job or threshold and object by Tacker's labels (lib/pm/alertmanager.ts). An alert for a
// job or threshold that is not the caller's tenant's, no longer exists, does not cover the object
// or measures another metric is ignored (Alertmanager would only send it again if refused);
// resolved alerts carry no new measurement and are ignored too.
import { canSee, type Caller } from '#lib/auth/tenancy.ts';
import { log } from '#lib/log.ts';
import { parsePmWebhook, type PmWebhookEvent, type PmWebhookKind } from './alertmanager.ts';
import { applyThresholdValues, publishReport } from './collector.ts';
import { metricsOf } from './aggregate.ts';
import { groupMetrics, parseMetric, type PmReportEntry } from './model.ts';
import type { PmDeps } from './ports.ts';

export interface WebhookOutcome {
  accepted: number;
  ignored: Array<{ reason: string }>;
  reports: string[];
  crossings: number;
  scalesStarted: string[];
}

const sameMetric = (a: string, b: string): boolean => parseMetric(a)?.name === parseMetric(b)?.name && parseMetric(a) !== undefined;

export async function pmWebhookReceived(deps: PmDeps, caller: Caller, body: unknown, kind: PmWebhookKind): Promise<WebhookOutcome> {
  const parsed = parsePmWebhook(body, kind);
  const outcome: WebhookOutcome = { accepted: 0, ignored: [...parsed.ignored], reports: [], crossings: 0, scalesStarted: [] };
  const firing = parsed.events.filter((event) => {
    if (event.status === 'firing') return true;
    outcome.ignored.push({ reason: `alert ${event.fingerprint} is resolved: it carries no new measurement` });
    return false;
  });
  const byTarget = new Map<string, PmWebhookEvent[]>();
  for (const event of firing) {
    const target = (kind === 'pm_event' ? event.jobId : event.thresholdId) ?? '';
    byTarget.set(target, [...(byTarget.get(target) ?? []), event]);
  }
  for (const [id, events] of byTarget) {
    if (kind === 'pm_event') await reportEvents(deps, caller, id, events, outcome);
    else await thresholdEvents(deps, caller, id, events, outcome);
  }
  if (outcome.ignored.length) log.info('PM webhook alerts ignored', { kind, ignored: outcome.ignored.slice(0, 10) });
  return outcome;
}

async function reportEvents(deps: PmDeps, caller: Caller, jobId: string, events: PmWebhookEvent[], outcome: WebhookOutcome): Promise<void> {
  const job = await deps.jobs.get(jobId);
  if (!job?.tenantId || !canSee(caller, job.tenantId)) {
    outcome.ignored.push(...events.map(() => ({ reason: `no PM job ${jobId}` })));
    return;
  }
  const entries: PmReportEntry[] = [];
  for (const event of events) {
    const measured = metricsOf(job.criteria, (group) => groupMetrics(group) ?? []).some((metric) => sameMetric(metric.requested, event.metric));
    if (!job.objectInstanceIds.includes(event.objectInstanceId) || !measured) {
      outcome.ignored.push({ reason: `PM job ${jobId} does not measure ${event.metric} of ${event.objectInstanceId}` });
      continue;
    }
    entries.push({
      objectType: job.objectType,
      objectInstanceId: event.objectInstanceId,
      ...(event.subObjectInstanceId ? { subObjectInstanceId: event.subObjectInstanceId } : {}),
      performanceMetric: event.metric,
      performanceValues: [{ timeStamp: event.at, value: event.value }],
    });
  }
  if (!entries.length) return;
  const reportId = await publishReport(deps, job, entries, Date.now(), {}, []);
  if (reportId) {
    outcome.reports.push(reportId);
    outcome.accepted += entries.length;
  } else {
    outcome.ignored.push({ reason: `PM job ${jobId} changed while its report was written; the alert's next repeat reports it` });
  }
}

async function thresholdEvents(deps: PmDeps, caller: Caller, thresholdId: string, events: PmWebhookEvent[], outcome: WebhookOutcome): Promise<void> {
  const threshold = await deps.thresholds.get(thresholdId);
  if (!threshold?.tenantId || !canSee(caller, threshold.tenantId)) {
    outcome.ignored.push(...events.map(() => ({ reason: `no threshold ${thresholdId}` })));
    return;
  }
  const values: Array<{ subObjectInstanceId: string; value: number }> = [];
  for (const event of events) {
    const sub = event.subObjectInstanceId ?? event.objectInstanceId;
    const covered = !threshold.subObjectInstanceIds || threshold.subObjectInstanceIds.includes(sub);
    if (event.objectInstanceId !== threshold.objectInstanceId || !covered || !sameMetric(threshold.criteria.performanceMetric, event.metric)) {
      outcome.ignored.push({ reason: `threshold ${thresholdId} does not watch ${event.metric} of ${sub}` });
      continue;
    }
    values.push({ subObjectInstanceId: sub, value: event.value });
  }
  if (!values.length) return;
  const result = await applyThresholdValues(deps, threshold, values, new Date().toISOString());
  outcome.accepted += values.length;
  outcome.crossings += result.crossings;
  if (result.scaled) outcome.scalesStarted.push(result.scaled);
}

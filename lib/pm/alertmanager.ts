// Alertmanager webhooks in Tacker's prometheus plugin convention, read into PM events: a PM job's
// figures (POST /pm_event, alerts labelled function_type "vnfpm") and a threshold's (POST
// /pm_threshold, function_type "vnfpm_threshold"). The alert rules carry the labels Tacker writes
// (receiver_type "tacker", job_id or threshold_id, object_instance_id, sub_object_instance_id,
// metric) and the value in annotations.value ("{{$value}}"). Alertmanager sends every alert of a
// group in one body and sends it again when the answer is an error, so an alert that is not for
// this route, or lacks what an event needs, is set aside with a reason; only a body that is not an
// Alertmanager webhook at all is an error (a 400).
import * as z from 'zod';
import { BadRequestError } from '#lib/sol/errors.ts';

export type PmWebhookKind = 'pm_event' | 'pm_threshold';

export interface PmWebhookEvent {
  kind: PmWebhookKind;
  /** The PM job (pm_event). */
  jobId?: string;
  /** The threshold (pm_threshold). */
  thresholdId?: string;
  objectInstanceId: string;
  subObjectInstanceId?: string;
  /** The SOL003 performance metric, as the rule's label gives it (e.g. VCpuUsageMeanVnf.<vnfInstanceId>). */
  metric: string;
  value: number;
  /** ISO 8601: when the webhook came for a firing alert (as Tacker stamps it), when it ended for a resolved one. */
  at: string;
  status: 'firing' | 'resolved';
  /** Alertmanager's identity of the alert (its label set), the same in every repeat of it. */
  fingerprint: string;
}

/** The function_type of each route's alerts. */
const FUNCTION_TYPES: Record<PmWebhookKind, string> = { pm_event: 'vnfpm', pm_threshold: 'vnfpm_threshold' };

// Alertmanager's webhook (version 4); what Tacker's AlertMessage schema requires, and no more, so a
// newer Alertmanager's additions pass.
const alertSchema = z.looseObject({
  status: z.enum(['firing', 'resolved']),
  labels: z.record(z.string(), z.string()),
  annotations: z.record(z.string(), z.union([z.string(), z.number()])).default({}),
  startsAt: z.string(),
  endsAt: z.string().optional(),
  fingerprint: z.string(),
});
const webhookSchema = z.looseObject({
  version: z.string().optional(),
  groupKey: z.string().optional(),
  status: z.enum(['firing', 'resolved']).optional(),
  receiver: z.string().optional(),
  alerts: z.array(alertSchema),
});

type Alert = z.infer<typeof alertSchema>;

/** Where zod found the body wanting, in words for a ProblemDetails detail. */
function problems(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length ? issue.path.join('.') : 'the body'}: ${issue.message}`)
    .join('; ');
}

const label = (alert: Alert, name: string): string | undefined => {
  const value = alert.labels[name]?.trim();
  return value ? value : undefined;
};

/** annotations.value as a number: Prometheus renders {{$value}} as a float ("12.5", "1e+06", "NaN"). */
function alertValue(alert: Alert): number | undefined {
  const raw = alert.annotations.value;
  if (raw === undefined) return undefined;
  const value = typeof raw === 'number' ? raw : raw.trim() === '' ? Number.NaN : Number(raw);
  return Number.isFinite(value) ? value : undefined;
}

/** The event of one alert for this route, or why it is set aside. */
function eventOf(alert: Alert, kind: PmWebhookKind, now: Date): PmWebhookEvent | { reason: string } {
  const who = `alert ${alert.fingerprint}`;
  const receiverType = label(alert, 'receiver_type');
  if (receiverType !== 'tacker') return { reason: `${who}: receiver_type is ${receiverType ? `"${receiverType}"` : 'missing'}, not "tacker"` };
  const functionType = label(alert, 'function_type');
  if (functionType !== FUNCTION_TYPES[kind])
    return { reason: `${who}: function_type is ${functionType ? `"${functionType}"` : 'missing'}, not "${FUNCTION_TYPES[kind]}" (this route is /${kind})` };
  const idLabel = kind === 'pm_event' ? 'job_id' : 'threshold_id';
  const id = label(alert, idLabel);
  if (!id) return { reason: `${who}: no ${idLabel} label` };
  const objectInstanceId = label(alert, 'object_instance_id');
  if (!objectInstanceId) return { reason: `${who}: no object_instance_id label` };
  const metric = label(alert, 'metric');
  if (!metric) return { reason: `${who}: no metric label` };
  const value = alertValue(alert);
  if (value === undefined)
    return { reason: `${who}: annotations.value is ${alert.annotations.value === undefined ? 'missing' : `"${alert.annotations.value}", not a number`}` };
  // Alertmanager's endsAt of a firing alert is a time in the future it would resolve by; of a
  // resolved one, when it did. A repeat of a firing alert keeps its startsAt, so that says nothing of this value.
  const ended = alert.status === 'resolved' && alert.endsAt ? new Date(alert.endsAt) : undefined;
  const at = ended && !Number.isNaN(ended.getTime()) && ended.getUTCFullYear() > 1 ? ended : now;
  const subObjectInstanceId = label(alert, 'sub_object_instance_id');
  return {
    kind,
    ...(kind === 'pm_event' ? { jobId: id } : { thresholdId: id }),
    objectInstanceId,
    ...(subObjectInstanceId ? { subObjectInstanceId } : {}),
    metric,
    value,
    at: at.toISOString(),
    status: alert.status,
    fingerprint: alert.fingerprint,
  };
}

/**
 * The PM events of an Alertmanager webhook sent to /pm_event or /pm_threshold, and the alerts set
 * aside (another receiver_type or function_type, a label or the value missing) with why. Throws a
 * BadRequestError (400) when the body is not an Alertmanager webhook. Whether an event's job or
 * threshold exists and covers its object is the caller's to check, as is what a resolved alert
 * means for it (Tacker reads thresholds from firing alerts only).
 */
export function parsePmWebhook(body: unknown, kind: PmWebhookKind, now: Date = new Date()): { events: PmWebhookEvent[]; ignored: Array<{ reason: string }> } {
  const parsed = webhookSchema.safeParse(body);
  if (!parsed.success) throw new BadRequestError(`not an Alertmanager webhook: ${problems(parsed.error)}`);
  const events: PmWebhookEvent[] = [];
  const ignored: Array<{ reason: string }> = [];
  for (const alert of parsed.data.alerts) {
    const event = eventOf(alert, kind, now);
    if ('reason' in event) ignored.push(event);
    else events.push(event);
  }
  return { events, ignored };
}

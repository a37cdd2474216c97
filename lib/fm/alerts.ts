// Tacker's external fault triggers, on the same alarm and auto-heal path as the health sweep:
// Prometheus Alertmanager webhooks (`POST /alert/auto_healing`, `POST /alert/auto_scaling`, the
// Prometheus plugin's labels `function_type`, `vnf_instance_id`, `vnfc_info_id`, `aspect_id`,
// `auto_scale_type`), and the server notification of Tacker's v1 API (`POST
// /server_notification/vnf_instances/{id}/servers/{serverId}/notify`, Masakari-style host monitors).
// Every payload is validated whole before anything happens: a malformed one changes nothing.
import * as z from 'zod';
import { log } from '#lib/log.ts';
import { requestScale } from '#lib/lcm/requests/scale-heal.ts';
import { getVnfInstance } from '#lib/lcm/vnf-instances.ts';
import type { Caller } from '#lib/auth/tenancy.ts';
import { BadRequestError, NotFoundError, ProblemError } from '#lib/sol/errors.ts';
import { parseRequest } from '#lib/sol/requests.ts';
import type { VnfInstanceRecord } from '#lib/sol/model.ts';
import type { FmDeps } from '#lib/fm/ports.ts';
import type { AlarmRecord } from './model.ts';
import { autoHeal, autoHealEnabled, raiseAlarm, vnfcsOfInstance } from './monitor.ts';

const label = z.string().min(1).max(255);
const alert = <L extends z.ZodRawShape>(labels: L) =>
  z
    .object({
      status: z.enum(['firing', 'resolved']),
      labels: z.object(labels).passthrough(),
      annotations: z.record(z.string(), z.string()).optional(),
      startsAt: z.string().min(1),
      endsAt: z.string().optional(),
      generatorURL: z.string().optional(),
      fingerprint: z.string().min(1),
    })
    .passthrough();

/** Alertmanager's webhook payload (version 4): only `alerts` matters here. */
const webhook = <A extends z.ZodTypeAny>(item: A) => z.object({ alerts: z.array(item).min(1).max(1000) }).passthrough();

/** Tacker accepts both spellings of the labels (the Prometheus plugin's snake_case and the spec's camelCase). */
const either = (labels: Record<string, unknown>, snake: string, camel: string): string | undefined => {
  const value = labels[snake] ?? labels[camel];
  return typeof value === 'string' && value !== '' ? value : undefined;
};

const healAlert = alert({ receiver_type: label.optional(), function_type: label }).superRefine((value, ctx) => {
  if (!either(value.labels, 'vnf_instance_id', 'vnfInstanceId')) ctx.addIssue({ code: 'custom', path: ['labels', 'vnf_instance_id'], message: 'required' });
  if (!either(value.labels, 'vnfc_info_id', 'vnfcInfoId')) ctx.addIssue({ code: 'custom', path: ['labels', 'vnfc_info_id'], message: 'required' });
});
const scaleAlert = alert({ receiver_type: label.optional(), function_type: label, auto_scale_type: z.enum(['SCALE_OUT', 'SCALE_IN']) }).superRefine(
  (value, ctx) => {
    if (!either(value.labels, 'vnf_instance_id', 'vnfInstanceId')) ctx.addIssue({ code: 'custom', path: ['labels', 'vnf_instance_id'], message: 'required' });
    if (!either(value.labels, 'aspect_id', 'aspectId')) ctx.addIssue({ code: 'custom', path: ['labels', 'aspect_id'], message: 'required' });
  },
);

export interface AlertOutcome {
  /** Alerts acted on (firing, of this function type). */
  accepted: number;
  ignored: number;
  opOccIds: string[];
}

async function ensureAlarm(
  deps: FmDeps,
  instance: VnfInstanceRecord,
  vnfc: ReturnType<typeof vnfcsOfInstance>[number],
  source: AlarmRecord['source'],
  reason: string,
  probableCause: string,
): Promise<AlarmRecord> {
  const key = `${instance.id}#${vnfc.resourceId}`;
  const existing = (await deps.alarms.listOfInstanceSince(instance.id, '')).find((alarm) => alarm.activeKey === key);
  if (existing) return existing;
  return raiseAlarm(deps, {
    instance,
    vduId: vnfc.vduId,
    resourceId: vnfc.resourceId,
    reason,
    source,
    probableCause,
    severity: 'CRITICAL',
    eventType: 'PROCESSING_ERROR_ALARM',
    faultType: 'VNFC_FAILURE',
    ...(vnfc.vimLevelResourceType ? { vimLevelResourceType: vnfc.vimLevelResourceType } : {}),
  });
}

/** POST /alert/auto_healing: firing `auto_heal` alerts raise an alarm per VNFC and heal them (isAutohealEnabled). */
/** A VNFC an OPERATE stopped (its vnfcInfo says STOPPED): down on purpose, neither alarmed nor healed, as the health sweep treats it. */
function stoppedOnPurpose(instance: VnfInstanceRecord, vnfc: ReturnType<typeof vnfcsOfInstance>[number]): boolean {
  const infos = (instance.instantiatedVnfInfo?.vnfcInfo ?? []) as Array<{ vnfcResourceInfoId?: string; vnfcState?: string }>;
  return infos.some((info) => info.vnfcResourceInfoId === vnfc.id && info.vnfcState === 'STOPPED');
}

export async function alertAutoHealing(deps: FmDeps, caller: Caller, body: unknown): Promise<AlertOutcome> {
  const payload = parseRequest(webhook(healAlert), body, 'Alertmanager webhook (AutoHealAlertEvent)');
  const outcome: AlertOutcome = { accepted: 0, ignored: 0, opOccIds: [] };
  const wanted = new Map<string, Map<string, string>>();
  for (const item of payload.alerts) {
    const functionType = String(item.labels.function_type).replace('-', '_');
    if (item.status !== 'firing' || functionType !== 'auto_heal') {
      outcome.ignored++;
      continue;
    }
    const instanceId = either(item.labels, 'vnf_instance_id', 'vnfInstanceId') as string;
    const vnfcInfoId = either(item.labels, 'vnfc_info_id', 'vnfcInfoId') as string;
    const reasons = wanted.get(instanceId) ?? new Map<string, string>();
    reasons.set(
      vnfcInfoId,
      `Alertmanager alert ${String(item.labels.alertname ?? item.fingerprint)} (fingerprint ${item.fingerprint}) firing since ${item.startsAt}`,
    );
    wanted.set(instanceId, reasons);
    outcome.accepted++;
  }
  // Resolve everything first: an unknown instance or VNFC refuses the whole payload.
  const plans: Array<{ instance: VnfInstanceRecord; vnfcs: Array<[ReturnType<typeof vnfcsOfInstance>[number], string]> }> = [];
  for (const [instanceId, reasons] of wanted) {
    const instance = await getVnfInstance(deps.lcm, caller, instanceId);
    const vnfcs = vnfcsOfInstance(instance);
    const chosen: Array<[ReturnType<typeof vnfcsOfInstance>[number], string]> = [];
    for (const [vnfcInfoId, reason] of reasons) {
      const vnfc = vnfcs.find((candidate) => candidate.vnfcInfoIds.includes(vnfcInfoId) || candidate.id === vnfcInfoId);
      if (!vnfc) throw new BadRequestError(`VNF instance ${instanceId} has no VNFC ${vnfcInfoId} (vnfc_info_id names an id of its vnfcInfo)`);
      chosen.push([vnfc, reason]);
    }
    plans.push({ instance, vnfcs: chosen });
  }
  for (const plan of plans) {
    const alarms: AlarmRecord[] = [];
    for (const [vnfc, reason] of plan.vnfcs) {
      if (stoppedOnPurpose(plan.instance, vnfc)) {
        // An OPERATE stopped it: an alert that it is down is no fault, and nothing is healed.
        outcome.accepted--;
        outcome.ignored++;
        continue;
      }
      alarms.push(await ensureAlarm(deps, plan.instance, vnfc, 'alertmanager', reason, 'External monitoring alert'));
    }
    if (!alarms.length || !autoHealEnabled(plan.instance)) continue;
    const opOccId = await autoHeal(deps, plan.instance, alarms, 'automatic heal: Prometheus Alertmanager auto_heal alert');
    if (opOccId) outcome.opOccIds.push(opOccId);
  }
  return outcome;
}

/** POST /alert/auto_scaling: firing `auto_scale` alerts start a SCALE with isAutomaticInvocation (isAutoscaleEnabled). */
export async function alertAutoScaling(deps: FmDeps, caller: Caller, body: unknown): Promise<AlertOutcome> {
  const payload = parseRequest(webhook(scaleAlert), body, 'Alertmanager webhook (AutoScaleAlertEvent)');
  const outcome: AlertOutcome = { accepted: 0, ignored: 0, opOccIds: [] };
  const firing = payload.alerts.filter((item) => item.status === 'firing' && String(item.labels.function_type).replace('-', '_') === 'auto_scale');
  outcome.ignored = payload.alerts.length - firing.length;
  // Resolve every instance first: an unknown one refuses the whole payload before any SCALE starts.
  const instances = new Map<string, VnfInstanceRecord>();
  for (const item of firing) {
    const instanceId = either(item.labels, 'vnf_instance_id', 'vnfInstanceId') as string;
    if (!instances.has(instanceId)) instances.set(instanceId, await getVnfInstance(deps.lcm, caller, instanceId));
  }
  for (const item of firing) {
    const instance = instances.get(either(item.labels, 'vnf_instance_id', 'vnfInstanceId') as string) as VnfInstanceRecord;
    outcome.accepted++;
    if ((instance.vnfConfigurableProperties as Record<string, unknown> | undefined)?.isAutoscaleEnabled !== true) continue;
    try {
      const occ = await requestScale(
        deps.lcm,
        { tenantId: instance.tenantId },
        instance.id,
        {
          type: item.labels.auto_scale_type,
          aspectId: either(item.labels, 'aspect_id', 'aspectId') as string,
          numberOfSteps: 1,
        },
        2,
        { isAutomaticInvocation: true },
      );
      outcome.opOccIds.push(occ.id);
    } catch (error) {
      // A scale beyond the aspect's bounds (400) or an operation in progress (409) is not the monitor's fault.
      if (!(error instanceof ProblemError)) throw error;
      log.warn('automatic scale not started', { vnfInstanceId: instance.id, reason: error.message });
    }
  }
  return outcome;
}

/** Tacker v1 server notification (host monitoring, e.g. Masakari): `{"notification": {...}}`. */
const serverNotification = z
  .object({
    notification: z
      .object({
        host_id: z.string().max(255).optional(),
        alarm_id: z.string().min(1).max(255),
        fault_id: z.string().min(1).max(255),
        fault_type: z.string().max(255).optional(),
        fault_option: z.record(z.string(), z.unknown()).optional(),
      })
      .strict(),
  })
  .strict();

export async function serverNotified(deps: FmDeps, caller: Caller, vnfInstanceId: string, serverId: string, body: unknown): Promise<AlertOutcome> {
  const payload = parseRequest(serverNotification, body, 'server notification');
  const instance = await getVnfInstance(deps.lcm, caller, vnfInstanceId);
  const vnfc = vnfcsOfInstance(instance).find((candidate) => candidate.resourceId === serverId);
  if (!vnfc) throw new NotFoundError(`VNF instance ${vnfInstanceId} has no server ${serverId}`);
  if (stoppedOnPurpose(instance, vnfc)) return { accepted: 0, ignored: 1, opOccIds: [] };
  const n = payload.notification;
  const alarm = await ensureAlarm(
    deps,
    instance,
    vnfc,
    'server-notification',
    `server notification: fault ${n.fault_id}${n.fault_type ? ` (type ${n.fault_type})` : ''} of alarm ${n.alarm_id}${n.host_id ? ` on host ${n.host_id}` : ''}`,
    'Server notification',
  );
  const outcome: AlertOutcome = { accepted: 1, ignored: 0, opOccIds: [] };
  if (autoHealEnabled(instance)) {
    const opOccId = await autoHeal(deps, instance, [alarm], `automatic heal: server notification ${n.alarm_id}`);
    if (opOccId) outcome.opOccIds.push(opOccId);
  }
  return outcome;
}

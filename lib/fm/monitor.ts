// VNFC health monitoring, alarms and auto-heal (seed 003: Tacker's monitor -> respawn). A sweep
// reads every INSTANTIATED instance and every active alarm once, asks each VIM (bounded
// concurrency, a timeout each, one list call per VIM or namespace) how the VNFCs are, then per
// instance: raises one alarm per newly faulty VNFC, clears the alarms of VNFCs that are healthy
// again or gone (replaced by a heal), and, with isAutohealEnabled, starts one automatic HEAL for
// all the instance's faulty VNFCs, unless that VDU was healed too often lately (no heal storm).
// Instances an operation holds are skipped whole: their VNFCs are in flux and the lock says so.
// Sweeps never overlap: each first takes a lease (a conditional write on one item, lasting the
// invocation's remaining time and a margin), and one that finds it taken returns at once; a lease
// whose sweep died is taken over once it has expired. No reserved concurrency is needed for it.
import { log } from '#lib/log.ts';
import { requestHeal } from '#lib/lcm/requests/scale-heal.ts';
import { type Announced, withOutbox } from '#lib/notify/publisher.ts';
import { instanceSnapshot } from '#lib/sol/subscription-filter.ts';
import type { OutboxEntry } from '#lib/store/outbox.ts';
import { monitoredVnfcsOf, type MonitoredInstance, type MonitoredVnfc } from '#lib/store/vnf-instances.ts';
import { ProblemError } from '#lib/sol/errors.ts';
import type { VimReference, VnfInstanceRecord } from '#lib/sol/model.ts';
import type { FaultWording, HealthTarget, VnfcHealth } from '#lib/vim/driver.ts';
import { loadDriver } from '#lib/vim/registry.ts';
import type { FmDeps } from '#lib/fm/ports.ts';
import type { AlarmRecord, EventType, PerceivedSeverity } from './model.ts';
import { alarmEvent, type AlarmEvent } from './notifications.ts';
import { pool, rereadCredentials, sweepConnection, vimGroupKey, withTimeout } from '#lib/vim/sweeps.ts';

type Info = Record<string, unknown>;

export interface SweepReport {
  /** Set when this sweep did nothing because another one holds the lease. */
  skipped?: string;
  instances: number;
  skippedLocked: number;
  vnfcs: number;
  vims: number;
  vimApiCalls: number;
  vimFailures: Array<{ vimId: string; reason: string }>;
  raised: number;
  cleared: number;
  healsStarted: string[];
  durationMs: number;
}

/** A faulty VNFC as an alarm describes it. */
export interface Fault {
  instance: VnfInstanceRecord;
  vduId: string;
  resourceId: string;
  reason: string;
  severity: PerceivedSeverity;
  eventType: EventType;
  probableCause: string;
  faultType: string;
  source: AlarmRecord['source'];
  vimLevelResourceType?: string;
}

const activeKey = (vnfInstanceId: string, resourceId: string) => `${vnfInstanceId}#${resourceId}`;

/**
 * An instance's VNFCs with their VIM resources and vnfcInfo ids: the compact list the store keeps
 * beside instantiatedVnfInfo (what the sweep's index projects), else taken from instantiatedVnfInfo.
 */
export function vnfcsOfInstance(instance: MonitoredInstance): MonitoredVnfc[] {
  return instance.monitoredVnfcs ?? monitoredVnfcsOf(instance.instantiatedVnfInfo);
}

/** A VIM's report of a faulty VNFC as an alarm (SOL003 7.5.2.4), in the words of the VIM's driver. */
export function faultOf(instance: VnfInstanceRecord, health: VnfcHealth, wording: FaultWording): Fault {
  return { instance, vduId: health.vduId, resourceId: health.resourceId, reason: health.reason, source: 'health-check', ...wording };
}

async function publish(deps: FmDeps, events: AlarmEvent[]): Promise<Announced> {
  if (!deps.queue || events.length === 0) return 'nothing';
  try {
    await deps.queue.publish(events);
    return 'queued';
  } catch (error) {
    // An alarm is recorded even when its notification cannot be queued: the outbox keeps it for the sweep.
    log.error('could not queue alarm notifications', { error, count: events.length });
    return 'unqueued';
  }
}

/** The outbox entry of an alarm's notification, written before the alarm change. */
function alarmEntry(event: AlarmEvent): OutboxEntry {
  return {
    id: event.notificationId,
    kind: 'alarm',
    recordId: event.alarm.id,
    expect: { notificationType: event.notificationType, at: event.timeStamp },
    createdAt: event.timeStamp,
  };
}

export async function raiseAlarm(deps: FmDeps, fault: Fault): Promise<AlarmRecord> {
  const id = deps.newId();
  const now = deps.now();
  const vnfc = vnfcsOfInstance(fault.instance).find((candidate) => candidate.resourceId === fault.resourceId);
  const vim = fault.instance.vimResources?.vim;
  const record: AlarmRecord = {
    id,
    tenantId: fault.instance.tenantId,
    managedObjectId: fault.instance.id,
    vnfcInstanceIds: vnfc?.vnfcInfoIds ?? [],
    rootCauseFaultyResource: {
      faultyResource: {
        ...(vim?.connectionId ? { vimConnectionId: vim.connectionId } : {}),
        resourceId: fault.resourceId,
        ...((fault.vimLevelResourceType ?? vnfc?.vimLevelResourceType)
          ? { vimLevelResourceType: fault.vimLevelResourceType ?? vnfc?.vimLevelResourceType }
          : {}),
      },
      faultyResourceType: 'COMPUTE',
    },
    alarmRaisedTime: now,
    ackState: 'UNACKNOWLEDGED',
    perceivedSeverity: fault.severity,
    eventTime: now,
    eventType: fault.eventType,
    faultType: fault.faultType,
    probableCause: fault.probableCause,
    isRootCause: true,
    faultDetails: [fault.reason],
    raisedSeq: `${now}#${id}`,
    active: 'Y',
    activeKey: activeKey(fault.instance.id, fault.resourceId),
    vduId: fault.vduId,
    resourceId: fault.resourceId,
    raisedSeverity: fault.severity,
    source: fault.source,
    instance: instanceSnapshot(fault.instance),
    revision: 1,
  };
  const event = alarmEvent(record, 'AlarmNotification', now);
  await withOutbox(
    deps.outbox,
    alarmEntry(event),
    () => deps.alarms.create(record),
    () => {
      log.info('alarm raised', { alarmId: id, vnfInstanceId: fault.instance.id, resourceId: fault.resourceId, reason: fault.reason });
      return publish(deps, [event]);
    },
  );
  return record;
}

export async function clearAlarm(deps: FmDeps, alarm: AlarmRecord, detail: string): Promise<AlarmRecord | undefined> {
  const now = deps.now();
  // The entry names the notification the clearing will have (its id depends only on the alarm and the time).
  const entry = alarmEntry(alarmEvent(alarm, 'AlarmClearedNotification', now));
  return withOutbox(
    deps.outbox,
    entry,
    () => deps.alarms.clear(alarm.id, now, detail),
    async (cleared) => {
      if (!cleared) return 'nothing';
      log.info('alarm cleared', { alarmId: alarm.id, vnfInstanceId: alarm.managedObjectId, detail });
      return publish(deps, [alarmEvent(cleared, 'AlarmClearedNotification', now)]);
    },
  );
}

export function autoHealEnabled(instance: VnfInstanceRecord): boolean {
  return (instance.vnfConfigurableProperties as Info | undefined)?.isAutohealEnabled === true;
}

/**
 * One automatic HEAL of the instance for these alarms' VNFCs, unless a VDU among them was healed
 * `maxHeals` times within the window: then those alarms only get a note (the operator's turn) and
 * the others are healed. Returns the op occ id, or undefined when nothing was started.
 */
export async function autoHeal(deps: FmDeps, instance: VnfInstanceRecord, alarms: AlarmRecord[], cause: string): Promise<string | undefined> {
  if (alarms.length === 0) return undefined;
  const since = new Date(Date.parse(deps.now()) - deps.autoHeal.windowSeconds * 1000).toISOString();
  // The alarms raised within the window, and these alarms themselves (an alarm raised before the
  // window may have been healed within it).
  const history = new Map((await deps.alarms.listOfInstanceSince(instance.id, since)).map((alarm) => [alarm.id, alarm]));
  for (const alarm of alarms) if (!history.has(alarm.id)) history.set(alarm.id, alarm);
  // Attempts are HEAL operations: one HEAL of several VNFCs of a VDU (each alarm records it) is one.
  const healsOf = (vduId: string) =>
    new Set(
      [...history.values()]
        .filter((alarm) => alarm.vduId === vduId)
        .flatMap((alarm) => alarm.autoHeals ?? [])
        .filter((attempt) => attempt.at >= since)
        .map((attempt) => attempt.opOccId),
    ).size;
  const healable: AlarmRecord[] = [];
  for (const alarm of alarms) {
    const count = healsOf(alarm.vduId);
    if (count >= deps.autoHeal.maxHeals) {
      const note = `auto-heal suppressed: VDU ${alarm.vduId} was healed automatically ${count} times in the last ${deps.autoHeal.windowSeconds} s (limit ${deps.autoHeal.maxHeals}); left for the operator`;
      if (!alarm.faultDetails?.includes(note))
        await deps.alarms.update(alarm.id, { faultDetails: [...(alarm.faultDetails ?? []), note], alarmChangedTime: deps.now() });
      log.warn('auto-heal suppressed (heal storm)', { vnfInstanceId: instance.id, vduId: alarm.vduId, count });
    } else {
      healable.push(alarm);
    }
  }
  const vnfcInstanceId = [...new Set(healable.flatMap((alarm) => alarm.vnfcInstanceIds))];
  if (vnfcInstanceId.length === 0) return undefined;
  let opOccId: string;
  try {
    const occ = await requestHeal(deps.lcm, { tenantId: instance.tenantId }, instance.id, { vnfcInstanceId, cause }, 2, { isAutomaticInvocation: true });
    opOccId = occ.id;
  } catch (error) {
    // 409 (another operation got there first) or 422 (the VNFC is gone meanwhile): the next sweep looks again.
    log.warn('automatic heal not started', { vnfInstanceId: instance.id, reason: error instanceof ProblemError ? error.message : String(error) });
    return undefined;
  }
  const at = deps.now();
  for (const alarm of healable) {
    await deps.alarms.update(alarm.id, {
      autoHeals: [...(alarm.autoHeals ?? []), { opOccId, at }],
      faultDetails: [...(alarm.faultDetails ?? []), `auto-heal: HEAL operation occurrence ${opOccId} started (vnfLcmOpOccId=${opOccId})`],
      alarmChangedTime: at,
    });
  }
  log.info('automatic heal started', { vnfInstanceId: instance.id, opOccId, vnfcInstanceId });
  return opOccId;
}

/** The lease that keeps sweeps from overlapping, and how long it outlives the sweep's invocation (a sweep that died). */
export const SWEEP_LEASE = 'vnf-health-sweep';
export const SWEEP_LEASE_MARGIN_MS = 30_000;

const emptyReport = (): SweepReport => ({
  instances: 0,
  skippedLocked: 0,
  vnfcs: 0,
  vims: 0,
  vimApiCalls: 0,
  vimFailures: [],
  raised: 0,
  cleared: 0,
  healsStarted: [],
  durationMs: 0,
});

/**
 * One monitoring sweep over every instantiated VNF of every tenant, unless another sweep is at
 * work: `maxDurationMs` is the longest this one can take (its invocation's remaining time); its
 * lease lasts that and SWEEP_LEASE_MARGIN_MS, then a sweep that finds it may take it over.
 */
export async function sweep(deps: FmDeps, maxDurationMs: number): Promise<SweepReport> {
  // Nothing instantiated and no alarm active: nothing to do, and an empty deployment's sweep reads
  // two empty index pages and writes nothing (no lease taken and given back).
  if (!(await deps.watching())) return emptyReport();
  const holder = deps.newId();
  const now = Date.parse(deps.now());
  const until = now + maxDurationMs + SWEEP_LEASE_MARGIN_MS;
  if (!(await deps.leases.acquire(SWEEP_LEASE, holder, now, until))) {
    log.info('VNFC health sweep skipped: another sweep is at work');
    return { ...emptyReport(), skipped: 'another sweep holds the lease' };
  }
  try {
    return await sweepAll(deps);
  } finally {
    await deps.leases.release(SWEEP_LEASE, holder);
  }
}

async function sweepAll(deps: FmDeps): Promise<SweepReport> {
  const started = Date.now();
  const [instances, active] = await Promise.all([deps.instantiated(), deps.alarms.listActive()]);
  const report: SweepReport = {
    ...emptyReport(),
    instances: instances.length,
  };
  const activeByKey = new Map(active.map((alarm) => [alarm.activeKey ?? '', alarm]));
  const byInstance = new Map(instances.map((instance) => [instance.id, instance]));

  // Alarms of instances that are gone or no longer instantiated: their VNFCs no longer exist.
  for (const alarm of active) {
    if (!byInstance.has(alarm.managedObjectId)) {
      if (await clearAlarm(deps, alarm, 'cleared: the VNF instance is no longer instantiated')) report.cleared++;
    }
  }

  // Group the idle instances by VIM (endpoint and credentials): one health call each.
  const groups = new Map<string, { vim: VimReference; instances: VnfInstanceRecord[] }>();
  for (const instance of instances) {
    const vim = instance.vimResources?.vim;
    if (!vim) continue;
    if (instance.lockOpOccId) {
      report.skippedLocked++;
      continue;
    }
    const key = vimGroupKey(vim);
    const group = groups.get(key) ?? { vim, instances: [] };
    group.instances.push(instance);
    groups.set(key, group);
  }
  report.vims = groups.size;

  // Each result with the wording of its VIM's driver, for the alarm it may raise.
  const results: Array<VnfcHealth & { wording: (health: VnfcHealth) => FaultWording }> = [];
  await pool([...groups.values()], deps.vimConcurrency, async ({ vim, instances: onVim }) => {
    const driver = await loadDriver(vim.vimType);
    if (!driver) {
      report.vimFailures.push({ vimId: vim.vimId, reason: `no driver for VIM type ${vim.vimType}` });
      return;
    }
    const targets: HealthTarget[] = onVim.map((instance) => ({
      vnfInstanceId: instance.id,
      state: instance.vimResources?.driverState ?? {},
      vnfcs: vnfcsOfInstance(instance).map(({ vduId, resourceId }) => ({ vduId, resourceId })),
    }));
    try {
      const health = await withTimeout(
        sweepConnection(deps.lcm.secrets, vim).then((connection) => driver.health(connection, targets)),
        deps.vimTimeoutMs,
        `VIM ${vim.vimId}`,
      );
      report.vimApiCalls += health.apiCalls;
      results.push(...health.results.map((result) => ({ ...result, wording: driver.faultWording })));
    } catch (error) {
      // A VIM that cannot answer says nothing about its VNFCs: no alarm is raised or cleared for them.
      report.vimFailures.push({ vimId: vim.vimId, reason: error instanceof Error ? error.message : String(error) });
      rereadCredentials(vim);
      log.warn('VNFC health check failed for a VIM', { vimId: vim.vimId, error });
      for (const instance of onVim) byInstance.delete(instance.id);
    }
  });
  report.vnfcs = results.length;

  const resultsByInstance = new Map<string, typeof results>();
  for (const result of results) resultsByInstance.set(result.vnfInstanceId, [...(resultsByInstance.get(result.vnfInstanceId) ?? []), result]);

  for (const [instanceId, healthOfVnfcs] of resultsByInstance) {
    const instance = byInstance.get(instanceId);
    if (!instance) continue;
    const current = new Set(healthOfVnfcs.map((health) => health.resourceId));
    const faulty: AlarmRecord[] = [];
    for (const health of healthOfVnfcs) {
      const existing = activeByKey.get(activeKey(instanceId, health.resourceId));
      if (health.healthy) {
        if (existing && (await clearAlarm(deps, existing, `cleared: ${health.reason}`))) report.cleared++;
        continue;
      }
      if (existing) {
        faulty.push(existing);
        continue;
      }
      faulty.push(await raiseAlarm(deps, faultOf(instance, health, health.wording(health))));
      report.raised++;
    }
    // Alarms of VNFCs the instance no longer has (a heal replaced them).
    for (const alarm of active) {
      if (alarm.managedObjectId === instanceId && !current.has(alarm.resourceId)) {
        if (
          await clearAlarm(
            deps,
            alarm,
            `cleared: VNFC ${alarm.resourceId} no longer exists (replaced${alarm.autoHeals?.length ? ` by HEAL ${alarm.autoHeals.at(-1)?.opOccId}` : ''})`,
          )
        )
          report.cleared++;
      }
    }
    if (faulty.length && autoHealEnabled(instance)) {
      const opOccId = await autoHeal(
        deps,
        instance,
        faulty,
        `automatic heal: ${faulty.map((alarm) => alarm.faultDetails?.[0] ?? alarm.probableCause).join('; ')}`,
      );
      if (opOccId) report.healsStarted.push(opOccId);
    }
  }
  report.durationMs = Date.now() - started;
  log.info('VNFC health sweep done', { ...report, healsStarted: report.healsStarted.length, vimFailures: report.vimFailures.length });
  return report;
}

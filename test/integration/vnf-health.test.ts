// VNFC health monitoring, SOL003 fault management alarms and auto-heal over HTTP (seed 003): a
// server forced to ERROR on the OpenStack simulator and a crashed pod on the Kubernetes simulator
// are found by a sweep (triggered through the local schedule control, never by waiting), raise an
// alarm, are healed by one automatic HEAL (isAutomaticInvocation) when isAutohealEnabled, and the
// alarm clears; FM subscriptions receive AlarmNotification and AlarmClearedNotification; Tacker's
// Alertmanager webhook and server notification take the same path; malformed payloads change nothing.
// No heal storm: a VDU healed automatically AutoHealMaxAttempts times (2 here, through the template
// parameter) is not healed again, its alarm stays with a note. Alertmanager auto_scale alerts start
// an automatic SCALE only with isAutoscaleEnabled.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertEtsiResponse, assertEtsiSchema } from '../support/etsi.ts';
import { buildCsar, SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { startNfvoSink, type NfvoSink } from '../support/nfvo-sink.ts';
import { client, localControl, settle, startVnfm, type LocalVnfm, type Reply } from '../support/runtime.ts';

let vnfm: LocalVnfm;
let call: ReturnType<typeof client>;
let sink: NfvoSink;
let openstack: { control: string };
let cluster: { endpoint: string; control: string; bearer_token: string };
const FM = { version: '1.5.0' };
/** AutoHealMaxAttempts for this file's VNFM (each other test heals an instance at most once). */
const MAX_AUTO_HEALS = 2;
const INSTANTIATE = {
  flavourId: 'simple',
  instantiationLevelId: 'instantiation_level_1',
  extVirtualLinks: [
    {
      id: 'ext-public',
      resourceId: 'public',
      extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { VDU1_CP1_1: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }],
    },
  ],
};

type Vnfc = { id: string; vduId: string; computeResource: { resourceId: string } };
type Shown = {
  instantiatedVnfInfo: {
    vnfcResourceInfo: Vnfc[];
    vnfcInfo: Array<{ id: string; vnfcResourceInfoId: string; vnfcState?: string }>;
    scaleStatus?: Array<{ aspectId: string; scaleLevel: number }>;
  };
};
type Alarm = {
  id: string;
  managedObjectId: string;
  perceivedSeverity: string;
  ackState: string;
  eventType: string;
  alarmChangedTime?: string;
  alarmClearedTime?: string;
  faultDetails?: string[];
  vnfcInstanceIds: string[];
  rootCauseFaultyResource: { faultyResource: { resourceId: string } };
};
type Sweep = { raised: number; cleared: number; healsStarted: string[]; skippedLocked: number; vimApiCalls: number };

before(async () => {
  // Schedules only run when a test asks (no timer-driven sweep can race with the assertions).
  // Template parameters as `sam deploy --parameter-overrides` takes them: a small heal-storm limit.
  vnfm = await startVnfm({ env: { VNFM_SCHEDULE_SCALE: '0', VNFM_PARAMETER_OVERRIDES: `AutoHealMaxAttempts=${MAX_AUTO_HEALS} AutoHealWindowSeconds=600` } });
  call = client(vnfm);
  sink = await startNfvoSink();
  const vims = JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8'));
  openstack = vims['local-openstack'];
  cluster = vims['local-kubernetes'];
  for (const name of ['openstack-vnf-v1', 'k8s-cnf-v1'] as const) {
    const pkg = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
    await call('PUT', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content`, { raw: await buildCsar(name), headers: { 'Content-Type': 'application/zip' } });
  }
  await settle(vnfm);
});
after(async () => {
  await vnfm.stop();
  await sink.close();
});

function assertProblem(reply: Reply, status: number): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.headers.get('content-type'), 'application/problem+json');
}

/** Runs one health sweep now (the schedule's control endpoint answers when it is done), then lets what it started finish. */
async function sweep(): Promise<Sweep> {
  const response = await localControl(vnfm, 'POST', '/_local/schedules/VnfHealthMonitorFunction/run');
  assert.equal(response.status, 200, await response.clone().text());
  const report = (await response.json()) as Sweep;
  await settle(vnfm);
  return report;
}

async function control(base: string, path: string, body: unknown): Promise<void> {
  const response = await fetch(`${base}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  assert.ok(response.ok, await response.text());
}

async function instantiated(vnfdId: string, request: Record<string, unknown>, autoHeal: boolean, properties: Record<string, unknown> = {}): Promise<string> {
  const created = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId, vnfInstanceName: 'health' } });
  assert.equal(created.status, 201, created.text);
  const id = (created.body as { id: string }).id;
  assert.equal((await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, { body: request })).status, 202);
  await settle(vnfm);
  const modified = await call('PATCH', `/vnflcm/v2/vnf_instances/${id}`, {
    body: { vnfConfigurableProperties: { isAutohealEnabled: autoHeal, ...properties } },
    headers: { 'Content-Type': 'application/merge-patch+json' },
  });
  assert.equal(modified.status, 202, modified.text);
  await settle(vnfm);
  const shown = await call('GET', `/vnflcm/v2/vnf_instances/${id}`);
  assert.equal((shown.body as { instantiationState: string }).instantiationState, 'INSTANTIATED');
  return id;
}

async function show(id: string): Promise<Shown> {
  return (await call('GET', `/vnflcm/v2/vnf_instances/${id}`)).body as Shown;
}

async function alarmsOf(id: string): Promise<Alarm[]> {
  const reply = await call('GET', `/vnffm/v1/alarms?filter=${encodeURIComponent(`(eq,managedObjectId,${id})`)}`, FM);
  assert.equal(reply.status, 200, reply.text);
  // The V3.7.1 YAML gives GET /alarms a single Alarm as its 200 schema (the text says an array): each item is checked.
  for (const alarm of reply.body as unknown[]) await assertEtsiSchema('vnffm', 'Alarm', alarm);
  return reply.body as Alarm[];
}

type OpOcc = {
  id: string;
  operationState: string;
  isAutomaticInvocation: boolean;
  operationParams: { vnfcInstanceId?: string[]; type?: string; aspectId?: string };
};

async function opOccsOf(id: string, operation: 'HEAL' | 'SCALE'): Promise<OpOcc[]> {
  const reply = await call(
    'GET',
    `/vnflcm/v2/vnf_lcm_op_occs?filter=${encodeURIComponent(`(eq,operation,${operation});(eq,vnfInstanceId,${id})`)}&fields=operationParams`,
  );
  assert.equal(reply.status, 200, reply.text);
  return reply.body as OpOcc[];
}

const healsOf = (id: string) => opOccsOf(id, 'HEAL');

describe('OpenStack: a server in ERROR', () => {
  it('auto-heal on: a sweep raises an alarm, one automatic HEAL replaces exactly that VNFC, the next sweep clears it; an FM subscriber is told both', async () => {
    const subscription = await call('POST', '/vnffm/v1/subscriptions', {
      ...FM,
      body: { callbackUri: `${sink.url}/fm/os`, filter: { eventTypes: ['EQUIPMENT_ALARM'] } },
    });
    assert.equal(subscription.status, 201, subscription.text);
    await assertEtsiResponse('vnffm', '/subscriptions', 'post', 201, subscription.body);

    const id = await instantiated(SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId, INSTANTIATE, true);
    const before = await show(id);
    const target = before.instantiatedVnfInfo.vnfcResourceInfo.find((v) => v.vduId === 'VDU1') as Vnfc;
    const other = before.instantiatedVnfInfo.vnfcResourceInfo.find((v) => v.vduId === 'VDU2') as Vnfc;
    assert.ok(target && other);
    const infoId = before.instantiatedVnfInfo.vnfcInfo.find((v) => v.vnfcResourceInfoId === target.id)?.id;

    assert.equal((await sweep()).raised, 0, 'a healthy VNF raises nothing');
    await control(openstack.control, `servers/${target.computeResource.resourceId}/status`, { status: 'ERROR' });
    const first = await sweep();
    assert.equal(first.raised, 1);
    assert.equal(first.healsStarted.length, 1);

    const [alarm] = await alarmsOf(id);
    assert.ok(alarm);
    assert.equal(alarm.rootCauseFaultyResource.faultyResource.resourceId, target.computeResource.resourceId);
    assert.deepEqual(alarm.vnfcInstanceIds, [infoId]);
    assert.equal(alarm.eventType, 'EQUIPMENT_ALARM');
    assert.equal(alarm.perceivedSeverity, 'CRITICAL');
    assert.ok(
      alarm.faultDetails?.some((d) => d.includes(first.healsStarted[0] as string)),
      'the alarm names the HEAL that treats it',
    );
    const single = await call('GET', `/vnffm/v1/alarms/${alarm.id}`, FM);
    await assertEtsiResponse('vnffm', '/alarms/{alarmId}', 'get', 200, single.body);

    const heals = await healsOf(id);
    assert.equal(heals.length, 1);
    assert.equal(heals[0]?.operationState, 'COMPLETED');
    assert.equal(heals[0]?.isAutomaticInvocation, true);
    assert.deepEqual(heals[0]?.operationParams.vnfcInstanceId, [infoId]);
    const after = (await show(id)).instantiatedVnfInfo.vnfcResourceInfo.map((v) => v.computeResource.resourceId);
    assert.equal(after.length, 2);
    assert.ok(!after.includes(target.computeResource.resourceId), 'the failed server was replaced');
    assert.ok(after.includes(other.computeResource.resourceId), 'the other VNFC keeps its server');

    const second = await sweep();
    assert.equal(second.raised, 0);
    assert.equal(second.cleared, 1);
    const [cleared] = await alarmsOf(id);
    assert.equal(cleared?.perceivedSeverity, 'CLEARED');
    assert.ok(cleared?.alarmClearedTime);
    assert.equal((await sweep()).raised, 0, 'nothing is raised again');

    const received = sink.accepted('/fm/os').filter((n) => (n.alarm as Alarm | undefined)?.id === alarm.id || n.alarmId === alarm.id);
    assert.deepEqual(
      received.map((n) => n.notificationType),
      ['AlarmNotification', 'AlarmClearedNotification'],
    );
    await assertEtsiSchema('vnffm-notification', 'AlarmNotification', received[0]);
    await assertEtsiSchema('vnffm-notification', 'AlarmClearedNotification', received[1]);
    assert.equal(received[0]?.subscriptionId, (subscription.body as { id: string }).id);
  });

  it('auto-heal off: SHUTOFF raises one MAJOR alarm and no operation; ackState PATCH; restarting the server clears it', async () => {
    const id = await instantiated(SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId, INSTANTIATE, false);
    const target = (await show(id)).instantiatedVnfInfo.vnfcResourceInfo[0] as Vnfc;
    await control(openstack.control, `servers/${target.computeResource.resourceId}/status`, { status: 'SHUTOFF' });
    assert.equal((await sweep()).raised, 1);
    assert.equal((await sweep()).raised, 0, 'one alarm per fault, not one per sweep');
    const alarms = (await alarmsOf(id)).filter((a) => !a.alarmClearedTime);
    assert.equal(alarms.length, 1);
    const alarm = alarms[0] as Alarm;
    assert.equal(alarm.perceivedSeverity, 'MAJOR');
    assert.equal(alarm.ackState, 'UNACKNOWLEDGED');
    assert.deepEqual(await healsOf(id), []);

    const patch = { ...FM, body: { ackState: 'ACKNOWLEDGED' }, headers: { 'Content-Type': 'application/merge-patch+json' } };
    const acked = await call('PATCH', `/vnffm/v1/alarms/${alarm.id}`, patch);
    assert.equal(acked.status, 200, acked.text);
    await assertEtsiResponse('vnffm', '/alarms/{alarmId}', 'patch', 200, acked.body);
    assert.equal(((await call('GET', `/vnffm/v1/alarms/${alarm.id}`, FM)).body as Alarm).ackState, 'ACKNOWLEDGED');
    assertProblem(await call('PATCH', `/vnffm/v1/alarms/${alarm.id}`, patch), 409);
    assertProblem(await call('PATCH', `/vnffm/v1/alarms/${alarm.id}`, { ...patch, body: { ackState: 'MAYBE' } }), 400);
    assertProblem(await call('GET', '/vnffm/v1/alarms/00000000-0000-4000-8000-000000000000', FM), 404);

    await control(openstack.control, `servers/${target.computeResource.resourceId}/status`, { status: 'ACTIVE' });
    assert.equal((await sweep()).cleared, 1);
    assert.equal((await alarmsOf(id)).filter((a) => !a.alarmClearedTime).length, 0);
    assert.deepEqual(await healsOf(id), []);
  });
});

describe('Kubernetes: a crashed pod', () => {
  const DEF_FILES = ['Files/kubernetes/deployment.yaml', 'Files/kubernetes/service.yaml'];
  async function pods(namespace: string): Promise<string[]> {
    const response = await fetch(`${cluster.endpoint}/api/v1/namespaces/${namespace}/pods`, { headers: { Authorization: `Bearer ${cluster.bearer_token}` } });
    const listed = (await response.json()) as { items: Array<{ metadata: { name: string; deletionTimestamp?: string } }> };
    return listed.items.filter((pod) => !pod.metadata.deletionTimestamp).map((pod) => pod.metadata.name);
  }

  it('auto-heal on: CrashLoopBackOff raises a PROCESSING_ERROR_ALARM, the automatic HEAL replaces the pod, the alarm clears', async () => {
    const namespace = 'health-on';
    const id = await instantiated(
      SAMPLE_PACKAGES['k8s-cnf-v1'].vnfdId,
      { flavourId: 'simple', additionalParams: { 'lcm-kubernetes-def-files': DEF_FILES, namespace } },
      true,
    );
    const [vnfc] = (await show(id)).instantiatedVnfInfo.vnfcResourceInfo;
    const pod = vnfc?.computeResource.resourceId as string;
    await control(cluster.control, 'faults', { kind: 'pod-crash', pod, namespace });
    assert.deepEqual(await pods(namespace), [pod], 'no controller replaces a crashing pod by itself');
    const report = await sweep();
    assert.equal(report.raised, 1);
    assert.equal(report.healsStarted.length, 1);
    const [alarm] = await alarmsOf(id);
    assert.equal(alarm?.eventType, 'PROCESSING_ERROR_ALARM');
    assert.equal(alarm?.rootCauseFaultyResource.faultyResource.resourceId, pod);
    const heals = await healsOf(id);
    assert.equal(heals[0]?.operationState, 'COMPLETED');
    assert.equal(heals[0]?.isAutomaticInvocation, true);
    const running = await pods(namespace);
    assert.equal(running.length, 1);
    assert.notEqual(running[0], pod, 'the crashed pod was replaced');
    assert.equal((await sweep()).cleared, 1);
    assert.equal((await alarmsOf(id))[0]?.perceivedSeverity, 'CLEARED');
  });

  it('auto-heal off: the alarm only', async () => {
    const namespace = 'health-off';
    const id = await instantiated(
      SAMPLE_PACKAGES['k8s-cnf-v1'].vnfdId,
      { flavourId: 'simple', additionalParams: { 'lcm-kubernetes-def-files': DEF_FILES, namespace } },
      false,
    );
    const pod = (await show(id)).instantiatedVnfInfo.vnfcResourceInfo[0]?.computeResource.resourceId as string;
    await control(cluster.control, 'faults', { kind: 'pod-crash', pod, namespace });
    const report = await sweep();
    assert.equal(report.raised, 1);
    assert.deepEqual(report.healsStarted, []);
    assert.equal((await alarmsOf(id)).length, 1);
    assert.deepEqual(await healsOf(id), []);
    assert.deepEqual(await pods(namespace), [pod]);
  });
});

describe('no heal storm (AutoHealMaxAttempts)', () => {
  const vduOf = async (id: string, vduId: string) => {
    const shown = await show(id);
    const vnfc = shown.instantiatedVnfInfo.vnfcResourceInfo.find((v) => v.vduId === vduId) as Vnfc;
    assert.ok(vnfc, `the instance has a ${vduId} VNFC`);
    return { vnfc, infoId: shown.instantiatedVnfInfo.vnfcInfo.find((v) => v.vnfcResourceInfoId === vnfc.id)?.id as string };
  };
  const suppressed = (alarm: Alarm | undefined) => (alarm?.faultDetails ?? []).filter((d) => d.includes('auto-heal suppressed'));

  it('a VDU that keeps failing is healed AutoHealMaxAttempts times, then its alarm stays with a note and no HEAL is started; another VDU is still healed', async () => {
    const id = await instantiated(SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId, INSTANTIATE, true);
    const healed: string[] = [];
    for (let attempt = 1; attempt <= MAX_AUTO_HEALS; attempt++) {
      const { vnfc } = await vduOf(id, 'VDU1');
      await control(openstack.control, `servers/${vnfc.computeResource.resourceId}/status`, { status: 'ERROR' });
      const report = await sweep();
      assert.equal(report.raised, 1, `failure ${attempt} raises an alarm`);
      assert.equal(report.healsStarted.length, 1, `failure ${attempt} is healed`);
      healed.push(vnfc.computeResource.resourceId);
      const heals = await healsOf(id);
      assert.equal(heals.length, attempt);
      assert.ok(heals.every((h) => h.operationState === 'COMPLETED' && h.isAutomaticInvocation));
      assert.ok(
        !(await show(id)).instantiatedVnfInfo.vnfcResourceInfo.some((v) => v.computeResource.resourceId === vnfc.computeResource.resourceId),
        'the failed server was replaced',
      );
    }

    // The VDU slot fails once more: beyond the limit.
    const { vnfc, infoId } = await vduOf(id, 'VDU1');
    await control(openstack.control, `servers/${vnfc.computeResource.resourceId}/status`, { status: 'ERROR' });
    const report = await sweep();
    assert.equal(report.raised, 1);
    assert.deepEqual(report.healsStarted, [], 'no HEAL beyond AutoHealMaxAttempts');
    assert.equal((await healsOf(id)).length, MAX_AUTO_HEALS);
    const active = (await alarmsOf(id)).filter((a) => !a.alarmClearedTime);
    assert.equal(active.length, 1, 'the earlier alarms cleared, the last one stays');
    const [alarm] = active;
    assert.equal(alarm?.rootCauseFaultyResource.faultyResource.resourceId, vnfc.computeResource.resourceId);
    assert.deepEqual(alarm?.vnfcInstanceIds, [infoId]);
    assert.equal(alarm?.perceivedSeverity, 'CRITICAL');
    assert.equal(suppressed(alarm).length, 1, `the alarm says why it was not healed: ${JSON.stringify(alarm?.faultDetails)}`);
    assert.match(suppressed(alarm)[0] as string, new RegExp(`VDU1 was healed automatically ${MAX_AUTO_HEALS} times`));
    assert.ok(alarm?.alarmChangedTime);
    assert.ok(
      (await show(id)).instantiatedVnfInfo.vnfcResourceInfo.some((v) => v.computeResource.resourceId === vnfc.computeResource.resourceId),
      'the server is left for the operator',
    );
    for (const cleared of (await alarmsOf(id)).filter((a) => a.alarmClearedTime)) {
      assert.ok(healed.includes(cleared.rootCauseFaultyResource.faultyResource.resourceId));
    }

    // Later sweeps neither heal nor repeat the note; neither does an Alertmanager alert for the same VNFC.
    const again = await sweep();
    assert.equal(again.raised, 0);
    assert.deepEqual(again.healsStarted, []);
    const reply = await call('POST', '/alert/auto_healing', {
      body: {
        alerts: [
          {
            status: 'firing',
            labels: { alertname: 'VnfcDown', receiver_type: 'tacker', function_type: 'auto_heal', vnf_instance_id: id, vnfc_info_id: infoId },
            startsAt: new Date().toISOString(),
            fingerprint: 'storm',
          },
        ],
      },
    });
    assert.equal(reply.status, 204, reply.text);
    await settle(vnfm);
    assert.equal((await healsOf(id)).length, MAX_AUTO_HEALS);
    const still = (await alarmsOf(id)).filter((a) => !a.alarmClearedTime);
    assert.deepEqual(
      still.map((a) => a.id),
      [alarm?.id],
    );
    assert.equal(suppressed(still[0]).length, 1, 'one note, not one per sweep');

    // The limit is per VDU: VDU2 failing now is healed, and only VDU2.
    const other = await vduOf(id, 'VDU2');
    await control(openstack.control, `servers/${other.vnfc.computeResource.resourceId}/status`, { status: 'ERROR' });
    const mixed = await sweep();
    assert.equal(mixed.raised, 1);
    assert.equal(mixed.healsStarted.length, 1);
    const heals = await healsOf(id);
    assert.equal(heals.length, MAX_AUTO_HEALS + 1);
    const last = heals.find((h) => h.id === mixed.healsStarted[0]);
    assert.equal(last?.operationState, 'COMPLETED');
    assert.deepEqual(last?.operationParams.vnfcInstanceId, [other.infoId], 'the suppressed VDU1 VNFC is not in the HEAL');
    assert.ok((await show(id)).instantiatedVnfInfo.vnfcResourceInfo.some((v) => v.computeResource.resourceId === vnfc.computeResource.resourceId));
  });

  it('the limit counts HEAL operations, not VNFCs: one HEAL of two VNFCs of a VDU is one attempt', async () => {
    const id = await instantiated(SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId, INSTANTIATE, true);
    const scaled = await call('POST', `/vnflcm/v2/vnf_instances/${id}/scale`, { body: { type: 'SCALE_OUT', aspectId: 'VDU1_scale' } });
    assert.equal(scaled.status, 202, scaled.text);
    await settle(vnfm);
    const servers = async () =>
      (await show(id)).instantiatedVnfInfo.vnfcResourceInfo.filter((v) => v.vduId === 'VDU1').map((v) => v.computeResource.resourceId);
    const both = await servers();
    assert.equal(both.length, 2);
    for (const server of both) await control(openstack.control, `servers/${server}/status`, { status: 'ERROR' });
    const first = await sweep();
    assert.equal(first.raised, 2);
    assert.equal(first.healsStarted.length, 1, 'one HEAL covers both');
    assert.equal((await healsOf(id))[0]?.operationParams.vnfcInstanceId?.length, 2);

    // Attempt 2 of 2 is still allowed (one server of the slot fails again)...
    const [again] = await servers();
    await control(openstack.control, `servers/${again}/status`, { status: 'ERROR' });
    const second = await sweep();
    assert.equal(second.healsStarted.length, 1, 'the second HEAL of VDU1 is within the limit');
    // ...attempt 3 is not.
    const [third] = await servers();
    await control(openstack.control, `servers/${third}/status`, { status: 'ERROR' });
    const beyond = await sweep();
    assert.deepEqual(beyond.healsStarted, []);
    assert.equal((await healsOf(id)).length, 2);
    const active = (await alarmsOf(id)).filter((a) => !a.alarmClearedTime);
    assert.equal(active.length, 1);
    assert.equal(suppressed(active[0]).length, 1);
  });
});

describe("Tacker's external triggers", () => {
  const alertFor = (labels: Record<string, string>) => ({
    version: '4',
    status: 'firing',
    receiver: 'auto-heal',
    groupLabels: {},
    commonLabels: {},
    commonAnnotations: {},
    externalURL: 'http://alertmanager:9093',
    alerts: [
      {
        status: 'firing',
        labels: { alertname: 'VnfcDown', receiver_type: 'tacker', ...labels },
        annotations: {},
        startsAt: new Date().toISOString(),
        fingerprint: 'f00d',
      },
    ],
  });

  it('an Alertmanager auto_heal alert raises an alarm and heals the VNFC it names (isAutomaticInvocation)', async () => {
    const id = await instantiated(SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId, INSTANTIATE, true);
    const shown = await show(id);
    const vdu1 = shown.instantiatedVnfInfo.vnfcResourceInfo.find((v) => v.vduId === 'VDU1')?.id;
    const target = shown.instantiatedVnfInfo.vnfcInfo.find((v) => v.vnfcResourceInfoId === vdu1) as { id: string; vnfcResourceInfoId: string };
    const reply = await call('POST', '/alert/auto_healing', { body: alertFor({ function_type: 'auto_heal', vnf_instance_id: id, vnfc_info_id: target.id }) });
    assert.equal(reply.status, 204, reply.text);
    await settle(vnfm);
    const [alarm] = await alarmsOf(id);
    assert.deepEqual(alarm?.vnfcInstanceIds, [target.id]);
    const heals = await healsOf(id);
    assert.equal(heals.length, 1);
    assert.equal(heals[0]?.operationState, 'COMPLETED');
    assert.equal(heals[0]?.isAutomaticInvocation, true);
    assert.deepEqual(heals[0]?.operationParams.vnfcInstanceId, [target.id]);
    const after = (await show(id)).instantiatedVnfInfo.vnfcResourceInfo.map((v) => v.id);
    assert.ok(!after.includes(target.vnfcResourceInfoId));
    assert.equal((await sweep()).cleared >= 1, true, "the replaced VNFC's alarm clears");
  });

  it('an Alertmanager auto_heal alert on a VNFC an OPERATE stopped raises no alarm and heals nothing: it is down on purpose', async () => {
    const id = await instantiated(SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId, INSTANTIATE, true);
    const stop = await call('POST', `/vnflcm/v2/vnf_instances/${id}/operate`, { body: { changeStateTo: 'STOPPED', stopType: 'FORCEFUL' } });
    assert.equal(stop.status, 202, stop.text);
    await settle(vnfm);
    const target = (await show(id)).instantiatedVnfInfo.vnfcInfo[0];
    assert.equal(target?.vnfcState, 'STOPPED');
    const reply = await call('POST', '/alert/auto_healing', {
      body: alertFor({ function_type: 'auto_heal', vnf_instance_id: id, vnfc_info_id: target?.id ?? '' }),
    });
    assert.equal(reply.status, 204, reply.text);
    await settle(vnfm);
    assert.deepEqual(await alarmsOf(id), []);
    assert.deepEqual(await healsOf(id), []);
  });

  it('malformed payloads are refused with 400 ProblemDetails and change nothing', async () => {
    const id = await instantiated(SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId, INSTANTIATE, true);
    const server = (await show(id)).instantiatedVnfInfo.vnfcResourceInfo[0]?.computeResource.resourceId as string;
    const bad: Array<[string, unknown]> = [
      ['/alert/auto_healing', {}],
      ['/alert/auto_healing', { alerts: [] }],
      ['/alert/auto_healing', alertFor({ function_type: 'auto_heal', vnf_instance_id: id })],
      ['/alert/auto_healing', { alerts: [{ status: 'burning', labels: {}, startsAt: 'x', fingerprint: 'y' }] }],
      ['/alert/auto_healing', alertFor({ function_type: 'auto_heal', vnf_instance_id: id, vnfc_info_id: 'no-such-vnfc' })],
      ['/alert/auto_scaling', alertFor({ function_type: 'auto_scale', vnf_instance_id: id, aspect_id: 'VDU1_scale', auto_scale_type: 'SIDEWAYS' })],
      [`/server_notification/vnf_instances/${id}/servers/${server}/notify`, { notification: { fault_id: '1' } }],
      [`/server_notification/vnf_instances/${id}/servers/${server}/notify`, { alarm_id: 'a', fault_id: '1' }],
    ];
    for (const [path, body] of bad) assertProblem(await call('POST', path, { body }), 400);
    assertProblem(await call('POST', '/alert/auto_healing', { raw: '{"alerts": [', headers: { 'Content-Type': 'application/json' } }), 400);
    await settle(vnfm);
    assert.deepEqual(await alarmsOf(id), []);
    assert.deepEqual(await healsOf(id), []);
  });

  it('a server notification raises an alarm for that server and heals it', async () => {
    const id = await instantiated(SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId, INSTANTIATE, true);
    const vnfc = (await show(id)).instantiatedVnfInfo.vnfcResourceInfo.find((v) => v.vduId === 'VDU1') as Vnfc;
    const reply = await call('POST', `/server_notification/vnf_instances/${id}/servers/${vnfc.computeResource.resourceId}/notify`, {
      body: { notification: { host_id: 'compute-1', alarm_id: 'alarm-1', fault_id: '1', fault_type: '10' } },
    });
    assert.equal(reply.status, 204, reply.text);
    await settle(vnfm);
    assert.equal((await alarmsOf(id)).length, 1);
    const heals = await healsOf(id);
    assert.equal(heals[0]?.operationState, 'COMPLETED');
    assert.equal(heals[0]?.isAutomaticInvocation, true);
    assertProblem(
      await call('POST', `/server_notification/vnf_instances/${id}/servers/no-such-server/notify`, {
        body: { notification: { alarm_id: 'a', fault_id: '1' } },
      }),
      404,
    );
  });
  describe('Alertmanager auto_scale alerts', () => {
    const scaleAlert = (id: string, type: string, status = 'firing') => ({
      version: '4',
      status,
      receiver: 'auto-scale',
      groupLabels: {},
      commonLabels: {},
      commonAnnotations: {},
      externalURL: 'http://alertmanager:9093',
      alerts: [
        {
          status,
          labels: {
            alertname: 'HighLoad',
            receiver_type: 'tacker',
            function_type: 'auto_scale',
            vnf_instance_id: id,
            aspect_id: 'VDU1_scale',
            auto_scale_type: type,
          },
          annotations: {},
          startsAt: new Date().toISOString(),
          fingerprint: `scale-${type}`,
        },
      ],
    });
    const vdu1Count = async (id: string) => (await show(id)).instantiatedVnfInfo.vnfcResourceInfo.filter((v) => v.vduId === 'VDU1').length;
    const level = async (id: string) => (await show(id)).instantiatedVnfInfo.scaleStatus?.find((s) => s.aspectId === 'VDU1_scale')?.scaleLevel;

    it('isAutoscaleEnabled false: 204 and nothing happens', async () => {
      const id = await instantiated(SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId, INSTANTIATE, false, { isAutoscaleEnabled: false });
      const reply = await call('POST', '/alert/auto_scaling', { body: scaleAlert(id, 'SCALE_OUT') });
      assert.equal(reply.status, 204, reply.text);
      await settle(vnfm);
      assert.deepEqual(await opOccsOf(id, 'SCALE'), []);
      assert.equal(await vdu1Count(id), 1);
      assert.equal(await level(id), 0);
    });

    it('a payload naming an unknown instance is refused whole: no alert of it starts anything', async () => {
      const id = await instantiated(SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId, INSTANTIATE, false, { isAutoscaleEnabled: true });
      const body = scaleAlert(id, 'SCALE_OUT');
      body.alerts.push({
        ...body.alerts[0]!,
        labels: { ...body.alerts[0]!.labels, vnf_instance_id: '00000000-0000-4000-8000-000000000000' },
        fingerprint: 'unknown',
      });
      assertProblem(await call('POST', '/alert/auto_scaling', { body }), 404);
      await settle(vnfm);
      assert.deepEqual(await opOccsOf(id, 'SCALE'), []);
      assert.equal(await vdu1Count(id), 1);
    });

    it('isAutoscaleEnabled true: SCALE_OUT then SCALE_IN start automatic SCALE op occs that change the VNFCs and scaleStatus; resolved alerts do nothing', async () => {
      const id = await instantiated(SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId, INSTANTIATE, false, { isAutoscaleEnabled: true });
      assert.equal(await vdu1Count(id), 1);

      const out = await call('POST', '/alert/auto_scaling', { body: scaleAlert(id, 'SCALE_OUT') });
      assert.equal(out.status, 204, out.text);
      await settle(vnfm);
      let scales = await opOccsOf(id, 'SCALE');
      assert.equal(scales.length, 1);
      assert.equal(scales[0]?.operationState, 'COMPLETED');
      assert.equal(scales[0]?.isAutomaticInvocation, true);
      assert.equal(scales[0]?.operationParams.type, 'SCALE_OUT');
      assert.equal(scales[0]?.operationParams.aspectId, 'VDU1_scale');
      assert.equal(await vdu1Count(id), 2);
      assert.equal(await level(id), 1);

      const resolved = await call('POST', '/alert/auto_scaling', { body: scaleAlert(id, 'SCALE_OUT', 'resolved') });
      assert.equal(resolved.status, 204, resolved.text);
      await settle(vnfm);
      assert.equal((await opOccsOf(id, 'SCALE')).length, 1, 'a resolved alert starts nothing');

      const scaledIn = await call('POST', '/alert/auto_scaling', { body: scaleAlert(id, 'SCALE_IN') });
      assert.equal(scaledIn.status, 204, scaledIn.text);
      await settle(vnfm);
      scales = await opOccsOf(id, 'SCALE');
      assert.equal(scales.length, 2);
      const scaleIn = scales.find((s) => s.operationParams.type === 'SCALE_IN');
      assert.equal(scaleIn?.operationState, 'COMPLETED');
      assert.equal(scaleIn?.isAutomaticInvocation, true);
      assert.equal(await vdu1Count(id), 1);
      assert.equal(await level(id), 0);

      // Switched off again (merge patch): the next alert is read and ignored.
      const off = await call('PATCH', `/vnflcm/v2/vnf_instances/${id}`, {
        body: { vnfConfigurableProperties: { isAutoscaleEnabled: false } },
        headers: { 'Content-Type': 'application/merge-patch+json' },
      });
      assert.equal(off.status, 202, off.text);
      await settle(vnfm);
      assert.equal((await call('POST', '/alert/auto_scaling', { body: scaleAlert(id, 'SCALE_OUT') })).status, 204);
      await settle(vnfm);
      assert.equal((await opOccsOf(id, 'SCALE')).length, 2);
      assert.equal(await vdu1Count(id), 1);
    });
  });
});

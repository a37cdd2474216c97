// VNFC health monitoring, SOL003 fault management alarms and auto-heal over HTTP (seed 003): a
// server forced to ERROR on the OpenStack simulator and a crashed pod on the Kubernetes simulator
// are found by a sweep (triggered through the local schedule control, never by waiting), raise an
// alarm, are healed by one automatic HEAL (isAutomaticInvocation) when isAutohealEnabled, and the
// alarm clears; FM subscriptions receive AlarmNotification and AlarmClearedNotification; Tacker's
// Alertmanager webhook and server notification take the same path; malformed payloads change nothing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertEtsiResponse, assertEtsiSchema } from '../support/etsi.ts';
import { buildCsar, SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { startNfvoSink, type NfvoSink } from '../support/nfvo-sink.ts';
import { client, settle, startVnfm, type LocalVnfm, type Reply } from '../support/runtime.ts';

let vnfm: LocalVnfm;
let call: ReturnType<typeof client>;
let sink: NfvoSink;
let openstack: { control: string };
let cluster: { endpoint: string; control: string; bearer_token: string };
const FM = { version: '1.5.0' };
const INSTANTIATE = {
  flavourId: 'simple',
  instantiationLevelId: 'instantiation_level_1',
  extVirtualLinks: [{ id: 'ext-public', resourceId: 'public', extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { VDU1_CP1_1: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }] }],
};

type Vnfc = { id: string; vduId: string; computeResource: { resourceId: string } };
type Shown = { instantiatedVnfInfo: { vnfcResourceInfo: Vnfc[]; vnfcInfo: Array<{ id: string; vnfcResourceInfoId: string }> } };
type Alarm = { id: string; managedObjectId: string; perceivedSeverity: string; ackState: string; eventType: string; alarmClearedTime?: string; faultDetails?: string[]; vnfcInstanceIds: string[]; rootCauseFaultyResource: { faultyResource: { resourceId: string } } };
type Sweep = { raised: number; cleared: number; healsStarted: string[]; skippedLocked: number; vimApiCalls: number };

before(async () => {
  // Schedules only run when a test asks (no timer-driven sweep can race with the assertions).
  vnfm = await startVnfm({ env: { VNFM_SCHEDULE_SCALE: '0' } });
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
  const response = await fetch(`${vnfm.url}/_local/schedules/VnfHealthMonitorFunction/run`, { method: 'POST' });
  assert.equal(response.status, 200, await response.clone().text());
  const report = await response.json() as Sweep;
  await settle(vnfm);
  return report;
}

async function control(base: string, path: string, body: unknown): Promise<void> {
  const response = await fetch(`${base}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  assert.ok(response.ok, await response.text());
}

async function instantiated(vnfdId: string, request: Record<string, unknown>, autoHeal: boolean): Promise<string> {
  const created = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId, vnfInstanceName: 'health' } });
  assert.equal(created.status, 201, created.text);
  const id = (created.body as { id: string }).id;
  assert.equal((await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, { body: request })).status, 202);
  await settle(vnfm);
  const modified = await call('PATCH', `/vnflcm/v2/vnf_instances/${id}`, { body: { vnfConfigurableProperties: { isAutohealEnabled: autoHeal } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
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

async function healsOf(id: string): Promise<Array<{ id: string; operationState: string; isAutomaticInvocation: boolean; operationParams: { vnfcInstanceId?: string[] } }>> {
  const reply = await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=${encodeURIComponent(`(eq,vnfInstanceId,${id});(eq,operation,HEAL)`)}&fields=operationParams`);
  assert.equal(reply.status, 200, reply.text);
  return reply.body as Array<{ id: string; operationState: string; isAutomaticInvocation: boolean; operationParams: { vnfcInstanceId?: string[] } }>;
}

describe('OpenStack: a server in ERROR', () => {
  it('auto-heal on: a sweep raises an alarm, one automatic HEAL replaces exactly that VNFC, the next sweep clears it; an FM subscriber is told both', async () => {
    const subscription = await call('POST', '/vnffm/v1/subscriptions', { ...FM, body: { callbackUri: `${sink.url}/fm/os`, filter: { eventTypes: ['EQUIPMENT_ALARM'] } } });
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
    assert.ok(alarm.faultDetails?.some((d) => d.includes(first.healsStarted[0] as string)), 'the alarm names the HEAL that treats it');
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
    assert.deepEqual(received.map((n) => n.notificationType), ['AlarmNotification', 'AlarmClearedNotification']);
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
    const listed = await response.json() as { items: Array<{ metadata: { name: string; deletionTimestamp?: string } }> };
    return listed.items.filter((pod) => !pod.metadata.deletionTimestamp).map((pod) => pod.metadata.name);
  }

  it('auto-heal on: CrashLoopBackOff raises a PROCESSING_ERROR_ALARM, the automatic HEAL replaces the pod, the alarm clears', async () => {
    const namespace = 'health-on';
    const id = await instantiated(SAMPLE_PACKAGES['k8s-cnf-v1'].vnfdId, { flavourId: 'simple', additionalParams: { 'lcm-kubernetes-def-files': DEF_FILES, namespace } }, true);
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
    const id = await instantiated(SAMPLE_PACKAGES['k8s-cnf-v1'].vnfdId, { flavourId: 'simple', additionalParams: { 'lcm-kubernetes-def-files': DEF_FILES, namespace } }, false);
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

describe("Tacker's external triggers", () => {
  const alertFor = (labels: Record<string, string>) => ({
    version: '4', status: 'firing', receiver: 'auto-heal', groupLabels: {}, commonLabels: {}, commonAnnotations: {}, externalURL: 'http://alertmanager:9093',
    alerts: [{ status: 'firing', labels: { alertname: 'VnfcDown', receiver_type: 'tacker', ...labels }, annotations: {}, startsAt: new Date().toISOString(), fingerprint: 'f00d' }],
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
    assert.equal((await sweep()).cleared >= 1, true, 'the replaced VNFC\'s alarm clears');
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
    const reply = await call('POST', `/server_notification/vnf_instances/${id}/servers/${vnfc.computeResource.resourceId}/notify`, { body: { notification: { host_id: 'compute-1', alarm_id: 'alarm-1', fault_id: '1', fault_type: '10' } } });
    assert.equal(reply.status, 204, reply.text);
    await settle(vnfm);
    assert.equal((await alarmsOf(id)).length, 1);
    const heals = await healsOf(id);
    assert.equal(heals[0]?.operationState, 'COMPLETED');
    assert.equal(heals[0]?.isAutomaticInvocation, true);
    assertProblem(await call('POST', `/server_notification/vnf_instances/${id}/servers/no-such-server/notify`, { body: { notification: { alarm_id: 'a', fault_id: '1' } } }), 404);
  });
});

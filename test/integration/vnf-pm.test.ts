// SOL003 VNF performance management over HTTP on the OpenStack and Kubernetes simulators: PM jobs and thresholds on
// the sample VNF, the load inside its servers set through the simulator's /_sim/ controls, and the
// collector run through the local schedule control (never by waiting). A job's report at its
// reporting period holds the mean and peak of the CPU usage set at each collection, and the growth
// of an external CP's traffic counters; its notification links the report. A threshold crossed UP
// and back DOWN notifies exactly twice, values within its hysteresis not at all. Requests on a
// NOT_INSTANTIATED instance, with an unknown metric, or with a callback refusing the test GET get
// 422; on Kubernetes a job reports each pod's usage against its requests; notification credentials are never shown; every exchange and notification is checked
// against the ETSI PM schemas (support/exchange.ts, support/nfvo-sink.ts).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertEtsiSchema } from '../support/etsi.ts';
import { SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { lcmSteps } from '../support/lcm-http.ts';
import { startNfvoSink, type NfvoSink } from '../support/nfvo-sink.ts';
import { createLocalClient } from '#local/oauth2.ts';
import { adminCredentials, client, localControl, localVims, settle, startVnfm, type LocalVnfm, type Reply } from '../support/runtime.ts';

let vnfm: LocalVnfm;
let call: ReturnType<typeof client>;
let sink: NfvoSink;
let control: string;
let cluster: string;
let vnfId: string;
let vdu1: { server: string; vnfcName: string; extCp: string };
const PM = { version: '2.2.0' };
const BASIC = { authType: ['BASIC'], paramsBasic: { userName: 'nfvo', password: 'pm-secret-not-to-be-shown' } };

type Entry = {
  objectType: string;
  objectInstanceId: string;
  subObjectInstanceId?: string;
  performanceMetric: string;
  performanceValues: Array<{ value: number }>;
};
type Collection = { collected: number; reports: string[]; crossings: number; vimFailures: unknown[] };

before(async () => {
  vnfm = await startVnfm({ env: { VNFM_SCHEDULE_SCALE: '0' } });
  call = client(vnfm);
  sink = await startNfvoSink();
  control = localVims(vnfm).openstack.control;
  cluster = localVims(vnfm).kubernetes.control;
  await lcmSteps(vnfm, call).onboard(['openstack-vnf-v1', 'k8s-cnf-v1']);
  const created = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId, vnfInstanceName: 'pm' } });
  assert.equal(created.status, 201, created.text);
  vnfId = (created.body as { id: string }).id;
  const instantiate = {
    flavourId: 'simple',
    extVirtualLinks: [
      {
        id: 'ext-public',
        resourceId: 'public',
        extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { c: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }],
      },
    ],
  };
  assert.equal((await call('POST', `/vnflcm/v2/vnf_instances/${vnfId}/instantiate`, { body: instantiate })).status, 202);
  await settle(vnfm);
  const shown = (await call('GET', `/vnflcm/v2/vnf_instances/${vnfId}`)).body as {
    instantiatedVnfInfo: {
      vnfcResourceInfo: Array<{
        id: string;
        vduId: string;
        computeResource: { resourceId: string };
        vnfcCpInfo?: Array<{ cpdId: string; vnfExtCpId?: string }>;
      }>;
      vnfcInfo: Array<{ id: string; vnfcResourceInfoId: string }>;
    };
  };
  const vnfc = shown.instantiatedVnfInfo.vnfcResourceInfo.find((v) => v.vduId === 'VDU1');
  assert.ok(vnfc);
  const vnfcName = shown.instantiatedVnfInfo.vnfcInfo.find((v) => v.vnfcResourceInfoId === vnfc.id)?.id;
  const extCp = vnfc.vnfcCpInfo?.find((cp) => cp.cpdId === 'VDU1_CP1')?.vnfExtCpId;
  assert.ok(vnfcName && extCp);
  vdu1 = { server: vnfc.computeResource.resourceId, vnfcName, extCp };
});
after(async () => {
  await vnfm?.stop();
  await sink?.close();
});

/** Runs one PM collection now (the schedule's control answers when it is done), then lets its notifications go out. */
async function collect(): Promise<Collection> {
  const response = await localControl(vnfm, 'POST', '/_local/schedules/VnfPmCollectorFunction/run');
  assert.equal(response.status, 200, await response.clone().text());
  const report = (await response.json()) as Collection;
  assert.deepEqual(report.vimFailures, []);
  await settle(vnfm);
  return report;
}

/** Sets the load inside VDU1's server: its CPU usage, and its NICs' received bytes with no traffic of their own. */
async function load(cpuUtilisation: number, rxOctets?: number): Promise<void> {
  const body = {
    cpuUtilisation,
    ...(rxOctets === undefined ? {} : { nic: { rxOctets, rxOctetsPerSecond: 0, txOctetsPerSecond: 0, rxPacketsPerSecond: 0, txPacketsPerSecond: 0 } }),
  };
  const response = await fetch(`${control}servers/${vdu1.server}/load`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.ok(response.ok, await response.text());
}

function assertProblem(reply: Reply, status: number, detail?: RegExp): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.headers.get('content-type'), 'application/problem+json');
  if (detail) assert.match(String((reply.body as { detail?: string }).detail), detail);
}

const job = (overrides: Record<string, unknown> = {}) => ({
  objectType: 'Vnf',
  objectInstanceIds: [vnfId],
  criteria: { performanceMetric: ['VCpuUsageMeanVnf', 'VCpuUsagePeakVnf'], collectionPeriod: 10, reportingPeriod: 20 },
  callbackUri: `${sink.url}/pm/job`,
  ...overrides,
});

describe('PM jobs', () => {
  it('reports at its reporting period the mean and peak CPU usage set at each collection, and an external CP’s traffic growth; the NFVO is told', async () => {
    const created = await call('POST', '/vnfpm/v2/pm_jobs', { ...PM, body: job({ authentication: BASIC }) });
    assert.equal(created.status, 201, created.text);
    const cpu = created.body as { id: string; _links: { self: { href: string }; objects: Array<{ href: string }> } };
    assert.equal(created.headers.get('location'), cpu._links.self.href);
    assert.ok(cpu._links.objects[0]?.href.endsWith(`/vnflcm/v2/vnf_instances/${vnfId}`));
    assert.ok(!created.text.includes('pm-secret-not-to-be-shown') && !('authentication' in cpu), 'authentication is never shown');
    assert.equal(sink.tests.get('/pm/job')?.count, 1, 'the callback was tested once');
    const traffic = await call('POST', '/vnfpm/v2/pm_jobs', {
      ...PM,
      body: job({
        objectType: 'VnfExtCp',
        criteria: { performanceMetricGroup: ['VnfExternalCp'], collectionPeriod: 10, reportingPeriod: 20 },
        callbackUri: `${sink.url}/pm/traffic`,
      }),
    });
    assert.equal(traffic.status, 201, traffic.text);
    const trafficId = (traffic.body as { id: string }).id;

    await load(40, 1_000_000);
    const first = await collect();
    assert.ok(first.collected >= 2);
    assert.deepEqual(first.reports, [], 'a reporting period of two collections has one so far');
    await load(80, 1_004_000);
    const second = await collect();
    assert.equal(second.reports.length, 2, 'each job reports once');

    const shown = await call('GET', `/vnfpm/v2/pm_jobs/${cpu.id}`, PM);
    assert.equal(shown.status, 200, shown.text);
    const reports = (shown.body as { reports: Array<{ href: string; readyTime: string; fileSize: number }> }).reports;
    assert.equal(reports.length, 1);
    const [notice] = sink.accepted('/pm/job');
    assert.ok(notice);
    await assertEtsiSchema('vnfpm-notification', 'PerformanceInformationAvailableNotification', notice);
    assert.equal(notice.notificationType, 'PerformanceInformationAvailableNotification');
    assert.equal(notice.pmJobId, cpu.id);
    assert.equal(notice.objectInstanceId, vnfId);
    const link = (notice._links as { performanceReport: { href: string } }).performanceReport.href;
    assert.equal(link, reports[0]?.href);
    const authorization = sink.received.find((r) => r.path === '/pm/job')?.headers.authorization;
    assert.equal(authorization, `Basic ${Buffer.from('nfvo:pm-secret-not-to-be-shown').toString('base64')}`);

    const report = await call('GET', new URL(link).pathname, PM);
    assert.equal(report.status, 200, report.text);
    const entries = (report.body as { entries: Entry[] }).entries.filter((e) => e.subObjectInstanceId === vdu1.vnfcName);
    const value = (metric: string) => entries.find((e) => e.performanceMetric === metric)?.performanceValues[0]?.value;
    assert.equal(value('VCpuUsageMeanVnf'), 60);
    assert.equal(value('VCpuUsagePeakVnf'), 80);
    assert.equal(entries[0]?.objectInstanceId, vnfId);
    assert.equal(reports[0]?.fileSize, Buffer.byteLength(report.text));

    const trafficShown = (await call('GET', `/vnfpm/v2/pm_jobs/${trafficId}`, PM)).body as { reports: Array<{ href: string }> };
    const trafficReport = await call('GET', new URL(trafficShown.reports[0]?.href ?? '').pathname, PM);
    const received = (trafficReport.body as { entries: Entry[] }).entries.find(
      (e) => e.performanceMetric === 'ByteIncomingVnfExtCp' && e.subObjectInstanceId === vdu1.extCp,
    );
    assert.equal(received?.objectType, 'VnfExtCp');
    assert.equal(received?.performanceValues[0]?.value, 4000);
    assert.equal(sink.accepted('/pm/traffic').length, 1);

    // Lists leave reports out unless asked; a filter finds a job by its object type.
    const listed = await call('GET', `/vnfpm/v2/pm_jobs?filter=${encodeURIComponent('(eq,objectType,VnfExtCp)')}`, PM);
    assert.deepEqual(
      (listed.body as Array<{ id: string }>).map((j) => j.id),
      [trafficId],
    );
    assert.ok(!('reports' in ((listed.body as object[])[0] ?? {})));

    // Deleted jobs stop: no further collection, the next sweep reports nothing, their reports are gone.
    for (const id of [cpu.id, trafficId]) assert.equal((await call('DELETE', `/vnfpm/v2/pm_jobs/${id}`, PM)).status, 204);
    assertProblem(await call('GET', new URL(link).pathname, PM), 404);
    assert.equal((await collect()).collected, 0);
  });

  it('a job past its reportingBoundary reports what it collected once more, then collects no more', async () => {
    const boundary = new Date(Date.now() - 60_000).toISOString();
    const created = await call('POST', '/vnfpm/v2/pm_jobs', {
      ...PM,
      body: job({
        criteria: { performanceMetric: ['VCpuUsageMeanVnf'], collectionPeriod: 10, reportingPeriod: 60, reportingBoundary: boundary },
        callbackUri: `${sink.url}/pm/bounded`,
      }),
    });
    assert.equal(created.status, 201, created.text);
    const id = (created.body as { id: string }).id;
    await load(33);
    const last = await collect();
    assert.equal(last.reports.length, 1, 'one collection of six, reported as the job ends');
    assert.equal((await collect()).collected, 0, 'the job collects no more');
    const shown = (await call('GET', `/vnfpm/v2/pm_jobs/${id}`, PM)).body as { reports: unknown[]; criteria: { reportingBoundary: string } };
    assert.equal(shown.reports.length, 1);
    assert.equal(shown.criteria.reportingBoundary, boundary);
    assert.equal(sink.accepted('/pm/bounded').length, 1);
    assert.equal((await call('DELETE', `/vnfpm/v2/pm_jobs/${id}`, PM)).status, 204);
  });

  it('PATCH changes the callback after testing it, takes new credentials without showing them, and refuses a callback that fails the test', async () => {
    const created = await call('POST', '/vnfpm/v2/pm_jobs', { ...PM, body: job() });
    const id = (created.body as { id: string }).id;
    const patch = (body: unknown) => call('PATCH', `/vnfpm/v2/pm_jobs/${id}`, { ...PM, body, headers: { 'Content-Type': 'application/merge-patch+json' } });
    const moved = await patch({ callbackUri: `${sink.url}/pm/moved`, authentication: BASIC });
    assert.equal(moved.status, 200, moved.text);
    assert.deepEqual(moved.body, { callbackUri: `${sink.url}/pm/moved` });
    assert.ok(sink.tests.get('/pm/moved')?.authorization?.startsWith('Basic '), 'the new callback was tested with the new credentials');
    assertProblem(await patch({ callbackUri: `${sink.url}/pm/refuse-test` }), 422, /answered 404/);
    const shown = await call('GET', `/vnfpm/v2/pm_jobs/${id}`, PM);
    assert.equal((shown.body as { callbackUri: string }).callbackUri, `${sink.url}/pm/moved`);
    assert.ok(!shown.text.includes('pm-secret-not-to-be-shown'));
    assert.equal((await call('DELETE', `/vnfpm/v2/pm_jobs/${id}`, PM)).status, 204);
    assertProblem(await call('GET', `/vnfpm/v2/pm_jobs/${id}`, PM), 404);
  });

  it('refuses with 422 a NOT_INSTANTIATED instance, an unknown metric or group, a metric of another object type, and a callback failing the test', async () => {
    const idle = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId } });
    const idleId = (idle.body as { id: string }).id;
    const criteria = (metrics: Record<string, unknown>) => ({ collectionPeriod: 10, reportingPeriod: 20, ...metrics });
    assertProblem(await call('POST', '/vnfpm/v2/pm_jobs', { ...PM, body: job({ objectInstanceIds: [idleId] }) }), 422, /NOT_INSTANTIATED/);
    assertProblem(await call('POST', '/vnfpm/v2/pm_jobs', { ...PM, body: job({ objectInstanceIds: [crypto.randomUUID()] }) }), 422, /no such VNF instance/);
    assertProblem(
      await call('POST', '/vnfpm/v2/pm_jobs', { ...PM, body: job({ criteria: criteria({ performanceMetric: ['VCpuUsageAverage'] }) }) }),
      422,
      /VCpuUsageAverage/,
    );
    assertProblem(await call('POST', '/vnfpm/v2/pm_jobs', { ...PM, body: job({ criteria: criteria({ performanceMetricGroup: ['Nope'] }) }) }), 422, /Nope/);
    assertProblem(
      await call('POST', '/vnfpm/v2/pm_jobs', { ...PM, body: job({ criteria: criteria({ performanceMetric: ['ByteIncomingVnfExtCp'] }) }) }),
      422,
      /VnfExtCp/,
    );
    assertProblem(await call('POST', '/vnfpm/v2/pm_jobs', { ...PM, body: job({ callbackUri: `${sink.url}/pm/refuse-test` }) }), 422, /answered 404/);
    assertProblem(await call('POST', '/vnfpm/v2/pm_jobs', { ...PM, body: job({ criteria: criteria({ reportingPeriod: 15 }) }) }), 400, /multiple/);
    const threshold = {
      objectType: 'Vnf',
      objectInstanceId: idleId,
      criteria: { performanceMetric: 'VCpuUsageMeanVnf', thresholdType: 'SIMPLE', simpleThresholdDetails: { thresholdValue: 50, hysteresis: 5 } },
      callbackUri: `${sink.url}/pm/t`,
    };
    assertProblem(await call('POST', '/vnfpm/v2/thresholds', { ...PM, body: threshold }), 422, /NOT_INSTANTIATED/);
    const listed = await call('GET', '/vnfpm/v2/pm_jobs', PM);
    assert.deepEqual(listed.body, [], 'nothing was created');
  });
});

describe('thresholds', () => {
  it('a crossing UP and back DOWN notifies exactly twice; values within the hysteresis do not', async () => {
    const created = await call('POST', '/vnfpm/v2/thresholds', {
      ...PM,
      body: {
        objectType: 'Vnf',
        objectInstanceId: vnfId,
        subObjectInstanceIds: [vdu1.vnfcName],
        criteria: { performanceMetric: 'VCpuUsageMeanVnf', thresholdType: 'SIMPLE', simpleThresholdDetails: { thresholdValue: 50, hysteresis: 5 } },
        callbackUri: `${sink.url}/pm/threshold`,
        authentication: BASIC,
      },
    });
    assert.equal(created.status, 201, created.text);
    assert.ok(!created.text.includes('pm-secret-not-to-be-shown'));
    const id = (created.body as { id: string }).id;
    assert.equal((await call('GET', `/vnfpm/v2/thresholds/${id}`, PM)).status, 200);

    for (const cpu of [30, 52, 90, 95, 52, 48, 20, 10]) {
      await load(cpu);
      await collect();
    }
    const notified = sink.accepted('/pm/threshold');
    assert.deepEqual(
      notified.map((n) => [n.crossingDirection, n.performanceValue]),
      [
        ['UP', 90],
        ['DOWN', 20],
      ],
    );
    for (const notice of notified) {
      await assertEtsiSchema('vnfpm-notification', 'ThresholdCrossedNotification', notice);
      assert.equal(notice.thresholdId, id);
      assert.equal(notice.subObjectInstanceId, vdu1.vnfcName);
    }
    const listed = await call('GET', '/vnfpm/v2/thresholds', PM);
    assert.ok((listed.body as Array<{ id: string }>).some((t) => t.id === id));
    assert.equal((await call('DELETE', `/vnfpm/v2/thresholds/${id}`, PM)).status, 204);
    await load(90);
    await collect();
    assert.equal(sink.accepted('/pm/threshold').length, 2, 'a deleted threshold notifies nothing');
  });
});

describe("threshold-driven scaling and Tacker's Alertmanager webhooks", () => {
  type Shown = { instantiatedVnfInfo: { vnfcResourceInfo: Array<{ vduId: string }>; scaleStatus?: Array<{ aspectId: string; scaleLevel: number }> } };
  const vdu1Count = async () =>
    ((await call('GET', `/vnflcm/v2/vnf_instances/${vnfId}`)).body as Shown).instantiatedVnfInfo.vnfcResourceInfo.filter((v) => v.vduId === 'VDU1').length;
  const automaticScales = async () =>
    (
      (await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,vnfInstanceId,${vnfId});(eq,operation,SCALE)&fields=operationParams`)).body as Array<{
        id: string;
        isAutomaticInvocation: boolean;
        operationState: string;
        operationParams: { type: string; aspectId: string };
      }>
    ).filter((occ) => occ.isAutomaticInvocation);

  /** An Alertmanager webhook as Tacker's prometheus plugin rules label it. */
  const webhook = (labels: Record<string, string>, value: number, status: 'firing' | 'resolved' = 'firing') => ({
    version: '4',
    groupKey: '{}:{}',
    truncatedAlerts: 0,
    status,
    receiver: 'vnfpm',
    groupLabels: {},
    commonLabels: {},
    commonAnnotations: {},
    externalURL: 'http://alertmanager:9093',
    alerts: [
      {
        status,
        labels: { alertname: 'pm', receiver_type: 'tacker', object_instance_id: vnfId, ...labels },
        annotations: { value: String(value) },
        startsAt: new Date().toISOString(),
        endsAt: '0001-01-01T00:00:00Z',
        generatorURL: 'http://prometheus:9090/graph',
        fingerprint: 'f00d',
      },
    ],
  });

  it('a threshold with a scaling rule scales the VNF out on UP and back in on DOWN, as automatic operations', async () => {
    const before = await vdu1Count();
    const created = await call('POST', '/vnfpm/v2/thresholds', {
      ...PM,
      body: {
        objectType: 'Vnf',
        objectInstanceId: vnfId,
        subObjectInstanceIds: [vdu1.vnfcName],
        criteria: { performanceMetric: 'VCpuUsageMeanVnf', thresholdType: 'SIMPLE', simpleThresholdDetails: { thresholdValue: 70, hysteresis: 5 } },
        callbackUri: `${sink.url}/pm/scaling`,
        autoScale: { aspectId: 'VDU1_scale', numberOfSteps: 1, coolDownSeconds: 0 },
      },
    });
    assert.equal(created.status, 201, created.text);
    const id = (created.body as { id: string; autoScale: unknown }).id;
    assert.deepEqual((created.body as { autoScale: unknown }).autoScale, { aspectId: 'VDU1_scale', numberOfSteps: 1, coolDownSeconds: 0 });

    await load(95);
    const up = (await collect()) as Collection & { scalesStarted: string[] };
    assert.equal(up.scalesStarted.length, 1, 'the crossing UP started a scale');
    await settle(vnfm);
    let scales = await automaticScales();
    assert.deepEqual(
      scales.map((occ) => [occ.operationParams.type, occ.operationState]),
      [['SCALE_OUT', 'COMPLETED']],
    );
    assert.equal(await vdu1Count(), before + 1);

    await load(95);
    assert.deepEqual(((await collect()) as Collection & { scalesStarted: string[] }).scalesStarted, [], 'still above: no new crossing, no scale');

    await load(10);
    const down = (await collect()) as Collection & { scalesStarted: string[] };
    assert.equal(down.scalesStarted.length, 1, 'the crossing DOWN started a scale');
    await settle(vnfm);
    scales = await automaticScales();
    assert.deepEqual(scales.map((occ) => [occ.operationParams.type, occ.operationState]).sort(), [
      ['SCALE_IN', 'COMPLETED'],
      ['SCALE_OUT', 'COMPLETED'],
    ]);
    assert.equal(await vdu1Count(), before);
    assert.deepEqual(
      sink.accepted('/pm/scaling').map((n) => n.crossingDirection),
      ['UP', 'DOWN'],
    );
    assert.equal((await call('DELETE', `/vnfpm/v2/thresholds/${id}`, PM)).status, 204);
  });

  it('POST /pm_threshold evaluates the threshold on the value an Alertmanager alert carries; alerts for another threshold are ignored', async () => {
    const created = await call('POST', '/vnfpm/v2/thresholds', {
      ...PM,
      body: {
        objectType: 'Vnf',
        objectInstanceId: vnfId,
        subObjectInstanceIds: [vdu1.vnfcName],
        criteria: { performanceMetric: 'VMemoryUsageMeanVnf', thresholdType: 'SIMPLE', simpleThresholdDetails: { thresholdValue: 60, hysteresis: 0 } },
        callbackUri: `${sink.url}/pm/webhook-threshold`,
      },
    });
    assert.equal(created.status, 201, created.text);
    const id = (created.body as { id: string }).id;
    const labels = { function_type: 'vnfpm_threshold', threshold_id: id, sub_object_instance_id: vdu1.vnfcName, metric: `VMemoryUsageMeanVnf.${vnfId}` };
    assert.equal((await call('POST', '/pm_threshold', { body: webhook(labels, 88) })).status, 204);
    assert.equal((await call('POST', '/pm_threshold', { body: webhook({ ...labels, threshold_id: crypto.randomUUID() }, 5) })).status, 204);
    assert.equal((await call('POST', '/pm_threshold', { body: webhook(labels, 20, 'resolved') })).status, 204);
    await settle(vnfm);
    const notified = sink.accepted('/pm/webhook-threshold');
    assert.deepEqual(
      notified.map((n) => [n.crossingDirection, n.performanceValue, n.thresholdId]),
      [['UP', 88, id]],
    );
    await assertEtsiSchema('vnfpm-notification', 'ThresholdCrossedNotification', notified[0]);
    const refused = await call('POST', '/pm_threshold', { body: { not: 'an alertmanager webhook' } });
    assertProblem(refused, 400);
  });

  it("POST /pm_event makes a performance report of the value a PM job's alert carries and announces it", async () => {
    const created = await call('POST', '/vnfpm/v2/pm_jobs', { ...PM, body: job({ callbackUri: `${sink.url}/pm/webhook-job` }) });
    assert.equal(created.status, 201, created.text);
    const jobId = (created.body as { id: string }).id;
    const labels = { function_type: 'vnfpm', job_id: jobId, sub_object_instance_id: vdu1.vnfcName, metric: `VCpuUsageMeanVnf.${vnfId}` };
    assert.equal((await call('POST', '/pm_event', { body: webhook(labels, 42.5) })).status, 204);
    await settle(vnfm);
    const notice = sink.accepted('/pm/webhook-job').at(-1) as unknown as { _links: { performanceReport: { href: string } } };
    assert.ok(notice, 'PerformanceInformationAvailableNotification sent');
    await assertEtsiSchema('vnfpm-notification', 'PerformanceInformationAvailableNotification', notice);
    const report = (await call('GET', new URL(notice._links.performanceReport.href).pathname, PM)).body as { entries: Entry[] };
    assert.deepEqual(
      report.entries.map((e) => [e.performanceMetric, e.subObjectInstanceId, e.performanceValues.map((v) => v.value)]),
      [[`VCpuUsageMeanVnf.${vnfId}`, vdu1.vnfcName, [42.5]]],
    );
    assert.equal((await call('DELETE', `/vnfpm/v2/pm_jobs/${jobId}`, PM)).status, 204);
  });
});

describe('Kubernetes', () => {
  it('a job on a CNF reports the CPU and memory usage of each pod against its requests', async () => {
    const namespace = 'pm-jobs';
    const created = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: SAMPLE_PACKAGES['k8s-cnf-v1'].vnfdId, vnfInstanceName: 'pm-cnf' } });
    const cnf = (created.body as { id: string }).id;
    // The large flavour: VDU1's pods request 500m and 256Mi.
    const instantiate = {
      flavourId: 'large',
      additionalParams: {
        'lcm-kubernetes-def-files': ['Files/kubernetes/large/deployment.yaml', 'Files/kubernetes/large/cache.yaml', 'Files/kubernetes/large/service.yaml'],
        namespace,
      },
    };
    assert.equal((await call('POST', `/vnflcm/v2/vnf_instances/${cnf}/instantiate`, { body: instantiate })).status, 202);
    await settle(vnfm);
    const info = (
      (await call('GET', `/vnflcm/v2/vnf_instances/${cnf}`)).body as {
        instantiatedVnfInfo: {
          vnfcResourceInfo: Array<{ id: string; vduId: string; computeResource: { resourceId: string } }>;
          vnfcInfo: Array<{ id: string; vnfcResourceInfoId: string }>;
        };
      }
    ).instantiatedVnfInfo;
    const pods = info.vnfcResourceInfo.filter((v) => v.vduId === 'VDU1');
    assert.equal(pods.length, 2);
    const nameOf = (id: string) => info.vnfcInfo.find((v) => v.vnfcResourceInfoId === id)?.id;
    const metrics = async (body: unknown) => {
      const response = await fetch(`${cluster}metrics`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      assert.ok(response.ok, await response.text());
    };
    await metrics({ namespace, pod: pods[0]?.computeResource.resourceId, cpu: '125m', memory: '64Mi' });
    await metrics({ namespace, pod: pods[1]?.computeResource.resourceId, cpu: '250m', memory: '128Mi' });
    const reply = await call('POST', '/vnfpm/v2/pm_jobs', {
      ...PM,
      body: job({
        objectType: 'Vnfc',
        objectInstanceIds: [cnf],
        criteria: { performanceMetric: [`VCpuUsagePeakVnf.${cnf}`, 'VMemoryUsageMeanVnf'], collectionPeriod: 30, reportingPeriod: 30 },
        callbackUri: `${sink.url}/pm/cnf`,
      }),
    });
    assert.equal(reply.status, 201, reply.text);
    const id = (reply.body as { id: string }).id;
    assert.deepEqual((await collect()).vimFailures, []);
    const [notice] = sink.accepted('/pm/cnf');
    assert.ok(notice, 'one collection makes a report when the reporting period is the collection period');
    const report = await call('GET', new URL((notice._links as { performanceReport: { href: string } }).performanceReport.href).pathname, PM);
    const entries = (report.body as { entries: Entry[] }).entries;
    const value = (metric: string, pod: number) =>
      entries.find((e) => e.performanceMetric === metric && e.subObjectInstanceId === nameOf(pods[pod]?.id ?? ''))?.performanceValues[0]?.value;
    assert.deepEqual(
      [value(`VCpuUsagePeakVnf.${cnf}`, 0), value('VMemoryUsageMeanVnf', 0), value(`VCpuUsagePeakVnf.${cnf}`, 1), value('VMemoryUsageMeanVnf', 1)],
      [25, 25, 50, 50],
    );
    assert.equal((await call('DELETE', `/vnfpm/v2/pm_jobs/${id}`, PM)).status, 204);
  });
});

describe('Kubernetes thresholds', () => {
  it('a threshold on a pod crossed UP and back DOWN notifies exactly twice, and its scaling rule scales the CNF out and back in', async () => {
    const namespace = 'pm-thresholds';
    const created = await call('POST', '/vnflcm/v2/vnf_instances', {
      body: { vnfdId: SAMPLE_PACKAGES['k8s-cnf-v1'].vnfdId, vnfInstanceName: 'pm-cnf-scaled' },
    });
    const cnf = (created.body as { id: string }).id;
    const instantiate = {
      flavourId: 'large',
      additionalParams: {
        'lcm-kubernetes-def-files': ['Files/kubernetes/large/deployment.yaml', 'Files/kubernetes/large/cache.yaml', 'Files/kubernetes/large/service.yaml'],
        namespace,
      },
    };
    assert.equal((await call('POST', `/vnflcm/v2/vnf_instances/${cnf}/instantiate`, { body: instantiate })).status, 202);
    await settle(vnfm);
    type Info = {
      instantiatedVnfInfo: {
        vnfcResourceInfo: Array<{ id: string; vduId: string; computeResource: { resourceId: string } }>;
        vnfcInfo: Array<{ id: string; vnfcResourceInfoId: string }>;
      };
    };
    const info = async () => ((await call('GET', `/vnflcm/v2/vnf_instances/${cnf}`)).body as Info).instantiatedVnfInfo;
    const vdu1Pods = async () => (await info()).vnfcResourceInfo.filter((v) => v.vduId === 'VDU1');
    const first = (await vdu1Pods())[0];
    assert.ok(first);
    const before = (await vdu1Pods()).length;
    const watched = (await info()).vnfcInfo.find((v) => v.vnfcResourceInfoId === first.id)?.id as string;
    const cpu = async (value: string) => {
      const response = await fetch(`${cluster}metrics`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ namespace, pod: first.computeResource.resourceId, cpu: value, memory: '64Mi' }),
      });
      assert.ok(response.ok, await response.text());
    };
    const threshold = await call('POST', '/vnfpm/v2/thresholds', {
      ...PM,
      body: {
        objectType: 'Vnf',
        objectInstanceId: cnf,
        subObjectInstanceIds: [watched],
        criteria: { performanceMetric: 'VCpuUsageMeanVnf', thresholdType: 'SIMPLE', simpleThresholdDetails: { thresholdValue: 60, hysteresis: 5 } },
        callbackUri: `${sink.url}/pm/cnf-threshold`,
        autoScale: { aspectId: 'vdu1_aspect', coolDownSeconds: 0 },
      },
    });
    assert.equal(threshold.status, 201, threshold.text);

    // The pod requests 500m: 400m is 80 %, 50m is 10 %.
    await cpu('400m');
    await collect();
    await settle(vnfm);
    assert.ok((await vdu1Pods()).length > before, 'scaled out');
    await cpu('50m');
    await collect();
    await settle(vnfm);
    assert.equal((await vdu1Pods()).length, before, 'scaled back in');
    const notified = sink.accepted('/pm/cnf-threshold');
    assert.deepEqual(
      notified.map((n) => [n.crossingDirection, n.performanceValue]),
      [
        ['UP', 80],
        ['DOWN', 10],
      ],
    );
    for (const notice of notified) await assertEtsiSchema('vnfpm-notification', 'ThresholdCrossedNotification', notice);
    const scales = (await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,vnfInstanceId,${cnf});(eq,operation,SCALE)`)).body as Array<{
      isAutomaticInvocation: boolean;
      operationState: string;
    }>;
    assert.deepEqual(
      scales.map((occ) => [occ.isAutomaticInvocation, occ.operationState]),
      [
        [true, 'COMPLETED'],
        [true, 'COMPLETED'],
      ],
    );
  });
});

describe('tenancy and scopes', () => {
  it("another tenant sees none of a tenant's jobs and thresholds and cannot measure its instances; vnfpm:read cannot write", async () => {
    const other = (scopes: string[]) =>
      client(vnfm, { ...createLocalClient(vnfm.dataDir, { tenantId: 'tenant-b', scopes }), tokenUrl: adminCredentials(vnfm).tokenUrl });
    const b = other(['vnfpm:read', 'vnfpm:write']);
    const created = await call('POST', '/vnfpm/v2/pm_jobs', { ...PM, body: job() });
    const id = (created.body as { id: string }).id;
    assertProblem(await b('GET', `/vnfpm/v2/pm_jobs/${id}`, PM), 404);
    assertProblem(await b('DELETE', `/vnfpm/v2/pm_jobs/${id}`, PM), 404);
    assert.deepEqual((await b('GET', '/vnfpm/v2/pm_jobs', PM)).body, []);
    assertProblem(await b('POST', '/vnfpm/v2/pm_jobs', { ...PM, body: job() }), 422, /no such VNF instance/);
    const reader = other(['vnfpm:read']);
    assert.equal((await reader('GET', '/vnfpm/v2/thresholds', PM)).status, 200);
    assertProblem(await reader('POST', '/vnfpm/v2/pm_jobs', { ...PM, body: job() }), 403);
    assertProblem(await other(['vnffm:read'])('GET', '/vnfpm/v2/pm_jobs', PM), 403);
    assert.equal((await call('DELETE', `/vnfpm/v2/pm_jobs/${id}`, PM)).status, 204);
  });
});

describe('API versions', () => {
  it('answers /vnfpm/api_versions and /vnfpm/v2/api_versions (performance management is v2 only)', async () => {
    for (const [path, prefix] of [
      ['/vnfpm/api_versions', '/vnfpm'],
      ['/vnfpm/v2/api_versions', '/vnfpm/v2'],
    ] as const) {
      const reply = await call('GET', path, { version: null });
      assert.equal(reply.status, 200, reply.text);
      assert.deepEqual(reply.body, { uriPrefix: prefix, apiVersions: [{ version: '2.2.0', isDeprecated: false }] });
    }
  });
});

// OPERATE (SOL003 5.4.10) over HTTP on the built-in simulators. OpenStack: the VNFD's operate_start
// script runs before any server is touched; one VNFC stopped alone, then the whole VNF stopped
// gracefully and started again, as Nova's own API shows it; a health sweep raises nothing for servers
// stopped on purpose, but does for one that shuts down by itself; a start that fails half-way is
// rolled back (or retried). Kubernetes: a stop scales the CNF's Deployment to 0 (no pods left on the
// cluster) and a start brings back as many pods as it had; one pod of several cannot be stopped
// alone. Requests SOL003 forbids and an instance that is not instantiated change nothing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertEtsiResponse, assertEtsiSchema } from '../support/etsi.ts';
import { buildCsar, SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { client, localControl, settle, startVnfm, type LocalVnfm, type Reply } from '../support/runtime.ts';
import { waitFor } from '../support/wait.ts';

let vnfm: LocalVnfm;
let call: ReturnType<typeof client>;
type OpenStackVim = { authUrl: string; control: string; username: string; password: string; userDomain: string; project: string; projectDomain: string };
let os: OpenStackVim;
let cluster: { endpoint: string; bearer_token: string };

const OPENSTACK_INSTANTIATE = {
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

before(async () => {
  // Health sweeps run only when a test asks.
  vnfm = await startVnfm({ env: { VNFM_SCHEDULE_SCALE: '0' } });
  call = client(vnfm);
  const vims = JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8'));
  os = vims['local-openstack'];
  cluster = vims['local-kubernetes'];
  // The OpenStack sample with the sample script also as its Vnflcm operate_start and operate_end.
  const withOperateHooks = (files: Map<string, Buffer>) => {
    const path = 'Definitions/sample_vnfd_df_simple.yaml';
    const hook = '          instantiate_end:\n            implementation: sample-script\n';
    const vnfd = files.get(path)?.toString('utf8') ?? '';
    assert.ok(vnfd.includes(hook));
    const operate = '          operate_start:\n            implementation: sample-script\n          operate_end:\n            implementation: sample-script\n';
    files.set(path, Buffer.from(vnfd.replace(hook, hook + operate)));
  };
  for (const csar of [await buildCsar('openstack-vnf-v1', { mutate: withOperateHooks }), await buildCsar('k8s-cnf-v1')]) {
    const pkg = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
    await call('PUT', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content`, { raw: csar, headers: { 'Content-Type': 'application/zip' } });
  }
  await settle(vnfm);
});
after(async () => {
  await vnfm.stop();
});

function assertProblem(reply: Reply, status: number): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.headers.get('content-type'), 'application/problem+json');
}

async function createInstance(vnfdId: string): Promise<string> {
  const reply = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId, vnfInstanceName: 'operate' } });
  assert.equal(reply.status, 201, reply.text);
  return (reply.body as { id: string }).id;
}

type OpOcc = Record<string, unknown> & {
  operationState: string;
  operation: string;
  resourceChanges?: { affectedVnfcs: Array<{ id: string; changeType: string; computeResource: { resourceId: string } }> };
};

/** Runs a task to its end: 202 with a Location, then the op occ once everything settled. */
async function run(id: string, task: string, body: unknown, state = 'COMPLETED'): Promise<OpOcc> {
  const reply = await call('POST', `/vnflcm/v2/vnf_instances/${id}/${task}`, { body });
  assert.equal(reply.status, 202, reply.text);
  await settle(vnfm);
  const shown = await call('GET', new URL(reply.headers.get('location') ?? '').pathname);
  const occ = shown.body as OpOcc;
  assert.equal(occ.operationState, state, JSON.stringify(occ));
  await assertEtsiResponse('vnflcm', '/vnf_lcm_op_occs/{vnfLcmOpOccId}', 'get', 200, occ);
  return occ;
}

/** retry or rollback of an op occ, to its end. */
async function task(opOccId: string, name: 'retry' | 'rollback', state: string): Promise<OpOcc> {
  const reply = await call('POST', `/vnflcm/v2/vnf_lcm_op_occs/${opOccId}/${name}`);
  assert.equal(reply.status, 202, reply.text);
  await settle(vnfm);
  const occ = (await call('GET', `/vnflcm/v2/vnf_lcm_op_occs/${opOccId}`)).body as OpOcc;
  assert.equal(occ.operationState, state, JSON.stringify(occ));
  await assertEtsiResponse('vnflcm', '/vnf_lcm_op_occs/{vnfLcmOpOccId}', 'get', 200, occ);
  return occ;
}

/** Nova answers the next power action on this server with a 500. */
async function failNextAction(serverId: string): Promise<void> {
  const response = await fetch(`${os.control}faults`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ kind: 'http-5xx', service: 'nova', method: 'POST', path: `${serverId}/action`, count: 1 }),
  });
  assert.ok(response.ok, await response.text());
}

type Vnfc = { id: string; vduId: string; computeResource: { resourceId: string } };
type Instance = {
  instantiatedVnfInfo: {
    vnfState: string;
    vnfcResourceInfo: Vnfc[];
    vnfcInfo: Array<{ id: string; vduId: string; vnfcResourceInfoId: string; vnfcState: string }>;
  };
};

async function instance(id: string): Promise<Instance> {
  const reply = await call('GET', `/vnflcm/v2/vnf_instances/${id}`);
  assert.equal(reply.status, 200, reply.text);
  await assertEtsiResponse('vnflcm', '/vnf_instances/{vnfInstanceId}', 'get', 200, reply.body);
  return reply.body as Instance;
}

const vnfcStates = (shown: Instance): Record<string, string> =>
  Object.fromEntries(shown.instantiatedVnfInfo.vnfcInfo.map((info) => [info.vnfcResourceInfoId, info.vnfcState]));

const changed = (occ: OpOcc, type: string): string[] =>
  (occ.resourceChanges?.affectedVnfcs ?? [])
    .filter((vnfc) => vnfc.changeType === type)
    .map((vnfc) => vnfc.computeResource.resourceId)
    .sort();

async function opOccCount(id: string): Promise<number> {
  return ((await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=${encodeURIComponent(`(eq,vnfInstanceId,${id})`)}`)).body as unknown[]).length;
}

/** Runs one health sweep now (the schedule's control endpoint answers when it is done). */
async function sweep(): Promise<{ raised: number }> {
  const response = await localControl(vnfm, 'POST', '/_local/schedules/VnfHealthMonitorFunction/run');
  assert.equal(response.status, 200, await response.clone().text());
  const report = (await response.json()) as { raised: number };
  await settle(vnfm);
  return report;
}

async function activeAlarms(id: string): Promise<Array<{ rootCauseFaultyResource: { faultyResource: { resourceId: string } } }>> {
  const reply = await call('GET', `/vnffm/v1/alarms?filter=${encodeURIComponent(`(eq,managedObjectId,${id})`)}`, { version: '1.5.0' });
  assert.equal(reply.status, 200, reply.text);
  return (reply.body as Array<{ alarmClearedTime?: string; rootCauseFaultyResource: { faultyResource: { resourceId: string } } }>).filter(
    (alarm) => !alarm.alarmClearedTime,
  );
}

// ---------------------------------------------------------------------------------------------
// Nova through its own API, as an operator sees it

let session: { token: string; compute: string } | undefined;
async function novaServer(id: string): Promise<{ status: string; 'OS-EXT-STS:power_state': number; 'OS-EXT-STS:task_state': string | null }> {
  if (!session) {
    const response = await fetch(`${os.authUrl}/auth/tokens`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: { methods: ['password'], password: { user: { name: os.username, domain: { name: os.userDomain }, password: os.password } } },
          scope: { project: { name: os.project, domain: { name: os.projectDomain } } },
        },
      }),
    });
    const body = (await response.json()) as { token: { catalog: Array<{ type: string; endpoints: Array<{ interface: string; url: string }> }> } };
    const compute = body.token.catalog.find((entry) => entry.type === 'compute')?.endpoints.find((e) => e.interface === 'public')?.url ?? '';
    session = { token: response.headers.get('x-subject-token') ?? '', compute };
  }
  const response = await fetch(`${session.compute}/servers/${id}`, { headers: { 'X-Auth-Token': session.token } });
  assert.equal(response.status, 200, `GET /servers/${id}`);
  return ((await response.json()) as { server: { status: string; 'OS-EXT-STS:power_state': number; 'OS-EXT-STS:task_state': string | null } }).server;
}

// ---------------------------------------------------------------------------------------------

describe('OPERATE on OpenStack', () => {
  it('refuses what SOL003 forbids and an instance that is not instantiated, changing nothing', async () => {
    const id = await createInstance(SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId);
    const stop = { changeStateTo: 'STOPPED', stopType: 'FORCEFUL' };
    await assertEtsiSchema('vnflcm', 'OperateVnfRequest', stop);
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/operate`, { body: stop }), 409);
    for (const bad of [
      { changeStateTo: 'STARTED', stopType: 'FORCEFUL' },
      { changeStateTo: 'STARTED', gracefulStopTimeout: 10 },
      { changeStateTo: 'STOPPED', stopType: 'FORCEFUL', gracefulStopTimeout: 10 },
      { changeStateTo: 'STOPPED', gracefulStopTimeout: 10 },
      { changeStateTo: 'STOPPED', stopType: 'GRACEFUL' },
      { changeStateTo: 'PAUSED' },
      { stopType: 'FORCEFUL' },
      { changeStateTo: 'STOPPED', gracefulStopTimeout: -1, stopType: 'GRACEFUL' },
      { changeStateTo: 'STOPPED', vnfcInstanceId: [] },
      { changeStateTo: 'STOPPED', unknownAttribute: true },
    ]) {
      assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/operate`, { body: bad }), 400);
    }
    // OPERATE is a /vnflcm/v2 task only.
    assert.equal((await call('POST', `/vnflcm/v1/vnf_instances/${id}/operate`, { body: stop, version: null })).status, 404);
    assert.equal(await opOccCount(id), 0);
    assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`)).status, 204);
  });

  it('stops one VNFC alone, then the whole VNF gracefully, and starts it again, as Nova shows; health sweeps tell a stop on purpose from a fault', async () => {
    const id = await createInstance(SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId);
    await run(id, 'instantiate', OPENSTACK_INSTANTIATE);
    let shown = await instance(id);
    assert.equal(shown.instantiatedVnfInfo.vnfState, 'STARTED');
    const vdu1 = shown.instantiatedVnfInfo.vnfcInfo.find((info) => info.vduId === 'VDU1');
    const vdu2 = shown.instantiatedVnfInfo.vnfcInfo.find((info) => info.vduId === 'VDU2');
    assert.ok(vdu1 && vdu2, JSON.stringify(shown.instantiatedVnfInfo.vnfcInfo));
    const server1 = shown.instantiatedVnfInfo.vnfcResourceInfo.find((vnfc) => vnfc.id === vdu1.vnfcResourceInfoId)?.computeResource.resourceId ?? '';
    const server2 = shown.instantiatedVnfInfo.vnfcResourceInfo.find((vnfc) => vnfc.id === vdu2.vnfcResourceInfoId)?.computeResource.resourceId ?? '';
    assert.equal((await novaServer(server1)).status, 'ACTIVE');

    // An id the instance does not have: 422, nothing started.
    const before = await opOccCount(id);
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/operate`, { body: { changeStateTo: 'STOPPED', vnfcInstanceId: ['no-such-vnfc'] } }), 422);
    assert.equal(await opOccCount(id), before);

    // The VNFD's operate_start script runs before any server is touched: when it fails, nothing is
    // stopped, and the rollback has nothing to undo.
    const scripted = await run(id, 'operate', { changeStateTo: 'STOPPED', additionalParams: { sample_script_fail: 'operate_start' } }, 'FAILED_TEMP');
    assert.match(JSON.stringify(scripted.error), /operate_start failed as requested/);
    assert.equal((await novaServer(server1)).status, 'ACTIVE');
    assert.equal((await novaServer(server2)).status, 'ACTIVE');
    await task(scripted.id as string, 'rollback', 'ROLLED_BACK');

    // One VNFC stopped (FORCEFUL): only its server goes SHUTOFF.
    const subset = { changeStateTo: 'STOPPED', stopType: 'FORCEFUL', vnfcInstanceId: [vdu1.id] };
    const first = await run(id, 'operate', subset);
    assert.equal(first.operation, 'OPERATE');
    assert.deepEqual(changed(first, 'MODIFIED'), [server1]);
    assert.deepEqual(changed(first, 'ADDED'), []);
    assert.equal((await novaServer(server1)).status, 'SHUTOFF');
    assert.equal((await novaServer(server1))['OS-EXT-STS:power_state'], 4);
    assert.equal((await novaServer(server2)).status, 'ACTIVE');
    shown = await instance(id);
    assert.deepEqual(vnfcStates(shown), { [vdu1.vnfcResourceInfoId]: 'STOPPED', [vdu2.vnfcResourceInfoId]: 'STARTED' });
    assert.equal(shown.instantiatedVnfInfo.vnfState, 'STARTED', 'a VNF with a running VNFC is STARTED');

    // The whole VNF, gracefully: the server already SHUTOFF is left alone.
    const graceful = { changeStateTo: 'STOPPED', stopType: 'GRACEFUL', gracefulStopTimeout: 60 };
    await assertEtsiSchema('vnflcm', 'OperateVnfRequest', graceful);
    const second = await run(id, 'operate', graceful);
    assert.deepEqual(changed(second, 'MODIFIED'), [server2]);
    assert.equal((await novaServer(server1)).status, 'SHUTOFF');
    assert.equal((await novaServer(server2)).status, 'SHUTOFF');
    shown = await instance(id);
    assert.equal(shown.instantiatedVnfInfo.vnfState, 'STOPPED');
    assert.deepEqual(new Set(Object.values(vnfcStates(shown))), new Set(['STOPPED']));

    // Stopped on purpose: no alarm.
    assert.equal((await sweep()).raised, 0);
    assert.deepEqual(await activeAlarms(id), []);

    // A start that fails half-way (Nova refuses the second server's os-start) is FAILED_TEMP; its
    // rollback stops again the server it had started.
    const start = { changeStateTo: 'STARTED' };
    await assertEtsiSchema('vnflcm', 'OperateVnfRequest', start);
    // The servers in the order the instance lists its VNFCs, which is the order they are started in.
    const [startedFirst, startedLast] = shown.instantiatedVnfInfo.vnfcResourceInfo.map((vnfc) => vnfc.computeResource.resourceId);
    assert.ok(startedFirst && startedLast);
    await failNextAction(startedLast);
    const failed = await run(id, 'operate', start, 'FAILED_TEMP');
    assert.match(JSON.stringify(failed.error), /os-start/);
    await waitFor('the first server to be started', async () => (await novaServer(startedFirst)).status === 'ACTIVE');
    assert.equal((await novaServer(startedLast)).status, 'SHUTOFF');
    const rolledBack = await task(failed.id as string, 'rollback', 'ROLLED_BACK');
    assert.equal(rolledBack.operation, 'OPERATE');
    assert.equal((await novaServer(server1)).status, 'SHUTOFF');
    assert.equal((await novaServer(server2)).status, 'SHUTOFF');
    assert.equal((await instance(id)).instantiatedVnfInfo.vnfState, 'STOPPED');

    // The same failure retried: both servers ACTIVE, the same servers (MODIFIED).
    await failNextAction(startedLast);
    const again = await run(id, 'operate', start, 'FAILED_TEMP');
    const third = await task(again.id as string, 'retry', 'COMPLETED');
    assert.deepEqual(changed(third, 'MODIFIED'), [server1, server2].sort());
    assert.equal((await novaServer(server1)).status, 'ACTIVE');
    assert.equal((await novaServer(server2)).status, 'ACTIVE');
    shown = await instance(id);
    assert.equal(shown.instantiatedVnfInfo.vnfState, 'STARTED');
    assert.deepEqual(new Set(Object.values(vnfcStates(shown))), new Set(['STARTED']));
    assert.equal((await sweep()).raised, 0);

    // A server that shuts down by itself while the VNF is STARTED is a fault.
    const response = await fetch(`${os.control}servers/${server2}/status`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ status: 'SHUTOFF', message: 'guest powered off' }),
    });
    assert.ok(response.ok, await response.text());
    assert.equal((await sweep()).raised, 1);
    assert.deepEqual(
      (await activeAlarms(id)).map((alarm) => alarm.rootCauseFaultyResource.faultyResource.resourceId),
      [server2],
    );
  });
});

// ---------------------------------------------------------------------------------------------

type KObject = { metadata: { name: string; deletionTimestamp?: string }; spec?: { replicas?: number } };

async function kube(path: string): Promise<{ items?: KObject[] } & KObject> {
  const response = await fetch(`${cluster.endpoint}${path}`, { headers: { Authorization: `Bearer ${cluster.bearer_token}` } });
  assert.equal(response.status, 200, path);
  return (await response.json()) as { items?: KObject[] } & KObject;
}

async function pods(namespace: string, id: string): Promise<string[]> {
  const listed = await kube(`/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(`vnf-instance-id=${id}`)}`);
  return (listed.items ?? []).map((pod) => pod.metadata.name).sort();
}

describe('OPERATE on Kubernetes', () => {
  it('stops the CNF by scaling its Deployment to 0 and starts it with the replicas it had; one pod of two cannot be stopped alone', async () => {
    const id = await createInstance(SAMPLE_PACKAGES['k8s-cnf-v1'].vnfdId);
    const namespace = 'cnf-operate';
    await run(id, 'instantiate', {
      flavourId: 'simple',
      additionalParams: { 'lcm-kubernetes-def-files': ['Files/kubernetes/deployment.yaml', 'Files/kubernetes/service.yaml'], namespace },
    });
    await run(id, 'scale', { type: 'SCALE_OUT', aspectId: 'vdu1_aspect', numberOfSteps: 1 });
    const running = await pods(namespace, id);
    assert.equal(running.length, 2);
    let shown = await instance(id);
    assert.equal(shown.instantiatedVnfInfo.vnfState, 'STARTED');

    // One pod of the Deployment's two: 422, nothing started, both pods still there.
    const before = await opOccCount(id);
    const one = shown.instantiatedVnfInfo.vnfcInfo[0]?.id ?? '';
    const refused = await call('POST', `/vnflcm/v2/vnf_instances/${id}/operate`, { body: { changeStateTo: 'STOPPED', vnfcInstanceId: [one] } });
    assertProblem(refused, 422);
    assert.match((refused.body as { detail: string }).detail, /cannot be started or stopped alone/);
    assert.equal(await opOccCount(id), before);
    assert.deepEqual(await pods(namespace, id), running);

    // Stop (no stopType: FORCEFUL): no pods left, the Deployment at 0; the VNFCs stay on record, STOPPED.
    const stop = await run(id, 'operate', { changeStateTo: 'STOPPED' });
    assert.deepEqual(changed(stop, 'MODIFIED'), running);
    assert.deepEqual(await pods(namespace, id), []);
    assert.equal((await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`)).spec?.replicas, 0);
    shown = await instance(id);
    assert.equal(shown.instantiatedVnfInfo.vnfState, 'STOPPED');
    assert.deepEqual(shown.instantiatedVnfInfo.vnfcResourceInfo.map((vnfc) => vnfc.computeResource.resourceId).sort(), running);
    assert.deepEqual(new Set(Object.values(vnfcStates(shown))), new Set(['STOPPED']));
    assert.equal((await sweep()).raised, 0);
    assert.deepEqual(await activeAlarms(id), []);

    // Start: as many pods as before, new ones (a Deployment's pods get new names).
    // additionalParams reach the operate_start/_end scripts; a credential in them is never shown.
    const secret = 'Pw-operate-params-7c1e';
    const start = await run(id, 'operate', { changeStateTo: 'STARTED', additionalParams: { password: secret } });
    assert.ok(!JSON.stringify(start).includes(secret), 'the op occ does not show the password');
    const back = await pods(namespace, id);
    assert.equal(back.length, 2);
    assert.equal((await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`)).spec?.replicas, 2);
    assert.deepEqual(changed(start, 'ADDED'), back);
    assert.deepEqual(changed(start, 'REMOVED'), running);
    shown = await instance(id);
    assert.equal(shown.instantiatedVnfInfo.vnfState, 'STARTED');
    assert.deepEqual(shown.instantiatedVnfInfo.vnfcResourceInfo.map((vnfc) => vnfc.computeResource.resourceId).sort(), back);
    assert.ok(!JSON.stringify(shown).includes(secret));
    assert.equal((await sweep()).raised, 0);
  });
});

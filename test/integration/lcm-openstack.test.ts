// INSTANTIATE and TERMINATE on the built-in OpenStack simulator over HTTP, with the op-occ task
// resources (retry, rollback, fail), injected VIM faults, and executions that die.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SFNClient, ListExecutionsCommand, StopExecutionCommand } from '@aws-sdk/client-sfn';
import { assertEtsiResponse } from '../support/etsi.ts';
import { buildCsar, SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { client, holdExecutions, localControl, openStackAccessInfo, settle, startVnfm, type LocalVnfm, type Reply } from '../support/runtime.ts';

let vnfm: LocalVnfm;
let call: ReturnType<typeof client>;
let sim: { control: string };
const vnfdId = SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId;
/** VDU1_CP1 is the sample VNF's external CP: it goes on the VIM's "public" network. */
const INSTANTIATE = {
  flavourId: 'simple',
  extVirtualLinks: [
    {
      id: 'ext-public',
      resourceId: 'public',
      extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { VDU1_CP1_1: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }],
    },
  ],
};

before(async () => {
  vnfm = await startVnfm();
  call = client(vnfm);
  sim = JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8'))['local-openstack'];
  const pkg = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
  await call('PUT', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content`, {
    raw: await buildCsar('openstack-vnf-v1'),
    headers: { 'Content-Type': 'application/zip' },
  });
  await settle(vnfm);
});
after(async () => {
  await vnfm.stop();
});

function assertProblem(reply: Reply, status: number): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.headers.get('content-type'), 'application/problem+json');
}

type Listed = { count: number; items: Array<{ id: string; name?: string }> };
async function simState(): Promise<Record<string, Listed>> {
  return (await fetch(`${sim.control}state`)).json() as Promise<Record<string, Listed>>;
}

async function injectFault(fault: Record<string, unknown>): Promise<void> {
  const response = await fetch(`${sim.control}faults`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(fault) });
  assert.ok(response.ok, await response.text());
}

async function createInstance(): Promise<string> {
  const reply = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId, vnfInstanceName: 'lcm' } });
  assert.equal(reply.status, 201, reply.text);
  return (reply.body as { id: string }).id;
}

async function operate(path: string, body: unknown): Promise<string> {
  const reply = await call('POST', path, { body });
  assert.equal(reply.status, 202, reply.text);
  assert.equal(reply.text, '');
  const location = reply.headers.get('location') ?? '';
  assert.match(location, /\/vnf_lcm_op_occs\/[0-9a-f-]{36}$/);
  return new URL(location).pathname;
}

async function opOcc(path: string): Promise<Record<string, unknown> & { operationState: string }> {
  const reply = await call('GET', path);
  assert.equal(reply.status, 200, reply.text);
  return reply.body as Record<string, unknown> & { operationState: string };
}

describe('instantiate and terminate', () => {
  it('instantiates the sample package: COMPLETED, instantiatedVnfInfo, resourceChanges; terminate and delete clean up', async () => {
    const id = await createInstance();
    const occPath = await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, { ...INSTANTIATE, instantiationLevelId: 'instantiation_level_1' });
    await settle(vnfm);
    const occ = await opOcc(occPath);
    assert.equal(occ.operationState, 'COMPLETED', JSON.stringify(occ));
    await assertEtsiResponse('vnflcm', '/vnf_lcm_op_occs/{vnfLcmOpOccId}', 'get', 200, occ);
    const changes = occ.resourceChanges as { affectedVnfcs: Array<{ vduId: string; changeType: string }> };
    assert.ok(changes.affectedVnfcs.some((c) => c.vduId === 'VDU1' && c.changeType === 'ADDED'));
    assert.ok(changes.affectedVnfcs.some((c) => c.vduId === 'VDU2' && c.changeType === 'ADDED'));

    const shown = await call('GET', `/vnflcm/v2/vnf_instances/${id}`);
    await assertEtsiResponse('vnflcm', '/vnf_instances/{vnfInstanceId}', 'get', 200, shown.body);
    const instance = shown.body as {
      instantiationState: string;
      instantiatedVnfInfo: Record<string, unknown> & { vnfcResourceInfo: Array<{ vduId: string; computeResource: { resourceId: string } }> };
    };
    assert.equal(instance.instantiationState, 'INSTANTIATED');
    assert.equal(instance.instantiatedVnfInfo.flavourId, 'simple');
    const servers = (await simState()).servers?.items ?? [];
    for (const vnfc of instance.instantiatedVnfInfo.vnfcResourceInfo) {
      assert.ok(
        servers.some((s) => s.id === vnfc.computeResource.resourceId),
        `server ${vnfc.computeResource.resourceId} exists in Nova`,
      );
    }
    assert.ok(!shown.text.includes(JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8'))['local-openstack'].password));
    // The same records through /vnflcm/v1 show the v1 model (SOL003 V2.6.1): cpConfig is an array.
    type CpData = { cpdId: string; cpConfig: unknown };
    const v2Links = instance.instantiatedVnfInfo.extVirtualLinkInfo as Array<{ currentVnfExtCpData: CpData[] }>;
    assert.deepEqual(Object.keys(v2Links[0]?.currentVnfExtCpData[0]?.cpConfig as object), ['VDU1_CP1_1']);
    const v1Instance = (await call('GET', `/vnflcm/v1/vnf_instances/${id}`, { version: null })).body as {
      instantiatedVnfInfo: { extVirtualLinkInfo: Array<{ currentVnfExtCpData: CpData[] }> };
    };
    assert.deepEqual(v1Instance.instantiatedVnfInfo.extVirtualLinkInfo[0]?.currentVnfExtCpData[0]?.cpConfig, [
      { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] },
    ]);
    const v1Occ = (await call('GET', occPath.replace('/v2/', '/v1/'), { version: null })).body as {
      operationParams: { extVirtualLinks: Array<{ extCps: CpData[] }> };
    };
    assert.deepEqual(v1Occ.operationParams.extVirtualLinks[0]?.extCps[0]?.cpConfig, [{ cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] }]);

    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, { body: INSTANTIATE }), 409);
    assertProblem(await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`), 409);

    const termPath = await operate(`/vnflcm/v2/vnf_instances/${id}/terminate`, { terminationType: 'GRACEFUL', gracefulTerminationTimeout: 1 });
    await settle(vnfm);
    const term = await opOcc(termPath);
    assert.equal(term.operationState, 'COMPLETED', JSON.stringify(term));
    assert.ok((term.resourceChanges as { affectedVnfcs: Array<{ changeType: string }> }).affectedVnfcs.every((c) => c.changeType === 'REMOVED'));
    assert.equal(((await call('GET', `/vnflcm/v2/vnf_instances/${id}`)).body as { instantiationState: string }).instantiationState, 'NOT_INSTANTIATED');
    const state = await simState();
    assert.equal(state.stacks?.count, 0, JSON.stringify(state.stacks));
    assert.equal(state.servers?.count, 0);
    assert.equal(state.ports?.count, 0);
    assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`)).status, 204);
  });

  it('hands the Vnflcm hooks the additionalParams as given, credentials included, and records them without', async () => {
    const id = await createInstance();
    const occPath = await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, {
      ...INSTANTIATE,
      additionalParams: { sample_script_require: 'ssh_password', ssh_password: 'hook-only-pw-7f3a' },
    });
    await settle(vnfm);
    const occ = await opOcc(`${occPath}`);
    assert.equal(occ.operationState, 'COMPLETED', JSON.stringify(occ.error));
    const recorded = (await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,id,${String(occ.id)})&all_fields`)).text;
    assert.ok(!recorded.includes('hook-only-pw-7f3a'), 'the password is not recorded');
    assert.match(recorded, /sample_script_require/);
    const missing = await createInstance();
    const failed = await operate(`/vnflcm/v2/vnf_instances/${missing}/instantiate`, {
      ...INSTANTIATE,
      additionalParams: { sample_script_require: 'ssh_password' },
    });
    await settle(vnfm);
    assert.match(((await opOcc(failed)).error as { detail: string }).detail, /needs additionalParams\.ssh_password/);
    assert.equal((await call('POST', `${failed}/fail`)).status, 200);
    for (const each of [id]) {
      await operate(`/vnflcm/v2/vnf_instances/${each}/terminate`, { terminationType: 'FORCEFUL' });
      await settle(vnfm);
    }
    for (const each of [id, missing]) assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${each}`)).status, 204);
  });

  it('runs instantiate_end on the VNF as instantiated (its VNFCs, as Tacker hands them), instantiate_start before any exists', async () => {
    const id = await createInstance();
    const ended = await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, {
      ...INSTANTIATE,
      additionalParams: { sample_script_require_vnfc: 'instantiate_end' },
    });
    await settle(vnfm);
    const occ = await opOcc(ended);
    assert.equal(occ.operationState, 'COMPLETED', JSON.stringify(occ.error));
    const early = await createInstance();
    const started = await operate(`/vnflcm/v2/vnf_instances/${early}/instantiate`, {
      ...INSTANTIATE,
      additionalParams: { sample_script_require_vnfc: 'instantiate_start' },
    });
    await settle(vnfm);
    assert.match(((await opOcc(started)).error as { detail: string }).detail, /instantiate_start was handed a VNF instance with no VNFC/);
    assert.equal((await call('POST', `${started}/fail`)).status, 200);
    await operate(`/vnflcm/v2/vnf_instances/${id}/terminate`, { terminationType: 'FORCEFUL' });
    await settle(vnfm);
    for (const each of [id, early]) assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${each}`)).status, 204);
  });

  it('refuses bad requests and wrong states with ProblemDetails', async () => {
    const id = await createInstance();
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/terminate`, { body: { terminationType: 'FORCEFUL' } }), 409);
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, { body: {} }), 400);
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, { body: { flavourId: 'no-such-flavour' } }), 422);
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, { body: { flavourId: 'simple', instantiationLevelId: 'nope' } }), 422);
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/terminate`, { body: { terminationType: 'SOFT' } }), 400);
    assertProblem(await call('POST', '/vnflcm/v2/vnf_instances/unknown/instantiate', { body: { flavourId: 'simple' } }), 404);
    assertProblem(await call('POST', '/vnflcm/v2/vnf_lcm_op_occs/unknown/retry'), 404);
    assert.deepEqual((await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,vnfInstanceId,${id})`)).body, []);
    assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`)).status, 204);
  });
});

describe('faults and the op-occ tasks', () => {
  async function failedInstantiate(reason: string): Promise<{ id: string; path: string }> {
    const id = await createInstance();
    await injectFault({ kind: 'stack-create-fail', reason, count: 1 });
    const path = await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, INSTANTIATE);
    await settle(vnfm);
    const failed = await opOcc(path);
    assert.equal(failed.operationState, 'FAILED_TEMP', JSON.stringify(failed));
    assert.match((failed.error as { detail: string }).detail, new RegExp(reason));
    await assertEtsiResponse('vnflcm', '/vnf_lcm_op_occs/{vnfLcmOpOccId}', 'get', 200, failed);
    return { id, path };
  }

  async function terminateAndDelete(id: string): Promise<void> {
    await operate(`/vnflcm/v2/vnf_instances/${id}/terminate`, { terminationType: 'FORCEFUL' });
    await settle(vnfm);
    assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`)).status, 204);
  }

  it("a failed stack create ends FAILED_TEMP with Heat's reason; retry then completes", async () => {
    const { id, path } = await failedInstantiate('Injected: quota of cores exceeded');
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/terminate`, { body: { terminationType: 'FORCEFUL' } }), 409);
    await holdExecutions(vnfm, true);
    try {
      const retry = await call('POST', `${path}/retry`);
      assert.equal(retry.status, 202, retry.text);
      assert.equal(retry.text, '');
      // SOL003 5.5.2.13: PROCESSING after FAILED_TEMP still carries the error.
      const processing = await opOcc(path);
      assert.equal(processing.operationState, 'PROCESSING');
      assert.match((processing.error as { detail: string }).detail, /quota of cores exceeded/);
      await assertEtsiResponse('vnflcm', '/vnf_lcm_op_occs/{vnfLcmOpOccId}', 'get', 200, processing);
    } finally {
      await holdExecutions(vnfm, false);
    }
    await settle(vnfm);
    const completed = await opOcc(path);
    assert.equal(completed.operationState, 'COMPLETED');
    assert.equal(completed.error, undefined);
    assertProblem(await call('POST', `${path}/retry`), 409);
    await terminateAndDelete(id);
  });

  it('rollback removes what the failed instantiate created and ends ROLLED_BACK', async () => {
    const before = await simState();
    const { id, path } = await failedInstantiate('Injected: no valid host');
    const rollback = await call('POST', `${path}/rollback`);
    assert.equal(rollback.status, 202, rollback.text);
    await settle(vnfm);
    const occ = await opOcc(path);
    assert.equal(occ.operationState, 'ROLLED_BACK', JSON.stringify(occ));
    const after = await simState();
    for (const kind of ['stacks', 'servers', 'ports', 'images', 'volumes']) {
      assert.equal(after[kind]?.count, before[kind]?.count, `${kind} left behind: ${JSON.stringify(after[kind])}`);
    }
    assertProblem(await call('POST', `${path}/rollback`), 409);
    // The lock is free: a new instantiate is accepted and completes.
    await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, INSTANTIATE);
    await settle(vnfm);
    await terminateAndDelete(id);
  });

  it("a rollback that fails ends FAILED_TEMP again with the VIM's reason, and can be asked for again", async () => {
    const { id, path } = await failedInstantiate('Injected: image service down');
    await injectFault({ kind: 'stack-delete-fail', reason: 'Injected: delete refused by the VIM', count: 1 });
    assert.equal((await call('POST', `${path}/rollback`)).status, 202);
    await settle(vnfm);
    const again = await opOcc(path);
    assert.equal(again.operationState, 'FAILED_TEMP', JSON.stringify(again));
    assert.match((again.error as { detail: string }).detail, /delete refused by the VIM/);
    assert.equal((await call('POST', `${path}/rollback`)).status, 202);
    await settle(vnfm);
    assert.equal((await opOcc(path)).operationState, 'ROLLED_BACK');
    assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`)).status, 204);
  });

  it('fail ends FAILED (200 + the op occ) and releases the instance', async () => {
    const { id, path } = await failedInstantiate('Injected: flavor not found');
    const failed = await call('POST', `${path}/fail`);
    assert.equal(failed.status, 200, failed.text);
    await assertEtsiResponse('vnflcm', '/vnf_lcm_op_occs/{vnfLcmOpOccId}/fail', 'post', 200, failed.body);
    assert.equal((failed.body as { operationState: string }).operationState, 'FAILED');
    assertProblem(await call('POST', `${path}/retry`), 409);
    assertProblem(await call('POST', `${path}/fail`), 409);
    const next = await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, { body: INSTANTIATE });
    assert.equal(next.status, 202, next.text);
    await settle(vnfm);
  });

  it('an execution that dies never leaves the instance locked', async () => {
    const id = await createInstance();
    const sfn = new SFNClient({
      endpoint: JSON.parse(readFileSync(join(vnfm.dataDir, 'endpoints.json'), 'utf8')).stepfunctions,
      region: 'us-east-1',
      credentials: vnfm.awsCredentials,
    });
    await holdExecutions(vnfm, true);
    let path: string;
    try {
      path = await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, INSTANTIATE);
      const opOccId = path.split('/').pop();
      const machine = 'arn:aws:states:us-east-1:000000000000:stateMachine:InstantiateStateMachine';
      const running = await sfn.send(new ListExecutionsCommand({ stateMachineArn: machine, statusFilter: 'RUNNING' }));
      const execution = running.executions?.find((e) => e.name === opOccId);
      assert.ok(execution?.executionArn);
      await sfn.send(new StopExecutionCommand({ executionArn: execution.executionArn, cause: 'killed by the test' }));
    } finally {
      await holdExecutions(vnfm, false);
    }
    await settle(vnfm);
    const occ = await opOcc(path);
    assert.equal(occ.operationState, 'ROLLED_BACK', JSON.stringify(occ));
    assert.match((occ.error as { detail: string }).detail, /ABORTED/);
    await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, INSTANTIATE);
    await settle(vnfm);
    await terminateAndDelete(id);
  });
});

describe('VIM and grant', () => {
  it('instantiates on a VIM given in the request (credentials never returned)', async () => {
    const vims = JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8')) as Record<
      string,
      { authUrl: string; username: string; password: string; project: string; projectDomain: string; userDomain: string; region: string }
    >;
    const os = vims['local-openstack'];
    assert.ok(os);
    const accessInfo = openStackAccessInfo(os);
    const id = await createInstance();
    const path = await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, {
      ...INSTANTIATE,
      vimConnectionInfo: {
        vim1: {
          vimId: 'my-openstack',
          vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3',
          interfaceInfo: { endpoint: os.authUrl },
          accessInfo,
        },
      },
    });
    await settle(vnfm);
    const occ = await opOcc(path);
    assert.equal(occ.operationState, 'COMPLETED', JSON.stringify(occ.error));
    const shown = await call('GET', `/vnflcm/v2/vnf_instances/${id}`);
    const instance = shown.body as { vimConnectionInfo: Record<string, Record<string, unknown>> };
    assert.deepEqual(Object.keys(instance.vimConnectionInfo), ['vim1']);
    assert.ok(!('accessInfo' in (instance.vimConnectionInfo.vim1 ?? {})));
    assert.ok(!shown.text.includes(os.password) && !JSON.stringify(occ).includes(os.password));

    // New credentials for the VIM it runs on (a new secret; the old one is deleted): the health sweep
    // reads the VNF's VIM with them, where it used to look for the deleted secret.
    const modified = await call('PATCH', `/vnflcm/v2/vnf_instances/${id}`, {
      body: {
        vimConnectionInfo: {
          vim1: {
            accessInfo,
          },
        },
      },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    assert.equal(modified.status, 202, modified.text);
    await settle(vnfm);
    assert.equal((await opOcc(new URL(modified.headers.get('location') ?? '').pathname)).operationState, 'COMPLETED');
    const sweep = await localControl(vnfm, 'POST', '/_local/schedules/VnfHealthMonitorFunction/run');
    const report = (await sweep.json()) as { vimFailures: unknown[]; instances: number };
    assert.deepEqual(report.vimFailures, [], 'the sweep reaches the VIM with the new credentials');
    assert.ok(report.instances >= 1);
    await operate(`/vnflcm/v2/vnf_instances/${id}/terminate`, { terminationType: 'FORCEFUL' });
    await settle(vnfm);
    assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`)).status, 204);
  });

  it('refuses an INSTANTIATE naming an unknown VIM, starting nothing', async () => {
    const id = await createInstance();
    assertProblem(
      await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, {
        body: { ...INSTANTIATE, vimConnectionInfo: { vim1: { vimId: 'no-such-vim', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3' } } },
      }),
      422,
    );
    assert.deepEqual((await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,vnfInstanceId,${id})`)).body, []);
  });
});

describe('scale and heal', () => {
  type Vnfc = { id: string; vduId: string; computeResource: { resourceId: string } };
  type Shown = {
    instantiatedVnfInfo: {
      vnfcResourceInfo: Vnfc[];
      vnfcInfo: Array<{ id: string; vnfcResourceInfoId: string }>;
      scaleStatus: Array<{ aspectId: string; scaleLevel: number }>;
    };
  };
  const serversOf = (shown: Shown, vduId: string): string[] =>
    shown.instantiatedVnfInfo.vnfcResourceInfo.filter((v) => v.vduId === vduId).map((v) => v.computeResource.resourceId);
  async function show(id: string): Promise<Shown> {
    const reply = await call('GET', `/vnflcm/v2/vnf_instances/${id}`);
    await assertEtsiResponse('vnflcm', '/vnf_instances/{vnfInstanceId}', 'get', 200, reply.body);
    return reply.body as Shown;
  }
  async function novaServers(): Promise<string[]> {
    return ((await simState()).servers?.items ?? []).map((s) => s.id);
  }
  async function done(path: string, state = 'COMPLETED'): Promise<Record<string, unknown>> {
    await settle(vnfm);
    const occ = await opOcc(path);
    assert.equal(occ.operationState, state, JSON.stringify(occ));
    await assertEtsiResponse('vnflcm', '/vnf_lcm_op_occs/{vnfLcmOpOccId}', 'get', 200, occ);
    return occ;
  }
  async function terminateAndDelete(id: string): Promise<void> {
    await done(await operate(`/vnflcm/v2/vnf_instances/${id}/terminate`, { terminationType: 'FORCEFUL' }));
    assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`)).status, 204);
  }
  const changed = (occ: Record<string, unknown>, type: string): string[] =>
    (occ.resourceChanges as { affectedVnfcs: Array<{ changeType: string; computeResource: { resourceId: string } }> }).affectedVnfcs
      .filter((c) => c.changeType === type)
      .map((c) => c.computeResource.resourceId)
      .sort();

  it('scales VDU1 out and in (newest server removed) and heals one VNFC, keeping the other servers', async () => {
    const id = await createInstance();
    await done(await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, INSTANTIATE));
    let shown = await show(id);
    const [vdu1] = serversOf(shown, 'VDU1');
    const [vdu2] = serversOf(shown, 'VDU2');
    assert.ok(vdu1 && vdu2);

    const out = await done(await operate(`/vnflcm/v2/vnf_instances/${id}/scale`, { type: 'SCALE_OUT', aspectId: 'VDU1_scale', numberOfSteps: 2 }));
    shown = await show(id);
    const scaled = serversOf(shown, 'VDU1');
    assert.equal(scaled.length, 3);
    assert.ok(scaled.includes(vdu1), 'the first VDU1 server is kept');
    assert.deepEqual(serversOf(shown, 'VDU2'), [vdu2]);
    assert.deepEqual(changed(out, 'ADDED'), scaled.filter((s) => s !== vdu1).sort());
    assert.deepEqual(shown.instantiatedVnfInfo.scaleStatus, [{ aspectId: 'VDU1_scale', scaleLevel: 2 }]);
    for (const server of scaled) assert.ok((await novaServers()).includes(server));
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/scale`, { body: { type: 'SCALE_OUT', aspectId: 'VDU1_scale' } }), 400);

    const newest = shown.instantiatedVnfInfo.vnfcResourceInfo.filter((v) => v.vduId === 'VDU1').at(-1)?.computeResource.resourceId;
    const scaledIn = await done(await operate(`/vnflcm/v2/vnf_instances/${id}/scale`, { type: 'SCALE_IN', aspectId: 'VDU1_scale' }));
    assert.deepEqual(changed(scaledIn, 'REMOVED'), [newest]);
    shown = await show(id);
    assert.equal(serversOf(shown, 'VDU1').length, 2);
    assert.ok(!(await novaServers()).includes(newest ?? ''));

    const target = shown.instantiatedVnfInfo.vnfcInfo.find((v) => v.vnfcResourceInfoId === serversOf(shown, 'VDU1')[0]);
    assert.ok(target);
    const keep = [...serversOf(shown, 'VDU1').slice(1), vdu2];
    const heal = await done(await operate(`/vnflcm/v2/vnf_instances/${id}/heal`, { vnfcInstanceId: [target.id] }));
    assert.deepEqual(changed(heal, 'REMOVED'), [target.vnfcResourceInfoId]);
    shown = await show(id);
    const after = shown.instantiatedVnfInfo.vnfcResourceInfo.map((v) => v.computeResource.resourceId);
    assert.equal(after.length, 3);
    assert.ok(!after.includes(target.vnfcResourceInfoId), 'the healed server was replaced');
    for (const server of keep) assert.ok(after.includes(server), `${server} keeps its id`);
    await terminateAndDelete(id);
  });

  it('heals the VDU2 VNFC (booted from a Cinder volume) by its vnfcInfo id: a new ACTIVE server on a new volume, VDU1 untouched', async () => {
    const id = await createInstance();
    await done(await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, INSTANTIATE));
    const before = await show(id);
    const [vdu2] = serversOf(before, 'VDU2');
    const vdu1 = serversOf(before, 'VDU1');
    const target = before.instantiatedVnfInfo.vnfcInfo.find((v) => v.vnfcResourceInfoId === vdu2);
    assert.ok(vdu2 && target);

    const heal = await done(await operate(`/vnflcm/v2/vnf_instances/${id}/heal`, { vnfcInstanceId: [target.id] }));
    assert.deepEqual(changed(heal, 'REMOVED'), [vdu2]);
    const after = await show(id);
    const [replacement] = serversOf(after, 'VDU2');
    assert.ok(replacement && replacement !== vdu2, 'the healed server was replaced');
    assert.deepEqual(changed(heal, 'ADDED'), [replacement]);
    assert.deepEqual(serversOf(after, 'VDU1'), vdu1, 'the VDU1 servers keep their ids');
    const storages = (heal.resourceChanges as { affectedVirtualStorages: Array<{ virtualStorageDescId: string; changeType: string }> }).affectedVirtualStorages;
    assert.deepEqual(
      storages.map((st) => `${st.virtualStorageDescId} ${st.changeType}`).sort(),
      ['VirtualStorage ADDED', 'VirtualStorage REMOVED'],
      'its volume was replaced with it',
    );
    const servers = (await simState()).servers?.items as Array<{ id: string; status: string }> | undefined;
    assert.equal(servers?.find((s) => s.id === replacement)?.status, 'ACTIVE');
    assert.ok(!servers?.some((s) => s.id === vdu2), 'the old server is gone from Nova');
    await terminateAndDelete(id);
  });

  it('a failed scale out ends FAILED_TEMP and its rollback restores the servers it had', async () => {
    const id = await createInstance();
    await done(await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, INSTANTIATE));
    const before = await show(id);
    await injectFault({ kind: 'stack-update-fail', reason: 'injected update failure', count: 1 });
    const path = await operate(`/vnflcm/v2/vnf_instances/${id}/scale`, { type: 'SCALE_OUT', aspectId: 'VDU1_scale' });
    const failed = await done(path, 'FAILED_TEMP');
    assert.match((failed.error as { detail: string }).detail, /injected update failure/);
    assert.equal((await call('POST', `${path}/rollback`)).status, 202);
    await done(path, 'ROLLED_BACK');
    const after = await show(id);
    assert.deepEqual(serversOf(after, 'VDU1'), serversOf(before, 'VDU1'));
    assert.deepEqual(after.instantiatedVnfInfo.scaleStatus, before.instantiatedVnfInfo.scaleStatus);
    assert.equal((await novaServers()).filter((s) => after.instantiatedVnfInfo.vnfcResourceInfo.some((v) => v.computeResource.resourceId === s)).length, 2);

    await injectFault({ kind: 'stack-update-fail', reason: 'injected heal failure', count: 1 });
    const vdu1 = after.instantiatedVnfInfo.vnfcInfo.filter((v) => serversOf(after, 'VDU1').includes(v.vnfcResourceInfoId)).map((v) => v.id);
    const healPath = await operate(`/vnflcm/v2/vnf_instances/${id}/heal`, { vnfcInstanceId: vdu1 });
    await done(healPath, 'FAILED_TEMP');
    assertProblem(await call('POST', `${healPath}/rollback`), 409);
    assert.equal((await call('POST', `${healPath}/retry`)).status, 202);
    await done(healPath);
    await terminateAndDelete(id);
  });
});

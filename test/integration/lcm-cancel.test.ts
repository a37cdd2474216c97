// Cancel of an LCM operation (SOL003 5.4.17) on the built-in OpenStack simulator, and the task
// links of VNF instances and op occs in each state they pass through. The VNF's Heat stack has a
// software deployment that waits for a signal when it is created and when it is deleted, so a test
// holds an instantiate PROCESSING (its stack CREATE_IN_PROGRESS) or a rollback ROLLING_BACK (the
// stack DELETE_IN_PROGRESS) for as long as it needs, and lets Heat finish by signalling it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCsar, SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { startNfvoSink, type NfvoSink } from '../support/nfvo-sink.ts';
import { client, holdExecutions, settle, startVnfm, type LocalVnfm, type Reply } from '../support/runtime.ts';
import { waitFor } from '../support/wait.ts';

let vnfm: LocalVnfm;
let call: ReturnType<typeof client>;
let sink: NfvoSink;
let sim: { control: string };
const vnfdId = SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId;
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
/** Added to the sample's BaseHOT: the stack's create and delete wait until the deployment on VDU2 is signalled. */
const HELD_DEPLOYMENT = `
  hold_config:
    type: OS::Heat::SoftwareConfig
    properties:
      group: script
      config: 'exit 0'

  hold:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: { get_resource: hold_config }
      server: { get_resource: VDU2 }
      actions: [CREATE, DELETE]

outputs: {}
`;

type Listed = { count: number; items: Array<{ id: string; name?: string; status?: string; state?: string; nested?: boolean }> };
type OpOcc = Record<string, unknown> & {
  operationState: string;
  isCancelPending: boolean;
  cancelMode?: string;
  error?: { title?: string; detail: string };
  _links: Record<string, { href: string }>;
};

async function simState(): Promise<Record<string, Listed>> {
  return (await fetch(`${sim.control}state`)).json() as Promise<Record<string, Listed>>;
}

/** The VNF's top-level stacks as Heat has them. */
async function stacks(): Promise<Listed['items']> {
  return ((await simState()).stacks?.items ?? []).filter((stack) => !stack.nested);
}

/** Waits until a stack's create or delete waits for a deployment (other than `besides`); returns the deployment's id. */
async function heldDeployment(besides?: string): Promise<string> {
  let id: string | undefined;
  await waitFor('a stack waiting for its software deployment', async () => {
    id = (await simState()).deployments?.items.find((deployment) => deployment.state === 'waiting' && deployment.id !== besides)?.id;
    return id !== undefined;
  });
  return id as string;
}

async function signal(deploymentId: string): Promise<void> {
  const response = await fetch(`${sim.control}signal/${deploymentId}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ deploy_status_code: 0 }),
  });
  assert.ok(response.ok, await response.text());
}

function assertProblem(reply: Reply, status: number): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.headers.get('content-type'), 'application/problem+json');
}

async function operate(path: string, body: unknown): Promise<string> {
  const reply = await call('POST', path, { body });
  assert.equal(reply.status, 202, reply.text);
  return new URL(reply.headers.get('location') ?? '').pathname;
}

async function opOcc(path: string): Promise<OpOcc> {
  const reply = await call('GET', path);
  assert.equal(reply.status, 200, reply.text);
  return reply.body as OpOcc;
}

async function cancel(path: string, cancelMode: string, version: 1 | 2 = 2): Promise<Reply> {
  return call('POST', `${path.replace('/vnflcm/v2/', `/vnflcm/v${version}/`)}/cancel`, { body: { cancelMode }, ...(version === 1 ? { version: null } : {}) });
}

const tasks = (links: Record<string, unknown>) => Object.keys(links).filter((name) => name !== 'self' && name !== 'vnfInstance');

async function instanceLinks(id: string, version: 1 | 2): Promise<string[]> {
  const reply = await call('GET', `/vnflcm/v${version}/vnf_instances/${id}`, version === 1 ? { version: null } : {});
  assert.equal(reply.status, 200, reply.text);
  return Object.keys((reply.body as { _links: Record<string, unknown> })._links).sort();
}

/** The op occ's notifications' states, in the order they came. */
const notifiedStates = (opOccId: string): string[] =>
  sink
    .accepted('/cb/cancel')
    .filter((n) => n.vnfLcmOpOccId === opOccId)
    .map((n) => String(n.operationState));

const idOf = (path: string) => path.split('/').pop() as string;

before(async () => {
  vnfm = await startVnfm();
  call = client(vnfm);
  sink = await startNfvoSink();
  sim = JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8'))['local-openstack'];
  const pkg = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
  const csar = await buildCsar('openstack-vnf-v1', {
    mutate: (files) => {
      const path = 'BaseHOT/simple/sample_hot.yaml';
      files.set(path, Buffer.from((files.get(path) as Buffer).toString('utf8').replace(/^outputs: \{\}\n/m, HELD_DEPLOYMENT)));
    },
  });
  await call('PUT', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content`, { raw: csar, headers: { 'Content-Type': 'application/zip' } });
  const subscribed = await call('POST', '/vnflcm/v2/subscriptions', { body: { callbackUri: `${sink.url}/cb/cancel` } });
  assert.equal(subscribed.status, 201, subscribed.text);
  await settle(vnfm);
});
after(async () => {
  await vnfm?.stop();
  await sink?.close();
});

describe('cancel of an LCM operation, and the task links in each state', () => {
  let id: string;

  it('a STARTING instantiate is cancelled (here through v1) to ROLLED_BACK at once, and its instance is free again', async () => {
    const created = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId, vnfInstanceName: 'cancel' } });
    assert.equal(created.status, 201, created.text);
    id = (created.body as { id: string }).id;
    assert.deepEqual(await instanceLinks(id, 2), ['instantiate', 'self']);
    assert.deepEqual(await instanceLinks(id, 1), ['instantiate', 'self']);

    await holdExecutions(vnfm, true);
    let path = '';
    try {
      path = await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, INSTANTIATE);
      const starting = await opOcc(path);
      assert.equal(starting.operationState, 'STARTING');
      assert.deepEqual(tasks(starting._links), ['cancel']);
      assert.equal(starting._links.cancel?.href, `${vnfm.url}${path}/cancel`);
      // While the operation holds the instance, the instance's own tasks are not available.
      assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, { body: INSTANTIATE }), 409);

      const reply = await cancel(path, 'GRACEFUL', 1);
      assert.equal(reply.status, 202, reply.text);
      assert.equal(reply.text, '');
      const rolledBack = await opOcc(path);
      assert.equal(rolledBack.operationState, 'ROLLED_BACK');
      assert.equal(rolledBack.isCancelPending, false);
      assert.equal(rolledBack.cancelMode, undefined);
      assert.equal(rolledBack.error?.title, 'Operation cancelled');
      assert.deepEqual(tasks(rolledBack._links), []);
    } finally {
      await holdExecutions(vnfm, false);
    }
    await settle(vnfm);
    // The stopped execution never ran a step: nothing on the VIM, and its recovery left the op occ as the cancel did.
    assert.equal(await stacks().then((s) => s.length), 0);
    const settled = await opOcc(path);
    assert.equal(settled.operationState, 'ROLLED_BACK');
    assert.equal(settled.error?.title, 'Operation cancelled');
    assertProblem(await cancel(path, 'FORCEFUL'), 409);
    await waitFor('the ROLLED_BACK notification', () => notifiedStates(idOf(path)).includes('ROLLED_BACK'));
    assert.deepEqual(notifiedStates(idOf(path)).sort(), ['ROLLED_BACK', 'STARTING']);
    assert.deepEqual(await instanceLinks(id, 2), ['instantiate', 'self']);
  });

  it('a FORCEFUL cancel of a PROCESSING instantiate whose stack Heat is still creating is FAILED_TEMP at once; a GRACEFUL cancel of its rollback lets Heat finish the delete; rollback then ends ROLLED_BACK', async () => {
    const path = await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, INSTANTIATE);
    const deployment = await heldDeployment();
    const processing = await opOcc(path);
    assert.equal(processing.operationState, 'PROCESSING');
    assert.deepEqual(tasks(processing._links), ['cancel']);
    const [stack] = await stacks();
    assert.equal(stack?.status, 'CREATE_IN_PROGRESS');

    const reply = await cancel(path, 'FORCEFUL');
    assert.equal(reply.status, 202, reply.text);
    const failed = await opOcc(path);
    assert.equal(failed.operationState, 'FAILED_TEMP');
    assert.equal(failed.isCancelPending, false);
    assert.equal(failed.cancelMode, undefined);
    assert.equal(failed.error?.title, 'Operation cancelled');
    assert.match(failed.error?.detail ?? '', /FORCEFUL/);
    assert.deepEqual(tasks(failed._links).sort(), ['fail', 'retry', 'rollback']);
    assertProblem(await cancel(path, 'FORCEFUL'), 409);
    assertProblem(await cancel(path, 'GRACEFUL', 1), 409);
    // The VNFM stopped: Heat is left as it was, for rollback (or retry) to take on.
    assert.deepEqual(
      (await stacks()).map((s) => [s.id, s.status]),
      [[stack?.id, 'CREATE_IN_PROGRESS']],
    );
    await settle(vnfm);
    // The stopped execution's recovery did not move the op occ again.
    const recovered = await opOcc(path);
    assert.equal(recovered.operationState, 'FAILED_TEMP');
    assert.equal(recovered.error?.title, 'Operation cancelled');
    await waitFor('the FAILED_TEMP notification', () => notifiedStates(idOf(path)).includes('FAILED_TEMP'));
    assert.deepEqual(notifiedStates(idOf(path)).sort(), ['FAILED_TEMP', 'PROCESSING', 'STARTING']);

    // The rollback deletes the stack, whose delete waits for the deployment: ROLLING_BACK holds.
    assert.equal((await call('POST', `${path}/rollback`)).status, 202);
    await waitFor('the rollback deleting the stack', async () => (await stacks())[0]?.status === 'DELETE_IN_PROGRESS');
    const rollingBack = await opOcc(path);
    assert.equal(rollingBack.operationState, 'ROLLING_BACK');
    assert.deepEqual(tasks(rollingBack._links), ['cancel']);
    assert.equal((await cancel(path, 'GRACEFUL')).status, 202);
    const pending = await opOcc(path);
    assert.deepEqual([pending.operationState, pending.isCancelPending, pending.cancelMode], ['ROLLING_BACK', true, 'GRACEFUL']);
    await signal(deployment);
    await settle(vnfm);
    const cancelledRollback = await opOcc(path);
    assert.equal(cancelledRollback.operationState, 'FAILED_TEMP');
    assert.equal(cancelledRollback.isCancelPending, false);
    assert.match(cancelledRollback.error?.detail ?? '', /GRACEFUL\) while ROLLING_BACK/);
    // The delete Heat was doing was let finish.
    assert.deepEqual(await stacks(), []);

    assert.equal((await call('POST', `${path}/rollback`)).status, 202);
    await settle(vnfm);
    const rolledBack = await opOcc(path);
    assert.equal(rolledBack.operationState, 'ROLLED_BACK', JSON.stringify(rolledBack.error));
    assert.deepEqual(tasks(rolledBack._links), []);
    const state = await simState();
    assert.equal(state.stacks?.count, 0, JSON.stringify(state.stacks));
    assert.equal(state.servers?.count, 0);
    assert.equal(state.deployments?.count, 0);
    assert.deepEqual(await instanceLinks(id, 2), ['instantiate', 'self']);
  });

  it('a GRACEFUL cancel is pending while the VIM finishes its work, then FAILED_TEMP; retry completes the instantiate', async () => {
    const path = await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, INSTANTIATE);
    const deployment = await heldDeployment();
    // Bad requests are refused and change nothing.
    assertProblem(await call('POST', `${path}/cancel`, { body: {} }), 400);
    assertProblem(await call('POST', `${path}/cancel`, { body: { cancelMode: 'SOFT' } }), 400);
    assertProblem(await call('POST', `${path}/cancel`, { body: { cancelMode: 'GRACEFUL', when: 'now' } }), 400);
    assertProblem(await call('POST', `${path}/cancel`), 400);
    assertProblem(await call('POST', '/vnflcm/v2/vnf_lcm_op_occs/no-such-occ/cancel', { body: { cancelMode: 'GRACEFUL' } }), 404);
    assert.equal((await opOcc(path)).isCancelPending, false);

    assert.equal((await cancel(path, 'GRACEFUL')).status, 202);
    const pending = await opOcc(path);
    assert.equal(pending.operationState, 'PROCESSING');
    assert.equal(pending.isCancelPending, true);
    assert.equal(pending.cancelMode, 'GRACEFUL');
    assert.deepEqual(tasks(pending._links), ['cancel']);
    const listed = (await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,id,${idOf(path)})`)).body as OpOcc[];
    assert.deepEqual([listed[0]?.isCancelPending, listed[0]?.cancelMode], [true, 'GRACEFUL']);
    // A second GRACEFUL cancel is accepted and changes nothing.
    assert.equal((await cancel(path, 'GRACEFUL')).status, 202);
    assert.equal((await opOcc(path)).cancelMode, 'GRACEFUL');
    assert.equal((await stacks())[0]?.status, 'CREATE_IN_PROGRESS');

    await signal(deployment);
    await settle(vnfm);
    const failed = await opOcc(path);
    assert.equal(failed.operationState, 'FAILED_TEMP');
    assert.equal(failed.isCancelPending, false);
    assert.equal(failed.cancelMode, undefined);
    assert.equal(failed.error?.title, 'Operation cancelled');
    assert.match(failed.error?.detail ?? '', /GRACEFUL/);
    assertProblem(await cancel(path, 'GRACEFUL'), 409);
    // The VIM's work was let finish: the stack is complete, but the instance is not instantiated.
    assert.deepEqual(
      (await stacks()).map((s) => s.status),
      ['CREATE_COMPLETE'],
    );
    assert.equal(((await call('GET', `/vnflcm/v2/vnf_instances/${id}`)).body as { instantiationState: string }).instantiationState, 'NOT_INSTANTIATED');

    // Retry removes what the cancelled attempt made (the stack's delete waits for the deployment) and creates the VNF anew.
    assert.equal((await call('POST', `${path}/retry`)).status, 202);
    const deleting = await heldDeployment();
    await signal(deleting);
    await signal(await heldDeployment(deleting));
    await settle(vnfm);
    const completed = await opOcc(path);
    assert.equal(completed.operationState, 'COMPLETED', JSON.stringify(completed.error));
    assert.equal(completed.isCancelPending, false);
    assert.deepEqual(tasks(completed._links), []);
    assertProblem(await cancel(path, 'GRACEFUL'), 409);
    assertProblem(await cancel(path, 'FORCEFUL', 1), 409);
    const [stack] = await stacks();
    assert.equal(stack?.status, 'CREATE_COMPLETE');
    assert.equal((await stacks()).length, 1);
    const instance = (await call('GET', `/vnflcm/v2/vnf_instances/${id}`)).body as {
      instantiationState: string;
      instantiatedVnfInfo: { vnfcResourceInfo: Array<{ computeResource: { resourceId: string } }> };
    };
    assert.equal(instance.instantiationState, 'INSTANTIATED');
    const servers = (await simState()).servers?.items.map((s) => s.id) ?? [];
    for (const vnfc of instance.instantiatedVnfInfo.vnfcResourceInfo) assert.ok(servers.includes(vnfc.computeResource.resourceId));
    assert.deepEqual(await instanceLinks(id, 2), [
      'changeCurrentVnfPkg',
      'changeExtConn',
      'changeFlavour',
      'createSnapshot',
      'heal',
      'operate',
      'revertToSnapshot',
      'scale',
      'scaleToLevel',
      'self',
      'terminate',
    ]);
    assert.deepEqual(await instanceLinks(id, 1), ['changeExtConn', 'heal', 'scale', 'self', 'terminate']);
  });
});

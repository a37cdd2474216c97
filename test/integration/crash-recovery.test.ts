// kill -9 of the whole runtime (its process group) in the middle of LCM operations, and a restart on
// the same data folder: every op occ reaches a state an operator can act on (COMPLETED, FAILED_TEMP,
// ROLLED_BACK, FAILED), retry and rollback then work, and the VIM keeps nothing nobody can remove.
// The VIM is an OpenStack simulator in a process of its own, as a real cloud outlives its VNFM.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { HeatClient } from '#lib/vim/openstack/heat.ts';
import { OpenStackSession } from '#lib/vim/openstack/keystone.ts';
import { buildCsar, buildCsarFile, SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { lcmSteps } from '../support/lcm-http.ts';
import { waitFor } from '../support/wait.ts';
import { client, holdExecutions, newDataDir, ROOT, settle, startVnfm, type LocalVnfm } from '../support/runtime.ts';

const OPENSTACK = 'ETSINFV.OPENSTACK_KEYSTONE.V_3';
const V1 = SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId;
const V2 = SAMPLE_PACKAGES['openstack-vnf-v2'].vnfdId;
/** How long a moment to kill at may take to come (a stack build, an onboarding under load). */
const LIMIT_MS = 60_000;
const ACTIONABLE = ['COMPLETED', 'FAILED_TEMP', 'ROLLED_BACK', 'FAILED'];

interface Simulator {
  process: ChildProcess;
  authUrl: string;
  control: string;
  accessInfo: Record<string, string>;
}

let sim: Simulator;
let heat: HeatClient;
const dataDir = newDataDir();
let vnfm: LocalVnfm;
let vimId: string;

/** The OpenStack simulator as a process of its own, at real time (a server builds in ~1.5 s). */
async function startSimulator(): Promise<Simulator> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/openstack/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', TIME_SCALE: '1' },
    // Its stderr is relayed rather than inherited: a simulator outliving this file (killed at a
    // timeout before its after hook) must not hold the test runner's pipe open, which would keep
    // the whole run from ending.
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr?.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(out);
    });
    child.once('exit', (code) => reject(new Error(`the simulator exited with ${code}`)));
  });
  const field = (name: string) => new RegExp(`${name}=(\\S+)`).exec(line)?.[1] ?? '';
  const authUrl = field('auth_url');
  return {
    process: child,
    authUrl,
    control: new URL('/_sim/', authUrl).href,
    accessInfo: {
      username: field('username'),
      password: field('password'),
      project: field('project'),
      projectDomain: field('project_domain'),
      userDomain: field('user_domain'),
      region: field('region'),
    },
  };
}

async function control(method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${sim.control}${path}`, {
    method,
    ...(body ? { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  assert.ok(response.ok, `${method} /_sim/${path}: ${response.status} ${text}`);
  return text ? (JSON.parse(text) as unknown) : undefined;
}

const stackStatus = async (instanceId: string) => (await heat.getStack(`vnf-${instanceId}`))?.stack_status;

function api() {
  const call = client(vnfm);
  return { call, ...lcmSteps(vnfm, call) };
}

async function opOccState(path: string): Promise<string> {
  return ((await api().call('GET', path)).body as { operationState: string }).operationState;
}

/** The instantiate request, on the separately running VIM. */
const instantiate = () => ({
  flavourId: 'simple',
  vimConnectionInfo: { site: { vimId, vimType: OPENSTACK } },
  extVirtualLinks: [
    {
      id: 'ext-public',
      resourceId: 'public',
      extCps: [
        {
          cpdId: 'VDU1_CP1',
          cpConfig: {
            VDU1_CP1_1: {
              cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', numDynamicAddresses: 1 }] } }],
            },
          },
        },
      ],
    },
  ],
});

async function createInstance(): Promise<string> {
  const reply = await api().call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: V1, vnfInstanceName: 'crash' } });
  assert.equal(reply.status, 201, reply.text);
  return (reply.body as { id: string }).id;
}

/** kill -9 of the runtime's process group, then a new runtime on the same data: it resumes, then sweeps. */
async function crashAndRestart(env: Record<string, string> = {}): Promise<void> {
  await vnfm.kill();
  vnfm = await startVnfm({ dataDir, processGroup: true, env });
  await settle(vnfm);
}

before(async () => {
  sim = await startSimulator();
  heat = new HeatClient(new OpenStackSession({ vimId: 'sim', vimType: OPENSTACK, interfaceInfo: { endpoint: sim.authUrl }, accessInfo: sim.accessInfo }));
  vnfm = await startVnfm({ dataDir, processGroup: true });
  const { call, onboard } = api();
  const registered = await call('POST', '/vnfm/v1/vims', {
    body: { name: 'outlives-the-vnfm', vimType: OPENSTACK, interfaceInfo: { endpoint: sim.authUrl }, accessInfo: sim.accessInfo },
  });
  assert.equal(registered.status, 201, registered.text);
  vimId = (registered.body as { id: string }).id;
  await onboard(['openstack-vnf-v1', 'openstack-vnf-v2']);
});

after(async () => {
  await vnfm.stop();
  sim.process.kill('SIGTERM');
});

describe('kill -9 and a restart in the middle of LCM operations', () => {
  const instantiated: string[] = [];

  it('an INSTANTIATE killed while STARTING resumes and completes', async () => {
    const id = await createInstance();
    await holdExecutions(vnfm, true);
    const path = await api().operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, instantiate());
    assert.equal(await opOccState(path), 'STARTING');
    await crashAndRestart();
    await api().ended(path, 'COMPLETED');
    instantiated.push(id);
  });

  it('an INSTANTIATE killed while PROCESSING, before its stack exists (images uploading), resumes and completes', async () => {
    const id = await createInstance();
    await control('POST', 'faults', { kind: 'slow', service: 'glance', ms: 600_000 });
    const path = await api().operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, instantiate());
    await waitFor('the op occ is PROCESSING', async () => (await opOccState(path)) === 'PROCESSING', LIMIT_MS);
    assert.equal(await stackStatus(id), undefined);
    await control('DELETE', 'faults');
    await crashAndRestart();
    await api().ended(path, 'COMPLETED');
    assert.equal(await stackStatus(id), 'CREATE_COMPLETE');
    instantiated.push(id);
  });

  it('an INSTANTIATE killed while its stack is CREATE_IN_PROGRESS resumes polling and completes', async () => {
    const id = await createInstance();
    const path = await api().operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, instantiate());
    await waitFor('the stack is CREATE_IN_PROGRESS', async () => (await stackStatus(id)) === 'CREATE_IN_PROGRESS', LIMIT_MS);
    await crashAndRestart();
    await api().ended(path, 'COMPLETED');
    instantiated.push(id);
  });

  it('an INSTANTIATE killed after its stack is CREATE_COMPLETE, waiting for its next poll, completes', async () => {
    // Polls five times further apart, so the stack completes well before the VNFM looks again.
    await vnfm.stop();
    vnfm = await startVnfm({ dataDir, processGroup: true, env: { VNFM_WAIT_SCALE: '5' } });
    const id = await createInstance();
    const path = await api().operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, instantiate());
    await waitFor('the stack is CREATE_COMPLETE', async () => (await stackStatus(id)) === 'CREATE_COMPLETE', LIMIT_MS);
    assert.equal(await opOccState(path), 'PROCESSING');
    await crashAndRestart();
    await api().ended(path, 'COMPLETED');
    instantiated.push(id);
  });

  it('an INSTANTIATE whose stack fails while the VNFM is down ends FAILED_TEMP; rollback then leaves nothing on the VIM', async () => {
    const id = await createInstance();
    await control('POST', 'faults', { kind: 'stack-create-fail', reason: 'Injected: no valid host while the VNFM was down', count: 1 });
    const path = await api().operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, instantiate());
    await waitFor('the stack exists', async () => (await stackStatus(id)) !== undefined, LIMIT_MS);
    await crashAndRestart();
    const failed = await api().ended(path, 'FAILED_TEMP');
    assert.match((failed.error as { detail: string }).detail, /no valid host while the VNFM was down/);
    assert.equal((await api().call('POST', `${path}/rollback`)).status, 202);
    await api().ended(path, 'ROLLED_BACK');
    assert.equal(await stackStatus(id), undefined);
    assert.equal((await api().call('DELETE', `/vnflcm/v2/vnf_instances/${id}`)).status, 204);
  });

  it('a TERMINATE killed while its stack is DELETE_IN_PROGRESS resumes and completes: NOT_INSTANTIATED', async () => {
    const id = instantiated.shift() as string;
    const path = await api().operate(`/vnflcm/v2/vnf_instances/${id}/terminate`, { terminationType: 'FORCEFUL' });
    await waitFor('the stack is DELETE_IN_PROGRESS', async () => (await stackStatus(id)) === 'DELETE_IN_PROGRESS', LIMIT_MS);
    await crashAndRestart();
    await api().ended(path, 'COMPLETED');
    assert.equal((await api().instance<{ instantiationState: string }>(id)).instantiationState, 'NOT_INSTANTIATED');
    assert.equal(await stackStatus(id), undefined);
  });

  it('a SCALE_TO_LEVEL killed while its stack is UPDATE_IN_PROGRESS resumes and completes at the new level', async () => {
    const id = instantiated.shift() as string;
    const path = await api().operate(`/vnflcm/v2/vnf_instances/${id}/scale_to_level`, { instantiationLevelId: 'instantiation_level_2' });
    await waitFor('the stack is UPDATE_IN_PROGRESS', async () => (await stackStatus(id)) === 'UPDATE_IN_PROGRESS', LIMIT_MS);
    await crashAndRestart();
    await api().ended(path, 'COMPLETED');
    assert.equal(await stackStatus(id), 'UPDATE_COMPLETE');
    const info = (await api().instance<{ instantiatedVnfInfo: { scaleStatus: Array<{ aspectId: string; scaleLevel: number }> } }>(id)).instantiatedVnfInfo;
    assert.ok(
      info.scaleStatus.some((status) => status.scaleLevel > 0),
      JSON.stringify(info.scaleStatus),
    );
    instantiated.push(id);
  });

  it('a CHANGE_FLAVOUR killed while its stack is UPDATE_IN_PROGRESS resumes and completes in the new flavour', async () => {
    const id = instantiated.shift() as string;
    const path = await api().operate(`/vnflcm/v2/vnf_instances/${id}/change_flavour`, { newFlavourId: 'large' });
    await waitFor('the stack is UPDATE_IN_PROGRESS', async () => (await stackStatus(id)) === 'UPDATE_IN_PROGRESS', LIMIT_MS);
    await crashAndRestart();
    await api().ended(path, 'COMPLETED');
    assert.equal((await api().instance<{ instantiatedVnfInfo: { flavourId: string } }>(id)).instantiatedVnfInfo.flavourId, 'large');
    instantiated.push(id);
  });

  it('a CHANGE_VNFPKG killed half-way reaches an actionable state, and rollback or completion leaves a working VNF', async () => {
    const id = instantiated.shift() as string;
    const path = await api().operate(`/vnflcm/v2/vnf_instances/${id}/change_vnfpkg`, { vnfdId: V2, additionalParams: { upgrade_type: 'BlueGreen' } });
    // Blue-green builds the new VNF as a second stack, vnf-<instance>-<package>, beside the first.
    const stacks = async () => ((await control('GET', 'state')) as { stacks: { items: Array<{ name?: string }> } }).stacks.items;
    await waitFor(
      'the new stack is being built',
      async () => (await stacks()).some((stack) => stack.name?.startsWith(`vnf-${id}-`)) || (await opOccState(path)) !== 'PROCESSING',
      LIMIT_MS,
    );
    await crashAndRestart();
    const state = await opOccState(path);
    assert.ok(ACTIONABLE.includes(state), state);
    if (state === 'FAILED_TEMP') {
      assert.equal((await api().call('POST', `${path}/rollback`)).status, 202);
      await api().ended(path, 'ROLLED_BACK');
    }
    instantiated.push(id);
  });

  it('a burst of six INSTANTIATEs killed together, each at its own step: every op occ reaches an actionable state and every instance is free again', async () => {
    const ids = await Promise.all(Array.from({ length: 6 }, () => createInstance()));
    const paths = await Promise.all(ids.map((id) => api().operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, instantiate())));
    // The kill comes once two stacks are being built: the others are at their earlier steps, or done.
    await waitFor('two stacks are being built', async () => (await Promise.all(ids.map(stackStatus))).filter(Boolean).length >= 2, LIMIT_MS);
    await crashAndRestart();
    for (const [i, path] of paths.entries()) {
      const id = ids[i] as string;
      let state = await opOccState(path);
      assert.ok(ACTIONABLE.includes(state), `${path}: ${state}`);
      if (state === 'FAILED_TEMP') {
        assert.equal((await api().call('POST', `${path}/rollback`)).status, 202);
        await api().ended(path, 'ROLLED_BACK');
        state = 'ROLLED_BACK';
      }
      if (state === 'COMPLETED') {
        instantiated.push(id);
        continue;
      }
      // Rolled back or failed: the instance is NOT_INSTANTIATED, holds no lock, and can be deleted.
      const instance = await api().call('GET', `/vnflcm/v2/vnf_instances/${id}`);
      assert.equal((instance.body as { instantiationState: string }).instantiationState, 'NOT_INSTANTIATED', `${id} after ${state}`);
      const deleted = await api().call('DELETE', `/vnflcm/v2/vnf_instances/${id}`);
      assert.equal(deleted.status, 204, deleted.text);
    }
  });

  it('after the crashes, terminating every VNF leaves nothing on the VIM', async () => {
    for (const id of instantiated.splice(0)) await api().terminateAndDelete(id);
    const state = (await control('GET', 'state')) as Record<string, { count: number }>;
    for (const kind of ['stacks', 'servers', 'ports', 'volumes', 'images'])
      assert.equal(state[kind]?.count, 0, `${kind} left on the VIM: ${JSON.stringify(state[kind])}`);
  });
});

describe('the start-up sweep', () => {
  it('an op occ whose execution never started (killed between the two writes) is ROLLED_BACK, and the instance is free again', async () => {
    const id = await createInstance();
    await holdExecutions(vnfm, true);
    const path = await api().operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, instantiate());
    await vnfm.kill();
    // As if the process had died before StartExecution: no execution of that name exists.
    const opOccId = path.split('/').pop() as string;
    const executions = join(dataDir, 'stepfunctions', 'executions');
    for (const file of readdirSync(executions).filter((name) => name.includes(opOccId))) rmSync(join(executions, file));
    vnfm = await startVnfm({ dataDir, processGroup: true });
    await settle(vnfm);
    const occ = await api().ended(path, 'ROLLED_BACK');
    assert.match((occ.error as { detail: string }).detail, /NOT_FOUND/);
    const again = await api().operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, instantiate());
    await api().ended(again, 'COMPLETED');
    await api().terminateAndDelete(id);
  });

  it('a package whose onboarding is killed half-way returns to CREATED, saying so, and can be uploaded again at once', async () => {
    const { call } = api();
    const id = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
    // Large enough (a 64 MiB image) that onboarding is still reading it when the kill comes.
    const { path: csar } = await buildCsarFile('openstack-vnf-v1', join(dataDir, '..', `large-${id}.zip`), { imageBytes: 64 * 2 ** 20 });
    const grant = (await call('POST', `/vnfpkgm/v1/vnf_packages/${id}/package_content/upload_url`)).body as {
      uploadUri: string;
      method: string;
      headers: Record<string, string>;
    };
    const put = await fetch(grant.uploadUri, { method: grant.method, headers: grant.headers, body: readFileSync(csar) });
    assert.equal(put.status, 200);
    rmSync(csar);
    const state = async () => ((await api().call('GET', `/vnfpkgm/v1/vnf_packages/${id}`)).body as { onboardingState: string }).onboardingState;
    await waitFor('onboarding is under way', async () => (await state()) === 'PROCESSING', LIMIT_MS);
    await crashAndRestart();
    const shown = (await api().call('GET', `/vnfpkgm/v1/vnf_packages/${id}`)).body as {
      onboardingState: string;
      onboardingFailureDetails?: { detail: string };
    };
    assert.equal(shown.onboardingState, 'CREATED');
    assert.match(shown.onboardingFailureDetails?.detail ?? '', /interrupted/);
    const upload = await api().call('PUT', `/vnfpkgm/v1/vnf_packages/${id}/package_content`, {
      raw: await buildCsar('k8s-cnf-v1'),
      headers: { 'Content-Type': 'application/zip' },
    });
    assert.equal(upload.status, 202, upload.text);
    await settle(vnfm);
    // Should it not be ONBOARDED, what the package says about why, and what the runtime logged.
    const after = (await api().call('GET', `/vnfpkgm/v1/vnf_packages/${id}`)).body as { onboardingState: string; onboardingFailureDetails?: unknown };
    assert.equal(
      after.onboardingState,
      'ONBOARDED',
      `${JSON.stringify(after.onboardingFailureDetails)}\n${vnfm
        .output()
        .split('\n')
        .filter((line) => line.includes(id) || /onboard/i.test(line))
        .slice(-20)
        .join('\n')}`,
    );
  });
});

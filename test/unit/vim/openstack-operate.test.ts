// OPERATE in the OpenStack driver against the OpenStack simulator: servers stopped and started with
// Nova's os-stop/os-start and read back as STOPPED/STARTED VNFCs; a stop Nova lost is asked again;
// a graceful stop that overruns gracefulStopTimeout is noted as a warning; Nova's refusal is a
// failure with its reason; health() calls a server stopped on purpose healthy and one that shut
// down by itself (or failed while stopped) a fault.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CsarArchive } from '#lib/packages/archive.ts';
import type { ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import type { DriverState, OperateChange, OperationContext, PackageFiles, Progress, VimConnection } from '#lib/vim/driver.ts';
import { openStackDriver } from '#lib/vim/openstack/index.ts';
import { startOpenStackSimulator, type OpenStackSimulator } from '#local/openstack/simulator.ts';
import { openSamplePackage } from '../../support/sample-package.ts';
import { pollToEnd } from '../../support/driver-steps.ts';

let sim: OpenStackSimulator;
let archive: CsarArchive;
let vnfd: ParsedVnfd;
let files: PackageFiles;
let ctx: OperationContext;
let instantiated: DriverState;
let servers: Array<{ vduId: string; resourceId: string }>;

const vim = (): VimConnection => ({
  vimId: 'vim-sim',
  vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3',
  interfaceInfo: { endpoint: sim.authUrl },
  accessInfo: { ...sim.credentials },
});

const finish = (poll: (state: DriverState) => Promise<Progress>, state: DriverState): Promise<Progress> => pollToEnd(poll, state, () => sim.settled(), 20);

before(async () => {
  sim = await startOpenStackSimulator({ timeScale: 0.01 });
  ({ archive, vnfd, files } = await openSamplePackage('openstack-vnf-v1'));
  const publicNetwork = sim.faults.state().preloaded.networks.find((candidate) => candidate.name === 'public')?.id;
  const request = {
    flavourId: 'simple',
    extVirtualLinks: [
      {
        id: 'ext-vl-1',
        resourceId: publicNetwork,
        extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { 'VDU1_CP1-1': { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }],
      },
    ],
  };
  ctx = {
    vnfInstanceId: '00000000-0000-4000-8000-000000000777',
    opOccId: 'op-operate',
    vnfd,
    flavourId: 'simple',
    request,
    instantiateRequest: request,
    files,
    vim: vim(),
    grant: {},
  };
  const done = await finish((state) => openStackDriver.instantiatePoll(ctx, state), await openStackDriver.instantiateStart(ctx));
  assert.equal(done.status, 'DONE', done.status === 'FAILED' ? done.reason : undefined);
  instantiated = done.state;
  servers = (await openStackDriver.collect(ctx, instantiated)).vnfcResourceInfo.map((vnfc) => ({
    vduId: String(vnfc.vduId),
    resourceId: String((vnfc.computeResource as { resourceId: string }).resourceId),
  }));
  assert.equal(servers.length, 2);
});

after(async () => {
  await sim.close();
  await archive.close();
});

async function nova(path: string, init: RequestInit = {}): Promise<Response> {
  const auth = await fetch(`${sim.authUrl}/auth/tokens`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: sim.credentials.username, domain: { name: sim.credentials.userDomain }, password: sim.credentials.password } },
        },
        scope: { project: { name: sim.credentials.project, domain: { name: sim.credentials.projectDomain } } },
      },
    }),
  });
  const catalog = ((await auth.json()) as { token: { catalog: Array<{ type: string; endpoints: Array<{ interface: string; url: string }> }> } }).token.catalog;
  const compute = catalog.find((entry) => entry.type === 'compute')?.endpoints.find((endpoint) => endpoint.interface === 'public')?.url;
  return fetch(`${compute}${path}`, { ...init, headers: { 'Content-Type': 'application/json', 'X-Auth-Token': auth.headers.get('x-subject-token') ?? '' } });
}

const status = async (id: string): Promise<string> => ((await (await nova(`/servers/${id}`)).json()) as { server: { status: string } }).server.status;

async function forceStatus(id: string, to: string): Promise<void> {
  const response = await fetch(`${sim.url}/_sim/servers/${id}/status`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ status: to }),
  });
  assert.ok(response.ok, await response.text());
}

async function operate(state: DriverState, change: OperateChange): Promise<Progress> {
  const started = await openStackDriver.updateStart(ctx, state, change);
  await sim.settled();
  return finish((current) => openStackDriver.updatePoll(ctx, current, change), started);
}

const vnfcStates = async (state: DriverState) =>
  Object.fromEntries(((await openStackDriver.collect(ctx, state)).vnfcInfo ?? []).map((info) => [String(info.vnfcResourceInfoId), info.vnfcState]));

const healthOf = async (state: DriverState) =>
  (await openStackDriver.health(vim(), [{ vnfInstanceId: ctx.vnfInstanceId, state, vnfcs: servers }])).results.map((result) => [
    result.resourceId,
    result.healthy,
  ]);

describe('OPERATE in the OpenStack driver', () => {
  it('stops and starts servers with os-stop/os-start, leaving one already stopped alone; collect and health() follow', async () => {
    const [first, second] = servers;
    assert.ok(first && second);
    const stopOne = await operate(instantiated, { kind: 'OPERATE', changeStateTo: 'STOPPED', stopType: 'FORCEFUL', vnfcs: [first] });
    assert.equal(stopOne.status, 'DONE', stopOne.status === 'FAILED' ? stopOne.reason : undefined);
    assert.equal(await status(first.resourceId), 'SHUTOFF');
    assert.equal(await status(second.resourceId), 'ACTIVE');
    assert.deepEqual(await vnfcStates(stopOne.state), { [first.resourceId]: 'STOPPED', [second.resourceId]: 'STARTED' });
    assert.deepEqual(await healthOf(stopOne.state), [
      [first.resourceId, true],
      [second.resourceId, true],
    ]);
    // The same server SHUTOFF without an OPERATE having stopped it is a fault.
    assert.deepEqual(await healthOf(instantiated), [
      [first.resourceId, false],
      [second.resourceId, true],
    ]);

    // Stopping both: Nova answers 409 for the server already SHUTOFF if asked; it is not asked.
    const stopAll = await operate(stopOne.state, { kind: 'OPERATE', changeStateTo: 'STOPPED', stopType: 'FORCEFUL', vnfcs: servers });
    assert.equal(stopAll.status, 'DONE', stopAll.status === 'FAILED' ? stopAll.reason : undefined);
    assert.deepEqual(new Set(Object.values(await vnfcStates(stopAll.state))), new Set(['STOPPED']));
    assert.equal((stopAll.state as { operate?: unknown }).operate, undefined);

    // A server stopped on purpose that then fails is a fault all the same.
    await forceStatus(second.resourceId, 'ERROR');
    assert.deepEqual(await healthOf(stopAll.state), [
      [first.resourceId, true],
      [second.resourceId, false],
    ]);

    // Nova refuses to start a server in ERROR: the failure carries its reason.
    const refused = openStackDriver.updateStart(ctx, stopAll.state, { kind: 'OPERATE', changeStateTo: 'STARTED', vnfcs: servers });
    await assert.rejects(refused, /os-start of server .* was refused: Cannot 'start' instance/);
    await forceStatus(second.resourceId, 'SHUTOFF');

    const startAll = await operate(stopAll.state, { kind: 'OPERATE', changeStateTo: 'STARTED', vnfcs: servers });
    assert.equal(startAll.status, 'DONE', startAll.status === 'FAILED' ? startAll.reason : undefined);
    assert.equal(await status(first.resourceId), 'ACTIVE');
    assert.equal(await status(second.resourceId), 'ACTIVE');
    assert.deepEqual((startAll.state as { stopped?: string[] }).stopped, []);
    instantiated = startAll.state;
  });

  it('asks again for a stop Nova lost, and notes a graceful stop that overran gracefulStopTimeout', async () => {
    const [first] = servers;
    assert.ok(first);
    const change: OperateChange = { kind: 'OPERATE', changeStateTo: 'STOPPED', stopType: 'GRACEFUL', gracefulStopTimeout: 0, vnfcs: [first] };
    // As if the start step had sent os-stop and Nova had dropped it, and the timeout has passed.
    const lost = { ...instantiated, operate: { changeStateTo: 'STOPPED', servers: [first.resourceId], deadline: new Date(Date.now() - 1000).toISOString() } };
    const progress = await openStackDriver.updatePoll(ctx, lost, change);
    assert.equal(progress.status, 'IN_PROGRESS');
    assert.match(String(progress.state.warnings?.[0]), /did not shut down within gracefulStopTimeout \(0 s\)/);
    await sim.settled();
    const done = await finish((current) => openStackDriver.updatePoll(ctx, current, change), progress.state);
    assert.equal(done.status, 'DONE', done.status === 'FAILED' ? done.reason : undefined);
    assert.equal(done.state.warnings?.length, 1, 'noted once');
    assert.equal(await status(first.resourceId), 'SHUTOFF');
    assert.deepEqual((done.state as { stopped?: string[] }).stopped, [first.resourceId]);
  });
});

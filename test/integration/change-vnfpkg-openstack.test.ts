// CHANGE_VNFPKG (seed 004) of the sample VNF over HTTP on the built-in OpenStack VIM: a rolling
// update with Tacker-style Python coordinate scripts and a blue-green switching the simulator's
// load balancer through the package's JavaScript coordinate script, each watched by a probe that
// keeps asking the load balancer for a live backend; failures half-way and their rollback. Results
// are checked in Nova, Glance and Heat themselves and in the packages' usage.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertEtsiSchema } from '../support/etsi.ts';
import { SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { client, startVnfm, type LocalVnfm } from '../support/runtime.ts';
import { lcmSteps } from '../support/lcm-http.ts';
import { availabilityProbe } from '../support/probe.ts';

let vnfm: LocalVnfm;
let call: ReturnType<typeof client>;
let steps: ReturnType<typeof lcmSteps>;
const operate = (path: string, body: unknown) => steps.operate(path, body);
const ended = (path: string, state: string) => steps.ended(path, state);
const usage = (name: string) => steps.usage(packages[name] ?? '');
const finish = (id: string) => steps.terminateAndDelete(id);
let os: { authUrl: string; control: string; username: string; password: string; project: string; projectDomain: string; userDomain: string };
let simUrl: string;
const packages: Record<string, string> = {};
const V1 = SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId;
const V2 = SAMPLE_PACKAGES['openstack-vnf-v2'].vnfdId;
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
  steps = lcmSteps(vnfm, call);
  os = JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8'))['local-openstack'];
  simUrl = new URL('/', os.control).href.replace(/\/$/, '');
  Object.assign(packages, await steps.onboard(['openstack-vnf-v1', 'openstack-vnf-v2']));
});
after(async () => {
  await vnfm.stop();
});

// ---------------------------------------------------------------------------------------------
// The cloud as an operator sees it: Nova, Neutron and Glance through their APIs

let session: { token: string; endpoints: Record<string, string> } | undefined;
async function openstack<T>(service: 'compute' | 'network' | 'image', path: string): Promise<T> {
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
    session = {
      token: response.headers.get('x-subject-token') ?? '',
      endpoints: Object.fromEntries(body.token.catalog.map((entry) => [entry.type, entry.endpoints.find((e) => e.interface === 'public')?.url ?? ''])),
    };
  }
  const response = await fetch(`${session.endpoints[service]}${path}`, { headers: { 'X-Auth-Token': session.token } });
  assert.equal(response.status, 200, `${service} ${path}`);
  return response.json() as Promise<T>;
}

async function serverImage(serverId: string): Promise<string> {
  const { server } = await openstack<{ server: { image: { id: string } | string } }>('compute', `/servers/${serverId}`);
  return typeof server.image === 'string' ? server.image : server.image.id;
}

/** The address of a server on the "public" network (where VDU1_CP1 is). */
async function publicAddress(serverId: string): Promise<string> {
  const { networks } = await openstack<{ networks: Array<{ id: string; name: string }> }>('network', '/v2.0/networks');
  const publicNet = networks.find((network) => network.name === 'public')?.id;
  const { ports } = await openstack<{ ports: Array<{ network_id: string; fixed_ips: Array<{ ip_address: string }> }> }>(
    'network',
    `/v2.0/ports?device_id=${serverId}`,
  );
  const address = ports.find((port) => port.network_id === publicNet)?.fixed_ips[0]?.ip_address;
  assert.ok(address, `server ${serverId} has an address on the public network`);
  return address;
}

async function imageNames(): Promise<string[]> {
  return (await openstack<{ images: Array<{ name: string }> }>('image', '/v2/images')).images.map((image) => image.name);
}

async function setPool(pool: string, members: Array<{ address: string; serverId: string }>): Promise<void> {
  const response = await fetch(`${simUrl}/_lb/pools/${pool}/members`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json', Authorization: `Basic ${Buffer.from(`${os.username}:${os.password}`).toString('base64')}` },
    body: JSON.stringify({ members }),
  });
  assert.equal(response.status, 200, await response.text());
}

async function poolServers(pool: string): Promise<string[]> {
  return ((await (await fetch(`${simUrl}/_lb/pools/${pool}`)).json()) as { members: Array<{ serverId: string }> }).members.map((m) => m.serverId).sort();
}

const hasBackend = async (pool: string): Promise<boolean> => (await fetch(`${simUrl}/_lb/pools/${pool}/backend`)).status === 200;

// ---------------------------------------------------------------------------------------------

type Vnfc = { id: string; vduId: string; computeResource: { resourceId: string } };
type Instance = { vnfdId: string; instantiatedVnfInfo: { vnfcResourceInfo: Vnfc[] } };
const instance = (id: string): Promise<Instance> => steps.instance<Instance>(id);
const servers = (shown: Instance, vduId?: string): string[] =>
  shown.instantiatedVnfInfo.vnfcResourceInfo.filter((v) => !vduId || v.vduId === vduId).map((v) => v.computeResource.resourceId);

/** The sample VNF on v1 with VDU1 scaled to two servers, both in a load balancer pool. */
async function runningVnf(pool: string): Promise<{ id: string; shown: Instance }> {
  const id = ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: V1 } })).body as { id: string }).id;
  await ended(await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, INSTANTIATE), 'COMPLETED');
  await ended(await operate(`/vnflcm/v2/vnf_instances/${id}/scale`, { type: 'SCALE_OUT', aspectId: 'VDU1_scale' }), 'COMPLETED');
  const shown = await instance(id);
  const vdu1 = servers(shown, 'VDU1');
  assert.equal(vdu1.length, 2);
  await setPool(pool, await Promise.all(vdu1.map(async (serverId) => ({ address: await publicAddress(serverId), serverId }))));
  assert.ok(await hasBackend(pool));
  return { id, shown };
}

const vnfcParam = (username = 'ubuntu') => ({ cp_name: 'VDU1_CP1', username, password: 'vnfc-secret-password' });

describe('change current VNF package on OpenStack', () => {
  it('RollingUpdate: VNFC by VNFC to the v2 image with Python coordinate scripts; image-booted servers keep their ids, the volume-booted one is replaced; the pool never goes dark', async () => {
    const pool = 'rolling';
    const { id, shown } = await runningVnf(pool);
    const [vdu1Before, vdu2Before] = [servers(shown, 'VDU1'), servers(shown, 'VDU2')];
    const imagesBefore = await Promise.all(vdu1Before.map(serverImage));
    const request = {
      vnfdId: V2,
      additionalParams: {
        upgrade_type: 'RollingUpdate',
        'lcm-operation-coordinate-new-vnf': './Scripts/coordinate_vnf.py',
        'lcm-operation-coordinate-new-vnf-class': 'CoordinateNewVnf',
        'lcm-operation-coordinate-old-vnf': './Scripts/coordinate_vnf.py',
        'lcm-operation-coordinate-old-vnf-class': 'CoordinateOldVnf',
        vdu_params: [
          { vdu_id: 'VDU1', old_vnfc_param: vnfcParam(), new_vnfc_param: vnfcParam() },
          { vdu_id: 'VDU2', old_vnfc_param: { ...vnfcParam(), cp_name: 'VDU2_CP1' }, new_vnfc_param: { ...vnfcParam(), cp_name: 'VDU2_CP1' } },
        ],
      },
    };
    await assertEtsiSchema('vnflcm', 'ChangeCurrentVnfPkgRequest', request);
    const probe = availabilityProbe(() => hasBackend(pool));
    const path = await operate(`/vnflcm/v2/vnf_instances/${id}/change_vnfpkg`, request);
    const occ = await ended(path, 'COMPLETED');
    const watched = await probe.stop();
    assert.ok(watched.checks > 0);
    assert.equal(watched.outages, 0, `the pool had no live backend ${watched.outages} times out of ${watched.checks}`);
    assert.ok(!JSON.stringify(occ).includes('vnfc-secret-password'), 'the VNFC passwords are never returned');

    const after = await instance(id);
    assert.equal(after.vnfdId, V2);
    assert.deepEqual(servers(after, 'VDU1').sort(), [...vdu1Before].sort(), 'image-booted servers are rebuilt in place (seed 004)');
    assert.notDeepEqual(servers(after, 'VDU2'), vdu2Before, 'the volume-booted server is replaced (seed 004)');
    const imagesAfter = await Promise.all(servers(after, 'VDU1').map(serverImage));
    for (const image of imagesAfter) assert.ok(!imagesBefore.includes(image), 'every VDU1 server runs a new image');
    const names = await imageNames();
    assert.ok(
      !names.some((name) => name.startsWith(`vnf-${id}`) && !name.includes(packages['openstack-vnf-v2']!.slice(0, 8))),
      `only the v2 images remain: ${names.join(', ')}`,
    );
    const changes = (occ.resourceChanges as { affectedVnfcs: Array<{ vduId: string; changeType: string }> }).affectedVnfcs;
    assert.equal(changes.filter((c) => c.vduId === 'VDU1' && c.changeType === 'MODIFIED').length, 2);
    assert.equal(await usage('openstack-vnf-v1'), 'NOT_IN_USE');
    assert.equal(await usage('openstack-vnf-v2'), 'IN_USE');
    await finish(id);
  });

  it('BlueGreen: the v2 VNFCs are built beside the v1 ones, the coordinate script switches the load balancer, the old ones go; the pool never goes dark', async () => {
    const pool = 'blue-green';
    const { id, shown } = await runningVnf(pool);
    const request = {
      vnfdId: V2,
      additionalParams: {
        upgrade_type: 'BlueGreen',
        'lcm-operation-coordinate-new-vnf': 'Scripts/coordinate_lb.js',
        'lcm-operation-coordinate-old-vnf': 'Scripts/coordinate_lb.js',
        vdu_params: [{ vdu_id: 'VDU1', old_vnfc_param: vnfcParam(), new_vnfc_param: vnfcParam() }],
        external_lb_param: { ip_address: `${simUrl}/_lb`, pool, username: os.username, password: os.password },
        // The script reaches the load balancer, and nothing else, because the request says so.
        scriptNetworkAccess: [new URL(simUrl).host],
      },
    };
    const probe = availabilityProbe(() => hasBackend(pool));
    const path = await operate(`/vnflcm/v2/vnf_instances/${id}/change_vnfpkg`, request);
    const occ = await ended(path, 'COMPLETED');
    const watched = await probe.stop();
    assert.ok(watched.checks > 0);
    assert.equal(watched.outages, 0, `the pool had no live backend ${watched.outages} times out of ${watched.checks}`);
    assert.ok(!JSON.stringify(occ).includes(os.password) && !JSON.stringify(occ).includes('vnfc-secret-password'));

    const after = await instance(id);
    assert.equal(after.vnfdId, V2);
    const [oldServers, newServers] = [servers(shown), servers(after)];
    assert.equal(newServers.length, oldServers.length);
    assert.ok(
      newServers.every((server) => !oldServers.includes(server)),
      'every VNFC is new',
    );
    assert.deepEqual(await poolServers(pool), servers(after, 'VDU1').sort(), 'the load balancer points only at the new VNFCs');
    const { servers: live } = await openstack<{ servers: Array<{ id: string }> }>('compute', '/servers');
    assert.ok(
      oldServers.every((server) => !live.some((s) => s.id === server)),
      'the old VNFCs are gone',
    );
    const changes = (occ.resourceChanges as { affectedVnfcs: Array<{ changeType: string }> }).affectedVnfcs;
    assert.equal(changes.filter((c) => c.changeType === 'REMOVED').length, oldServers.length);
    assert.equal(changes.filter((c) => c.changeType === 'ADDED').length, newServers.length);
    assert.equal(await usage('openstack-vnf-v1'), 'NOT_IN_USE');
    assert.equal(await usage('openstack-vnf-v2'), 'IN_USE');
    await finish(id);
  });

  it('a coordinate script failing half-way through a rolling update ends FAILED_TEMP with its message; rollback restores ids, images and usage', async () => {
    const pool = 'rolling-failure';
    const { id, shown } = await runningVnf(pool);
    const imagesBefore = Object.fromEntries(await Promise.all(servers(shown, 'VDU1').map(async (server) => [server, await serverImage(server)] as const)));
    const path = await operate(`/vnflcm/v2/vnf_instances/${id}/change_vnfpkg`, {
      vnfdId: V2,
      additionalParams: {
        upgrade_type: 'RollingUpdate',
        'lcm-operation-coordinate-new-vnf': 'Scripts/coordinate_vnf.py',
        'lcm-operation-coordinate-old-vnf': 'Scripts/coordinate_vnf.py',
        // The new VNF refuses its first coordination, after its first VNFC was updated.
        vdu_params: [{ vdu_id: 'VDU1', old_vnfc_param: vnfcParam(), new_vnfc_param: vnfcParam('fail') }],
      },
    });
    const failed = await ended(path, 'FAILED_TEMP');
    assert.match((failed.error as { detail: string }).detail, /coordinate_vnf: the VNFC refused the coordination/);
    assert.equal((await call('POST', `${path}/rollback`)).status, 202);
    await ended(path, 'ROLLED_BACK');
    const after = await instance(id);
    assert.equal(after.vnfdId, V1);
    assert.deepEqual(servers(after).sort(), servers(shown).sort(), 'the same servers');
    for (const [server, image] of Object.entries(imagesBefore)) assert.equal(await serverImage(server), image, `${server} runs its old image again`);
    assert.ok(!(await imageNames()).some((name) => name.includes(packages['openstack-vnf-v2']!.slice(0, 8))), 'the v2 images are deleted');
    assert.ok(await hasBackend(pool));
    assert.equal(await usage('openstack-vnf-v1'), 'IN_USE');
    assert.equal(await usage('openstack-vnf-v2'), 'NOT_IN_USE');
    await finish(id);
  });

  it('a blue-green whose load balancer switch fails ends FAILED_TEMP; rollback deletes the new VNFCs and keeps the old ones in the pool', async () => {
    const pool = 'blue-green-failure';
    const { id, shown } = await runningVnf(pool);
    const path = await operate(`/vnflcm/v2/vnf_instances/${id}/change_vnfpkg`, {
      vnfdId: V2,
      additionalParams: {
        upgrade_type: 'Blue-Green',
        'lcm-operation-coordinate-new-vnf': 'Scripts/coordinate_lb.js',
        vdu_params: [{ vdu_id: 'VDU1', new_vnfc_param: vnfcParam() }],
        external_lb_param: { ip_address: `${simUrl}/_lb`, pool, username: os.username, password: 'wrong-password' },
        scriptNetworkAccess: [new URL(simUrl).host],
      },
    });
    const failed = await ended(path, 'FAILED_TEMP');
    assert.match((failed.error as { detail: string }).detail, /401|nauthori[sz]ed|credentials/i);
    assert.equal((await call('POST', `${path}/rollback`)).status, 202);
    await ended(path, 'ROLLED_BACK');
    const after = await instance(id);
    assert.equal(after.vnfdId, V1);
    assert.deepEqual(servers(after).sort(), servers(shown).sort());
    const { servers: live } = await openstack<{ servers: Array<{ id: string }> }>('compute', '/servers');
    assert.deepEqual(
      live.map((s) => s.id).filter((s) => !servers(shown).includes(s) && servers(after).includes(s)),
      [],
    );
    assert.deepEqual(await poolServers(pool), servers(shown, 'VDU1').sort());
    assert.ok(await hasBackend(pool));
    assert.equal(await usage('openstack-vnf-v2'), 'NOT_IN_USE');
    await finish(id);
  });
});

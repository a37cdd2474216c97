// Opt-in (`npm run test:openstack`): create_snapshot and revert_to_snapshot against a real OpenStack
// (the loopback one of ../shared/openstack: Nova with the fake driver, Glance, Heat; no Cinder, so
// the sample's VDU2 boots from its image as in instantiate.real.ts). The snapshot images are read
// from Glance and the servers' images from Nova, through their own APIs.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildCsar, SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { client, settle, startVnfm, type LocalVnfm } from '../support/runtime.ts';
import { waitFor } from '../support/wait.ts';

const AUTH_URL = process.env.REAL_OPENSTACK_AUTH_URL ?? 'http://127.0.0.1:5000/v3';
const ACCESS = {
  username: process.env.REAL_OPENSTACK_USER ?? 'demo',
  password: process.env.REAL_OPENSTACK_PASSWORD ?? 'demo_pass',
  project: process.env.REAL_OPENSTACK_PROJECT ?? 'demo',
  projectDomain: 'Default',
  userDomain: 'Default',
  region: 'RegionOne',
};
const NETWORK = process.env.REAL_OPENSTACK_NETWORK ?? 'public';

let session: { token: string; endpoints: Record<string, string> };

async function login(): Promise<void> {
  const auth = await fetch(`${AUTH_URL.replace(/\/$/, '')}/auth/tokens`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: { methods: ['password'], password: { user: { name: ACCESS.username, password: ACCESS.password, domain: { name: ACCESS.userDomain } } } },
        scope: { project: { name: ACCESS.project, domain: { name: ACCESS.projectDomain } } },
      },
    }),
  });
  assert.equal(auth.status, 201, await auth.clone().text());
  const catalog = ((await auth.json()) as { token: { catalog: Array<{ type: string; endpoints: Array<{ interface: string; url: string }> }> } }).token.catalog;
  session = {
    token: auth.headers.get('x-subject-token') ?? '',
    endpoints: Object.fromEntries(catalog.map((entry) => [entry.type, (entry.endpoints.find((e) => e.interface === 'public')?.url ?? '').replace(/\/$/, '')])),
  };
}

async function openstack(service: string, path: string, init: { method?: string; body?: unknown } = {}): Promise<Response> {
  return fetch(`${session.endpoints[service]}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'X-Auth-Token': session.token, 'Content-Type': 'application/json' },
    ...(init.body ? { body: JSON.stringify(init.body) } : {}),
  });
}

/** The project's external network the sample's VDU1_CP1 goes on. */
async function ensureNetwork(name: string): Promise<void> {
  const existing = (await (await openstack('network', `/v2.0/networks?name=${name}`)).json()) as { networks: Array<{ id: string }> };
  if (existing.networks.length) return;
  const network = (await (await openstack('network', '/v2.0/networks', { method: 'POST', body: { network: { name } } })).json()) as { network: { id: string } };
  const subnet = await openstack('network', '/v2.0/subnets', {
    method: 'POST',
    body: { subnet: { name: `${name}-subnet`, network_id: network.network.id, ip_version: 4, cidr: '192.0.2.0/24' } },
  });
  assert.equal(subnet.status, 201, await subnet.text());
}

let vnfm: LocalVnfm;
before(async () => {
  await login();
  await ensureNetwork(NETWORK);
  vnfm = await startVnfm({ env: { VNFM_WAIT_SCALE: '1' } });
});
after(async () => {
  await vnfm.stop();
});

it('snapshots a VNF on a real OpenStack, reverts a scale-out to it and deletes the snapshot images', async () => {
  const call = client(vnfm);
  const csar = await buildCsar('openstack-vnf-v1', {
    mutate: (files) => {
      const hot = files.get('BaseHOT/simple/sample_hot.yaml')?.toString() ?? '';
      files.set(
        'BaseHOT/simple/sample_hot.yaml',
        Buffer.from(
          hot
            .replace(/ {6}block_device_mapping_v2: .*\n/, '      image: { get_param: [ nfv, VDU, VirtualStorage, vcImageId ] }\n')
            .replace(/ {2}VirtualStorage:\n {4}type: OS::Cinder::Volume\n(?: {4,}.*\n)+/, '')
            .replace(/\banti-affinity\b/g, 'soft-anti-affinity'),
        ),
      );
    },
  });
  const pkg = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
  await call('PUT', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content`, { raw: csar, headers: { 'Content-Type': 'application/zip' } });
  await settle(vnfm);

  const id = ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId } })).body as { id: string }).id;
  const run = async (path: string, body: unknown): Promise<void> => {
    const reply = await call('POST', path, { body });
    assert.equal(reply.status, 202, reply.text);
    await settle(vnfm);
    const occ = (await call('GET', new URL(reply.headers.get('location') ?? '').pathname)).body as { operationState: string; error?: unknown };
    assert.equal(occ.operationState, 'COMPLETED', `${path}: ${JSON.stringify(occ.error)}`);
  };
  await run(`/vnflcm/v2/vnf_instances/${id}/instantiate`, {
    flavourId: 'simple',
    extVirtualLinks: [
      { id: 'ext', resourceId: NETWORK, extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { a: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }] },
    ],
    vimConnectionInfo: {
      vim1: { vimId: 'real-openstack', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3', interfaceInfo: { endpoint: AUTH_URL }, accessInfo: ACCESS },
    },
  });
  type Vnfc = { id: string; vduId: string; computeResource: { resourceId: string } };
  const vnfcs = async () =>
    ((await call('GET', `/vnflcm/v2/vnf_instances/${id}`)).body as { instantiatedVnfInfo: { vnfcResourceInfo: Vnfc[] } }).instantiatedVnfInfo.vnfcResourceInfo;
  const before = await vnfcs();

  const snapshotInfo = ((await call('POST', '/vnflcm/v2/vnf_snapshots', { body: {} })).body as { id: string }).id;
  const started = await call('POST', `/vnflcm/v2/vnf_instances/${id}/create_snapshot`, { body: { vnfSnapshotInfoId: snapshotInfo } });
  assert.equal(started.status, 202, started.text);
  type Snapshot = { vnfSnapshot?: { vnfcSnapshots: Array<{ vnfcResourceInfoId: string; computeSnapshotResource?: { resourceId: string } }> } };
  const snapshotOf = async () => (await call('GET', `/vnflcm/v2/vnf_snapshots/${snapshotInfo}`)).body as Snapshot;
  await waitFor('the snapshot names its images', async () => ((await snapshotOf()).vnfSnapshot?.vnfcSnapshots.length ?? 0) === before.length, 60_000);
  const images = new Map(
    ((await snapshotOf()).vnfSnapshot?.vnfcSnapshots ?? []).map((vnfc) => [vnfc.vnfcResourceInfoId, vnfc.computeSnapshotResource?.resourceId ?? '']),
  );
  assert.equal(images.size, before.length);
  // Nova's fake virt driver takes no snapshot data, so Glance keeps the image queued: the test plays
  // the hypervisor's part and uploads some, as libvirt would.
  for (const image of images.values()) {
    await waitFor(`Nova has made image ${image}`, async () => (await openstack('image', `/v2/images/${image}`)).status === 200, 60_000);
    const formats = await fetch(`${session.endpoints.image}/v2/images/${image}`, {
      method: 'PATCH',
      headers: { 'X-Auth-Token': session.token, 'Content-Type': 'application/openstack-images-v2.1-json-patch' },
      body: JSON.stringify([
        { op: 'add', path: '/disk_format', value: 'qcow2' },
        { op: 'add', path: '/container_format', value: 'bare' },
      ]),
    });
    assert.equal(formats.status, 200, await formats.text());
    const upload = await fetch(`${session.endpoints.image}/v2/images/${image}/file`, {
      method: 'PUT',
      headers: { 'X-Auth-Token': session.token, 'Content-Type': 'application/octet-stream' },
      body: Buffer.from(`snapshot ${image}`),
    });
    assert.equal(upload.status, 204, await upload.text());
  }
  await settle(vnfm);
  const created = (await call('GET', new URL(started.headers.get('location') ?? '').pathname)).body as { operationState: string; error?: unknown };
  assert.equal(created.operationState, 'COMPLETED', JSON.stringify(created.error));
  for (const image of images.values()) {
    const glance = await openstack('image', `/v2/images/${image}`);
    assert.equal(glance.status, 200);
    assert.equal(((await glance.json()) as { status: string }).status, 'active');
  }

  await run(`/vnflcm/v2/vnf_instances/${id}/scale`, { type: 'SCALE_OUT', aspectId: 'VDU1_scale' });
  assert.equal((await vnfcs()).length, before.length + 1);
  await run(`/vnflcm/v2/vnf_instances/${id}/revert_to_snapshot`, { vnfSnapshotInfoId: snapshotInfo });
  const after = await vnfcs();
  assert.deepEqual(after.map((vnfc) => vnfc.id).sort(), before.map((vnfc) => vnfc.id).sort());
  for (const vnfc of after) {
    const server = (await (await openstack('compute', `/servers/${vnfc.computeResource.resourceId}`)).json()) as { server: { image: { id: string } } };
    assert.equal(server.server.image.id, images.get(vnfc.id), `server ${vnfc.computeResource.resourceId} runs its snapshot image`);
  }

  assert.equal((await call('DELETE', `/vnflcm/v2/vnf_snapshots/${snapshotInfo}`)).status, 204);
  for (const image of images.values()) assert.equal((await openstack('image', `/v2/images/${image}`)).status, 404);
  await run(`/vnflcm/v2/vnf_instances/${id}/terminate`, { terminationType: 'FORCEFUL' });
});

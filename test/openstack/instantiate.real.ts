// Opt-in (`npm run test:openstack`): the same INSTANTIATE / TERMINATE scenario as the simulator
// tests, against a real OpenStack (the loopback one the scripts in ../shared/openstack bring up:
// Keystone, Glance, Nova with the fake driver, Neutron, Heat; no Cinder). The sample's volume is
// replaced by booting VDU2 from its image, and its anti-affinity is soft (one fake compute host).
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildCsar, SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { client, settle, startVnfm, type LocalVnfm } from '../support/runtime.ts';

const AUTH_URL = process.env.REAL_OPENSTACK_AUTH_URL ?? 'http://127.0.0.1:5000/v3';
const ACCESS = {
  username: process.env.REAL_OPENSTACK_USER ?? 'demo',
  password: process.env.REAL_OPENSTACK_PASSWORD ?? 'demo_pass',
  project: process.env.REAL_OPENSTACK_PROJECT ?? 'demo',
  projectDomain: 'Default',
  userDomain: 'Default',
  region: 'RegionOne',
};

/** Makes sure the project has the external network the sample's VDU1_CP1 goes on. */
async function ensureNetwork(name: string): Promise<void> {
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
  const token = auth.headers.get('x-subject-token') ?? '';
  const catalog = ((await auth.json()) as { token: { catalog: Array<{ type: string; endpoints: Array<{ interface: string; url: string }> }> } }).token.catalog;
  const neutron = catalog
    .find((s) => s.type === 'network')
    ?.endpoints.find((e) => e.interface === 'public')
    ?.url.replace(/\/$/, '');
  assert.ok(neutron, 'no network endpoint in the catalog');
  const headers = { 'X-Auth-Token': token, 'Content-Type': 'application/json' };
  const existing = (await (await fetch(`${neutron}/v2.0/networks?name=${name}`, { headers })).json()) as { networks: Array<{ id: string }> };
  if (existing.networks.length) return;
  const network = (await (await fetch(`${neutron}/v2.0/networks`, { method: 'POST', headers, body: JSON.stringify({ network: { name } }) })).json()) as {
    network: { id: string };
  };
  const subnet = await fetch(`${neutron}/v2.0/subnets`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ subnet: { name: `${name}-subnet`, network_id: network.network.id, ip_version: 4, cidr: '192.0.2.0/24' } }),
  });
  assert.equal(subnet.status, 201, await subnet.text());
}

const NETWORK = process.env.REAL_OPENSTACK_NETWORK ?? 'public';

let vnfm: LocalVnfm;
before(async () => {
  await ensureNetwork(NETWORK);
  vnfm = await startVnfm({ env: { VNFM_WAIT_SCALE: '1' } });
});
after(async () => {
  await vnfm.stop();
});

it('instantiates and terminates the sample VNF on a real OpenStack', async () => {
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
  const onboarded = (await call('GET', `/vnfpkgm/v1/vnf_packages/${pkg}?all_fields`)).body as { onboardingState: string; onboardingFailureDetails?: unknown };
  assert.equal(onboarded.onboardingState, 'ONBOARDED', JSON.stringify(onboarded.onboardingFailureDetails));

  const id = ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId } })).body as { id: string }).id;
  const reply = await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, {
    body: {
      flavourId: 'simple',
      extVirtualLinks: [
        { id: 'ext', resourceId: NETWORK, extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { a: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }] },
      ],
      vimConnectionInfo: {
        vim1: { vimId: 'real-openstack', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3', interfaceInfo: { endpoint: AUTH_URL }, accessInfo: ACCESS },
      },
    },
  });
  assert.equal(reply.status, 202, reply.text);
  await settle(vnfm);
  const occ = (await call('GET', new URL(reply.headers.get('location') ?? '').pathname)).body as { operationState: string; error?: unknown };
  assert.equal(occ.operationState, 'COMPLETED', JSON.stringify(occ.error));
  const instance = (await call('GET', `/vnflcm/v2/vnf_instances/${id}`)).body as { instantiatedVnfInfo: { vnfcResourceInfo: Array<{ vduId: string }> } };
  assert.deepEqual(instance.instantiatedVnfInfo.vnfcResourceInfo.map((v) => v.vduId).sort(), ['VDU1', 'VDU2']);

  const term = await call('POST', `/vnflcm/v2/vnf_instances/${id}/terminate`, { body: { terminationType: 'FORCEFUL' } });
  await settle(vnfm);
  const ended = (await call('GET', new URL(term.headers.get('location') ?? '').pathname)).body as { operationState: string; error?: unknown };
  assert.equal(ended.operationState, 'COMPLETED', JSON.stringify(ended.error));
});

// CHANGE_EXT_CONN (SOL003 5.4.11) over HTTP: the sample VNF's external CP moved to other networks,
// subnets and fixed IPs on the built-in OpenStack VIM, checked in Neutron's own API; a change that
// Heat fails, rolled back to the old network, and one retried; what later operations keep of it; the
// requests refused (state, unknown CPs, bad bodies, a CNF on Kubernetes) leaving everything as it was.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCsar, SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { lcmSteps } from '../support/lcm-http.ts';
import { client, settle, startVnfm, type LocalVnfm, type Reply } from '../support/runtime.ts';

let vnfm: LocalVnfm;
let call: ReturnType<typeof client>;
let steps: ReturnType<typeof lcmSteps>;
let os: { authUrl: string; control: string; username: string; password: string; project: string; projectDomain: string; userDomain: string };
const vnfdId = SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId;
const SECRET = 'extconn-secret-pw';

/**
 * The sample VNF with its external CP's port given the fixed IPs of nfv.CP.VDU1_CP1.fixed_ips, as
 * Tacker's sample BaseHOTs give them (the sample package itself reads only the network), and the
 * sample LCM script as its change_external_connectivity_start/_end hooks.
 */
function extConnPackage(files: Map<string, Buffer>): void {
  const df = 'Definitions/sample_vnfd_df_simple.yaml';
  const hooks = '          instantiate_end:\n            implementation: sample-script\n';
  const dfText = files.get(df)?.toString('utf8') ?? '';
  assert.ok(dfText.includes(hooks));
  files.set(
    df,
    Buffer.from(
      dfText.replace(
        hooks,
        `${hooks}          change_external_connectivity_start:\n            implementation: sample-script\n          change_external_connectivity_end:\n            implementation: sample-script\n`,
      ),
    ),
  );
  const top = 'BaseHOT/simple/sample_hot.yaml';
  const nested = 'BaseHOT/simple/nested/VDU1.yaml';
  const topText = files.get(top)?.toString('utf8') ?? '';
  const nestedText = files.get(nested)?.toString('utf8') ?? '';
  const anchor = '          net1: { get_param: [ nfv, CP, VDU1_CP1, network ] }\n';
  assert.ok(topText.includes(anchor) && nestedText.includes('      network: { get_param: net1 }\n'));
  files.set(top, Buffer.from(topText.replace(anchor, `${anchor}          fixed_ips1: { get_param: [ nfv, CP, VDU1_CP1, fixed_ips ] }\n`)));
  files.set(
    nested,
    Buffer.from(
      nestedText
        .replace('  net1:\n    type: string\n', '  net1:\n    type: string\n  fixed_ips1:\n    type: json\n    default: []\n')
        .replace('      network: { get_param: net1 }\n', '      network: { get_param: net1 }\n      fixed_ips: { get_param: fixed_ips1 }\n'),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Neutron, as an operator sees it

let token: { value: string; network: string } | undefined;
async function neutron<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  if (!token) {
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
    const catalog = ((await response.json()) as { token: { catalog: Array<{ type: string; endpoints: Array<{ interface: string; url: string }> }> } }).token
      .catalog;
    const network = catalog.find((entry) => entry.type === 'network')?.endpoints.find((e) => e.interface === 'public')?.url ?? '';
    token = { value: response.headers.get('x-subject-token') ?? '', network };
  }
  const response = await fetch(`${token.network}/v2.0${path}`, {
    method,
    headers: { 'X-Auth-Token': token.value, 'Content-Type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  assert.ok(response.ok, `${method} ${path}: ${response.status}`);
  return response.json() as Promise<T>;
}

async function network(name: string, cidr: string): Promise<{ id: string; subnetId: string }> {
  const { network: created } = await neutron<{ network: { id: string } }>('POST', '/networks', { network: { name } });
  const { subnet } = await neutron<{ subnet: { id: string } }>('POST', '/subnets', {
    subnet: { name: `${name}-subnet`, network_id: created.id, cidr, ip_version: 4 },
  });
  return { id: created.id, subnetId: subnet.id };
}

type Port = { id: string; network_id: string; device_id: string; fixed_ips: Array<{ subnet_id: string; ip_address: string }> };
/** The ports of a server that are not on the VNF's internal network, i.e. its external CP's. */
async function externalPorts(serverId: string, internalNetworks: string[]): Promise<Port[]> {
  const { ports } = await neutron<{ ports: Port[] }>('GET', `/ports?device_id=${serverId}`);
  return ports.filter((port) => !internalNetworks.includes(port.network_id));
}

// ---------------------------------------------------------------------------------------------

type Vnfc = { id: string; vduId: string; computeResource: { resourceId: string }; vnfcCpInfo: Array<{ id: string; cpdId: string }> };
type LinkInfo = {
  id: string;
  resourceHandle: { resourceId: string };
  extLinkPorts: Array<{ id: string; cpInstanceId: string }>;
  currentVnfExtCpData: Array<{ cpdId: string }>;
};
type ExtCp = {
  id: string;
  cpdId: string;
  extLinkPortId: string;
  cpProtocolInfo?: Array<{ ipOverEthernet?: { ipAddresses?: Array<{ addresses: string[] }> } }>;
};
type Instance = {
  instantiatedVnfInfo: {
    vnfcResourceInfo: Vnfc[];
    vnfVirtualLinkResourceInfo: Array<{ networkResource: { resourceId: string } }>;
    extVirtualLinkInfo: LinkInfo[];
    extCpInfo: ExtCp[];
  };
};
const show = (id: string) => steps.instance<Instance>(id);
const vdu1Servers = (shown: Instance): string[] =>
  shown.instantiatedVnfInfo.vnfcResourceInfo.filter((vnfc) => vnfc.vduId === 'VDU1').map((vnfc) => vnfc.computeResource.resourceId);
const internalNetworks = (shown: Instance): string[] => shown.instantiatedVnfInfo.vnfVirtualLinkResourceInfo.map((vl) => vl.networkResource.resourceId);

function assertProblem(reply: Reply, status: number, detail?: RegExp): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.headers.get('content-type'), 'application/problem+json');
  if (detail) assert.match((reply.body as { detail: string }).detail, detail);
}

async function injectFault(fault: Record<string, unknown>): Promise<void> {
  const response = await fetch(`${os.control}faults`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(fault) });
  assert.ok(response.ok, await response.text());
}

async function changeOccs(id: string): Promise<unknown[]> {
  return (await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,vnfInstanceId,${id});(eq,operation,CHANGE_EXT_CONN)`)).body as unknown[];
}

/** ExtVirtualLinkData connecting VDU1_CP1 to `net`, with a fixed address or one Neutron picks on the subnet. */
function link(id: string, net: { id: string; subnetId: string }, fixed?: string) {
  return {
    id,
    resourceId: net.id,
    extCps: [
      {
        cpdId: 'VDU1_CP1',
        cpConfig: {
          VDU1_CP1_1: {
            cpProtocolData: [
              {
                layerProtocol: 'IP_OVER_ETHERNET',
                ipOverEthernet: {
                  ipAddresses: [{ type: 'IPV4', ...(fixed ? { fixedAddresses: [fixed] } : { numDynamicAddresses: 1 }), subnetId: net.subnetId }],
                },
              },
            ],
          },
        },
      },
    ],
  };
}

let publicNet: { id: string; subnetId: string };
let netA: { id: string; subnetId: string };
let netB: { id: string; subnetId: string };

before(async () => {
  vnfm = await startVnfm();
  call = client(vnfm);
  steps = lcmSteps(vnfm, call);
  os = JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8'))['local-openstack'];
  const pkg = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
  await call('PUT', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content`, {
    raw: await buildCsar('openstack-vnf-v1', { mutate: extConnPackage }),
    headers: { 'Content-Type': 'application/zip' },
  });
  const cnf = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
  await call('PUT', `/vnfpkgm/v1/vnf_packages/${cnf}/package_content`, { raw: await buildCsar('k8s-cnf-v1'), headers: { 'Content-Type': 'application/zip' } });
  await settle(vnfm);
  const { networks } = await neutron<{ networks: Array<{ id: string; name: string; subnets: string[] }> }>('GET', '/networks?name=public');
  publicNet = { id: networks[0]?.id ?? '', subnetId: networks[0]?.subnets[0] ?? '' };
  netA = await network('extconn-a', '10.20.0.0/24');
  netB = await network('extconn-b', '10.30.0.0/24');
});
after(async () => {
  await vnfm.stop();
});

describe('change external connectivity on OpenStack', () => {
  let id: string;

  it('is refused while the VNF is NOT_INSTANTIATED (409), changing nothing', async () => {
    id = ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId, vnfInstanceName: 'extconn' } })).body as { id: string }).id;
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/change_ext_conn`, { body: { extVirtualLinks: [link('ext-a', netA)] } }), 409);
    assertProblem(
      await call('POST', `/vnflcm/v1/vnf_instances/${id}/change_ext_conn`, { body: { extVirtualLinks: [link('ext-a', netA)] }, version: null }),
      409,
    );
    assert.deepEqual(await changeOccs(id), []);
    await steps.ended(
      await steps.operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, { flavourId: 'simple', extVirtualLinks: [link('ext-public', publicNet)] }),
      'COMPLETED',
    );
  });

  it('refuses unknown or internal CPs (422) and malformed requests (400), leaving the port and the records as they were', async () => {
    const before = await show(id);
    const [server] = vdu1Servers(before);
    assert.ok(server);
    const portsBefore = await externalPorts(server, internalNetworks(before));
    const bad = (cpdId: string) => ({ extVirtualLinks: [{ ...link('ext-a', netA), extCps: [{ cpdId }] }] });
    const path = `/vnflcm/v2/vnf_instances/${id}/change_ext_conn`;
    assertProblem(
      await call('POST', path, { body: bad('NO_SUCH_CP') }),
      422,
      /"NO_SUCH_CP", which is not an external CP of deployment flavour simple; its external CPs are VDU1_CP1/,
    );
    assertProblem(await call('POST', path, { body: bad('VDU1_CP2') }), 422, /"VDU1_CP2"/);
    assertProblem(await call('POST', path, { body: { extVirtualLinks: [] } }), 400, /extVirtualLinks/);
    assertProblem(await call('POST', path, { body: {} }), 400, /extVirtualLinks/);
    assertProblem(await call('POST', path, { body: { extVirtualLinks: [link('ext-a', netA)], flavourId: 'simple' } }), 400, /flavourId/);
    assertProblem(await call('POST', path, { body: { extVirtualLinks: [link('ext-a', netA), link('ext-b', netB)] } }), 400, /VDU1_CP1 is named twice/);
    assert.deepEqual(await changeOccs(id), []);
    assert.deepEqual(await show(id), before);
    assert.deepEqual(await externalPorts(server, internalNetworks(before)), portsBefore);
    assert.equal(portsBefore[0]?.network_id, publicNet.id);
  });

  it("runs the VNFD's change_external_connectivity_start hook first: when it fails, nothing changes on the VIM", async () => {
    const before = await show(id);
    const [server] = vdu1Servers(before);
    assert.ok(server);
    const portsBefore = await externalPorts(server, internalNetworks(before));
    const path = await steps.operate(`/vnflcm/v2/vnf_instances/${id}/change_ext_conn`, {
      extVirtualLinks: [link('ext-a', netA)],
      additionalParams: { sample_script_fail: 'change_external_connectivity_start', password: SECRET },
    });
    const failed = await steps.ended(path, 'FAILED_TEMP');
    assert.match((failed.error as { detail: string }).detail, /change_external_connectivity_start failed as requested/);
    assert.ok(!(await call('GET', `${path}`)).text.includes(SECRET), 'the hook had the password; the op occ does not');
    assert.equal((await call('POST', `${path}/fail`)).status, 200);
    assert.deepEqual(await externalPorts(server, internalNetworks(before)), portsBefore);
    assert.deepEqual((await show(id)).instantiatedVnfInfo, before.instantiatedVnfInfo);
  });

  it('moves the external CP to another network with a fixed IP: Neutron has the port there, the op occ and the instance report it', async () => {
    const before = await show(id);
    const [server] = vdu1Servers(before);
    assert.ok(server);
    const occ = await steps.ended(
      await steps.operate(`/vnflcm/v2/vnf_instances/${id}/change_ext_conn`, { extVirtualLinks: [link('ext-a', netA, '10.20.0.10')] }),
      'COMPLETED',
    );
    const ports = await externalPorts(server, internalNetworks(before));
    assert.equal(ports.length, 1, JSON.stringify(ports));
    assert.equal(ports[0]?.network_id, netA.id);
    assert.deepEqual(ports[0]?.fixed_ips, [{ subnet_id: netA.subnetId, ip_address: '10.20.0.10' }]);

    const after = await show(id);
    assert.deepEqual(vdu1Servers(after), [server], 'the server stays');
    const links = after.instantiatedVnfInfo.extVirtualLinkInfo;
    assert.deepEqual(
      links.map((l) => [l.id, l.resourceHandle.resourceId]),
      [['ext-a', netA.id]],
    );
    assert.deepEqual(
      links[0]?.extLinkPorts.map((p) => p.id),
      [ports[0]?.id],
    );
    const cp = after.instantiatedVnfInfo.extCpInfo.find((c) => c.cpdId === 'VDU1_CP1');
    assert.equal(cp?.extLinkPortId, ports[0]?.id);
    assert.deepEqual(cp?.cpProtocolInfo?.[0]?.ipOverEthernet?.ipAddresses?.[0]?.addresses, ['10.20.0.10']);

    const changed = occ.changedExtConnectivity as LinkInfo[];
    assert.deepEqual(
      changed.map((l) => [l.id, l.resourceHandle.resourceId, l.extLinkPorts.map((p) => p.id)]),
      [['ext-a', netA.id, [ports[0]?.id]]],
    );
    const changes = occ.resourceChanges as {
      affectedVnfcs: Array<{ id: string; changeType: string; affectedVnfcCpIds?: string[] }>;
      affectedExtLinkPorts: Array<{ id: string; changeType: string }>;
    };
    const vdu1 = after.instantiatedVnfInfo.vnfcResourceInfo.find((v) => v.vduId === 'VDU1');
    assert.deepEqual(changes.affectedVnfcs, [
      {
        id: server,
        vduId: 'VDU1',
        changeType: 'MODIFIED',
        computeResource: vdu1?.computeResource,
        affectedVnfcCpIds: vdu1?.vnfcCpInfo.filter((c) => c.cpdId === 'VDU1_CP1').map((c) => c.id),
      },
    ]);
    const oldPort = before.instantiatedVnfInfo.extCpInfo[0]?.extLinkPortId;
    assert.deepEqual(changes.affectedExtLinkPorts.map((p) => `${p.id} ${p.changeType}`).sort(), [`${oldPort} REMOVED`, `${ports[0]?.id} ADDED`].sort());
    const grant = (await call('GET', `/vnflcm/v2/vnf_lcm_op_occs/${String(occ.id)}`)).body as { grantId?: string };
    assert.equal(grant.grantId, undefined, 'granted by the VNFM itself (no NFVO configured)');
  });

  it('a change Heat fails ends FAILED_TEMP; rollback puts the port back on the network it had', async () => {
    const before = await show(id);
    const [server] = vdu1Servers(before);
    assert.ok(server);
    await injectFault({ kind: 'stack-update-fail', reason: 'injected ext conn failure', count: 1 });
    const path = await steps.operate(`/vnflcm/v2/vnf_instances/${id}/change_ext_conn`, { extVirtualLinks: [link('ext-b', netB, '10.30.0.20')] });
    const failed = await steps.ended(path, 'FAILED_TEMP');
    assert.match((failed.error as { detail: string }).detail, /injected ext conn failure/);
    // Heat moved the port before the update failed (on a resource updated after it): the rollback has something to undo.
    assert.deepEqual(
      (await externalPorts(server, internalNetworks(before))).map((port) => port.network_id),
      [netB.id],
    );
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/change_ext_conn`, { body: { extVirtualLinks: [link('ext-b', netB)] } }), 409);
    assert.equal((await call('POST', `${path}/rollback`)).status, 202);
    await steps.ended(path, 'ROLLED_BACK');
    const ports = await externalPorts(server, internalNetworks(before));
    assert.deepEqual(
      ports.map((port) => [port.network_id, port.fixed_ips.map((ip) => ip.ip_address)]),
      [[netA.id, ['10.20.0.10']]],
    );
    const after = await show(id);
    assert.deepEqual(
      after.instantiatedVnfInfo.extVirtualLinkInfo.map((l) => [l.id, l.resourceHandle.resourceId]),
      [['ext-a', netA.id]],
    );
    assert.equal(after.instantiatedVnfInfo.extCpInfo[0]?.extLinkPortId, ports[0]?.id);
  });

  it('gives the port a new fixed IP in place when only the address changes: the same port, MODIFIED', async () => {
    const before = await show(id);
    const [server] = vdu1Servers(before);
    assert.ok(server);
    const [port] = await externalPorts(server, internalNetworks(before));
    assert.ok(port);
    const occ = await steps.ended(
      await steps.operate(`/vnflcm/v2/vnf_instances/${id}/change_ext_conn`, { extVirtualLinks: [link('ext-a', netA, '10.20.0.11')] }),
      'COMPLETED',
    );
    const ports = await externalPorts(server, internalNetworks(before));
    assert.deepEqual(
      ports.map((each) => [each.id, each.network_id, each.fixed_ips.map((ip) => ip.ip_address)]),
      [[port.id, netA.id, ['10.20.0.11']]],
    );
    assert.deepEqual(
      (occ.resourceChanges as { affectedExtLinkPorts: Array<{ id: string; changeType: string }> }).affectedExtLinkPorts.map((p) => `${p.id} ${p.changeType}`),
      [`${port.id} MODIFIED`],
    );
    const cp = (await show(id)).instantiatedVnfInfo.extCpInfo[0];
    assert.deepEqual(cp?.cpProtocolInfo?.[0]?.ipOverEthernet?.ipAddresses?.[0]?.addresses, ['10.20.0.11']);
  });

  it('through /vnflcm/v1 (V2.6.1 arrays), a failed change retried completes; credentials are not kept; a later scale-out connects the new VNFC alike', async () => {
    const before = await show(id);
    const v1Link = link('ext-b', netB);
    const body = {
      extVirtualLinks: [{ ...v1Link, extCps: v1Link.extCps.map((cp) => ({ ...cp, cpConfig: Object.values(cp.cpConfig) })) }],
      vimConnectionInfo: [
        {
          id: 'extconn-vim',
          vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3',
          interfaceInfo: { endpoint: os.authUrl },
          accessInfo: { username: os.username, password: SECRET, project: os.project },
        },
      ],
    };
    await injectFault({ kind: 'stack-update-fail', reason: 'injected ext conn failure', count: 1 });
    const reply = await call('POST', `/vnflcm/v1/vnf_instances/${id}/change_ext_conn`, { body, version: null });
    assert.equal(reply.status, 202, reply.text);
    const path = new URL(reply.headers.get('location') ?? '').pathname;
    assert.match(path, /^\/vnflcm\/v1\/vnf_lcm_op_occs\//);
    const v2Path = path.replace('/v1/', '/v2/');
    await steps.ended(v2Path, 'FAILED_TEMP');
    assert.equal((await call('POST', `${v2Path}/retry`)).status, 202);
    const occ = await steps.ended(v2Path, 'COMPLETED');
    assert.deepEqual(
      (occ.changedExtConnectivity as LinkInfo[]).map((l) => [l.id, l.resourceHandle.resourceId]),
      [['ext-b', netB.id]],
    );
    const [server] = vdu1Servers(before);
    assert.ok(server);
    const ports = await externalPorts(server, internalNetworks(before));
    assert.equal(ports.length, 1);
    assert.equal(ports[0]?.network_id, netB.id);
    assert.equal(ports[0]?.fixed_ips[0]?.subnet_id, netB.subnetId);

    const v1Occ = await call('GET', path, { version: null });
    assert.equal(v1Occ.status, 200, v1Occ.text);
    const v1Params = (v1Occ.body as { operationParams: { vimConnectionInfo: unknown[]; extVirtualLinks: Array<{ extCps: Array<{ cpConfig: unknown }> }> } })
      .operationParams;
    assert.ok(Array.isArray(v1Params.vimConnectionInfo) && Array.isArray(v1Params.extVirtualLinks[0]?.extCps[0]?.cpConfig), 'v1 shows its own shapes');
    const shownV1 = await call('GET', `/vnflcm/v1/vnf_instances/${id}`, { version: null });
    for (const text of [v1Occ.text, shownV1.text, (await call('GET', v2Path)).text, (await call('GET', `/vnflcm/v2/vnf_instances/${id}`)).text]) {
      assert.ok(!text.includes(SECRET), 'the password is in no response');
    }
    const shown = (await call('GET', `/vnflcm/v2/vnf_instances/${id}`)).body as {
      vimConnectionInfo: Record<string, { vimType: string; accessInfo?: unknown }>;
    };
    assert.equal(shown.vimConnectionInfo['extconn-vim']?.vimType, 'ETSINFV.OPENSTACK_KEYSTONE.V_3');
    assert.equal(shown.vimConnectionInfo['extconn-vim']?.accessInfo, undefined);

    // The instance's instantiate request has the new external VL: a new VDU1 server gets a port on it.
    await steps.ended(await steps.operate(`/vnflcm/v2/vnf_instances/${id}/scale`, { type: 'SCALE_OUT', aspectId: 'VDU1_scale' }), 'COMPLETED');
    const scaled = await show(id);
    const servers = vdu1Servers(scaled);
    assert.equal(servers.length, 2);
    for (const each of servers) {
      const external = await externalPorts(each, internalNetworks(scaled));
      assert.deepEqual(
        external.map((port) => port.network_id),
        [netB.id],
        `server ${each} is on the new network`,
      );
    }
    assert.deepEqual(scaled.instantiatedVnfInfo.extVirtualLinkInfo[0]?.extLinkPorts.length, 2);
    await steps.terminateAndDelete(id);
  });
});

describe('change external connectivity on Kubernetes', () => {
  it("refuses a CNF's change with 422: its connectivity is its Services, not VIM networks", async () => {
    const id = ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: SAMPLE_PACKAGES['k8s-cnf-v1'].vnfdId } })).body as { id: string }).id;
    await steps.ended(
      await steps.operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, {
        flavourId: 'simple',
        additionalParams: { 'lcm-kubernetes-def-files': ['Files/kubernetes/deployment.yaml'], namespace: 'extconn' },
      }),
      'COMPLETED',
    );
    const before = await show(id);
    assertProblem(
      await call('POST', `/vnflcm/v2/vnf_instances/${id}/change_ext_conn`, {
        body: { extVirtualLinks: [{ ...link('ext-a', netA), extCps: [{ cpdId: 'VDU1_CP1' }] }] },
      }),
      422,
      /external connectivity of VNF instance .* cannot be changed: a CNF on Kubernetes is not attached to VIM networks: its external connectivity is its Services/,
    );
    assert.deepEqual(await changeOccs(id), []);
    assert.deepEqual(await show(id), before);
  });
});

// The drivers' performance reads (measure()) against the simulators the local runtime starts: the
// sample VNF instantiated through the API on each kind of VIM, the load inside its servers and pods
// set through the simulators' /_sim/ controls, and the figures measure() reports compared with what
// was set. OpenStack: vCPU and memory usage from Nova's diagnostics, each CP's traffic counters from
// its own NIC (growing with simulated time), a server that is not running and a VIM user without
// the admin role reported unavailable. Kubernetes: CPU and memory as shares of the pods' requests,
// else of one core and the node's memory, and a pod that is gone reported unavailable.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import '#lib/vim/openstack/index.ts';
import '#lib/vim/kubernetes/index.ts';
import type { InfraDriver, MeasureReport, MeasureTarget, VimConnection, VnfcMeasurement } from '#lib/vim/driver.ts';
import { measureTargetsOf } from '#lib/vim/measure.ts';
import { OpenStackSession } from '#lib/vim/openstack/keystone.ts';
import { driverFor } from '#lib/vim/registry.ts';
import { SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { lcmSteps } from '../support/lcm-http.ts';
import { client, instanceRecord, localVims, settle, startVnfm, type LocalVnfm } from '../support/runtime.ts';

let vnfm: LocalVnfm;
let call: ReturnType<typeof client>;
let openstack: { vim: VimConnection; control: string };
let cluster: { vim: VimConnection; control: string };

before(async () => {
  vnfm = await startVnfm({ env: { VNFM_SCHEDULE_SCALE: '0' } });
  call = client(vnfm);
  ({ openstack, kubernetes: cluster } = localVims(vnfm));
  await lcmSteps(vnfm, call).onboard(['openstack-vnf-v1', 'k8s-cnf-v1']);
});
after(async () => {
  await vnfm?.stop();
});

async function control(url: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  assert.ok(response.ok, text);
  return JSON.parse(text);
}

/** An instantiated instance's MeasureTarget, as the collector builds it: instantiatedVnfInfo from the API, the driver state from the store. */
async function instantiated(vnfdId: string, request: Record<string, unknown>): Promise<MeasureTarget> {
  const created = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId, vnfInstanceName: 'pm-measure' } });
  assert.equal(created.status, 201, created.text);
  const id = (created.body as { id: string }).id;
  assert.equal((await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, { body: request })).status, 202);
  await settle(vnfm);
  const shown = (await call('GET', `/vnflcm/v2/vnf_instances/${id}`)).body as { instantiationState: string; instantiatedVnfInfo: unknown };
  assert.equal(shown.instantiationState, 'INSTANTIATED');
  const record = (await instanceRecord(vnfm, id)) as { vimResources: { driverState: Record<string, unknown> } };
  return measureTargetsOf(id, record.vimResources.driverState, shown.instantiatedVnfInfo);
}

function driver(vimType: string): InfraDriver {
  const found = driverFor(vimType);
  assert.ok(found, vimType);
  return found;
}

const only = (report: MeasureReport, resourceId: string): VnfcMeasurement => {
  const found = report.results.find((result) => result.resourceId === resourceId);
  assert.ok(found, `no measurement of ${resourceId}: ${JSON.stringify(report.unavailable)}`);
  return found;
};

describe('OpenStack: Nova diagnostics', () => {
  let vim: VimConnection;
  let target: MeasureTarget;

  before(async () => {
    vim = openstack.vim;
    target = await instantiated(SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId, {
      flavourId: 'simple',
      extVirtualLinks: [
        {
          id: 'ext-public',
          resourceId: 'public',
          extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { c: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }],
        },
      ],
    });
  });

  const vdu1 = () => {
    const vnfc = target.vnfcs.find((candidate) => candidate.vduId === 'VDU1');
    assert.ok(vnfc);
    return vnfc;
  };
  const portOf = (cpdId: string): string => {
    const port = vdu1().cps.find((cp) => cp.cpdId === cpdId)?.portResourceId;
    assert.ok(port, `the instance records no port for ${cpdId}`);
    return port;
  };

  it('reports the vCPU and memory usage set inside the server, and each CP the counters of its own NIC', async () => {
    const server = vdu1().resourceId;
    const flavor = await new OpenStackSession(vim)
      .request('nova', 'compute', `/servers/${server}`, { what: 'reading the server', headers: { 'OpenStack-API-Version': 'compute 2.47' } })
      .then((response) => response.json() as Promise<{ server: { flavor: { ram: number } } }>);
    const ram = flavor.server.flavor.ram;
    const rates = { rxOctetsPerSecond: 0, txOctetsPerSecond: 0, rxPacketsPerSecond: 0, txPacketsPerSecond: 0 };
    await control(`${openstack.control}servers/${server}/load`, {
      cpuUtilisation: 42,
      memoryUsedMb: ram / 4,
      nic: [
        { port: portOf('VDU1_CP1'), ...rates, rxOctets: 5_000_000, txOctets: 6_000_000, rxPackets: 5000, txPackets: 6000 },
        { port: portOf('VDU1_CP2'), ...rates, rxOctets: 7_000_000, txOctets: 8_000_000, rxPackets: 7000, txPackets: 8000 },
      ],
    });

    const report = await driver(vim.vimType).measure(vim, [target]);
    assert.deepEqual(report.unavailable, []);
    assert.equal(report.results.length, target.vnfcs.length);
    // One diagnostics call per server and one port list for the VIM.
    assert.equal(report.apiCalls, target.vnfcs.length + 1);
    const measured = only(report, server);
    assert.equal(measured.vnfInstanceId, target.vnfInstanceId);
    assert.equal(measured.vnfcResourceInfoId, vdu1().vnfcResourceInfoId);
    assert.equal(measured.cpuUsagePercent, 42);
    assert.equal(measured.memoryUsagePercent, 25);
    assert.ok(!Number.isNaN(Date.parse(measured.at)));
    const cp = (cpdId: string) => measured.cps.find((candidate) => candidate.cpdId === cpdId);
    assert.deepEqual(
      { ...cp('VDU1_CP1') },
      {
        cpInstanceId: vdu1().cps.find((candidate) => candidate.cpdId === 'VDU1_CP1')?.cpInstanceId,
        cpdId: 'VDU1_CP1',
        external: true,
        vnfExtCpId: vdu1().cps.find((candidate) => candidate.cpdId === 'VDU1_CP1')?.vnfExtCpId,
        bytesIn: 5_000_000,
        bytesOut: 6_000_000,
        packetsIn: 5000,
        packetsOut: 6000,
      },
    );
    assert.equal(cp('VDU1_CP2')?.external, false);
    assert.deepEqual(
      [cp('VDU1_CP2')?.bytesIn, cp('VDU1_CP2')?.bytesOut, cp('VDU1_CP2')?.packetsIn, cp('VDU1_CP2')?.packetsOut],
      [7_000_000, 8_000_000, 7000, 8000],
    );
  });

  it('reads counters that grow with the traffic between two reads', async () => {
    const server = vdu1().resourceId;
    const first = only(await driver(vim.vimType).measure(vim, [target]), server);
    // 10 simulated seconds of 1,000 bytes and 10 packets a second in, 500 bytes out, on the external CP only.
    // (The simulator lets time pass before it takes new rates, so the rates go first.)
    await control(`${openstack.control}servers/${server}/load`, {
      nic: { port: portOf('VDU1_CP1'), rxOctetsPerSecond: 1000, txOctetsPerSecond: 500, rxPacketsPerSecond: 10, txPacketsPerSecond: 5 },
    });
    await control(`${openstack.control}servers/${server}/load`, { advanceSeconds: 10 });
    const second = only(await driver(vim.vimType).measure(vim, [target]), server);
    const external = (m: VnfcMeasurement) => m.cps.find((cp) => cp.cpdId === 'VDU1_CP1');
    const internal = (m: VnfcMeasurement) => m.cps.find((cp) => cp.cpdId === 'VDU1_CP2');
    assert.ok((external(second)?.bytesIn ?? 0) - (external(first)?.bytesIn ?? 0) >= 10_000, JSON.stringify([external(first), external(second)]));
    assert.ok((external(second)?.bytesOut ?? 0) - (external(first)?.bytesOut ?? 0) >= 5000);
    assert.ok((external(second)?.packetsIn ?? 0) - (external(first)?.packetsIn ?? 0) >= 100);
    // The internal CP's NIC carried nothing: its counters stand still.
    assert.deepEqual(internal(second), internal(first));
  });

  it('reports a server that is not running as unavailable, and still reads the others', async () => {
    const vdu2 = target.vnfcs.find((candidate) => candidate.vduId === 'VDU2');
    assert.ok(vdu2);
    await control(`${openstack.control}servers/${vdu2.resourceId}/status`, { status: 'SHUTOFF' });
    try {
      const report = await driver(vim.vimType).measure(vim, [target]);
      assert.deepEqual(
        report.unavailable.map((entry) => entry.vnfcResourceInfoId),
        [vdu2.vnfcResourceInfoId],
      );
      assert.equal(report.unavailable[0]?.vnfInstanceId, target.vnfInstanceId);
      assert.match(report.unavailable[0]?.reason ?? '', /not running/);
      assert.deepEqual(
        report.results.map((result) => result.resourceId),
        [vdu1().resourceId],
      );
    } finally {
      await control(`${openstack.control}servers/${vdu2.resourceId}/status`, { status: 'ACTIVE' });
    }
  });

  it('reports a server that is gone as unavailable', async () => {
    const gone: MeasureTarget = {
      ...target,
      vnfcs: [{ vnfcResourceInfoId: 'gone', vduId: 'VDU1', resourceId: '00000000-0000-4000-8000-00000000dead', cps: [] }],
    };
    const report = await driver(vim.vimType).measure(vim, [gone]);
    assert.deepEqual(report.results, []);
    assert.match(report.unavailable[0]?.reason ?? '', /no longer exists/);
    // No CP to tell apart: no port list.
    assert.equal(report.apiCalls, 1);
  });

  it('tells a VIM user without the admin role that the diagnostics policy needs it', async () => {
    // The demo user (member of the demo project) with a server of its own.
    const demo: VimConnection = { ...vim, accessInfo: { ...vim.accessInfo, username: 'demo', project: 'demo' } };
    const state = (await fetch(`${openstack.control}state`).then((response) => response.json())) as { preloaded: { images: Array<{ id: string }> } };
    const created = await new OpenStackSession(demo)
      .request('nova', 'compute', '/servers', {
        method: 'POST',
        what: 'creating a server',
        headers: { 'OpenStack-API-Version': 'compute 2.37' },
        json: { server: { name: 'demo-server', imageRef: state.preloaded.images[0]?.id, flavorRef: '1', networks: 'none' } },
      })
      .then((response) => response.json() as Promise<{ server: { id: string } }>);
    const vnfcs = ['a', 'b', 'c'].map((name) => ({ vnfcResourceInfoId: `demo-vnfc-${name}`, vduId: 'VDU1', resourceId: created.server.id, cps: [] }));
    const report = await driver(vim.vimType).measure(demo, [{ vnfInstanceId: 'demo-vnf', state: {}, vnfcs }]);
    assert.deepEqual(report.results, []);
    assert.equal(report.unavailable.length, 3);
    // The policy is the same for every server: asked once.
    assert.equal(report.apiCalls, 1);
    assert.match(report.unavailable[0]?.reason ?? '', /403/);
    assert.match(report.unavailable[0]?.reason ?? '', /os_compute_api:os-server-diagnostics/);
    assert.match(report.unavailable[0]?.reason ?? '', /admin role/);
  });
});

describe('Kubernetes: metrics.k8s.io', () => {
  const namespace = 'pm-measure';
  let vim: VimConnection;
  let target: MeasureTarget;

  before(async () => {
    vim = cluster.vim;
    // The large flavour: VDU1's pods request 500m and 256Mi; VDU2's pod requests nothing.
    target = await instantiated(SAMPLE_PACKAGES['k8s-cnf-v1'].vnfdId, {
      flavourId: 'large',
      additionalParams: {
        'lcm-kubernetes-def-files': ['Files/kubernetes/large/deployment.yaml', 'Files/kubernetes/large/cache.yaml', 'Files/kubernetes/large/service.yaml'],
        namespace,
      },
    });
  });

  async function kube(path: string): Promise<Record<string, unknown>> {
    const response = await fetch(`${String(vim.interfaceInfo.endpoint)}${path}`, {
      headers: { Authorization: `Bearer ${String(vim.accessInfo.bearer_token)}` },
    });
    assert.equal(response.status, 200, path);
    return (await response.json()) as Record<string, unknown>;
  }

  it('reports CPU and memory usage as shares of the requests, else of one core and the node’s memory', async () => {
    const web = target.vnfcs.filter((vnfc) => vnfc.vduId === 'VDU1');
    const cache = target.vnfcs.find((vnfc) => vnfc.vduId === 'VDU2');
    assert.equal(web.length, 2);
    assert.ok(cache);
    // Every pod of VDU1's workload, then one of them on its own (a pod's setting wins over its workload's).
    await control(`${cluster.control}metrics`, { namespace, workload: { kind: 'Deployment', name: 'vdu1' }, cpu: '125m', memory: '64Mi' });
    await control(`${cluster.control}metrics`, { namespace, pod: web[1]?.resourceId, cpu: '250m', memory: '128Mi' });
    await control(`${cluster.control}metrics`, { namespace, pod: cache.resourceId, cpu: '100m', memory: '1Gi' });
    const pod = await kube(`/api/v1/namespaces/${namespace}/pods/${cache.resourceId}`);
    const node = await kube(`/api/v1/nodes/${(pod.spec as { nodeName: string }).nodeName}`);
    const nodeMemory = String((node.status as { allocatable: { memory: string } }).allocatable.memory);
    assert.match(nodeMemory, /^\d+Gi$/, 'the test reads the node memory in Gi');
    const nodeBytes = Number.parseInt(nodeMemory, 10) * 2 ** 30;

    const report = await driver(vim.vimType).measure(vim, [target]);
    assert.deepEqual(report.unavailable, []);
    // A pod list and a metrics list for the namespace, and the nodes once (VDU2's memory is bounded by nothing).
    assert.equal(report.apiCalls, 3);
    assert.deepEqual(
      { cpu: only(report, web[0]?.resourceId ?? '').cpuUsagePercent, memory: only(report, web[0]?.resourceId ?? '').memoryUsagePercent },
      { cpu: 25, memory: 25 },
    );
    assert.deepEqual(
      { cpu: only(report, web[1]?.resourceId ?? '').cpuUsagePercent, memory: only(report, web[1]?.resourceId ?? '').memoryUsagePercent },
      { cpu: 50, memory: 50 },
    );
    const cached = only(report, cache.resourceId);
    assert.equal(cached.cpuUsagePercent, 10);
    assert.equal(cached.memoryUsagePercent, (2 ** 30 / nodeBytes) * 100);
    assert.equal(cached.vnfcResourceInfoId, cache.vnfcResourceInfoId);
    // metrics.k8s.io has no traffic counters: the CPs are there without them.
    assert.deepEqual(
      cached.cps.map((cp) => Object.keys(cp).filter((key) => /bytes|packets/.test(key))),
      cache.cps.map(() => []),
    );
  });

  it('reports the VNFCs of a namespace the API server fails to list as unavailable, without failing the read', async () => {
    // The next request the cluster gets answers 500 (the read's first: one of its two lists, or the discovery before them).
    await control(`${cluster.control}faults`, { kind: 'http-5xx', count: 1 });
    const report = await driver(vim.vimType).measure(vim, [target]);
    assert.deepEqual(report.results, []);
    assert.deepEqual(report.unavailable.map((entry) => entry.vnfcResourceInfoId).sort(), target.vnfcs.map((vnfc) => vnfc.vnfcResourceInfoId).sort());
    for (const entry of report.unavailable) assert.match(entry.reason, /^cannot read namespace pm-measure: .*500/);
  });

  it('reports a pod that is gone as unavailable', async () => {
    const gone: MeasureTarget = { ...target, vnfcs: [{ vnfcResourceInfoId: 'gone', vduId: 'VDU1', resourceId: 'vdu1-gone', cps: [] }] };
    const report = await driver(vim.vimType).measure(vim, [gone]);
    assert.deepEqual(report.results, []);
    assert.deepEqual(report.unavailable, [
      { vnfInstanceId: target.vnfInstanceId, vnfcResourceInfoId: 'gone', reason: `pod vdu1-gone no longer exists in namespace ${namespace}` },
    ]);
  });
});

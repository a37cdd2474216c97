// The pure parts of the drivers' performance reads: Kubernetes quantities, a pod's usage as a share
// of its limits or requests, a Nova diagnostics answer mapped to a VNFC's figures and its CPs'
// counters, and the MeasureTarget of an instance taken from its instantiatedVnfInfo.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseQuantity, podUsage } from '#lib/vim/kubernetes/measure.ts';
import { measureTargetsOf } from '#lib/vim/measure.ts';
import { measurementOf } from '#lib/vim/openstack/measure.ts';

describe('Kubernetes quantities', () => {
  it('reads the canonical forms metrics-server writes, in cores and bytes', () => {
    assert.equal(parseQuantity('250m'), 0.25);
    assert.ok(Math.abs((parseQuantity('2127180n') ?? 0) - 0.00212718) < 1e-12);
    assert.equal(parseQuantity('64Mi'), 64 * 2 ** 20);
    assert.equal(parseQuantity('13540Ki'), 13540 * 1024);
    assert.equal(parseQuantity('2'), 2);
    assert.equal(parseQuantity('1.5G'), 1.5e9);
    assert.equal(parseQuantity('1e3'), 1000);
    assert.equal(parseQuantity('500u'), 0.0005);
    assert.equal(parseQuantity(4), 4);
  });

  it('takes nothing that is not a quantity', () => {
    for (const text of ['', 'abc', '5Xi', 'Mi', '1.2.3', '--1']) assert.equal(parseQuantity(text), undefined, text);
    assert.equal(parseQuantity(undefined), undefined);
    assert.equal(parseQuantity(Number.NaN), undefined);
  });
});

const pod = (...containers: Array<Record<string, unknown>>) => ({ spec: { nodeName: 'node-1', containers } });
const sample = (...containers: Array<[string, string, string]>) => ({
  containers: containers.map(([name, cpu, memory]) => ({ name, usage: { cpu, memory } })),
});

describe('a pod’s usage', () => {
  it('is a share of the limits, before the requests', () => {
    const usage = podUsage(
      pod({ name: 'web', resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '64Mi' } } }),
      sample(['web', '125m', '64Mi']),
      undefined,
    );
    assert.deepEqual(usage, { cpuUsagePercent: 25, memoryUsagePercent: 25 });
  });

  it('is a share of the requests when there are no limits, summed over the containers', () => {
    const usage = podUsage(
      pod(
        { name: 'web', resources: { requests: { cpu: '500m', memory: '256Mi' } } },
        { name: 'side', resources: { requests: { cpu: '500m', memory: '768Mi' } } },
      ),
      sample(['web', '250m', '128Mi'], ['side', '250m', '128Mi']),
      undefined,
    );
    assert.deepEqual(usage, { cpuUsagePercent: 50, memoryUsagePercent: 25 });
  });

  it('counts one core and the node’s memory for a container bound by nothing, and leaves memory out when the node’s is unknown', () => {
    assert.deepEqual(podUsage(pod({ name: 'cache' }), sample(['cache', '100m', '2Gi']), 8 * 2 ** 30), { cpuUsagePercent: 10, memoryUsagePercent: 25 });
    assert.deepEqual(podUsage(pod({ name: 'cache' }), sample(['cache', '100m', '2Gi']), undefined), { cpuUsagePercent: 10 });
  });

  it('never goes above 100 (a container past its request) and is empty without a sample', () => {
    assert.deepEqual(podUsage(pod({ name: 'web', resources: { requests: { cpu: '100m', memory: '1Mi' } } }), sample(['web', '300m', '2Mi']), undefined), {
      cpuUsagePercent: 100,
      memoryUsagePercent: 100,
    });
    assert.deepEqual(podUsage(pod({ name: 'web' }), { containers: [] }, 2 ** 30), {});
  });
});

describe('Nova diagnostics as a VNFC’s figures', () => {
  const vnfc = {
    vnfcResourceInfoId: 'server-1',
    vduId: 'VDU1',
    resourceId: 'server-1',
    cps: [
      { cpInstanceId: 'VDU1_CP1-server-1', cpdId: 'VDU1_CP1', external: true, vnfExtCpId: 'cp-port-ext' },
      { cpInstanceId: 'VDU1_CP2-server-1', cpdId: 'VDU1_CP2', external: false, vnfLinkPortId: 'port-int' },
      { cpInstanceId: 'VDU1_CP3-server-1', cpdId: 'VDU1_CP3', external: false, portResourceId: 'port-recorded', vnfLinkPortId: 'link-port-3' },
      { cpInstanceId: 'VDU1_CP4-server-1', cpdId: 'VDU1_CP4', external: false },
    ],
  };
  const diagnostics = {
    cpu_details: [
      { id: 0, utilisation: 30 },
      { id: 1, utilisation: 50 },
      { id: 2, utilisation: null },
    ],
    memory_details: { maximum: 2048, used: 512 },
    disk_details: [{ read_bytes: 1, write_bytes: 2 }],
    nic_details: [
      { mac_address: 'FA:16:3E:00:00:01', rx_octets: 1000, tx_octets: 2000, rx_packets: 10, tx_packets: 20 },
      { mac_address: 'fa:16:3e:00:00:02', rx_octets: 3000, tx_octets: 4000, rx_packets: 30, tx_packets: 40 },
      { mac_address: 'fa:16:3e:00:00:03', rx_octets: 5, tx_octets: 6, rx_packets: null, tx_packets: 1 },
    ],
  };
  const macs = new Map([
    ['port-ext', 'fa:16:3e:00:00:01'],
    ['port-int', 'fa:16:3e:00:00:02'],
    ['port-recorded', 'fa:16:3e:00:00:03'],
  ]);

  it('averages the vCPUs, divides memory used by the flavor’s, and leaves disk usage out (no capacity in the standard shape)', () => {
    const measured = measurementOf('vnf-1', vnfc, diagnostics, macs, '2026-01-01T00:00:00.000Z');
    assert.equal(measured.cpuUsagePercent, 40);
    assert.equal(measured.memoryUsagePercent, 25);
    assert.equal(measured.diskUsagePercent, undefined);
    assert.deepEqual(
      { vnfInstanceId: measured.vnfInstanceId, vnfcResourceInfoId: measured.vnfcResourceInfoId, vduId: measured.vduId, at: measured.at },
      { vnfInstanceId: 'vnf-1', vnfcResourceInfoId: 'server-1', vduId: 'VDU1', at: '2026-01-01T00:00:00.000Z' },
    );
  });

  it('gives each CP the counters of the NIC whose MAC is its port’s, received as in and sent as out', () => {
    const measured = measurementOf('vnf-1', vnfc, diagnostics, macs, '2026-01-01T00:00:00.000Z');
    assert.deepEqual(measured.cps, [
      {
        cpInstanceId: 'VDU1_CP1-server-1',
        cpdId: 'VDU1_CP1',
        external: true,
        vnfExtCpId: 'cp-port-ext',
        bytesIn: 1000,
        bytesOut: 2000,
        packetsIn: 10,
        packetsOut: 20,
      },
      { cpInstanceId: 'VDU1_CP2-server-1', cpdId: 'VDU1_CP2', external: false, bytesIn: 3000, bytesOut: 4000, packetsIn: 30, packetsOut: 40 },
      // The recorded port wins over the link port id; a counter Nova left null stays absent.
      { cpInstanceId: 'VDU1_CP3-server-1', cpdId: 'VDU1_CP3', external: false, bytesIn: 5, bytesOut: 6, packetsOut: 1 },
      // No port known: the CP is there, without counters.
      { cpInstanceId: 'VDU1_CP4-server-1', cpdId: 'VDU1_CP4', external: false },
    ]);
  });

  it('leaves a gauge out when Nova does not give it', () => {
    const measured = measurementOf(
      'vnf-1',
      { ...vnfc, cps: [] },
      { cpu_details: [{ utilisation: null }], memory_details: { maximum: 0, used: 0 } },
      macs,
      'now',
    );
    assert.equal(measured.cpuUsagePercent, undefined);
    assert.equal(measured.memoryUsagePercent, undefined);
    assert.deepEqual(measured.cps, []);
  });
});

describe('measureTargetsOf', () => {
  it('takes the VNFCs of instantiatedVnfInfo with their resources, CPs and the VIM ports behind them', () => {
    const info = {
      vnfcResourceInfo: [
        {
          id: 'server-1',
          vduId: 'VDU1',
          computeResource: { vimConnectionId: 'vim-1', resourceId: 'server-1' },
          vnfcCpInfo: [
            { id: 'VDU1_CP1-server-1', cpdId: 'VDU1_CP1', vnfExtCpId: 'cp-port-ext' },
            { id: 'VDU1_CP2-server-1', cpdId: 'VDU1_CP2', vnfLinkPortId: 'link-2' },
          ],
        },
        { id: 'pod-a', vduId: 'VDU2', vnfcCpInfo: [{ id: 'VDU2_CP1-pod-a', cpdId: 'VDU2_CP1' }] },
      ],
      vnfVirtualLinkResourceInfo: [{ id: 'vl-1', vnfLinkPorts: [{ id: 'link-2', resourceHandle: { resourceId: 'port-int' } }] }],
      extCpInfo: [{ id: 'cp-port-ext', cpdId: 'VDU1_CP1', extLinkPortId: 'ext-link-1' }],
      extVirtualLinkInfo: [{ id: 'ext-1', extLinkPorts: [{ id: 'ext-link-1', resourceHandle: { resourceId: 'port-ext' } }] }],
    };
    const state = { stack: 'stack-1' };
    assert.deepEqual(measureTargetsOf('vnf-1', state, info), {
      vnfInstanceId: 'vnf-1',
      state,
      vnfcs: [
        {
          vnfcResourceInfoId: 'server-1',
          vduId: 'VDU1',
          resourceId: 'server-1',
          cps: [
            { cpInstanceId: 'VDU1_CP1-server-1', cpdId: 'VDU1_CP1', external: true, vnfExtCpId: 'cp-port-ext', portResourceId: 'port-ext' },
            { cpInstanceId: 'VDU1_CP2-server-1', cpdId: 'VDU1_CP2', external: false, vnfLinkPortId: 'link-2', portResourceId: 'port-int' },
          ],
        },
        // No computeResource: its own id names the resource, as in the health sweep.
        { vnfcResourceInfoId: 'pod-a', vduId: 'VDU2', resourceId: 'pod-a', cps: [{ cpInstanceId: 'VDU2_CP1-pod-a', cpdId: 'VDU2_CP1', external: false }] },
      ],
    });
  });

  it('is empty for an instance without instantiatedVnfInfo', () => {
    assert.deepEqual(measureTargetsOf('vnf-2', {}, undefined), { vnfInstanceId: 'vnf-2', state: {}, vnfcs: [] });
  });
});

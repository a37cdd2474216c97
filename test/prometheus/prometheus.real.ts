// Opt-in (`npm run test:prometheus`): a real Prometheus and Alertmanager on loopback, as an operator
// runs them. Prometheus scrapes a small exporter in this test that serves the series the default
// queries read (cAdvisor and kube-state-metrics for two pods, Ceilometer's exporter for two
// servers) at set values, and measureViaPrometheus must give those values back. An alert rule
// labelled as Tacker's prometheus plugin writes them fires on one pod's memory; Alertmanager posts
// it to this test's /pm_event (and a threshold's to /pm_threshold), and parsePmWebhook must read
// the event from the body as sent. The binaries come from PROMETHEUS_BIN and ALERTMANAGER_BIN
// (scripts/test-prometheus.sh finds them); without them the suite is skipped.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parsePmWebhook, type PmWebhookEvent, type PmWebhookKind } from '#lib/pm/alertmanager.ts';
import { measureViaPrometheus, type PrometheusServer } from '#lib/pm/prometheus.ts';
import type { MeasureTarget } from '#lib/vim/driver.ts';
import { waitFor } from '../support/wait.ts';

const PROMETHEUS_BIN = process.env.PROMETHEUS_BIN;
const ALERTMANAGER_BIN = process.env.ALERTMANAGER_BIN;
const skip = !PROMETHEUS_BIN || !ALERTMANAGER_BIN ? 'PROMETHEUS_BIN and ALERTMANAGER_BIN name no binaries (run npm run test:prometheus)' : false;
const LOCAL = { allowPrivateNetworks: true };

// What the exporter reports. CPU: cores used of the limit; memory and disk: bytes used of the limit.
const PODS = [
  {
    name: 'vdu1-7f9c6d8b5-abcde',
    cores: 0.25,
    cpuLimit: 1,
    memory: 64 * 2 ** 20,
    memoryLimit: 256 * 2 ** 20,
    fs: 1e9,
    fsLimit: 4e9,
    rx: 1234567,
    tx: 7654321,
    rxp: 1000,
    txp: 2000,
  },
  {
    name: 'vdu2-5b7d9c6f4-fghij',
    cores: 1.5,
    cpuLimit: 2,
    memory: 450 * 2 ** 20,
    memoryLimit: 500 * 2 ** 20,
    fs: 3e9,
    fsLimit: 4e9,
    rx: 42,
    tx: 84,
    rxp: 3,
    txp: 6,
  },
];
const SERVERS = [
  {
    id: '6f1c8d2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f',
    vcpus: 2,
    cpuSeconds: 0.5,
    memoryMb: 1024,
    usageMb: 256,
    diskUsage: 2e9,
    diskCapacity: 10e9,
    portId: '2cfa4a63-1b7e-4f6a-9c3d-112233445566',
    rx: 111,
    tx: 222,
    rxp: 11,
    txp: 22,
  },
  {
    id: '0b9e7d6c-5a4f-4e3d-9c2b-1a0f9e8d7c6b',
    vcpus: 4,
    cpuSeconds: 3,
    memoryMb: 2048,
    usageMb: 1536,
    diskUsage: 9e9,
    diskCapacity: 10e9,
    portId: '99aa88bb-77cc-4d66-8e55-ff4433221100',
    rx: 333,
    tx: 444,
    rxp: 33,
    txp: 44,
  },
];
/** The exporter's CPU counters tell a made-up history: one sample a minute over the last five (see cpuSample). */
const STEP_SECONDS = 60;
const STEPS = 5;

/**
 * The counters grow linearly (cores a second), so rate() over 5m is exactly the cores used. Each
 * scrape tells the next minute of a history that starts five minutes before the exporter did and
 * stops, at the last step, at the time the exporter started: a real five minutes of samples in a
 * few scrapes, with explicit timestamps Prometheus takes as given.
 */
let scrapes = 0;
let started = 0;
function cpuSample(perSecond: number): string {
  const step = Math.min(scrapes, STEPS);
  const at = started - (STEPS - step) * STEP_SECONDS * 1000;
  return `${1e6 + perSecond * step * STEP_SECONDS} ${at}`;
}

function exposition(): string {
  const lines: string[] = [];
  const metric = (name: string, labels: Record<string, string>, value: string | number) =>
    lines.push(
      `${name}{${Object.entries(labels)
        .map(([key, text]) => `${key}="${text}"`)
        .join(',')}} ${value}`,
    );
  for (const pod of PODS) {
    const container = { namespace: 'default', pod: pod.name, container: 'app' };
    metric('container_cpu_usage_seconds_total', container, cpuSample(pod.cores));
    // The pod's own cgroup, which the default queries must not count again.
    metric('container_cpu_usage_seconds_total', { ...container, container: '' }, cpuSample(pod.cores));
    metric('kube_pod_container_resource_limits', { namespace: 'default', pod: pod.name, container: 'app', resource: 'cpu', unit: 'core' }, pod.cpuLimit);
    metric('kube_pod_container_resource_limits', { namespace: 'default', pod: pod.name, container: 'app', resource: 'memory', unit: 'byte' }, pod.memoryLimit);
    metric('container_memory_working_set_bytes', container, pod.memory);
    metric('container_memory_working_set_bytes', { ...container, container: '' }, pod.memory);
    metric('container_fs_usage_bytes', { ...container, device: '/dev/vda1' }, pod.fs);
    metric('container_fs_limit_bytes', { ...container, device: '/dev/vda1' }, pod.fsLimit);
    const network = (name: string, value: number) => {
      metric(name, { namespace: 'default', pod: pod.name, interface: 'eth0' }, value);
      metric(name, { namespace: 'default', pod: pod.name, interface: 'lo' }, 999999999);
    };
    network('container_network_receive_bytes_total', pod.rx);
    network('container_network_transmit_bytes_total', pod.tx);
    network('container_network_receive_packets_total', pod.rxp);
    network('container_network_transmit_packets_total', pod.txp);
  }
  for (const [index, server] of SERVERS.entries()) {
    const labels = (counter: string, resource: string) => ({
      counter,
      publisher: 'ceilometer',
      project: 'p1',
      resource,
      resource_name: `vm${index}:instance-0000000${index}`,
    });
    metric('ceilometer_cpu', labels('cpu', server.id), cpuSample(server.cpuSeconds * 1e9));
    metric('ceilometer_vcpus', labels('vcpus', server.id), server.vcpus);
    metric('ceilometer_memory', labels('memory', server.id), server.memoryMb);
    metric('ceilometer_memory_usage', labels('memory.usage', server.id), server.usageMb);
    metric('ceilometer_disk_device_usage', labels('disk.device.usage', `${server.id}-vda`), server.diskUsage);
    metric('ceilometer_disk_device_capacity', labels('disk.device.capacity', `${server.id}-vda`), server.diskCapacity);
    const vnic = `instance-0000000${index}-${server.id}-tap${server.portId.slice(0, 11)}`;
    metric('ceilometer_network_incoming_bytes', labels('network.incoming.bytes', vnic), server.rx);
    metric('ceilometer_network_outgoing_bytes', labels('network.outgoing.bytes', vnic), server.tx);
    metric('ceilometer_network_incoming_packets', labels('network.incoming.packets', vnic), server.rxp);
    metric('ceilometer_network_outgoing_packets', labels('network.outgoing.packets', vnic), server.txp);
  }
  return `${lines.join('\n')}\n`;
}

/** An HTTP server on a free loopback port. */
async function listen(handler: http.RequestListener): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** A port free now, for a program that wants it on its command line. */
async function freePort(): Promise<number> {
  const { server, port } = await listen(() => undefined);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function start(binary: string, args: string[], name: string): { child: ChildProcess; output: () => string } {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.on('exit', (code, signal) => {
    if (code !== null && code !== 0) console.error(`${name} exited with ${code}:\n${output}`);
    else if (signal && signal !== 'SIGTERM') console.error(`${name} ended by ${signal}`);
  });
  return { child, output: () => output };
}

async function ready(url: string): Promise<boolean> {
  try {
    return (await fetch(url)).ok;
  } catch {
    return false;
  }
}

const INSTANCE = 'c8a1e0b2-4d3f-4a5b-9c6d-7e8f9a0b1c2d';
const MEMORY_RULE = `sum by (pod) (container_memory_working_set_bytes{container!="",pod="${PODS[0]?.name}"}) / sum by (pod) (kube_pod_container_resource_limits{resource="memory",pod="${PODS[0]?.name}"}) * 100`;

describe('Prometheus and Alertmanager, as operators run them', { skip }, () => {
  let dir = '';
  const webhooks: Array<{ path: string; body: unknown }> = [];
  const servers: http.Server[] = [];
  const children: ChildProcess[] = [];
  let prometheus: PrometheusServer;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'vnfm-prometheus-'));
    started = Date.now();
    const exporter = await listen((req, res) => {
      if (req.url !== '/metrics') return void res.writeHead(404).end();
      const body = exposition();
      scrapes++;
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' }).end(body);
    });
    const receiver = await listen((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        webhooks.push({ path: req.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        res.writeHead(204).end();
      });
    });
    servers.push(exporter.server, receiver.server);
    const [prometheusPort, alertmanagerPort] = [await freePort(), await freePort()];

    const tacker = { receiver_type: 'tacker', object_instance_id: INSTANCE, sub_object_instance_id: 'vnfc-1', metric: `VMemoryUsageMeanVnf.${INSTANCE}` };
    writeFileSync(
      path.join(dir, 'rules.json'),
      JSON.stringify({
        groups: [
          {
            name: 'tacker_job-1',
            rules: [
              {
                alert: 'a6f0e4b2-pm-job',
                expr: MEMORY_RULE,
                for: '0s',
                labels: { ...tacker, function_type: 'vnfpm', job_id: 'job-1' },
                annotations: { value: '{{$value}}' },
              },
              {
                alert: 'b7e1f5c3-threshold',
                expr: `${MEMORY_RULE} > 20`,
                for: '0s',
                labels: { ...tacker, function_type: 'vnfpm_threshold', threshold_id: 'threshold-1' },
                annotations: { value: '{{$value}}' },
              },
            ],
          },
        ],
      }),
    );
    writeFileSync(
      path.join(dir, 'prometheus.yml'),
      JSON.stringify({
        global: { scrape_interval: '1s', evaluation_interval: '1s' },
        rule_files: [path.join(dir, 'rules.json')],
        alerting: { alertmanagers: [{ static_configs: [{ targets: [`127.0.0.1:${alertmanagerPort}`] }] }] },
        scrape_configs: [{ job_name: 'exporter', static_configs: [{ targets: [`127.0.0.1:${exporter.port}`] }] }],
      }),
    );
    // Tacker's documented Alertmanager routes: function_type picks /pm_event or /pm_threshold.
    writeFileSync(
      path.join(dir, 'alertmanager.yml'),
      JSON.stringify({
        route: {
          receiver: 'default-receiver',
          group_by: ['function_type'],
          group_wait: '1s',
          group_interval: '1s',
          repeat_interval: '1h',
          routes: [
            { matchers: ['function_type = vnfpm'], receiver: 'vnfpm' },
            { matchers: ['function_type = vnfpm_threshold'], receiver: 'vnfpm-threshold' },
          ],
        },
        receivers: [
          { name: 'default-receiver' },
          { name: 'vnfpm', webhook_configs: [{ url: `http://127.0.0.1:${receiver.port}/pm_event` }] },
          { name: 'vnfpm-threshold', webhook_configs: [{ url: `http://127.0.0.1:${receiver.port}/pm_threshold` }] },
        ],
      }),
    );
    const alertmanager = start(
      ALERTMANAGER_BIN as string,
      [
        `--config.file=${path.join(dir, 'alertmanager.yml')}`,
        `--storage.path=${path.join(dir, 'alertmanager')}`,
        `--web.listen-address=127.0.0.1:${alertmanagerPort}`,
        '--cluster.listen-address=',
      ],
      'alertmanager',
    );
    const server = start(
      PROMETHEUS_BIN as string,
      [
        `--config.file=${path.join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${path.join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${prometheusPort}`,
      ],
      'prometheus',
    );
    children.push(alertmanager.child, server.child);
    prometheus = { url: `http://127.0.0.1:${prometheusPort}` };
    await waitFor('Prometheus to be ready', () => ready(`${prometheus.url}/-/ready`), 60_000);
    await waitFor('Alertmanager to be ready', () => ready(`http://127.0.0.1:${alertmanagerPort}/-/ready`), 60_000);
    // Every step of the CPU history is in: Prometheus has its five minutes of samples.
    await waitFor(
      'Prometheus to scrape the whole CPU history',
      async () => {
        const answer = await fetch(`${prometheus.url}/api/v1/query?${new URLSearchParams({ query: 'min(count_over_time(ceilometer_cpu[10m]))' })}`);
        const result = ((await answer.json()) as { data?: { result?: Array<{ value: [number, string] }> } }).data?.result ?? [];
        return Number(result[0]?.value[1] ?? 0) >= STEPS + 1 && Number(scrapes) > STEPS + 1;
      },
      60_000,
    );
  });

  after(async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
    for (const server of servers) server.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('gives the figures the exporter set for two pods, through the default Kubernetes queries', async () => {
    const target: MeasureTarget = {
      vnfInstanceId: INSTANCE,
      state: {},
      vnfcs: PODS.map((pod, index) => ({
        vduId: `VDU${index + 1}`,
        resourceId: pod.name,
        vnfcResourceInfoId: `vnfc-${index + 1}`,
        cps: [{ cpInstanceId: `cp-${index + 1}`, cpdId: `VDU${index + 1}_CP1`, external: false }],
      })),
    };
    const gone = { vduId: 'VDU2', resourceId: 'vdu2-5b7d9c6f4-zzzzz', vnfcResourceInfoId: 'vnfc-gone', cps: [] };
    const report = await measureViaPrometheus(prometheus, [{ ...target, vnfcs: [...target.vnfcs, gone] }], { policy: LOCAL, vimType: 'kubernetes' });
    assert.equal(report.apiCalls, 7);
    assert.deepEqual(
      report.unavailable.map((vnfc) => vnfc.vnfcResourceInfoId),
      ['vnfc-gone'],
    );
    assert.equal(report.results.length, 2);
    for (const [index, pod] of PODS.entries()) {
      const result = report.results.find((item) => item.resourceId === pod.name);
      assert.ok(result, pod.name);
      assert.ok(Math.abs((result.cpuUsagePercent ?? -1) - (pod.cores / pod.cpuLimit) * 100) < 1e-6, `cpu of ${pod.name}: ${result.cpuUsagePercent}`);
      assert.ok(Math.abs((result.memoryUsagePercent ?? -1) - (pod.memory / pod.memoryLimit) * 100) < 1e-9);
      assert.ok(Math.abs((result.diskUsagePercent ?? -1) - (pod.fs / pod.fsLimit) * 100) < 1e-9);
      assert.deepEqual(result.cps, [
        {
          cpInstanceId: `cp-${index + 1}`,
          cpdId: `VDU${index + 1}_CP1`,
          external: false,
          bytesIn: pod.rx,
          bytesOut: pod.tx,
          packetsIn: pod.rxp,
          packetsOut: pod.txp,
        },
      ]);
    }
  });

  it('gives the figures the exporter set for two servers, through the default OpenStack (Ceilometer) queries', async () => {
    const target: MeasureTarget = {
      vnfInstanceId: 'd1e2f3a4-b5c6-4d7e-8f90-a1b2c3d4e5f6',
      state: {},
      vnfcs: SERVERS.map((server, index) => ({
        vduId: 'VDU1',
        resourceId: server.id,
        vnfcResourceInfoId: `vnfc-${index + 1}`,
        cps: [
          { cpInstanceId: `cp-${index + 1}`, cpdId: 'VDU1_CP1', external: false, portResourceId: server.portId },
          { cpInstanceId: `cp-${index + 1}-b`, cpdId: 'VDU1_CP2', external: false, portResourceId: 'ffffffff-0000-4000-8000-000000000000' },
        ],
      })),
    };
    const report = await measureViaPrometheus(prometheus, [target], { policy: LOCAL, vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3' });
    assert.deepEqual(report.unavailable, []);
    for (const [index, server] of SERVERS.entries()) {
      const result = report.results.find((item) => item.resourceId === server.id);
      assert.ok(result, server.id);
      assert.ok(Math.abs((result.cpuUsagePercent ?? -1) - (server.cpuSeconds / server.vcpus) * 100) < 1e-6, `cpu of ${server.id}: ${result.cpuUsagePercent}`);
      assert.ok(Math.abs((result.memoryUsagePercent ?? -1) - (server.usageMb / server.memoryMb) * 100) < 1e-9);
      assert.ok(Math.abs((result.diskUsagePercent ?? -1) - (server.diskUsage / server.diskCapacity) * 100) < 1e-9);
      // The NIC is told by its tap device; the second CP has none in the series.
      assert.deepEqual(result.cps, [
        {
          cpInstanceId: `cp-${index + 1}`,
          cpdId: 'VDU1_CP1',
          external: false,
          bytesIn: server.rx,
          bytesOut: server.tx,
          packetsIn: server.rxp,
          packetsOut: server.txp,
        },
        { cpInstanceId: `cp-${index + 1}-b`, cpdId: 'VDU1_CP2', external: false },
      ]);
    }
  });

  it("delivers Tacker's PM job and threshold alerts to /pm_event and /pm_threshold, read into events", async () => {
    const received = (kind: PmWebhookKind): PmWebhookEvent[] =>
      webhooks.filter((hook) => hook.path === `/${kind}`).flatMap((hook) => parsePmWebhook(hook.body, kind).events);
    await waitFor('both webhooks', () => received('pm_event').length > 0 && received('pm_threshold').length > 0, 60_000);
    const percent = ((PODS[0]?.memory ?? 0) / (PODS[0]?.memoryLimit ?? 1)) * 100;
    const [event] = received('pm_event');
    assert.deepEqual(
      { ...event, at: undefined, fingerprint: undefined },
      {
        kind: 'pm_event',
        jobId: 'job-1',
        objectInstanceId: INSTANCE,
        subObjectInstanceId: 'vnfc-1',
        metric: `VMemoryUsageMeanVnf.${INSTANCE}`,
        value: percent,
        status: 'firing',
        at: undefined,
        fingerprint: undefined,
      },
    );
    assert.match(event?.fingerprint ?? '', /^[0-9a-f]{16}$/);
    const [threshold] = received('pm_threshold');
    assert.equal(threshold?.thresholdId, 'threshold-1');
    assert.equal(threshold?.value, percent);
    // The same bodies sent to the other route are set aside, not refused.
    const crossed = webhooks.find((hook) => hook.path === '/pm_threshold');
    const { events, ignored } = parsePmWebhook(crossed?.body, 'pm_event');
    assert.equal(events.length, 0);
    assert.match(ignored[0]?.reason ?? '', /function_type is "vnfpm_threshold", not "vnfpm"/);
  });
});

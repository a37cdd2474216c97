// The Prometheus measure source against a small HTTP server playing the query API: the PromQL it
// sends (one query per metric for every VNFC, the ids escaped, chunked when many), how series map
// to VNFCs and CPs, the unavailable VNFCs, the failures, and where the server is named (Tacker's
// monitoring metadata).
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  defaultPrometheusQueries,
  idChunks,
  measureViaPrometheus,
  measureVim,
  prometheusGroups,
  PrometheusError,
  type PrometheusSeries,
  prometheusFrom,
  regexLiteral,
} from '#lib/pm/prometheus.ts';
import type { MeasureTarget } from '#lib/vim/driver.ts';

const LOCAL = { allowPrivateNetworks: true };
const AT = new Date('2026-03-01T10:00:00.000Z');

interface Seen {
  query: string;
  time: string | null;
  authorization: string | undefined;
}
let seen: Seen[] = [];
/** What the server answers a query with: series, or a raw status and body. */
let answer: (query: string) => PrometheusSeries[] | { status: number; body: string } = () => [];
let server: http.Server;
let url: string;

before(async () => {
  server = http.createServer((req, res) => {
    const parsed = new URL(req.url ?? '/', 'http://localhost');
    if (parsed.pathname !== '/prom/api/v1/query') {
      res.writeHead(404).end('not found');
      return;
    }
    const query = parsed.searchParams.get('query') ?? '';
    seen.push({ query, time: parsed.searchParams.get('time'), authorization: req.headers.authorization });
    const given = answer(query);
    if (!Array.isArray(given)) {
      res.writeHead(given.status, { 'Content-Type': 'application/json' }).end(given.body);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result: given } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/prom/`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen = [];
  answer = () => [];
});

const series = (metric: Record<string, string>, value: number | string): PrometheusSeries => ({ metric, value: [AT.getTime() / 1000, String(value)] });

const cp = (cpInstanceId: string, extra: Partial<MeasureTarget['vnfcs'][number]['cps'][number]> = {}) => ({
  cpInstanceId,
  cpdId: `${cpInstanceId}-cpd`,
  external: false,
  ...extra,
});

const PODS: MeasureTarget = {
  vnfInstanceId: 'inst-1',
  state: {},
  vnfcs: [
    { vduId: 'VDU1', resourceId: 'vdu1-7f9c6d-abcde', vnfcResourceInfoId: 'vnfc-1', cps: [cp('cp-a')] },
    { vduId: 'VDU2', resourceId: 'vdu2-5b7d9c-fghij', vnfcResourceInfoId: 'vnfc-2', cps: [cp('cp-b'), cp('cp-c')] },
    { vduId: 'VDU2', resourceId: 'vdu2-5b7d9c-gone0', vnfcResourceInfoId: 'vnfc-3', cps: [] },
  ],
};

/** Which default query a PromQL text is, from the series it reads. */
function kubernetesMetric(query: string): string {
  if (query.includes('container_cpu_usage_seconds_total')) return 'cpu';
  if (query.includes('container_memory_working_set_bytes')) return 'memory';
  if (query.includes('container_fs_usage_bytes')) return 'disk';
  if (query.includes('network_receive_bytes')) return 'bytesIn';
  if (query.includes('network_transmit_bytes')) return 'bytesOut';
  if (query.includes('network_receive_packets')) return 'packetsIn';
  if (query.includes('network_transmit_packets')) return 'packetsOut';
  return 'unknown';
}

describe('measureViaPrometheus', () => {
  it('sends one query per metric for every VNFC, the pod names escaped in one alternation, at the instant asked', async () => {
    const report = await measureViaPrometheus({ url }, [PODS], { policy: LOCAL, at: AT, vimType: 'kubernetes' });
    assert.equal(seen.length, 7);
    assert.equal(report.apiCalls, 7);
    const expected = defaultPrometheusQueries('ETSINFV.KUBERNETES.V_1');
    const alternation = 'vdu1-7f9c6d-abcde|vdu2-5b7d9c-fghij|vdu2-5b7d9c-gone0';
    assert.deepEqual(
      seen.map((call) => call.query).sort(),
      Object.values(expected)
        .map((query) => query.replaceAll('$ids', alternation))
        .sort(),
    );
    assert.ok(seen.every((call) => call.time === '1772359200.000'));
    assert.ok(seen.every((call) => call.authorization === undefined));
    const cpu = seen.find((call) => kubernetesMetric(call.query) === 'cpu')?.query;
    assert.equal(
      cpu,
      `sum by (pod) (rate(container_cpu_usage_seconds_total{container!="",container!="POD",pod=~"${alternation}"}[5m])) / sum by (pod) (kube_pod_container_resource_limits{resource="cpu",pod=~"${alternation}"}) * 100`,
    );
  });

  it('maps each series to its VNFC by the label naming it, gauges clamped to 0..100, counters to the CP their interface is', async () => {
    answer = (query) => {
      switch (kubernetesMetric(query)) {
        case 'cpu':
          return [series({ pod: 'vdu1-7f9c6d-abcde' }, 42.5), series({ pod: 'vdu2-5b7d9c-fghij' }, 130)];
        case 'memory':
          return [series({ pod: 'vdu1-7f9c6d-abcde' }, '12.25'), series({ pod: 'vdu2-5b7d9c-fghij' }, 'NaN')];
        case 'disk':
          return [series({ pod: 'vdu2-5b7d9c-fghij' }, -3)];
        case 'bytesIn':
          return [
            series({ pod: 'vdu1-7f9c6d-abcde', interface: 'eth0' }, 1000),
            series({ pod: 'vdu2-5b7d9c-fghij', interface: 'cp-c' }, 300),
            series({ pod: 'vdu2-5b7d9c-fghij', interface: 'eth0' }, 9999),
          ];
        case 'bytesOut':
          return [series({ pod: 'vdu1-7f9c6d-abcde', interface: 'eth0' }, 2000)];
        case 'packetsIn':
          return [series({ pod: 'vdu1-7f9c6d-abcde', interface: 'eth0' }, 10), series({ pod: 'vdu1-7f9c6d-abcde', interface: 'net1' }, 5)];
        default:
          return [];
      }
    };
    const report = await measureViaPrometheus({ url }, [PODS], { policy: LOCAL, at: AT });
    assert.deepEqual(report.results, [
      {
        vnfInstanceId: 'inst-1',
        vnfcResourceInfoId: 'vnfc-1',
        vduId: 'VDU1',
        resourceId: 'vdu1-7f9c6d-abcde',
        at: AT.toISOString(),
        cpuUsagePercent: 42.5,
        memoryUsagePercent: 12.25,
        // One CP and one interface: eth0 is it. Two interfaces and no name: which is unknown.
        cps: [{ cpInstanceId: 'cp-a', cpdId: 'cp-a-cpd', external: false, bytesIn: 1000, bytesOut: 2000 }],
      },
      {
        vnfInstanceId: 'inst-1',
        vnfcResourceInfoId: 'vnfc-2',
        vduId: 'VDU2',
        resourceId: 'vdu2-5b7d9c-fghij',
        at: AT.toISOString(),
        cpuUsagePercent: 100,
        diskUsagePercent: 0,
        cps: [
          { cpInstanceId: 'cp-b', cpdId: 'cp-b-cpd', external: false },
          { cpInstanceId: 'cp-c', cpdId: 'cp-c-cpd', external: false, bytesIn: 300 },
        ],
      },
    ]);
    assert.deepEqual(report.unavailable, [
      {
        vnfInstanceId: 'inst-1',
        vnfcResourceInfoId: 'vnfc-3',
        reason: 'Prometheus has no series of vdu2-5b7d9c-gone0: its exporter does not report it (yet), or it no longer exists',
      },
    ]);
  });

  it('reads OpenStack servers through the Ceilometer exporter, a NIC found by its tap device', async () => {
    const serverId = '6f1c8d2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f';
    const portId = '2cfa4a63-1b7e-4f6a-9c3d-112233445566';
    const target: MeasureTarget = {
      vnfInstanceId: 'inst-2',
      state: {},
      vnfcs: [
        {
          vduId: 'VDU1',
          resourceId: serverId,
          vnfcResourceInfoId: 'vnfc-9',
          cps: [cp('CP1', { portResourceId: portId }), cp('CP2', { external: true, vnfExtCpId: 'cp-99999999-aaaa-bbbb-cccc-dddddddddddd' })],
        },
      ],
    };
    answer = (query) => {
      if (query.includes('ceilometer_cpu')) return [series({ resource: serverId }, 7.5)];
      if (query.includes('ceilometer_network_incoming_bytes'))
        return [series({ resource: serverId, interface: 'tap2cfa4a63-1b' }, 64), series({ resource: serverId, interface: 'tap99999999-aa' }, 32)];
      return [];
    };
    const report = await measureViaPrometheus({ url }, [target], { policy: LOCAL, at: AT, vimType: 'openstack' });
    const queries = seen.map((call) => call.query);
    assert.ok(queries.includes(defaultPrometheusQueries('ETSINFV.OPENSTACK_KEYSTONE.V_3').cpu.replaceAll('$ids', serverId)));
    assert.ok(queries.some((query) => query.includes(`ceilometer_network_incoming_bytes{resource=~".+-(${serverId})-.+"}`)));
    assert.equal(report.results[0]?.cpuUsagePercent, 7.5);
    assert.deepEqual(
      report.results[0]?.cps.map((counters) => [counters.cpInstanceId, counters.bytesIn]),
      [
        ['CP1', 64],
        ['CP2', 32],
      ],
    );
  });

  it('chunks a long list of ids into several queries per metric, each within the limit', async () => {
    const many: MeasureTarget = {
      vnfInstanceId: 'inst-3',
      state: {},
      vnfcs: Array.from({ length: 30 }, (_, index) => ({
        vduId: 'VDU1',
        resourceId: `pod-${String(index).padStart(3, '0')}-xxxxx`,
        vnfcResourceInfoId: `vnfc-${index}`,
        cps: [],
      })),
    };
    answer = (query) =>
      query.includes('container_memory_working_set_bytes') ? [...query.matchAll(/pod-\d{3}-xxxxx/g)].map((match) => series({ pod: match[0] }, 50)) : [];
    const report = await measureViaPrometheus({ url, queries: { cpu: '', disk: '' } }, [many], { policy: LOCAL, at: AT, maxIdsLength: 100 });
    // 30 ids of 13 characters and a bar: 7 a chunk, 5 chunks; cpu and disk left out.
    assert.equal(seen.length, 5 * 5);
    assert.equal(report.apiCalls, 25);
    for (const call of seen) assert.ok(!call.query.includes('container_cpu_usage_seconds_total'));
    const memory = seen.filter((call) => call.query.includes('container_memory_working_set_bytes'));
    assert.equal(memory.length, 5);
    const alternations = memory.map((call) => /pod=~"([^"]+)"/.exec(call.query)?.[1] ?? '');
    for (const alternation of alternations) assert.ok(alternation.length <= 100, alternation);
    assert.deepEqual(alternations.flatMap((alternation) => alternation.split('|')).sort(), many.vnfcs.map((vnfc) => vnfc.resourceId).sort());
    assert.equal(report.results.length, 30);
    assert.ok(report.results.every((result) => result.memoryUsagePercent === 50));
  });

  it('uses the queries an operator gives, and authenticates', async () => {
    answer = () => [series({ instance: 'vdu1-7f9c6d-abcde' }, 3)];
    const report = await measureViaPrometheus(
      { url, authentication: { bearerToken: 'tok' }, queries: { cpu: 'my_cpu{instance=~"$ids"}' } },
      [{ ...PODS, vnfcs: PODS.vnfcs.slice(0, 1) }],
      { policy: LOCAL, at: AT },
    );
    assert.ok(seen.some((call) => call.query === 'my_cpu{instance=~"vdu1-7f9c6d-abcde"}'));
    assert.ok(seen.every((call) => call.authorization === 'Bearer tok'));
    assert.equal(report.results[0]?.cpuUsagePercent, 3);
    seen = [];
    await measureViaPrometheus({ url, authentication: { basic: { username: 'u', password: 'p:w' } } }, [PODS], { policy: LOCAL, at: AT });
    assert.ok(seen.every((call) => call.authorization === `Basic ${Buffer.from('u:p:w').toString('base64')}`));
  });

  it('fails the whole read with what Prometheus said when it refuses a query, or answers something else', async () => {
    answer = () => ({ status: 400, body: JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error at char 5' }) });
    await assert.rejects(
      measureViaPrometheus({ url }, [PODS], { policy: LOCAL, at: AT }),
      (error: Error) => error instanceof PrometheusError && /refused the \w+ query \(400 bad_data: parse error at char 5\)/.test(error.message),
    );
    answer = () => ({ status: 401, body: 'Unauthorized' });
    await assert.rejects(
      measureViaPrometheus({ url }, [PODS], { policy: LOCAL, at: AT }),
      /refused the \w+ query \(401\): check the monitoring authentication/,
    );
    answer = () => ({ status: 200, body: '<html>Grafana</html>' });
    await assert.rejects(measureViaPrometheus({ url }, [PODS], { policy: LOCAL, at: AT }), /no Prometheus API answer: is the URL the API's base\?/);
    answer = () => ({ status: 200, body: JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: [] } }) });
    await assert.rejects(measureViaPrometheus({ url }, [PODS], { policy: LOCAL, at: AT }), /must give an instant vector; .* gave a matrix/);
    await assert.rejects(measureViaPrometheus({ url: `${url}nowhere` }, [PODS], { policy: LOCAL, at: AT }), /no Prometheus API answer/);
    answer = () => ({ status: 200, body: JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [] }, padding: 'x'.repeat(5 * 2 ** 20) }) });
    await assert.rejects(measureViaPrometheus({ url }, [PODS], { policy: LOCAL, at: AT }), /answered the \w+ query with more than 4194304 bytes/);
  });

  it('goes through the egress policy', async () => {
    await assert.rejects(
      measureViaPrometheus({ url }, [PODS], { policy: { allowPrivateNetworks: false }, at: AT }),
      /could not be reached \(\w+ query\): the egress policy refuses it: 127\.0\.0\.1 is a loopback address/,
    );
    await assert.rejects(measureViaPrometheus({ url: 'http://169.254.169.254/' }, [PODS], { policy: LOCAL, at: AT }), /cloud metadata/);
    assert.equal(seen.length, 0);
  });

  it('asks nothing when there is nothing to measure', async () => {
    assert.deepEqual(await measureViaPrometheus({ url }, [], { policy: LOCAL }), { results: [], unavailable: [], apiCalls: 0 });
    assert.equal(seen.length, 0);
  });
});

describe('ids in a regex matcher', () => {
  it('escapes regex and PromQL string metacharacters', () => {
    assert.equal(regexLiteral('web-1.example'), 'web-1\\\\.example');
    assert.equal(regexLiteral('a"b\\c'), 'a\\"b\\\\\\\\c');
    assert.equal(regexLiteral('6f1c8d2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f'), '6f1c8d2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f');
  });

  it('chunks without splitting an id, each id once', () => {
    assert.deepEqual(idChunks(['aaaa', 'bbbb', 'aaaa', 'cccc'], 9), ['aaaa|bbbb', 'cccc']);
    assert.deepEqual(idChunks(['a-much-longer-id', 'b'], 5), ['a-much-longer-id', 'b']);
    assert.deepEqual(idChunks([]), []);
  });
});

describe('prometheusFrom', () => {
  const monitoring = (target: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    monitoring: { monitorName: 'prometheus', driverType: 'external', targetsInfo: [target], ...extra },
  });

  it("reads Tacker's monitoring metadata: the API base from the reload endpoint, HTTP credentials, never SSH's", () => {
    assert.deepEqual(
      prometheusFrom(
        undefined,
        monitoring({
          prometheusHost: 'prom.example',
          authInfo: { ssh_username: 'ubuntu', ssh_password: 'ubuntu' },
          alertRuleConfigPath: '/etc/prometheus/rules',
          prometheusReloadApiEndpoint: 'http://prom.example:9090/-/reload',
        }),
      ),
      { url: 'http://prom.example:9090' },
    );
    assert.deepEqual(
      prometheusFrom(
        monitoring(
          { prometheusApiEndpoint: 'https://prom.example/api-base', authInfo: { basic_auth: { username: 'pm', password: 's3cret' } } },
          { queries: { cpu: 'x{pod=~"$ids"}', bogus: 'y', memory: 7 } },
        ),
        undefined,
      ),
      { url: 'https://prom.example/api-base', authentication: { basic: { username: 'pm', password: 's3cret' } }, queries: { cpu: 'x{pod=~"$ids"}' } },
    );
    assert.deepEqual(prometheusFrom(monitoring({ prometheusApiEndpoint: 'http://p:9090', authInfo: { bearer_token: 't' } }), undefined), {
      url: 'http://p:9090',
      authentication: { bearerToken: 't' },
    });
  });

  it("chooses the instance's over the VIM's, and names none for another monitor or no endpoint", () => {
    const vim = monitoring({ prometheusApiEndpoint: 'http://vim-prom:9090' });
    const instance = monitoring({ prometheusApiEndpoint: 'http://instance-prom:9090' });
    assert.equal(prometheusFrom(vim, instance)?.url, 'http://instance-prom:9090');
    assert.equal(prometheusFrom(vim, {})?.url, 'http://vim-prom:9090');
    assert.equal(prometheusFrom(vim, monitoring({ prometheusHost: 'only-ssh' }))?.url, 'http://vim-prom:9090');
    assert.equal(prometheusFrom({ monitoring: { monitorName: 'zabbix', targetsInfo: [{ prometheusApiEndpoint: 'http://z' }] } }, undefined), undefined);
    assert.equal(
      prometheusFrom({ monitoring: { monitorName: 'prometheus', driverType: 'internal', targetsInfo: [{ prometheusApiEndpoint: 'http://z' }] } }, undefined),
      undefined,
    );
    assert.equal(prometheusFrom(undefined, undefined), undefined);
    assert.equal(prometheusFrom({ monitoring: 'prometheus' }, { monitoring: [] }), undefined);
  });
});

describe('one VIM measured partly through Prometheus', () => {
  const monitoring = (endpoint: string) => ({ monitoring: { monitorName: 'prometheus', targetsInfo: [{ prometheusApiEndpoint: endpoint }] } });
  const target = (vnfInstanceId: string, resourceId: string): MeasureTarget => ({
    vnfInstanceId,
    state: {},
    vnfcs: [{ vduId: 'VDU1', resourceId, vnfcResourceInfoId: `${vnfInstanceId}-vnfc`, cps: [] }],
  });

  it('groups instances by the Prometheus that measures them, the rest for the driver', () => {
    const [a, b, c, d] = [target('a', 'pa'), target('b', 'pb'), target('c', 'pc'), target('d', 'pd')];
    const groups = prometheusGroups(monitoring('http://vim-prom:9090'), [
      { target: a },
      { target: b, metadata: monitoring('http://own-prom:9090') },
      { target: c, metadata: { other: true } },
      { target: d, metadata: monitoring('http://own-prom:9090') },
    ]);
    assert.deepEqual(
      groups.prometheus.map((group) => [group.server.url, group.targets.map((item) => item.vnfInstanceId)]),
      [
        ['http://vim-prom:9090', ['a', 'c']],
        ['http://own-prom:9090', ['b', 'd']],
      ],
    );
    assert.deepEqual(groups.driver, []);
    assert.deepEqual(prometheusGroups(undefined, [{ target: a }, { target: b, metadata: monitoring('http://own-prom:9090') }]).driver, [a]);
  });

  it("merges the driver's report with each Prometheus's; a failing Prometheus leaves only its VNFCs unavailable", async () => {
    answer = (query) => (query.includes('container_memory_working_set_bytes') ? [series({ pod: 'pb' }, 20)] : []);
    const asked: string[][] = [];
    const report = await measureVim(
      { vimType: 'ETSINFV.KUBERNETES.V_1' },
      [
        { target: target('a', 'pa') },
        { target: target('b', 'pb'), metadata: monitoring(url) },
        { target: target('c', 'pc'), metadata: monitoring('http://127.0.0.1:1/') },
      ],
      async (targets) => {
        asked.push(targets.map((item) => item.vnfInstanceId));
        return {
          results: [{ vnfInstanceId: 'a', vnfcResourceInfoId: 'a-vnfc', vduId: 'VDU1', resourceId: 'pa', at: AT.toISOString(), cpuUsagePercent: 1, cps: [] }],
          unavailable: [],
          apiCalls: 2,
        };
      },
      { policy: LOCAL, at: AT, timeoutMs: 2000 },
    );
    assert.deepEqual(asked, [['a']]);
    assert.deepEqual(
      report.results.map((result) => [result.vnfInstanceId, result.cpuUsagePercent, result.memoryUsagePercent]),
      [
        ['a', 1, undefined],
        ['b', undefined, 20],
      ],
    );
    assert.equal(report.unavailable.length, 1);
    assert.equal(report.unavailable[0]?.vnfcResourceInfoId, 'c-vnfc');
    assert.match(report.unavailable[0]?.reason ?? '', /^Prometheus at http:\/\/127\.0\.0\.1:1 could not be reached/);
    // The driver's 2, the 7 queries answered, and the 7 sent to the one that failed.
    assert.equal(report.apiCalls, 2 + 7 + 7);
  });

  it('does not call the driver when Prometheus measures every instance', async () => {
    let called = false;
    await measureVim(
      { vimType: 'kubernetes', extra: monitoring(url) },
      [{ target: target('a', 'pa') }],
      async () => {
        called = true;
        return { results: [], unavailable: [], apiCalls: 0 };
      },
      { policy: LOCAL, at: AT },
    );
    assert.equal(called, false);
    assert.equal(seen.length, 7);
  });
});

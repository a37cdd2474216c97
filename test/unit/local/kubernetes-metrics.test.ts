// Tests of the Kubernetes simulator's metrics.k8s.io/v1beta1 over HTTP, as kubectl top and an
// autoscaler read it: discovery as metrics-server registers it, PodMetrics and NodeMetrics with
// canonical quantities, defaults for running pods, and the /_sim/metrics control for a pod and
// for every pod of a workload (scale-out included).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { cpuQuantity, memoryQuantity, parseQuantity } from '#local/kubernetes/metrics.ts';
import { startKubernetesSimulator, type KubernetesSimulator } from '#local/kubernetes/simulator.ts';

// Kubernetes objects are checked field by field below; their full shapes are the simulator's business.
type J = any;

interface Reply {
  status: number;
  body: J;
}

const METRICS = '/apis/metrics.k8s.io/v1beta1';

/** A test that looks at pods before they run uses a larger timeScale, so Pending lasts long enough to be seen. */
async function start(
  t: TestContext,
  timeScale = 0.01,
): Promise<{ sim: KubernetesSimulator; k: (method: string, path: string, body?: unknown) => Promise<Reply> }> {
  const sim = await startKubernetesSimulator({ timeScale });
  t.after(() => sim.close());
  const k = async (method: string, path: string, body?: unknown): Promise<Reply> => {
    const res = await fetch(`${sim.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${sim.token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
  };
  return { sim, k };
}

function deployment(name: string, replicas: number, resources?: J): J {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [
            { name: 'main', image: 'nginx:1.25', ...(resources ? { resources } : {}) },
            { name: 'sidecar', image: 'envoy:1.30' },
          ],
        },
      },
    },
  };
}

const podNames = async (k: (method: string, path: string) => Promise<Reply>, app: string): Promise<string[]> =>
  (await k('GET', `/api/v1/namespaces/default/pods?labelSelector=app%3D${app}`)).body.items.map((p: J) => p.metadata.name).sort();

test('metrics discovery: the group in /apis after the built-in ones, its version with nodes and pods (get, list)', async (t) => {
  const { k } = await start(t);
  const groups = (await k('GET', '/apis')).body.groups;
  assert.deepEqual(
    groups.map((g: J) => g.name),
    ['apps', 'metrics.k8s.io'],
  );
  assert.deepEqual(groups[1].preferredVersion, { groupVersion: 'metrics.k8s.io/v1beta1', version: 'v1beta1' });
  const group = (await k('GET', '/apis/metrics.k8s.io')).body;
  assert.equal(group.kind, 'APIGroup');
  assert.equal(group.versions[0].groupVersion, 'metrics.k8s.io/v1beta1');
  const resources = (await k('GET', METRICS)).body;
  assert.equal(resources.kind, 'APIResourceList');
  assert.deepEqual(
    resources.resources.map((r: J) => [r.name, r.kind, r.namespaced, r.verbs]),
    [
      ['nodes', 'NodeMetrics', false, ['get', 'list']],
      ['pods', 'PodMetrics', true, ['get', 'list']],
    ],
  );
  assert.equal((await k('POST', `${METRICS}/namespaces/default/pods`, {})).status, 405);
  assert.equal((await k('GET', `${METRICS}/services`)).status, 404);
});

test('pod metrics: none while Pending, plausible non-zero defaults once Running, per container; lists by namespace, label and across namespaces', async (t) => {
  const { sim, k } = await start(t, 0.2);
  assert.equal(
    (await k('POST', '/apis/apps/v1/namespaces/default/deployments', deployment('web', 2, { requests: { cpu: '500m', memory: '256Mi' } }))).status,
    201,
  );
  const pending = (await k('GET', `${METRICS}/namespaces/default/pods`)).body;
  assert.equal(pending.kind, 'PodMetricsList');
  assert.equal(pending.items.length, 0, 'pods not yet running have no metrics');
  await sim.settled();
  const [name] = await podNames(k, 'web');
  const pm = await k('GET', `${METRICS}/namespaces/default/pods/${name}`);
  assert.equal(pm.status, 200);
  assert.equal(pm.body.kind, 'PodMetrics');
  assert.equal(pm.body.apiVersion, 'metrics.k8s.io/v1beta1');
  assert.equal(pm.body.metadata.name, name);
  assert.equal(pm.body.metadata.namespace, 'default');
  assert.equal(pm.body.metadata.labels.app, 'web');
  assert.match(pm.body.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(pm.body.window, '15s');
  assert.deepEqual(
    pm.body.containers.map((c: J) => c.name),
    ['main', 'sidecar'],
  );
  const [main, sidecar] = pm.body.containers;
  const cores = parseQuantity(main.usage.cpu)!;
  assert.ok(cores >= 0.075 && cores <= 0.125, `a fifth or so of the 500m request (${main.usage.cpu})`);
  const bytes = parseQuantity(main.usage.memory)!;
  assert.ok(bytes >= 0.4 * 256 * 2 ** 20 && bytes <= 0.6 * 256 * 2 ** 20, `about half the 256Mi request (${main.usage.memory})`);
  assert.ok(parseQuantity(sidecar.usage.cpu)! > 0 && parseQuantity(sidecar.usage.memory)! > 0, 'no requests: small idle values');
  assert.match(sidecar.usage.memory, /^\d+(Ki|Mi)$/);
  assert.deepEqual((await k('GET', `${METRICS}/namespaces/default/pods/${name}`)).body.containers, pm.body.containers, 'steady without a setting');

  assert.equal((await k('GET', `${METRICS}/namespaces/default/pods?labelSelector=app%3Dweb`)).body.items.length, 2);
  assert.equal((await k('GET', `${METRICS}/namespaces/default/pods?labelSelector=app%3Dother`)).body.items.length, 0);
  assert.equal((await k('GET', `${METRICS}/namespaces/kube-system/pods`)).body.items.length, 0);
  assert.equal((await k('GET', `${METRICS}/pods`)).body.items.length, 2);

  const missing = await k('GET', `${METRICS}/namespaces/default/pods/nope`);
  assert.equal(missing.status, 404);
  assert.deepEqual(
    [missing.body.kind, missing.body.reason, missing.body.message],
    ['Status', 'NotFound', 'podmetrics.metrics.k8s.io "default/nope" not found'],
  );

  // A crash-looping pod has no running container, hence no metrics.
  await k('POST', '/_sim/faults', { kind: 'pod-crash', pod: name, namespace: 'default' });
  assert.equal((await k('GET', `${METRICS}/namespaces/default/pods/${name}`)).status, 404);

  const unauthorized = await fetch(`${sim.url}${METRICS}/pods`);
  assert.equal(unauthorized.status, 401);
});

test("control: /_sim/metrics sets a pod's usage, or every pod of a workload including those it makes later; node metrics add up", async (t) => {
  const { sim, k } = await start(t);
  await k('POST', '/apis/apps/v1/namespaces/default/deployments', deployment('api', 2));
  await sim.settled();

  const set = await k('POST', '/_sim/metrics', { workload: { kind: 'Deployment', name: 'api' }, cpu: '800m', memory: '256Mi' });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  for (const item of (await k('GET', `${METRICS}/namespaces/default/pods?labelSelector=app%3Dapi`)).body.items) {
    assert.deepEqual(
      item.containers.map((c: J) => c.usage),
      [
        { cpu: '400m', memory: '128Mi' },
        { cpu: '400m', memory: '128Mi' },
      ],
      "the pod's usage split over its two containers",
    );
  }

  // One pod, one container: the most specific setting wins.
  const [first, second] = await podNames(k, 'api');
  assert.equal((await k('POST', '/_sim/metrics', { pod: first, containers: { main: { cpu: '1500m', memory: '1Gi' } } })).status, 200);
  const hot = (await k('GET', `${METRICS}/namespaces/default/pods/${first}`)).body.containers;
  assert.deepEqual(
    hot.map((c: J) => c.usage),
    [
      { cpu: '1500m', memory: '1Gi' },
      { cpu: '400m', memory: '128Mi' },
    ],
  );
  assert.deepEqual((await k('GET', `${METRICS}/namespaces/default/pods/${second}`)).body.containers[0].usage, { cpu: '400m', memory: '128Mi' });

  // Scale out: the new pod gets the workload's usage too.
  const scaled = await fetch(`${sim.url}/apis/apps/v1/namespaces/default/deployments/api/scale`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${sim.token}`, 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify({ spec: { replicas: 3 } }),
  });
  assert.equal(scaled.status, 200);
  await sim.settled();
  const third = (await podNames(k, 'api')).find((n) => n !== first && n !== second)!;
  assert.deepEqual((await k('GET', `${METRICS}/namespaces/default/pods/${third}`)).body.containers[1].usage, { cpu: '400m', memory: '128Mi' });

  // Nodes: the kubelet's own share plus their pods.
  const nodes = (await k('GET', `${METRICS}/nodes`)).body;
  assert.equal(nodes.kind, 'NodeMetricsList');
  assert.deepEqual(nodes.items.map((n: J) => n.metadata.name).sort(), ['node-1', 'node-2']);
  const total = nodes.items.reduce((sum: number, n: J) => sum + parseQuantity(n.usage.cpu)!, 0);
  assert.ok(Math.abs(total - (0.12 * 2 + 1.5 + 0.4 + 0.8 * 2)) < 1e-6, `node CPU adds up (${total})`);
  assert.equal((await k('GET', `${METRICS}/nodes/node-1`)).body.kind, 'NodeMetrics');
  assert.equal((await k('GET', `${METRICS}/nodes/node-9`)).status, 404);

  // A node that is not Ready answers no scrape: neither it nor its pods have metrics.
  const notReady = await fetch(`${sim.url}/api/v1/nodes/node-1/status`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${sim.token}`, 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify({ status: { conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady' }] } }),
  });
  assert.equal(notReady.status, 200);
  assert.deepEqual(
    (await k('GET', `${METRICS}/nodes`)).body.items.map((n: J) => n.metadata.name),
    ['node-2'],
  );
  assert.equal((await k('GET', `${METRICS}/nodes/node-1`)).status, 404);
  const onNode1 = (await k('GET', '/api/v1/namespaces/default/pods')).body.items.filter((p: J) => p.spec.nodeName === 'node-1').map((p: J) => p.metadata.name);
  const measured = (await k('GET', `${METRICS}/namespaces/default/pods`)).body.items.map((p: J) => p.metadata.name);
  assert.ok(onNode1.length > 0 && onNode1.every((n: string) => !measured.includes(n)), 'no metrics for the pods of a node that is not Ready');
  await fetch(`${sim.url}/api/v1/nodes/node-1/status`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${sim.token}`, 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify({ status: { conditions: [{ type: 'Ready', status: 'True' }] } }),
  });

  // Bad settings are 400, unknown targets 404; clearing restores the defaults; the same in code.
  for (const bad of [{ pod: first }, { pod: first, cpu: 'lots' }, { cpu: '1' }, { workload: { kind: 'Job', name: 'api' }, cpu: '1' }]) {
    assert.equal((await k('POST', '/_sim/metrics', bad)).status, 400, JSON.stringify(bad));
  }
  assert.equal((await k('POST', '/_sim/metrics', { pod: 'nope', cpu: '1' })).status, 404);
  assert.equal((await k('POST', '/_sim/metrics', { workload: { kind: 'StatefulSet', name: 'api' }, cpu: '1' })).status, 404);
  assert.equal((await k('DELETE', '/_sim/metrics')).status, 200);
  assert.notEqual((await k('GET', `${METRICS}/namespaces/default/pods/${second}`)).body.containers[0].usage.cpu, '400m');
  sim.setMetrics({ pod: second, cpu: '2', memory: '512Mi' });
  assert.deepEqual((await k('GET', `${METRICS}/namespaces/default/pods/${second}`)).body.containers[0].usage, { cpu: '1', memory: '256Mi' });
});

test("quantities: parsed from every suffix, written in metrics-server's canonical form", () => {
  assert.equal(parseQuantity('250m'), 0.25);
  assert.equal(parseQuantity('2'), 2);
  assert.equal(parseQuantity('1.5'), 1.5);
  assert.equal(parseQuantity('64Mi'), 64 * 2 ** 20);
  assert.equal(parseQuantity('128M'), 128e6);
  assert.equal(parseQuantity('1e3'), 1000);
  assert.equal(parseQuantity('12x'), undefined);
  assert.equal(cpuQuantity(250_000_000), '250m');
  assert.equal(cpuQuantity(2_000_000_000), '2');
  assert.equal(cpuQuantity(2_127_180), '2127180n');
  assert.equal(cpuQuantity(5_000), '5u');
  assert.equal(memoryQuantity(64 * 2 ** 20), '64Mi');
  assert.equal(memoryQuantity(13_864_960), '13540Ki');
  assert.equal(memoryQuantity(2 ** 30), '1Gi');
  assert.equal(memoryQuantity(1000), '1000');
});

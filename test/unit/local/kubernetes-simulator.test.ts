// Tests of the Kubernetes simulator over HTTP, as a client sees it: auth and discovery, CRUD with
// Status errors, the Deployment/ReplicaSet controllers (rollout, self-healing, scaling, cascade),
// image pull failures, and the control API. Plain fetch is used because @kubernetes/client-node
// is not installed in this repository; the requests are the ones that client would send.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { startKubernetesSimulator, type KubernetesSimulator } from '#local/kubernetes/simulator.ts';

// Kubernetes objects are checked field by field below; their full shapes are the simulator's business.
type J = any;

interface Reply {
  status: number;
  body: J;
}

async function start(t: TestContext): Promise<{ sim: KubernetesSimulator; k: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<Reply> }> {
  const sim = await startKubernetesSimulator({ timeScale: 0.01 });
  t.after(() => sim.close());
  const k = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> => {
    const res = await fetch(`${sim.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${sim.token}`, ...(body !== undefined ? { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
  };
  return { sim, k };
}

function deployment(name: string, image: string, replicas = 2): J {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image, ports: [{ containerPort: 80 }] }] } },
    },
  };
}

const ready = (pod: J) => pod.status.phase === 'Running' && pod.status.conditions.some((c: J) => c.type === 'Ready' && c.status === 'True');

test('auth: 401 Status without or with a wrong token; discovery lists the resources', async (t) => {
  const { sim, k } = await start(t);
  for (const headers of [{}, { authorization: 'Bearer wrong' }] as Array<Record<string, string>>) {
    const res = await fetch(`${sim.url}/api/v1/namespaces`, { headers });
    assert.equal(res.status, 401);
    const body = (await res.json()) as J;
    assert.deepEqual([body.kind, body.status, body.reason, body.code], ['Status', 'Failure', 'Unauthorized', 401]);
  }
  assert.equal((await k('GET', '/version')).body.major, '1');
  assert.deepEqual((await k('GET', '/api')).body.versions, ['v1']);
  const core = (await k('GET', '/api/v1')).body;
  assert.ok(['namespaces', 'configmaps', 'secrets', 'services', 'pods', 'pods/status'].every((n) => core.resources.some((r: J) => r.name === n)));
  assert.equal((await k('GET', '/apis')).body.groups[0].name, 'apps');
  const apps = (await k('GET', '/apis/apps/v1')).body;
  assert.deepEqual(apps.resources.filter((r: J) => !r.name.includes('/')).map((r: J) => r.name), ['deployments', 'replicasets']);
});

test('crud: create, get, list by label, replace, merge patch, delete, with 404/409/422 Status objects', async (t) => {
  const { k } = await start(t);
  assert.equal((await k('GET', '/api/v1/namespaces/default')).body.status.phase, 'Active');
  assert.equal((await k('POST', '/api/v1/namespaces', { metadata: { name: 'vnf' } })).status, 201);

  const created = await k('POST', '/api/v1/namespaces/vnf/configmaps', { metadata: { name: 'cfg', labels: { tier: 'a' } }, data: { x: '1' } });
  assert.equal(created.status, 201);
  assert.match(created.body.metadata.uid, /^[0-9a-f-]{36}$/);
  assert.ok(created.body.metadata.resourceVersion && created.body.metadata.creationTimestamp);
  await k('POST', '/api/v1/namespaces/vnf/configmaps', { metadata: { name: 'other', labels: { tier: 'b' } } });

  const dup = await k('POST', '/api/v1/namespaces/vnf/configmaps', { metadata: { name: 'cfg' } });
  assert.equal(dup.status, 409);
  assert.deepEqual([dup.body.kind, dup.body.reason, dup.body.code, dup.body.details.name], ['Status', 'AlreadyExists', 409, 'cfg']);
  assert.equal(dup.body.message, 'configmaps "cfg" already exists');

  const missing = await k('GET', '/apis/apps/v1/namespaces/vnf/deployments/nope');
  assert.equal(missing.status, 404);
  assert.deepEqual([missing.body.kind, missing.body.reason, missing.body.code, missing.body.details.group], ['Status', 'NotFound', 404, 'apps']);
  assert.equal(missing.body.message, 'deployments.apps "nope" not found');
  assert.equal((await k('POST', '/api/v1/namespaces/ghost/configmaps', { metadata: { name: 'x' } })).body.message, 'namespaces "ghost" not found');

  assert.deepEqual((await k('GET', '/api/v1/namespaces/vnf/configmaps?labelSelector=tier%3Da')).body.items.map((i: J) => i.metadata.name), ['cfg']);
  assert.deepEqual((await k('GET', `/api/v1/namespaces/vnf/configmaps?labelSelector=${encodeURIComponent('tier in (a,b)')}`)).body.items.length, 2);
  assert.equal((await k('GET', '/api/v1/namespaces/vnf/configmaps')).body.kind, 'ConfigMapList');

  const stale = { ...created.body, data: { x: '2' } };
  const replaced = await k('PUT', '/api/v1/namespaces/vnf/configmaps/cfg', stale);
  assert.equal(replaced.status, 200);
  assert.equal(replaced.body.data.x, '2');
  assert.equal((await k('PUT', '/api/v1/namespaces/vnf/configmaps/cfg', stale)).body.reason, 'Conflict');
  const patched = await k('PATCH', '/api/v1/namespaces/vnf/configmaps/cfg', { data: { y: '3' } });
  assert.deepEqual(patched.body.data, { x: '2', y: '3' });

  const secret = await k('POST', '/api/v1/namespaces/vnf/secrets', { metadata: { name: 's' }, stringData: { pw: 'hunter2' } });
  assert.equal(secret.body.data.pw, Buffer.from('hunter2').toString('base64'));

  const bad = await k('POST', '/apis/apps/v1/namespaces/vnf/deployments', { ...deployment('d', 'nginx'), spec: { ...deployment('d', 'nginx').spec, selector: { matchLabels: { app: 'other' } } } });
  assert.equal(bad.status, 422);
  assert.equal(bad.body.reason, 'Invalid');

  const deleted = await k('DELETE', '/api/v1/namespaces/vnf/configmaps/cfg');
  assert.deepEqual([deleted.status, deleted.body.kind, deleted.body.status], [200, 'Status', 'Success']);
  assert.equal((await k('DELETE', '/api/v1/namespaces/vnf/configmaps/cfg')).status, 404);
});

test('deployment: pods become Ready, rolling update replaces them, a deleted pod is replaced, delete cascades', async (t) => {
  const { sim, k } = await start(t);
  await k('POST', '/api/v1/namespaces', { metadata: { name: 'vnf' } });
  const created = await k('POST', '/apis/apps/v1/namespaces/vnf/deployments', deployment('web', 'nginx:1.25'));
  assert.equal(created.status, 201);
  assert.equal(created.body.metadata.generation, 1);
  assert.deepEqual(created.body.spec.strategy.rollingUpdate, { maxSurge: '25%', maxUnavailable: '25%' });
  const svc = await k('POST', '/api/v1/namespaces/vnf/services', { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } });
  assert.equal(svc.status, 201);
  assert.match(svc.body.spec.clusterIP, /^10\.96\.\d+\.\d+$/);
  assert.equal(svc.body.spec.ports[0].targetPort, 80);

  await sim.settled();
  let pods = (await k('GET', '/api/v1/namespaces/vnf/pods?labelSelector=app%3Dweb')).body.items;
  assert.equal(pods.length, 2);
  assert.ok(pods.every(ready));
  assert.ok(pods.every((p: J) => p.metadata.ownerReferences[0].kind === 'ReplicaSet' && p.metadata.labels['pod-template-hash']));
  let dep = (await k('GET', '/apis/apps/v1/namespaces/vnf/deployments/web/status')).body;
  assert.deepEqual([dep.status.replicas, dep.status.readyReplicas, dep.status.updatedReplicas, dep.status.availableReplicas, dep.status.observedGeneration], [2, 2, 2, 2, 1]);
  assert.deepEqual(dep.status.conditions.map((c: J) => [c.type, c.status]), [['Available', 'True'], ['Progressing', 'True']]);
  const firstRs = (await k('GET', '/apis/apps/v1/namespaces/vnf/replicasets')).body.items;
  assert.equal(firstRs.length, 1);

  // Rolling update to a new image.
  const oldPods = new Set(pods.map((p: J) => p.metadata.name));
  const patched = await k('PATCH', '/apis/apps/v1/namespaces/vnf/deployments/web', { spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx:1.26' }] } } } }, { 'content-type': 'application/strategic-merge-patch+json' });
  assert.equal(patched.body.metadata.generation, 2);
  await sim.settled();
  const sets = (await k('GET', '/apis/apps/v1/namespaces/vnf/replicasets')).body.items;
  assert.equal(sets.length, 2);
  const newRs = sets.find((rs: J) => rs.metadata.name !== firstRs[0].metadata.name);
  assert.deepEqual([newRs.spec.replicas, newRs.status.readyReplicas, newRs.metadata.annotations['deployment.kubernetes.io/revision']], [2, 2, '2']);
  assert.equal(sets.find((rs: J) => rs.metadata.name === firstRs[0].metadata.name).spec.replicas, 0);
  pods = (await k('GET', '/api/v1/namespaces/vnf/pods')).body.items;
  assert.equal(pods.length, 2);
  assert.ok(pods.every((p: J) => !oldPods.has(p.metadata.name) && ready(p) && p.spec.containers[0].image === 'nginx:1.26'));
  dep = (await k('GET', '/apis/apps/v1/namespaces/vnf/deployments/web')).body;
  assert.deepEqual([dep.status.readyReplicas, dep.status.updatedReplicas, dep.status.observedGeneration], [2, 2, 2]);

  // Self-healing.
  const victim = pods[0].metadata.name;
  const gone = await k('DELETE', `/api/v1/namespaces/vnf/pods/${victim}`);
  assert.equal(gone.body.kind, 'Pod');
  await sim.settled();
  pods = (await k('GET', '/api/v1/namespaces/vnf/pods')).body.items;
  assert.equal(pods.length, 2);
  assert.ok(pods.every((p: J) => p.metadata.name !== victim && ready(p)));

  // Scaling through the scale subresource.
  const scaled = await k('PATCH', '/apis/apps/v1/namespaces/vnf/deployments/web/scale', { spec: { replicas: 3 } });
  assert.equal(scaled.body.kind, 'Scale');
  await sim.settled();
  assert.equal((await k('GET', '/apis/apps/v1/namespaces/vnf/deployments/web')).body.status.readyReplicas, 3);

  // Cascading delete.
  assert.equal((await k('DELETE', '/apis/apps/v1/namespaces/vnf/deployments/web')).body.status, 'Success');
  await sim.settled();
  assert.deepEqual((await k('GET', '/api/v1/namespaces/vnf/pods')).body.items, []);
  assert.deepEqual((await k('GET', '/apis/apps/v1/namespaces/vnf/replicasets')).body.items, []);
  const state = (await k('GET', '/_sim/state')).body;
  assert.deepEqual(state.namespaces.vnf.deployments, { count: 0, names: [] });
  assert.deepEqual(state.namespaces.vnf.services, { count: 1, names: ['web'] });
  assert.equal(state.busy, 0);
});

// Bounded: the check below re-reads state on every event-loop turn, so a stalled rollout must fail, not hang.
test('rolling update honours maxSurge and maxUnavailable at every step', { timeout: 60_000 }, async (t) => {
  const { sim, k } = await start(t);
  const d = deployment('r', 'app:1', 4);
  d.spec.strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } };
  await k('POST', '/apis/apps/v1/namespaces/default/deployments', d);
  await sim.settled();
  await k('PATCH', '/apis/apps/v1/namespaces/default/deployments/r', { spec: { template: { spec: { containers: [{ name: 'main', image: 'app:2' }] } } } });
  // Sample the pods while the rollout runs: never more than 5, never fewer than 4 ready.
  let maxPods = 0;
  let minReady = Infinity;
  for (;;) {
    const pods = (await k('GET', '/api/v1/namespaces/default/pods')).body.items;
    maxPods = Math.max(maxPods, pods.length);
    minReady = Math.min(minReady, pods.filter(ready).length);
    if (pods.length === 4 && pods.every((p: J) => ready(p) && p.spec.containers[0].image === 'app:2')) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.ok(maxPods <= 5, `at most replicas + maxSurge pods (${maxPods})`);
  assert.ok(minReady >= 4, `never below replicas - maxUnavailable ready (${minReady})`);
  await sim.settled();
});

test('image pull failure: pods stay Pending with ImagePullBackOff, by name and by injected fault', async (t) => {
  const { sim, k } = await start(t);
  await k('POST', '/apis/apps/v1/namespaces/default/deployments', deployment('bad', 'registry/invalid-image:1'));
  assert.equal((await k('POST', '/_sim/faults', { kind: 'image-pull-fail', image: 'acme/vnf:9' })).status, 200);
  await k('POST', '/apis/apps/v1/namespaces/default/deployments', deployment('faulty', 'acme/vnf:9', 1));
  assert.deepEqual((await k('POST', '/_sim/settled')).body, { settled: true });
  const pods = (await k('GET', '/api/v1/namespaces/default/pods')).body.items;
  assert.equal(pods.length, 3);
  for (const p of pods) {
    assert.equal(p.status.phase, 'Pending');
    assert.equal(p.status.containerStatuses[0].state.waiting.reason, 'ImagePullBackOff');
  }
  const dep = (await k('GET', '/apis/apps/v1/namespaces/default/deployments/bad')).body;
  assert.equal(dep.status.readyReplicas, undefined);
  assert.equal(dep.status.unavailableReplicas, 2);
  assert.deepEqual(dep.status.conditions.find((c: J) => c.type === 'Available').status, 'False');
});

test('http-5xx fault fails the next n API requests with a 500 Status', async (t) => {
  const { k } = await start(t);
  await k('POST', '/_sim/faults', { kind: 'http-5xx', count: 2 });
  assert.equal((await k('GET', '/api/v1/namespaces')).status, 500);
  const second = await k('GET', '/api/v1/namespaces');
  assert.deepEqual([second.status, second.body.kind, second.body.reason], [500, 'Status', 'InternalError']);
  assert.equal((await k('GET', '/api/v1/namespaces')).status, 200);
  assert.equal((await k('POST', '/_sim/faults', { kind: 'nonsense' })).status, 400);
});

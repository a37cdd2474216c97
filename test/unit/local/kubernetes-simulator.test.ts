// Tests of the Kubernetes simulator over raw HTTP, as a client sees it: auth and discovery, CRUD
// with Status errors, the Deployment/ReplicaSet, StatefulSet and DaemonSet controllers (rollout,
// self-healing, scaling, cascade, revisions), nodes, every patch type including server-side apply,
// delete propagation, label selectors, image pull failures, and the control API. The requests are
// the ones a client library would send; kubernetes-client.test.ts goes through the real one.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { startKubernetesSimulator, type KubernetesSimulator, type KubernetesSimulatorOptions } from '#local/kubernetes/simulator.ts';

// Kubernetes objects are checked field by field below; their full shapes are the simulator's business.
type J = any;

interface Reply {
  status: number;
  body: J;
}

type K = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<Reply>;

/** A simulator and a request function; a string body is sent as it is (YAML for apply), anything else as JSON. */
async function start(t: TestContext, opts: KubernetesSimulatorOptions = {}): Promise<{ sim: KubernetesSimulator; k: K }> {
  const sim = await startKubernetesSimulator({ timeScale: 0.01, ...opts });
  t.after(() => sim.close());
  const k = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> => {
    const res = await fetch(`${sim.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${sim.token}`,
        ...(body !== undefined ? { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
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
  assert.deepEqual(
    apps.resources.filter((r: J) => !r.name.includes('/')).map((r: J) => r.name),
    ['deployments', 'replicasets', 'statefulsets', 'daemonsets', 'controllerrevisions'],
  );
  assert.deepEqual(
    apps.resources.filter((r: J) => ['statefulsets', 'daemonsets'].includes(r.name)).map((r: J) => r.shortNames),
    [['sts'], ['ds']],
  );
  assert.ok(apps.resources.some((r: J) => r.name === 'statefulsets/scale' && r.kind === 'Scale'));
  assert.ok(core.resources.some((r: J) => r.name === 'nodes' && r.namespaced === false));
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

  assert.deepEqual(
    (await k('GET', '/api/v1/namespaces/vnf/configmaps?labelSelector=tier%3Da')).body.items.map((i: J) => i.metadata.name),
    ['cfg'],
  );
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

  const bad = await k('POST', '/apis/apps/v1/namespaces/vnf/deployments', {
    ...deployment('d', 'nginx'),
    spec: { ...deployment('d', 'nginx').spec, selector: { matchLabels: { app: 'other' } } },
  });
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
  assert.deepEqual(
    [dep.status.replicas, dep.status.readyReplicas, dep.status.updatedReplicas, dep.status.availableReplicas, dep.status.observedGeneration],
    [2, 2, 2, 2, 1],
  );
  assert.deepEqual(
    dep.status.conditions.map((c: J) => [c.type, c.status]),
    [
      ['Available', 'True'],
      ['Progressing', 'True'],
    ],
  );
  const firstRs = (await k('GET', '/apis/apps/v1/namespaces/vnf/replicasets')).body.items;
  assert.equal(firstRs.length, 1);

  // Rolling update to a new image.
  const oldPods = new Set(pods.map((p: J) => p.metadata.name));
  const patched = await k(
    'PATCH',
    '/apis/apps/v1/namespaces/vnf/deployments/web',
    { spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx:1.26' }] } } } },
    { 'content-type': 'application/strategic-merge-patch+json' },
  );
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
  const { k } = await start(t);
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

// ---------------------------------------------------------------------------------------------
// StatefulSets, DaemonSets, nodes, patches, delete propagation, selectors

const SMP = { 'content-type': 'application/strategic-merge-patch+json' };
const JSON_PATCH = { 'content-type': 'application/json-patch+json' };
const APPLY = { 'content-type': 'application/apply-patch+yaml' };
const STS = '/apis/apps/v1/namespaces/default/statefulsets';
const DS = '/apis/apps/v1/namespaces/default/daemonsets';

function statefulSet(name: string, image: string, replicas = 3, labels: Record<string, string> = {}): J {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, labels: { app: name, ...labels } },
    spec: {
      replicas,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }] } },
    },
  };
}

function daemonSet(name: string, image: string): J {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, labels: { app: name } },
    spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }] } } },
  };
}

const podsOf = async (k: K, selector: string): Promise<J[]> =>
  (await k('GET', `/api/v1/namespaces/default/pods?labelSelector=${encodeURIComponent(selector)}`)).body.items;
const names = (items: J[]): string[] => items.map((i) => i.metadata.name);
const imageOf = (pod: J): string => pod.spec.containers[0].image;
const waitingReason = (pod: J): string | undefined => pod.status.containerStatuses?.[0]?.state?.waiting?.reason;
const setImage = (image: string): J => ({ spec: { template: { spec: { containers: [{ name: 'main', image }] } } } });

test('statefulset: OrderedReady creates <name>-0 first and the next only once it is Ready; a deleted pod returns under its name; scale', async (t) => {
  const { sim, k } = await start(t);
  sim.inject({ kind: 'image-pull-fail', image: 'acme/db:1' });
  const created = await k('POST', STS, statefulSet('db', 'acme/db:1'));
  assert.equal(created.status, 201);
  assert.deepEqual(
    [created.body.spec.podManagementPolicy, created.body.spec.updateStrategy],
    ['OrderedReady', { type: 'RollingUpdate', rollingUpdate: { partition: 0 } }],
  );
  await sim.settled();
  // db-0 cannot pull its image, so db-1 and db-2 are never created.
  let pods = await podsOf(k, 'app=db');
  assert.deepEqual(names(pods), ['db-0']);
  assert.equal(waitingReason(pods[0]), 'ImagePullBackOff');
  let sts = (await k('GET', `${STS}/db`)).body;
  assert.deepEqual([sts.status.replicas, sts.status.readyReplicas, sts.status.availableReplicas], [1, undefined, 0]);

  sim.clearFaults();
  const firstUid = pods[0].metadata.uid;
  await k('DELETE', '/api/v1/namespaces/default/pods/db-0');
  await sim.settled();
  pods = await podsOf(k, 'app=db');
  assert.deepEqual(names(pods), ['db-0', 'db-1', 'db-2']);
  assert.ok(pods.every(ready));
  assert.notEqual(pods[0].metadata.uid, firstUid);
  sts = (await k('GET', `${STS}/db`)).body;
  assert.match(sts.status.updateRevision, /^db-[a-z0-9]{10}$/);
  for (const [i, pod] of pods.entries()) {
    assert.equal(pod.metadata.labels['statefulset.kubernetes.io/pod-name'], `db-${i}`);
    assert.equal(pod.metadata.labels['controller-revision-hash'], sts.status.updateRevision);
    const owner = pod.metadata.ownerReferences[0];
    assert.deepEqual([owner.kind, owner.name, owner.uid, owner.controller], ['StatefulSet', 'db', sts.metadata.uid, true]);
    assert.deepEqual([pod.spec.hostname, pod.spec.subdomain], [`db-${i}`, 'db']);
  }
  assert.deepEqual(
    [
      sts.status.observedGeneration,
      sts.status.replicas,
      sts.status.readyReplicas,
      sts.status.currentReplicas,
      sts.status.updatedReplicas,
      sts.status.availableReplicas,
      sts.status.currentRevision,
    ],
    [1, 3, 3, 3, 3, 3, sts.status.updateRevision],
  );

  // Scaling down through the scale subresource removes the highest ordinals.
  const scale = await k('PATCH', `${STS}/db/scale`, { spec: { replicas: 1 } });
  assert.deepEqual([scale.body.kind, scale.body.spec.replicas, scale.body.status.selector], ['Scale', 1, 'app=db']);
  await sim.settled();
  assert.deepEqual(names(await podsOf(k, 'app=db')), ['db-0']);
  assert.equal((await k('GET', `${STS}/db/scale`)).body.status.replicas, 1);
});

test('statefulset: rolling update goes from the highest ordinal down, honours the partition, records revisions, halts at a broken pod', async (t) => {
  const { sim, k } = await start(t);
  await k('POST', STS, statefulSet('db', 'acme/db:1'));
  await sim.settled();
  const rev1 = (await k('GET', `${STS}/db`)).body.status.currentRevision;

  // Partition 2: only db-2 moves to the new template.
  const patched = await k('PATCH', `${STS}/db`, { spec: { updateStrategy: { rollingUpdate: { partition: 2 } }, ...setImage('acme/db:2').spec } }, SMP);
  assert.equal(patched.body.metadata.generation, 2);
  await sim.settled();
  let pods = await podsOf(k, 'app=db');
  assert.deepEqual(pods.map(imageOf), ['acme/db:1', 'acme/db:1', 'acme/db:2']);
  let sts = (await k('GET', `${STS}/db`)).body;
  const rev2 = sts.status.updateRevision;
  assert.notEqual(rev2, rev1);
  assert.deepEqual(
    pods.map((p) => p.metadata.labels['controller-revision-hash']),
    [rev1, rev1, rev2],
  );
  assert.deepEqual(
    [
      sts.status.observedGeneration,
      sts.status.replicas,
      sts.status.readyReplicas,
      sts.status.currentReplicas,
      sts.status.updatedReplicas,
      sts.status.currentRevision,
    ],
    [2, 3, 3, 2, 1, rev1],
  );

  // Partition 0: the rest follow, and the rollout is complete the way `kubectl rollout status` checks it.
  await k('PATCH', `${STS}/db`, { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } }, SMP);
  await sim.settled();
  pods = await podsOf(k, 'app=db');
  assert.ok(pods.every((p) => imageOf(p) === 'acme/db:2' && ready(p)));
  sts = (await k('GET', `${STS}/db`)).body;
  assert.ok(sts.status.observedGeneration >= sts.metadata.generation);
  assert.deepEqual(
    [sts.status.replicas, sts.status.updatedReplicas, sts.status.readyReplicas, sts.status.currentReplicas, sts.status.currentRevision],
    [3, 3, 3, 3, rev2],
  );
  const revisions = (await k('GET', '/apis/apps/v1/namespaces/default/controllerrevisions')).body.items;
  assert.deepEqual(Object.fromEntries(revisions.map((r: J) => [r.metadata.name, r.revision])), { [rev1]: 1, [rev2]: 2 });
  assert.ok(revisions.every((r: J) => r.metadata.ownerReferences[0].kind === 'StatefulSet'));
  assert.equal(revisions.find((r: J) => r.metadata.name === rev2).data.spec.template.spec.containers[0].image, 'acme/db:2');

  // A broken image: db-2 is replaced and never becomes Ready, so db-1 and db-0 are left alone.
  await k('PATCH', `${STS}/db`, setImage('acme/badimage:3'), SMP);
  await sim.settled();
  pods = await podsOf(k, 'app=db');
  assert.deepEqual(pods.map(imageOf), ['acme/db:2', 'acme/db:2', 'acme/badimage:3']);
  assert.equal(waitingReason(pods[2]), 'ImagePullBackOff');
  sts = (await k('GET', `${STS}/db`)).body;
  assert.deepEqual([sts.status.readyReplicas, sts.status.updatedReplicas, sts.status.currentRevision], [2, 1, rev2]);

  // Going back does not replace the stuck pod by itself (as upstream); deleting it does.
  await k('PATCH', `${STS}/db`, setImage('acme/db:2'), SMP);
  await sim.settled();
  assert.equal(imageOf((await podsOf(k, 'app=db'))[2]), 'acme/badimage:3');
  await k('DELETE', '/api/v1/namespaces/default/pods/db-2');
  await sim.settled();
  pods = await podsOf(k, 'app=db');
  assert.ok(pods.every((p) => imageOf(p) === 'acme/db:2' && ready(p)));
  sts = (await k('GET', `${STS}/db`)).body;
  assert.deepEqual([sts.status.updateRevision, sts.status.currentRevision, sts.status.updatedReplicas], [rev2, rev2, 3]);
  assert.equal((await k('GET', `/apis/apps/v1/namespaces/default/controllerrevisions/${rev2}`)).body.revision, 4);
});

test('statefulset: Parallel creates every pod at once with its claims; OnDelete replaces a pod only when it is deleted', async (t) => {
  const { sim, k } = await start(t);
  sim.inject({ kind: 'image-pull-fail', image: 'acme/slow:1' });
  const par = statefulSet('par', 'acme/slow:1');
  par.spec.podManagementPolicy = 'Parallel';
  par.spec.volumeClaimTemplates = [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } } } }];
  await k('POST', STS, par);
  await sim.settled();
  const parPods = await podsOf(k, 'app=par');
  assert.deepEqual(names(parPods), ['par-0', 'par-1', 'par-2']);
  assert.ok(parPods.every((p) => waitingReason(p) === 'ImagePullBackOff'));
  assert.deepEqual(parPods[1].spec.volumes, [{ name: 'data', persistentVolumeClaim: { claimName: 'data-par-1' } }]);
  const claims = (await k('GET', '/api/v1/namespaces/default/persistentvolumeclaims')).body.items;
  assert.deepEqual(
    claims.map((c: J) => [c.metadata.name, c.status.phase, c.status.capacity.storage]),
    [
      ['data-par-0', 'Bound', '2Gi'],
      ['data-par-1', 'Bound', '2Gi'],
      ['data-par-2', 'Bound', '2Gi'],
    ],
  );

  const od = statefulSet('od', 'acme/od:1', 2);
  od.spec.updateStrategy = { type: 'OnDelete' };
  await k('POST', STS, od);
  await sim.settled();
  await k('PATCH', `${STS}/od`, setImage('acme/od:2'), SMP);
  await sim.settled();
  assert.deepEqual((await podsOf(k, 'app=od')).map(imageOf), ['acme/od:1', 'acme/od:1']);
  await k('DELETE', '/api/v1/namespaces/default/pods/od-1');
  await sim.settled();
  assert.deepEqual((await podsOf(k, 'app=od')).map(imageOf), ['acme/od:1', 'acme/od:2']);
  const sts = (await k('GET', `${STS}/od`)).body;
  assert.deepEqual([sts.status.replicas, sts.status.currentReplicas, sts.status.updatedReplicas, sts.status.readyReplicas], [2, 1, 1, 2]);
  assert.notEqual(sts.status.currentRevision, sts.status.updateRevision);
});

test('daemonset: one pod per node, rolling update within maxUnavailable, follows nodes joining and leaving', async (t) => {
  const { sim, k } = await start(t);
  const nodes = (await k('GET', '/api/v1/nodes')).body;
  assert.equal(nodes.kind, 'NodeList');
  assert.deepEqual(
    nodes.items.map((n: J) => [n.metadata.name, n.status.conditions.find((c: J) => c.type === 'Ready').status]),
    [
      ['node-1', 'True'],
      ['node-2', 'True'],
    ],
  );

  const created = await k('POST', DS, daemonSet('agent', 'acme/agent:1'));
  assert.equal(created.status, 201);
  assert.deepEqual(created.body.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
  await sim.settled();
  let pods = await podsOf(k, 'app=agent');
  assert.deepEqual(pods.map((p) => p.spec.nodeName).sort(), ['node-1', 'node-2']);
  assert.ok(
    pods.every(
      (p) =>
        /^agent-[a-z0-9]{5}$/.test(p.metadata.name) &&
        ready(p) &&
        p.metadata.ownerReferences[0].kind === 'DaemonSet' &&
        p.metadata.labels['controller-revision-hash'],
    ),
  );
  let ds = (await k('GET', `${DS}/agent`)).body;
  assert.deepEqual(ds.status, {
    currentNumberScheduled: 2,
    numberMisscheduled: 0,
    desiredNumberScheduled: 2,
    numberReady: 2,
    observedGeneration: 1,
    updatedNumberScheduled: 2,
    numberAvailable: 2,
  });

  // maxUnavailable 1: a template whose image never pulls takes down one node's pod, not both.
  const first = new Set(names(pods));
  await k('PATCH', `${DS}/agent`, setImage('acme/badimage:2'), SMP);
  await sim.settled();
  pods = await podsOf(k, 'app=agent');
  assert.deepEqual(pods.map(imageOf).sort(), ['acme/agent:1', 'acme/badimage:2']);
  ds = (await k('GET', `${DS}/agent`)).body;
  assert.deepEqual([ds.status.observedGeneration, ds.status.updatedNumberScheduled, ds.status.numberReady, ds.status.numberUnavailable], [2, 1, 1, 1]);

  await k('PATCH', `${DS}/agent`, setImage('acme/agent:2'), SMP);
  await sim.settled();
  pods = await podsOf(k, 'app=agent');
  assert.equal(pods.length, 2);
  assert.ok(pods.every((p) => imageOf(p) === 'acme/agent:2' && ready(p) && !first.has(p.metadata.name)));
  ds = (await k('GET', `${DS}/agent`)).body;
  assert.deepEqual(ds.status, {
    currentNumberScheduled: 2,
    numberMisscheduled: 0,
    desiredNumberScheduled: 2,
    numberReady: 2,
    observedGeneration: 3,
    updatedNumberScheduled: 2,
    numberAvailable: 2,
  });

  // A node joins: it gets a pod; it leaves: its pod goes with it.
  assert.equal((await k('POST', '/api/v1/nodes', { metadata: { name: 'node-3' } })).status, 201);
  await sim.settled();
  assert.deepEqual((await podsOf(k, 'app=agent')).map((p) => p.spec.nodeName).sort(), ['node-1', 'node-2', 'node-3']);
  assert.equal((await k('GET', `${DS}/agent`)).body.status.desiredNumberScheduled, 3);
  await k('DELETE', '/api/v1/nodes/node-3');
  await sim.settled();
  assert.deepEqual((await podsOf(k, 'app=agent')).map((p) => p.spec.nodeName).sort(), ['node-1', 'node-2']);
  assert.equal((await k('GET', `${DS}/agent`)).body.status.desiredNumberScheduled, 2);
});

test('nodes: the nodes option sets the cluster; pods spread over Ready nodes and wait while none fits', async (t) => {
  const { sim, k } = await start(t, { nodes: 3 });
  assert.deepEqual(names((await k('GET', '/api/v1/nodes')).body.items), ['node-1', 'node-2', 'node-3']);
  await k('POST', '/apis/apps/v1/namespaces/default/deployments', deployment('web', 'nginx:1', 3));
  await k('POST', '/api/v1/namespaces/default/pods', {
    metadata: { name: 'picky' },
    spec: { nodeSelector: { disk: 'ssd' }, containers: [{ name: 'main', image: 'nginx:1' }] },
  });
  await sim.settled();
  const pods = await podsOf(k, 'app=web');
  assert.deepEqual(pods.map((p) => p.spec.nodeName).sort(), ['node-1', 'node-2', 'node-3']);
  const node2 = (await k('GET', '/api/v1/nodes/node-2')).body;
  const onNode2 = pods.find((p) => p.spec.nodeName === 'node-2');
  assert.equal(onNode2.status.hostIP, node2.status.addresses.find((a: J) => a.type === 'InternalIP').address);
  assert.ok(onNode2.status.podIP.startsWith(node2.spec.podCIDR.replace(/0\/24$/, '')));

  let picky = (await k('GET', '/api/v1/namespaces/default/pods/picky')).body;
  assert.equal(picky.spec.nodeName, undefined);
  assert.deepEqual(
    [picky.status.phase, picky.status.conditions[0].type, picky.status.conditions[0].status, picky.status.conditions[0].reason],
    ['Pending', 'PodScheduled', 'False', 'Unschedulable'],
  );
  await k('PATCH', '/api/v1/nodes/node-2', { metadata: { labels: { disk: 'ssd' } } });
  await sim.settled();
  picky = (await k('GET', '/api/v1/namespaces/default/pods/picky')).body;
  assert.equal(picky.spec.nodeName, 'node-2');
  assert.ok(ready(picky));
});

test('nodes: a required node affinity places pods on the nodes one of its terms matches, and keeps them Pending while none does', async (t) => {
  const { sim, k } = await start(t, { nodes: 3 });
  await k('PATCH', '/api/v1/nodes/node-1', { metadata: { labels: { 'topology.kubernetes.io/zone': 'az-1' } } });
  await k('PATCH', '/api/v1/nodes/node-3', { metadata: { labels: { 'topology.kubernetes.io/zone': 'az-2', disk: 'ssd' } } });
  const affine = (name: string, terms: J[]) =>
    k('POST', '/api/v1/namespaces/default/pods', {
      metadata: { name },
      spec: {
        affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } },
        containers: [{ name: 'main', image: 'nginx:1' }],
      },
    });
  const zone = (op: string, values?: string[]) => ({ key: 'topology.kubernetes.io/zone', operator: op, ...(values ? { values } : {}) });
  await affine('in-az-2', [{ matchExpressions: [zone('In', ['az-2'])] }]);
  await affine('ssd-or-az-1', [
    { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }, zone('In', ['az-1'])] },
    { matchExpressions: [zone('In', ['az-1'])] },
  ]);
  await affine('zoneless', [{ matchExpressions: [zone('DoesNotExist')] }]);
  await affine('by-name', [{ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['node-1', 'node-2'] }] }]);
  await affine('nowhere', [{ matchExpressions: [zone('In', ['az-9'])] }]);
  await affine('empty-term', [{}]);
  await sim.settled();
  const nodeOf = async (name: string) => (await k('GET', `/api/v1/namespaces/default/pods/${name}`)).body.spec.nodeName;
  assert.equal(await nodeOf('in-az-2'), 'node-3');
  assert.equal(await nodeOf('ssd-or-az-1'), 'node-1');
  assert.equal(await nodeOf('zoneless'), 'node-2');
  assert.equal(await nodeOf('by-name'), 'node-3');
  assert.equal(await nodeOf('nowhere'), undefined, 'no node is in az-9');
  assert.equal(await nodeOf('empty-term'), undefined, 'an empty term matches no node');
  // The affinity is kept as given.
  assert.deepEqual((await k('GET', '/api/v1/namespaces/default/pods/in-az-2')).body.spec.affinity, {
    nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [zone('In', ['az-2'])] }] } },
  });
});

test('server-side apply: fieldManager required, 201 on create, merge on update, drops fields no longer applied, conflicts and force', async (t) => {
  const { k } = await start(t);
  const url = '/apis/apps/v1/namespaces/default/deployments/api';
  const yaml = [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: api',
    '  labels: {app: api, tier: backend}',
    'spec:',
    '  replicas: 2',
    '  selector: {matchLabels: {app: api}}',
    '  template:',
    '    metadata: {labels: {app: api}}',
    '    spec:',
    '      containers:',
    '        - name: main',
    '          image: acme/api:1',
    '          env: [{name: MODE, value: primary}]',
  ].join('\n');
  const anonymous = await k('PATCH', url, yaml, APPLY);
  assert.deepEqual([anonymous.status, anonymous.body.reason, anonymous.body.details.kind], [422, 'Invalid', 'PatchOptions']);
  assert.match(anonymous.body.message, /fieldManager: Required value: is required for apply patch/);
  assert.equal((await k('GET', url)).status, 404);

  const created = await k('PATCH', `${url}?fieldManager=vnfm`, yaml, APPLY);
  assert.equal(created.status, 201);
  assert.deepEqual([created.body.spec.replicas, created.body.spec.template.spec.containers[0].env], [2, [{ name: 'MODE', value: 'primary' }]]);
  const [entry] = created.body.metadata.managedFields;
  assert.deepEqual(
    [created.body.metadata.managedFields.length, entry.manager, entry.operation, entry.apiVersion, entry.fieldsType],
    [1, 'vnfm', 'Apply', 'apps/v1', 'FieldsV1'],
  );
  assert.match(entry.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.deepEqual(entry.fieldsV1['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"main"}']['f:image'], {});

  // Someone else adds a label; re-applying (JSON is YAML too) without tier and env, with a new image and replicas.
  await k('PATCH', url, { metadata: { labels: { owner: 'ops' } } });
  const next = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'api', labels: { app: 'api' } },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'api' } },
      template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'main', image: 'acme/api:2' }] } },
    },
  };
  const updated = await k('PATCH', `${url}?fieldManager=vnfm&force=true`, next, APPLY);
  assert.equal(updated.status, 200);
  assert.deepEqual(updated.body.metadata.labels, { app: 'api', owner: 'ops' });
  assert.deepEqual([updated.body.spec.replicas, updated.body.metadata.generation], [3, 2]);
  assert.deepEqual(updated.body.spec.template.spec.containers, [{ name: 'main', image: 'acme/api:2' }]);

  // Another applier may not take replicas over without force; with force it does.
  const scaler = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'api' }, spec: { replicas: 5 } };
  const clash = await k('PATCH', `${url}?fieldManager=autoscaler`, scaler, APPLY);
  assert.deepEqual([clash.status, clash.body.reason], [409, 'Conflict']);
  assert.equal(clash.body.message, 'Apply failed with 1 conflict: conflict with "vnfm": .spec.replicas');
  const forced = await k('PATCH', `${url}?fieldManager=autoscaler&force=true`, scaler, APPLY);
  assert.equal(forced.body.spec.replicas, 5);
  const managers = forced.body.metadata.managedFields;
  assert.deepEqual(
    managers.map((m: J) => m.manager),
    ['vnfm', 'autoscaler'],
  );
  assert.equal(managers[0].fieldsV1['f:spec']['f:replicas'], undefined);
  assert.deepEqual(managers[1].fieldsV1['f:spec']['f:replicas'], {});
  // Applying the same value someone else owns is no conflict.
  assert.equal((await k('PATCH', `${url}?fieldManager=third`, scaler, APPLY)).status, 200);

  assert.equal((await k('PATCH', `${url}?force=true`, { spec: { replicas: 1 } })).status, 422);
  assert.equal((await k('PATCH', `${url}?fieldManager=vnfm`, { metadata: { name: 'api' } }, APPLY)).status, 400);
});

test('json patch: add, remove, replace, move, copy and test; a failed test changes nothing; arrays by index and "-"', async (t) => {
  const { k } = await start(t);
  const url = '/api/v1/namespaces/default/configmaps/cfg';
  await k('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'cfg', labels: { a: '1' } }, data: { x: '1', y: '2' } });
  const res = await k(
    'PATCH',
    url,
    [
      { op: 'test', path: '/data/x', value: '1' },
      { op: 'add', path: '/data/z', value: '3' },
      { op: 'remove', path: '/data/y' },
      { op: 'replace', path: '/data/x', value: '10' },
      { op: 'copy', from: '/data/z', path: '/data/w' },
      { op: 'move', from: '/metadata/labels/a', path: '/metadata/labels/b' },
      { op: 'add', path: '/metadata/labels/app.kubernetes.io~1name', value: 'cfg' },
    ],
    JSON_PATCH,
  );
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.data, { x: '10', z: '3', w: '3' });
  assert.deepEqual(res.body.metadata.labels, { b: '1', 'app.kubernetes.io/name': 'cfg' });

  const failed = await k(
    'PATCH',
    url,
    [
      { op: 'replace', path: '/data/x', value: 'changed' },
      { op: 'test', path: '/data/z', value: 'nope' },
    ],
    JSON_PATCH,
  );
  assert.deepEqual([failed.status, failed.body.kind, failed.body.reason], [422, 'Status', 'Invalid']);
  assert.equal((await k('GET', url)).body.data.x, '10');
  assert.equal((await k('PATCH', url, [{ op: 'remove', path: '/data/missing' }], JSON_PATCH)).status, 422);
  assert.equal((await k('PATCH', url, { op: 'add', path: '/data/q', value: '1' }, JSON_PATCH)).status, 400);

  await k('POST', '/apis/apps/v1/namespaces/default/deployments', deployment('d', 'app:1', 0));
  const arrays = await k(
    'PATCH',
    '/apis/apps/v1/namespaces/default/deployments/d',
    [
      { op: 'add', path: '/spec/template/spec/containers/-', value: { name: 'last', image: 'b:1' } },
      { op: 'add', path: '/spec/template/spec/containers/0', value: { name: 'first', image: 'a:1' } },
      { op: 'replace', path: '/spec/template/spec/containers/1/image', value: 'app:2' },
    ],
    JSON_PATCH,
  );
  assert.deepEqual(
    arrays.body.spec.template.spec.containers.map((c: J) => `${c.name}=${c.image}`),
    ['first=a:1', 'main=app:2', 'last=b:1'],
  );
  const scaled = await k('PATCH', '/apis/apps/v1/namespaces/default/deployments/d/scale', [{ op: 'replace', path: '/spec/replicas', value: 2 }], JSON_PATCH);
  assert.deepEqual([scaled.body.kind, scaled.body.spec.replicas], ['Scale', 2]);
});

test('strategic merge patch: containers, ports, env, volumes and volumeMounts merge by key; $patch delete and replace; other lists replaced', async (t) => {
  const { k } = await start(t);
  const d = deployment('web', 'nginx:1', 0);
  d.spec.template.metadata.annotations = { keep: 'x', drop: 'y' };
  d.spec.template.spec = {
    containers: [
      {
        name: 'main',
        image: 'nginx:1',
        args: ['a', 'x'],
        ports: [{ containerPort: 80, name: 'http' }],
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ],
        volumeMounts: [{ name: 'data', mountPath: '/data' }],
      },
      { name: 'sidecar', image: 'envoy:1' },
    ],
    volumes: [{ name: 'data', emptyDir: {} }],
  };
  await k('POST', '/apis/apps/v1/namespaces/default/deployments', d);
  const url = '/apis/apps/v1/namespaces/default/deployments/web';
  const first = await k(
    'PATCH',
    url,
    {
      spec: {
        template: {
          metadata: { annotations: { drop: null, added: 'z' } },
          spec: {
            containers: [
              {
                name: 'main',
                image: 'nginx:2',
                ports: [{ containerPort: 443, name: 'https' }],
                env: [
                  { name: 'B', value: '20' },
                  { name: 'C', value: '3' },
                ],
                volumeMounts: [{ mountPath: '/data', readOnly: true }],
              },
              { name: 'sidecar', $patch: 'delete' },
              { name: 'exporter', image: 'exporter:1' },
            ],
            volumes: [{ name: 'cache', emptyDir: { medium: 'Memory' } }],
          },
        },
      },
    },
    SMP,
  );
  assert.equal(first.status, 200);
  let tpl = first.body.spec.template;
  let main = tpl.spec.containers[0];
  assert.deepEqual(
    tpl.spec.containers.map((c: J) => c.name),
    ['main', 'exporter'],
  );
  assert.equal(main.image, 'nginx:2');
  assert.deepEqual(main.args, ['a', 'x']);
  assert.deepEqual(main.ports, [
    { containerPort: 80, name: 'http' },
    { containerPort: 443, name: 'https' },
  ]);
  assert.deepEqual(main.env, [
    { name: 'A', value: '1' },
    { name: 'B', value: '20' },
    { name: 'C', value: '3' },
  ]);
  assert.deepEqual(main.volumeMounts, [{ name: 'data', mountPath: '/data', readOnly: true }]);
  assert.deepEqual(tpl.spec.volumes, [
    { name: 'data', emptyDir: {} },
    { name: 'cache', emptyDir: { medium: 'Memory' } },
  ]);
  assert.deepEqual(tpl.metadata.annotations, { keep: 'x', added: 'z' });

  const second = await k(
    'PATCH',
    url,
    {
      spec: {
        template: {
          metadata: { annotations: { $patch: 'replace', only: '1' } },
          spec: {
            containers: [{ name: 'main', args: ['b'], env: [{ name: 'A', $patch: 'delete' }] }],
            volumes: [{ $patch: 'replace' }, { name: 'scratch', emptyDir: {} }],
          },
        },
      },
    },
    SMP,
  );
  tpl = second.body.spec.template;
  main = tpl.spec.containers[0];
  assert.deepEqual(tpl.metadata.annotations, { only: '1' });
  assert.deepEqual([main.image, main.args, main.env.map((e: J) => e.name)], ['nginx:2', ['b'], ['B', 'C']]);
  assert.deepEqual(tpl.spec.volumes, [{ name: 'scratch', emptyDir: {} }]);

  // A JSON merge patch, by contrast, replaces the list whole.
  const merged = await k('PATCH', url, { spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx:3' }] } } } });
  assert.deepEqual(merged.body.spec.template.spec.containers, [{ name: 'main', image: 'nginx:3' }]);
});

test('delete propagation: Orphan keeps dependants without owner references, Foreground and Background remove them', async (t) => {
  const { sim, k } = await start(t);
  await k('POST', '/apis/apps/v1/namespaces/default/deployments', deployment('keep', 'nginx:1', 2));
  await k('POST', STS, statefulSet('db', 'acme/db:1', 2));
  await k('POST', DS, daemonSet('agent', 'acme/agent:1'));
  await k('POST', STS, statefulSet('bg', 'acme/bg:1', 1));
  await sim.settled();

  const orphaned = await k('DELETE', '/apis/apps/v1/namespaces/default/deployments/keep?propagationPolicy=Orphan');
  assert.equal(orphaned.status, 200);
  assert.deepEqual(orphaned.body.metadata.finalizers, ['orphan']);
  assert.ok(orphaned.body.metadata.deletionTimestamp);
  // DeleteOptions in the body work as well as the query.
  await k('DELETE', `${STS}/db`, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Orphan' });
  await sim.settled();
  assert.equal((await k('GET', '/apis/apps/v1/namespaces/default/deployments/keep')).status, 404);
  const sets = (await k('GET', '/apis/apps/v1/namespaces/default/replicasets?labelSelector=app%3Dkeep')).body.items;
  assert.equal(sets.length, 1);
  assert.equal(sets[0].metadata.ownerReferences, undefined);
  const kept = await podsOf(k, 'app=keep');
  assert.ok(kept.length === 2 && kept.every((p) => ready(p) && p.metadata.ownerReferences[0].uid === sets[0].metadata.uid));
  assert.equal((await k('GET', `${STS}/db`)).status, 404);
  const dbPods = await podsOf(k, 'app=db');
  assert.deepEqual(names(dbPods), ['db-0', 'db-1']);
  assert.ok(dbPods.every((p) => p.metadata.ownerReferences === undefined));
  // A StatefulSet created again adopts the orphans instead of replacing them.
  const again = await k('POST', STS, statefulSet('db', 'acme/db:1', 2));
  await sim.settled();
  const adopted = await podsOf(k, 'app=db');
  assert.deepEqual(
    adopted.map((p) => p.metadata.uid),
    dbPods.map((p) => p.metadata.uid),
  );
  assert.ok(adopted.every((p) => p.metadata.ownerReferences[0].uid === again.body.metadata.uid));
  assert.equal((await k('GET', `${STS}/db`)).body.status.readyReplicas, 2);

  const foreground = await k('DELETE', `${DS}/agent?propagationPolicy=Foreground`);
  assert.deepEqual([foreground.status, foreground.body.kind, foreground.body.metadata.finalizers], [200, 'DaemonSet', ['foregroundDeletion']]);
  const background = await k('DELETE', `${STS}/bg`);
  assert.deepEqual([background.body.kind, background.body.status], ['Status', 'Success']);
  await sim.settled();
  assert.equal((await k('GET', `${DS}/agent`)).status, 404);
  assert.deepEqual(await podsOf(k, 'app=agent'), []);
  assert.deepEqual(await podsOf(k, 'app=bg'), []);
  const revisions = (await k('GET', '/apis/apps/v1/namespaces/default/controllerrevisions')).body.items;
  assert.ok(revisions.length > 0 && revisions.every((r: J) => r.metadata.name.startsWith('db-')));

  const bad = await k('DELETE', '/api/v1/namespaces/default/pods/db-0?propagationPolicy=Sometimes');
  assert.deepEqual([bad.status, bad.body.reason], [422, 'Invalid']);
});

test('list: label selectors =, !=, in, notin, key and !key on every kind; /_sim/state counts the workloads', async (t) => {
  const { sim, k } = await start(t);
  await k('POST', STS, statefulSet('a', 'acme/a:1', 1, { tier: 'db' }));
  await k('POST', STS, statefulSet('b', 'acme/b:1', 0, { tier: 'cache' }));
  await k('POST', STS, statefulSet('c', 'acme/c:1', 0));
  await k('POST', DS, daemonSet('agent', 'acme/agent:1'));
  await sim.settled();
  const list = async (path: string, selector: string) => {
    const res = await k('GET', `${path}?labelSelector=${encodeURIComponent(selector)}`);
    assert.equal(res.status, 200, `${selector}: ${JSON.stringify(res.body)}`);
    return names(res.body.items);
  };
  assert.deepEqual(await list(STS, 'tier in (db,cache)'), ['a', 'b']);
  assert.deepEqual(await list(STS, 'tier notin (db)'), ['b', 'c']);
  assert.deepEqual(await list(STS, 'tier'), ['a', 'b']);
  assert.deepEqual(await list(STS, '!tier'), ['c']);
  assert.deepEqual(await list(STS, 'tier!=db'), ['b', 'c']);
  assert.deepEqual(await list(STS, 'app=a,tier==db'), ['a']);
  assert.deepEqual(await list(DS, 'app in (agent)'), ['agent']);
  assert.deepEqual(await list('/api/v1/nodes', 'kubernetes.io/hostname notin (node-1)'), ['node-2']);
  assert.deepEqual(await list('/api/v1/namespaces/default/pods', 'controller-revision-hash,!statefulset.kubernetes.io/pod-name').then((n) => n.length), 2);
  assert.deepEqual(await list('/api/v1/namespaces/default/pods', 'statefulset.kubernetes.io/pod-name'), ['a-0']);
  assert.deepEqual(await list('/apis/apps/v1/controllerrevisions', 'app in (a,b)').then((n) => n.length), 2);
  assert.equal((await k('GET', `${STS}?labelSelector=${encodeURIComponent('tier in db')}`)).status, 400);

  const state = (await k('GET', '/_sim/state')).body;
  assert.deepEqual(state.namespaces.default.statefulsets, { count: 3, names: ['a', 'b', 'c'] });
  assert.deepEqual(state.namespaces.default.daemonsets, { count: 1, names: ['agent'] });
  assert.equal(state.namespaces.default.pods.count, 3);
  assert.deepEqual(state.nodes, { count: 2, names: ['node-1', 'node-2'] });
  assert.equal(state.busy, 0);
});

test('image pull failure: badimage and injected faults hold StatefulSet and DaemonSet pods in ImagePullBackOff', async (t) => {
  const { sim, k } = await start(t);
  await k('POST', STS, statefulSet('broken', 'registry/badimage:1', 2));
  sim.inject({ kind: 'image-pull-fail', image: 'acme/agent:9' });
  await k('POST', DS, daemonSet('faulty', 'acme/agent:9'));
  await sim.settled();
  const stsPods = await podsOf(k, 'app=broken');
  assert.deepEqual(names(stsPods), ['broken-0']);
  assert.deepEqual([stsPods[0].status.phase, waitingReason(stsPods[0])], ['Pending', 'ImagePullBackOff']);
  const sts = (await k('GET', `${STS}/broken`)).body;
  assert.deepEqual([sts.status.replicas, sts.status.readyReplicas, sts.status.updatedReplicas], [1, undefined, 1]);
  const dsPods = await podsOf(k, 'app=faulty');
  assert.equal(dsPods.length, 2);
  assert.ok(dsPods.every((p) => p.status.phase === 'Pending' && waitingReason(p) === 'ImagePullBackOff'));
  const ds = (await k('GET', `${DS}/faulty`)).body;
  assert.deepEqual([ds.status.desiredNumberScheduled, ds.status.numberReady, ds.status.numberAvailable, ds.status.numberUnavailable], [2, 0, undefined, 2]);
});

// The Kubernetes simulator as the official @kubernetes/client-node sees it (the client the
// product's Kubernetes driver uses): bearer token over plain HTTP, namespaces, Deployments rolled
// out and updated, Services, StatefulSets and DaemonSets, nodes, server-side apply and the generic
// KubernetesObjectApi, JSON and strategic merge patches, delete propagation, image pull failures.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type V1ConfigMap,
  type V1Deployment,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import { startKubernetesSimulator, type KubernetesSimulator } from '#local/kubernetes/simulator.ts';

let sim: KubernetesSimulator;
let apps: AppsV1Api;
let core: CoreV1Api;
let objects: KubernetesObjectApi;

before(async () => {
  sim = await startKubernetesSimulator({ timeScale: 0.01 });
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'sim', server: sim.url, skipTLSVerify: true }],
    users: [{ name: 'vnfm', token: sim.token }],
    contexts: [{ name: 'sim', cluster: 'sim', user: 'vnfm' }],
    currentContext: 'sim',
  });
  apps = kc.makeApiClient(AppsV1Api);
  core = kc.makeApiClient(CoreV1Api);
  objects = KubernetesObjectApi.makeApiClient(kc);
});

const isNotFound = (error: { code?: number }) => error.code === 404;

function statefulSet(name: string, image: string, replicas: number): V1StatefulSet {
  return {
    metadata: { name },
    spec: {
      replicas,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }] } },
    },
  };
}
after(async () => {
  await sim.close();
});

it('rolls out, updates and deletes a Deployment through @kubernetes/client-node', async () => {
  await core.createNamespace({ body: { metadata: { name: 'vnf-a' } } });
  await apps.createNamespacedDeployment({
    namespace: 'vnf-a',
    body: {
      metadata: { name: 'vdu1', labels: { vnfInstanceId: 'i-1' } },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'vdu1' } },
        template: { metadata: { labels: { app: 'vdu1' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.26-alpine' }] } },
      },
    },
  });
  await core.createNamespacedService({ namespace: 'vnf-a', body: { metadata: { name: 'vdu1' }, spec: { selector: { app: 'vdu1' }, ports: [{ port: 80 }] } } });
  await sim.settled();
  const ready = await apps.readNamespacedDeployment({ namespace: 'vnf-a', name: 'vdu1' });
  assert.equal(ready.status?.readyReplicas, 2);
  const pods = await core.listNamespacedPod({ namespace: 'vnf-a', labelSelector: 'app=vdu1' });
  assert.deepEqual(
    pods.items.map((p) => p.status?.phase),
    ['Running', 'Running'],
  );
  assert.match((await core.readNamespacedService({ namespace: 'vnf-a', name: 'vdu1' })).spec?.clusterIP ?? '', /^10\.96\./);

  const before = new Set(pods.items.map((p) => p.metadata?.name));
  ready.spec!.template.spec!.containers[0]!.image = 'nginx:1.27-alpine';
  await apps.replaceNamespacedDeployment({ namespace: 'vnf-a', name: 'vdu1', body: ready });
  await sim.settled();
  const updated = await core.listNamespacedPod({ namespace: 'vnf-a', labelSelector: 'app=vdu1' });
  assert.equal(updated.items.length, 2);
  for (const pod of updated.items) {
    assert.ok(!before.has(pod.metadata?.name));
    assert.equal(pod.spec?.containers[0]?.image, 'nginx:1.27-alpine');
  }

  await apps.deleteNamespacedDeployment({ namespace: 'vnf-a', name: 'vdu1' });
  await sim.settled();
  assert.equal((await core.listNamespacedPod({ namespace: 'vnf-a' })).items.length, 0);
  await assert.rejects(apps.readNamespacedDeployment({ namespace: 'vnf-a', name: 'vdu1' }), (error: { code?: number }) => error.code === 404);
});

it('rolls out a StatefulSet in order, updates it by revision, recreates a deleted pod under its name, scales and deletes it', async () => {
  const namespace = 'vnf-sts';
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await apps.createNamespacedStatefulSet({ namespace, body: statefulSet('db', 'postgres:16.1', 2) });
  await sim.settled();
  let sts = await apps.readNamespacedStatefulSet({ namespace, name: 'db' });
  const first = sts.status?.updateRevision;
  assert.deepEqual([sts.status?.replicas, sts.status?.readyReplicas, sts.status?.currentRevision], [2, 2, first]);
  let pods = await core.listNamespacedPod({ namespace, labelSelector: 'app=db' });
  assert.deepEqual(
    pods.items.map((p) => p.metadata?.name),
    ['db-0', 'db-1'],
  );
  assert.ok(pods.items.every((p) => p.metadata?.labels?.['controller-revision-hash'] === first && p.metadata?.ownerReferences?.[0]?.kind === 'StatefulSet'));

  sts.spec!.template.spec!.containers[0]!.image = 'postgres:16.2';
  await apps.replaceNamespacedStatefulSet({ namespace, name: 'db', body: sts });
  await sim.settled();
  sts = await apps.readNamespacedStatefulSet({ namespace, name: 'db' });
  const status = sts.status!;
  // What `kubectl rollout status statefulset/db` waits for.
  assert.ok((status.observedGeneration ?? 0) >= (sts.metadata?.generation ?? 1));
  assert.deepEqual([status.replicas, status.updatedReplicas, status.readyReplicas, status.currentRevision], [2, 2, 2, status.updateRevision]);
  assert.notEqual(status.updateRevision, first);
  pods = await core.listNamespacedPod({ namespace, labelSelector: 'app=db' });
  assert.ok(
    pods.items.every((p) => p.spec?.containers[0]?.image === 'postgres:16.2' && p.metadata?.labels?.['controller-revision-hash'] === status.updateRevision),
  );
  const revisions = await apps.listNamespacedControllerRevision({ namespace });
  assert.deepEqual(
    revisions.items.map((r) => [r.metadata?.name, r.revision]).sort(),
    [
      [first, 1],
      [status.updateRevision, 2],
    ].sort(),
  );

  const uid = pods.items[0]!.metadata?.uid;
  await core.deleteNamespacedPod({ namespace, name: 'db-0' });
  await sim.settled();
  const again = await core.readNamespacedPod({ namespace, name: 'db-0' });
  assert.notEqual(again.metadata?.uid, uid);
  assert.equal(again.status?.phase, 'Running');

  // The client's default patch type is JSON Patch.
  const scale = await apps.patchNamespacedStatefulSetScale({ namespace, name: 'db', body: [{ op: 'replace', path: '/spec/replicas', value: 3 }] });
  assert.equal(scale.spec?.replicas, 3);
  await sim.settled();
  assert.deepEqual(
    (await core.listNamespacedPod({ namespace, labelSelector: 'app=db' })).items.map((p) => p.metadata?.name),
    ['db-0', 'db-1', 'db-2'],
  );

  await apps.deleteNamespacedStatefulSet({ namespace, name: 'db', propagationPolicy: 'Foreground' });
  await sim.settled();
  await assert.rejects(apps.readNamespacedStatefulSet({ namespace, name: 'db' }), isNotFound);
  assert.equal((await core.listNamespacedPod({ namespace })).items.length, 0);
  assert.equal((await apps.listNamespacedControllerRevision({ namespace })).items.length, 0);
});

it('runs a DaemonSet pod on every node and rolls it to a new image with a strategic merge patch', async () => {
  const namespace = 'vnf-ds';
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  const nodes = await core.listNode();
  assert.deepEqual(
    nodes.items.map((n) => [n.metadata?.name, n.status?.conditions?.find((c) => c.type === 'Ready')?.status]),
    [
      ['node-1', 'True'],
      ['node-2', 'True'],
    ],
  );
  await apps.createNamespacedDaemonSet({
    namespace,
    body: {
      metadata: { name: 'agent' },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: {
          metadata: { labels: { app: 'agent' } },
          spec: { containers: [{ name: 'agent', image: 'fluent-bit:3.0', ports: [{ containerPort: 2020 }] }] },
        },
      },
    },
  });
  await sim.settled();
  let pods = await core.listNamespacedPod({ namespace, labelSelector: 'app=agent' });
  assert.deepEqual(pods.items.map((p) => p.spec?.nodeName).sort(), ['node-1', 'node-2']);
  const before = new Set(pods.items.map((p) => p.metadata?.name));

  await apps.patchNamespacedDaemonSet(
    { namespace, name: 'agent', body: { spec: { template: { spec: { containers: [{ name: 'agent', image: 'fluent-bit:3.1' }] } } } } },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
  );
  await sim.settled();
  const ds = await apps.readNamespacedDaemonSet({ namespace, name: 'agent' });
  // Merged by container name: the port survives the image change.
  assert.deepEqual(
    ds.spec?.template.spec?.containers.map((c) => [c.name, c.image, c.ports?.[0]?.containerPort]),
    [['agent', 'fluent-bit:3.1', 2020]],
  );
  const status = ds.status!;
  assert.deepEqual(
    [
      status.observedGeneration,
      status.desiredNumberScheduled,
      status.currentNumberScheduled,
      status.updatedNumberScheduled,
      status.numberReady,
      status.numberAvailable,
      status.numberMisscheduled,
    ],
    [2, 2, 2, 2, 2, 2, 0],
  );
  pods = await core.listNamespacedPod({ namespace, labelSelector: 'app=agent' });
  assert.equal(pods.items.length, 2);
  assert.ok(pods.items.every((p) => !before.has(p.metadata?.name) && p.spec?.containers[0]?.image === 'fluent-bit:3.1' && p.status?.phase === 'Running'));
});

it('server-side applies a Deployment through KubernetesObjectApi (create, update), reads, lists, JSON-patches and orphans it', async () => {
  const namespace = 'vnf-ssa';
  await objects.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  const manifest = (image: string, replicas: number): V1Deployment => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'vdu', namespace, labels: { vnfInstanceId: 'i-9' } },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'vdu' } },
      template: { metadata: { labels: { app: 'vdu' } }, spec: { containers: [{ name: 'vdu', image }] } },
    },
  });
  const created = await objects.patch(manifest('vnf/vdu:1', 1), undefined, undefined, 'vnfm', true, PatchStrategy.ServerSideApply);
  assert.deepEqual(
    created.metadata?.managedFields?.map((m) => [m.manager, m.operation]),
    [['vnfm', 'Apply']],
  );
  await sim.settled();
  const updated = await objects.patch(manifest('vnf/vdu:2', 2), undefined, undefined, 'vnfm', true, PatchStrategy.ServerSideApply);
  assert.equal(updated.metadata?.generation, 2);
  await sim.settled();

  const read = (await objects.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'vdu', namespace } })) as V1Deployment;
  assert.deepEqual([read.spec?.template.spec?.containers[0]?.image, read.status?.readyReplicas, read.status?.updatedReplicas], ['vnf/vdu:2', 2, 2]);
  const listed = await objects.list('apps/v1', 'Deployment', namespace, undefined, undefined, undefined, undefined, 'vnfInstanceId in (i-9,i-10)');
  assert.deepEqual(
    listed.items.map((d) => d.metadata?.name),
    ['vdu'],
  );
  assert.equal((await objects.list('apps/v1', 'Deployment', namespace, undefined, undefined, undefined, undefined, '!vnfInstanceId')).items.length, 0);
  const config = (await objects.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'vdu-config', namespace },
    data: { mode: 'active' },
  } as V1ConfigMap)) as V1ConfigMap;
  assert.equal(config.data?.mode, 'active');

  const patched = await apps.patchNamespacedDeployment({
    namespace,
    name: 'vdu',
    body: [
      { op: 'test', path: '/spec/replicas', value: 2 },
      { op: 'add', path: '/metadata/labels/healed', value: 'true' },
    ],
  });
  assert.equal(patched.metadata?.labels?.healed, 'true');

  await objects.delete(manifest('vnf/vdu:2', 2), undefined, undefined, undefined, undefined, 'Orphan');
  await sim.settled();
  await assert.rejects(objects.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'vdu', namespace } }), isNotFound);
  const sets = await apps.listNamespacedReplicaSet({ namespace });
  assert.ok(sets.items.length > 0 && sets.items.every((rs) => rs.metadata?.ownerReferences === undefined));
  const pods = await core.listNamespacedPod({ namespace, labelSelector: 'app=vdu' });
  assert.ok(pods.items.length === 2 && pods.items.every((p) => p.status?.phase === 'Running' && p.spec?.containers[0]?.image === 'vnf/vdu:2'));
});

it('holds a StatefulSet whose image is a badimage at its first pod, in ImagePullBackOff', async () => {
  const namespace = 'vnf-bad';
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await apps.createNamespacedStatefulSet({ namespace, body: statefulSet('broken', 'registry.example/badimage:1', 3) });
  await sim.settled();
  const pods = await core.listNamespacedPod({ namespace });
  assert.deepEqual(
    pods.items.map((p) => p.metadata?.name),
    ['broken-0'],
  );
  assert.equal(pods.items[0]!.status?.containerStatuses?.[0]?.state?.waiting?.reason, 'ImagePullBackOff');
  const sts = await apps.readNamespacedStatefulSet({ namespace, name: 'broken' });
  assert.deepEqual([sts.status?.replicas, sts.status?.readyReplicas ?? 0], [1, 0]);
});

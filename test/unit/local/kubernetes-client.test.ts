// The Kubernetes simulator as the official @kubernetes/client-node sees it (the client the
// product's Kubernetes driver uses): bearer token over plain HTTP, namespaces, Deployments rolled
// out and updated, Services, deletes.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { AppsV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startKubernetesSimulator, type KubernetesSimulator } from '#local/kubernetes/simulator.ts';

let sim: KubernetesSimulator;
let apps: AppsV1Api;
let core: CoreV1Api;

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
});
after(async () => {
  await sim.close();
});

it('rolls out, updates and deletes a Deployment through @kubernetes/client-node', async () => {
  await core.createNamespace({ body: { metadata: { name: 'vnf-a' } } });
  await apps.createNamespacedDeployment({
    namespace: 'vnf-a',
    body: {
      metadata: { name: 'vdu1', labels: { vnfInstanceId: 'i-1' } },
      spec: { replicas: 2, selector: { matchLabels: { app: 'vdu1' } }, template: { metadata: { labels: { app: 'vdu1' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.26-alpine' }] } } },
    },
  });
  await core.createNamespacedService({ namespace: 'vnf-a', body: { metadata: { name: 'vdu1' }, spec: { selector: { app: 'vdu1' }, ports: [{ port: 80 }] } } });
  await sim.settled();
  const ready = await apps.readNamespacedDeployment({ namespace: 'vnf-a', name: 'vdu1' });
  assert.equal(ready.status?.readyReplicas, 2);
  const pods = await core.listNamespacedPod({ namespace: 'vnf-a', labelSelector: 'app=vdu1' });
  assert.deepEqual(pods.items.map((p) => p.status?.phase), ['Running', 'Running']);
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

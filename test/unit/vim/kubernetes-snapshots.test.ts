// What a CNF's snapshot keeps of a workload and how a revert re-applies it: the spec as applied
// without what the cluster added, containers pinned to the digests they ran, the snapshot's replicas.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appliedManifest, pinnedImage, revertedManifest } from '#lib/vim/kubernetes/snapshots.ts';
import type { KubeObject } from '#lib/vim/kubernetes/client.ts';

const DIGEST = `sha256:${'a'.repeat(64)}`;

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'vdu1',
    namespace: 'cnf',
    uid: 'u-1',
    resourceVersion: '42',
    labels: { app: 'x', 'vnf-instance-id': 'i' },
    annotations: { 'deployment.kubernetes.io/revision': '3', team: 'core' },
  },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'x' } },
    template: {
      spec: {
        containers: [
          { name: 'web', image: 'nginx:1.27' },
          { name: 'side', image: 'busybox' },
        ],
      },
    },
  },
  status: { readyReplicas: 3 },
} as unknown as KubeObject;

describe('Kubernetes snapshots', () => {
  it('reads the image a container runs by digest', () => {
    assert.equal(pinnedImage(`docker-pullable://nginx@${DIGEST}`), `nginx@${DIGEST}`);
    assert.equal(pinnedImage(`docker.io/library/nginx:1.26@${DIGEST}`), `docker.io/library/nginx:1.26@${DIGEST}`);
    assert.equal(pinnedImage(''), undefined);
    assert.equal(pinnedImage('sha256:abc'), undefined);
  });

  it('keeps the workload as applied, not what the cluster added', () => {
    const manifest = appliedManifest(deployment);
    assert.deepEqual(manifest.metadata, { name: 'vdu1', namespace: 'cnf', labels: { app: 'x', 'vnf-instance-id': 'i' }, annotations: { team: 'core' } });
    assert.equal(manifest.status, undefined);
    assert.deepEqual(manifest.spec, deployment.spec);
  });

  it('re-applies it with the recorded digests and replicas, leaving containers without a digest as they were', () => {
    const captured = {
      vduId: 'VDU1',
      ref: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'cnf', name: 'vdu1' },
      manifest: appliedManifest(deployment),
      images: { web: `nginx@${DIGEST}` },
    };
    const reverted = revertedManifest(captured, 1);
    const spec = reverted.spec as { replicas: number; template: { spec: { containers: Array<{ image: string }> } } };
    assert.equal(spec.replicas, 1);
    assert.deepEqual(
      spec.template.spec.containers.map((container) => container.image),
      [`nginx@${DIGEST}`, 'busybox'],
    );
    // The snapshot itself is untouched.
    assert.equal((captured.manifest.spec as { replicas: number }).replicas, 3);
  });
});

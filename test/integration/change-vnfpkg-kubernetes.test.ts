// CHANGE_VNFPKG (seed 004) of the sample CNF over HTTP on the built-in Kubernetes VIM: rolling
// update and blue-green from k8s-cnf-v1 to k8s-cnf-v2, each watched by a probe that keeps asking
// the Service for a Ready pod; an image pull failure half-way and its rollback; a failing
// coordinate script. Results are checked on the cluster itself and in the packages' usage.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertEtsiSchema } from '../support/etsi.ts';
import { SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { client, startVnfm, type LocalVnfm } from '../support/runtime.ts';
import { lcmSteps } from '../support/lcm-http.ts';
import { availabilityProbe } from '../support/probe.ts';

let vnfm: LocalVnfm;
let call: ReturnType<typeof client>;
let steps: ReturnType<typeof lcmSteps>;
const operate = (path: string, body: unknown) => steps.operate(path, body);
const ended = (path: string, state: string) => steps.ended(path, state);
const usage = (name: string) => steps.usage(packages[name] ?? '');
const finish = (id: string) => steps.terminateAndDelete(id);
let cluster: { endpoint: string; control: string; bearer_token: string };
const packages: Record<string, string> = {};
const V1 = SAMPLE_PACKAGES['k8s-cnf-v1'].vnfdId;
const V2 = SAMPLE_PACKAGES['k8s-cnf-v2'].vnfdId;
const DEF_FILES = ['Files/kubernetes/deployment.yaml', 'Files/kubernetes/service.yaml'];
const LABEL = 'vnf-instance-id';

before(async () => {
  vnfm = await startVnfm();
  call = client(vnfm);
  steps = lcmSteps(vnfm, call);
  cluster = JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8'))['local-kubernetes'];
  Object.assign(packages, await steps.onboard(['k8s-cnf-v1', 'k8s-cnf-v2']));
});
after(async () => {
  await vnfm.stop();
});

type Pod = {
  metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec: { containers: Array<{ image: string }> };
  status?: { conditions?: Array<{ type: string; status: string }> };
};

async function kube<T = Record<string, unknown>>(path: string): Promise<{ status: number; body: T }> {
  const response = await fetch(`${cluster.endpoint}${path}`, { headers: { Authorization: `Bearer ${cluster.bearer_token}` } });
  return { status: response.status, body: (await response.json()) as T };
}

const selectorOf = (labels: Record<string, string>): string =>
  Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(',');
const ready = (pod: Pod): boolean => !pod.metadata.deletionTimestamp && Boolean(pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));

async function pods(namespace: string, selector: string): Promise<Pod[]> {
  return ((await kube<{ items: Pod[] }>(`/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(selector)}`)).body.items ?? []).filter(
    (pod) => !pod.metadata.deletionTimestamp,
  );
}

/** What a client of the CNF sees: the Service's selector picks at least one Ready pod. */
async function serviceHasBackend(namespace: string): Promise<boolean> {
  const service = await kube<{ spec?: { selector?: Record<string, string> } }>(`/api/v1/namespaces/${namespace}/services/vdu1-svc`);
  if (service.status !== 200 || !service.body.spec?.selector) return false;
  return (await pods(namespace, selectorOf(service.body.spec.selector))).some(ready);
}

/** A CNF on v1 with two pods in its own namespace. */
async function runningCnf(namespace: string): Promise<string> {
  const id = ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: V1 } })).body as { id: string }).id;
  await ended(
    await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, {
      flavourId: 'simple',
      additionalParams: { 'lcm-kubernetes-def-files': DEF_FILES, namespace },
    }),
    'COMPLETED',
  );
  await ended(await operate(`/vnflcm/v2/vnf_instances/${id}/scale`, { type: 'SCALE_OUT', aspectId: 'vdu1_aspect' }), 'COMPLETED');
  assert.equal((await pods(namespace, `${LABEL}=${id}`)).length, 2);
  return id;
}

type Instance = {
  vnfdId: string;
  metadata?: Record<string, unknown>;
  instantiatedVnfInfo: { vnfcResourceInfo: Array<{ computeResource: { resourceId: string } }> };
};
const instance = (id: string): Promise<Instance> => steps.instance<Instance>(id);

const changeRequest = (upgradeType: string, extra: Record<string, unknown> = {}) => ({
  vnfdId: V2,
  additionalParams: {
    upgrade_type: upgradeType,
    'lcm-operation-coordinate-new-vnf': './Scripts/coordinate_cnf.js',
    'lcm-operation-coordinate-old-vnf': './Scripts/coordinate_cnf.js',
    'lcm-kubernetes-def-files': DEF_FILES,
    ...extra,
  },
});

describe('change current VNF package on Kubernetes', () => {
  for (const upgradeType of ['RollingUpdate', 'Blue-Green'] as const) {
    it(`${upgradeType}: every pod ends on the new image, the Service never loses its last Ready pod, usage moves to v2`, async () => {
      const namespace = `cnf-${upgradeType.toLowerCase()}`;
      const id = await runningCnf(namespace);
      const before = await instance(id);
      const oldPods = new Set(before.instantiatedVnfInfo.vnfcResourceInfo.map((v) => v.computeResource.resourceId));
      assert.equal(await usage('k8s-cnf-v1'), 'IN_USE');
      assert.equal(await usage('k8s-cnf-v2'), 'NOT_IN_USE');

      const request = changeRequest(upgradeType);
      await assertEtsiSchema('vnflcm', 'ChangeCurrentVnfPkgRequest', request);
      const probe = availabilityProbe(() => serviceHasBackend(namespace));
      const path = await operate(`/vnflcm/v2/vnf_instances/${id}/change_vnfpkg`, request);
      const occ = await ended(path, 'COMPLETED');
      const watched = await probe.stop();
      assert.ok(watched.checks > 0);
      assert.equal(watched.outages, 0, `the Service had no Ready pod ${watched.outages} times out of ${watched.checks}`);

      const after = await instance(id);
      assert.equal(after.vnfdId, V2);
      assert.deepEqual(after.metadata?.['lcm-kubernetes-def-files'], DEF_FILES);
      const running = await pods(namespace, `${LABEL}=${id}`);
      assert.equal(running.length, 2);
      assert.ok(
        running.every((pod) => pod.spec.containers[0]?.image === 'nginx:1.27-alpine'),
        'every pod runs the new image',
      );
      assert.ok(
        running.every((pod) => !oldPods.has(pod.metadata.name)),
        'every pod is new',
      );
      assert.deepEqual(after.instantiatedVnfInfo.vnfcResourceInfo.map((v) => v.computeResource.resourceId).sort(), running.map((p) => p.metadata.name).sort());
      const service = await kube<{ spec: { selector: Record<string, string> } }>(`/api/v1/namespaces/${namespace}/services/vdu1-svc`);
      assert.deepEqual(
        (await pods(namespace, selectorOf(service.body.spec.selector))).map((p) => p.metadata.name).sort(),
        running.map((p) => p.metadata.name).sort(),
        'the Service selects only the new pods',
      );
      const deployments = (await kube<{ items: Array<{ metadata: { name: string } }> }>(`/apis/apps/v1/namespaces/${namespace}/deployments`)).body.items.map(
        (d) => d.metadata.name,
      );
      if (upgradeType === 'RollingUpdate') assert.deepEqual(deployments, ['vdu1'], 'the Deployment is updated in place');
      else assert.ok(deployments.length === 1 && deployments[0] !== 'vdu1', `a new Deployment replaced the old one: ${deployments.join(', ')}`);

      const changes = (occ.resourceChanges as { affectedVnfcs: Array<{ changeType: string }> }).affectedVnfcs;
      assert.equal(changes.filter((c) => c.changeType === 'ADDED').length, 2);
      assert.equal(changes.filter((c) => c.changeType === 'REMOVED').length, 2);
      assert.equal((occ.modificationsTriggeredByVnfPkgChange as { vnfdId: string }).vnfdId, V2);
      // SOL003 5.4.12.3.2: a list leaves modificationsTriggeredByVnfPkgChange out unless asked for.
      const filter = encodeURIComponent(`(eq,id,${String(occ.id)})`);
      const listed = await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=${filter}`);
      assert.equal(listed.status, 200);
      assert.deepEqual(
        (listed.body as Array<Record<string, unknown>>).map((o) => [o.id, 'modificationsTriggeredByVnfPkgChange' in o]),
        [[occ.id, false]],
      );
      const full = await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=${filter}&all_fields`);
      assert.equal((full.body as Array<{ modificationsTriggeredByVnfPkgChange?: { vnfdId: string } }>)[0]?.modificationsTriggeredByVnfPkgChange?.vnfdId, V2);
      assert.equal(await usage('k8s-cnf-v1'), 'NOT_IN_USE');
      assert.equal(await usage('k8s-cnf-v2'), 'IN_USE');
      await finish(id);
      assert.equal(await usage('k8s-cnf-v2'), 'NOT_IN_USE');
    });
  }

  it('a change to the package the instance already has re-applies it, as Tacker does (usage stays)', async () => {
    const namespace = 'cnf-same-package';
    const id = await runningCnf(namespace);
    const before = await instance(id);
    const occ = await ended(
      await operate(`/vnflcm/v2/vnf_instances/${id}/change_vnfpkg`, {
        vnfdId: V1,
        additionalParams: { upgrade_type: 'RollingUpdate', 'lcm-kubernetes-def-files': DEF_FILES },
      }),
      'COMPLETED',
    );
    assert.equal((occ.modificationsTriggeredByVnfPkgChange as { vnfdId: string }).vnfdId, V1);
    const after = await instance(id);
    assert.equal(after.vnfdId, V1);
    assert.equal(after.instantiatedVnfInfo.vnfcResourceInfo.length, before.instantiatedVnfInfo.vnfcResourceInfo.length);
    assert.equal((await pods(namespace, `${LABEL}=${id}`)).length, 2);
    assert.equal(await usage('k8s-cnf-v1'), 'IN_USE');
    await finish(id);
    assert.equal(await usage('k8s-cnf-v1'), 'NOT_IN_USE');
  });

  it("an image pull failure half-way ends FAILED_TEMP with the pod's reason; rollback restores v1 completely", async () => {
    const namespace = 'cnf-pull-failure-change';
    const id = await runningCnf(namespace);
    const before = await instance(id);
    const deploymentBefore = (await kube<{ metadata: { uid: string }; spec: { replicas: number } }>(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`))
      .body;
    const control = (path: string, method: string, body?: unknown) =>
      fetch(`${cluster.control}${path}`, { method, headers: { 'Content-Type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    assert.ok((await control('faults', 'POST', { kind: 'image-pull-fail', image: 'nginx:1.27-alpine' })).ok);
    let path: string;
    try {
      path = await operate(`/vnflcm/v2/vnf_instances/${id}/change_vnfpkg`, changeRequest('RollingUpdate'));
      const failed = await ended(path, 'FAILED_TEMP');
      assert.match((failed.error as { detail: string }).detail, /ImagePullBackOff|ErrImagePull/);
    } finally {
      await control('faults', 'DELETE');
    }
    assert.equal((await call('POST', `${path}/rollback`)).status, 202);
    await ended(path, 'ROLLED_BACK');
    const after = await instance(id);
    assert.equal(after.vnfdId, V1);
    const running = await pods(namespace, `${LABEL}=${id}`);
    assert.equal(running.length, 2);
    assert.ok(
      running.every((pod) => pod.spec.containers[0]?.image === 'nginx:1.26-alpine'),
      'back on the old image',
    );
    const deploymentAfter = (await kube<{ metadata: { uid: string }; spec: { replicas: number } }>(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`))
      .body;
    assert.equal(deploymentAfter.metadata.uid, deploymentBefore.metadata.uid);
    assert.equal(deploymentAfter.spec.replicas, deploymentBefore.spec.replicas);
    assert.equal(after.instantiatedVnfInfo.vnfcResourceInfo.length, before.instantiatedVnfInfo.vnfcResourceInfo.length);
    assert.ok(await serviceHasBackend(namespace));
    assert.equal(await usage('k8s-cnf-v1'), 'IN_USE');
    assert.equal(await usage('k8s-cnf-v2'), 'NOT_IN_USE');
    await finish(id);
  });

  it("a failing coordinate script ends FAILED_TEMP with the script's own message; the request is checked before 202", async () => {
    const namespace = 'cnf-coordinate-failure';
    const id = await runningCnf(namespace);
    const problem = async (body: unknown, status: number) => {
      const reply = await call('POST', `/vnflcm/v2/vnf_instances/${id}/change_vnfpkg`, { body });
      assert.equal(reply.status, status, reply.text);
      assert.equal(reply.headers.get('content-type'), 'application/problem+json');
    };
    await problem({ vnfdId: V2, additionalParams: { upgrade_type: 'Canary' } }, 400);
    await problem({ vnfdId: V2 }, 400);
    await problem({ vnfdId: 'no-such-vnfd', additionalParams: { upgrade_type: 'RollingUpdate' } }, 422);
    await problem(
      {
        ...changeRequest('RollingUpdate'),
        additionalParams: { ...changeRequest('RollingUpdate').additionalParams, 'lcm-kubernetes-def-files': ['Files/kubernetes/nope.yaml'] },
      },
      422,
    );
    await problem(
      {
        ...changeRequest('RollingUpdate'),
        additionalParams: { ...changeRequest('RollingUpdate').additionalParams, 'lcm-operation-coordinate-new-vnf': 'Scripts/nope.js' },
      },
      422,
    );
    assert.deepEqual((await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,operation,CHANGE_VNFPKG);(eq,vnfInstanceId,${id})`)).body, []);

    const path = await operate(`/vnflcm/v2/vnf_instances/${id}/change_vnfpkg`, changeRequest('BlueGreen', { coordinate_fail: true }));
    const failed = await ended(path, 'FAILED_TEMP');
    assert.match((failed.error as { detail: string }).detail, /coordinate_cnf: failed as requested/);
    assert.equal((await call('POST', `${path}/fail`)).status, 200);
    await ended(path, 'FAILED');
    assert.equal(await usage('k8s-cnf-v2'), 'NOT_IN_USE');
    await finish(id);
  });
});

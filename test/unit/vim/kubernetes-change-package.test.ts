// CHANGE_VNFPKG of the Kubernetes driver against the Kubernetes simulator (local/kubernetes/), from the
// sample CNF 1.0 (k8s-cnf-v1, nginx 1.26) scaled to 3 pods to the sample CNF 2.0 (k8s-cnf-v2, nginx
// 1.27): a rolling update keeps the Deployment and replaces every pod, a blue-green creates a new
// Deployment, switches the Service and deletes the old one, COORDINATE is asked where seed 004 runs
// CoordinateVNF, and both roll back to exactly what was there (after an image that cannot be pulled,
// after a coordinate script that failed). Throughout, the Service must select a Ready pod: checked
// before and after every poll, and by a watcher that samples the cluster the whole time.
// Steps advance by waiting for the simulator to settle, never by sleeping.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { isDeepStrictEqual } from 'node:util';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { CsarArchive } from '#lib/packages/archive.ts';
import type { ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import { UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { Coordination, DriverState, OperationContext, PackageChange, PackageFiles, Progress, UpdateChange } from '#lib/vim/driver.ts';
import { kubernetesDriver, REVISION_LABEL, VNF_INSTANCE_LABEL } from '#lib/vim/kubernetes/index.ts';
import { startKubernetesSimulator, type KubernetesSimulator } from '#local/kubernetes/simulator.ts';
import { openSamplePackage } from '../../support/sample-package.ts';

const DEF_FILES = ['Files/kubernetes/deployment.yaml', 'Files/kubernetes/service.yaml'];
const OLD_IMAGE = 'nginx:1.26-alpine';
const NEW_IMAGE = 'nginx:1.27-alpine';
const SERVICE = 'vdu1-svc';

interface Sample {
  archive: CsarArchive;
  vnfd: ParsedVnfd;
  files: PackageFiles;
}

let sim: KubernetesSimulator;
let v1: Sample;
let v2: Sample;

before(async () => {
  sim = await startKubernetesSimulator({ timeScale: 0.01 });
  v1 = await openSamplePackage('k8s-cnf-v1');
  v2 = await openSamplePackage('k8s-cnf-v2');
});

after(async () => {
  await sim.close();
  await v1.archive.close();
  await v2.archive.close();
});

beforeEach(async () => {
  sim.clearFaults();
  await sim.settled();
});

// ---------------------------------------------------------------------------------------------
// The cluster as the tests read it, directly over the API

type KObject = {
  metadata: { name: string; uid: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec?: Record<string, any>;
  status?: Record<string, any>;
};

async function kube(path: string): Promise<{ status: number; body: any }> {
  const response = await fetch(new URL(path, sim.url), { headers: { authorization: `Bearer ${sim.token}` } });
  return { status: response.status, body: await response.json() };
}

async function items(path: string, labelSelector: string): Promise<KObject[]> {
  const answer = await kube(`${path}?labelSelector=${encodeURIComponent(labelSelector)}`);
  assert.equal(answer.status, 200, `GET ${path}`);
  return answer.body.items as KObject[];
}

const isReady = (pod: KObject): boolean =>
  !pod.metadata.deletionTimestamp &&
  pod.status?.phase === 'Running' &&
  (pod.status.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True');
const imageOf = (pod: KObject): string => String(pod.spec?.containers?.[0]?.image);
const selectorString = (selector: Record<string, string>): string =>
  Object.entries(selector)
    .map(([key, value]) => `${key}=${value}`)
    .join(',');

async function pods(namespace: string, instanceId: string): Promise<KObject[]> {
  return items(`/api/v1/namespaces/${namespace}/pods`, `${VNF_INSTANCE_LABEL}=${instanceId}`);
}
const podNames = async (namespace: string, instanceId: string): Promise<string[]> => (await pods(namespace, instanceId)).map((pod) => pod.metadata.name).sort();

/** What the Service sends traffic to: its selector and the Ready pods it selects. */
async function serviceBacking(namespace: string): Promise<{ selector: Record<string, string>; ready: string[] }> {
  const service = await kube(`/api/v1/namespaces/${namespace}/services/${SERVICE}`);
  if (service.status !== 200) return { selector: {}, ready: [] };
  const selector = service.body.spec.selector as Record<string, string>;
  const selected = await items(`/api/v1/namespaces/${namespace}/pods`, selectorString(selector));
  return {
    selector,
    ready: selected
      .filter(isReady)
      .map((pod) => pod.metadata.name)
      .sort(),
  };
}

/**
 * Runs `body` while sampling the Service as fast as the API answers, and returns every moment it
 * selected no Ready pod (a selector that changed between the two reads is read again).
 */
async function watching<T>(namespace: string, body: () => Promise<T>): Promise<{ result: T; samples: number; gaps: string[] }> {
  let running = true;
  let samples = 0;
  const gaps: string[] = [];
  const loop = (async () => {
    while (running) {
      const seen = await serviceBacking(namespace);
      samples += 1;
      if (seen.ready.length === 0 && isDeepStrictEqual((await serviceBacking(namespace)).selector, seen.selector)) gaps.push(JSON.stringify(seen.selector));
    }
  })();
  try {
    const result = await body();
    return { result, samples, gaps };
  } finally {
    running = false;
    await loop;
  }
}

async function deploymentNames(namespace: string): Promise<string[]> {
  return (await items(`/apis/apps/v1/namespaces/${namespace}/deployments`, '')).map((item) => item.metadata.name).sort();
}

// ---------------------------------------------------------------------------------------------
// Contexts and driving steps the way the LCM engine does

let instances = 0;
function context(namespace: string): OperationContext {
  instances += 1;
  const request = { flavourId: 'simple', additionalParams: { 'lcm-kubernetes-def-files': DEF_FILES, namespace } };
  return {
    vnfInstanceId: `00000000-0000-4000-8000-${String(500 + instances).padStart(12, '0')}`,
    opOccId: `op-${instances}`,
    vnfd: v1.vnfd,
    flavourId: 'simple',
    request,
    instantiateRequest: request,
    files: v1.files,
    vim: { vimId: 'vim-k8s', vimType: 'kubernetes', interfaceInfo: { endpoint: sim.url }, accessInfo: { bearer_token: sim.token } },
    grant: {},
  };
}

/** The context of a later operation on the same VNF (another op occ), on the package it runs. */
function later(ctx: OperationContext, pkg: Sample, opOccId: string): OperationContext {
  return { ...ctx, opOccId, vnfd: pkg.vnfd, files: pkg.files };
}

function packageChange(upgradeType: PackageChange['upgradeType'], pkg: Sample = v2, extra: Partial<PackageChange> = {}): PackageChange {
  return {
    upgradeType,
    vnfPkgId: pkg === v2 ? 'pkg-v2' : 'pkg-v1',
    vnfd: pkg.vnfd,
    files: pkg.files,
    flavourId: 'simple',
    vduIds: [],
    defFiles: DEF_FILES,
    grant: {},
    ...extra,
  };
}

interface Run {
  progress: Progress;
  coordinations: Coordination[];
  readyCounts: number[];
}

/**
 * Polls until DONE or FAILED (or `until` says stop), as the engine would: a COORDINATE is recorded
 * (the engine runs the script) and polled again with its state. Before and after every poll the
 * Service must select a Ready pod.
 */
async function drive(
  namespace: string,
  started: DriverState,
  poll: (state: DriverState) => Promise<Progress>,
  until?: (progress: Progress) => boolean,
): Promise<Run> {
  const run: Run = { progress: { status: 'IN_PROGRESS', state: started }, coordinations: [], readyCounts: [] };
  const probe = async (when: string): Promise<void> => {
    const { selector, ready } = await serviceBacking(namespace);
    run.readyCounts.push(ready.length);
    assert.ok(ready.length > 0, `${when}: Service ${SERVICE} (selector ${selectorString(selector)}) selects no Ready pod`);
  };
  for (let polls = 1; polls <= 60; polls += 1) {
    await sim.settled();
    await probe(`before poll ${polls}`);
    run.progress = await poll(run.progress.state);
    await probe(`after poll ${polls} (${run.progress.status})`);
    if (run.progress.status === 'COORDINATE') run.coordinations.push(run.progress.coordinate);
    if (until?.(run.progress) || run.progress.status === 'DONE' || run.progress.status === 'FAILED') return run;
  }
  assert.fail('the step did not end within 60 polls');
}

async function changePackage(ctx: OperationContext, state: DriverState, change: PackageChange, until?: (progress: Progress) => boolean): Promise<Run> {
  const started = await kubernetesDriver.changeStart(ctx, state, change);
  return drive(String(state.namespace), started, (current) => kubernetesDriver.changePoll(ctx, current, change), until);
}

async function rollBack(ctx: OperationContext, state: DriverState, change: PackageChange): Promise<Run> {
  const started = await kubernetesDriver.changeRollbackStart(ctx, state, change);
  return drive(String(state.namespace), started, (current) => kubernetesDriver.changeRollbackPoll(ctx, current, change));
}

async function settle(poll: (state: DriverState) => Promise<Progress>, state: DriverState): Promise<DriverState> {
  let progress: Progress = { status: 'IN_PROGRESS', state };
  for (let polls = 0; polls < 30 && progress.status === 'IN_PROGRESS'; polls += 1) {
    await sim.settled();
    progress = await poll(progress.state);
  }
  assert.equal(progress.status, 'DONE', progress.status === 'FAILED' ? progress.reason : progress.status);
  return progress.state;
}

/** Sample CNF 1.0 instantiated (one pod, as its VNFD says) and scaled out to three. */
async function instantiateScaled(ctx: OperationContext): Promise<DriverState> {
  const state = await settle((current) => kubernetesDriver.instantiatePoll(ctx, current), await kubernetesDriver.instantiateStart(ctx));
  const scale: UpdateChange = { kind: 'SCALE', scaleType: 'SCALE_OUT', aspectId: 'vdu1_aspect', steps: 2, targets: { VDU1: 3 }, remove: [] };
  return settle((current) => kubernetesDriver.updatePoll(ctx, current, scale), await kubernetesDriver.updateStart(ctx, state, scale));
}

async function terminate(ctx: OperationContext, state: DriverState): Promise<void> {
  await settle((current) => kubernetesDriver.terminatePoll(ctx, current), await kubernetesDriver.terminateStart(ctx, state));
  await sim.settled();
  assert.deepEqual(await pods(String(state.namespace), ctx.vnfInstanceId), [], 'terminate leaves no pod');
}

/** Everything a rollback must put back: workloads, their images and counts, the pods, the Service. */
async function snapshot(namespace: string, instanceId: string): Promise<Record<string, unknown>> {
  const deployments = await items(`/apis/apps/v1/namespaces/${namespace}/deployments`, `${VNF_INSTANCE_LABEL}=${instanceId}`);
  const all = await pods(namespace, instanceId);
  return {
    deployments: deployments.map((d) => ({
      name: d.metadata.name,
      uid: d.metadata.uid,
      replicas: d.spec?.replicas,
      image: d.spec?.template.spec.containers[0].image,
      selector: d.spec?.selector,
    })),
    pods: all.map((pod) => ({ name: pod.metadata.name, image: imageOf(pod), ready: isReady(pod) })).sort((a, b) => a.name.localeCompare(b.name)),
    service: (await kube(`/api/v1/namespaces/${namespace}/services/${SERVICE}`)).body.spec.selector,
  };
}

const resourceIds = (coordination: Coordination | undefined): string[] => (coordination?.vnfcs ?? []).map((vnfc) => vnfc.resourceId).sort();

// ---------------------------------------------------------------------------------------------

describe('Kubernetes driver: change current VNF package', () => {
  it('rolling update: the same Deployment rolls every pod over to the new image, keeping 3 replicas and a Ready Service throughout', async () => {
    const namespace = 'cnf-rolling';
    const ctx = context(namespace);
    const state = await instantiateScaled(ctx);
    const before = await pods(namespace, ctx.vnfInstanceId);
    assert.equal(before.length, 3);
    const deploymentBefore = (await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`)).body as KObject;

    const watched = await watching(namespace, () => changePackage(ctx, state, packageChange('RollingUpdate')));
    const run = watched.result;
    assert.equal(run.progress.status, 'DONE', run.progress.status === 'FAILED' ? run.progress.reason : undefined);

    const after = await pods(namespace, ctx.vnfInstanceId);
    assert.equal(after.length, 3, "the replica count the VNF had, not the manifest's 1");
    assert.ok(after.every(isReady));
    assert.deepEqual(after.map(imageOf), [NEW_IMAGE, NEW_IMAGE, NEW_IMAGE]);
    const oldNames = new Set(before.map((pod) => pod.metadata.name));
    assert.ok(
      after.every((pod) => !oldNames.has(pod.metadata.name)),
      'every pod is new',
    );
    const deployment = (await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`)).body as KObject;
    assert.equal(deployment.metadata.uid, deploymentBefore.metadata.uid, 'the same Deployment');
    assert.equal(deployment.spec?.replicas, 3);
    assert.equal(deployment.metadata.labels?.[VNF_INSTANCE_LABEL], ctx.vnfInstanceId);
    assert.equal(deployment.spec?.template.metadata.labels[VNF_INSTANCE_LABEL], ctx.vnfInstanceId);
    assert.deepEqual(await deploymentNames(namespace), ['vdu1']);

    // Seed 004: the coordinate step (no VIM action) for the new pods, once they are all up.
    assert.deepEqual(
      run.coordinations.map((c) => c.target),
      ['new'],
    );
    assert.deepEqual(resourceIds(run.coordinations[0]), after.map((pod) => pod.metadata.name).sort());
    assert.ok(run.coordinations[0]?.vnfcs.every((vnfc) => vnfc.vduId === 'VDU1'));
    assert.deepEqual((await serviceBacking(namespace)).selector, { app: 'sample-cnf' }, "the Service is the manifest's");

    // The state names the same objects and the manifests now run; collect reads it with the new VNFD.
    assert.deepEqual(run.progress.state.objects, state.objects);
    assert.deepEqual(run.progress.state.defFiles, DEF_FILES);
    assert.equal(run.progress.state.change, undefined);
    const collected = await kubernetesDriver.collect(later(ctx, v2, 'op-collect'), run.progress.state);
    assert.deepEqual(collected.vnfcResourceInfo.map((vnfc) => vnfc.id).sort(), after.map((pod) => pod.metadata.name).sort());
    assert.ok(collected.vnfcResourceInfo.every((vnfc) => (vnfc.metadata as Record<string, unknown>).workload === 'Deployment/vdu1'));

    assert.ok(
      run.readyCounts.every((count) => count >= 3),
      `the Service kept 3 Ready pods at every poll (maxUnavailable 0): ${run.readyCounts.join(',')}`,
    );
    assert.deepEqual(watched.gaps, [], 'the watcher never saw the Service without a Ready pod');
    assert.ok(watched.samples > 5, `the watcher sampled ${watched.samples} times`);
    await terminate(later(ctx, v2, 'op-terminate'), run.progress.state);
  });

  it('blue-green: a new Deployment beside the old, the Service switched to it, COORDINATE new then old, the old deleted', async () => {
    const namespace = 'cnf-blue-green';
    const ctx = context(namespace);
    const state = await instantiateScaled(ctx);
    const before = await podNames(namespace, ctx.vnfInstanceId);

    const watched = await watching(namespace, () => changePackage(ctx, state, packageChange('BlueGreen')));
    const run = watched.result;
    assert.equal(run.progress.status, 'DONE', run.progress.status === 'FAILED' ? run.progress.reason : undefined);

    const [green] = await deploymentNames(namespace);
    assert.deepEqual(await deploymentNames(namespace), [green], 'only the new Deployment remains');
    assert.match(String(green), /^vdu1-[a-z0-9]+$/, 'vdu1 was taken: the new Deployment has a name of its own');
    assert.equal((await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`)).status, 404);
    const deployment = (await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/${green}`)).body as KObject;
    const revision = deployment.spec?.selector.matchLabels[REVISION_LABEL] as string;
    assert.ok(revision, 'the new Deployment selects its pods by a revision label');
    assert.equal(deployment.spec?.replicas, 3, 'as many replicas as the old one had');

    const after = await pods(namespace, ctx.vnfInstanceId);
    assert.equal(after.length, 3);
    assert.ok(after.every((pod) => isReady(pod) && imageOf(pod) === NEW_IMAGE && pod.metadata.labels?.[REVISION_LABEL] === revision));
    assert.ok(
      after.every((pod) => !before.includes(pod.metadata.name)),
      'no old pod is left',
    );
    const backing = await serviceBacking(namespace);
    assert.deepEqual(backing.selector, { app: 'sample-cnf', [REVISION_LABEL]: revision }, 'the Service selects the new pods only');
    assert.deepEqual(backing.ready, after.map((pod) => pod.metadata.name).sort());

    assert.deepEqual(
      run.coordinations.map((c) => c.target),
      ['new', 'old'],
    );
    assert.deepEqual(resourceIds(run.coordinations[0]), after.map((pod) => pod.metadata.name).sort());
    assert.deepEqual(run.coordinations[0]?.details?.services, [SERVICE]);
    assert.deepEqual(resourceIds(run.coordinations[1]), before, "the old VNF's coordination names the old pods");
    assert.deepEqual(run.coordinations[1]?.vnfcs.map((vnfc) => vnfc.id).sort(), before, 'old VNFCs by their recorded ids');

    // The state records the new Deployment as VDU1's (seed 004: VnfResource.resourceName updated).
    const done = run.progress.state;
    assert.deepEqual(done.workloads, { vdu1: green });
    assert.ok((done.objects as Array<{ kind: string; name: string }>).some((ref) => ref.kind === 'Deployment' && ref.name === green));
    assert.ok(!(done.objects as Array<{ kind: string; name: string }>).some((ref) => ref.kind === 'Deployment' && ref.name === 'vdu1'));
    const ctx2 = later(ctx, v2, 'op-after');
    const collected = await kubernetesDriver.collect(ctx2, done);
    assert.deepEqual(collected.vnfcResourceInfo.map((vnfc) => vnfc.id).sort(), after.map((pod) => pod.metadata.name).sort());
    assert.ok(
      collected.vnfcResourceInfo.every((vnfc) => vnfc.vduId === 'VDU1' && (vnfc.metadata as Record<string, unknown>).workload === `Deployment/${green}`),
    );
    assert.ok(
      run.readyCounts.every((count) => count >= 3),
      `the Service kept 3 Ready pods at every poll: ${run.readyCounts.join(',')}`,
    );
    assert.deepEqual(watched.gaps, [], 'the watcher never saw the Service without a Ready pod');
    assert.ok(watched.samples > 5);

    // Later operations find VDU1 on the renamed Deployment.
    const scaleIn: UpdateChange = { kind: 'SCALE', scaleType: 'SCALE_IN', aspectId: 'vdu1_aspect', steps: 1, targets: { VDU1: 2 }, remove: [] };
    const scaled = await settle((current) => kubernetesDriver.updatePoll(ctx2, current, scaleIn), await kubernetesDriver.updateStart(ctx2, done, scaleIn));
    assert.equal((await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/${green}`)).body.spec.replicas, 2);

    // Back to 1.0 by blue-green again: the name vdu1 is free now, so the new Deployment takes it.
    const back = await changePackage(ctx2, scaled, packageChange('BlueGreen', v1));
    assert.equal(back.progress.status, 'DONE', back.progress.status === 'FAILED' ? back.progress.reason : undefined);
    assert.deepEqual(await deploymentNames(namespace), ['vdu1']);
    assert.equal(back.progress.state.workloads, undefined, 'VDU1 runs on the workload of its own name again');
    const final = await pods(namespace, ctx.vnfInstanceId);
    assert.equal(final.length, 2);
    assert.ok(final.every((pod) => isReady(pod) && imageOf(pod) === OLD_IMAGE));
    const finalRevision = final[0]?.metadata.labels?.[REVISION_LABEL];
    assert.ok(finalRevision && finalRevision !== revision);
    assert.deepEqual((await serviceBacking(namespace)).selector, { app: 'sample-cnf', [REVISION_LABEL]: finalRevision });
    await terminate(later(ctx, v1, 'op-terminate'), back.progress.state);
  });

  it("rolling update whose new image cannot be pulled: FAILED with the pod's reason, and the rollback restores names, images, counts and the Service", async () => {
    const namespace = 'cnf-rolling-fail';
    const ctx = context(namespace);
    const state = await instantiateScaled(ctx);
    const original = await snapshot(namespace, ctx.vnfInstanceId);
    sim.inject({ kind: 'image-pull-fail', image: NEW_IMAGE });

    const change = packageChange('RollingUpdate');
    const watched = await watching(namespace, async () => {
      const failed = await changePackage(ctx, state, change);
      assert.equal(failed.progress.status, 'FAILED');
      assert.match(
        failed.progress.status === 'FAILED' ? failed.progress.reason : '',
        /^pod vdu1-[a-z0-9-]+: container web: ImagePullBackOff: Back-off pulling image "nginx:1\.27-alpine"$/,
      );
      assert.deepEqual(failed.coordinations, [], 'no coordination before the new pods are up');
      assert.deepEqual((await serviceBacking(namespace)).ready.length, 3, 'the old pods still serve');
      // The engine rolls back from the state the failed poll returned (the fault is still there).
      return rollBack(ctx, failed.progress.state, change);
    });
    const rolledBack = watched.result;
    assert.equal(rolledBack.progress.status, 'DONE', rolledBack.progress.status === 'FAILED' ? rolledBack.progress.reason : undefined);
    assert.deepEqual(
      rolledBack.coordinations.map((c) => c.target),
      ['old'],
      'the old VNF is coordinated (the engine passes is_rollback)',
    );
    await sim.settled();
    assert.deepEqual(await snapshot(namespace, ctx.vnfInstanceId), original, 'the same Deployment, image, replica count, pods and Service selector');
    assert.deepEqual(
      resourceIds(rolledBack.coordinations[0]),
      (original.pods as Array<{ name: string }>).map((pod) => pod.name),
    );
    assert.deepEqual(rolledBack.progress.state, state, "the VNF's state is what it was");
    assert.deepEqual(watched.gaps, []);
    await terminate(ctx, rolledBack.progress.state);
  });

  it('blue-green whose new image cannot be pulled: FAILED before the switch, and the rollback deletes the new Deployment and keeps the old', async () => {
    const namespace = 'cnf-blue-green-fail';
    const ctx = context(namespace);
    const state = await instantiateScaled(ctx);
    const original = await snapshot(namespace, ctx.vnfInstanceId);
    sim.inject({ kind: 'image-pull-fail', image: NEW_IMAGE });

    const change = packageChange('BlueGreen');
    const failed = await changePackage(ctx, state, change);
    assert.equal(failed.progress.status, 'FAILED');
    assert.match(
      failed.progress.status === 'FAILED' ? failed.progress.reason : '',
      /^pod vdu1-[a-z0-9]+-[a-z0-9-]+: container web: ImagePullBackOff: Back-off pulling image "nginx:1\.27-alpine"$/,
    );
    assert.deepEqual(failed.coordinations, []);
    assert.deepEqual((await serviceBacking(namespace)).selector, { app: 'sample-cnf' }, 'the Service was not switched');
    assert.equal((await deploymentNames(namespace)).length, 2, 'the new Deployment is there for the rollback to delete');

    const rolledBack = await rollBack(ctx, failed.progress.state, change);
    assert.equal(rolledBack.progress.status, 'DONE', rolledBack.progress.status === 'FAILED' ? rolledBack.progress.reason : undefined);
    assert.deepEqual(rolledBack.coordinations, [], 'the old VNF never stopped serving: nothing to coordinate');
    await sim.settled();
    assert.deepEqual(await snapshot(namespace, ctx.vnfInstanceId), original);
    assert.deepEqual(rolledBack.progress.state, state);
    await terminate(ctx, rolledBack.progress.state);
  });

  it('blue-green whose coordinate script fails after the switch: the rollback switches the Service back before deleting the new pods', async () => {
    const namespace = 'cnf-blue-green-back';
    const ctx = context(namespace);
    const state = await instantiateScaled(ctx);
    const original = await snapshot(namespace, ctx.vnfInstanceId);

    const change = packageChange('BlueGreen');
    const watched = await watching(namespace, async () => {
      // The engine runs the new VNF's script at the first COORDINATE; here it fails, so the engine rolls back.
      const stopped = await changePackage(ctx, state, change, (progress) => progress.status === 'COORDINATE');
      assert.equal(stopped.progress.status, 'COORDINATE');
      const switched = await serviceBacking(namespace);
      assert.ok(switched.selector[REVISION_LABEL], 'the Service was switched');
      assert.deepEqual(switched.ready, resourceIds(stopped.coordinations[0]), 'to exactly the new pods');
      return rollBack(ctx, stopped.progress.state, change);
    });
    const rolledBack = watched.result;
    assert.equal(rolledBack.progress.status, 'DONE', rolledBack.progress.status === 'FAILED' ? rolledBack.progress.reason : undefined);
    assert.deepEqual(
      rolledBack.coordinations.map((c) => c.target),
      ['old'],
      'the old VNF serves again',
    );
    assert.deepEqual(
      resourceIds(rolledBack.coordinations[0]),
      (original.pods as Array<{ name: string }>).map((pod) => pod.name),
    );
    await sim.settled();
    assert.deepEqual(await snapshot(namespace, ctx.vnfInstanceId), original, 'the Service selects the old pods again; the new Deployment is gone');
    assert.deepEqual(rolledBack.progress.state, state);
    assert.deepEqual(watched.gaps, [], 'no moment without a Ready pod, switch back included');
    await terminate(ctx, rolledBack.progress.state);
  });

  it("a rolling update after a blue-green updates the renamed Deployment in place, keeping its revision selector and the Service's node port", async () => {
    const nodePort = (name: 'k8s-cnf-v1' | 'k8s-cnf-v2'): Promise<Sample> =>
      openSamplePackage(name, {
        mutate: (files) =>
          files.set(
            'Files/kubernetes/service.yaml',
            Buffer.from(files.get('Files/kubernetes/service.yaml')!.toString('utf8').replace('type: ClusterIP', 'type: NodePort')),
          ),
      });
    const [p1, p2] = [await nodePort('k8s-cnf-v1'), await nodePort('k8s-cnf-v2')];
    try {
      const namespace = 'cnf-bg-then-rolling';
      const ctx = { ...context(namespace), vnfd: p1.vnfd, files: p1.files };
      const state = await settle((current) => kubernetesDriver.instantiatePoll(ctx, current), await kubernetesDriver.instantiateStart(ctx));
      const port = async (): Promise<number> => (await kube(`/api/v1/namespaces/${namespace}/services/${SERVICE}`)).body.spec.ports[0].nodePort;
      const allocated = await port();
      assert.ok(allocated >= 30000);

      const green = await changePackage(ctx, state, packageChange('BlueGreen', p2));
      assert.equal(green.progress.status, 'DONE');
      assert.equal(await port(), allocated, 'switching the Service kept its node port');
      const [name] = await deploymentNames(namespace);
      const before = (await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/${name}`)).body as KObject;
      const revision = before.spec?.selector.matchLabels[REVISION_LABEL];
      assert.ok(name !== 'vdu1' && revision);

      const ctx2 = { ...later(ctx, p2, 'op-rolling'), vnfd: p2.vnfd, files: p2.files };
      const rolled = await changePackage(ctx2, green.progress.state, packageChange('RollingUpdate', p1));
      assert.equal(rolled.progress.status, 'DONE', rolled.progress.status === 'FAILED' ? rolled.progress.reason : undefined);
      assert.deepEqual(await deploymentNames(namespace), [name], 'the same Deployment');
      const after = (await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/${name}`)).body as KObject;
      assert.equal(after.metadata.uid, before.metadata.uid);
      assert.deepEqual(after.spec?.selector, before.spec?.selector, 'its (immutable) selector kept the revision label');
      assert.equal(after.spec?.template.spec.containers[0].image, OLD_IMAGE);
      const running = await pods(namespace, ctx.vnfInstanceId);
      assert.equal(running.length, 1);
      assert.ok(running.every((pod) => isReady(pod) && imageOf(pod) === OLD_IMAGE && pod.metadata.labels?.[REVISION_LABEL] === revision));
      assert.deepEqual(rolled.progress.state.workloads, { vdu1: name }, 'VDU1 still runs on the renamed Deployment');
      assert.deepEqual(
        resourceIds(rolled.coordinations[0]),
        running.map((pod) => pod.metadata.name),
      );
      assert.equal(await port(), allocated, 'the rolling update kept the node port too');
      assert.deepEqual((await serviceBacking(namespace)).ready, running.map((pod) => pod.metadata.name).sort());
      await terminate({ ...ctx2, vnfd: p1.vnfd, files: p1.files }, rolled.progress.state);
    } finally {
      await p1.archive.close();
      await p2.archive.close();
    }
  });

  it('blue-green cannot roll back once the old Deployment is deleted: FAILED with the reason, and the change can still be completed', async () => {
    const namespace = 'cnf-blue-green-late';
    const ctx = context(namespace);
    const state = await instantiateScaled(ctx);
    const change = packageChange('BlueGreen');
    const late = await changePackage(
      ctx,
      state,
      change,
      (progress) => progress.status === 'IN_PROGRESS' && (progress.state.change as { phase?: string } | undefined)?.phase === 'cleanup',
    );
    assert.equal(late.progress.status, 'IN_PROGRESS');

    const refused = await kubernetesDriver.changeRollbackPoll(ctx, await kubernetesDriver.changeRollbackStart(ctx, late.progress.state, change), change);
    assert.equal(refused.status, 'FAILED');
    assert.match(
      refused.status === 'FAILED' ? refused.reason : '',
      /cannot roll back the package change: it has already deleted the old workload Deployment cnf-blue-green-late\/vdu1, and the VNF runs on the new package's Deployment cnf-blue-green-late\/vdu1-[a-z0-9]+; retry the change/,
    );

    // Going on with the change from there completes it.
    const completed = await drive(namespace, refused.state, (current) => kubernetesDriver.changePoll(ctx, current, change));
    assert.equal(completed.progress.status, 'DONE');
    assert.equal((await deploymentNames(namespace)).length, 1);
    await terminate(later(ctx, v2, 'op-terminate'), completed.progress.state);
  });

  it('refuses what it cannot apply before touching anything: undeclared manifests, a changed selector or a bare Pod for a rolling update', async () => {
    const namespace = 'cnf-change-refused';
    const ctx = context(namespace);
    const state = await instantiateScaled(ctx);
    const original = await snapshot(namespace, ctx.vnfInstanceId);

    await assert.rejects(
      kubernetesDriver.changeStart(ctx, state, packageChange('RollingUpdate', v2, { defFiles: ['Files/kubernetes/other.yaml'] })),
      (error: unknown) => {
        assert.ok(error instanceof UnprocessableEntityError);
        assert.match(error.message, /Files\/kubernetes\/other\.yaml, which the VNF package does not declare as artifacts/);
        return true;
      },
    );
    // Without def files in the request, the instance's paths are looked up in the new package.
    const planned = await kubernetesDriver.changeStart(ctx, state, packageChange('RollingUpdate', v2, { defFiles: undefined }));
    assert.deepEqual((planned.change as { defFiles: string[] }).defFiles, DEF_FILES);

    const relabelled = await openSamplePackage('k8s-cnf-v2', {
      mutate: (files) =>
        files.set(
          'Files/kubernetes/deployment.yaml',
          Buffer.from(files.get('Files/kubernetes/deployment.yaml')!.toString('utf8').replaceAll('app: sample-cnf', 'app: sample-cnf-2')),
        ),
    });
    try {
      await assert.rejects(
        kubernetesDriver.changeStart(ctx, state, packageChange('RollingUpdate', relabelled)),
        /the new package's manifests change the selector of Deployment cnf-change-refused\/vdu1, which Kubernetes does not allow on an existing Deployment; change the package with upgrade_type BlueGreen/,
      );
      // A blue-green creates a new Deployment, whose selector is its own.
      const greenPlan = await kubernetesDriver.changeStart(ctx, state, packageChange('BlueGreen', relabelled));
      assert.equal((greenPlan.change as { upgradeType: string }).upgradeType, 'BlueGreen');
    } finally {
      await relabelled.archive.close();
    }

    const pod = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: vdu1\nspec:\n  containers:\n    - name: web\n      image: nginx:1.27-alpine\n';
    const withPod: PackageFiles = {
      ...v2.files,
      read: async (path) => (path === 'Files/kubernetes/pod.yaml' ? Buffer.from(pod) : v2.files.read(path)),
      size: async (path) => (path === 'Files/kubernetes/pod.yaml' ? pod.length : v2.files.size(path)),
      list: async () => [...(await v2.files.list()), 'Files/kubernetes/pod.yaml'],
      artifacts: async () => [...(await v2.files.artifacts()), 'Files/kubernetes/pod.yaml'],
    };
    await assert.rejects(
      kubernetesDriver.changeStart(ctx, state, { ...packageChange('RollingUpdate'), files: withPod, defFiles: ['Files/kubernetes/pod.yaml'] }),
      /VDU VDU1 is a Pod, which Kubernetes does not roll over to a new template; change its package with upgrade_type BlueGreen/,
    );

    // A rollback from a plan whose first poll may have thrown half-way re-applies the old manifests: a no-op here.
    const undone = await rollBack(ctx, planned, packageChange('RollingUpdate'));
    assert.equal(undone.progress.status, 'DONE');
    assert.deepEqual(undone.progress.state, state);
    await sim.settled();
    assert.deepEqual(await snapshot(namespace, ctx.vnfInstanceId), original, 'nothing changed on the cluster');
    await terminate(ctx, state);
  });

  it('ships a CoordinateVNF script in k8s-cnf-v2 that records the pods it was told about, and fails on request', async () => {
    assert.ok((await v2.files.artifacts()).includes('Scripts/coordinate_cnf.js'), 'a declared artifact, with its checksum');
    assert.equal(v2.vnfd.flavours[0]?.lcmOperations.change_current_package?.artifact?.file, 'Scripts/coordinate_cnf.js');
    const script = (await v2.files.read('Scripts/coordinate_cnf.js')).toString('utf8');
    const run = (input: unknown): { code: number | null; output: unknown } => {
      const result = spawnSync(process.execPath, ['-e', script], { input: JSON.stringify(input), encoding: 'utf8' });
      return { code: result.status, output: JSON.parse(result.stdout) };
    };
    const input = {
      operation: 'change_current_package',
      request: { additionalParams: { upgrade_type: 'BlueGreen' } },
      vnfInstance: { id: 'inst-1' },
      vnfcs: [
        { vduId: 'VDU1', resourceId: 'vdu1-abc-1' },
        { vduId: 'VDU1', resourceId: 'vdu1-abc-2' },
      ],
      details: { services: [SERVICE] },
      target: 'new',
      is_rollback: false,
    };
    assert.deepEqual(run(input), {
      code: 0,
      output: {
        ok: true,
        operation: 'change_current_package',
        target: 'new',
        isRollback: false,
        vnfInstanceId: 'inst-1',
        coordinated: [
          { vduId: 'VDU1', resourceId: 'vdu1-abc-1' },
          { vduId: 'VDU1', resourceId: 'vdu1-abc-2' },
        ],
        services: [SERVICE],
      },
    });
    assert.deepEqual(run({ ...input, request: { additionalParams: { coordinate_fail: true } }, is_rollback: true }), {
      code: 1,
      output: { error: { detail: 'coordinate_cnf: failed as requested (additionalParams.coordinate_fail) during a rollback' } },
    });
  });
});

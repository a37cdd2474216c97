// OPERATE in the Kubernetes driver against the Kubernetes simulator: a bare Pod VDU stopped
// (deleted) and started (recreated from its manifest, same name); a Deployment stopped gracefully
// to 0 replicas and started with the count it had; while stopped, collect keeps the VNFCs on record
// as STOPPED and health() calls them healthy; a retried stop keeps the remembered count, and a start
// finds a workload at 0 that no state remembers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CsarArchive } from '#lib/packages/archive.ts';
import type { ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import type { DriverState, OperateChange, OperationContext, PackageFiles, Progress, VimConnection } from '#lib/vim/driver.ts';
import { kubernetesDriver, VNF_INSTANCE_LABEL } from '#lib/vim/kubernetes/index.ts';
import { startKubernetesSimulator, type KubernetesSimulator } from '#local/kubernetes/simulator.ts';
import { openSamplePackage } from '../../support/sample-package.ts';
import { pollToEnd } from '../../support/driver-steps.ts';

let sim: KubernetesSimulator;
let archive: CsarArchive;
let vnfd: ParsedVnfd;
let files: PackageFiles;

before(async () => {
  sim = await startKubernetesSimulator({ timeScale: 0.01 });
  ({ archive, vnfd, files } = await openSamplePackage('k8s-cnf-v1'));
});

after(async () => {
  await sim.close();
  await archive.close();
});

type KObject = { metadata: { name: string; uid: string }; spec?: { replicas?: number } };

async function kube(path: string): Promise<{ status: number; body: { items?: KObject[] } & KObject }> {
  const response = await fetch(new URL(path, sim.url), { headers: { authorization: `Bearer ${sim.token}` } });
  return { status: response.status, body: (await response.json()) as { items?: KObject[] } & KObject };
}

async function podNames(namespace: string, instanceId: string): Promise<string[]> {
  const answer = await kube(`/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(`${VNF_INSTANCE_LABEL}=${instanceId}`)}`);
  return (answer.body.items ?? []).map((pod) => pod.metadata.name).sort();
}

const vim: () => VimConnection = () => ({
  vimId: 'vim-k8s',
  vimType: 'ETSINFV.KUBERNETES.V_1',
  interfaceInfo: { endpoint: sim.url },
  accessInfo: { bearer_token: sim.token },
});

function withFiles(extra: Record<string, string>): PackageFiles {
  const bytes = (path: string): Buffer | undefined => (Object.hasOwn(extra, path) ? Buffer.from(extra[path] as string) : undefined);
  return {
    read: async (path) => bytes(path) ?? files.read(path),
    size: async (path) => bytes(path)?.length ?? files.size(path),
    stream: (path) => files.stream(path),
    list: async () => [...(await files.list()), ...Object.keys(extra)],
    artifacts: async () => [...(await files.artifacts()), ...Object.keys(extra)],
  };
}

let instances = 0;
function context(namespace: string, defFiles: string[], extra: Record<string, string> = {}, initial?: number): OperationContext {
  instances += 1;
  const request = { flavourId: 'simple', additionalParams: { 'lcm-kubernetes-def-files': defFiles, namespace } };
  const parsed =
    initial === undefined
      ? vnfd
      : { ...vnfd, flavours: vnfd.flavours.map((flavour) => ({ ...flavour, vduInitialDeltas: { ...flavour.vduInitialDeltas, VDU1: initial } })) };
  return {
    vnfInstanceId: `00000000-0000-4000-8000-${String(900 + instances).padStart(12, '0')}`,
    opOccId: `op-${instances}`,
    vnfd: parsed,
    flavourId: 'simple',
    request,
    instantiateRequest: request,
    files: withFiles(extra),
    vim: vim(),
    grant: {},
  };
}

const finish = (poll: (state: DriverState) => Promise<Progress>, state: DriverState): Promise<Progress> => pollToEnd(poll, state, () => sim.settled(), 30);

async function instantiate(ctx: OperationContext): Promise<DriverState> {
  const done = await finish((state) => kubernetesDriver.instantiatePoll(ctx, state), await kubernetesDriver.instantiateStart(ctx));
  assert.equal(done.status, 'DONE', done.status === 'FAILED' ? done.reason : undefined);
  return done.state;
}

async function operate(ctx: OperationContext, state: DriverState, change: OperateChange): Promise<DriverState> {
  const started = await kubernetesDriver.updateStart(ctx, state, change);
  await sim.settled();
  const done = await finish((current) => kubernetesDriver.updatePoll(ctx, current, change), started);
  assert.equal(done.status, 'DONE', done.status === 'FAILED' ? done.reason : undefined);
  assert.equal((done.state as { operate?: unknown }).operate, undefined, 'what one operation carried is not kept');
  return done.state;
}

async function terminate(ctx: OperationContext, state: DriverState): Promise<void> {
  const done = await finish((current) => kubernetesDriver.terminatePoll(ctx, current), await kubernetesDriver.terminateStart(ctx, state));
  assert.equal(done.status, 'DONE', done.status === 'FAILED' ? done.reason : undefined);
}

const states = async (ctx: OperationContext, state: DriverState) =>
  Object.fromEntries(((await kubernetesDriver.collect(ctx, state)).vnfcInfo ?? []).map((info) => [String(info.vnfcResourceInfoId), info.vnfcState]));

describe('OPERATE in the Kubernetes driver', () => {
  it('stops a bare Pod VDU by deleting it and starts it by recreating it under its name', async () => {
    const namespace = 'op-pod';
    const manifest = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: vdu1\nspec:\n  containers:\n    - name: web\n      image: nginx:1.26-alpine\n';
    const ctx = context(namespace, ['Files/kubernetes/pod.yaml'], { 'Files/kubernetes/pod.yaml': manifest });
    let state = await instantiate(ctx);
    const vnfcs = [{ vduId: 'VDU1', resourceId: 'vdu1' }];

    state = await operate(ctx, state, { kind: 'OPERATE', changeStateTo: 'STOPPED', stopType: 'GRACEFUL', gracefulStopTimeout: 0, vnfcs });
    assert.deepEqual(await podNames(namespace, ctx.vnfInstanceId), []);
    assert.deepEqual(await states(ctx, state), { vdu1: 'STOPPED' });
    const health = await kubernetesDriver.health(vim(), [{ vnfInstanceId: ctx.vnfInstanceId, state, vnfcs }]);
    assert.equal(health.results[0]?.healthy, true, health.results[0]?.reason);

    // Stopping what is stopped changes nothing.
    state = await operate(ctx, state, { kind: 'OPERATE', changeStateTo: 'STOPPED', stopType: 'FORCEFUL', vnfcs });
    assert.deepEqual(await podNames(namespace, ctx.vnfInstanceId), []);

    state = await operate(ctx, state, { kind: 'OPERATE', changeStateTo: 'STARTED', vnfcs });
    assert.deepEqual(await podNames(namespace, ctx.vnfInstanceId), ['vdu1']);
    assert.deepEqual(await states(ctx, state), { vdu1: 'STARTED' });
    await terminate(ctx, state);
  });

  it('stops a Deployment gracefully to 0 and starts it with the replicas it had; a retried stop remembers the count', async () => {
    const namespace = 'op-deploy';
    const ctx = context(namespace, ['Files/kubernetes/deployment.yaml', 'Files/kubernetes/service.yaml'], {}, 3);
    let state = await instantiate(ctx);
    const running = await podNames(namespace, ctx.vnfInstanceId);
    assert.equal(running.length, 3);
    const vnfcs = running.map((name) => ({ vduId: 'VDU1', resourceId: name }));
    const stop: OperateChange = { kind: 'OPERATE', changeStateTo: 'STOPPED', stopType: 'GRACEFUL', gracefulStopTimeout: 30, vnfcs };

    // A first attempt that got as far as the start step: its state is what a retry works from.
    const attempt = await kubernetesDriver.updateStart(ctx, state, stop);
    await sim.settled();
    state = await operate(ctx, attempt, stop);
    assert.deepEqual(await podNames(namespace, ctx.vnfInstanceId), []);
    assert.equal((await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`)).body.spec?.replicas, 0);
    const collected = await kubernetesDriver.collect(ctx, state);
    assert.deepEqual(collected.vnfcResourceInfo.map((vnfc) => vnfc.id).sort(), running, 'the stopped VNFCs stay on record');
    assert.deepEqual(new Set(collected.vnfcInfo?.map((info) => info.vnfcState)), new Set(['STOPPED']));
    const health = await kubernetesDriver.health(vim(), [{ vnfInstanceId: ctx.vnfInstanceId, state, vnfcs }]);
    assert.deepEqual(
      health.results.map((result) => result.healthy),
      [true, true, true],
    );

    state = await operate(ctx, state, { kind: 'OPERATE', changeStateTo: 'STARTED', vnfcs });
    assert.equal((await podNames(namespace, ctx.vnfInstanceId)).length, 3);
    assert.equal((await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`)).body.spec?.replicas, 3);
    assert.deepEqual(new Set(Object.values(await states(ctx, state))), new Set(['STARTED']));
    assert.deepEqual((state as { stopped?: unknown[] }).stopped, [], 'nothing is remembered as stopped');
    await terminate(ctx, state);
  });

  it('starts a workload found at 0 replicas that no state remembers (a stop marked failed) with as many pods as the VNFCs named', async () => {
    const namespace = 'op-lost';
    const ctx = context(namespace, ['Files/kubernetes/deployment.yaml', 'Files/kubernetes/service.yaml'], {}, 2);
    const instantiated = await instantiate(ctx);
    const vnfcs = (await podNames(namespace, ctx.vnfInstanceId)).map((name) => ({ vduId: 'VDU1', resourceId: name }));
    await operate(ctx, instantiated, { kind: 'OPERATE', changeStateTo: 'STOPPED', vnfcs });
    assert.deepEqual(await podNames(namespace, ctx.vnfInstanceId), []);
    // The instance's state from before the stop: it remembers nothing stopped.
    const state = await operate(ctx, instantiated, { kind: 'OPERATE', changeStateTo: 'STARTED', vnfcs });
    assert.equal((await podNames(namespace, ctx.vnfInstanceId)).length, 2);
    assert.equal((await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`)).body.spec?.replicas, 2);
    await terminate(ctx, state);
  });
});

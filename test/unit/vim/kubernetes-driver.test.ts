// The Kubernetes infra driver end to end against the Kubernetes simulator (local/kubernetes/), on the
// sample package k8s-cnf-v1 (a Deployment vdu1 and a Service): instantiate into a namespace with
// the instance label and the VNFD's replica count, what collect reads back, manifests refused
// before anything is created, an image that cannot be pulled, scale out and in removing the pod
// named, heal replacing exactly one pod, and terminate leaving nothing labelled (also from a lost
// state). What the driver did is checked on the simulator directly; steps are driven to completion
// by waiting for the simulator to settle, never by sleeping.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { CsarArchive } from '#lib/packages/archive.ts';
import type { ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import { UnprocessableEntityError } from '#lib/sol/errors.ts';
import { driverFor } from '#lib/vim/registry.ts';
import type { DriverState, OperationContext, PackageFiles, Progress, UpdateChange, VimConnection } from '#lib/vim/driver.ts';
import { KubernetesError, kubeConfigOf, kubernetesDriver, POD_DELETION_COST, VNF_INSTANCE_LABEL } from '#lib/vim/kubernetes/index.ts';
import { ZONE_LABEL } from '#lib/vim/kubernetes/manifests.ts';
import { startKubernetesSimulator, type KubernetesSimulator } from '#local/kubernetes/simulator.ts';
import { openSamplePackage } from '../../support/sample-package.ts';
import { pollToEnd } from '../../support/driver-steps.ts';

const DEF_FILES = ['Files/kubernetes/deployment.yaml', 'Files/kubernetes/service.yaml'];

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

beforeEach(async () => {
  sim.clearFaults();
  await sim.settled();
});

// ---------------------------------------------------------------------------------------------
// The cluster as the tests read it, directly over the API (not through the driver's client)

type KObject = {
  metadata: {
    name: string;
    namespace?: string;
    uid: string;
    creationTimestamp: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
  };
  spec?: Record<string, any>;
  status?: Record<string, any>;
};

async function kube(path: string): Promise<{ status: number; body: any }> {
  const response = await fetch(new URL(path, sim.url), { headers: { authorization: `Bearer ${sim.token}` } });
  return { status: response.status, body: await response.json() };
}

async function items(path: string, labelSelector?: string): Promise<KObject[]> {
  const answer = await kube(labelSelector ? `${path}?labelSelector=${encodeURIComponent(labelSelector)}` : path);
  assert.equal(answer.status, 200, `GET ${path}`);
  return answer.body.items as KObject[];
}

const labelled = (instanceId: string): string => `${VNF_INSTANCE_LABEL}=${instanceId}`;

/** Every object of the usual kinds, in any namespace, that carries the instance's label. */
async function labelledAnywhere(instanceId: string): Promise<string[]> {
  const paths = ['/api/v1/namespaces', '/api/v1/pods', '/api/v1/services', '/api/v1/configmaps', '/apis/apps/v1/deployments', '/apis/apps/v1/replicasets'];
  const found: string[] = [];
  for (const path of paths) found.push(...(await items(path, labelled(instanceId))).map((item) => `${path.split('/').at(-1)}/${item.metadata.name}`));
  return found;
}

/** The instance's pods in a namespace, by name. */
async function podNames(namespace: string, instanceId: string): Promise<string[]> {
  return (await items(`/api/v1/namespaces/${namespace}/pods`, labelled(instanceId))).map((pod) => pod.metadata.name).sort();
}

const isReady = (pod: KObject): boolean =>
  pod.status?.phase === 'Running' && (pod.status.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True');

// ---------------------------------------------------------------------------------------------
// Contexts, packages with extra files, and driving steps

function vim(access: Record<string, unknown> = {}, endpoint?: string): VimConnection {
  return {
    vimId: 'vim-k8s',
    vimType: 'ETSINFV.KUBERNETES.V_1',
    interfaceInfo: { endpoint: endpoint ?? sim.url },
    accessInfo: { bearer_token: sim.token, ...access },
  };
}

/** The sample's VNFD with VDU1 starting at `count` instances (the manifest says 1). */
function vnfdWithInitial(count: number): ParsedVnfd {
  return { ...vnfd, flavours: vnfd.flavours.map((flavour) => ({ ...flavour, vduInitialDeltas: { ...flavour.vduInitialDeltas, VDU1: count } })) };
}

/** The sample package plus extra files, declared as artifacts or not. */
function withFiles(extra: Record<string, string>, declared: boolean): PackageFiles {
  const bytes = (path: string): Buffer | undefined => (Object.hasOwn(extra, path) ? Buffer.from(extra[path] as string) : undefined);
  return {
    read: async (path) => bytes(path) ?? files.read(path),
    size: async (path) => bytes(path)?.length ?? files.size(path),
    stream: (path) => files.stream(path),
    list: async () => [...(await files.list()), ...Object.keys(extra)],
    artifacts: async () => [...(await files.artifacts()), ...(declared ? Object.keys(extra) : [])],
  };
}

let instances = 0;
function context(options: { namespace?: string; defFiles?: string[]; overrides?: Partial<OperationContext> } = {}): OperationContext {
  instances += 1;
  const request = {
    flavourId: 'simple',
    additionalParams: { 'lcm-kubernetes-def-files': options.defFiles ?? DEF_FILES, ...(options.namespace ? { namespace: options.namespace } : {}) },
  };
  return {
    vnfInstanceId: `00000000-0000-4000-8000-${String(instances).padStart(12, '0')}`,
    opOccId: `op-${instances}`,
    vnfd,
    flavourId: 'simple',
    request,
    instantiateRequest: request,
    files,
    vim: vim(),
    grant: {},
    ...options.overrides,
  };
}

const finish = (poll: (state: DriverState) => Promise<Progress>, state: DriverState): Promise<Progress> => pollToEnd(poll, state, () => sim.settled(), 30);

async function instantiate(ctx: OperationContext): Promise<DriverState> {
  const started = await kubernetesDriver.instantiateStart(ctx);
  await sim.settled();
  const done = await finish((state) => kubernetesDriver.instantiatePoll(ctx, state), started);
  assert.equal(done.status, 'DONE', done.status === 'FAILED' ? done.reason : undefined);
  return done.state;
}

async function update(ctx: OperationContext, state: DriverState, change: UpdateChange): Promise<DriverState> {
  const started = await kubernetesDriver.updateStart(ctx, state, change);
  await sim.settled();
  const done = await finish((current) => kubernetesDriver.updatePoll(ctx, current, change), started);
  assert.equal(done.status, 'DONE', done.status === 'FAILED' ? done.reason : undefined);
  return done.state;
}

async function terminate(ctx: OperationContext, state: DriverState): Promise<void> {
  const started = await kubernetesDriver.terminateStart(ctx, state);
  await sim.settled();
  const done = await finish((current) => kubernetesDriver.terminatePoll(ctx, current), started);
  assert.equal(done.status, 'DONE', done.status === 'FAILED' ? done.reason : undefined);
  await sim.settled();
  assert.deepEqual(await labelledAnywhere(ctx.vnfInstanceId), [], 'nothing labelled with the instance remains');
}

const vnfcNames = async (ctx: OperationContext, state: DriverState): Promise<string[]> =>
  (await kubernetesDriver.collect(ctx, state)).vnfcResourceInfo.map((vnfc) => String(vnfc.id));

async function statefulSetsServed(): Promise<boolean> {
  const answer = await kube('/apis/apps/v1');
  return answer.status === 200 && (answer.body.resources as Array<{ kind: string }>).some((resource) => resource.kind === 'StatefulSet');
}

// ---------------------------------------------------------------------------------------------

describe('Kubernetes driver on the simulator', () => {
  it('is registered for both vimTypes, verifies the VIM, and says why when the token or endpoint is wrong', async () => {
    assert.equal(driverFor('ETSINFV.KUBERNETES.V_1'), kubernetesDriver);
    assert.equal(driverFor('kubernetes'), kubernetesDriver);
    await kubernetesDriver.verify(vim());
    await assert.rejects(kubernetesDriver.verify(vim({ bearer_token: 'wrong' })), (error: unknown) => {
      assert.ok(error instanceof KubernetesError);
      assert.equal(error.vimStatus, 401);
      assert.match(error.message, /refused the bearer token/);
      assert.doesNotMatch(error.message, new RegExp(sim.token));
      return true;
    });
    await assert.rejects(kubernetesDriver.verify(vim({}, 'http://127.0.0.1:1')), /cannot reach the Kubernetes API at http:\/\/127\.0\.0\.1:1/);
    await assert.rejects(kubernetesDriver.verify(vim({ bearer_token: undefined })), UnprocessableEntityError);
  });

  it('builds the KubeConfig from the VIM: the CA for https, TLS checks off only for plain http', () => {
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const https = kubeConfigOf(vim({}, 'https://k8s.example:6443/')).getCurrentCluster();
    assert.equal(https?.server, 'https://k8s.example:6443');
    assert.equal(https?.skipTLSVerify, false);
    const withCa = kubeConfigOf({ ...vim({}, 'https://k8s.example:6443'), interfaceInfo: { endpoint: 'https://k8s.example:6443', ssl_ca_cert: pem } });
    assert.equal(Buffer.from(withCa.getCurrentCluster()?.caData ?? '', 'base64').toString('utf8'), pem);
    assert.equal(kubeConfigOf(vim()).getCurrentCluster()?.skipTLSVerify, true);
    assert.throws(() => kubeConfigOf(vim({}, 'k8s.example:6443')), UnprocessableEntityError);
  });

  it("instantiates the sample into its namespace with the label everywhere and the VNFD's replica count; collect names the pods", async () => {
    const namespace = 'cnf-basic';
    const ctx = context({ namespace, overrides: { vnfd: vnfdWithInitial(2) } });
    const started = await kubernetesDriver.instantiateStart(ctx);
    assert.deepEqual(
      started.objects,
      [
        { apiVersion: 'v1', kind: 'Namespace', name: namespace },
        { apiVersion: 'v1', kind: 'Service', namespace, name: 'vdu1-svc' },
        { apiVersion: 'apps/v1', kind: 'Deployment', namespace, name: 'vdu1' },
      ],
      'the namespace (which did not exist), then the Service, then the workload',
    );
    assert.doesNotMatch(JSON.stringify(started), new RegExp(sim.token), 'no credentials in the state');
    await sim.settled();
    const done = await finish((state) => kubernetesDriver.instantiatePoll(ctx, state), started);
    assert.equal(done.status, 'DONE');

    const ns = await kube(`/api/v1/namespaces/${namespace}`);
    assert.equal(ns.body.metadata.labels[VNF_INSTANCE_LABEL], ctx.vnfInstanceId);
    const deployment = (await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`)).body as KObject;
    assert.equal(deployment.metadata.labels?.[VNF_INSTANCE_LABEL], ctx.vnfInstanceId);
    assert.equal(deployment.metadata.labels?.app, 'sample-cnf', "the manifest's own labels stay");
    assert.equal(deployment.spec?.template.metadata.labels[VNF_INSTANCE_LABEL], ctx.vnfInstanceId);
    assert.equal(deployment.spec?.replicas, 2, "the VDU's initial delta, not the manifest's 1");
    const service = (await kube(`/api/v1/namespaces/${namespace}/services/vdu1-svc`)).body as KObject;
    assert.equal(service.metadata.labels?.[VNF_INSTANCE_LABEL], ctx.vnfInstanceId);
    const pods = await items(`/api/v1/namespaces/${namespace}/pods`, labelled(ctx.vnfInstanceId));
    assert.equal(pods.length, 2);
    assert.ok(pods.every(isReady));
    assert.equal(sim.state().namespaces.default?.deployments.count, 0, 'nothing went to the default namespace');

    const collected = await kubernetesDriver.collect(ctx, done.state);
    const createdAt = new Map(pods.map((pod) => [pod.metadata.name, pod.metadata.creationTimestamp]));
    assert.deepEqual(
      new Set(collected.vnfcResourceInfo.map((vnfc) => vnfc.id)),
      new Set(pods.map((pod) => pod.metadata.name)),
      'one VNFC per pod, named after it',
    );
    const times = collected.vnfcResourceInfo.map((vnfc) => createdAt.get(String(vnfc.id)) ?? '');
    assert.deepEqual(times, [...times].sort(), 'oldest first');
    for (const vnfc of collected.vnfcResourceInfo) {
      assert.equal(vnfc.vduId, 'VDU1');
      assert.deepEqual(vnfc.computeResource, { vimConnectionId: 'vim-k8s', resourceId: vnfc.id, vimLevelResourceType: 'Deployment' });
      const metadata = vnfc.metadata as Record<string, unknown>;
      assert.equal(metadata.namespace, namespace);
      assert.match(String(metadata.creation_time), /^\d{4}-\d\d-\d\dT/);
    }
    assert.deepEqual(
      collected.vnfcInfo,
      collected.vnfcResourceInfo.map((vnfc) => ({ id: `VDU1-${String(vnfc.id)}`, vduId: 'VDU1', vnfcResourceInfoId: vnfc.id, vnfcState: 'STARTED' })),
    );
    assert.deepEqual([collected.vnfVirtualLinkResourceInfo, collected.virtualStorageResourceInfo], [[], []]);
    // The Service is the CNF's external CP: a virtual IP in front of its pods.
    const svc = (await kube(`/api/v1/namespaces/${namespace}/services/vdu1-svc`)).body as { spec: { clusterIP: string } };
    assert.equal(collected.extCpInfo.length, 1);
    assert.deepEqual(
      { ...collected.extCpInfo[0], id: undefined },
      {
        id: undefined,
        cpdId: 'vdu1-svc',
        cpConfigId: 'vdu1-svc',
        associatedVipCpId: 'vdu1-svc',
        cpProtocolInfo: [
          { layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', addresses: [svc.spec.clusterIP], isDynamic: true }] } },
        ],
      },
    );

    await terminate(ctx, done.state);
    assert.equal((await kube(`/api/v1/namespaces/${namespace}`)).status, 404, 'the namespace the driver created goes too');
  });

  it("uses the manifests' own namespace, else default, and never deletes a namespace it did not create", async () => {
    const ctx = context();
    const state = await instantiate(ctx);
    assert.equal(state.namespace, 'default');
    assert.ok(!(state.objects as Array<{ kind: string }>).some((ref) => ref.kind === 'Namespace'), 'default already existed');
    assert.deepEqual(sim.state().namespaces.default?.deployments.names, ['vdu1']);
    await terminate(ctx, state);
    assert.equal((await kube('/api/v1/namespaces/default')).status, 200);
  });

  it('refuses an undeclared, missing or hostile manifest before creating anything', async () => {
    const namespace = 'cnf-refused';
    const extra = { 'Files/kubernetes/extra.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n' };
    const undeclared = context({ namespace, defFiles: [...DEF_FILES, 'Files/kubernetes/extra.yaml'], overrides: { files: withFiles(extra, false) } });
    await assert.rejects(kubernetesDriver.instantiateStart(undeclared), (error: unknown) => {
      assert.ok(error instanceof UnprocessableEntityError);
      assert.match(error.message, /Files\/kubernetes\/extra\.yaml, which the VNF package does not declare as artifacts/);
      return true;
    });
    const missing = context({ namespace, defFiles: [...DEF_FILES, 'Files/kubernetes/nope.yaml'], overrides: { files: withFiles({}, false) } });
    const declaredMissing: PackageFiles = { ...missing.files, artifacts: async () => [...(await files.artifacts()), 'Files/kubernetes/nope.yaml'] };
    await assert.rejects(
      kubernetesDriver.instantiateStart({ ...missing, files: declaredMissing }),
      /names Files\/kubernetes\/nope\.yaml, which the VNF package does not contain/,
    );
    const bomb = [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: {name: bomb}',
      'data:',
      '  a: &a ["x","x","x","x","x","x","x","x","x"]',
      ...Array.from(
        { length: 12 },
        (_, i) =>
          `  ${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`,
      ),
    ].join('\n');
    const hostile = context({
      namespace,
      defFiles: ['Files/kubernetes/bomb.yaml', ...DEF_FILES],
      overrides: { files: withFiles({ 'Files/kubernetes/bomb.yaml': bomb }, true) },
    });
    await assert.rejects(
      kubernetesDriver.instantiateStart(hostile),
      (error: unknown) => error instanceof UnprocessableEntityError && /bomb\.yaml.*alias/i.test(error.message),
    );
    const noVdu = context({ namespace, defFiles: ['Files/kubernetes/service.yaml'] });
    await assert.rejects(kubernetesDriver.instantiateStart(noVdu), /the manifests deploy none of the VDUs of flavour simple \(no .* named vdu1\)/);
    await sim.settled();
    assert.equal(sim.state().namespaces[namespace], undefined, 'not even the namespace was created');
  });

  it("fails with the pod's own reason when its image cannot be pulled; terminate with that state removes every object", async () => {
    const namespace = 'cnf-badimage';
    const deployment = (await files.read('Files/kubernetes/deployment.yaml')).toString('utf8').replace('nginx:1.26-alpine', 'registry.example/badimage:1.0');
    sim.inject({ kind: 'image-pull-fail', image: 'badimage' });
    const ctx = context({
      namespace,
      defFiles: ['Files/kubernetes/bad-deployment.yaml', 'Files/kubernetes/service.yaml'],
      overrides: { files: withFiles({ 'Files/kubernetes/bad-deployment.yaml': deployment }, true) },
    });
    const started = await kubernetesDriver.instantiateStart(ctx);
    await sim.settled();
    const failed = await finish((state) => kubernetesDriver.instantiatePoll(ctx, state), started);
    assert.equal(failed.status, 'FAILED');
    assert.match(
      failed.status === 'FAILED' ? failed.reason : '',
      /^pod vdu1-[a-z0-9-]+: container web: ImagePullBackOff: Back-off pulling image "registry\.example\/badimage:1\.0"$/,
    );
    assert.equal(sim.state().namespaces[namespace]?.deployments.count, 1, 'the failure leaves the objects for rollback');

    // Rollback: the engine terminates with the state the failed poll returned.
    await terminate(ctx, failed.state);
    assert.equal(sim.state().namespaces[namespace], undefined);
  });

  it('scales out 1 -> 3 keeping the first pod, and in 3 -> 2 removing exactly the pod named', async () => {
    const namespace = 'cnf-scale';
    const ctx = context({ namespace });
    let state = await instantiate(ctx);
    const [first] = await vnfcNames(ctx, state);
    assert.ok(first);

    state = await update(ctx, state, { kind: 'SCALE', scaleType: 'SCALE_OUT', aspectId: 'vdu1_aspect', steps: 2, targets: { VDU1: 3 }, remove: [] });
    assert.equal(state.replaced, undefined, "the state on DONE is the VNF's lasting state");
    const scaledOut = await vnfcNames(ctx, state);
    assert.equal(scaledOut.length, 3);
    assert.ok(scaledOut.includes(first), 'the existing pod stays');
    assert.deepEqual(await podNames(namespace, ctx.vnfInstanceId), [...scaledOut].sort());
    assert.equal((await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`)).body.spec.replicas, 3);

    // Not the pod the simulator's ReplicaSet controller would take by itself: it ignores
    // pod-deletion-cost and, all pods being ready and (within the second) of one age, takes the
    // first it lists, the oldest. Naming another one shows that the driver chose.
    const victim = scaledOut.filter((name) => name !== first).at(-1) ?? '';
    state = await update(ctx, state, {
      kind: 'SCALE',
      scaleType: 'SCALE_IN',
      aspectId: 'vdu1_aspect',
      steps: 1,
      targets: { VDU1: 2 },
      remove: [{ vduId: 'VDU1', resourceId: victim }],
    });
    const scaledIn = await podNames(namespace, ctx.vnfInstanceId);
    assert.deepEqual(scaledIn, scaledOut.filter((name) => name !== victim).sort(), 'exactly the named pod went; the others keep their names');
    assert.ok(scaledIn.includes(first));
    assert.deepEqual((await vnfcNames(ctx, state)).sort(), scaledIn);
    assert.equal((await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`)).body.spec.replicas, 2);
    const pods = await items(`/api/v1/namespaces/${namespace}/pods`, labelled(ctx.vnfInstanceId));
    assert.ok(pods.every(isReady));
    assert.ok(
      pods.every((pod) => pod.metadata.annotations?.[POD_DELETION_COST] === undefined),
      'only the removed pod was marked',
    );

    await assert.rejects(
      kubernetesDriver.updateStart(ctx, state, { kind: 'SCALE', scaleType: 'SCALE_OUT', aspectId: 'x', steps: 1, targets: { VDU9: 1 }, remove: [] }),
      /no VDU VDU9/,
    );
    await terminate(ctx, state);
  });

  it("places a VDU's pods in its granted zone: at instantiate, and at a scale-out from no pod; refuses to split a VDU across zones", async () => {
    const label = await fetch(new URL('/api/v1/nodes/node-2', sim.url), {
      method: 'PATCH',
      headers: { authorization: `Bearer ${sim.token}`, 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { labels: { [ZONE_LABEL]: 'az-b' } } }),
    });
    assert.equal(label.status, 200);
    const affinityOf = async (namespace: string) =>
      (await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`)).body.spec.template.spec.affinity?.nodeAffinity
        ?.requiredDuringSchedulingIgnoredDuringExecution;
    const inZone = (zone: string) => ({ nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE_LABEL, operator: 'In', values: [zone] }] }] });

    // Granted at instantiate.
    const placed = context({ namespace: 'cnf-zoned', overrides: { grant: { vduZones: { VDU1: 'az-b' } } } });
    const placedState = await instantiate(placed);
    assert.deepEqual(await affinityOf('cnf-zoned'), inZone('az-b'));
    assert.deepEqual(placedState.zones, { vdu1: 'az-b' });
    const pods = await items('/api/v1/namespaces/cnf-zoned/pods', labelled(placed.vnfInstanceId));
    assert.deepEqual(
      pods.map((pod) => pod.spec?.nodeName),
      ['node-2'],
    );
    await terminate(placed, placedState);

    // No pod at first, no zone at instantiate: the scale-out's grant places the workload.
    const ctx = context({ namespace: 'cnf-zoned-later', overrides: { vnfd: vnfdWithInitial(0) } });
    let state = await instantiate(ctx);
    assert.equal(await affinityOf('cnf-zoned-later'), undefined);
    const out: UpdateChange = { kind: 'SCALE', scaleType: 'SCALE_OUT', aspectId: 'vdu1_aspect', steps: 1, targets: { VDU1: 1 }, remove: [] };
    state = await update({ ...ctx, grant: { vduZones: { VDU1: 'az-b' } } }, state, out);
    assert.deepEqual(await affinityOf('cnf-zoned-later'), inZone('az-b'));
    assert.deepEqual(state.zones, { vdu1: 'az-b' });
    assert.deepEqual(
      (await items('/api/v1/namespaces/cnf-zoned-later/pods', labelled(ctx.vnfInstanceId))).map((pod) => pod.spec?.nodeName),
      ['node-2'],
    );
    // Its pods are in az-b now: another zone for the next ones is refused before anything changes.
    await assert.rejects(
      kubernetesDriver.updateStart({ ...ctx, grant: { vduZones: { VDU1: 'az-c' } } }, state, { ...out, targets: { VDU1: 2 } }),
      (error: unknown) => error instanceof UnprocessableEntityError && /new pods of VDU1 in zone az-c, but its 1 pods are in zone az-b/.test(error.message),
    );
    assert.equal((await kube('/apis/apps/v1/namespaces/cnf-zoned-later/deployments/vdu1')).body.spec.replicas, 1);
    await terminate(ctx, state);
  });

  it('heals one pod: exactly it is replaced, the other keeps its name', async () => {
    const namespace = 'cnf-heal';
    const ctx = context({ namespace, overrides: { vnfd: vnfdWithInitial(2) } });
    let state = await instantiate(ctx);
    const [healed, kept] = await vnfcNames(ctx, state);
    assert.ok(healed && kept);

    state = await update(ctx, state, { kind: 'HEAL', vnfcs: [{ vduId: 'VDU1', resourceId: healed }] });
    const after = await podNames(namespace, ctx.vnfInstanceId);
    assert.equal(after.length, 2);
    assert.ok(after.includes(kept), 'the other pod keeps its name');
    assert.ok(!after.includes(healed), 'the healed pod was replaced');
    assert.ok((await items(`/api/v1/namespaces/${namespace}/pods`, labelled(ctx.vnfInstanceId))).every(isReady));
    assert.deepEqual((await vnfcNames(ctx, state)).sort(), after);

    // A pod that is already gone is nothing to replace: the update completes at once, touching nothing.
    const gone: UpdateChange = { kind: 'HEAL', vnfcs: [{ vduId: 'VDU1', resourceId: healed }] };
    const progress = await kubernetesDriver.updatePoll(ctx, await kubernetesDriver.updateStart(ctx, state, gone), gone);
    assert.equal(progress.status, 'DONE');
    assert.deepEqual(await podNames(namespace, ctx.vnfInstanceId), after);
    await terminate(ctx, state);
  });

  it('keeps what a retried instantiate start already created, and never takes over an object it does not own', async () => {
    const namespace = 'cnf-retry';
    const ctx = context({ namespace });
    const first = await kubernetesDriver.instantiateStart(ctx);
    const second = await kubernetesDriver.instantiateStart(ctx);
    assert.deepEqual(second, first, 'the 409s are its own objects');
    await sim.settled();
    const done = await finish((state) => kubernetesDriver.instantiatePoll(ctx, state), second);
    assert.equal(done.status, 'DONE');
    assert.equal((await podNames(namespace, ctx.vnfInstanceId)).length, 1);

    const other = context({ namespace });
    await assert.rejects(kubernetesDriver.instantiateStart(other), (error: unknown) => {
      assert.ok(error instanceof KubernetesError);
      assert.match(error.message, /Service cnf-retry\/vdu1-svc already exists and does not belong to this VNF instance/);
      return true;
    });
    await sim.settled();
    assert.equal(
      (await kube(`/api/v1/namespaces/${namespace}/services/vdu1-svc`)).body.metadata.labels[VNF_INSTANCE_LABEL],
      ctx.vnfInstanceId,
      "the first VNF's Service is untouched",
    );
    await terminate(ctx, done.state);
  });

  it('terminates from a lost state by finding the objects by label', async () => {
    const namespace = 'cnf-lost';
    const ctx = context({ namespace });
    await instantiate(ctx);
    assert.notDeepEqual(await labelledAnywhere(ctx.vnfInstanceId), []);
    await terminate(ctx, {});
    assert.equal((await kube(`/api/v1/namespaces/${namespace}`)).status, 404, 'the namespace carried the label, so the driver had created it');
  });

  it('heals a bare Pod VDU by recreating it from its manifest once the old pod is gone', async () => {
    const namespace = 'cnf-pod';
    const manifest = `apiVersion: v1
kind: Pod
metadata:
  name: vdu1
spec:
  containers:
    - name: web
      image: nginx:1.26-alpine
`;
    const ctx = context({
      namespace,
      defFiles: ['Files/kubernetes/pod.yaml'],
      overrides: { files: withFiles({ 'Files/kubernetes/pod.yaml': manifest }, true) },
    });
    let state = await instantiate(ctx);
    const collected = await kubernetesDriver.collect(ctx, state);
    assert.deepEqual(
      collected.vnfcResourceInfo.map((vnfc) => [vnfc.id, (vnfc.computeResource as Record<string, unknown>).vimLevelResourceType]),
      [['vdu1', 'Pod']],
    );
    const before = (await kube(`/api/v1/namespaces/${namespace}/pods/vdu1`)).body as KObject;

    state = await update(ctx, state, { kind: 'HEAL', vnfcs: [{ vduId: 'VDU1', resourceId: 'vdu1' }] });
    const healed = (await kube(`/api/v1/namespaces/${namespace}/pods/vdu1`)).body as KObject;
    assert.notEqual(healed.metadata.uid, before.metadata.uid, 'a new pod');
    assert.equal(healed.metadata.labels?.[VNF_INSTANCE_LABEL], ctx.vnfInstanceId);
    assert.ok(isReady(healed));
    await assert.rejects(
      kubernetesDriver.updateStart(ctx, state, { kind: 'SCALE', scaleType: 'SCALE_OUT', aspectId: 'vdu1_aspect', steps: 1, targets: { VDU1: 2 }, remove: [] }),
      /VDU VDU1 is a Pod, which has no replica count to scale/,
    );
    await terminate(ctx, state);
  });

  it('runs a StatefulSet VDU: replicas from the VNFD, heal waits for the new pod of the same name, scale-in from the top', async (t) => {
    if (!(await statefulSetsServed())) {
      t.skip('the simulator does not serve StatefulSets yet');
      return;
    }
    const namespace = 'cnf-sts';
    const manifest = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: vdu1
spec:
  serviceName: vdu1
  replicas: 1
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
        - name: db
          image: postgres:16
`;
    const ctx = context({
      namespace,
      defFiles: ['Files/kubernetes/sts.yaml'],
      overrides: { vnfd: vnfdWithInitial(2), files: withFiles({ 'Files/kubernetes/sts.yaml': manifest }, true) },
    });
    let state = await instantiate(ctx);
    assert.deepEqual(await vnfcNames(ctx, state), ['vdu1-0', 'vdu1-1']);
    const collected = await kubernetesDriver.collect(ctx, state);
    assert.equal((collected.vnfcResourceInfo[0]!.computeResource as Record<string, unknown>).vimLevelResourceType, 'StatefulSet');

    const uid = async (name: string): Promise<string> => (await kube(`/api/v1/namespaces/${namespace}/pods/${name}`)).body.metadata.uid;
    const [before0, before1] = [await uid('vdu1-0'), await uid('vdu1-1')];
    state = await update(ctx, state, { kind: 'HEAL', vnfcs: [{ vduId: 'VDU1', resourceId: 'vdu1-0' }] });
    assert.notEqual(await uid('vdu1-0'), before0, 'a new pod of the same name');
    assert.equal(await uid('vdu1-1'), before1, 'the other pod is untouched');

    state = await update(ctx, state, {
      kind: 'SCALE',
      scaleType: 'SCALE_IN',
      aspectId: 'vdu1_aspect',
      steps: 1,
      targets: { VDU1: 1 },
      remove: [{ vduId: 'VDU1', resourceId: 'vdu1-1' }],
    });
    assert.deepEqual(await podNames(namespace, ctx.vnfInstanceId), ['vdu1-0']);
    await terminate(ctx, state);
  });
});

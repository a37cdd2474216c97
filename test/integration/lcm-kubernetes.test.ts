// The CNF lifecycle over HTTP on the built-in Kubernetes simulator (the default VIM
// "local-kubernetes" of `npm start`): instantiate from the sample CNF package's manifests, scale out
// and in, heal one pod, terminate; an image pull failure and its rollback; scaling beyond the
// aspect's maximum. What the VNFM reports is checked against the cluster itself.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertEtsiResponse, assertEtsiSchema } from '../support/etsi.ts';
import { buildCsar, SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { client, settle, startVnfm, type LocalVnfm, type Reply } from '../support/runtime.ts';

let vnfm: LocalVnfm;
let call: ReturnType<typeof client>;
let cluster: { endpoint: string; control: string; bearer_token: string };
const vnfdId = SAMPLE_PACKAGES['k8s-cnf-v1'].vnfdId;
const DEF_FILES = ['Files/kubernetes/deployment.yaml', 'Files/kubernetes/service.yaml'];
const LABEL = 'vnf-instance-id';

before(async () => {
  vnfm = await startVnfm();
  call = client(vnfm);
  cluster = JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8'))['local-kubernetes'];
  const pkg = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
  await call('PUT', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content`, { raw: await buildCsar('k8s-cnf-v1'), headers: { 'Content-Type': 'application/zip' } });
  await settle(vnfm);
});
after(async () => {
  await vnfm.stop();
});

type KObject = {
  metadata: { name: string; uid: string; labels?: Record<string, string>; namespace?: string };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
};

/** Reads the cluster directly, as kubectl would. */
async function kube(path: string): Promise<{ status: number; body: { items?: KObject[] } & KObject }> {
  const response = await fetch(`${cluster.endpoint}${path}`, { headers: { Authorization: `Bearer ${cluster.bearer_token}` } });
  return { status: response.status, body: (await response.json()) as { items?: KObject[] } & KObject };
}

async function pods(namespace: string, instanceId: string): Promise<KObject[]> {
  const listed = await kube(`/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(`${LABEL}=${instanceId}`)}`);
  return (listed.body.items ?? []).filter((pod) => !(pod.metadata as { deletionTimestamp?: string }).deletionTimestamp);
}

async function control(path: string, method: string, body?: unknown): Promise<void> {
  const response = await fetch(`${cluster.control}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  assert.ok(response.ok, await response.text());
}

function assertProblem(reply: Reply, status: number): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.headers.get('content-type'), 'application/problem+json');
}

async function createInstance(): Promise<string> {
  const reply = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId, vnfInstanceName: 'cnf' } });
  assert.equal(reply.status, 201, reply.text);
  return (reply.body as { id: string }).id;
}

async function operate(path: string, body: unknown): Promise<string> {
  const reply = await call('POST', path, { body });
  assert.equal(reply.status, 202, reply.text);
  return new URL(reply.headers.get('location') ?? '').pathname;
}

async function completed(path: string, state = 'COMPLETED'): Promise<Record<string, unknown>> {
  await settle(vnfm);
  const reply = await call('GET', path);
  const occ = reply.body as Record<string, unknown>;
  assert.equal(occ.operationState, state, JSON.stringify(occ));
  await assertEtsiResponse('vnflcm', '/vnf_lcm_op_occs/{vnfLcmOpOccId}', 'get', 200, occ);
  return occ;
}

type Vnfc = { id: string; vduId: string; computeResource: { resourceId: string; vimLevelResourceType: string } };
type Instance = {
  instantiationState: string;
  vimConnectionInfo?: Record<string, unknown>;
  instantiatedVnfInfo: {
    vnfcResourceInfo: Vnfc[];
    vnfcInfo: Array<{ id: string; vnfcResourceInfoId: string }>;
    scaleStatus: Array<{ aspectId: string; scaleLevel: number }>;
  };
};

async function instance(id: string): Promise<Instance> {
  const reply = await call('GET', `/vnflcm/v2/vnf_instances/${id}`);
  assert.equal(reply.status, 200, reply.text);
  await assertEtsiResponse('vnflcm', '/vnf_instances/{vnfInstanceId}', 'get', 200, reply.body);
  return reply.body as Instance;
}

type Changes = { affectedVnfcs: Array<{ changeType: string; computeResource: { resourceId: string } }> };
const changed = (occ: Record<string, unknown>, type: string): string[] =>
  (occ.resourceChanges as Changes).affectedVnfcs
    .filter((c) => c.changeType === type)
    .map((c) => c.computeResource.resourceId)
    .sort();

describe('the CNF lifecycle on the Kubernetes VIM', () => {
  it('instantiates, scales out and in, heals one pod and terminates, as the cluster shows', async () => {
    const id = await createInstance();
    const namespace = 'cnf-lifecycle';
    const request = { flavourId: 'simple', additionalParams: { 'lcm-kubernetes-def-files': DEF_FILES, namespace } };
    await assertEtsiSchema('vnflcm', 'InstantiateVnfRequest', request);
    const inst = await completed(await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, request));
    assert.equal(changed(inst, 'ADDED').length, 1);

    const deployment = await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`);
    assert.equal(deployment.status, 200);
    assert.equal(deployment.body.metadata.labels?.[LABEL], id);
    assert.equal(deployment.body.spec?.replicas, 1);
    const service = await kube(`/api/v1/namespaces/${namespace}/services/vdu1-svc`);
    assert.equal(service.body.metadata.labels?.[LABEL], id);
    let running = await pods(namespace, id);
    assert.equal(running.length, 1);
    let shown = await instance(id);
    assert.equal(shown.instantiationState, 'INSTANTIATED');
    assert.deepEqual(
      shown.instantiatedVnfInfo.vnfcResourceInfo.map((v) => v.computeResource.resourceId),
      running.map((p) => p.metadata.name),
    );
    assert.equal(shown.instantiatedVnfInfo.vnfcResourceInfo[0]?.computeResource.vimLevelResourceType, 'Deployment');
    assert.deepEqual(shown.instantiatedVnfInfo.scaleStatus, [{ aspectId: 'vdu1_aspect', scaleLevel: 0 }]);
    const first = running[0]?.metadata.name ?? '';

    // Scale out by two steps: the maximum level of the aspect.
    const scaleOut = { type: 'SCALE_OUT', aspectId: 'vdu1_aspect', numberOfSteps: 2 };
    await assertEtsiSchema('vnflcm', 'ScaleVnfRequest', scaleOut);
    const out = await completed(await operate(`/vnflcm/v2/vnf_instances/${id}/scale`, scaleOut));
    running = await pods(namespace, id);
    assert.equal(running.length, 3);
    assert.equal((await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`)).body.spec?.replicas, 3);
    assert.deepEqual(
      changed(out, 'ADDED'),
      running
        .map((p) => p.metadata.name)
        .filter((name) => name !== first)
        .sort(),
    );
    shown = await instance(id);
    assert.equal(shown.instantiatedVnfInfo.vnfcResourceInfo.length, 3);
    assert.deepEqual(shown.instantiatedVnfInfo.scaleStatus, [{ aspectId: 'vdu1_aspect', scaleLevel: 2 }]);

    // Beyond max_scale_level: 400, and nothing changes.
    const before = await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,vnfInstanceId,${id})`);
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/scale`, { body: { type: 'SCALE_OUT', aspectId: 'vdu1_aspect' } }), 400);
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/scale`, { body: { type: 'SCALE_OUT', aspectId: 'no_such_aspect' } }), 400);
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/scale`, { body: { type: 'SCALE_UP', aspectId: 'vdu1_aspect' } }), 400);
    assert.deepEqual((await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,vnfInstanceId,${id})`)).body, before.body);
    assert.equal((await pods(namespace, id)).length, 3);

    // Scale in by one: the newest pod goes.
    const newest = shown.instantiatedVnfInfo.vnfcResourceInfo.at(-1)?.computeResource.resourceId;
    const scaledIn = await completed(await operate(`/vnflcm/v2/vnf_instances/${id}/scale`, { type: 'SCALE_IN', aspectId: 'vdu1_aspect' }));
    assert.deepEqual(changed(scaledIn, 'REMOVED'), [newest]);
    running = await pods(namespace, id);
    assert.equal(running.length, 2);
    assert.ok(!running.some((p) => p.metadata.name === newest), `${newest} was removed`);
    shown = await instance(id);
    assert.deepEqual(shown.instantiatedVnfInfo.scaleStatus, [{ aspectId: 'vdu1_aspect', scaleLevel: 1 }]);

    // Heal one VNFC: exactly that pod is replaced; the other keeps its name.
    const [healed, kept] = shown.instantiatedVnfInfo.vnfcInfo;
    assert.ok(healed && kept);
    const healedPod = shown.instantiatedVnfInfo.vnfcResourceInfo.find((v) => v.id === healed.vnfcResourceInfoId)?.computeResource.resourceId;
    const keptPod = shown.instantiatedVnfInfo.vnfcResourceInfo.find((v) => v.id === kept.vnfcResourceInfoId)?.computeResource.resourceId;
    const healRequest = { vnfcInstanceId: [healed.id], cause: 'test' };
    await assertEtsiSchema('vnflcm', 'HealVnfRequest', healRequest);
    const heal = await completed(await operate(`/vnflcm/v2/vnf_instances/${id}/heal`, healRequest));
    assert.deepEqual(changed(heal, 'REMOVED'), [healedPod]);
    assert.equal(changed(heal, 'ADDED').length, 1);
    running = await pods(namespace, id);
    const names = running.map((p) => p.metadata.name);
    assert.equal(running.length, 2);
    assert.ok(names.includes(keptPod ?? ''), 'the other pod keeps its name');
    assert.ok(!names.includes(healedPod ?? ''), 'the healed pod was replaced');
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/heal`, { body: { vnfcInstanceId: ['no-such-vnfc'] } }), 422);

    // Terminate: nothing labelled with the instance remains.
    await completed(await operate(`/vnflcm/v2/vnf_instances/${id}/terminate`, { terminationType: 'FORCEFUL' }));
    assert.equal((await pods(namespace, id)).length, 0);
    assert.equal((await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`)).status, 404);
    assert.equal((await kube(`/api/v1/namespaces/${namespace}/services/vdu1-svc`)).status, 404);
    assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`)).status, 204);
  });

  it('deploys what the manifests hold and skips VDUs they have no workload for, as Tacker does, saying so in the op occ; pods without a Service are the external CPs', async () => {
    // The sample with a second VDU (vdu2) that neither manifest deploys, under a VNFD id of its own.
    const twoVdus = 'b1a2c3d4-0000-4000-8000-00000000cafe';
    const csar = await buildCsar('k8s-cnf-v1', {
      mutate: (files) => {
        const top = 'Definitions/sample_cnf_top.vnfd.yaml';
        files.set(top, Buffer.from(String(files.get(top)).replace(vnfdId, twoVdus)));
        const df = 'Definitions/sample_cnf_df_simple.yaml';
        const vdu2 =
          '    VDU2:\n      type: tosca.nodes.nfv.Vdu.Compute\n      properties:\n        name: vdu2\n        description: a VDU whose manifest is not chosen\n        vdu_profile:\n          min_number_of_instances: 1\n          max_number_of_instances: 1\n\n  policies:\n';
        files.set(df, Buffer.from(String(files.get(df)).replace('\n  policies:\n', `\n${vdu2}`)));
      },
    });
    const pkg = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
    await call('PUT', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content`, { raw: csar, headers: { 'Content-Type': 'application/zip' } });
    await settle(vnfm);
    const onboarded = (await call('GET', `/vnfpkgm/v1/vnf_packages/${pkg}`)).body as { onboardingState: string; onboardingFailureDetails?: unknown };
    assert.equal(onboarded.onboardingState, 'ONBOARDED', JSON.stringify(onboarded.onboardingFailureDetails));
    const id = ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: twoVdus } })).body as { id: string }).id;
    const occ = await completed(
      await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, {
        flavourId: 'simple',
        additionalParams: { 'lcm-kubernetes-def-files': ['Files/kubernetes/deployment.yaml'], namespace: 'cnf-skipped-vdu' },
      }),
    );
    const full = (await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,id,${String(occ.id)})&all_fields`)).body as Array<{ warnings?: string[] }>;
    assert.match(full[0]?.warnings?.join('\n') ?? '', /VDU VDU2 \(vdu2\) was not deployed/);
    const info = (await instance(id)).instantiatedVnfInfo as unknown as {
      vnfcResourceInfo: Array<{ id: string; vduId: string; vnfcCpInfo: Array<{ id: string; cpdId: string; vnfExtCpId?: string }> }>;
      extCpInfo: Array<{
        id: string;
        cpdId: string;
        associatedVnfcCpId?: string;
        cpProtocolInfo?: Array<{ ipOverEthernet?: { ipAddresses: Array<{ addresses: string[] }> } }>;
      }>;
    };
    assert.deepEqual(
      info.vnfcResourceInfo.map((vnfc) => vnfc.vduId),
      ['VDU1'],
    );
    // No Service: the pod's own address is the VNF's external CP (SOL003 wants 1..N), tied to its VNFC CP.
    const [vnfc] = info.vnfcResourceInfo;
    assert.equal(info.extCpInfo.length, 1);
    const [extCp] = info.extCpInfo;
    assert.equal(extCp?.cpdId, 'VDU1');
    assert.equal(extCp?.associatedVnfcCpId, vnfc?.vnfcCpInfo[0]?.id);
    assert.equal(vnfc?.vnfcCpInfo[0]?.vnfExtCpId, extCp?.id);
    const [address] = extCp?.cpProtocolInfo?.[0]?.ipOverEthernet?.ipAddresses[0]?.addresses ?? [];
    const pod = (await pods('cnf-skipped-vdu', id))[0] as { status?: { podIP?: string } } | undefined;
    assert.ok(address && address === pod?.status?.podIP, `${String(address)} is the pod's IP`);
    assert.equal((await pods('cnf-skipped-vdu', id)).length, 1);
    await completed(await operate(`/vnflcm/v2/vnf_instances/${id}/terminate`, { terminationType: 'FORCEFUL' }));
    assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`)).status, 204);
  });

  it('refuses manifests the package does not declare, before anything starts', async () => {
    const id = await createInstance();
    assertProblem(
      await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, {
        body: { flavourId: 'simple', additionalParams: { 'lcm-kubernetes-def-files': ['Files/kubernetes/nope.yaml'] } },
      }),
      422,
    );
    assertProblem(
      await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, {
        body: { flavourId: 'simple', additionalParams: { 'lcm-kubernetes-def-files': 'Files/kubernetes/deployment.yaml' } },
      }),
      400,
    );
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/scale`, { body: { type: 'SCALE_OUT', aspectId: 'vdu1_aspect' } }), 409);
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/heal`, { body: {} }), 409);
    assert.deepEqual((await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,vnfInstanceId,${id})`)).body, []);
    assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`)).status, 204);
  });

  it("an image pull failure ends FAILED_TEMP with the pod's reason; rollback removes every object it created", async () => {
    const id = await createInstance();
    const namespace = 'cnf-pull-failure';
    await control('faults', 'POST', { kind: 'image-pull-fail', image: 'nginx:1.26-alpine' });
    try {
      const path = await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, {
        flavourId: 'simple',
        additionalParams: { 'lcm-kubernetes-def-files': DEF_FILES, namespace },
      });
      const failed = await completed(path, 'FAILED_TEMP');
      assert.match((failed.error as { detail: string }).detail, /ImagePullBackOff|ErrImagePull/);
      assert.equal((await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`)).status, 200);

      const rollback = await call('POST', `${path}/rollback`);
      assert.equal(rollback.status, 202, rollback.text);
      await completed(path, 'ROLLED_BACK');
      assert.equal((await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`)).status, 404);
      assert.equal((await kube(`/api/v1/namespaces/${namespace}/services/vdu1-svc`)).status, 404);
      assert.equal((await pods(namespace, id)).length, 0);
      assert.equal((await instance(id)).instantiationState, 'NOT_INSTANTIATED');
    } finally {
      await control('faults', 'DELETE');
    }
    assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`)).status, 204);
  });

  // VIM choice and the driver registry share one normaliser, so Tacker's 'kubernetes' is the ETSI type.
  it('runs a CNF on the registered VIM a request names with Tacker\'s vimType "kubernetes"', async () => {
    const registered = await call('POST', '/vnfm/v1/vims', {
      body: {
        name: 'k8s-tacker-style',
        vimType: 'kubernetes',
        interfaceInfo: { endpoint: cluster.endpoint },
        accessInfo: { bearer_token: cluster.bearer_token },
      },
    });
    assert.equal(registered.status, 201, registered.text);
    const vimId = (registered.body as { id: string }).id;
    const id = await createInstance();
    const namespace = 'cnf-tacker-vim-type';
    try {
      await completed(
        await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, {
          flavourId: 'simple',
          vimConnectionInfo: { vim1: { vimId, vimType: 'kubernetes' } },
          additionalParams: { 'lcm-kubernetes-def-files': DEF_FILES, namespace },
        }),
      );
      const vnfcs = (await instance(id)).instantiatedVnfInfo.vnfcResourceInfo as unknown as Array<{ computeResource: { vimConnectionId?: string } }>;
      assert.ok(vnfcs.length > 0);
      for (const vnfc of vnfcs) assert.equal(vnfc.computeResource.vimConnectionId, vimId);
    } finally {
      await completed(await operate(`/vnflcm/v2/vnf_instances/${id}/terminate`, { terminationType: 'FORCEFUL' }));
      assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`)).status, 204);
      assert.equal((await call('DELETE', `/vnfm/v1/vims/${vimId}`)).status, 204);
    }
  });
});

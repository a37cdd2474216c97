// CHANGE_FLAVOUR (SOL003 5.4.7) over HTTP on the built-in simulators: the sample VNF moves from its
// "simple" to its "large" deployment flavour, checked through the VIMs' own APIs (the Heat stack's
// template and nfv parameter, the Nova servers' flavors; the cluster's Deployments, pods and
// Services); the refusals change nothing; a failed change is rolled back onto the old flavour, and
// a retried one completes, after which a scale works in the new flavour.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertEtsiResponse, assertEtsiSchema } from '../support/etsi.ts';
import { buildCsar, KUBERNETES_LARGE_FILES, SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { client, settle, startVnfm, type LocalVnfm, type Reply } from '../support/runtime.ts';
import { login, type Session } from '../../local/openstack/client.ts';
import type { SimulatorCredentials } from '../../local/openstack/simulator.ts';

let vnfm: LocalVnfm;
let call: ReturnType<typeof client>;
let openstack: SimulatorCredentials & { authUrl: string; control: string };
let cluster: { endpoint: string; control: string; bearer_token: string };

before(async () => {
  vnfm = await startVnfm();
  call = client(vnfm);
  const vims = JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8'));
  openstack = vims['local-openstack'];
  cluster = vims['local-kubernetes'];
  for (const name of ['openstack-vnf-v1', 'k8s-cnf-v1'] as const) {
    const pkg = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
    await call('PUT', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content`, { raw: await buildCsar(name), headers: { 'Content-Type': 'application/zip' } });
  }
  await settle(vnfm);
});
after(async () => {
  await vnfm.stop();
});

function assertProblem(reply: Reply, status: number, detail?: RegExp): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.headers.get('content-type'), 'application/problem+json');
  if (detail) assert.match((reply.body as { detail: string }).detail, detail);
}

async function createInstance(vnfdId: string): Promise<string> {
  const reply = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId, vnfInstanceName: 'flavour' } });
  assert.equal(reply.status, 201, reply.text);
  return (reply.body as { id: string }).id;
}

async function operate(path: string, body: unknown): Promise<string> {
  const reply = await call('POST', path, { body });
  assert.equal(reply.status, 202, reply.text);
  return new URL(reply.headers.get('location') ?? '').pathname;
}

async function done(path: string, state = 'COMPLETED'): Promise<Record<string, unknown>> {
  await settle(vnfm);
  const occ = (await call('GET', path)).body as Record<string, unknown>;
  assert.equal(occ.operationState, state, JSON.stringify(occ));
  await assertEtsiResponse('vnflcm', '/vnf_lcm_op_occs/{vnfLcmOpOccId}', 'get', 200, occ);
  return occ;
}

type Vnfc = { id: string; vduId: string; computeResource: { resourceId: string } };
type Instance = {
  instantiatedVnfInfo: {
    flavourId: string;
    vnfcResourceInfo: Vnfc[];
    scaleStatus: Array<{ aspectId: string; scaleLevel: number }>;
    maxScaleLevels: Array<{ aspectId: string; scaleLevel: number }>;
  };
};

async function show(id: string): Promise<Instance> {
  const reply = await call('GET', `/vnflcm/v2/vnf_instances/${id}`);
  assert.equal(reply.status, 200, reply.text);
  await assertEtsiResponse('vnflcm', '/vnf_instances/{vnfInstanceId}', 'get', 200, reply.body);
  return reply.body as Instance;
}

const vnfcsOf = (instance: Instance, vduId: string): string[] =>
  instance.instantiatedVnfInfo.vnfcResourceInfo.filter((vnfc) => vnfc.vduId === vduId).map((vnfc) => vnfc.computeResource.resourceId);

async function opOccsOf(id: string): Promise<Array<{ operation: string }>> {
  return (await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,vnfInstanceId,${id})`)).body as Array<{ operation: string }>;
}

describe('change of deployment flavour on OpenStack', () => {
  const vnfdId = SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId;
  const INSTANTIATE = {
    flavourId: 'simple',
    extVirtualLinks: [
      {
        id: 'ext-public',
        resourceId: 'public',
        extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { VDU1_CP1_1: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }],
      },
    ],
  };
  let id: string;
  let nova: Session;

  /** The VNF's stack as Heat shows it: its template's description and the nfv parameter it was last given. */
  async function stack(): Promise<{ description: string; nfv: { VDU: Record<string, { computeFlavourId: string; desired_capacity: number }> } }> {
    const shown = await nova.request<{ stack: { parameters: Record<string, string> } }>('orchestration', `/stacks/vnf-${id}`);
    assert.equal(shown.status, 200, shown.text);
    const template = await nova.request<{ description: string }>('orchestration', `/stacks/vnf-${id}/template`);
    return { description: template.body.description, nfv: JSON.parse(shown.body.stack.parameters.nfv ?? '{}') };
  }

  /** The Nova flavors of these servers, as Nova reports them. */
  async function flavors(servers: string[]): Promise<string[]> {
    const names: string[] = [];
    for (const server of servers) {
      const reply = await nova.request<{ server: { flavor: { original_name: string } } }>('compute', `/servers/${server}`, {
        headers: { 'OpenStack-API-Version': 'compute 2.79' },
      });
      assert.equal(reply.status, 200, reply.text);
      names.push(reply.body.server.flavor.original_name);
    }
    return names;
  }

  async function injectFault(fault: Record<string, unknown>): Promise<void> {
    const response = await fetch(`${openstack.control}faults`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(fault),
    });
    assert.ok(response.ok, await response.text());
  }

  before(async () => {
    nova = await login(openstack.authUrl, openstack);
  });

  it('refuses a change of a NOT_INSTANTIATED VNF, to an unknown flavour, to its own flavour or to an unknown level, changing nothing', async () => {
    id = await createInstance(vnfdId);
    const path = `/vnflcm/v2/vnf_instances/${id}/change_flavour`;
    assertProblem(await call('POST', path, { body: { newFlavourId: 'large' } }), 409, /NOT_INSTANTIATED/);
    await done(await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, INSTANTIATE));
    const before = await stack();
    assert.match(before.description, /simple flavour/);

    assertProblem(await call('POST', path, { body: { newFlavourId: 'huge' } }), 422, /no deployment flavour "huge"; its flavours are simple, large/);
    assertProblem(await call('POST', path, { body: { newFlavourId: 'simple' } }), 409, /already in deployment flavour simple/);
    assertProblem(
      await call('POST', path, { body: { newFlavourId: 'large', instantiationLevelId: 'instantiation_level_2' } }),
      400,
      /large_level_1, large_level_2/,
    );
    assertProblem(await call('POST', path, { body: { flavourId: 'large' } }), 400);
    // SOL003 V2.6.1 (/vnflcm/v1) has no such task.
    assert.equal((await call('POST', `/vnflcm/v1/vnf_instances/${id}/change_flavour`, { body: { newFlavourId: 'large' }, version: null })).status, 404);
    assert.deepEqual(
      (await opOccsOf(id)).map((occ) => occ.operation),
      ['INSTANTIATE'],
    );
    assert.deepEqual(await stack(), before);
    assert.equal((await show(id)).instantiatedVnfInfo.flavourId, 'simple');

    // The new flavour's change_flavour_start hook runs before the VIM is touched; marked failed, the change leaves it as it was.
    const hooked = await operate(path, { newFlavourId: 'large', additionalParams: { sample_script_fail: 'change_flavour_start' } });
    assert.match(((await done(hooked, 'FAILED_TEMP')).error as { detail: string }).detail, /change_flavour_start failed as requested/);
    assert.equal((await call('POST', `${hooked}/fail`)).status, 200);
    assert.deepEqual(await stack(), before);
    assert.equal((await show(id)).instantiatedVnfInfo.flavourId, 'simple');
  });

  it('rolls a failed change back onto the old flavour: the simple template, nfv and servers again', async () => {
    const before = await show(id);
    await injectFault({ kind: 'stack-update-fail', reason: 'injected flavour change failure', count: 1 });
    const request = { newFlavourId: 'large' };
    await assertEtsiSchema('vnflcm', 'ChangeVnfFlavourRequest', request);
    const path = await operate(`/vnflcm/v2/vnf_instances/${id}/change_flavour`, request);
    const failed = await done(path, 'FAILED_TEMP');
    assert.equal(failed.operation, 'CHANGE_FLAVOUR');
    assert.match((failed.error as { detail: string }).detail, /injected flavour change failure/);
    assert.match((await stack()).description, /large flavour/, 'Heat was given the large template');

    assert.equal((await call('POST', `${path}/rollback`)).status, 202);
    await done(path, 'ROLLED_BACK');
    const after = await show(id);
    assert.equal(after.instantiatedVnfInfo.flavourId, 'simple');
    const heat = await stack();
    assert.match(heat.description, /simple flavour/);
    assert.equal(heat.nfv.VDU.VDU1?.computeFlavourId, 'm1.tiny');
    assert.equal(heat.nfv.VDU.VDU1?.desired_capacity, 1);
    assert.deepEqual(vnfcsOf(after, 'VDU1'), vnfcsOf(before, 'VDU1'), 'the VDU1 server the instance had is kept');
    assert.deepEqual(vnfcsOf(after, 'VDU2'), vnfcsOf(before, 'VDU2'));
    assert.deepEqual(await flavors([...vnfcsOf(after, 'VDU1'), ...vnfcsOf(after, 'VDU2')]), ['m1.tiny', 'm1.tiny']);
    const servers = ((await (await fetch(`${openstack.control}state`)).json()) as { servers: { ids: string[] } }).servers.ids;
    assert.deepEqual(servers.sort(), [...vnfcsOf(after, 'VDU1'), ...vnfcsOf(after, 'VDU2')].sort(), 'Nova has no server the failed change added');
  });

  it('retries a failed change to completion: Heat has the large template and nfv, Nova two bigger VDU1 servers; a scale then works in the large flavour', async () => {
    const before = await show(id);
    await injectFault({ kind: 'stack-update-fail', reason: 'injected flavour change failure', count: 1 });
    // A VIM connection the request brings: recorded, its credentials kept in the secret store only.
    const secret = 'flavour-change-secret-7c1e';
    const path = await operate(`/vnflcm/v2/vnf_instances/${id}/change_flavour`, {
      newFlavourId: 'large',
      instantiationLevelId: 'large_level_1',
      vimConnectionInfo: {
        backup: {
          vimId: 'backup-vim',
          vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3',
          interfaceInfo: { endpoint: 'http://backup.example/identity/v3' },
          accessInfo: { username: 'backup', password: secret, project: 'admin' },
        },
      },
    });
    await done(path, 'FAILED_TEMP');
    assert.equal((await call('POST', `${path}/retry`)).status, 202);
    const occ = await done(path);

    const after = await show(id);
    assert.equal(after.instantiatedVnfInfo.flavourId, 'large');
    assert.deepEqual(after.instantiatedVnfInfo.scaleStatus, [{ aspectId: 'VDU1_scale', scaleLevel: 0 }]);
    const shown = await call('GET', `/vnflcm/v2/vnf_instances/${id}`);
    assert.deepEqual((shown.body as { vimConnectionInfo: Record<string, { vimId: string }> }).vimConnectionInfo.backup?.vimId, 'backup-vim');
    const occs = (await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,vnfInstanceId,${id})&all_fields`)).text;
    assert.match(occs, /backup-vim/);
    assert.ok(!shown.text.includes(secret) && !occs.includes(secret), 'the credentials are in no record');
    assert.deepEqual(after.instantiatedVnfInfo.maxScaleLevels, [{ aspectId: 'VDU1_scale', scaleLevel: 1 }]);
    const heat = await stack();
    assert.match(heat.description, /large flavour/);
    assert.equal(heat.nfv.VDU.VDU1?.computeFlavourId, 'm1.small');
    assert.equal(heat.nfv.VDU.VDU1?.desired_capacity, 2);
    const vdu1 = vnfcsOf(after, 'VDU1');
    assert.equal(vdu1.length, 2);
    assert.ok(vdu1.includes(vnfcsOf(before, 'VDU1')[0] ?? ''), 'the first VDU1 server was resized, not replaced');
    assert.deepEqual(await flavors(vdu1), ['m1.small', 'm1.small']);
    assert.deepEqual(vnfcsOf(after, 'VDU2'), vnfcsOf(before, 'VDU2'), 'VDU2 is the same in both flavours');
    const changes = (occ.resourceChanges as { affectedVnfcs: Array<{ vduId: string; changeType: string }> }).affectedVnfcs;
    assert.deepEqual(changes.map((c) => `${c.vduId} ${c.changeType}`).sort(), ['VDU1 ADDED', 'VDU1 MODIFIED']);

    await done(await operate(`/vnflcm/v2/vnf_instances/${id}/scale`, { type: 'SCALE_OUT', aspectId: 'VDU1_scale' }));
    const scaled = await show(id);
    assert.equal(vnfcsOf(scaled, 'VDU1').length, 3);
    assert.deepEqual(await flavors(vnfcsOf(scaled, 'VDU1')), ['m1.small', 'm1.small', 'm1.small']);
    assert.deepEqual(scaled.instantiatedVnfInfo.scaleStatus, [{ aspectId: 'VDU1_scale', scaleLevel: 1 }]);
    // The large flavour's aspect stops at scale level 1.
    assertProblem(
      await call('POST', `/vnflcm/v2/vnf_instances/${id}/scale`, { body: { type: 'SCALE_OUT', aspectId: 'VDU1_scale' } }),
      400,
      /max_scale_level 1/,
    );

    await done(await operate(`/vnflcm/v2/vnf_instances/${id}/terminate`, { terminationType: 'FORCEFUL' }));
    const state = (await (await fetch(`${openstack.control}state`)).json()) as Record<string, { count: number }>;
    assert.equal(state.stacks?.count, 0);
    assert.equal(state.servers?.count, 0);
    assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`)).status, 204);
  });
});

describe('change of deployment flavour on Kubernetes', () => {
  const LABEL = 'vnf-instance-id';
  type KObject = { metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: string } };

  async function kube(path: string): Promise<{ status: number; body: { items?: KObject[] } & KObject }> {
    const response = await fetch(`${cluster.endpoint}${path}`, { headers: { Authorization: `Bearer ${cluster.bearer_token}` } });
    return { status: response.status, body: (await response.json()) as { items?: KObject[] } & KObject };
  }

  async function control(path: string, method: string, body?: unknown): Promise<void> {
    const response = await fetch(`${cluster.control}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    assert.ok(response.ok, await response.text());
  }

  async function podsOf(namespace: string, id: string): Promise<KObject[]> {
    const listed = await kube(`/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(`${LABEL}=${id}`)}`);
    return (listed.body.items ?? []).filter((pod) => !pod.metadata.deletionTimestamp);
  }

  it("rolls a failed change back to the simple flavour's objects, then applies the large flavour's manifests: its pods run, the Service it lacks is gone", async () => {
    const id = await createInstance(SAMPLE_PACKAGES['k8s-cnf-v1'].vnfdId);
    const namespace = 'cnf-flavour';
    await done(
      await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, {
        flavourId: 'simple',
        additionalParams: { 'lcm-kubernetes-def-files': SAMPLE_PACKAGES['k8s-cnf-v1'].kubernetesFiles, namespace },
      }),
    );
    assert.equal((await kube(`/api/v1/namespaces/${namespace}/services/vdu1-svc`)).status, 200);
    const change = { newFlavourId: 'large', additionalParams: { 'lcm-kubernetes-def-files': KUBERNETES_LARGE_FILES } };

    // The cache's image cannot be pulled: the change fails, and its rollback restores the simple flavour.
    await control('faults', 'POST', { kind: 'image-pull-fail', image: 'redis:7.2-alpine' });
    try {
      const path = await operate(`/vnflcm/v2/vnf_instances/${id}/change_flavour`, change);
      assert.match(((await done(path, 'FAILED_TEMP')).error as { detail: string }).detail, /ImagePullBackOff|ErrImagePull/);
      assert.equal((await call('POST', `${path}/rollback`)).status, 202);
      await done(path, 'ROLLED_BACK');
    } finally {
      await control('faults', 'DELETE');
    }
    assert.equal((await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu2`)).status, 404);
    assert.equal((await kube(`/api/v1/namespaces/${namespace}/services/vdu1-large-svc`)).status, 404);
    assert.equal((await kube(`/api/v1/namespaces/${namespace}/services/vdu1-svc`)).status, 200);
    const restored = await podsOf(namespace, id);
    assert.equal(restored.length, 1, JSON.stringify(restored.map((pod) => pod.metadata.name)));
    assert.equal(restored[0]?.metadata.labels?.flavour, undefined, "the pod is the simple flavour's");
    const back = await show(id);
    assert.equal(back.instantiatedVnfInfo.flavourId, 'simple');
    assert.deepEqual(vnfcsOf(back, 'VDU1'), [restored[0]?.metadata.name]);

    const occ = await done(await operate(`/vnflcm/v2/vnf_instances/${id}/change_flavour`, change));
    const pods = await podsOf(namespace, id);
    const web = pods.filter((pod) => pod.metadata.name.startsWith('vdu1-'));
    const cache = pods.filter((pod) => pod.metadata.name.startsWith('vdu2-'));
    assert.equal(web.length, 2, JSON.stringify(pods.map((pod) => pod.metadata.name)));
    assert.ok(
      web.every((pod) => pod.metadata.labels?.flavour === 'large'),
      'the web pods are those of the large manifest',
    );
    assert.equal(cache.length, 1);
    assert.equal((await kube(`/api/v1/namespaces/${namespace}/services/vdu1-svc`)).status, 404, 'the simple flavour Service is gone');
    assert.equal((await kube(`/api/v1/namespaces/${namespace}/services/vdu1-large-svc`)).status, 200);

    const after = await show(id);
    assert.equal(after.instantiatedVnfInfo.flavourId, 'large');
    assert.deepEqual(vnfcsOf(after, 'VDU1').sort(), web.map((pod) => pod.metadata.name).sort());
    assert.deepEqual(
      vnfcsOf(after, 'VDU2'),
      cache.map((pod) => pod.metadata.name),
    );
    const changes = (occ.resourceChanges as { affectedVnfcs: Array<{ vduId: string; changeType: string }> }).affectedVnfcs;
    assert.ok(changes.some((c) => c.vduId === 'VDU2' && c.changeType === 'ADDED'));

    await done(await operate(`/vnflcm/v2/vnf_instances/${id}/terminate`, { terminationType: 'FORCEFUL' }));
    assert.equal((await podsOf(namespace, id)).length, 0);
    assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`)).status, 204);
  });
});

// VNF snapshots (SOL003 5.4.21-5.4.23, /vnflcm/v2): the "Individual VNF snapshot" resources, and
// create_snapshot and revert_to_snapshot of an OpenStack VNF and of a CNF, checked through the
// simulated VIMs' own APIs (Nova's servers, Glance's images, Cinder's snapshots, the cluster's
// workloads), not only the VNFM's records.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLocalClient } from '../../local/oauth2.ts';
import { login, type Session } from '../../local/openstack/client.ts';
import { SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { lcmSteps } from '../support/lcm-http.ts';
import { adminCredentials, client, holdExecutions, startVnfm, type LocalVnfm, type Reply } from '../support/runtime.ts';
import { waitFor } from '../support/wait.ts';

let vnfm: LocalVnfm;
let call: ReturnType<typeof client>;
let steps: ReturnType<typeof lcmSteps>;
/** The simulated OpenStack through its own APIs (Nova, Glance, Cinder) and its control API. */
let openstack: Session;
let control: string;
/** The simulated Kubernetes cluster's API, as kubectl reaches it. */
let cluster: { endpoint: string; bearer_token: string };
/** A snapshot of the OpenStack VNF that outlives it. */
let foreignSnapshot: { id: string; image: string } | undefined;

const vnfdId = SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId;
/** VDU1_CP1 is the sample VNF's external CP: it goes on the VIM's "public" network. */
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

before(async () => {
  vnfm = await startVnfm();
  call = client(vnfm);
  steps = lcmSteps(vnfm, call);
  const sim = JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8'))['local-openstack'];
  control = sim.control;
  openstack = await login(sim.authUrl, sim);
  cluster = JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8'))['local-kubernetes'];
  await steps.onboard(['openstack-vnf-v1', 'k8s-cnf-v1']);
});
after(async () => {
  await vnfm.stop();
});

function assertProblem(reply: Reply, status: number): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.headers.get('content-type'), 'application/problem+json');
}

async function newSnapshotInfo(): Promise<{ id: string; _links: { self: { href: string } } }> {
  const reply = await call('POST', '/vnflcm/v2/vnf_snapshots', { body: {} });
  assert.equal(reply.status, 201, reply.text);
  const body = reply.body as { id: string; _links: { self: { href: string } } };
  assert.equal(reply.headers.get('location'), body._links.self.href);
  return body;
}

describe('the VNF snapshots resource', () => {
  it('creates, reads, lists with a filter and deletes empty snapshot resources', async () => {
    const first = await newSnapshotInfo();
    const second = await newSnapshotInfo();
    const read = await call('GET', `/vnflcm/v2/vnf_snapshots/${first.id}`);
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.body, first);
    const listed = await call('GET', '/vnflcm/v2/vnf_snapshots');
    assert.equal(listed.status, 200, listed.text);
    const ids = (listed.body as Array<{ id: string }>).map((item) => item.id);
    assert.ok(ids.includes(first.id) && ids.includes(second.id));
    const filtered = await call('GET', `/vnflcm/v2/vnf_snapshots?filter=${encodeURIComponent(`(eq,id,${second.id})`)}`);
    assert.deepEqual(
      (filtered.body as Array<{ id: string }>).map((item) => item.id),
      [second.id],
    );
    assertProblem(await call('GET', '/vnflcm/v2/vnf_snapshots?filter=(eq,nope,1)'), 400);
    // A resource extracted from a VNF snapshot package needs the NFVO's package; this VNFM does not extract them.
    assertProblem(await call('POST', '/vnflcm/v2/vnf_snapshots', { body: { vnfSnapshotPkgId: 'pkg' } }), 400);
    assertProblem(await call('POST', '/vnflcm/v2/vnf_snapshots', { body: { vnfSnapshotPkgId: 'pkg', vnfSnapshot: {} } }), 422);
    assertProblem(await call('POST', '/vnflcm/v2/vnf_snapshots', { body: { unknown: 1 } }), 400);
    // Another tenant's snapshots look exactly like missing ones.
    const tenant = client(vnfm, {
      ...createLocalClient(vnfm.dataDir, { tenantId: 'tenant-snapshots', scopes: ['vnflcm:read', 'vnflcm:write'] }),
      tokenUrl: adminCredentials(vnfm).tokenUrl,
    });
    const own = (await tenant('POST', '/vnflcm/v2/vnf_snapshots', { body: {} })).body as { id: string };
    assertProblem(await tenant('GET', `/vnflcm/v2/vnf_snapshots/${second.id}`), 404);
    assertProblem(await tenant('DELETE', `/vnflcm/v2/vnf_snapshots/${second.id}`), 404);
    assert.deepEqual(
      ((await tenant('GET', '/vnflcm/v2/vnf_snapshots')).body as Array<{ id: string }>).map((item) => item.id),
      [own.id],
    );
    assert.equal((await tenant('DELETE', `/vnflcm/v2/vnf_snapshots/${own.id}`)).status, 204);
    assert.equal((await call('DELETE', `/vnflcm/v2/vnf_snapshots/${second.id}`)).status, 204);
    assertProblem(await call('GET', `/vnflcm/v2/vnf_snapshots/${second.id}`), 404);
    assertProblem(await call('DELETE', `/vnflcm/v2/vnf_snapshots/${second.id}`), 404);
  });
});

type Listed = { count: number; items: Array<{ id: string; status?: string }> };
async function simState(): Promise<Record<string, Listed>> {
  return (await fetch(`${control}state`)).json() as Promise<Record<string, Listed>>;
}

/** The image a server runs, as Nova shows it. */
async function serverImage(serverId: string): Promise<string> {
  const reply = await openstack.request<{ server: { image: { id: string } | string } }>('compute', `/servers/${serverId}`);
  assert.equal(reply.status, 200, reply.text);
  const { image } = reply.body.server;
  return typeof image === 'string' ? image : image.id;
}

/** A Glance image's status, or undefined when Glance no longer has it. */
async function imageStatus(imageId: string): Promise<string | undefined> {
  const reply = await openstack.request<{ status: string }>('image', `/v2/images/${imageId}`);
  if (reply.status === 404) return undefined;
  assert.equal(reply.status, 200, reply.text);
  return reply.body.status;
}

type Vnfc = { id: string; vduId: string; computeResource: { resourceId: string } };
type SnapshotInfo = {
  id: string;
  vnfSnapshot: {
    id: string;
    vnfInstanceId: string;
    creationStartedAt: string;
    creationFinishedAt?: string;
    vnfInstance: { id: string; instantiatedVnfInfo: { vnfcResourceInfo: Vnfc[] } };
    vnfcSnapshots: Array<{
      id: string;
      vnfcInstanceId: string;
      vnfcResourceInfoId: string;
      creationFinishedAt?: string;
      computeSnapshotResource?: { resourceId: string };
      storageSnapshotResources?: Array<{ storageResourceId: string; storageSnapshotResource: { resourceId: string } }>;
    }>;
  };
  _links: { self: { href: string }; takenFrom?: { href: string } };
};

const vnfcsOf = async (id: string) => (await steps.instance<{ instantiatedVnfInfo: { vnfcResourceInfo: Vnfc[] } }>(id)).instantiatedVnfInfo.vnfcResourceInfo;

describe('create_snapshot and revert_to_snapshot of an OpenStack VNF', () => {
  it('snapshots the servers to Glance and volumes to Cinder, reverts a scale-out and rebuilds from the images, and deletes them with the resource', async () => {
    const created = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId, vnfInstanceName: 'snapshots' } });
    assert.equal(created.status, 201, created.text);
    const id = (created.body as { id: string }).id;
    const snapshotInfo = await newSnapshotInfo();

    // NOT_INSTANTIATED: no snapshot, no revert (409); nothing is taken.
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/create_snapshot`, { body: { vnfSnapshotInfoId: snapshotInfo.id } }), 409);
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/revert_to_snapshot`, { body: { vnfSnapshotInfoId: snapshotInfo.id } }), 409);
    await steps.ended(await steps.operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, INSTANTIATE), 'COMPLETED');
    const before = await vnfcsOf(id);
    const vdu1 = before.find((vnfc) => vnfc.vduId === 'VDU1') as Vnfc;
    const originalImage = await serverImage(vdu1.computeResource.resourceId);

    // Bad requests change nothing.
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/create_snapshot`, { body: {} }), 400);
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/create_snapshot`, { body: { vnfSnapshotInfoId: 'no-such-snapshot' } }), 422);
    assertProblem(
      await call('POST', `/vnflcm/v2/vnf_instances/${id}/create_snapshot`, { body: { vnfSnapshotInfoId: snapshotInfo.id, vnfcInstanceId: 'no-such-vnfc' } }),
      422,
    );
    // An empty snapshot cannot be reverted to.
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/revert_to_snapshot`, { body: { vnfSnapshotInfoId: snapshotInfo.id } }), 409);
    assertProblem(
      await call('POST', `/vnflcm/v2/vnf_instances/${id}/revert_to_snapshot`, { body: { vnfSnapshotInfoId: snapshotInfo.id, vnfcInstanceId: 'x' } }),
      400,
    );

    // Glance fails while the snapshot is made: FAILED_TEMP; the rollback deletes what was made and
    // leaves the resource empty, to be filled by the next attempt.
    const fault = await fetch(`${control}faults`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ kind: 'http-5xx', service: 'glance', method: 'GET', path: '/images/', count: 1 }),
    });
    assert.ok(fault.ok, await fault.text());
    const failed = await steps.operate(`/vnflcm/v2/vnf_instances/${id}/create_snapshot`, { vnfSnapshotInfoId: snapshotInfo.id });
    await steps.ended(failed, 'FAILED_TEMP');
    const snapshotImages = async () =>
      ((await simState()).images?.items ?? []).filter((image) => (image as { name?: string }).name?.startsWith('vnf-snapshot-')).length;
    assert.ok((await snapshotImages()) > 0);
    assert.equal((await call('POST', `${failed}/rollback`)).status, 202);
    await steps.ended(failed, 'ROLLED_BACK');
    assert.equal(await snapshotImages(), 0);
    await waitFor('the volume snapshot of the rolled-back attempt is deleted', async () => ((await simState()).snapshots?.count ?? 0) === 0);
    assert.deepEqual((await call('GET', `/vnflcm/v2/vnf_snapshots/${snapshotInfo.id}`)).body, snapshotInfo);

    const occ = await steps.ended(
      await steps.operate(`/vnflcm/v2/vnf_instances/${id}/create_snapshot`, {
        vnfSnapshotInfoId: snapshotInfo.id,
        userDefinedData: { reason: 'before upgrade' },
      }),
      'COMPLETED',
    );
    assert.equal(occ.operation, 'CREATE_SNAPSHOT');
    assert.equal(occ.vnfSnapshotInfoId, snapshotInfo.id);
    const read = await call('GET', `/vnflcm/v2/vnf_snapshots/${snapshotInfo.id}`);
    assert.equal(read.status, 200, read.text);
    const snapshot = read.body as SnapshotInfo;
    assert.equal(snapshot.vnfSnapshot.vnfInstanceId, id);
    assert.ok(snapshot.vnfSnapshot.creationFinishedAt);
    assert.match(snapshot._links.takenFrom?.href ?? '', new RegExp(`/vnflcm/v2/vnf_instances/${id}$`));
    assert.deepEqual(
      snapshot.vnfSnapshot.vnfInstance.instantiatedVnfInfo.vnfcResourceInfo.map((vnfc) => vnfc.id),
      before.map((vnfc) => vnfc.id),
    );
    assert.equal(snapshot.vnfSnapshot.vnfcSnapshots.length, before.length);
    assert.ok(!read.text.includes(JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8'))['local-openstack'].password));
    const vdu1Snapshot = snapshot.vnfSnapshot.vnfcSnapshots.find((vnfc) => vnfc.vnfcResourceInfoId === vdu1.id);
    const snapshotImage = vdu1Snapshot?.computeSnapshotResource?.resourceId ?? '';
    // The snapshot image is in Glance, active, and not the image the server was booted from.
    assert.equal(await imageStatus(snapshotImage), 'active');
    assert.notEqual(snapshotImage, originalImage);
    // VDU2 boots from its volume: its snapshot is the volume's Cinder snapshot.
    const vdu2Snapshot = snapshot.vnfSnapshot.vnfcSnapshots.find((vnfc) => vnfc.vnfcResourceInfoId !== vdu1.id);
    const volumeSnapshot = vdu2Snapshot?.storageSnapshotResources?.[0]?.storageSnapshotResource.resourceId ?? '';
    assert.equal((await simState()).snapshots?.items.find((item) => item.id === volumeSnapshot)?.status, 'available');
    // A snapshot resource is filled once.
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/create_snapshot`, { body: { vnfSnapshotInfoId: snapshotInfo.id } }), 409);

    // The instance changes: one more VDU1 server.
    await steps.ended(await steps.operate(`/vnflcm/v2/vnf_instances/${id}/scale`, { type: 'SCALE_OUT', aspectId: 'VDU1_scale' }), 'COMPLETED');
    assert.equal((await vnfcsOf(id)).length, before.length + 1);

    // While an operation uses a snapshot, it cannot be deleted, and the instance takes no other operation.
    await holdExecutions(vnfm, true);
    const revertPath = await steps.operate(`/vnflcm/v2/vnf_instances/${id}/revert_to_snapshot`, { vnfSnapshotInfoId: snapshotInfo.id });
    assertProblem(await call('DELETE', `/vnflcm/v2/vnf_snapshots/${snapshotInfo.id}`), 409);
    assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/create_snapshot`, { body: { vnfSnapshotInfoId: (await newSnapshotInfo()).id } }), 409);
    await holdExecutions(vnfm, false);
    const reverted = await steps.ended(revertPath, 'COMPLETED');
    assert.equal(reverted.operation, 'REVERT_TO_SNAPSHOT');
    // The VNFC made by the scale-out went, VDU1's server was rebuilt; VDU2 boots from its volume, which is said.
    const affected = (reverted.resourceChanges as { affectedVnfcs: Array<{ id: string; vduId: string; changeType: string }> }).affectedVnfcs;
    assert.deepEqual(
      affected.filter((vnfc) => vnfc.changeType === 'REMOVED').map((vnfc) => vnfc.vduId),
      ['VDU1'],
    );
    assert.ok(affected.some((vnfc) => vnfc.id === vdu1.id && vnfc.changeType === 'MODIFIED'));
    assert.ok(!affected.some((vnfc) => vnfc.vduId === 'VDU2'));
    assert.match(String((reverted.warnings as string[] | undefined)?.[0]), /boot from a volume/);

    // Back to the snapshot's servers, as Nova has them: VDU1's server rebuilt from its snapshot image.
    const after = await vnfcsOf(id);
    assert.deepEqual(after.map((vnfc) => vnfc.id).sort(), before.map((vnfc) => vnfc.id).sort());
    const servers = (await simState()).servers?.items.map((server) => server.id) ?? [];
    for (const vnfc of after) assert.ok(servers.includes(vnfc.computeResource.resourceId));
    assert.equal(await serverImage(vdu1.computeResource.resourceId), snapshotImage);
    const scale = (await steps.instance<{ instantiatedVnfInfo: { scaleStatus: Array<{ aspectId: string; scaleLevel: number }> } }>(id)).instantiatedVnfInfo
      .scaleStatus;
    assert.equal(scale.find((entry) => entry.aspectId === 'VDU1_scale')?.scaleLevel, 0);

    // Listing with a filter on the snapshot's content.
    const listed = await call('GET', `/vnflcm/v2/vnf_snapshots?filter=${encodeURIComponent(`(eq,vnfSnapshot/vnfInstanceId,${id})`)}`);
    assert.deepEqual(
      (listed.body as Array<{ id: string; vnfSnapshot: Record<string, unknown> }>).map((item) => item.id),
      [snapshotInfo.id],
    );
    const [item] = listed.body as Array<{ vnfSnapshot: Record<string, unknown> }>;
    assert.ok(!('vnfInstance' in (item?.vnfSnapshot ?? {})) && !('vnfcSnapshots' in (item?.vnfSnapshot ?? {})), 'a list leaves them out by default');

    // One VNFC: a snapshot of VDU1's VNFC alone, and a revert of just that VNFC to it.
    const vnfcInfo = (await steps.instance<{ instantiatedVnfInfo: { vnfcInfo: Array<{ id: string; vnfcResourceInfoId: string }> } }>(id)).instantiatedVnfInfo
      .vnfcInfo;
    const vdu1Instance = vnfcInfo.find((entry) => entry.vnfcResourceInfoId === vdu1.id)?.id ?? '';
    const vdu2Instance = vnfcInfo.find((entry) => entry.vnfcResourceInfoId !== vdu1.id)?.id ?? '';
    const single = await newSnapshotInfo();
    await steps.ended(
      await steps.operate(`/vnflcm/v2/vnf_instances/${id}/create_snapshot`, { vnfSnapshotInfoId: single.id, vnfcInstanceId: vdu1Instance }),
      'COMPLETED',
    );
    const [singleVnfc, ...others] = ((await call('GET', `/vnflcm/v2/vnf_snapshots/${single.id}`)).body as SnapshotInfo).vnfSnapshot.vnfcSnapshots;
    assert.equal(others.length, 0);
    assert.equal(singleVnfc?.vnfcInstanceId, vdu1Instance);
    const singleImage = singleVnfc?.computeSnapshotResource?.resourceId ?? '';
    assert.equal(await imageStatus(singleImage), 'active');
    assertProblem(
      await call('POST', `/vnflcm/v2/vnf_instances/${id}/revert_to_snapshot`, {
        body: { vnfSnapshotInfoId: single.id, vnfcInstanceId: vdu2Instance, vnfcSnapshotInfoId: singleVnfc?.id },
      }),
      422,
    );
    await steps.ended(
      await steps.operate(`/vnflcm/v2/vnf_instances/${id}/revert_to_snapshot`, {
        vnfSnapshotInfoId: single.id,
        vnfcInstanceId: vdu1Instance,
        vnfcSnapshotInfoId: singleVnfc?.id,
      }),
      'COMPLETED',
    );
    assert.equal(await serverImage(vdu1.computeResource.resourceId), singleImage);
    // Kept beyond this instance's life: the CNF test reverts to it (422, another instance's snapshot), then deletes it.
    foreignSnapshot = { id: single.id, image: singleImage };

    // Deleting the resource deletes its image in Glance and its volume snapshot in Cinder.
    assert.equal((await call('DELETE', `/vnflcm/v2/vnf_snapshots/${snapshotInfo.id}`)).status, 204);
    assert.equal(await imageStatus(snapshotImage), undefined);
    await waitFor('the volume snapshot is deleted', async () => !(await simState()).snapshots?.items.some((item) => item.id === volumeSnapshot));
    // The server keeps running from the image it was rebuilt from; Glance keeps nothing the VNFM made for the snapshot.
    await steps.terminateAndDelete(id);
  });
});

type Workload = { spec: { replicas: number; template: { spec: { containers: Array<{ name: string; image: string }> } } } };

async function kube<T>(path: string, init: { method?: string; body?: unknown; contentType?: string } = {}): Promise<T> {
  const response = await fetch(`${cluster.endpoint}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      Authorization: `Bearer ${cluster.bearer_token}`,
      ...(init.body ? { 'Content-Type': init.contentType ?? 'application/merge-patch+json' } : {}),
    },
    ...(init.body ? { body: JSON.stringify(init.body) } : {}),
  });
  assert.ok(response.ok, `${path}: ${response.status} ${await response.clone().text()}`);
  return response.json() as Promise<T>;
}

describe('create_snapshot and revert_to_snapshot of a CNF', () => {
  it('records the workloads and image digests the cluster runs, and re-applies them pinned to those digests with the replicas they had', async () => {
    const created = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: SAMPLE_PACKAGES['k8s-cnf-v1'].vnfdId, vnfInstanceName: 'cnf' } });
    const id = (created.body as { id: string }).id;
    const namespace = 'cnf-snapshots';
    const request = {
      flavourId: 'simple',
      additionalParams: { 'lcm-kubernetes-def-files': ['Files/kubernetes/deployment.yaml', 'Files/kubernetes/service.yaml'], namespace },
    };
    await steps.ended(await steps.operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, request), 'COMPLETED');
    const deploymentPath = `/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`;
    const pods = async () =>
      (
        await kube<{ items: Array<{ metadata: { deletionTimestamp?: string }; status?: { containerStatuses?: Array<{ imageID: string }> } }> }>(
          `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(`vnf-instance-id=${id}`)}`,
        )
      ).items.filter((pod) => !pod.metadata.deletionTimestamp);
    const [pod] = await pods();
    const digest = pod?.status?.containerStatuses?.[0]?.imageID ?? '';
    assert.match(digest, /@sha256:[0-9a-f]{64}$/);

    const snapshotInfo = await newSnapshotInfo();
    await steps.ended(await steps.operate(`/vnflcm/v2/vnf_instances/${id}/create_snapshot`, { vnfSnapshotInfoId: snapshotInfo.id }), 'COMPLETED');
    const snapshot = (await call('GET', `/vnflcm/v2/vnf_snapshots/${snapshotInfo.id}`)).body as SnapshotInfo;
    assert.equal(snapshot.vnfSnapshot.vnfcSnapshots.length, 1);
    assert.ok(snapshot.vnfSnapshot.vnfcSnapshots[0]?.creationFinishedAt);

    // A snapshot of another instance is not one to revert this one to.
    if (foreignSnapshot) {
      assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/revert_to_snapshot`, { body: { vnfSnapshotInfoId: foreignSnapshot.id } }), 422);
    }

    // Pods of one workload are alike: one of them alone is not reverted.
    assertProblem(
      await call('POST', `/vnflcm/v2/vnf_instances/${id}/revert_to_snapshot`, {
        body: {
          vnfSnapshotInfoId: snapshotInfo.id,
          vnfcInstanceId: snapshot.vnfSnapshot.vnfcSnapshots[0]?.vnfcInstanceId,
          vnfcSnapshotInfoId: snapshot.vnfSnapshot.vnfcSnapshots[0]?.id,
        },
      }),
      422,
    );
    // The CNF drifts: two more pods, and someone changes the image.
    await steps.ended(
      await steps.operate(`/vnflcm/v2/vnf_instances/${id}/scale`, { type: 'SCALE_OUT', aspectId: 'vdu1_aspect', numberOfSteps: 2 }),
      'COMPLETED',
    );
    await kube(deploymentPath, { method: 'PATCH', body: { spec: { template: { spec: { containers: [{ name: 'web', image: 'nginx:1.27-alpine' }] } } } } });

    await steps.ended(await steps.operate(`/vnflcm/v2/vnf_instances/${id}/revert_to_snapshot`, { vnfSnapshotInfoId: snapshotInfo.id }), 'COMPLETED');
    const deployment = await kube<Workload>(deploymentPath);
    assert.equal(deployment.spec.replicas, 1);
    assert.equal(deployment.spec.template.spec.containers[0]?.image, digest);
    await waitFor('one pod runs the snapshot digest', async () => {
      const running = await pods();
      return running.length === 1 && running[0]?.status?.containerStatuses?.[0]?.imageID === digest;
    });
    const shown = await steps.instance<{ instantiatedVnfInfo: { vnfcResourceInfo: Vnfc[]; scaleStatus: Array<{ scaleLevel: number }> } }>(id);
    assert.equal(shown.instantiatedVnfInfo.vnfcResourceInfo.length, 1);
    assert.equal(shown.instantiatedVnfInfo.scaleStatus[0]?.scaleLevel, 0);
    assert.equal((await call('DELETE', `/vnflcm/v2/vnf_snapshots/${snapshotInfo.id}`)).status, 204);
    await steps.terminateAndDelete(id);
    // The OpenStack VNF's snapshot outlived its instance; deleting it still deletes its image.
    if (foreignSnapshot) {
      assert.equal((await call('DELETE', `/vnflcm/v2/vnf_snapshots/${foreignSnapshot.id}`)).status, 204);
      assert.equal(await imageStatus(foreignSnapshot.image), undefined);
    }
  });
});

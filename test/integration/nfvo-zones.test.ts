// Grant zones per VDU (SOL003 9.5.2.3: Grant.zones, addResources[].zoneId naming a ZoneInfo, each on
// the GrantRequest's resource definition of one VDU): the NFVO simulator places VDU1 and VDU2 in
// different zones. On OpenStack each VDU's servers are created in its availability zone (Nova's
// OS-EXT-AZ:availability_zone, shown as vnfcResourceInfo.zoneId), a scale-out's VNFCs go where its
// grant says, and a grant that would split a VDU across zones is refused before the stack is touched.
// On Kubernetes the VDU's Deployment gets a required node affinity on topology.kubernetes.io/zone,
// and the simulated scheduler places its pods on a node of that zone. Every exchange with the NFVO
// conforms to the SOL003 Granting API.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildCsar } from '../support/csar-builder.ts';
import { assertEtsiResponse } from '../support/etsi.ts';
import { startNfvoSimulator, type NfvoSimulator } from '../support/nfvo-simulator.ts';
import { client, localVims, settle, startVnfm, type LocalVnfm } from '../support/runtime.ts';

const OPENSTACK_INSTANTIATE = {
  flavourId: 'simple',
  extVirtualLinks: [
    { id: 'ext', resourceId: 'public', extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { a: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }] },
  ],
};
const ZONES = [
  { id: 'zone-a', zoneId: 'az-1' },
  { id: 'zone-b', zoneId: 'az-2' },
];

type Vnfc = { id: string; vduId: string; zoneId?: string; computeResource: { resourceId: string } };
type Occ = { operationState: string; error?: { detail?: string }; resourceChanges?: { affectedVnfcs: Array<{ changeType: string; id: string }> } };

describe('grant zones per VDU', () => {
  let nfvo: NfvoSimulator;
  let vnfm: LocalVnfm;
  let call: ReturnType<typeof client>;

  async function upload(name: 'openstack-vnf-v1' | 'k8s-cnf-v1'): Promise<string> {
    const pkg = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
    await call('PUT', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content`, { raw: await buildCsar(name), headers: { 'Content-Type': 'application/zip' } });
    await settle(vnfm);
    return ((await call('GET', `/vnfpkgm/v1/vnf_packages/${pkg}`)).body as { vnfdId: string }).vnfdId;
  }

  async function operate(path: string, body: unknown): Promise<Occ> {
    const reply = await call('POST', path, { body });
    assert.equal(reply.status, 202, reply.text);
    await settle(vnfm);
    const occ = await call('GET', new URL(reply.headers.get('location') ?? '').pathname);
    await assertEtsiResponse('vnflcm', '/vnf_lcm_op_occs/{vnfLcmOpOccId}', 'get', 200, occ.body);
    return occ.body as Occ;
  }

  async function vnfcs(id: string): Promise<Vnfc[]> {
    const reply = await call('GET', `/vnflcm/v2/vnf_instances/${id}`);
    assert.equal(reply.status, 200, reply.text);
    return (reply.body as { instantiatedVnfInfo: { vnfcResourceInfo: Vnfc[] } }).instantiatedVnfInfo.vnfcResourceInfo;
  }

  before(async () => {
    nfvo = await startNfvoSimulator();
    vnfm = await startVnfm({ env: { VNFM_PARAMETER_OVERRIDES: `NfvoEndpoint=${nfvo.url}` } });
    call = client(vnfm);
    const vims = localVims(vnfm);
    // Two availability zones on the OpenStack simulator (hosts 1-4 and 5-8; the rest stay in nova) and
    // on the Kubernetes simulator (one node each), as an operator's host aggregates and node labels make them.
    for (let n = 1; n <= 8; n++) {
      const moved = await fetch(`${vims.openstack.control}hosts/local-compute-${n}/zone`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ zone: n <= 4 ? 'az-1' : 'az-2' }),
      });
      assert.equal(moved.status, 200, await moved.text());
    }
    const cluster = vims.kubernetes.vim;
    for (const [node, zone] of [
      ['node-1', 'az-1'],
      ['node-2', 'az-2'],
    ]) {
      const labelled = await fetch(`${cluster.interfaceInfo?.endpoint}/api/v1/nodes/${node}`, {
        method: 'PATCH',
        headers: {
          'Content-Type': 'application/merge-patch+json',
          Authorization: `Bearer ${(cluster.accessInfo as { bearer_token: string }).bearer_token}`,
        },
        body: JSON.stringify({ metadata: { labels: { 'topology.kubernetes.io/zone': zone } } }),
      });
      assert.equal(labelled.status, 200, await labelled.text());
    }
  });
  after(async () => {
    await vnfm.stop();
    await nfvo.close();
    assert.deepEqual(nfvo.nonConforming, []);
  });

  it("creates each VDU's servers in the zone its grant names, and a scale-out's VNFCs where that grant says", async () => {
    const vnfdId = await upload('openstack-vnf-v1');
    nfvo.grantZones = { zones: ZONES, vdus: { VDU1: 'zone-a', VDU2: 'zone-b' } };
    const id = ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId } })).body as { id: string }).id;
    const instantiated = await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, OPENSTACK_INSTANTIATE);
    assert.equal(instantiated.operationState, 'COMPLETED', JSON.stringify(instantiated.error));
    // The Grant the VNFM took: a zoneId on each VDU's COMPUTE resource definition.
    const grantExchange = nfvo.grantExchanges().at(-1);
    assert.equal(grantExchange?.status, 201);
    let placed = await vnfcs(id);
    assert.deepEqual(placed.map((vnfc) => `${vnfc.vduId} ${vnfc.zoneId}`).sort(), ['VDU1 az-1', 'VDU2 az-2']);

    // A scale-out whose grant places VDU1's new VNFC in VDU1's zone: there it goes.
    const before = new Set(placed.map((vnfc) => vnfc.id));
    const out = await operate(`/vnflcm/v2/vnf_instances/${id}/scale`, { type: 'SCALE_OUT', aspectId: 'VDU1_scale' });
    assert.equal(out.operationState, 'COMPLETED', JSON.stringify(out.error));
    placed = await vnfcs(id);
    const added = placed.filter((vnfc) => !before.has(vnfc.id));
    assert.deepEqual(
      added.map((vnfc) => `${vnfc.vduId} ${vnfc.zoneId}`),
      ['VDU1 az-1'],
    );
    const scaleGrant = nfvo.grantExchanges().at(-1)?.body as { operation?: string; addResources?: Array<{ resourceTemplateId: string }> };
    assert.equal(scaleGrant.operation, 'SCALE');
    assert.deepEqual(
      scaleGrant.addResources?.map((r) => r.resourceTemplateId),
      ['VDU1'],
    );

    // A grant placing VDU1's next VNFC in the other zone cannot be honoured without moving the VNFCs
    // VDU1 has (one zone per VDU in the template): refused, and the stack is left as it was.
    nfvo.grantZones = { zones: ZONES, vdus: { VDU1: 'zone-b' } };
    const split = await operate(`/vnflcm/v2/vnf_instances/${id}/scale`, { type: 'SCALE_OUT', aspectId: 'VDU1_scale' });
    assert.equal(split.operationState, 'FAILED_TEMP');
    assert.match(split.error?.detail ?? '', /new VNFCs of VDU1 in zone az-2, but its VNFCs are in zone az-1/);
    assert.deepEqual((await vnfcs(id)).map((vnfc) => `${vnfc.vduId} ${vnfc.zoneId}`).sort(), ['VDU1 az-1', 'VDU1 az-1', 'VDU2 az-2']);
  });

  it("gives a VDU's Deployment a node affinity to the zone its grant names, and its pods run there", async () => {
    const vnfdId = await upload('k8s-cnf-v1');
    nfvo.grantZones = { zones: ZONES, vdus: { VDU1: 'zone-b' } };
    const id = ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId } })).body as { id: string }).id;
    const namespace = 'zoned-cnf';
    const occ = await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, {
      flavourId: 'simple',
      additionalParams: { 'lcm-kubernetes-def-files': ['Files/kubernetes/deployment.yaml', 'Files/kubernetes/service.yaml'], namespace },
    });
    assert.equal(occ.operationState, 'COMPLETED', JSON.stringify(occ.error));
    const cluster = localVims(vnfm).kubernetes.vim;
    const kube = async (path: string) => {
      const response = await fetch(`${cluster.interfaceInfo?.endpoint}${path}`, {
        headers: { Authorization: `Bearer ${(cluster.accessInfo as { bearer_token: string }).bearer_token}` },
      });
      assert.equal(response.status, 200);
      return (await response.json()) as Record<string, unknown>;
    };
    const deployment = (await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`)) as {
      spec: { template: { spec: { affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: unknown } } } } };
    };
    assert.deepEqual(deployment.spec.template.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution, {
      nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['az-2'] }] }],
    });
    const pods = (await kube(`/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(`vnf-instance-id=${id}`)}`)) as {
      items: Array<{ spec: { nodeName?: string } }>;
    };
    assert.ok(pods.items.length > 0);
    assert.deepEqual([...new Set(pods.items.map((pod) => pod.spec.nodeName))], ['node-2']);
    assert.deepEqual(
      (await vnfcs(id)).map((vnfc) => vnfc.zoneId),
      pods.items.map(() => 'az-2'),
    );

    // A scale-out granted in the same zone: the new pod runs there too.
    const out = await operate(`/vnflcm/v2/vnf_instances/${id}/scale`, { type: 'SCALE_OUT', aspectId: 'vdu1_aspect' });
    assert.equal(out.operationState, 'COMPLETED', JSON.stringify(out.error));
    const scaled = (await kube(`/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(`vnf-instance-id=${id}`)}`)) as typeof pods;
    assert.equal(scaled.items.length, pods.items.length + 1);
    assert.deepEqual([...new Set(scaled.items.map((pod) => pod.spec.nodeName))], ['node-2']);

    // One granted in the other zone would move the pods the Deployment has: refused, nothing changed.
    nfvo.grantZones = { zones: ZONES, vdus: { VDU1: 'zone-a' } };
    const split = await operate(`/vnflcm/v2/vnf_instances/${id}/scale`, { type: 'SCALE_OUT', aspectId: 'vdu1_aspect' });
    assert.equal(split.operationState, 'FAILED_TEMP');
    assert.match(split.error?.detail ?? '', /new pods of VDU1 in zone az-1, but its 2 pods are in zone az-2/);
    const unchanged = (await kube(`/apis/apps/v1/namespaces/${namespace}/deployments/vdu1`)) as typeof deployment & { spec: { replicas?: number } };
    assert.equal(unchanged.spec.replicas, 2);
    assert.deepEqual(unchanged.spec.template.spec.affinity, deployment.spec.template.spec.affinity);
  });
});

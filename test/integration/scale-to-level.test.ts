// SCALE_TO_LEVEL (SOL003 5.4.6) over HTTP on the built-in OpenStack and Kubernetes simulators, each
// with a variant of its sample package that has two scaling aspects: to an instantiation level and to
// scaleInfo levels (one aspect out and the other in, in one operation), checked against Nova's
// servers and the cluster's pods; refusals that change nothing; targets equal to the current levels
// that complete without a VIM call; the Vnflcm hooks; a failed scale to level rolled back to the
// counts it had, and one retried. One instance per VIM, reused from test to test.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertEtsiSchema } from '../support/etsi.ts';
import { buildCsar, SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { client, settle, startVnfm, type LocalVnfm, type Reply } from '../support/runtime.ts';

let vnfm: LocalVnfm;
let call: ReturnType<typeof client>;
let openstack: { control: string };
let cluster: { endpoint: string; bearer_token: string };

const utf8 = (files: Map<string, Buffer>, path: string): string => {
  const content = files.get(path);
  assert.ok(content, `the sample has ${path}`);
  return content.toString('utf8');
};

/** Replaces `anchor` (which must occur exactly once) with `by`. */
function edit(text: string, anchor: string, by: string): string {
  assert.equal(text.split(anchor).length, 2, `exactly one ${JSON.stringify(anchor)}`);
  return text.replace(anchor, by);
}

// ---------------------------------------------------------------------------------------------
// The two-aspect variants

/**
 * openstack-vnf-v1 plus VDU3, a server on the internal VL in its own AutoScalingGroup with its own
 * aspect VDU3_scale (max level 2, one server per step), and scale_to_level hooks. Instantiation
 * level 1 has both aspects at 0 (VDU1 1, VDU3 1); level 2 has VDU1_scale 1 and VDU3_scale 2.
 */
function twoAspectVnf(files: Map<string, Buffer>): void {
  const df = 'Definitions/sample_vnfd_df_simple.yaml';
  let vnfd = utf8(files, df);
  const vdu1 = vnfd.slice(vnfd.indexOf('    VDU1:\n      type: tosca.nodes.nfv.Vdu.Compute'), vnfd.indexOf('    VDU2:\n'));
  const vdu3 = vdu1.replaceAll('VDU1', 'VDU3').replace(/description: .*/, 'description: VDU3 compute node, scaled by its own aspect');
  vnfd = edit(
    vnfd,
    '    VDU1_CP1:\n',
    `${vdu3}    VDU3_CP1:\n      type: tosca.nodes.nfv.VduCp\n      properties:\n        layer_protocols: [ ipv4 ]\n        order: 0\n      requirements:\n        - virtual_binding: VDU3\n        - virtual_link: internalVL1\n\n    VDU1_CP1:\n`,
  );
  vnfd = edit(
    vnfd,
    '          instantiate_end:\n            implementation: sample-script\n',
    '          instantiate_end:\n            implementation: sample-script\n          scale_to_level_start:\n            implementation: sample-script\n          scale_to_level_end:\n            implementation: sample-script\n',
  );
  vnfd = edit(
    vnfd,
    '              step_deltas:\n                - delta_1\n',
    '              step_deltas:\n                - delta_1\n            VDU3_scale:\n              name: VDU3_scale\n              description: VDU3 scaling aspect\n              max_scale_level: 2\n              step_deltas:\n                - delta_1\n',
  );
  vnfd = edit(
    vnfd,
    '    - instantiation_levels:\n',
    [
      '    - VDU3_initial_delta:',
      '        type: tosca.policies.nfv.VduInitialDelta',
      '        properties:',
      '          initial_delta:',
      '            number_of_instances: 1',
      '        targets: [ VDU3 ]',
      '',
      '    - VDU3_scaling_aspect_deltas:',
      '        type: tosca.policies.nfv.VduScalingAspectDeltas',
      '        properties:',
      '          aspect: VDU3_scale',
      '          deltas:',
      '            delta_1:',
      '              number_of_instances: 1',
      '        targets: [ VDU3 ]',
      '',
      '    - VDU3_instantiation_levels:',
      '        type: tosca.policies.nfv.VduInstantiationLevels',
      '        properties:',
      '          levels:',
      '            instantiation_level_1:',
      '              number_of_instances: 1',
      '            instantiation_level_2:',
      '              number_of_instances: 3',
      '        targets: [ VDU3 ]',
      '',
      '    - instantiation_levels:',
      '',
    ].join('\n'),
  );
  vnfd = edit(
    vnfd,
    '                VDU1_scale:\n                  scale_level: 0\n',
    '                VDU1_scale:\n                  scale_level: 0\n                VDU3_scale:\n                  scale_level: 0\n',
  );
  vnfd = edit(
    vnfd,
    '                VDU1_scale:\n                  scale_level: 1\n',
    '                VDU1_scale:\n                  scale_level: 1\n                VDU3_scale:\n                  scale_level: 2\n',
  );
  files.set(df, Buffer.from(vnfd));

  const hotPath = 'BaseHOT/simple/sample_hot.yaml';
  files.set(
    hotPath,
    Buffer.from(
      edit(
        utf8(files, hotPath),
        '  VDU2:\n    type: OS::Nova::Server\n',
        [
          '  VDU3:',
          '    type: OS::Heat::AutoScalingGroup',
          '    properties:',
          '      min_size: 0',
          '      max_size: 3',
          '      desired_capacity: { get_param: [ nfv, VDU, VDU3, desired_capacity ] }',
          '      resource:',
          '        type: VDU3.yaml',
          '        properties:',
          '          flavor: { get_param: [ nfv, VDU, VDU3, computeFlavourId ] }',
          '          image: { get_param: [ nfv, VDU, VDU3, vcImageId ] }',
          '          net: { get_resource: internalVL1 }',
          '',
          '  VDU2:',
          '    type: OS::Nova::Server',
          '',
        ].join('\n'),
      ),
    ),
  );
  files.set(
    'BaseHOT/simple/nested/VDU3.yaml',
    Buffer.from(
      [
        'heat_template_version: 2013-05-23',
        "description: 'VDU3: one server on the internal virtual link (a member of the VDU3 scaling group)'",
        '',
        'parameters:',
        '  flavor:',
        '    type: string',
        '  image:',
        '    type: string',
        '  net:',
        '    type: string',
        '',
        'resources:',
        '  VDU3:',
        '    type: OS::Nova::Server',
        '    properties:',
        '      flavor: { get_param: flavor }',
        '      image: { get_param: image }',
        '      name: VDU3',
        '      networks:',
        '        - port: { get_resource: VDU3_CP1 }',
        '',
        '  VDU3_CP1:',
        '    type: OS::Neutron::Port',
        '    properties:',
        '      network: { get_param: net }',
        '',
      ].join('\n'),
    ),
  );
}

/**
 * k8s-cnf-v1 plus VDU2, a Deployment `vdu2` with its own aspect vdu2_aspect (max level 2, one pod
 * per step), and instantiation levels: level 1 has both aspects at 0 (one pod each), level 2 has
 * vdu1_aspect 2 and vdu2_aspect 1.
 */
function twoAspectCnf(files: Map<string, Buffer>): void {
  const df = 'Definitions/sample_cnf_df_simple.yaml';
  let vnfd = utf8(files, df);
  vnfd = edit(
    vnfd,
    '  policies:\n',
    [
      '    VDU2:',
      '      type: tosca.nodes.nfv.Vdu.Compute',
      '      properties:',
      '        name: vdu2',
      '        description: VDU2 compute node (Deployment vdu2)',
      '        vdu_profile:',
      '          min_number_of_instances: 1',
      '          max_number_of_instances: 3',
      '',
      '  policies:',
      '',
    ].join('\n'),
  );
  vnfd = edit(
    vnfd,
    '              step_deltas:\n                - delta_1\n',
    '              step_deltas:\n                - delta_1\n            vdu2_aspect:\n              name: vdu2_aspect\n              description: vdu2 scaling aspect\n              max_scale_level: 2\n              step_deltas:\n                - delta_1\n',
  );
  const level = (vdu: string, one: number, two: number) => [
    `    - ${vdu}_instantiation_levels:`,
    '        type: tosca.policies.nfv.VduInstantiationLevels',
    '        properties:',
    '          levels:',
    '            instantiation_level_1:',
    `              number_of_instances: ${one}`,
    '            instantiation_level_2:',
    `              number_of_instances: ${two}`,
    `        targets: [ ${vdu} ]`,
    '',
  ];
  vnfd = `${vnfd.trimEnd()}\n\n${[
    '    - VDU2_initial_delta:',
    '        type: tosca.policies.nfv.VduInitialDelta',
    '        properties:',
    '          initial_delta:',
    '            number_of_instances: 1',
    '        targets: [ VDU2 ]',
    '',
    '    - VDU2_scaling_aspect_deltas:',
    '        type: tosca.policies.nfv.VduScalingAspectDeltas',
    '        properties:',
    '          aspect: vdu2_aspect',
    '          deltas:',
    '            delta_1:',
    '              number_of_instances: 1',
    '        targets: [ VDU2 ]',
    '',
    '    - instantiation_levels:',
    '        type: tosca.policies.nfv.InstantiationLevels',
    '        properties:',
    '          levels:',
    '            instantiation_level_1:',
    '              description: One pod of each',
    '              scale_info:',
    '                vdu1_aspect:',
    '                  scale_level: 0',
    '                vdu2_aspect:',
    '                  scale_level: 0',
    '            instantiation_level_2:',
    '              description: Three vdu1 pods and two vdu2 pods',
    '              scale_info:',
    '                vdu1_aspect:',
    '                  scale_level: 2',
    '                vdu2_aspect:',
    '                  scale_level: 1',
    '          default_level: instantiation_level_1',
    '',
    ...level('VDU1', 1, 3),
    ...level('VDU2', 1, 2),
  ].join('\n')}`;
  files.set(df, Buffer.from(vnfd));
  files.set(
    'Files/kubernetes/deployment-vdu2.yaml',
    Buffer.from(utf8(files, 'Files/kubernetes/deployment.yaml').replaceAll('name: vdu1', 'name: vdu2').replaceAll('app: sample-cnf', 'app: sample-cnf-vdu2')),
  );
  const meta = 'TOSCA-Metadata/TOSCA.meta';
  files.set(
    meta,
    Buffer.from(
      `${utf8(files, meta).trimEnd()}\n\nName: Files/kubernetes/deployment-vdu2.yaml\nContent-Type: application/yaml\nAlgorithm: SHA-256\nHash: {{hash}}\n`,
    ),
  );
}

async function onboard(raw: Buffer): Promise<void> {
  const pkg = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
  const upload = await call('PUT', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content`, { raw, headers: { 'Content-Type': 'application/zip' } });
  assert.equal(upload.status, 202, upload.text);
}

before(async () => {
  vnfm = await startVnfm();
  call = client(vnfm);
  const vims = JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8'));
  openstack = vims['local-openstack'];
  cluster = vims['local-kubernetes'];
  await onboard(await buildCsar('openstack-vnf-v1', { mutate: twoAspectVnf }));
  await onboard(await buildCsar('k8s-cnf-v1', { mutate: twoAspectCnf }));
  await settle(vnfm);
  for (const name of ['openstack-vnf-v1', 'k8s-cnf-v1'] as const) {
    const listed = (await call('GET', `/vnfpkgm/v2/vnf_packages?filter=(eq,vnfdId,${SAMPLE_PACKAGES[name].vnfdId})`)).body as Array<{
      onboardingState: string;
    }>;
    assert.equal(listed[0]?.onboardingState, 'ONBOARDED', `${name} variant onboarded: ${JSON.stringify(listed)}`);
  }
});
after(async () => {
  await vnfm.stop();
});

// ---------------------------------------------------------------------------------------------
// Helpers

type Vnfc = { id: string; vduId: string; computeResource: { resourceId: string } };
type Instance = {
  instantiationState: string;
  instantiatedVnfInfo: { vnfcResourceInfo: Vnfc[]; scaleStatus: Array<{ aspectId: string; scaleLevel: number }> };
};
type OpOcc = Record<string, unknown> & { operationState: string; operation: string; error?: { detail: string } };

function assertProblem(reply: Reply, status: number, detail?: RegExp): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.headers.get('content-type'), 'application/problem+json');
  if (detail) assert.match((reply.body as { detail: string }).detail, detail);
}

async function createInstance(vnfdId: string): Promise<string> {
  const reply = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId, vnfInstanceName: 'scale-to-level' } });
  assert.equal(reply.status, 201, reply.text);
  return (reply.body as { id: string }).id;
}

async function operate(path: string, body: unknown): Promise<string> {
  const reply = await call('POST', path, { body });
  assert.equal(reply.status, 202, reply.text);
  assert.equal(reply.text, '');
  return new URL(reply.headers.get('location') ?? '').pathname;
}

async function ended(path: string, state = 'COMPLETED'): Promise<OpOcc> {
  await settle(vnfm);
  const occ = (await call('GET', path)).body as OpOcc;
  assert.equal(occ.operationState, state, JSON.stringify(occ));
  return occ;
}

const scaleToLevel = (id: string, body: unknown): Promise<string> => operate(`/vnflcm/v2/vnf_instances/${id}/scale_to_level`, body);

async function instance(id: string): Promise<Instance> {
  const reply = await call('GET', `/vnflcm/v2/vnf_instances/${id}`);
  assert.equal(reply.status, 200, reply.text);
  return reply.body as Instance;
}

const levels = (shown: Instance): Record<string, number> =>
  Object.fromEntries(shown.instantiatedVnfInfo.scaleStatus.map((status) => [status.aspectId, status.scaleLevel]));
const resourcesOf = (shown: Instance, vduId: string): string[] =>
  shown.instantiatedVnfInfo.vnfcResourceInfo.filter((vnfc) => vnfc.vduId === vduId).map((vnfc) => vnfc.computeResource.resourceId);
const changed = (occ: OpOcc, type: string): string[] =>
  (occ.resourceChanges as { affectedVnfcs: Array<{ changeType: string; computeResource: { resourceId: string } }> }).affectedVnfcs
    .filter((change) => change.changeType === type)
    .map((change) => change.computeResource.resourceId)
    .sort();

async function opOccsOf(id: string): Promise<OpOcc[]> {
  return (await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,vnfInstanceId,${id})`)).body as OpOcc[];
}

// ---------------------------------------------------------------------------------------------
// OpenStack

describe('scale to level on OpenStack', () => {
  const vnfdId = SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId;
  let id = '';

  type Listed = { items: Array<{ id: string; name: string; status: string }> };
  async function sim<T>(path: string): Promise<T> {
    return (await fetch(`${openstack.control}${path}`)).json() as Promise<T>;
  }
  /** Nova's servers of a VDU, by the name the BaseHOT gives them (this VIM runs only this VNF). */
  async function novaServers(name: string): Promise<string[]> {
    const state = await sim<{ servers: Listed }>('state');
    return state.servers.items
      .filter((server) => server.name === name)
      .map((server) => server.id)
      .sort();
  }
  async function counts(): Promise<Record<string, number>> {
    return { VDU1: (await novaServers('VDU1')).length, VDU2: (await novaServers('VDU2')).length, VDU3: (await novaServers('VDU3')).length };
  }
  /** How many actions Heat has run on the VNF's stack. */
  async function stackActions(): Promise<number> {
    const state = await sim<{ stacks: Listed & { items: Array<{ nested: boolean; name: string }> } }>('state');
    const stack = state.stacks.items.find((candidate) => candidate.name === `vnf-${id}`);
    assert.ok(stack, 'the VNF has its stack');
    return (await sim<{ actions: unknown[] }>(`stacks/${stack.id}/work-time`)).actions.length;
  }
  async function injectFault(fault: Record<string, unknown>): Promise<void> {
    const response = await fetch(`${openstack.control}faults`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(fault),
    });
    assert.ok(response.ok, await response.text());
  }
  /** The instance's records and Nova agree on every VDU's servers. */
  async function assertRecordsMatchNova(shown: Instance): Promise<void> {
    for (const vdu of ['VDU1', 'VDU2', 'VDU3']) assert.deepEqual(resourcesOf(shown, vdu).sort(), await novaServers(vdu), `${vdu} servers`);
  }

  it('instantiates the two-aspect VNF at its default level: one server per VDU', async () => {
    id = await createInstance(vnfdId);
    await ended(
      await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, {
        flavourId: 'simple',
        extVirtualLinks: [
          {
            id: 'ext-public',
            resourceId: 'public',
            extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { VDU1_CP1_1: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }],
          },
        ],
      }),
    );
    assert.deepEqual(await counts(), { VDU1: 1, VDU2: 1, VDU3: 1 });
    assert.deepEqual(levels(await instance(id)), { VDU1_scale: 0, VDU3_scale: 0 });
  });

  it('scales to an instantiation level: both aspects out in one stack update, the servers it had kept; scale_to_level_end sees them all', async () => {
    const before = await instance(id);
    // The sample script fails unless its _end hook is handed the VNF with its six VNFCs, as Tacker hands it.
    const request = { instantiationLevelId: 'instantiation_level_2', additionalParams: { sample_script_expect_vnfcs: 'scale_to_level_end=6' } };
    await assertEtsiSchema('vnflcm', 'ScaleVnfToLevelRequest', request);
    const actions = await stackActions();
    const occ = await ended(await scaleToLevel(id, request));
    assert.equal(occ.operation, 'SCALE_TO_LEVEL');
    assert.deepEqual(occ.operationParams, request);
    assert.equal(await stackActions(), actions + 1, 'one stack update');
    assert.deepEqual(await counts(), { VDU1: 2, VDU2: 1, VDU3: 3 });
    const shown = await instance(id);
    assert.deepEqual(levels(shown), { VDU1_scale: 1, VDU3_scale: 2 });
    await assertRecordsMatchNova(shown);
    for (const vdu of ['VDU1', 'VDU2', 'VDU3']) for (const kept of resourcesOf(before, vdu)) assert.ok(resourcesOf(shown, vdu).includes(kept), `${kept} kept`);
    const added = [...resourcesOf(shown, 'VDU1'), ...resourcesOf(shown, 'VDU3')].filter(
      (server) => !resourcesOf(before, 'VDU1').includes(server) && !resourcesOf(before, 'VDU3').includes(server),
    );
    assert.deepEqual(changed(occ, 'ADDED'), added.sort());
    assert.deepEqual(changed(occ, 'REMOVED'), []);
  });

  it('scales one aspect out and the other in by scaleInfo: the newest VDU3 servers go, VDU1 gains one', async () => {
    const before = await instance(id);
    const vdu3 = resourcesOf(before, 'VDU3');
    const request = {
      scaleInfo: [
        { aspectId: 'VDU1_scale', scaleLevel: 2 },
        { aspectId: 'VDU3_scale', scaleLevel: 0 },
      ],
    };
    await assertEtsiSchema('vnflcm', 'ScaleVnfToLevelRequest', request);
    const occ = await ended(await scaleToLevel(id, request));
    assert.deepEqual(await counts(), { VDU1: 3, VDU2: 1, VDU3: 1 });
    const shown = await instance(id);
    assert.deepEqual(levels(shown), { VDU1_scale: 2, VDU3_scale: 0 });
    assert.deepEqual(resourcesOf(shown, 'VDU3'), vdu3.slice(0, 1), 'the oldest VDU3 server stays');
    assert.deepEqual(changed(occ, 'REMOVED'), vdu3.slice(1).sort());
    for (const removed of vdu3.slice(1)) assert.ok(!(await novaServers('VDU3')).includes(removed), `${removed} is gone from Nova`);
    assert.equal(changed(occ, 'ADDED').length, 1);
    await assertRecordsMatchNova(shown);
  });

  it('refuses what it cannot do with a 4xx that changes nothing; a NOT_INSTANTIATED instance is 409', async () => {
    const before = { counts: await counts(), levels: levels(await instance(id)), occs: (await opOccsOf(id)).length };
    const path = `/vnflcm/v2/vnf_instances/${id}/scale_to_level`;
    assertProblem(await call('POST', path, { body: { scaleInfo: [{ aspectId: 'VDU3_scale', scaleLevel: 3 }] } }), 400, /above its max_scale_level 2/);
    assertProblem(await call('POST', path, { body: { scaleInfo: [{ aspectId: 'VDU9_scale', scaleLevel: 1 }] } }), 400, /no scaling aspect "VDU9_scale"/);
    assertProblem(await call('POST', path, { body: { instantiationLevelId: 'instantiation_level_9' } }), 400, /no instantiation level "instantiation_level_9"/);
    assertProblem(
      await call('POST', path, { body: { instantiationLevelId: 'instantiation_level_1', scaleInfo: [{ aspectId: 'VDU1_scale', scaleLevel: 0 }] } }),
      400,
      /either instantiationLevelId or scaleInfo/,
    );
    assertProblem(await call('POST', path, { body: {} }), 400, /either instantiationLevelId or scaleInfo/);
    assertProblem(await call('POST', path, { body: { scaleInfo: [{ aspectId: 'VDU1_scale', scaleLevel: -1 }] } }), 400);
    // Tacker's v1 API (SOL003 V2.6.1) has no scale to level.
    assert.equal(
      (await call('POST', `/vnflcm/v1/vnf_instances/${id}/scale_to_level`, { body: { instantiationLevelId: 'instantiation_level_1' } })).status,
      404,
    );
    assert.deepEqual({ counts: await counts(), levels: levels(await instance(id)), occs: (await opOccsOf(id)).length }, before);

    const idle = await createInstance(vnfdId);
    assertProblem(await scaleToLevelReply(idle, { instantiationLevelId: 'instantiation_level_1' }), 409, /NOT_INSTANTIATED/);
    assert.deepEqual(await opOccsOf(idle), []);
    assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${idle}`)).status, 204);
  });

  it('targets equal to the current levels complete without touching the VIM', async () => {
    const before = await instance(id);
    const actions = await stackActions();
    const occ = await ended(
      await scaleToLevel(id, {
        scaleInfo: [
          { aspectId: 'VDU1_scale', scaleLevel: 2 },
          { aspectId: 'VDU3_scale', scaleLevel: 0 },
        ],
      }),
    );
    assert.deepEqual(occ.resourceChanges, { affectedVnfcs: [], affectedVirtualLinks: [], affectedVirtualStorages: [] });
    assert.equal(await stackActions(), actions, 'no stack update');
    const shown = await instance(id);
    assert.deepEqual(levels(shown), levels(before));
    assert.deepEqual(shown.instantiatedVnfInfo.vnfcResourceInfo, before.instantiatedVnfInfo.vnfcResourceInfo);
  });

  it('runs the scale_to_level_start hook: a hook that fails ends FAILED_TEMP before the VIM is touched', async () => {
    const before = await counts();
    const actions = await stackActions();
    const path = await scaleToLevel(id, { instantiationLevelId: 'instantiation_level_1', additionalParams: { sample_script_fail: 'scale_to_level_start' } });
    const failed = await ended(path, 'FAILED_TEMP');
    assert.match(failed.error?.detail ?? '', /scale_to_level_start failed as requested/);
    assert.equal(await stackActions(), actions);
    assert.equal((await call('POST', `${path}/fail`)).status, 200);
    assert.deepEqual(await counts(), before);
  });

  it("a failed scale to level ends FAILED_TEMP with Heat's reason; its rollback restores the counts and levels it had", async () => {
    const before = await instance(id);
    const beforeCounts = await counts();
    await injectFault({ kind: 'stack-update-fail', reason: 'injected scale-to-level failure', count: 1 });
    const path = await scaleToLevel(id, {
      scaleInfo: [
        { aspectId: 'VDU1_scale', scaleLevel: 0 },
        { aspectId: 'VDU3_scale', scaleLevel: 2 },
      ],
    });
    const failed = await ended(path, 'FAILED_TEMP');
    assert.match(failed.error?.detail ?? '', /injected scale-to-level failure/);
    assert.equal((await call('POST', `${path}/rollback`)).status, 202);
    await ended(path, 'ROLLED_BACK');
    assert.deepEqual(await counts(), beforeCounts);
    const shown = await instance(id);
    assert.deepEqual(levels(shown), levels(before));
    await assertRecordsMatchNova(shown);
  });

  it('a scale_to_level_end hook that fails ends FAILED_TEMP after the VIM changed; the rollback restores the counts without running it again', async () => {
    const beforeCounts = await counts();
    const path = await scaleToLevel(id, { instantiationLevelId: 'instantiation_level_2', additionalParams: { sample_script_fail: 'scale_to_level_end' } });
    const failed = await ended(path, 'FAILED_TEMP');
    assert.match(failed.error?.detail ?? '', /scale_to_level_end failed as requested/);
    assert.notDeepEqual(await counts(), beforeCounts, 'the VIM had scaled');
    assert.equal((await call('POST', `${path}/rollback`)).status, 202);
    await ended(path, 'ROLLED_BACK');
    assert.deepEqual(await counts(), beforeCounts);
  });

  it('a failed scale to level that is retried completes', async () => {
    await injectFault({ kind: 'stack-update-fail', reason: 'injected once', count: 1 });
    const path = await scaleToLevel(id, { instantiationLevelId: 'instantiation_level_1' });
    await ended(path, 'FAILED_TEMP');
    assert.equal((await call('POST', `${path}/retry`)).status, 202);
    await ended(path);
    assert.deepEqual(await counts(), { VDU1: 1, VDU2: 1, VDU3: 1 });
    const shown = await instance(id);
    assert.deepEqual(levels(shown), { VDU1_scale: 0, VDU3_scale: 0 });
    await assertRecordsMatchNova(shown);
  });
});

function scaleToLevelReply(id: string, body: unknown): Promise<Reply> {
  return call('POST', `/vnflcm/v2/vnf_instances/${id}/scale_to_level`, { body });
}

// ---------------------------------------------------------------------------------------------
// Kubernetes

describe('scale to level on Kubernetes', () => {
  const vnfdId = SAMPLE_PACKAGES['k8s-cnf-v1'].vnfdId;
  const namespace = 'scale-to-level';
  let id = '';

  type Pod = { metadata: { name: string; deletionTimestamp?: string } };
  async function kube<T>(path: string): Promise<T> {
    const response = await fetch(`${cluster.endpoint}${path}`, { headers: { Authorization: `Bearer ${cluster.bearer_token}` } });
    assert.equal(response.status, 200, path);
    return (await response.json()) as T;
  }
  /** The cluster's live pods of a Deployment, by name. */
  async function pods(deployment: string): Promise<string[]> {
    const listed = await kube<{ items: Pod[] }>(`/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(`vnf-instance-id=${id}`)}`);
    return listed.items
      .filter((pod) => !pod.metadata.deletionTimestamp && pod.metadata.name.startsWith(`${deployment}-`))
      .map((pod) => pod.metadata.name)
      .sort();
  }
  async function replicas(deployment: string): Promise<number> {
    return (await kube<{ spec: { replicas: number } }>(`/apis/apps/v1/namespaces/${namespace}/deployments/${deployment}`)).spec.replicas;
  }
  async function counts(): Promise<Record<string, number>> {
    return { vdu1: (await pods('vdu1')).length, vdu2: (await pods('vdu2')).length };
  }

  it('instantiates the two-aspect CNF at its default level: one pod per Deployment', async () => {
    id = await createInstance(vnfdId);
    await ended(
      await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, {
        flavourId: 'simple',
        additionalParams: {
          'lcm-kubernetes-def-files': ['Files/kubernetes/deployment.yaml', 'Files/kubernetes/deployment-vdu2.yaml', 'Files/kubernetes/service.yaml'],
          namespace,
        },
      }),
    );
    assert.deepEqual(await counts(), { vdu1: 1, vdu2: 1 });
    assert.deepEqual(levels(await instance(id)), { vdu1_aspect: 0, vdu2_aspect: 0 });
  });

  it('scales to an instantiation level: both Deployments scaled out, the pods they had kept', async () => {
    const before = { vdu1: await pods('vdu1'), vdu2: await pods('vdu2') };
    const occ = await ended(await scaleToLevel(id, { instantiationLevelId: 'instantiation_level_2' }));
    assert.deepEqual(await counts(), { vdu1: 3, vdu2: 2 });
    assert.equal(await replicas('vdu1'), 3);
    assert.equal(await replicas('vdu2'), 2);
    for (const pod of [...before.vdu1, ...before.vdu2]) assert.ok([...(await pods('vdu1')), ...(await pods('vdu2'))].includes(pod), `${pod} kept`);
    assert.equal(changed(occ, 'ADDED').length, 3);
    const shown = await instance(id);
    assert.deepEqual(levels(shown), { vdu1_aspect: 2, vdu2_aspect: 1 });
    assert.deepEqual(resourcesOf(shown, 'VDU1').sort(), await pods('vdu1'));
    assert.deepEqual(resourcesOf(shown, 'VDU2').sort(), await pods('vdu2'));
  });

  it('scales one aspect in and the other out by scaleInfo: the newest vdu1 pods go, vdu2 gains one', async () => {
    const before = await instance(id);
    const vdu1 = resourcesOf(before, 'VDU1');
    const occ = await ended(
      await scaleToLevel(id, {
        scaleInfo: [
          { aspectId: 'vdu1_aspect', scaleLevel: 0 },
          { aspectId: 'vdu2_aspect', scaleLevel: 2 },
        ],
      }),
    );
    assert.deepEqual(await counts(), { vdu1: 1, vdu2: 3 });
    assert.equal(await replicas('vdu1'), 1);
    assert.equal(await replicas('vdu2'), 3);
    assert.deepEqual(await pods('vdu1'), vdu1.slice(0, 1), 'the oldest vdu1 pod stays');
    assert.deepEqual(changed(occ, 'REMOVED'), vdu1.slice(1).sort());
    const shown = await instance(id);
    assert.deepEqual(levels(shown), { vdu1_aspect: 0, vdu2_aspect: 2 });
    assert.deepEqual(resourcesOf(shown, 'VDU2').sort(), await pods('vdu2'));
  });

  it('refuses a level above max_scale_level with 400, changing nothing', async () => {
    const before = { counts: await counts(), occs: (await opOccsOf(id)).length };
    assertProblem(await scaleToLevelReply(id, { scaleInfo: [{ aspectId: 'vdu2_aspect', scaleLevel: 3 }] }), 400, /above its max_scale_level 2/);
    assert.deepEqual({ counts: await counts(), occs: (await opOccsOf(id)).length }, before);
  });
});

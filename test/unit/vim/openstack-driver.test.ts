// The OpenStack infra driver end to end against the OpenStack simulator (local/openstack/), on the
// sample package openstack-vnf-v1: instantiate (image upload, Heat stack with an AutoScalingGroup),
// what collect reads back, scale and heal as stack updates, terminate and rollback leaving nothing
// behind, Heat's failure reason, re-authentication after token expiry, and credential errors. Steps are driven to completion by
// waiting for the simulator to settle, never by sleeping.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { CsarArchive } from '#lib/packages/archive.ts';
import type { ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import type { CollectedResources, DriverState, OperationContext, PackageFiles, Progress, UpdateChange, VimConnection } from '#lib/vim/driver.ts';
import { VimError, clearTokenCache, openStackDriver } from '#lib/vim/openstack/index.ts';
import { HeatClient } from '#lib/vim/openstack/heat.ts';
import { OpenStackSession } from '#lib/vim/openstack/keystone.ts';
import { startOpenStackSimulator, type OpenStackSimulator } from '#local/openstack/simulator.ts';
import { openSamplePackage } from '../../support/sample-package.ts';
import { pollToEnd } from '../../support/driver-steps.ts';
import { assertEtsiSchema } from '../../support/etsi.ts';

let sim: OpenStackSimulator;
let archive: CsarArchive;
let vnfd: ParsedVnfd;
let files: PackageFiles;
let publicNetwork: string;

before(async () => {
  sim = await startOpenStackSimulator({ timeScale: 0.01 });
  ({ archive, vnfd, files } = await openSamplePackage('openstack-vnf-v1'));
  const network = sim.faults.state().preloaded.networks.find((candidate) => candidate.name === 'public');
  assert.ok(network, 'devstack has a public network');
  publicNetwork = network.id;
});

after(async () => {
  await sim.close();
  await archive.close();
});

beforeEach(async () => {
  sim.faults.clear();
  clearTokenCache();
  await sim.settled();
});

function vim(access: Record<string, unknown> = {}): VimConnection {
  return {
    vimId: 'vim-sim',
    vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3',
    interfaceInfo: { endpoint: sim.authUrl },
    accessInfo: { ...sim.credentials, ...access },
  };
}

let instances = 0;
/** The context of an INSTANTIATE: its request is the instantiate request. */
function context(overrides: Partial<OperationContext> = {}): OperationContext {
  instances += 1;
  const request = overrides.request ?? {
    flavourId: 'simple',
    extVirtualLinks: [
      {
        id: 'ext-vl-1',
        resourceId: publicNetwork,
        extCps: [
          {
            cpdId: 'VDU1_CP1',
            cpConfig: {
              'VDU1_CP1-1': {
                cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', numDynamicAddresses: 1 }] } }],
              },
            },
          },
        ],
      },
    ],
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
    ...overrides,
  };
}

const finish = (poll: (state: DriverState) => Promise<Progress>, state: DriverState): Promise<Progress> => pollToEnd(poll, state, () => sim.settled(), 20);

async function instantiate(ctx: OperationContext): Promise<DriverState> {
  const started = await openStackDriver.instantiateStart(ctx);
  const done = await finish((state) => openStackDriver.instantiatePoll(ctx, state), started);
  assert.equal(done.status, 'DONE', done.status === 'FAILED' ? done.reason : undefined);
  return done.state;
}

async function terminate(ctx: OperationContext, state: DriverState): Promise<Progress> {
  const started = await openStackDriver.terminateStart(ctx, state);
  return finish((current) => openStackDriver.terminatePoll(ctx, current), started);
}

/** The context of a later operation on the same VNF: its own op occ, request and grant; the instantiate request stays. */
function later(ctx: OperationContext, request: Record<string, unknown>): OperationContext {
  instances += 1;
  return { ...ctx, opOccId: `op-${instances}`, request, grant: {} };
}

async function update(ctx: OperationContext, state: DriverState, change: UpdateChange): Promise<Progress> {
  const started = await openStackDriver.updateStart(ctx, state, change);
  return finish((current) => openStackDriver.updatePoll(ctx, current, change), started);
}

const scaleOut = (vdu1: number): UpdateChange => ({
  kind: 'SCALE',
  scaleType: 'SCALE_OUT',
  aspectId: 'VDU1_scale',
  steps: 1,
  targets: { VDU1: vdu1 },
  remove: [],
});
const SCALE_OUT_REQUEST = { type: 'SCALE_OUT', aspectId: 'VDU1_scale', numberOfSteps: 1 };
const SCALE_IN_REQUEST = { type: 'SCALE_IN', aspectId: 'VDU1_scale', numberOfSteps: 1 };

async function terminateLeavingNothing(ctx: OperationContext, state: DriverState): Promise<void> {
  assert.equal((await terminate(ctx, state)).status, 'DONE');
  await sim.settled();
  nothingLeft();
}

function nothingLeft(): void {
  const state = sim.faults.state();
  assert.deepEqual(
    {
      stacks: state.stacks.count,
      servers: state.servers.count,
      ports: state.ports.count,
      networks: state.networks.count,
      subnets: state.subnets.count,
      volumes: state.volumes.count,
      images: state.images.count,
      serverGroups: state.serverGroups.count,
    },
    { stacks: 0, servers: 0, ports: 0, networks: 0, subnets: 0, volumes: 0, images: 0, serverGroups: 0 },
  );
}

type Info = Record<string, unknown>;
const byVdu = (collected: CollectedResources, vduId: string): Info[] => collected.vnfcResourceInfo.filter((vnfc) => vnfc.vduId === vduId);
const idsOf = (vnfcs: Info[]): string[] => vnfcs.map((vnfc) => String(vnfc.id)).sort();

async function stackOf(ctx: OperationContext, state: DriverState) {
  return new HeatClient(new OpenStackSession(ctx.vim)).getStack(`${String(state.stackName)}/${String(state.stackId)}`);
}

describe('OpenStack driver on the simulator', () => {
  it('verifies the simulator VIM', async () => {
    await openStackDriver.verify(vim());
  });

  it('instantiates the sample: one image upload, the stack, and instantiatedVnfInfo from its resources', async () => {
    const ctx = context();
    const started = await openStackDriver.instantiateStart(ctx);
    assert.equal(started.stackName, `vnf-${ctx.vnfInstanceId}`);
    assert.equal(typeof started.stackId, 'string');
    const images = started.images as Array<{ id: string; imageId: string; created: boolean }>;
    assert.deepEqual(
      images.map((image) => [image.imageId, image.created]),
      [
        ['VDU1', true],
        ['VirtualStorage', false],
      ],
      'the file VDU1 and the volume share is uploaded once',
    );
    assert.deepEqual(sim.faults.state().images.ids, [images[0]?.id]);
    assert.doesNotMatch(JSON.stringify(started), /devstack|password/i, 'no credentials in the state');

    const done = await finish((state) => openStackDriver.instantiatePoll(ctx, state), started);
    assert.equal(done.status, 'DONE');
    const collected = await openStackDriver.collect(ctx, done.state);
    const sims = sim.faults.state();

    const [vdu1] = byVdu(collected, 'VDU1');
    const [vdu2] = byVdu(collected, 'VDU2');
    assert.ok(vdu1 && vdu2);
    assert.equal(collected.vnfcResourceInfo.length, 2);
    assert.deepEqual(new Set(collected.vnfcResourceInfo.map((vnfc) => vnfc.id)), new Set(sims.servers.ids), 'VNFC ids are the Nova server ids');
    assert.deepEqual(vdu1.computeResource, { vimConnectionId: 'vim-sim', resourceId: vdu1.id, vimLevelResourceType: 'OS::Nova::Server' });
    const metadata1 = vdu1.metadata as Info;
    assert.match(String(metadata1.creation_time), /^\d{4}-\d\d-\d\dT/);
    assert.match(String(metadata1.stack_id), /^vnf-.+-VDU1-.+\/[0-9a-f-]{36}$/, 'the scaling group member stack');
    assert.match(String(metadata1.parent_stack_id), /^vnf-.+-VDU1-[a-z2-7]+\/[0-9a-f-]{36}$/, 'the scaling group stack');
    assert.equal(typeof metadata1.parent_resource_name, 'string');
    assert.equal((vdu2.metadata as Info).stack_id, `${String(started.stackName)}/${String(started.stackId)}`);
    assert.equal(vdu1.storageResourceIds, undefined);

    assert.equal(collected.virtualStorageResourceInfo.length, 1);
    const [volume] = collected.virtualStorageResourceInfo;
    assert.equal(volume?.virtualStorageDescId, 'VirtualStorage');
    assert.deepEqual(sims.volumes.ids, [volume?.id]);
    assert.deepEqual(vdu2.storageResourceIds, [volume?.id]);

    assert.equal(collected.vnfVirtualLinkResourceInfo.length, 1);
    const [vl] = collected.vnfVirtualLinkResourceInfo;
    assert.equal(vl?.vnfVirtualLinkDescId, 'internalVL1');
    assert.deepEqual(sims.networks.ids, [vl?.id]);
    const linkPorts = vl?.vnfLinkPorts as Info[];
    assert.equal(linkPorts.length, 2);
    for (const port of linkPorts) assert.ok(sims.ports.ids.includes(String(port.id)), 'link ports are Neutron ports');

    const cps1 = vdu1.vnfcCpInfo as Info[];
    assert.deepEqual(cps1.map((cp) => cp.cpdId).sort(), ['VDU1_CP1', 'VDU1_CP2']);
    const internal = cps1.find((cp) => cp.cpdId === 'VDU1_CP2');
    assert.ok(linkPorts.some((port) => port.id === internal?.vnfLinkPortId && port.cpInstanceId === internal?.id && port.cpInstanceType === 'VNFC_CP'));
    const [vdu2Cp] = vdu2.vnfcCpInfo as Info[];
    assert.equal(vdu2Cp?.cpdId, 'VDU2_CP2');
    assert.ok(linkPorts.some((port) => port.id === vdu2Cp?.vnfLinkPortId));

    const external = cps1.find((cp) => cp.cpdId === 'VDU1_CP1');
    assert.equal(collected.extCpInfo.length, 1);
    const [extCp] = collected.extCpInfo;
    assert.equal(extCp?.cpdId, 'VDU1_CP1');
    assert.equal(extCp?.id, external?.vnfExtCpId);
    assert.equal(extCp?.associatedVnfcCpId, external?.id);
    assert.equal(extCp?.cpConfigId, 'VDU1_CP1-1');
    assert.ok(sims.ports.ids.includes(String(extCp?.extLinkPortId)));
    // The addresses Neutron allocated to the port, not what the request asked for (one dynamic IPv4).
    const session = new OpenStackSession(ctx.vim);
    const neutronPort = (await (await session.request('neutron', 'network', `/v2.0/ports/${String(extCp?.extLinkPortId)}`, { what: 'test' })).json()) as {
      port: { mac_address: string; fixed_ips: Array<{ subnet_id: string; ip_address: string }> };
    };
    assert.ok(neutronPort.port.fixed_ips.length > 0);
    assert.deepEqual(extCp?.cpProtocolInfo, [
      {
        layerProtocol: 'IP_OVER_ETHERNET',
        ipOverEthernet: {
          macAddress: neutronPort.port.mac_address,
          ipAddresses: [
            {
              type: 'IPV4',
              addresses: neutronPort.port.fixed_ips.map((ip) => ip.ip_address),
              subnetId: neutronPort.port.fixed_ips[0]?.subnet_id,
              isDynamic: true,
            },
          ],
        },
      },
    ]);
    await assertEtsiSchema('vnflcm', 'VnfExtCpInfo', extCp);
    assert.deepEqual(
      collected.extVirtualLinkInfo?.map((link) => [link.id, (link.resourceHandle as Info).resourceId, (link.extLinkPorts as Info[]).map((port) => port.id)]),
      [['ext-vl-1', publicNetwork, [extCp?.extLinkPortId]]],
    );

    assert.deepEqual(
      collected.vnfcInfo,
      collected.vnfcResourceInfo.map((vnfc) => ({
        id: `${String(vnfc.vduId)}-${String(vnfc.id)}`,
        vduId: vnfc.vduId,
        vnfcResourceInfoId: vnfc.id,
        vnfcState: 'STARTED',
      })),
    );
    assert.deepEqual(await openStackDriver.collect(ctx, done.state), collected, 'reading again gives the same ids');

    const ended = await terminate(ctx, done.state);
    assert.equal(ended.status, 'DONE');
    await sim.settled();
    nothingLeft();
  });

  it('follows the instantiation level: two VDU1 members, each with its own ports', async () => {
    const ctx = context({ instantiationLevelId: 'instantiation_level_2' });
    const state = await instantiate(ctx);
    const collected = await openStackDriver.collect(ctx, state);
    const members = byVdu(collected, 'VDU1');
    assert.equal(members.length, 2);
    assert.notEqual((members[0]!.metadata as Info).parent_resource_name, (members[1]!.metadata as Info).parent_resource_name);
    const cpIds = members.flatMap((member) => (member.vnfcCpInfo as Info[]).map((cp) => cp.id));
    assert.equal(new Set(cpIds).size, 4);
    assert.equal(collected.extCpInfo.length, 2);
    await terminateLeavingNothing(ctx, state);
  });

  it("reports Heat's reason when the stack cannot be created, and rolls back", async () => {
    sim.faults.inject({ kind: 'stack-create-fail', reason: 'Resource CREATE failed: No valid host was found.' });
    const ctx = context();
    const started = await openStackDriver.instantiateStart(ctx);
    const failed = await finish((state) => openStackDriver.instantiatePoll(ctx, state), started);
    assert.equal(failed.status, 'FAILED');
    const stack = await new HeatClient(new OpenStackSession(ctx.vim)).getStack(`${String(started.stackName)}/${String(started.stackId)}`);
    assert.equal(stack?.stack_status, 'CREATE_FAILED');
    assert.equal(failed.status === 'FAILED' && failed.reason, stack?.stack_status_reason, 'verbatim');
    assert.match(String(stack?.stack_status_reason), /No valid host was found/);

    await terminateLeavingNothing(ctx, failed.state);
  });

  it('rolls back a start whose state was lost, by the stack and image names', async () => {
    const ctx = context();
    await openStackDriver.instantiateStart(ctx);
    assert.equal((await terminate(ctx, {})).status, 'DONE');
    await sim.settled();
    nothingLeft();
    assert.equal((await terminate(ctx, {})).status, 'DONE', 'nothing to remove is fine');
  });

  it('uses an image devstack already has when the package does not ship one', async () => {
    const flavour = vnfd.flavours[0];
    assert.ok(flavour);
    const swImage = (name: string) => ({ name, version: '0.5.2', checksum: { algorithm: 'sha-512', hash: '0' }, containerFormat: 'bare', diskFormat: 'qcow2' });
    const preloaded: ParsedVnfd = {
      ...vnfd,
      softwareImages: [],
      flavours: [
        {
          ...flavour,
          vdus: flavour.vdus.map((vdu) => (vdu.id === 'VDU1' ? { ...vdu, swImage: swImage('cirros-0.5.2-x86_64-disk') } : vdu)),
          storages: flavour.storages.map((storage) => ({ ...storage, swImage: swImage('no-such-image') })),
        },
      ],
    };
    await assert.rejects(openStackDriver.instantiateStart(context({ vnfd: preloaded })), (error: unknown) => {
      assert.ok(error instanceof VimError);
      assert.equal(error.service, 'glance');
      assert.match(error.message, /software image no-such-image of VirtualStorage is not granted, not in the VNF package and not an active image in Glance/);
      return true;
    });
    const cirros = sim.faults.state().preloaded.images.find((image) => image.name === 'cirros-0.5.2-x86_64-disk');
    assert.ok(cirros);
    const ctx = context({ vnfd: preloaded, grant: { images: { VirtualStorage: cirros.id } } });
    const state = await instantiate(ctx);
    assert.deepEqual(state.images, [
      { id: cirros.id, imageId: 'VDU1', created: false },
      { id: cirros.id, imageId: 'VirtualStorage', created: false },
    ]);
    await terminateLeavingNothing(ctx, state);
    assert.ok(
      sim.faults.state().preloaded.images.some((image) => image.id === cirros.id),
      'an image the driver did not create stays',
    );
  });

  it('authenticates again when its token has expired', async () => {
    const ctx = context();
    const state = await instantiate(ctx);
    const logins: string[] = [];
    const original = globalThis.fetch;
    globalThis.fetch = (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
      const url = input instanceof Request ? input.url : String(input);
      if (url.endsWith('/auth/tokens')) logins.push(url);
      return original(input, init);
    };
    try {
      await openStackDriver.collect(ctx, state);
      assert.equal(logins.length, 0, 'the cached token is used');
      assert.ok(sim.faults.expireTokens() > 0);
      const collected = await openStackDriver.collect(ctx, state);
      assert.equal(collected.vnfcResourceInfo.length, 2);
      assert.equal(logins.length, 1, 'one new login after the 401');
    } finally {
      globalThis.fetch = original;
    }
    assert.equal((await terminate(ctx, state)).status, 'DONE');
  });

  it('says Keystone refused a wrong password, and which endpoint it cannot reach', async () => {
    await assert.rejects(openStackDriver.verify(vim({ password: 'wrong' })), (error: unknown) => {
      assert.ok(error instanceof VimError);
      assert.equal(error.service, 'keystone');
      assert.equal(error.vimStatus, 401);
      assert.match(error.message, /keystone answered 401: The request you have made requires authentication\./);
      assert.doesNotMatch(error.message, /wrong/);
      return true;
    });
    await assert.rejects(openStackDriver.instantiateStart(context({ vim: vim({ password: 'wrong' }) })), /keystone answered 401/);
    const closed = await startOpenStackSimulator({ timeScale: 0.01 });
    const unreachable = closed.authUrl;
    await closed.close();
    await assert.rejects(openStackDriver.verify({ ...vim(), interfaceInfo: { endpoint: unreachable } }), (error: unknown) => {
      assert.ok(error instanceof VimError);
      assert.match(error.message, new RegExp(`^cannot reach ${unreachable.replace(/[.]/g, '\\.')} \\(ECONNREFUSED\\)$`));
      return true;
    });
  });
});

describe('Scale and heal on the simulator', () => {
  it('scales out by one: one more VDU1 server, the existing servers keep their ids', async () => {
    const ctx = context();
    const state = await instantiate(ctx);
    assert.deepEqual(state.capacities, { VDU1: 1, VDU2: 1 }, 'recorded at instantiate');
    const before = await openStackDriver.collect(ctx, state);

    const scaling = later(ctx, SCALE_OUT_REQUEST);
    const done = await update(scaling, state, scaleOut(2));
    assert.equal(done.status, 'DONE', done.status === 'FAILED' ? done.reason : undefined);
    assert.deepEqual(done.state.capacities, { VDU1: 2, VDU2: 1 });
    const after = await openStackDriver.collect(scaling, done.state);
    assert.equal(byVdu(after, 'VDU1').length, 2);
    for (const vnfc of before.vnfcResourceInfo) assert.ok(idsOf(after.vnfcResourceInfo).includes(String(vnfc.id)), `${String(vnfc.vduId)} keeps its server`);
    assert.deepEqual(idsOf(after.vnfcResourceInfo), [...sim.faults.state().servers.ids].sort(), 'three servers in Nova, all VNFCs');
    // The instantiate request still decides the external connection of the new member.
    assert.equal(after.extCpInfo.length, 2);
    assert.deepEqual(
      after.extVirtualLinkInfo?.map((link) => link.id),
      ['ext-vl-1'],
    );
    const nfv = JSON.parse(String((await stackOf(scaling, done.state))?.parameters?.nfv)) as {
      VDU: Record<string, { desired_capacity: number }>;
      CP: Record<string, { network: string }>;
    };
    assert.deepEqual([nfv.VDU.VDU1?.desired_capacity, nfv.VDU.VDU2?.desired_capacity, nfv.CP.VDU1_CP1?.network], [2, 1, publicNetwork]);

    await terminateLeavingNothing(ctx, done.state);
  });

  it('scales in by removing exactly the VNFC it is told to, not the oldest one Heat would pick', async () => {
    const ctx = context({ instantiationLevelId: 'instantiation_level_2' });
    const state = await instantiate(ctx);
    const initial = idsOf(byVdu(await openStackDriver.collect(ctx, state), 'VDU1'));
    assert.equal(initial.length, 2);
    const grown = await update(later(ctx, SCALE_OUT_REQUEST), state, scaleOut(3));
    assert.equal(grown.status, 'DONE');
    const collected = await openStackDriver.collect(ctx, grown.state);
    const [newest] = byVdu(collected, 'VDU1').filter((vnfc) => !initial.includes(String(vnfc.id)));
    assert.ok(newest);
    const vdu2 = idsOf(byVdu(collected, 'VDU2'));

    const scaling = later(ctx, SCALE_IN_REQUEST);
    const notMember: UpdateChange = {
      kind: 'SCALE',
      scaleType: 'SCALE_IN',
      aspectId: 'VDU1_scale',
      steps: 1,
      targets: { VDU1: 2, VDU2: 0 },
      remove: [{ vduId: 'VDU2', resourceId: String(vdu2[0]) }],
    };
    await assert.rejects(openStackDriver.updateStart(scaling, grown.state, notMember), /not a member of an OS::Heat::AutoScalingGroup/);
    const untouched = await new HeatClient(new OpenStackSession(ctx.vim)).listResources(`${String(state.stackName)}/${String(state.stackId)}`, 5);
    assert.deepEqual(
      untouched.filter((resource) => resource.resource_status === 'CHECK_FAILED'),
      [],
      'nothing marked',
    );

    const change: UpdateChange = {
      kind: 'SCALE',
      scaleType: 'SCALE_IN',
      aspectId: 'VDU1_scale',
      steps: 1,
      targets: { VDU1: 2 },
      remove: [{ vduId: 'VDU1', resourceId: String(newest.id) }],
    };
    const done = await update(scaling, grown.state, change);
    assert.equal(done.status, 'DONE', done.status === 'FAILED' ? done.reason : undefined);
    assert.deepEqual(done.state.capacities, { VDU1: 2, VDU2: 1 });
    const after = await openStackDriver.collect(scaling, done.state);
    assert.deepEqual(idsOf(byVdu(after, 'VDU1')), initial, 'the two older members stay');
    assert.deepEqual(idsOf(byVdu(after, 'VDU2')), vdu2);
    assert.ok(!sim.faults.state().servers.ids.includes(String(newest.id)), 'its server is gone from Nova');
    assert.equal(sim.faults.state().servers.count, 3);

    await terminateLeavingNothing(ctx, done.state);
  });

  it('heals one VNFC: exactly its server is replaced, on the same ports, and the other keeps its id', async () => {
    const ctx = context({ instantiationLevelId: 'instantiation_level_2' });
    const state = await instantiate(ctx);
    const before = await openStackDriver.collect(ctx, state);
    const [healed, kept] = byVdu(before, 'VDU1');
    assert.ok(healed && kept);

    const healing = later(ctx, { vnfcInstanceId: [`VDU1-${String(healed.id)}`] });
    const done = await update(healing, state, { kind: 'HEAL', vnfcs: [{ vduId: 'VDU1', resourceId: String(healed.id) }] });
    assert.equal(done.status, 'DONE', done.status === 'FAILED' ? done.reason : undefined);
    assert.deepEqual(done.state.capacities, state.capacities);
    const after = await openStackDriver.collect(healing, done.state);
    const vdu1 = byVdu(after, 'VDU1');
    assert.equal(vdu1.length, 2);
    assert.ok(
      vdu1.some((vnfc) => vnfc.id === kept.id),
      'the other VDU1 server keeps its id',
    );
    assert.ok(!vdu1.some((vnfc) => vnfc.id === healed.id), 'the healed one is a new server');
    assert.deepEqual(idsOf(byVdu(after, 'VDU2')), idsOf(byVdu(before, 'VDU2')));
    const replacement = vdu1.find((vnfc) => vnfc.id !== kept.id);
    assert.equal((replacement!.metadata as Info).parent_resource_name, (healed.metadata as Info).parent_resource_name, 'in the same scaling group member');
    assert.deepEqual(after.extCpInfo.map((cp) => cp.extLinkPortId).sort(), before.extCpInfo.map((cp) => cp.extLinkPortId).sort(), 'its ports stay');
    const servers = sim.faults.state().servers;
    assert.equal(servers.count, 3);
    assert.ok(!servers.ids.includes(String(healed.id)));

    await terminateLeavingNothing(ctx, done.state);
  });

  it('heals the VDU2 VNFC, which boots from a Cinder volume: its server is replaced and ACTIVE, the VDU1 servers keep their ids', async () => {
    const ctx = context({ instantiationLevelId: 'instantiation_level_2' });
    const state = await instantiate(ctx);
    const before = await openStackDriver.collect(ctx, state);
    const [healed] = byVdu(before, 'VDU2');
    assert.ok(healed);

    const healing = later(ctx, { vnfcInstanceId: [`VDU2-${String(healed.id)}`] });
    const done = await update(healing, state, { kind: 'HEAL', vnfcs: [{ vduId: 'VDU2', resourceId: String(healed.id) }] });
    assert.equal(done.status, 'DONE', done.status === 'FAILED' ? done.reason : undefined);
    const after = await openStackDriver.collect(healing, done.state);
    const [replacement] = byVdu(after, 'VDU2');
    assert.ok(replacement);
    assert.notEqual(replacement.id, healed.id, 'the healed VNFC is a new server');
    assert.deepEqual(idsOf(byVdu(after, 'VDU1')), idsOf(byVdu(before, 'VDU1')), 'the VDU1 servers keep their ids');
    const { servers, volumes } = sim.faults.state();
    assert.equal(servers.count, 3);
    assert.ok(!servers.ids.includes(String(healed.id)), 'the old server is gone from Nova');
    assert.equal(servers.items.find((server) => server.id === replacement.id)?.status, 'ACTIVE');
    // Heat creates a replacement before deleting the old server, so the volume the old one still has
    // in use is replaced with it (as Tacker's heal of a VNFC with storage does).
    const [oldVolume] = (healed.storageResourceIds as string[] | undefined) ?? [];
    const [newVolume] = (replacement.storageResourceIds as string[] | undefined) ?? [];
    assert.ok(oldVolume && newVolume);
    assert.notEqual(newVolume, oldVolume, 'it boots from a new volume');
    assert.deepEqual(
      volumes.items.map((volume) => [volume.id, volume.status]),
      [[newVolume, 'in-use']],
      'the old volume is gone from Cinder',
    );
    assert.deepEqual(
      after.virtualStorageResourceInfo.map((storage) => storage.id),
      [newVolume],
    );
    const resources = await new HeatClient(new OpenStackSession(ctx.vim)).listResources(`${String(state.stackName)}/${String(state.stackId)}`, 5);
    assert.deepEqual(
      resources.filter((resource) => resource.resource_status === 'CHECK_FAILED'),
      [],
      'nothing left marked',
    );

    await terminateLeavingNothing(ctx, done.state);
  });

  it("reports Heat's reason when the stack update fails", async () => {
    const ctx = context();
    const state = await instantiate(ctx);
    sim.faults.inject({
      kind: 'stack-update-fail',
      reason: 'Resource UPDATE failed: Quota exceeded for instances: Requested 1, but already used 10 of 10 instances',
    });
    const scaling = later(ctx, SCALE_OUT_REQUEST);
    const failed = await update(scaling, state, scaleOut(2));
    assert.equal(failed.status, 'FAILED');
    const stack = await stackOf(scaling, failed.state);
    assert.equal(stack?.stack_status, 'UPDATE_FAILED');
    assert.equal(failed.status === 'FAILED' && failed.reason, stack?.stack_status_reason, 'verbatim');
    assert.match(String(stack?.stack_status_reason), /Quota exceeded for instances/);

    await terminateLeavingNothing(ctx, failed.state);
  });
});

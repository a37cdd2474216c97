// CHANGE_VNFPKG on the OpenStack driver against the OpenStack simulator (seed 004): a rolling
// update from openstack-vnf-v1 to openstack-vnf-v2 one VNFC at a time, a blue-green change to a
// second stack, failures half-way and their rollbacks restoring everything, the simulator's load
// balancer and the sample coordinate script that switches it, run as the engine runs it (in the
// script sandbox). The tests answer COORDINATE as the engine does and let the simulator settle
// between polls (an event, never a sleep).
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { CsarArchive } from '#lib/packages/archive.ts';
import type { ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import { DEFAULT_LIMITS, runScript } from '#lib/scripts/sandbox.ts';
import type { ScriptResult } from '#lib/scripts/contract.ts';
import type { CollectedResources, Coordination, DriverState, OperationContext, PackageChange, PackageFiles, Progress, VimConnection } from '#lib/vim/driver.ts';
import { clearTokenCache, openStackDriver } from '#lib/vim/openstack/index.ts';
import { HeatClient } from '#lib/vim/openstack/heat.ts';
import { OpenStackSession } from '#lib/vim/openstack/keystone.ts';
import { startOpenStackSimulator, type OpenStackSimulator } from '#local/openstack/simulator.ts';
import { openSamplePackage } from '../../support/sample-package.ts';

interface Package {
  archive: CsarArchive;
  vnfd: ParsedVnfd;
  files: PackageFiles;
}

let sim: OpenStackSimulator;
let v1: Package;
let v2: Package;
let publicNetwork: string;
let admin: { token: string; projectId: string };

const V2_PACKAGE_ID = '7d1f3b2a-5c4e-4f6a-9b8c-0d1e2f3a4b5c';
const SCRIPT = 'Scripts/coordinate_lb.js';

before(async () => {
  // No quota: a failed test's leftovers must not fail the next ones.
  sim = await startOpenStackSimulator({ timeScale: 0.01, quotas: { instances: -1, cores: -1, ram: -1 } });
  v1 = await openSamplePackage('openstack-vnf-v1');
  v2 = await openSamplePackage('openstack-vnf-v2');
  const network = sim.faults.state().preloaded.networks.find((candidate) => candidate.name === 'public');
  assert.ok(network);
  publicNetwork = network.id;
  const response = await fetch(`${sim.authUrl}/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: { methods: ['password'], password: { user: { name: 'admin', domain: { name: 'Default' }, password: sim.credentials.password } } },
        scope: { project: { name: 'admin', domain: { name: 'Default' } } },
      },
    }),
  });
  const body = (await response.json()) as { token: { project: { id: string } } };
  admin = { token: String(response.headers.get('x-subject-token')), projectId: body.token.project.id };
});

after(async () => {
  await sim.close();
  await v1.archive.close();
  await v2.archive.close();
});

beforeEach(async () => {
  sim.faults.clear();
  clearTokenCache();
  await sim.settled();
});

// ---------------------------------------------------------------------------------------------
// Contexts and steps, as the LCM engine makes them

const vim = (): VimConnection => ({
  vimId: 'vim-sim',
  vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3',
  interfaceInfo: { endpoint: sim.authUrl },
  accessInfo: { ...sim.credentials },
});

let instances = 0;
function context(instantiationLevelId?: string): OperationContext {
  instances += 1;
  const request = {
    flavourId: 'simple',
    ...(instantiationLevelId ? { instantiationLevelId } : {}),
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
    vnfInstanceId: `00000000-0000-4000-9000-${String(instances).padStart(12, '0')}`,
    opOccId: `op-${instances}`,
    vnfd: v1.vnfd,
    flavourId: 'simple',
    ...(instantiationLevelId ? { instantiationLevelId } : {}),
    request,
    instantiateRequest: request,
    files: v1.files,
    vim: vim(),
    grant: {},
  };
}

/** A later operation on the VNF (its own op occ and request); `pkg` is the package the VNF is on. */
function later(ctx: OperationContext, request: Record<string, unknown>, pkg: Package = v1): OperationContext {
  instances += 1;
  return { ...ctx, opOccId: `op-${instances}`, request, grant: {}, vnfd: pkg.vnfd, files: pkg.files };
}

function packageChange(upgradeType: PackageChange['upgradeType'], vduIds: string[] = []): PackageChange {
  return { upgradeType, vnfPkgId: V2_PACKAGE_ID, vnfd: v2.vnfd, files: v2.files, flavourId: 'simple', vduIds, grant: {} };
}

interface LbParam {
  ip_address: string;
  pool: string;
  username: string;
  password: string;
}
const lbParam = (pool: string, password = sim.credentials.password): LbParam => ({ ip_address: `${sim.url}/_lb`, pool, username: 'admin', password });

/** The ChangeCurrentVnfPkgRequest as the NFVO sends it (the engine hands it to the scripts with its passwords). */
function changeRequest(upgradeType: string, vduIds: string[], lb?: LbParam): Record<string, unknown> {
  const param = { cp_name: 'VDU1_CP1', username: 'ubuntu', password: 'ubuntu' };
  return {
    vnfdId: v2.vnfd.vnfdId,
    additionalParams: {
      upgrade_type: upgradeType,
      'lcm-operation-coordinate-new-vnf': `./${SCRIPT}`,
      'lcm-operation-coordinate-old-vnf': `./${SCRIPT}`,
      vdu_params: vduIds.map((vduId) => ({ vdu_id: vduId, old_vnfc_param: param, new_vnfc_param: param })),
      ...(lb ? { external_lb_param: lb } : {}),
    },
  };
}

async function instantiate(ctx: OperationContext): Promise<DriverState> {
  const started = await openStackDriver.instantiateStart(ctx);
  const done = await drive((state) => openStackDriver.instantiatePoll(ctx, state), started);
  assert.equal(done.end.status, 'DONE', done.end.status === 'FAILED' ? done.end.reason : undefined);
  return done.end.state;
}

async function terminate(ctx: OperationContext, state: DriverState): Promise<void> {
  const started = await openStackDriver.terminateStart(ctx, state);
  const done = await drive((current) => openStackDriver.terminatePoll(ctx, current), started);
  assert.equal(done.end.status, 'DONE', done.end.status === 'FAILED' ? done.end.reason : undefined);
  await sim.settled();
}

interface Driven {
  end: Progress;
  coordinations: Coordination[];
}

/**
 * Polls to the end as the engine does: a COORDINATE is answered by `coordinate` (the script run)
 * and polled again at once; IN_PROGRESS waits for the simulator to settle. `probe` runs after every
 * poll and again once the simulator has settled.
 */
async function drive(
  poll: (state: DriverState) => Promise<Progress>,
  state: DriverState,
  options: { coordinate?: (coordination: Coordination) => Promise<void>; probe?: () => Promise<void> } = {},
): Promise<Driven> {
  const coordinations: Coordination[] = [];
  let current = state;
  for (let polls = 0; polls < 60; polls += 1) {
    const progress = await poll(current);
    await options.probe?.();
    current = progress.state;
    if (progress.status === 'COORDINATE') {
      coordinations.push(progress.coordinate);
      await options.coordinate?.(progress.coordinate);
      continue;
    }
    if (progress.status !== 'IN_PROGRESS') return { end: progress, coordinations };
    await sim.settled();
    await options.probe?.();
  }
  throw new Error('the step did not end in 60 polls');
}

const changeSteps = (ctx: OperationContext, change: PackageChange) => ({
  start: (state: DriverState) => openStackDriver.changeStart(ctx, state, change),
  poll: (state: DriverState) => openStackDriver.changePoll(ctx, state, change),
  rollbackStart: (state: DriverState) => openStackDriver.changeRollbackStart(ctx, state, change),
  rollbackPoll: (state: DriverState) => openStackDriver.changeRollbackPoll(ctx, state, change),
});

// ---------------------------------------------------------------------------------------------
// What the simulated cloud has

async function openstack<T>(path: string): Promise<T> {
  const response = await fetch(`${sim.url}${path}`, { headers: { 'x-auth-token': admin.token, accept: 'application/json' } });
  assert.equal(response.status, 200, `GET ${path}`);
  return (await response.json()) as T;
}

/** The Glance image a server runs: its own, or (booted from a volume) its volume's. */
async function imageOf(serverId: string): Promise<string> {
  const { server } = await openstack<{ server: { image: { id: string } | ''; 'os-extended-volumes:volumes_attached': Array<{ id: string }> } }>(
    `/compute/v2.1/servers/${serverId}`,
  );
  if (server.image) return server.image.id;
  const [attached] = server['os-extended-volumes:volumes_attached'];
  assert.ok(attached, `server ${serverId} has an image or a volume`);
  const { volume } = await openstack<{ volume: { volume_image_metadata?: { image_id: string } } }>(`/volume/v3/${admin.projectId}/volumes/${attached.id}`);
  assert.ok(volume.volume_image_metadata, `volume ${attached.id} was made from an image`);
  return volume.volume_image_metadata.image_id;
}

async function imageNamed(name: string): Promise<string> {
  const { images } = await openstack<{ images: Array<{ id: string; name: string; status: string }> }>(`/image/v2/images?name=${encodeURIComponent(name)}`);
  assert.equal(images.length, 1, `one image ${name}`);
  assert.equal(images[0]?.status, 'active');
  return String(images[0]?.id);
}

const heat = (ctx: OperationContext) => new HeatClient(new OpenStackSession(ctx.vim));
const topStack = (state: DriverState): string => `${String(state.stackName)}/${String(state.stackId)}`;

type Info = Record<string, unknown>;
const byVdu = (collected: CollectedResources, vduId: string): Info[] => collected.vnfcResourceInfo.filter((vnfc) => vnfc.vduId === vduId);
/** VNFCs oldest first, as the change takes them. */
const oldestFirst = (vnfcs: Info[]): string[] =>
  [...vnfcs]
    .sort(
      (a, b) =>
        String((a.metadata as Info).creation_time).localeCompare(String((b.metadata as Info).creation_time)) || String(a.id).localeCompare(String(b.id)),
    )
    .map((vnfc) => String(vnfc.id));

const v1Image = (ctx: OperationContext) => imageNamed(`vnf-${ctx.vnfInstanceId}-VDU1`);
const v2ImageName = (ctx: OperationContext) => `vnf-${ctx.vnfInstanceId}-VDU1-${V2_PACKAGE_ID.slice(0, 8)}`;

/** Servers and images in the simulated cloud, less those that were there before the test (`baseline`). */
interface Cloud {
  servers: string[];
  images: string[];
}
function cloud(baseline: Cloud = { servers: [], images: [] }): Cloud {
  const state = sim.faults.state();
  return {
    servers: state.servers.ids.filter((id) => !baseline.servers.includes(id)).sort(),
    images: state.images.ids.filter((id) => !baseline.images.includes(id)).sort(),
  };
}

// ---------------------------------------------------------------------------------------------
// The load balancer and the coordinate script, as the engine runs it

async function backend(pool: string): Promise<{ status: number; body: Info }> {
  const response = await fetch(`${sim.url}/_lb/pools/${pool}/backend`);
  return { status: response.status, body: (await response.json()) as Info };
}

async function setPool(pool: string, members: Array<{ address: string; serverId?: string }>, password = sim.credentials.password): Promise<Response> {
  return fetch(`${sim.url}/_lb/pools/${pool}/members`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}` },
    body: JSON.stringify({ members }),
  });
}

async function poolAddresses(pool: string): Promise<string[]> {
  const response = await fetch(`${sim.url}/_lb/pools/${pool}`);
  const body = (await response.json()) as { members: Array<{ address: string }> };
  return body.members.map((member) => member.address).sort();
}

/** The coordinate script's input as lib/lcm/change-package.ts builds it. */
function scriptInput(request: Record<string, unknown>, coordination: Coordination, isRollback: boolean, vnfInstance: Info): Record<string, unknown> {
  const additional = request.additionalParams as Info;
  const vduParams = additional.vdu_params as Info[];
  const entry = vduParams.find((candidate) => candidate.vdu_id === coordination.vnfcs[0]?.vduId);
  const vnfcParam = entry?.[coordination.target === 'new' ? 'new_vnfc_param' : 'old_vnfc_param'];
  return {
    operation: 'change_current_package',
    request,
    vnfInstance,
    vnfcs: coordination.vnfcs,
    ...(coordination.vnfcs[0] ? { vnfc: coordination.vnfcs[0] } : {}),
    ...(vnfcParam ? { vnfcParam } : {}),
    vduParams,
    ...(additional.external_lb_param ? { externalLbParam: additional.external_lb_param } : {}),
    ...(coordination.details ? { details: coordination.details } : {}),
    target: coordination.target,
    is_rollback: isRollback,
  };
}

async function runCoordinateScript(input: Record<string, unknown>): Promise<ScriptResult> {
  const script = (await v2.files.read(SCRIPT)).toString('base64');
  return runScript({ kind: 'coordinate', script: SCRIPT, files: { [SCRIPT]: script }, input: input as never }, { ...DEFAULT_LIMITS, isolation: 'plain' });
}

// ---------------------------------------------------------------------------------------------

describe('Rolling update on the simulator', () => {
  it('moves every VDU1 and VDU2 VNFC to the v2 image one at a time, asking CoordinateVNF once per VNFC, oldest first', async () => {
    const baseline = cloud();
    const ctx = context('instantiation_level_2');
    const state = await instantiate(ctx);
    const before = await openStackDriver.collect(ctx, state);
    const oldImage = await v1Image(ctx);
    const vdu1 = oldestFirst(byVdu(before, 'VDU1'));
    const [vdu2] = oldestFirst(byVdu(before, 'VDU2'));
    assert.equal(vdu1.length, 2);
    assert.ok(vdu2);
    for (const id of [...vdu1, vdu2]) assert.equal(await imageOf(id), oldImage);

    const changing = later(ctx, changeRequest('RollingUpdate', ['VDU1', 'VDU2']));
    const steps = changeSteps(changing, packageChange('RollingUpdate', ['VDU1', 'VDU2']));
    const started = await steps.start(state);
    const newImage = await imageNamed(v2ImageName(ctx));
    assert.ok(cloud(baseline).images.includes(oldImage), 'the old image stays while the change runs');
    // At each coordination: the VNFCs coordinated so far (this one included) run the new image, and
    // stay on it (a later update elsewhere in the stack must not undo them); the rest still run the old.
    const seen: Array<{ moved: Record<string, string>; pending: Record<string, string> }> = [];
    const coordinatedIds: string[] = [];
    const done = await drive(steps.poll, started, {
      coordinate: async (coordination) => {
        const [vnfc] = coordination.vnfcs;
        assert.ok(vnfc);
        coordinatedIds.push(vnfc.resourceId);
        const moved: Record<string, string> = {};
        const pending: Record<string, string> = {};
        for (const id of coordinatedIds) moved[id] = await imageOf(id);
        for (const id of [...vdu1, vdu2].slice(coordinatedIds.length)) pending[id] = await imageOf(id);
        seen.push({ moved, pending });
      },
    });
    assert.equal(done.end.status, 'DONE', done.end.status === 'FAILED' ? done.end.reason : undefined);

    assert.deepEqual(
      done.coordinations.map((coordination) => [coordination.target, coordination.vnfcs.length, coordination.vnfcs[0]?.vduId]),
      [
        ['new', 1, 'VDU1'],
        ['new', 1, 'VDU1'],
        ['new', 1, 'VDU2'],
      ],
    );
    const coordinated = done.coordinations.map((coordination) => coordination.vnfcs[0]!);
    // A new image rebuilds a server in place: VDU1 keeps its ids. VDU2 boots from a volume made from
    // the image: Heat replaces the volume, so the server too, and VDU2 gets a new id.
    assert.deepEqual(
      coordinated.slice(0, 2).map((vnfc) => vnfc.resourceId),
      vdu1,
      'VDU1 oldest first, same servers',
    );
    assert.deepEqual(
      coordinated.slice(0, 2).map((vnfc) => vnfc.id),
      vdu1,
      'recorded VNFCs keep their vnfcResourceInfo id',
    );
    const newVdu2 = coordinated[2]!.resourceId;
    assert.notEqual(newVdu2, vdu2, 'VDU2 was replaced');
    assert.equal(coordinated[2]!.id, undefined, 'a replaced VNFC has no recorded id yet');
    assert.equal(seen.length, 3);
    for (const [index, entry] of seen.entries()) {
      assert.deepEqual(
        Object.values(entry.moved),
        Array(index + 1).fill(newImage),
        `at coordination ${index + 1}, the VNFCs coordinated so far run the new image`,
      );
      assert.deepEqual(
        Object.values(entry.pending),
        Array(2 - index).fill(oldImage),
        `at coordination ${index + 1}, the VNFCs not reached yet run the old image`,
      );
    }
    for (const vnfc of coordinated.slice(0, 2)) {
      assert.match(String(vnfc.addresses?.VDU1_CP1?.[0]), /^172\.24\.4\.\d+$/, 'the external CP on the public network');
      assert.match(String(vnfc.addresses?.VDU1_CP2?.[0]), /^192\.168\.10\.\d+$/, 'the internal CP on internalVL1');
    }
    assert.match(String(coordinated[2]!.addresses?.VDU2_CP2?.[0]), /^192\.168\.10\.\d+$/);

    // Nova: every server on the v2 image; Glance: the v1 image is gone.
    const after = cloud(baseline).servers;
    assert.deepEqual(after, [...vdu1, newVdu2].sort());
    for (const id of after) assert.equal(await imageOf(id), newImage);
    assert.ok(!cloud(baseline).images.includes(oldImage), 'the old image is deleted once the change is done');

    // The state: the same stack, the new images, and a stack on the v2 BaseHOT and nfv.
    const result = done.end.state;
    assert.equal(result.stackName, state.stackName);
    assert.equal(result.stackId, state.stackId);
    assert.equal(result.change, undefined);
    assert.deepEqual(
      (result.images as Array<{ id: string }>).map((image) => image.id),
      [newImage, newImage],
    );
    assert.deepEqual(result.capacities, { VDU1: 2, VDU2: 1 });
    const stack = await heat(ctx).getStack(topStack(result));
    assert.equal(stack?.stack_status, 'UPDATE_COMPLETE');
    const nfv = JSON.parse(String(stack?.parameters?.nfv)) as { VDU: Record<string, { vcImageId?: string }> };
    assert.deepEqual([nfv.VDU.VDU1?.vcImageId, nfv.VDU.VirtualStorage?.vcImageId], [newImage, newImage]);

    // collect with the v2 VNFD, as the engine calls it.
    const onV2 = later(ctx, {}, v2);
    const collected = await openStackDriver.collect(onV2, result);
    assert.deepEqual(collected.vnfcResourceInfo.map((vnfc) => String(vnfc.id)).sort(), after);
    assert.deepEqual(oldestFirst(byVdu(collected, 'VDU1')), vdu1);
    assert.deepEqual(
      byVdu(collected, 'VDU2').map((vnfc) => vnfc.id),
      [newVdu2],
    );
    assert.equal(collected.extCpInfo.length, 2);
    assert.deepEqual(
      collected.virtualStorageResourceInfo.map((storage) => storage.id),
      byVdu(collected, 'VDU2')[0]?.storageResourceIds,
    );

    // A later scale-out builds from the v2 template and images.
    const scaled = await drive(
      (current) =>
        openStackDriver.updatePoll(onV2, current, {
          kind: 'SCALE',
          scaleType: 'SCALE_OUT',
          aspectId: 'VDU1_scale',
          steps: 1,
          targets: { VDU1: 3 },
          remove: [],
        }),
      await openStackDriver.updateStart(onV2, result, {
        kind: 'SCALE',
        scaleType: 'SCALE_OUT',
        aspectId: 'VDU1_scale',
        steps: 1,
        targets: { VDU1: 3 },
        remove: [],
      }),
    );
    assert.equal(scaled.end.status, 'DONE', scaled.end.status === 'FAILED' ? scaled.end.reason : undefined);
    const grown = byVdu(await openStackDriver.collect(onV2, scaled.end.state), 'VDU1');
    assert.equal(grown.length, 3);
    for (const vnfc of grown) assert.equal(await imageOf(String(vnfc.id)), newImage);
    assert.ok(
      vdu1.every((id) => grown.some((vnfc) => vnfc.id === id)),
      'the moved members stay as they are',
    );

    await terminate(onV2, scaled.end.state);
    assert.ok(!cloud(baseline).servers.some((id) => [...vdu1, newVdu2].includes(id)));
    assert.ok(!cloud(baseline).images.includes(newImage), 'terminate deletes the new images');
  });

  it('moves only the VDUs the request names: VDU2 and the image its volume was made from stay', async () => {
    const baseline = cloud();
    const ctx = context();
    const state = await instantiate(ctx);
    const before = await openStackDriver.collect(ctx, state);
    const oldImage = await v1Image(ctx);
    const [vdu1] = byVdu(before, 'VDU1').map((vnfc) => String(vnfc.id));
    const [vdu2] = byVdu(before, 'VDU2').map((vnfc) => String(vnfc.id));
    assert.ok(vdu1 && vdu2);

    const steps = changeSteps(later(ctx, changeRequest('RollingUpdate', ['VDU1'])), packageChange('RollingUpdate', ['VDU1']));
    const done = await drive(steps.poll, await steps.start(state));
    assert.equal(done.end.status, 'DONE', done.end.status === 'FAILED' ? done.end.reason : undefined);
    assert.deepEqual(
      done.coordinations.map((coordination) => coordination.vnfcs.map((vnfc) => vnfc.resourceId)),
      [[vdu1]],
    );
    const newImage = await imageNamed(v2ImageName(ctx));
    assert.equal(await imageOf(vdu1), newImage);
    assert.equal(await imageOf(vdu2), oldImage, 'VDU2 is untouched');
    assert.deepEqual(cloud(baseline).servers, [vdu1, vdu2].sort());
    assert.ok(cloud(baseline).images.includes(oldImage), 'the image VDU2 still uses stays');
    assert.deepEqual(
      done.end.state.images,
      [
        { id: newImage, imageId: 'VDU1', created: true },
        { id: oldImage, imageId: 'VirtualStorage', created: true },
      ],
      "both are the driver's to delete at terminate",
    );
    const stack = await heat(ctx).getStack(topStack(done.end.state));
    const nfv = JSON.parse(String(stack?.parameters?.nfv)) as { VDU: Record<string, { vcImageId?: string }> };
    assert.deepEqual([nfv.VDU.VDU1?.vcImageId, nfv.VDU.VirtualStorage?.vcImageId], [newImage, oldImage]);

    await terminate(later(ctx, {}, v2), done.end.state);
    assert.ok(!cloud(baseline).images.includes(oldImage) && !cloud(baseline).images.includes(newImage));
  });

  it("fails with Heat's reason when the second VNFC cannot be updated, and rollback restores servers, images and stack exactly", async () => {
    const baseline = cloud();
    const ctx = context('instantiation_level_2');
    const state = await instantiate(ctx);
    const before = await openStackDriver.collect(ctx, state);
    const oldImage = await v1Image(ctx);
    const vdu1 = oldestFirst(byVdu(before, 'VDU1'));
    const servers = cloud(baseline).servers;
    const images = cloud(baseline).images;
    const stackBefore = await heat(ctx).getStack(topStack(state));
    const groupStack = String((byVdu(before, 'VDU1')[0]!.metadata as Info).parent_stack_id);
    const groupTemplate = await heat(ctx).getTemplate(groupStack);

    const reason = 'Resource UPDATE failed: Quota exceeded for instances: Requested 1, but already used 10 of 10 instances';
    const steps = changeSteps(later(ctx, changeRequest('RollingUpdate', ['VDU1'])), packageChange('RollingUpdate', ['VDU1']));
    const failed = await drive(steps.poll, await steps.start(state), {
      // The update of the second VNFC is the next stack update.
      coordinate: async () => sim.faults.inject({ kind: 'stack-update-fail', reason }),
    });
    assert.equal(failed.end.status, 'FAILED');
    assert.deepEqual(
      failed.coordinations.map((coordination) => coordination.vnfcs[0]?.resourceId),
      [vdu1[0]],
      'only the first VNFC was coordinated',
    );
    const group = await heat(ctx).getStack(groupStack);
    assert.equal(group?.stack_status, 'UPDATE_FAILED');
    assert.equal(failed.end.status === 'FAILED' && failed.end.reason, group?.stack_status_reason, "Heat's reason, verbatim");
    assert.match(String(group?.stack_status_reason), /Quota exceeded for instances/);
    const newImage = await imageNamed(v2ImageName(ctx));
    assert.equal(await imageOf(String(vdu1[0])), newImage, 'the first VNFC had moved');

    const rolledBack = await drive(steps.rollbackPoll, await steps.rollbackStart(failed.end.state));
    assert.equal(rolledBack.end.status, 'DONE', rolledBack.end.status === 'FAILED' ? rolledBack.end.reason : undefined);
    assert.deepEqual(
      rolledBack.coordinations.map((coordination) => [coordination.target, coordination.vnfcs[0]?.resourceId]),
      [
        ['old', vdu1[0]],
        ['old', vdu1[1]],
      ],
      'the old VNF is coordinated VNFC by VNFC',
    );
    assert.deepEqual(rolledBack.end.state, state, 'the driver state is the one before the change');
    assert.deepEqual(cloud(baseline).servers, servers, 'the same servers');
    for (const id of servers) assert.equal(await imageOf(id), oldImage);
    assert.deepEqual(cloud(baseline).images, images, 'the new image is deleted, the old one kept');
    assert.deepEqual(await openStackDriver.collect(ctx, rolledBack.end.state), before, 'instantiatedVnfInfo as before');
    const stackAfter = await heat(ctx).getStack(topStack(state));
    assert.equal(stackAfter?.parameters?.nfv, stackBefore?.parameters?.nfv);
    assert.deepEqual(await heat(ctx).getTemplate(groupStack), groupTemplate, "the scaling group's members are defined as before");

    await terminate(ctx, rolledBack.end.state);
  });

  it('a retry (a poll of the failed state) goes on from the VNFC that failed', async () => {
    const ctx = context('instantiation_level_2');
    const state = await instantiate(ctx);
    const vdu1 = oldestFirst(byVdu(await openStackDriver.collect(ctx, state), 'VDU1'));
    const steps = changeSteps(later(ctx, changeRequest('RollingUpdate', ['VDU1'])), packageChange('RollingUpdate', ['VDU1']));
    const failed = await drive(steps.poll, await steps.start(state), {
      coordinate: async () => sim.faults.inject({ kind: 'stack-update-fail', reason: 'Resource UPDATE failed: No valid host was found.' }),
    });
    assert.equal(failed.end.status, 'FAILED');

    // The engine's retry polls the state the failure left.
    const retried = await drive(steps.poll, failed.end.state);
    assert.equal(retried.end.status, 'DONE', retried.end.status === 'FAILED' ? retried.end.reason : undefined);
    assert.deepEqual(
      retried.coordinations.map((coordination) => coordination.vnfcs[0]?.resourceId),
      [vdu1[1]],
      'only the VNFC that had failed is coordinated',
    );
    const newImage = await imageNamed(v2ImageName(ctx));
    for (const id of vdu1) assert.equal(await imageOf(id), newImage);
    await terminate(later(ctx, {}, v2), retried.end.state);
  });
});

describe('Blue-green on the simulator', () => {
  it("builds the v2 VNF beside the v1 one, switches the load balancer at the new VNF's coordination, and the backend never goes dark", async () => {
    const baseline = cloud();
    const ctx = context();
    const state = await instantiate(ctx);
    const before = await openStackDriver.collect(ctx, state);
    const oldServers = cloud(baseline).servers;
    const oldImage = await v1Image(ctx);
    assert.equal(before.extCpInfo.length, 1);
    const oldAddress = await portAddress(String(before.extCpInfo[0]?.extLinkPortId));
    const pool = `web-${instances}`;
    assert.equal((await setPool(pool, [{ address: oldAddress, serverId: String(byVdu(before, 'VDU1')[0]?.id) }])).status, 200);
    assert.equal((await backend(pool)).status, 200);

    const request = changeRequest('Blue-Green', ['VDU1'], lbParam(pool));
    const steps = changeSteps(later(ctx, request), packageChange('BlueGreen'));
    const probes: number[] = [];
    const probe = async () => {
      const answer = await backend(pool);
      probes.push(answer.status);
      assert.equal(answer.status, 200, `the backend answers at every poll (${JSON.stringify(answer.body)})`);
    };
    const scripts: ScriptResult[] = [];
    const started = await steps.start(state);
    await probe();
    const done = await drive(steps.poll, started, {
      probe,
      coordinate: async (coordination) => {
        scripts.push(
          await runCoordinateScript(
            scriptInput(request, coordination, false, { id: ctx.vnfInstanceId, instantiatedVnfInfo: { vnfcResourceInfo: before.vnfcResourceInfo } }),
          ),
        );
      },
    });
    assert.equal(done.end.status, 'DONE', done.end.status === 'FAILED' ? done.end.reason : undefined);
    assert.ok(probes.length >= 6, 'probed all along');

    // COORDINATE for the new VNFCs, then the old.
    const [fresh, old] = done.coordinations;
    assert.deepEqual(
      done.coordinations.map((coordination) => coordination.target),
      ['new', 'old'],
    );
    assert.deepEqual(old?.vnfcs.map((vnfc) => vnfc.resourceId).sort(), oldServers);
    const newServers = fresh?.vnfcs.map((vnfc) => vnfc.resourceId).sort() ?? [];
    assert.equal(newServers.length, 2);
    assert.ok(
      newServers.every((id) => !oldServers.includes(id)),
      'new servers',
    );
    const newAddress = String(fresh?.vnfcs.find((vnfc) => vnfc.vduId === 'VDU1')?.addresses?.VDU1_CP1?.[0]);
    assert.deepEqual((fresh!.details!.externalLb as Info).members, [
      { vduId: 'VDU1', serverId: fresh?.vnfcs[0]?.resourceId, cpdId: 'VDU1_CP1', address: newAddress },
    ]);
    assert.deepEqual(
      ((fresh!.details!.externalLb as Info).replaces as Info[]).map((member) => member.address),
      [oldAddress],
    );
    assert.deepEqual(
      scripts.map((result) => result.ok && (result.output as Info).action),
      ['switched', 'none'],
      'the script switched for the new VNF only',
    );
    assert.deepEqual(await poolAddresses(pool), [newAddress]);
    assert.equal((await backend(pool)).body.serverId, fresh?.vnfcs[0]?.resourceId);

    // The new stack is the VNF's stack; the old stack, servers and images are gone.
    const result = done.end.state;
    assert.equal(result.stackName, `vnf-${ctx.vnfInstanceId}-${V2_PACKAGE_ID.slice(0, 8)}`);
    assert.notEqual(result.stackId, state.stackId);
    assert.equal(result.change, undefined);
    assert.equal((await heat(ctx).getStack(topStack(state)))?.stack_status, 'DELETE_COMPLETE');
    assert.equal((await heat(ctx).getStack(topStack(result)))?.stack_status, 'CREATE_COMPLETE');
    assert.deepEqual(cloud(baseline).servers, newServers);
    const newImage = await imageNamed(v2ImageName(ctx));
    assert.ok(!cloud(baseline).images.includes(oldImage));
    assert.deepEqual(
      (result.images as Array<{ id: string; created: boolean }>).map((image) => [image.id, image.created]),
      [
        [newImage, true],
        [newImage, true],
      ],
    );
    for (const id of newServers) assert.equal(await imageOf(id), newImage);
    const collected = await openStackDriver.collect(later(ctx, {}, v2), result);
    assert.deepEqual(collected.vnfcResourceInfo.map((vnfc) => String(vnfc.id)).sort(), newServers);
    assert.ok(
      String((byVdu(collected, 'VDU1')[0]!.metadata as Info).parent_stack_id).startsWith(`${String(result.stackName)}-VDU1-`),
      "VDU1 is a member of the new stack's scaling group",
    );
    assert.equal((byVdu(collected, 'VDU2')[0]!.metadata as Info).stack_id, topStack(result));

    await terminate(later(ctx, {}, v2), result);
    assert.ok(!cloud(baseline).servers.some((id) => newServers.includes(id)));
    assert.ok(!cloud(baseline).images.includes(newImage));
  });

  it('without the switch, the probe sees the outage once the old stack is gone', async () => {
    const ctx = context();
    const state = await instantiate(ctx);
    const before = await openStackDriver.collect(ctx, state);
    const pool = `web-${instances}`;
    await setPool(pool, [{ address: await portAddress(String(before.extCpInfo[0]?.extLinkPortId)) }]);
    const steps = changeSteps(later(ctx, changeRequest('Blue-Green', ['VDU1'])), packageChange('BlueGreen'));
    const statuses: number[] = [];
    const done = await drive(steps.poll, await steps.start(state), {
      probe: async () => {
        statuses.push((await backend(pool)).status);
      },
    });
    assert.equal(done.end.status, 'DONE');
    assert.equal(statuses[0], 200);
    assert.equal(statuses.at(-1), 503, 'no live member: the pool still names the deleted server');
    await terminate(later(ctx, {}, v2), done.end.state);
  });

  it("fails with Heat's reason when the new stack cannot be created, and rollback deletes it and its images and keeps the old VNF", async () => {
    const baseline = cloud();
    const ctx = context();
    const state = await instantiate(ctx);
    const before = await openStackDriver.collect(ctx, state);
    const servers = cloud(baseline).servers;
    const images = cloud(baseline).images;
    const reason = 'Resource CREATE failed: No valid host was found. There are not enough hosts available.';
    sim.faults.inject({ kind: 'stack-create-fail', reason });
    const steps = changeSteps(later(ctx, changeRequest('Blue-Green', ['VDU1'])), packageChange('BlueGreen'));
    const failed = await drive(steps.poll, await steps.start(state));
    assert.equal(failed.end.status, 'FAILED');
    assert.deepEqual(failed.coordinations, [], 'nothing to coordinate');
    const newStack = (failed.end.state.change as Info).newStackName;
    const created = await heat(ctx).getStack(`${String(newStack)}/${String((failed.end.state.change as Info).newStackId)}`);
    assert.equal(created?.stack_status, 'CREATE_FAILED');
    assert.equal(failed.end.status === 'FAILED' && failed.end.reason, created?.stack_status_reason, "Heat's reason, verbatim");
    assert.equal(created?.stack_status_reason, reason);

    const rolledBack = await drive(steps.rollbackPoll, await steps.rollbackStart(failed.end.state));
    assert.equal(rolledBack.end.status, 'DONE', rolledBack.end.status === 'FAILED' ? rolledBack.end.reason : undefined);
    assert.deepEqual(rolledBack.coordinations, [], 'the load balancer was never switched');
    assert.deepEqual(rolledBack.end.state, state);
    assert.equal(await heat(ctx).getStack(String(newStack)), undefined, 'the new stack is gone');
    assert.deepEqual(cloud(baseline).servers, servers);
    assert.deepEqual(cloud(baseline).images, images);
    assert.deepEqual(await openStackDriver.collect(ctx, rolledBack.end.state), before);
    await terminate(ctx, rolledBack.end.state);
  });

  it('rolls back a start whose state was lost, finding the new stack and images by their names', async () => {
    const baseline = cloud();
    const ctx = context();
    const state = await instantiate(ctx);
    const servers = cloud(baseline).servers;
    const images = cloud(baseline).images;
    const steps = changeSteps(later(ctx, changeRequest('BlueGreen', ['VDU1'])), packageChange('BlueGreen'));
    const started = await steps.start(state);
    await sim.settled();
    assert.equal((await heat(ctx).getStack(String((started.change as Info).newStackName)))?.stack_status, 'CREATE_COMPLETE');
    assert.equal(cloud(baseline).images.length, 2);

    // The engine only has the state from before the change.
    const rolledBack = await drive(steps.rollbackPoll, await steps.rollbackStart(state));
    assert.equal(rolledBack.end.status, 'DONE', rolledBack.end.status === 'FAILED' ? rolledBack.end.reason : undefined);
    assert.deepEqual(rolledBack.end.state, state);
    assert.equal(await heat(ctx).getStack(String((started.change as Info).newStackName)), undefined);
    assert.deepEqual(cloud(baseline).servers, servers);
    assert.deepEqual(cloud(baseline).images, images);
    const polled = await steps.poll(state);
    assert.equal(polled.status, 'FAILED', 'a poll without a recorded change does nothing');
    assert.match(polled.status === 'FAILED' ? polled.reason : '', /records no BlueGreen change to VNF package/);
    await terminate(ctx, rolledBack.end.state);
  });

  /**
   * A blue-green whose coordination fails after the new VNF's script switched the pool, rolled back
   * as the engine does: from the state it saved before the failed coordination.
   */
  async function rollbackAfterSwitch(failing: 'new' | 'old'): Promise<void> {
    const baseline = cloud();
    const ctx = context();
    const state = await instantiate(ctx);
    const before = await openStackDriver.collect(ctx, state);
    const servers = cloud(baseline).servers;
    const oldAddress = await portAddress(String(before.extCpInfo[0]?.extLinkPortId));
    const pool = `web-${instances}`;
    await setPool(pool, [{ address: oldAddress }]);
    const request = changeRequest('BlueGreen', ['VDU1'], lbParam(pool));
    const steps = changeSteps(later(ctx, request), packageChange('BlueGreen'));
    const probe = async () => assert.equal((await backend(pool)).status, 200);
    const instance = { id: ctx.vnfInstanceId, instantiatedVnfInfo: { vnfcResourceInfo: before.vnfcResourceInfo } };

    let saved = await steps.start(state);
    let newAddress = '';
    for (;;) {
      const progress = await steps.poll(saved);
      await probe();
      if (progress.status === 'COORDINATE') {
        if (progress.coordinate.target === 'new') {
          const result = await runCoordinateScript(scriptInput(request, progress.coordinate, false, instance));
          assert.equal(result.ok, true);
          newAddress = String(progress.coordinate.vnfcs[0]?.addresses?.VDU1_CP1?.[0]);
        }
        // The failing script: the engine keeps the state it had (and the pool is switched).
        if (progress.coordinate.target === failing) break;
        saved = progress.state;
        continue;
      }
      assert.equal(progress.status, 'IN_PROGRESS');
      saved = progress.state;
      await sim.settled();
    }
    assert.deepEqual(await poolAddresses(pool), [newAddress]);

    const scripts: ScriptResult[] = [];
    const rolledBack = await drive(steps.rollbackPoll, await steps.rollbackStart(saved), {
      probe,
      coordinate: async (coordination) => {
        scripts.push(await runCoordinateScript(scriptInput(request, coordination, true, instance)));
      },
    });
    assert.equal(rolledBack.end.status, 'DONE', rolledBack.end.status === 'FAILED' ? rolledBack.end.reason : undefined);
    assert.deepEqual(
      rolledBack.coordinations.map((coordination) => [coordination.target, coordination.vnfcs.map((vnfc) => vnfc.resourceId).sort()]),
      [['old', servers]],
    );
    assert.deepEqual(
      scripts.map((result) => result.ok && (result.output as Info).action),
      ['switched'],
    );
    assert.deepEqual(await poolAddresses(pool), [oldAddress], 'the pool is back on the old VNFC');
    assert.deepEqual(rolledBack.end.state, state);
    assert.deepEqual(cloud(baseline).servers, servers);
    await terminate(ctx, rolledBack.end.state);
  }

  it("rolled back after the old VNF's coordination failed, it has the old VNF's script switch the load balancer back before the new stack goes", async () => {
    await rollbackAfterSwitch('old');
  });

  it("rolled back after the new VNF's coordination failed (its script may have switched), it does the same", async () => {
    await rollbackAfterSwitch('new');
  });

  it('cannot roll back once the old stack is being deleted, and says so', async () => {
    const ctx = context();
    const state = await instantiate(ctx);
    const steps = changeSteps(later(ctx, changeRequest('BlueGreen', ['VDU1'])), packageChange('BlueGreen'));
    const failed = await drive(steps.poll, await steps.start(state), {
      coordinate: async (coordination) => {
        if (coordination.target === 'old') sim.faults.inject({ kind: 'stack-delete-fail', reason: 'Resource DELETE failed: Conflict: port is in use' });
      },
    });
    assert.equal(failed.end.status, 'FAILED');
    assert.equal(failed.end.status === 'FAILED' && failed.end.reason, 'Resource DELETE failed: Conflict: port is in use');
    const change = failed.end.state.change as Info;

    const rolledBack = await drive(steps.rollbackPoll, await steps.rollbackStart(failed.end.state));
    assert.equal(rolledBack.end.status, 'FAILED');
    assert.match(
      rolledBack.end.status === 'FAILED' ? rolledBack.end.reason : '',
      new RegExp(
        `cannot be rolled back: the old stack ${String(state.stackName)}/${String(state.stackId)} was deleted after the switch to the new VNF, and rollback cannot bring it back; the VNF now runs on stack ${String(change.newStackName)}/${String(change.newStackId)}`,
      ),
    );
    assert.equal(
      (await heat(ctx).getStack(`${String(change.newStackName)}/${String(change.newStackId)}`))?.stack_status,
      'CREATE_COMPLETE',
      'the new VNF is left running',
    );

    // A retry of the change (here by its start step) finishes it.
    const retried = await drive(steps.poll, await steps.start(rolledBack.end.state));
    assert.equal(retried.end.status, 'DONE', retried.end.status === 'FAILED' ? retried.end.reason : undefined);
    assert.equal(retried.end.state.stackName, change.newStackName);
    await terminate(later(ctx, {}, v2), retried.end.state);
  });
});

describe("The simulator's load balancer and the sample coordinate script", () => {
  it('keeps pools of members and answers a live backend, or 503 when none is live', async () => {
    const ctx = context();
    const state = await instantiate(ctx);
    const collected = await openStackDriver.collect(ctx, state);
    const serverId = String(byVdu(collected, 'VDU1')[0]?.id);
    const address = await portAddress(String(collected.extCpInfo[0]?.extLinkPortId));
    const pool = `lb-${instances}`;

    assert.equal((await fetch(`${sim.url}/_lb/pools/${pool}`)).status, 404);
    const refused = await setPool(pool, [{ address }], 'wrong');
    assert.equal(refused.status, 401);
    assert.match(((await refused.json()) as { error: { message: string } }).error.message, /username and password of a Keystone user/);
    const invalid = await setPool(pool, [{ address: 'not-an-address' }]);
    assert.equal(invalid.status, 400);
    assert.match(((await invalid.json()) as { error: { message: string } }).error.message, /members\.0\.address: must be an IPv4 or IPv6 address/);

    assert.equal((await setPool(pool, [{ address: '172.24.4.250' }, { address, serverId }])).status, 200);
    const listed = (await (await fetch(`${sim.url}/_lb/pools/${pool}`)).json()) as {
      members: Array<{ address: string; serverId: string | null; live: boolean }>;
    };
    assert.deepEqual(
      listed.members.map((member) => [member.address, member.serverId, member.live]),
      [
        ['172.24.4.250', null, false],
        [address, serverId, true],
      ],
    );
    for (let i = 0; i < 3; i += 1) assert.deepEqual((await backend(pool)).body, { pool, address, serverId }, 'only the live member answers');
    assert.equal((await setPool(pool, [{ address, serverId: 'b2c7b1de-0000-4000-8000-000000000000' }])).status, 200);
    assert.equal((await backend(pool)).status, 503, 'the address, but not on that server');

    await setPool(pool, [{ address }]);
    assert.equal((await backend(pool)).status, 200, 'found by its address alone');
    await terminate(ctx, state);
    const gone = await backend(pool);
    assert.equal(gone.status, 503);
    assert.match(String((gone.body.error as Info).message), /no live member \(1 configured\)/);
  });

  it("the script switches the pool for the new VNF only, and fails with the load balancer's own words", async () => {
    const pool = `script-${instances}`;
    const vnfcs: Coordination['vnfcs'] = [
      { vduId: 'VDU1', resourceId: 'srv-new-1', addresses: { VDU1_CP1: ['172.24.4.101'], VDU1_CP2: ['192.168.10.7'] } },
      { vduId: 'VDU2', resourceId: 'srv-new-2', addresses: { VDU2_CP2: ['192.168.10.8'] } },
    ];
    const instance = {
      id: 'inst-1',
      instantiatedVnfInfo: { vnfcResourceInfo: [{ id: 'srv-old-1', vduId: 'VDU1', computeResource: { resourceId: 'srv-old-1' } }] },
    };
    const run = (request: Record<string, unknown>, target: 'new' | 'old', isRollback = false, given: Coordination['vnfcs'] = vnfcs) =>
      runCoordinateScript(scriptInput(request, { target, vnfcs: given }, isRollback, instance));

    const switched = await run(changeRequest('Blue-Green', ['VDU1', 'VDU2'], lbParam(pool)), 'new');
    assert.equal(switched.ok, true, JSON.stringify(switched));
    assert.deepEqual(switched.ok && switched.output, {
      ok: true,
      action: 'switched',
      target: 'new',
      isRollback: false,
      pool,
      members: [{ address: '172.24.4.101', serverId: 'srv-new-1' }],
    });
    assert.doesNotMatch(JSON.stringify(switched), /devstack|ubuntu/, 'no credentials in what it prints');
    assert.deepEqual(await poolAddresses(pool), ['172.24.4.101']);

    const untouched = async (result: ScriptResult, reason: RegExp) => {
      assert.equal(result.ok, true, JSON.stringify(result));
      assert.equal(result.ok && (result.output as Info).action, 'none');
      assert.match(String(result.ok && (result.output as Info).reason), reason);
      assert.deepEqual(await poolAddresses(pool), ['172.24.4.101']);
    };
    const oldVnfcs: Coordination['vnfcs'] = [{ vduId: 'VDU1', resourceId: 'srv-old-1', addresses: { VDU1_CP1: ['172.24.4.50'] } }];
    await untouched(await run(changeRequest('Blue-Green', ['VDU1'], lbParam(pool)), 'old', false, oldVnfcs), /nothing to do for the old VNF/);
    await untouched(await run(changeRequest('RollingUpdate', ['VDU1'], lbParam(pool)), 'new'), /not a blue-green change/);
    // Without `target`, the VNFCs the instance already records are the old VNF's.
    const { target: _target, ...inferred } = scriptInput(
      changeRequest('Blue-Green', ['VDU1'], lbParam(pool)),
      { target: 'old', vnfcs: oldVnfcs },
      false,
      instance,
    );
    await untouched(await runCoordinateScript(inferred), /nothing to do for the old VNF/);
    const back = await run(changeRequest('Blue-Green', ['VDU1'], lbParam(pool)), 'old', true, oldVnfcs);
    assert.equal(back.ok && (back.output as Info).action, 'switched', 'a rollback points the pool back at the old VNF');
    assert.deepEqual(await poolAddresses(pool), ['172.24.4.50']);

    const refused = await run(changeRequest('Blue-Green', ['VDU1'], lbParam(pool, 'wrong')), 'new');
    assert.equal(refused.ok, false);
    assert.match(
      refused.ok ? '' : refused.error.detail,
      new RegExp(
        `coordinate_lb: the load balancer at ${sim.url.replace(/[.]/g, '\\.')}/_lb/pools/${pool}/members refused to switch pool ${pool}: HTTP 401: The load balancer needs the username and password`,
      ),
    );
    assert.doesNotMatch(refused.ok ? '' : refused.error.detail, /wrong/);
    assert.deepEqual(await poolAddresses(pool), ['172.24.4.50'], 'the pool is unchanged');

    const closed = await startOpenStackSimulator({ timeScale: 0.01 });
    const unreachable = `${closed.url}/_lb`;
    await closed.close();
    const down = await run(changeRequest('Blue-Green', ['VDU1'], { ...lbParam(pool), ip_address: unreachable }), 'new');
    assert.match(down.ok ? '' : down.error.detail, /coordinate_lb: cannot reach the load balancer at .*: ECONNREFUSED/);
    const missing = await run(changeRequest('Blue-Green', ['VDU1']), 'new');
    assert.match(missing.ok ? '' : missing.error.detail, /additionalParams\.external_lb_param is not set/);
    const noCp = await run(changeRequest('Blue-Green', ['VDU2'], lbParam(pool)), 'new', false, [vnfcs[0]!]);
    assert.match(
      noCp.ok ? '' : noCp.error.detail,
      /none of the 1 VNFCs has an address on the connection point named by vdu_params\[\]\.new_vnfc_param\.cp_name/,
    );
  });
});

/** The first fixed IP of a Neutron port. */
async function portAddress(portId: string): Promise<string> {
  const { port } = await openstack<{ port: { fixed_ips: Array<{ ip_address: string }> } }>(`/networking/v2.0/ports/${portId}`);
  return String(port.fixed_ips[0]?.ip_address);
}

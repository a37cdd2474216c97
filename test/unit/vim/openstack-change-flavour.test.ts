// The OpenStack driver's CHANGE_FLAVOUR against the OpenStack simulator, on the sample package
// openstack-vnf-v1 (flavours simple and large): the stack takes the large flavour's BaseHOT and
// nfv, a second start of the same operation (a retry) works from what the VNF was before, and a
// rollback asked for after the change completed still returns the stack to the simple flavour,
// keeping the servers the VNF had. Driven to completion by letting the simulator settle.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CsarArchive } from '#lib/packages/archive.ts';
import type { ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import type { DriverState, FlavourChange, OperationContext, PackageFiles, Progress } from '#lib/vim/driver.ts';
import { openStackDriver } from '#lib/vim/openstack/index.ts';
import { HeatClient } from '#lib/vim/openstack/heat.ts';
import { OpenStackSession } from '#lib/vim/openstack/keystone.ts';
import { startOpenStackSimulator, type OpenStackSimulator } from '#local/openstack/simulator.ts';
import { openSamplePackage } from '../../support/sample-package.ts';
import { pollToEnd } from '../../support/driver-steps.ts';

let sim: OpenStackSimulator;
let archive: CsarArchive;
let vnfd: ParsedVnfd;
let files: PackageFiles;

before(async () => {
  sim = await startOpenStackSimulator({ timeScale: 0.01 });
  ({ archive, vnfd, files } = await openSamplePackage('openstack-vnf-v1'));
});

after(async () => {
  await sim.close();
  await archive.close();
});

const finish = (poll: (state: DriverState) => Promise<Progress>, state: DriverState): Promise<Progress> => pollToEnd(poll, state, () => sim.settled(), 20);

function context(flavourId: string, opOccId: string): OperationContext {
  const network = sim.faults.state().preloaded.networks.find((candidate) => candidate.name === 'public')?.id ?? 'public';
  const request = { flavourId, extVirtualLinks: [{ id: 'ext', resourceId: network, extCps: [{ cpdId: 'VDU1_CP1' }] }] };
  return {
    vnfInstanceId: '00000000-0000-4000-8000-00000000f1a0',
    opOccId,
    vnfd,
    flavourId,
    request,
    instantiateRequest: request,
    files,
    vim: { vimId: 'vim-sim', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3', interfaceInfo: { endpoint: sim.authUrl }, accessInfo: { ...sim.credentials } },
    grant: {},
  };
}

async function change(ctx: OperationContext, state: DriverState, flavourChange: FlavourChange): Promise<Progress> {
  const started = await openStackDriver.updateStart(ctx, state, flavourChange);
  return finish((current) => openStackDriver.updatePoll(ctx, current, flavourChange), started);
}

describe('OpenStack driver: CHANGE_FLAVOUR', () => {
  it('updates the stack to the large flavour, starts a retry from the VNF before it, and rolls back after completion keeping the servers', async () => {
    const simple = context('simple', 'op-instantiate');
    const created = await finish((state) => openStackDriver.instantiatePoll(simple, state), await openStackDriver.instantiateStart(simple));
    assert.equal(created.status, 'DONE');
    const before = await openStackDriver.collect(simple, created.state);
    const heat = new HeatClient(new OpenStackSession(simple.vim));
    const ref = `vnf-${simple.vnfInstanceId}`;
    const nfvOf = async () =>
      JSON.parse(String((await heat.getStack(ref))?.parameters?.nfv ?? '{}')) as {
        VDU: Record<string, { computeFlavourId: string; desired_capacity: number }>;
      };

    const large = context('large', 'op-change');
    const first = await change(large, created.state, { kind: 'CHANGE_FLAVOUR' });
    assert.equal(first.status, 'DONE', first.status === 'FAILED' ? first.reason : undefined);
    // The same operation started again (a retry) works from what the VNF was before it, not from the large flavour.
    const again = await change(large, first.state, { kind: 'CHANGE_FLAVOUR' });
    assert.equal(again.status, 'DONE');
    assert.deepEqual((again.state.flavourChange as { previous: unknown }).previous, (first.state.flavourChange as { previous: unknown }).previous);
    assert.match(String((await heat.getTemplate(ref)).description), /large flavour/);
    const largeNfv = (await nfvOf()).VDU.VDU1;
    assert.equal(largeNfv?.computeFlavourId, 'm1.small');
    assert.equal(largeNfv?.desired_capacity, 2);
    const changed = await openStackDriver.collect(large, again.state);
    assert.equal(changed.vnfcResourceInfo.filter((vnfc) => vnfc.vduId === 'VDU1').length, 2);

    // A rollback asked for once the change is done: back to one small VDU1 server, the one it had.
    const keep = before.vnfcResourceInfo.map((vnfc) => String((vnfc.computeResource as { resourceId: string }).resourceId));
    const back = await change({ ...simple, opOccId: 'op-change' }, again.state, {
      kind: 'CHANGE_FLAVOUR',
      rollback: true,
      capacities: { VDU1: 1, VDU2: 1 },
      keep,
    });
    assert.equal(back.status, 'DONE', back.status === 'FAILED' ? back.reason : undefined);
    assert.equal(back.state.flavourChange, undefined);
    assert.match(String((await heat.getTemplate(ref)).description), /simple flavour/);
    assert.equal((await nfvOf()).VDU.VDU1?.computeFlavourId, 'm1.tiny');
    const restored = await openStackDriver.collect(simple, back.state);
    assert.deepEqual(restored.vnfcResourceInfo.map((vnfc) => (vnfc.computeResource as { resourceId: string }).resourceId).sort(), [...keep].sort());

    const gone = await finish((state) => openStackDriver.terminatePoll(simple, state), await openStackDriver.terminateStart(simple, back.state));
    assert.equal(gone.status, 'DONE');
    assert.equal(sim.faults.state().stacks.count, 0);
  });
});

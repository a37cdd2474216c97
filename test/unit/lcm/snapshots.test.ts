// The pure parts of VNF snapshots: which VNFCs a snapshot takes and how it records them, what a
// revert asks of the driver, and how the OpenStack driver brings counts back and picks the image
// each server is rebuilt from.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { countsOf, publicInstance, revertTarget, snapshotTarget, vnfcResourceInfoIdOf, vnfSnapshotOf } from '#lib/lcm/snapshot-content.ts';
import { countChange, rebuildPlan } from '#lib/vim/openstack/snapshots.ts';
import type { VnfInstanceRecord } from '#lib/sol/model.ts';
import type { SnapshotState } from '#lib/vim/driver.ts';

const info = {
  flavourId: 'simple',
  vnfcResourceInfo: [
    { id: 'r1', vduId: 'VDU1', computeResource: { resourceId: 's1' } },
    { id: 'r2', vduId: 'VDU2', computeResource: { resourceId: 's2' }, storageResourceIds: ['st1', 'gone'] },
  ],
  virtualStorageResourceInfo: [{ id: 'st1', virtualStorageDescId: 'VirtualStorage', storageResource: { resourceId: 'vol1' } }],
  vnfcInfo: [
    { id: 'VDU1-r1', vduId: 'VDU1', vnfcResourceInfoId: 'r1' },
    { id: 'VDU2-r2', vduId: 'VDU2', vnfcResourceInfoId: 'r2' },
  ],
};

const instance = {
  id: 'vnf-1',
  tenantId: 't',
  createdAt: 'x',
  createdSeq: 'x',
  vnfdId: 'vnfd',
  vnfPkgId: 'pkg',
  vnfProvider: 'p',
  vnfProductName: 'n',
  vnfSoftwareVersion: '1',
  vnfdVersion: '1',
  instantiationState: 'INSTANTIATED',
  instantiatedVnfInfo: info,
  vimConnectionInfo: { vim1: { vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3', accessInfo: { password: 'secret' } } },
  vimAccessSecrets: { vim1: 'secret-id' },
  lockOpOccId: 'op',
  revision: 3,
} as unknown as VnfInstanceRecord;

describe('snapshot content', () => {
  it('names VNFCs by vnfcInfo id or vnfcResourceInfo id', () => {
    assert.equal(vnfcResourceInfoIdOf(info, 'VDU1-r1'), 'r1');
    assert.equal(vnfcResourceInfoIdOf(info, 'r2'), 'r2');
    assert.equal(vnfcResourceInfoIdOf(info, 'nope'), undefined);
  });

  it('takes every VNFC with the volumes its storage ids name, or the one asked for', () => {
    const all = snapshotTarget(info, 'snap');
    assert.deepEqual(all, {
      name: 'snap',
      vnfcs: [
        { vnfcResourceInfoId: 'r1', vduId: 'VDU1', resourceId: 's1', storages: [] },
        { vnfcResourceInfoId: 'r2', vduId: 'VDU2', resourceId: 's2', storages: [{ storageResourceId: 'st1', resourceId: 'vol1' }] },
      ],
    });
    assert.deepEqual(
      snapshotTarget(info, 'snap', 'VDU2-r2').vnfcs.map((vnfc) => vnfc.vnfcResourceInfoId),
      ['r2'],
    );
  });

  it('keeps no credentials nor internal state of the instance', () => {
    const copy = publicInstance(instance);
    const text = JSON.stringify(copy);
    assert.ok(!text.includes('secret'));
    assert.equal(copy.lockOpOccId, undefined);
    assert.equal(copy.revision, undefined);
    assert.deepEqual(copy.instantiatedVnfInfo, info);
  });

  it('records a VnfcSnapshotInfo per VNFC, keeping ids and start times across updates', () => {
    let ids = 0;
    const newId = () => `id-${++ids}`;
    const state: SnapshotState = {
      vnfcSnapshots: [
        { vnfcResourceInfoId: 'r1', vduId: 'VDU1', resourceId: 's1', computeSnapshotResource: { resourceId: 'img' }, storageSnapshotResources: [] },
        {
          vnfcResourceInfoId: 'r2',
          vduId: 'VDU2',
          resourceId: 's2',
          storageSnapshotResources: [{ storageResourceId: 'st1', storageSnapshotResource: { resourceId: 'snap1' } }],
        },
      ],
    };
    const base = { id: 'vs', vnfInstanceId: 'vnf-1', creationStartedAt: 't0', vnfdId: 'vnfd', vnfInstance: instance };
    const started = vnfSnapshotOf(base, state, newId);
    assert.deepEqual(
      started.vnfcSnapshots.map((vnfc) => [vnfc.id, vnfc.vnfcInstanceId, vnfc.creationStartedAt, vnfc.creationFinishedAt]),
      [
        ['id-1', 'VDU1-r1', 't0', undefined],
        ['id-2', 'VDU2-r2', 't0', undefined],
      ],
    );
    assert.equal(started.vnfcSnapshots[0]?.storageSnapshotResources, undefined);
    const finished = vnfSnapshotOf(
      { ...base, creationStartedAt: 't1' },
      { vnfcSnapshots: state.vnfcSnapshots.map((vnfc) => ({ ...vnfc, finishedAt: 't2' })) },
      newId,
      started.vnfcSnapshots,
    );
    assert.deepEqual(
      finished.vnfcSnapshots.map((vnfc) => [vnfc.id, vnfc.creationStartedAt, vnfc.creationFinishedAt]),
      [
        ['id-1', 't0', 't2'],
        ['id-2', 't0', 't2'],
      ],
    );
    assert.deepEqual(finished.vnfcSnapshots[1]?.storageSnapshotResources, [{ storageResourceId: 'st1', storageSnapshotResource: { resourceId: 'snap1' } }]);
  });

  it('reverts the whole VNF to the snapshot counts, or one VNFC to one VNFC snapshot', () => {
    const snapshot = vnfSnapshotOf(
      { id: 'vs', vnfInstanceId: 'vnf-1', creationStartedAt: 't0', vnfdId: 'vnfd', vnfInstance: instance },
      { vnfcSnapshots: [{ vnfcResourceInfoId: 'r1', vduId: 'VDU1', resourceId: 's1', storageSnapshotResources: [] }] },
      () => 'vnfc-snap',
    );
    const now = { vnfcResourceInfo: [...info.vnfcResourceInfo, { id: 'r3', vduId: 'VDU1', computeResource: { resourceId: 's3' } }], vnfcInfo: info.vnfcInfo };
    const whole = revertTarget(snapshot, { vnfcSnapshots: [] }, now, {});
    assert.deepEqual(whole.counts, { VDU1: 1, VDU2: 1 });
    assert.deepEqual(countsOf(now), { VDU1: 2, VDU2: 1 });
    assert.equal(whole.current.length, 3);
    const one = revertTarget(snapshot, { vnfcSnapshots: [] }, now, { vnfcInstanceId: 'r3', vnfcSnapshotInfoId: 'vnfc-snap' });
    assert.deepEqual(one.only, { resourceId: 's3', vnfcResourceInfoId: 'r1' });
    assert.equal(one.counts, undefined);
  });
});

describe('OpenStack revert', () => {
  const snapshot = [
    { vduId: 'VDU1', resourceId: 's1', imageId: 'i1', vnfcResourceInfoId: 'r1' },
    { vduId: 'VDU1', resourceId: 's2', imageId: 'i2', vnfcResourceInfoId: 'r2' },
    { vduId: 'VDU2', resourceId: 'v1', vnfcResourceInfoId: 'r3' },
  ];

  it('removes the VNFCs made since the snapshot first, newest first, and adds where the snapshot had more', () => {
    const current = [
      { vduId: 'VDU1', resourceId: 's1' },
      { vduId: 'VDU1', resourceId: 'n1' },
      { vduId: 'VDU1', resourceId: 's2' },
      { vduId: 'VDU1', resourceId: 'n2' },
      { vduId: 'VDU2', resourceId: 'v1' },
    ];
    const change = countChange({ VDU1: 3, VDU2: 1 }, current, new Set(['s1', 's2', 'v1']));
    assert.deepEqual(change, {
      kind: 'SCALE',
      scaleType: 'SCALE_IN',
      aspectId: '',
      steps: 0,
      targets: { VDU1: 3 },
      remove: [{ vduId: 'VDU1', resourceId: 'n2' }],
    });
    assert.equal(countChange({ VDU1: 4, VDU2: 1 }, current, new Set()), undefined);
    assert.deepEqual(countChange({ VDU1: 5, VDU2: 1 }, current, new Set()), {
      kind: 'SCALE',
      scaleType: 'SCALE_OUT',
      aspectId: '',
      steps: 0,
      targets: { VDU1: 5 },
      remove: [],
    });
  });

  it('rebuilds each server from its own image, new servers from the images of snapshot VNFCs that are gone', () => {
    const plan = rebuildPlan(snapshot, [
      { vduId: 'VDU1', resourceId: 's2' },
      { vduId: 'VDU1', resourceId: 'new' },
      { vduId: 'VDU2', resourceId: 'v1' },
    ]);
    assert.deepEqual(plan.rebuilds, [
      { serverId: 's2', imageId: 'i2' },
      { serverId: 'new', imageId: 'i1' },
    ]);
    assert.deepEqual(plan.withoutImage, ['v1']);
    assert.deepEqual(rebuildPlan(snapshot, [], { resourceId: 'x', vnfcResourceInfoId: 'r2' }).rebuilds, [{ serverId: 'x', imageId: 'i2' }]);
  });
});

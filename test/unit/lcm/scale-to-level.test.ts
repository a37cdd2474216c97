// SCALE_TO_LEVEL's pure logic: the request's schema (instantiationLevelId xor scaleInfo), the target
// levels from an instantiation level or scaleInfo, the per-VDU counts and removals they give (one
// aspect out and another in, in one change), the checks that refuse a request before anything
// changes, the reverse change a rollback applies, and scaleStatus afterwards.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { grantFor } from '#lib/lcm/grant.ts';
import { changesVim, leveledStatus, reverseScaleToLevel, scaleToLevelChange, targetLevels } from '#lib/lcm/scale-to-level.ts';
import type { FlavourInfo, ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { VnfInstanceRecord, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import { ProblemError } from '#lib/sol/errors.ts';
import { scaleVnfToLevelRequest, type ScaleVnfToLevelRequest } from '#lib/sol/requests.ts';
import { scalingOf } from '#lib/vim/scaling.ts';

const VNFD_ID = 'vnfd-1';

/** Two aspects: `front` adds one VDU1 per step (max 3); `back` adds one VDU2, then two per step (max 2). */
const FLAVOUR = {
  flavourId: 'simple',
  vdus: [
    { id: 'VDU1', name: 'VDU1', vduProfile: { minNumberOfInstances: 1, maxNumberOfInstances: 4 }, storages: [] },
    { id: 'VDU2', name: 'VDU2', vduProfile: { minNumberOfInstances: 1, maxNumberOfInstances: 5 }, storages: [] },
    { id: 'VDU3', name: 'VDU3', vduProfile: { minNumberOfInstances: 1, maxNumberOfInstances: 1 }, storages: [] },
  ],
  storages: [],
  cps: [],
  extCps: [],
  virtualLinks: [],
  scalingAspects: [
    { id: 'front', maxScaleLevel: 3, stepDeltas: ['one'] },
    { id: 'back', maxScaleLevel: 2, stepDeltas: ['first', 'more'] },
  ],
  vduScalingAspectDeltas: [
    { aspectId: 'front', deltas: { one: { VDU1: 1 } }, targets: ['VDU1'] },
    { aspectId: 'back', deltas: { first: { VDU2: 1 }, more: { VDU2: 2 } }, targets: ['VDU2'] },
  ],
  instantiationLevels: {
    default: 'small',
    levels: {
      small: { scaleInfo: { front: { scaleLevel: 0 }, back: { scaleLevel: 0 } } },
      frontHeavy: { scaleInfo: { front: { scaleLevel: 3 } } },
      big: { scaleInfo: { front: { scaleLevel: 2 }, back: { scaleLevel: 2 } } },
    },
  },
  vduInstantiationLevels: {},
  vduInitialDeltas: { VDU1: 1, VDU2: 1, VDU3: 1 },
  affinityRules: [],
  lcmOperations: {},
  externalCps: [],
} as unknown as FlavourInfo;

const vnfc = (vduId: string, n: number) => ({ id: `${vduId}-${n}`, vduId, computeResource: { resourceId: `server-${vduId}-${n}` } });

/** front at level 1 (VDU1: 2 VNFCs), back at level 2 (VDU2: 1 + 1 + 2 = 4 VNFCs), VDU3 unscaled; oldest first. */
const INFO = {
  flavourId: 'simple',
  scaleStatus: [
    { aspectId: 'front', scaleLevel: 1 },
    { aspectId: 'back', scaleLevel: 2 },
  ],
  vnfcResourceInfo: [vnfc('VDU1', 1), vnfc('VDU2', 1), vnfc('VDU3', 1), vnfc('VDU1', 2), vnfc('VDU2', 2), vnfc('VDU2', 3), vnfc('VDU2', 4)],
};

const parse = (body: unknown): ScaleVnfToLevelRequest => scaleVnfToLevelRequest.parse(body);
const change = (body: unknown) => scaleToLevelChange(FLAVOUR, INFO, parse(body), VNFD_ID);

function refused(body: unknown, status: number, detail: RegExp): void {
  assert.throws(
    () => change(body),
    (error: unknown) => error instanceof ProblemError && error.status === status && detail.test(error.message),
  );
}

describe('ScaleVnfToLevelRequest', () => {
  it('takes instantiationLevelId or scaleInfo, with additionalParams', () => {
    assert.ok(scaleVnfToLevelRequest.safeParse({ instantiationLevelId: 'big', additionalParams: { a: 1 } }).success);
    assert.ok(scaleVnfToLevelRequest.safeParse({ scaleInfo: [{ aspectId: 'front', scaleLevel: 0 }] }).success);
    assert.ok(scaleVnfToLevelRequest.safeParse({ scaleInfo: [{ aspectId: 'front', scaleLevel: 2, vnfdId: VNFD_ID }] }).success);
  });

  it('refuses both, neither, an empty or repeated scaleInfo, a negative or fractional level and unknown attributes', () => {
    for (const body of [
      { instantiationLevelId: 'big', scaleInfo: [{ aspectId: 'front', scaleLevel: 1 }] },
      {},
      { additionalParams: {} },
      { scaleInfo: [] },
      {
        scaleInfo: [
          { aspectId: 'front', scaleLevel: 1 },
          { aspectId: 'front', scaleLevel: 2 },
        ],
      },
      { scaleInfo: [{ aspectId: 'front', scaleLevel: -1 }] },
      { scaleInfo: [{ aspectId: 'front', scaleLevel: 1.5 }] },
      { scaleInfo: [{ aspectId: 'front' }] },
      { scaleInfo: [{ aspectId: 'front', scaleToLevel: '1' }] },
      { instantiationLevelId: 'big', extra: true },
    ]) {
      assert.equal(scaleVnfToLevelRequest.safeParse(body).success, false, JSON.stringify(body));
    }
    const both = scaleVnfToLevelRequest.safeParse({ instantiationLevelId: 'big', scaleInfo: [{ aspectId: 'front', scaleLevel: 1 }] });
    assert.match(JSON.stringify(both.error?.issues), /either instantiationLevelId or scaleInfo/);
  });
});

describe('target levels and counts', () => {
  it('scales one aspect out and the other in, in one change: VDU1 grows, VDU2 loses its newest VNFCs', () => {
    const made = change({
      scaleInfo: [
        { aspectId: 'front', scaleLevel: 3 },
        { aspectId: 'back', scaleLevel: 0 },
      ],
    });
    assert.deepEqual(made.levels, { front: 3, back: 0 });
    assert.deepEqual(made.targets, { VDU1: 4, VDU2: 1 });
    assert.deepEqual(made.remove, [
      { vduId: 'VDU2', resourceId: 'server-VDU2-4' },
      { vduId: 'VDU2', resourceId: 'server-VDU2-3' },
      { vduId: 'VDU2', resourceId: 'server-VDU2-2' },
    ]);
    assert.ok(changesVim(made));
    // Both drivers read it as counts plus removals, as they read a SCALE.
    assert.deepEqual(scalingOf(made), { targets: made.targets, remove: made.remove });
  });

  it('uses the step deltas of each level it crosses (the last one repeating)', () => {
    assert.deepEqual(change({ scaleInfo: [{ aspectId: 'back', scaleLevel: 1 }] }).targets, { VDU2: 2 });
    const down = change({ scaleInfo: [{ aspectId: 'back', scaleLevel: 1 }] });
    assert.deepEqual(
      down.remove.map((r) => r.resourceId),
      ['server-VDU2-4', 'server-VDU2-3'],
    );
  });

  it('leaves the aspects scaleInfo does not name at their levels', () => {
    const made = change({ scaleInfo: [{ aspectId: 'front', scaleLevel: 2 }] });
    assert.deepEqual(made.levels, { front: 2, back: 2 });
    assert.deepEqual(made.targets, { VDU1: 3 });
    assert.deepEqual(made.remove, []);
  });

  it('takes the levels of an instantiation level; aspects it does not name go to level 0', () => {
    const big = change({ instantiationLevelId: 'big' });
    assert.deepEqual(big.levels, { front: 2, back: 2 });
    assert.deepEqual(big.targets, { VDU1: 3 });
    const frontHeavy = change({ instantiationLevelId: 'frontHeavy' });
    assert.deepEqual(frontHeavy.levels, { front: 3, back: 0 });
    assert.deepEqual(frontHeavy.targets, { VDU1: 4, VDU2: 1 });
    assert.equal(frontHeavy.remove.length, 3);
  });

  it('changes nothing on the VIM when the targets are the current levels', () => {
    const same = change({
      scaleInfo: [
        { aspectId: 'front', scaleLevel: 1 },
        { aspectId: 'back', scaleLevel: 2 },
      ],
    });
    assert.deepEqual(same.targets, {});
    assert.deepEqual(same.remove, []);
    assert.equal(changesVim(same), false);
  });

  it('refuses unknown aspects and levels, levels above max_scale_level and counts above max_number_of_instances, with a clear detail', () => {
    refused({ scaleInfo: [{ aspectId: 'nope', scaleLevel: 1 }] }, 400, /no scaling aspect "nope"; it has front, back/);
    refused({ instantiationLevelId: 'huge' }, 400, /no instantiation level "huge"; it has small, frontHeavy, big/);
    refused({ scaleInfo: [{ aspectId: 'back', scaleLevel: 3 }] }, 400, /Scale level 3 of aspect back is above its max_scale_level 2/);
    refused({ scaleInfo: [{ aspectId: 'front', scaleLevel: 1, vnfdId: 'other' }] }, 422, /names VNFD other/);
    const tight = {
      ...FLAVOUR,
      vdus: FLAVOUR.vdus.map((vdu) => (vdu.id === 'VDU1' ? { ...vdu, vduProfile: { minNumberOfInstances: 1, maxNumberOfInstances: 3 } } : vdu)),
    };
    assert.throws(
      () => scaleToLevelChange(tight, INFO, parse({ scaleInfo: [{ aspectId: 'front', scaleLevel: 3 }] }), VNFD_ID),
      (error: unknown) =>
        error instanceof ProblemError && error.status === 400 && /VDU1 4 instances, more than its vdu_profile max_number_of_instances 3/.test(error.message),
    );
  });

  it('counts an instance without scaleStatus as at level 0', () => {
    const levels = targetLevels(FLAVOUR, { vnfcResourceInfo: [] }, parse({ scaleInfo: [{ aspectId: 'front', scaleLevel: 1 }] }), VNFD_ID);
    assert.deepEqual(levels, { front: 1, back: 0 });
  });
});

describe('after and undoing a scale to level', () => {
  const mixed = () =>
    change({
      scaleInfo: [
        { aspectId: 'front', scaleLevel: 3 },
        { aspectId: 'back', scaleLevel: 0 },
      ],
    });

  it('records every aspect at its new level in scaleStatus', () => {
    assert.deepEqual(leveledStatus(INFO, mixed()), [
      { aspectId: 'front', scaleLevel: 3 },
      { aspectId: 'back', scaleLevel: 0 },
    ]);
  });

  it('adds an aspect the instance had no scaleStatus entry for', () => {
    const info = { ...INFO, scaleStatus: [{ aspectId: 'front', scaleLevel: 1 }] };
    assert.deepEqual(leveledStatus(info, mixed()), [
      { aspectId: 'front', scaleLevel: 3 },
      { aspectId: 'back', scaleLevel: 0 },
    ]);
  });

  it('a rollback goes back to the counts and levels the instance had, removing only what the failed attempt added', () => {
    // The failed attempt added one VDU1 VNFC of two and removed two VDU2 VNFCs of three.
    const now = {
      vnfcResourceInfo: [vnfc('VDU1', 1), vnfc('VDU2', 1), vnfc('VDU3', 1), vnfc('VDU1', 2), vnfc('VDU2', 2), vnfc('VDU1', 9)],
      vnfVirtualLinkResourceInfo: [],
      virtualStorageResourceInfo: [],
      extCpInfo: [],
    };
    const reverse = reverseScaleToLevel(mixed(), INFO, now);
    assert.deepEqual(reverse.levels, { front: 1, back: 2 });
    assert.deepEqual(reverse.targets, { VDU1: 2, VDU2: 4 });
    assert.deepEqual(reverse.remove, [{ vduId: 'VDU1', resourceId: 'server-VDU1-9' }]);
    assert.deepEqual(scalingOf(reverse)?.remove, reverse.remove);
  });

  it('a rollback after an attempt that changed nothing on the VIM removes nothing', () => {
    const now = { vnfcResourceInfo: INFO.vnfcResourceInfo, vnfVirtualLinkResourceInfo: [], virtualStorageResourceInfo: [], extCpInfo: [] };
    const reverse = reverseScaleToLevel(mixed(), INFO, now);
    assert.deepEqual(reverse.targets, { VDU1: 2, VDU2: 4 });
    assert.deepEqual(reverse.remove, []);
  });
});

describe('the grant of a scale to level', () => {
  it('asks to add the VNFCs of the VDUs that grow and to remove those of the VDUs that shrink, in one GrantRequest', async () => {
    delete process.env.GRANT_ENDPOINT;
    const made = change({
      scaleInfo: [
        { aspectId: 'front', scaleLevel: 3 },
        { aspectId: 'back', scaleLevel: 0 },
      ],
    });
    const deps = { newId: () => 'grant-1' } as unknown as CoreDeps;
    const instance = { id: 'vnf-1', vnfdId: VNFD_ID, instantiatedVnfInfo: INFO } as unknown as VnfInstanceRecord;
    const opOcc = { id: 'occ-1', operation: 'SCALE_TO_LEVEL', isAutomaticInvocation: false, change: made } as unknown as VnfLcmOpOccRecord;
    const vnfd = { vnfdId: VNFD_ID, flavours: [FLAVOUR] } as unknown as ParsedVnfd;
    const { grantRequest } = await grantFor(deps, { opOcc, instance, vnfd });
    assert.equal(grantRequest.operation, 'SCALE_TO_LEVEL');
    assert.equal(grantRequest.flavourId, 'simple');
    const added = grantRequest.addResources as Array<{ vduId: string; type: string }>;
    assert.deepEqual(
      added.map((resource) => `${resource.type} ${resource.vduId}`),
      ['COMPUTE VDU1', 'COMPUTE VDU1'],
    );
    const removed = grantRequest.removeResources as Array<{ vduId: string; resource: { resourceId: string } }>;
    assert.deepEqual(
      removed.map((resource) => resource.resource.resourceId),
      ['server-VDU2-4', 'server-VDU2-3', 'server-VDU2-2'],
    );

    const outOnly = { ...opOcc, change: change({ scaleInfo: [{ aspectId: 'front', scaleLevel: 2 }] }) } as VnfLcmOpOccRecord;
    const grown = (await grantFor(deps, { opOcc: outOnly, instance, vnfd })).grantRequest;
    assert.equal((grown.addResources as unknown[]).length, 1);
    assert.equal('removeResources' in grown, false, 'no empty removeResources');
  });
});

// CHANGE_FLAVOUR's pure rules: which requests are refused and with what status, the plan kept on
// the op occ, the instantiate request later operations read, the scale levels of the new flavour
// and the Grant's resources.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { flavourChangePlan, flavourGrantResources, instantiateRequestAfterFlavour, scaleInfoAt } from '#lib/lcm/change-flavour.ts';
import type { FlavourInfo, ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import { ProblemError } from '#lib/sol/errors.ts';
import type { VnfInstanceRecord } from '#lib/sol/model.ts';
import { changeVnfFlavourRequest, parseRequest, type ChangeVnfFlavourRequest } from '#lib/sol/requests.ts';
import { assertEtsiSchema } from '../../support/etsi.ts';

function flavour(flavourId: string, vduCount: number, maxScaleLevel: number): FlavourInfo {
  return {
    flavourId,
    vdus: [{ id: 'VDU1', name: 'VDU1' }],
    storages: [{ id: 'Storage1' }],
    cps: [{ id: 'VDU1_CP1' }],
    extCps: [],
    virtualLinks: [{ id: 'VL1' }],
    scalingAspects: [{ id: 'VDU1_scale', maxScaleLevel }],
    vduScalingAspectDeltas: [],
    instantiationLevels: {
      default: `${flavourId}_1`,
      levels: { [`${flavourId}_1`]: { scaleInfo: { VDU1_scale: { scaleLevel: 0 } } }, [`${flavourId}_2`]: { scaleInfo: { VDU1_scale: { scaleLevel: 1 } } } },
    },
    vduInstantiationLevels: { VDU1: { [`${flavourId}_1`]: vduCount, [`${flavourId}_2`]: vduCount + 1 } },
    vduInitialDeltas: {},
    affinityRules: [],
    lcmOperations: {},
    externalCps: [],
  } as unknown as FlavourInfo;
}

const VNFD = { vnfdId: 'vnfd-1', flavours: [flavour('simple', 1, 2), flavour('large', 2, 1)] } as unknown as ParsedVnfd;

const INSTANCE = {
  id: 'inst-1',
  instantiationState: 'INSTANTIATED',
  instantiatedVnfInfo: {
    flavourId: 'simple',
    vnfcResourceInfo: [{ id: 'vnfc-1', vduId: 'VDU1', computeResource: { resourceId: 'server-1' } }],
    vnfVirtualLinkResourceInfo: [{ id: 'vl-1', vnfVirtualLinkDescId: 'VL1', networkResource: { resourceId: 'net-1' } }],
    virtualStorageResourceInfo: [],
  },
  vimResources: {
    vim: { connectionId: 'vim1', vimId: 'vim-a', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3', interfaceInfo: {}, accessSecret: 's' },
    driverState: {},
  },
} as unknown as VnfInstanceRecord;

function refusal(request: ChangeVnfFlavourRequest, instance = INSTANCE): { status: number; detail: string } {
  try {
    flavourChangePlan(VNFD, instance, request);
  } catch (error) {
    assert.ok(error instanceof ProblemError);
    return { status: error.status, detail: error.toProblem().detail ?? '' };
  }
  assert.fail('the request was accepted');
}

describe('CHANGE_FLAVOUR request checks', () => {
  it('plans a change to another flavour of the VNFD, with the level and manifests given', () => {
    assert.deepEqual(flavourChangePlan(VNFD, INSTANCE, { newFlavourId: 'large', instantiationLevelId: 'large_2' }, ['Files/a.yaml']), {
      kind: 'CHANGE_FLAVOUR',
      oldFlavourId: 'simple',
      newFlavourId: 'large',
      instantiationLevelId: 'large_2',
      defFiles: ['Files/a.yaml'],
    });
    assert.deepEqual(flavourChangePlan(VNFD, INSTANCE, { newFlavourId: 'large' }), { kind: 'CHANGE_FLAVOUR', oldFlavourId: 'simple', newFlavourId: 'large' });
  });

  it('refuses a NOT_INSTANTIATED instance with 409', () => {
    const { status, detail } = refusal({ newFlavourId: 'large' }, { ...INSTANCE, instantiationState: 'NOT_INSTANTIATED', vimResources: undefined });
    assert.equal(status, 409);
    assert.match(detail, /NOT_INSTANTIATED/);
  });

  it('refuses a flavour the VNFD does not have with 422, naming those it has', () => {
    assert.deepEqual(refusal({ newFlavourId: 'huge' }), {
      status: 422,
      detail: 'The VNFD vnfd-1 has no deployment flavour "huge"; its flavours are simple, large',
    });
  });

  it("refuses the instance's own flavour with 409", () => {
    const { status, detail } = refusal({ newFlavourId: 'simple' });
    assert.equal(status, 409);
    assert.match(detail, /already in deployment flavour simple/);
  });

  it("refuses an instantiation level of another flavour with 400, naming the new flavour's levels", () => {
    assert.deepEqual(refusal({ newFlavourId: 'large', instantiationLevelId: 'simple_1' }), {
      status: 400,
      detail: 'Deployment flavour large has no instantiation level "simple_1"; it has large_1, large_2',
    });
  });

  it('refuses external CPs the new flavour does not have (400), extManagedVirtualLinks and moving the VNF to another VIM (422)', () => {
    const link = { id: 'ext', resourceId: 'public', extCps: [{ cpdId: 'NOPE_CP' }] };
    assert.equal(refusal({ newFlavourId: 'large', extVirtualLinks: [link] }).status, 400);
    assert.equal(refusal({ newFlavourId: 'large', extManagedVirtualLinks: [{ id: 'x' }] }).status, 422);
    const moved = { vim1: { vimId: 'vim-b', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3' } };
    assert.equal(refusal({ newFlavourId: 'large', vimConnectionInfo: moved }).status, 422);
    const same = { vim1: { vimId: 'vim-a', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3', accessInfo: { password: 'p' } } };
    assert.equal(flavourChangePlan(VNFD, INSTANCE, { newFlavourId: 'large', vimConnectionInfo: same }).newFlavourId, 'large');
  });

  it('validates the body: newFlavourId required, unknown attributes refused', () => {
    assert.throws(() => parseRequest(changeVnfFlavourRequest, {}, 'ChangeVnfFlavourRequest'), /newFlavourId/);
    assert.throws(() => parseRequest(changeVnfFlavourRequest, { newFlavourId: 'large', flavourId: 'large' }, 'ChangeVnfFlavourRequest'), /"flavourId"/);
    assert.throws(() => parseRequest(changeVnfFlavourRequest, { newFlavourId: '' }, 'ChangeVnfFlavourRequest'), /newFlavourId/);
  });
});

describe('CHANGE_FLAVOUR records', () => {
  it('gives later operations the new flavour, level, external VLs and additionalParams', () => {
    const previous = {
      flavourId: 'simple',
      instantiationLevelId: 'simple_2',
      extVirtualLinks: [
        { id: 'a', resourceId: 'net-a', extCps: [] },
        { id: 'b', resourceId: 'net-b', extCps: [] },
      ],
      additionalParams: { namespace: 'ns', 'lcm-kubernetes-def-files': ['old.yaml'] },
    };
    const plan = { kind: 'CHANGE_FLAVOUR' as const, oldFlavourId: 'simple', newFlavourId: 'large', defFiles: ['new.yaml'] };
    assert.deepEqual(
      instantiateRequestAfterFlavour(previous, plan, { extVirtualLinks: [{ id: 'b', resourceId: 'net-c', extCps: [] }], additionalParams: { extra: 1 } }),
      {
        flavourId: 'large',
        extVirtualLinks: [
          { id: 'a', resourceId: 'net-a', extCps: [] },
          { id: 'b', resourceId: 'net-c', extCps: [] },
        ],
        additionalParams: { namespace: 'ns', 'lcm-kubernetes-def-files': ['new.yaml'], extra: 1 },
      },
    );
  });

  it("scales to the new flavour's level: its aspects, their levels and maxima", () => {
    assert.deepEqual(scaleInfoAt(flavour('large', 2, 1), undefined), {
      scaleStatus: [{ aspectId: 'VDU1_scale', scaleLevel: 0 }],
      maxScaleLevels: [{ aspectId: 'VDU1_scale', scaleLevel: 1 }],
    });
    assert.deepEqual(scaleInfoAt(flavour('large', 2, 1), 'large_2').scaleStatus, [{ aspectId: 'VDU1_scale', scaleLevel: 1 }]);
  });

  it("asks the grant to remove the instance's resources and add the new flavour's at its level, in a valid GrantRequest", async () => {
    const plan = { kind: 'CHANGE_FLAVOUR' as const, oldFlavourId: 'simple', newFlavourId: 'large' };
    const grant = flavourGrantResources(flavour('large', 2, 1), INSTANCE, plan) as {
      flavourId: string;
      addResources: Array<{ type: string; resourceTemplateId: string }>;
      removeResources: Array<{ type: string; resource: { resourceId: string; vimConnectionId: string } }>;
    };
    assert.equal(grant.flavourId, 'large');
    assert.deepEqual(
      grant.addResources.map((r) => `${r.type} ${r.resourceTemplateId}`),
      ['COMPUTE VDU1', 'COMPUTE VDU1', 'VL VL1', 'STORAGE Storage1'],
    );
    assert.deepEqual(
      grant.removeResources.map((r) => `${r.type} ${r.resource.resourceId} ${r.resource.vimConnectionId}`),
      ['COMPUTE server-1 vim1', 'VL net-1 vim1'],
    );
    const request = {
      vnfInstanceId: 'inst-1',
      vnfLcmOpOccId: 'occ-1',
      vnfdId: 'vnfd-1',
      operation: 'CHANGE_FLAVOUR',
      isAutomaticInvocation: false,
      _links: { vnfLcmOpOcc: { href: '/vnflcm/v2/vnf_lcm_op_occs/occ-1' }, vnfInstance: { href: '/vnflcm/v2/vnf_instances/inst-1' } },
      ...grant,
    };
    await assertEtsiSchema('grant', 'GrantRequest', request);
  });
});

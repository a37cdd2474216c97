// The task links of VNF instances and op occs (SOL003 5.5.2.2 and 5.5.2.13): exactly the tasks the
// resource's state allows, at the paths the API serves them, on each API version.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  LCM_OPERATION_STATES,
  LCM_OPERATION_TYPES,
  opOccTasks,
  renderVnfInstance,
  renderVnfLcmOpOcc,
  vnfInstanceTasks,
  type VnfInstanceRecord,
  type VnfLcmOpOccRecord,
} from '#lib/sol/model.ts';

const BASE = 'https://vnfm.example';

const instance: VnfInstanceRecord = {
  id: 'i1',
  tenantId: 't1',
  createdAt: '2026-12-01T00:00:00Z',
  createdSeq: '2026-12-01T00:00:00Z#i1',
  vnfdId: 'd1',
  vnfPkgId: 'p1',
  vnfProvider: 'p',
  vnfProductName: 'n',
  vnfSoftwareVersion: '1',
  vnfdVersion: '1',
  instantiationState: 'NOT_INSTANTIATED',
  revision: 1,
};

const opOcc: VnfLcmOpOccRecord = {
  id: 'o1',
  tenantId: 't1',
  vnfInstanceId: 'i1',
  operation: 'INSTANTIATE',
  operationState: 'STARTING',
  stateEnteredTime: '2026-12-01T00:00:00Z',
  startTime: '2026-12-01T00:00:00Z',
  startSeq: '2026-12-01T00:00:00Z#o1',
  isAutomaticInvocation: false,
  isCancelPending: false,
  apiMajorVersion: 2,
  revision: 1,
};

const hrefs = (body: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(body._links as Record<string, { href: string }>).map(([name, link]) => [name, link.href]));

describe('VNF instance links', () => {
  it('link only instantiate (and self) while NOT_INSTANTIATED, on both versions', () => {
    for (const version of [1, 2] as const) {
      assert.deepEqual(vnfInstanceTasks('NOT_INSTANTIATED', version), { instantiate: 'instantiate' });
      assert.deepEqual(hrefs(renderVnfInstance(instance, version, BASE)), {
        self: `${BASE}/vnflcm/v${version}/vnf_instances/i1`,
        instantiate: `${BASE}/vnflcm/v${version}/vnf_instances/i1/instantiate`,
      });
    }
  });

  it('link every other LCM task while INSTANTIATED on v2, each at its path; never indicators, which is not served', () => {
    const links = hrefs(renderVnfInstance({ ...instance, instantiationState: 'INSTANTIATED' }, 2, BASE));
    const self = `${BASE}/vnflcm/v2/vnf_instances/i1`;
    assert.deepEqual(links, {
      self,
      terminate: `${self}/terminate`,
      scale: `${self}/scale`,
      scaleToLevel: `${self}/scale_to_level`,
      changeFlavour: `${self}/change_flavour`,
      heal: `${self}/heal`,
      operate: `${self}/operate`,
      changeExtConn: `${self}/change_ext_conn`,
      changeCurrentVnfPkg: `${self}/change_vnfpkg`,
      createSnapshot: `${self}/create_snapshot`,
      revertToSnapshot: `${self}/revert_to_snapshot`,
    });
  });

  it('link on v1 only the tasks v1 serves (as Tacker v1 does)', () => {
    const self = `${BASE}/vnflcm/v1/vnf_instances/i1`;
    assert.deepEqual(hrefs(renderVnfInstance({ ...instance, instantiationState: 'INSTANTIATED' }, 1, BASE)), {
      self,
      terminate: `${self}/terminate`,
      scale: `${self}/scale`,
      heal: `${self}/heal`,
      changeExtConn: `${self}/change_ext_conn`,
    });
  });
});

describe('op occ links', () => {
  it('link cancel exactly while STARTING, PROCESSING or ROLLING_BACK, and retry and fail exactly in FAILED_TEMP', () => {
    for (const operation of LCM_OPERATION_TYPES) {
      for (const state of LCM_OPERATION_STATES) {
        const tasks = opOccTasks({ operation, operationState: state });
        assert.equal(tasks.includes('cancel'), ['STARTING', 'PROCESSING', 'ROLLING_BACK'].includes(state), `${operation} ${state}`);
        assert.equal(tasks.includes('retry') && tasks.includes('fail'), state === 'FAILED_TEMP', `${operation} ${state}`);
        if (state !== 'FAILED_TEMP') assert.equal(tasks.includes('rollback'), false);
      }
    }
  });

  it('link rollback in FAILED_TEMP except for TERMINATE and HEAL, which cannot be rolled back', () => {
    assert.deepEqual(opOccTasks({ operation: 'INSTANTIATE', operationState: 'FAILED_TEMP' }), ['retry', 'rollback', 'fail']);
    assert.deepEqual(opOccTasks({ operation: 'SCALE', operationState: 'FAILED_TEMP' }), ['retry', 'rollback', 'fail']);
    assert.deepEqual(opOccTasks({ operation: 'TERMINATE', operationState: 'FAILED_TEMP' }), ['retry', 'fail']);
    assert.deepEqual(opOccTasks({ operation: 'HEAL', operationState: 'FAILED_TEMP' }), ['retry', 'fail']);
    assert.deepEqual(opOccTasks({ operation: 'INSTANTIATE', operationState: 'COMPLETED' }), []);
  });

  it('render the links under the version asked, with the op occ instance link', () => {
    for (const version of [1, 2] as const) {
      const self = `${BASE}/vnflcm/v${version}/vnf_lcm_op_occs/o1`;
      assert.deepEqual(hrefs(renderVnfLcmOpOcc({ ...opOcc, operationState: 'PROCESSING' }, version, BASE)), {
        self,
        vnfInstance: `${BASE}/vnflcm/v${version}/vnf_instances/i1`,
        cancel: `${self}/cancel`,
      });
    }
  });

  it('show cancelMode only with a pending cancel', () => {
    const pending = renderVnfLcmOpOcc({ ...opOcc, operationState: 'PROCESSING', isCancelPending: true, cancelMode: 'GRACEFUL' }, 2, BASE);
    assert.equal(pending.isCancelPending, true);
    assert.equal(pending.cancelMode, 'GRACEFUL');
    const none = renderVnfLcmOpOcc(opOcc, 2, BASE);
    assert.equal(none.isCancelPending, false);
    assert.equal('cancelMode' in none, false);
  });
});

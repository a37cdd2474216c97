// The exchange checks every integration test relies on must themselves fail on what does not
// conform: a check that never fails would pass every test it guards.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkExchange, notificationProblem } from '../../support/exchange.ts';

function exchange(method: string, path: string, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = body === undefined ? '' : JSON.stringify(body);
  return {
    method,
    url: `https://vnfm.example${path}`,
    status,
    body,
    text,
    headers: new Headers({ 'Content-Type': 'application/json', Version: '2.0.0', ...headers }),
  };
}

const instance = {
  id: 'i1',
  vnfdId: 'd1',
  vnfProvider: 'p',
  vnfProductName: 'n',
  vnfSoftwareVersion: '1',
  vnfdVersion: '1',
  vnfPkgId: 'k1',
  instantiationState: 'NOT_INSTANTIATED',
  _links: {
    self: { href: 'https://vnfm.example/vnflcm/v1/vnf_instances/i1' },
    instantiate: { href: 'https://vnfm.example/vnflcm/v1/vnf_instances/i1/instantiate' },
  },
};

describe('the exchange checks', () => {
  it('refuse an answer without a Version header', async () => {
    const reply = exchange('GET', '/vnflcm/v2/vnf_instances', 200, []);
    reply.headers.delete('version');
    await assert.rejects(checkExchange(reply), /no Version header/);
  });

  it('refuse a ProblemDetails whose status is not the HTTP status', async () => {
    const reply = exchange('GET', '/vnflcm/v2/vnf_instances/x', 404, { status: 400, detail: 'no' }, { 'Content-Type': 'application/problem+json' });
    await assert.rejects(checkExchange(reply), /ProblemDetails.status is 400/);
  });

  it('refuse a v1 body carrying a V3 map where V2.6.1 has an array, and accept the array', async () => {
    const v3 = { ...instance, vimConnectionInfo: { vim1: { vimId: 'vim1', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3' } } };
    await assert.rejects(checkExchange(exchange('GET', '/vnflcm/v1/vnf_instances/i1', 200, v3, { Version: '1.3.0' })), /vimConnectionInfo is not an array/);
    const v1 = { ...instance, vimConnectionInfo: [{ id: 'vim1', vimId: 'vim1', vimType: 'openstack' }] };
    await checkExchange(exchange('GET', '/vnflcm/v1/vnf_instances/i1', 200, v1, { Version: '1.3.0' }));
    assert.match(
      (await notificationProblem({ notificationType: 'VnfLcmOperationOccurrenceNotification', changedInfo: { vimConnectionInfo: {} } }, '1.3.0')) ?? '',
      /not an array/,
    );
  });

  it('refuse a list carrying what the clause excludes by default, and an op occ in FAILED_TEMP without error', async () => {
    const occ = {
      id: 'o1',
      operationState: 'FAILED_TEMP',
      stateEnteredTime: '2026-01-01T00:00:00Z',
      startTime: '2026-01-01T00:00:00Z',
      vnfInstanceId: 'i1',
      operation: 'INSTANTIATE',
      isAutomaticInvocation: false,
      isCancelPending: false,
      _links: {
        self: { href: 'https://vnfm.example/vnflcm/v2/vnf_lcm_op_occs/o1' },
        vnfInstance: { href: 'https://vnfm.example/vnflcm/v2/vnf_instances/i1' },
        retry: { href: 'https://vnfm.example/vnflcm/v2/vnf_lcm_op_occs/o1/retry' },
        fail: { href: 'https://vnfm.example/vnflcm/v2/vnf_lcm_op_occs/o1/fail' },
        rollback: { href: 'https://vnfm.example/vnflcm/v2/vnf_lcm_op_occs/o1/rollback' },
      },
    };
    await assert.rejects(
      checkExchange(exchange('GET', '/vnflcm/v2/vnf_lcm_op_occs', 200, [{ ...occ, operationParams: {}, error: { status: 500, detail: 'x' } }])),
      /operationParams/,
    );
    await assert.rejects(checkExchange(exchange('GET', '/vnflcm/v2/vnf_lcm_op_occs/o1', 200, occ)), /carries no error/);
    await checkExchange(exchange('GET', '/vnflcm/v2/vnf_lcm_op_occs/o1', 200, { ...occ, error: { status: 500, detail: 'x' } }));
  });

  it('refuse a VNF instance linking a task its state or API version does not allow, or missing one it allows', async () => {
    const base = 'https://vnfm.example/vnflcm/v2/vnf_instances/i1';
    const v2Tasks = {
      terminate: 'terminate',
      scale: 'scale',
      scaleToLevel: 'scale_to_level',
      changeFlavour: 'change_flavour',
      heal: 'heal',
      operate: 'operate',
      changeExtConn: 'change_ext_conn',
      changeCurrentVnfPkg: 'change_vnfpkg',
      createSnapshot: 'create_snapshot',
      revertToSnapshot: 'revert_to_snapshot',
    };
    const links = (prefix: string, tasks: Record<string, string>) => ({
      self: { href: prefix },
      ...Object.fromEntries(Object.entries(tasks).map(([task, segment]) => [task, { href: `${prefix}/${segment}` }])),
    });
    const instantiated = { ...instance, instantiationState: 'INSTANTIATED', _links: links(base, v2Tasks) };
    await checkExchange(exchange('GET', '/vnflcm/v2/vnf_instances/i1', 200, instantiated));
    await assert.rejects(
      checkExchange(exchange('GET', '/vnflcm/v2/vnf_instances/i1', 200, { ...instantiated, _links: links(base, { ...v2Tasks, instantiate: 'instantiate' }) })),
      /with instantiate it may not link/,
    );
    const { operate: _operate, ...withoutOperate } = v2Tasks;
    await assert.rejects(
      checkExchange(exchange('GET', '/vnflcm/v2/vnf_instances', 200, [{ ...instantiated, _links: links(base, withoutOperate) }])),
      /without operate/,
    );
    await assert.rejects(
      checkExchange(exchange('GET', '/vnflcm/v2/vnf_instances/i1', 200, { ...instantiated, _links: links(base, { ...v2Tasks, heal: 'heal_it' }) })),
      /_links.heal is .*heal_it/,
    );
    await assert.rejects(
      checkExchange(exchange('GET', '/vnflcm/v2/vnf_instances/i1', 200, { ...instance, _links: links(base, { terminate: 'terminate' }) })),
      /NOT_INSTANTIATED on v2 links terminate, without instantiate, with terminate it may not link/,
    );
    // v1 serves fewer tasks (Tacker's v1): those it does not serve are not linked.
    const v1 = 'https://vnfm.example/vnflcm/v1/vnf_instances/i1';
    const v1Tasks = { terminate: 'terminate', scale: 'scale', heal: 'heal', changeExtConn: 'change_ext_conn' };
    const v1Instance = { ...instance, instantiationState: 'INSTANTIATED', _links: links(v1, v1Tasks) };
    await checkExchange(exchange('GET', '/vnflcm/v1/vnf_instances/i1', 200, v1Instance, { Version: '1.3.0' }));
    await assert.rejects(
      checkExchange(exchange('GET', '/vnflcm/v1/vnf_instances/i1', 200, { ...v1Instance, _links: links(v1, v2Tasks) }, { Version: '1.3.0' })),
      /it may not link/,
    );
  });

  it('refuse an op occ linking cancel outside STARTING, PROCESSING and ROLLING_BACK, or not linking it there, and a cancelMode without a pending cancel', async () => {
    const self = 'https://vnfm.example/vnflcm/v2/vnf_lcm_op_occs/o1';
    const occ = {
      id: 'o1',
      operationState: 'PROCESSING',
      stateEnteredTime: '2026-01-01T00:00:00Z',
      startTime: '2026-01-01T00:00:00Z',
      vnfInstanceId: 'i1',
      operation: 'INSTANTIATE',
      isAutomaticInvocation: false,
      isCancelPending: false,
      _links: { self: { href: self }, vnfInstance: { href: 'https://vnfm.example/vnflcm/v2/vnf_instances/i1' }, cancel: { href: `${self}/cancel` } },
    };
    await checkExchange(exchange('GET', '/vnflcm/v2/vnf_lcm_op_occs/o1', 200, occ));
    await checkExchange(exchange('GET', '/vnflcm/v2/vnf_lcm_op_occs/o1', 200, { ...occ, isCancelPending: true, cancelMode: 'GRACEFUL' }));
    const { cancel: _cancel, ...withoutCancel } = occ._links;
    await assert.rejects(checkExchange(exchange('GET', '/vnflcm/v2/vnf_lcm_op_occs/o1', 200, { ...occ, _links: withoutCancel })), /without cancel/);
    await assert.rejects(
      checkExchange(exchange('GET', '/vnflcm/v2/vnf_lcm_op_occs', 200, [{ ...occ, operationState: 'COMPLETED' }])),
      /COMPLETED links cancel, .*with cancel it may not link/,
    );
    await assert.rejects(
      checkExchange(
        exchange('GET', '/vnflcm/v2/vnf_lcm_op_occs/o1', 200, {
          ...occ,
          operationState: 'FAILED_TEMP',
          error: { status: 500, detail: 'x' },
          _links: { ...occ._links, retry: { href: `${self}/retry` }, fail: { href: `${self}/fail` } },
        }),
      ),
      /with cancel it may not link/,
    );
    await assert.rejects(
      checkExchange(exchange('GET', '/vnflcm/v2/vnf_lcm_op_occs/o1', 200, { ...occ, isCancelPending: true })),
      /isCancelPending true lacks cancelMode/,
    );
    await assert.rejects(
      checkExchange(exchange('GET', '/vnflcm/v2/vnf_lcm_op_occs/o1', 200, { ...occ, cancelMode: 'FORCEFUL' })),
      /isCancelPending false carries cancelMode/,
    );
    // The same rules on v1, whose op occs Tacker's v1 cancel task serves too.
    const v1Self = 'https://vnfm.example/vnflcm/v1/vnf_lcm_op_occs/o1';
    const v1Links = { self: { href: v1Self }, vnfInstance: { href: 'https://vnfm.example/vnflcm/v1/vnf_instances/i1' } };
    await assert.rejects(
      checkExchange(exchange('GET', '/vnflcm/v1/vnf_lcm_op_occs/o1', 200, { ...occ, _links: v1Links }, { Version: '1.3.0' })),
      /without cancel/,
    );
  });
});

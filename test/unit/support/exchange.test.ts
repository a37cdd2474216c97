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
  _links: { self: { href: 'https://vnfm.example/vnflcm/v1/vnf_instances/i1' } },
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
      _links: { self: { href: 'h' }, vnfInstance: { href: 'h' }, retry: { href: 'h' }, fail: { href: 'h' }, rollback: { href: 'h' } },
    };
    await assert.rejects(
      checkExchange(exchange('GET', '/vnflcm/v2/vnf_lcm_op_occs', 200, [{ ...occ, operationParams: {}, error: { status: 500, detail: 'x' } }])),
      /operationParams/,
    );
    await assert.rejects(checkExchange(exchange('GET', '/vnflcm/v2/vnf_lcm_op_occs/o1', 200, occ)), /carries no error/);
    await checkExchange(exchange('GET', '/vnflcm/v2/vnf_lcm_op_occs/o1', 200, { ...occ, error: { status: 500, detail: 'x' } }));
  });
});

// The VNF LCM Coordination client (lib/coordination/client.ts) against the test EM: each answer of
// SOL002 clause 10 read as what it means (finished, running, rejected, failed), Retry-After in both
// of its forms, and a Location off the EM's own origin refused.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  cancelCoordination,
  coordinationIdOf,
  readCoordination,
  requestCoordination,
  retryAfterMs,
  type CoordinationAnswer,
  type LcmCoordRequest,
} from '#lib/coordination/client.ts';
import { startEmSimulator, type EmSimulator } from '../../support/em-simulator.ts';

const policy = { allowPrivateNetworks: true };
const request = (name: string): LcmCoordRequest => ({
  vnfInstanceId: 'vnf-1',
  vnfLcmOpOccId: `occ-${name}`,
  lcmOperationType: 'CHANGE_VNFPKG',
  coordinationActionName: name,
  inputParams: { why: 'test' },
  _links: { vnfLcmOpOcc: { href: `http://vnfm/vnflcm/v2/vnf_lcm_op_occs/occ-${name}` }, vnfInstance: { href: 'http://vnfm/vnflcm/v2/vnf_instances/vnf-1' } },
});

let em: EmSimulator;
before(async () => {
  em = await startEmSimulator();
});
after(() => em.close());

function expectKind<K extends CoordinationAnswer['kind']>(answer: CoordinationAnswer, kind: K): Extract<CoordinationAnswer, { kind: K }> {
  assert.equal(answer.kind, kind, JSON.stringify(answer));
  return answer as Extract<CoordinationAnswer, { kind: K }>;
}

describe('the VNF LCM Coordination client', () => {
  it('201: the coordination finished at once; its LcmCoord and Location are read', async () => {
    em.behaviour = () => ({ result: 'CONTINUE' });
    const answer = expectKind(await requestCoordination({ apiRoot: `${em.url}/` }, request('sync'), { policy }), 'finished');
    assert.equal(answer.coordination.coordinationResult, 'CONTINUE');
    assert.ok(answer.location?.startsWith(`${em.url}/lcmcoord/v1/coordinations/`));
    const sent = em.requests.at(-1);
    assert.equal(sent?.path, '/lcmcoord/v1/coordinations', 'the API root gets /lcmcoord/v1/coordinations, one slash');
    assert.equal(sent?.headers.version, '1.1.0');
    assert.equal(sent?.nonConforming, undefined, 'the request is a conforming LcmCoordRequest');
  });

  it('201 ABORT carries the reason in its error', async () => {
    em.behaviour = () => ({ result: 'ABORT', reason: 'the EM is in maintenance' });
    const answer = expectKind(await requestCoordination({ apiRoot: em.url }, request('abort'), { policy }), 'finished');
    assert.equal(answer.coordination.coordinationResult, 'ABORT');
    assert.equal(answer.coordination.error?.detail, 'the EM is in maintenance');
  });

  it('202: running with Retry-After; the Location is read until it answers 200', async () => {
    em.behaviour = () => ({ result: 'CONTINUE', reads: 2, retryAfter: 3 });
    const endpoint = { apiRoot: em.url };
    const started = expectKind(await requestCoordination(endpoint, request('async'), { policy }), 'running');
    assert.equal(started.retryAfterMs, 3000);
    assert.ok(coordinationIdOf(started.location).startsWith('coord-'));
    expectKind(await readCoordination(endpoint, started.location, { policy }), 'running');
    expectKind(await readCoordination(endpoint, started.location, { policy }), 'running');
    const done = expectKind(await readCoordination(endpoint, started.location, { policy }), 'finished');
    assert.equal(done.coordination.coordinationResult, 'CONTINUE');
  });

  it('a cancelled coordination reads CANCELLED', async () => {
    em.behaviour = () => ({ result: 'CONTINUE', reads: Number.POSITIVE_INFINITY });
    const endpoint = { apiRoot: em.url };
    const started = expectKind(await requestCoordination(endpoint, request('cancel'), { policy }), 'running');
    assert.equal(await cancelCoordination(endpoint, started.location, { policy }), true);
    assert.equal(expectKind(await readCoordination(endpoint, started.location, { policy }), 'finished').coordination.coordinationResult, 'CANCELLED');
  });

  it('503: rejected for now, with the delay of its Retry-After; asked again, 201', async () => {
    em.behaviour = () => ({ result: 'CONTINUE', unavailable: 1, unavailableRetryAfter: 7 });
    const rejected = expectKind(await requestCoordination({ apiRoot: em.url }, request('busy'), { policy }), 'rejected');
    assert.equal(rejected.retryAfterMs, 7000);
    assert.equal(rejected.detail, 'the EM is busy');
    expectKind(await requestCoordination({ apiRoot: em.url }, request('busy'), { policy }), 'finished');
  });

  it('a 404 of a coordination is a failure, not worth asking again', async () => {
    const failed = expectKind(await readCoordination({ apiRoot: em.url }, `${em.url}/lcmcoord/v1/coordinations/none`, { policy }), 'failed');
    assert.equal(failed.status, 404);
    assert.equal(failed.transient, false);
  });

  it('refuses a 202 whose Location points off the EM’s origin (its credentials would go there)', async () => {
    const rogue = http.createServer((_req, res) => res.writeHead(202, { Location: 'http://elsewhere.example/lcmcoord/v1/coordinations/x' }).end());
    await new Promise<void>((resolve) => rogue.listen(0, '127.0.0.1', resolve));
    try {
      const root = `http://127.0.0.1:${(rogue.address() as AddressInfo).port}`;
      const failed = expectKind(await requestCoordination({ apiRoot: root }, request('rogue'), { policy }), 'failed');
      assert.match(failed.detail, /own origin/);
    } finally {
      rogue.closeAllConnections();
      rogue.close();
    }
  });

  it('reads Retry-After as seconds or as an HTTP-date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(retryAfterMs('120', now), 120_000);
    assert.equal(retryAfterMs('Thu, 01 Jan 2026 00:00:30 GMT', now), 30_000);
    assert.equal(retryAfterMs('soon', now), undefined);
    assert.equal(retryAfterMs(undefined, now), undefined);
  });
});

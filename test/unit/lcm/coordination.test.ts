// The LCM coordination of an op occ (lib/lcm/coordination.ts) against the test EM, with an
// in-memory op occ and a clock of the test's own: what the op occ records (lcmCoordinations,
// rejectedLcmCoordinations), when the EM is asked again (never before its Retry-After), and how an
// ABORT, a refusal and a coordination without a result in time end the step. The request is
// checked when it arrives.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CoordinationLedger, coordinationPlanOf, LcmCoordinationAborted, LcmCoordinationFailed, recordedPlanOf } from '#lib/lcm/coordination.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { Transition } from '#lib/store/op-occs.ts';
import { UnprocessableEntityError } from '#lib/sol/errors.ts';
import { startEmSimulator, type EmSimulator } from '../../support/em-simulator.ts';

let em: EmSimulator;
before(async () => {
  em = await startEmSimulator();
});
after(() => em.close());

/** An op occ PROCESSING in a store of one, asking the EM for `actions`. */
function harness(actions: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}) {
  const id = `occ-${Math.random().toString(36).slice(2)}`;
  let record: VnfLcmOpOccRecord = {
    id,
    tenantId: 't',
    vnfInstanceId: 'vnf-1',
    operation: 'CHANGE_VNFPKG',
    operationState: 'PROCESSING',
    stateEnteredTime: '2026-01-01T00:00:00.000Z',
    startTime: '2026-01-01T00:00:00.000Z',
    startSeq: 'x',
    isAutomaticInvocation: false,
    isCancelPending: false,
    apiMajorVersion: 2,
    attempts: 1,
    revision: 1,
    operationParams: { additionalParams: { lcmCoordination: { endpoint: em.url, actions, ...extra } } },
  };
  const deps = {
    opOccs: {
      get: async () => structuredClone(record),
      transition: async (_id: string, t: Transition) => {
        if (!t.from.includes(record.operationState)) return undefined;
        record = { ...record, ...(t.set as object), revision: record.revision + 1 } as VnfLcmOpOccRecord;
        for (const key of t.remove ?? []) delete (record as unknown as Record<string, unknown>)[key];
        return structuredClone(record);
      },
    },
  } as unknown as CoreDeps;
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const ledger = async () => {
    const current = structuredClone(record);
    const plan = recordedPlanOf(current);
    assert.ok(plan);
    return new CoordinationLedger(deps, current, plan, { egress: { allowPrivateNetworks: true }, now: () => clock });
  };
  return { id, ledger, record: () => record, advance: (ms: number) => (clock += ms), now: () => clock };
}

const requestsFor = (id: string) =>
  em.requests.filter((r) => r.path.startsWith('/lcmcoord') && (r.method === 'GET' || r.body?.vnfLcmOpOccId === id || r.path.endsWith('/cancel')));

describe('LCM coordination of an op occ', () => {
  it('201 CONTINUE: done at once, recorded with its result, start and end', async () => {
    em.behaviour = () => ({ result: 'CONTINUE' });
    const h = harness([{ name: 'prepare', at: 'start', inputParams: { site: 'a' } }]);
    assert.equal(await (await h.ledger()).coordinate('start', 0), undefined);
    const [entry] = h.record().lcmCoordinations ?? [];
    assert.equal(entry?.coordinationResult, 'CONTINUE');
    assert.equal(entry?.coordinationActionName, 'prepare');
    assert.equal(entry?.endpointType, 'MGMT');
    assert.ok(entry?.startTime && entry.endTime);
    const sent = em.coordinationRequests().find((body) => body.vnfLcmOpOccId === h.id);
    assert.deepEqual(sent?.inputParams, { site: 'a' });
    assert.equal(sent?.lcmOperationType, 'CHANGE_VNFPKG');
    assert.equal((await (await h.ledger()).coordinate('start', 0)) ?? 'asked nothing', 'asked nothing', 'a finished coordination is not asked for again');
    assert.equal(em.coordinationRequests().filter((body) => body.vnfLcmOpOccId === h.id).length, 1);
  });

  it('202: waits for the Retry-After the EM gave, reading the result only then; the delay is recorded while it runs', async () => {
    em.behaviour = () => ({ result: 'CONTINUE', reads: 1, retryAfter: 4 });
    const h = harness([{ name: 'drain' }]);
    const first = await (await h.ledger()).coordinate('start', 3);
    assert.equal(first?.status, 'IN_PROGRESS');
    assert.equal(first?.waitUntil, new Date(h.now() + 4000).toISOString(), 'the next look is when the EM said');
    assert.equal(first?.polls, 4);
    const running = h.record().lcmCoordinations?.[0];
    assert.equal(running?.coordinationResult, undefined);
    assert.equal(running?.endTime, undefined);
    assert.equal(running?.delay, first?.waitUntil);
    const asked = requestsFor(h.id).length;

    h.advance(1000);
    assert.equal((await (await h.ledger()).coordinate('start', 4))?.status, 'IN_PROGRESS');
    assert.equal(requestsFor(h.id).length, asked, 'nothing is asked before the Retry-After');

    h.advance(3000);
    assert.equal((await (await h.ledger()).coordinate('start', 5))?.status, 'IN_PROGRESS', 'the EM answers 202 once more');
    h.advance(4000);
    assert.equal(await (await h.ledger()).coordinate('start', 6), undefined);
    const [entry] = h.record().lcmCoordinations ?? [];
    assert.equal(entry?.coordinationResult, 'CONTINUE');
    assert.equal(entry?.delay, undefined, 'no delay once the last answer had no Retry-After');
    assert.equal(h.record().lcmCoordinations?.length, 1, 'one coordination, one entry');
    assert.equal(h.record().coordination?.pending, undefined);
  });

  it('503: recorded as rejected with the end of its delay, asked again after it', async () => {
    em.behaviour = () => ({ result: 'CONTINUE', unavailable: 1, unavailableRetryAfter: 2 });
    const h = harness([{ name: 'busy' }], { endpointType: 'VNF' });
    const waiting = await (await h.ledger()).coordinate('start', 0);
    assert.equal(waiting?.waitUntil, new Date(h.now() + 2000).toISOString());
    const [rejected] = h.record().rejectedLcmCoordinations ?? [];
    assert.deepEqual(rejected, {
      coordinationActionName: 'busy',
      rejectionTime: new Date(h.now()).toISOString(),
      delay: new Date(h.now() + 2000).toISOString(),
      endpointType: 'VNF',
    });
    assert.equal(h.record().lcmCoordinations, undefined, 'nothing was started');
    h.advance(2000);
    assert.equal(await (await h.ledger()).coordinate('start', 1), undefined);
    assert.equal(h.record().lcmCoordinations?.[0]?.coordinationResult, 'CONTINUE');
  });

  it('ABORT fails the step with the EM’s reason and records the result', async () => {
    em.behaviour = () => ({ result: 'ABORT', reason: 'subscribers are being migrated' });
    const h = harness([{ name: 'check' }]);
    const ledger = await h.ledger();
    await assert.rejects(ledger.coordinate('start', 0), (error: unknown) => {
      assert.ok(error instanceof LcmCoordinationAborted);
      assert.equal(error.name, 'LcmCoordinationAborted');
      assert.match(error.message, /aborted the CHANGE_VNFPKG at coordination action check: subscribers are being migrated/);
      return true;
    });
    assert.equal(h.record().lcmCoordinations?.[0]?.coordinationResult, 'ABORT');
  });

  it('no result within timeoutSeconds: cancelled at the EM, the entry ends without a result, the step fails', async () => {
    em.behaviour = () => ({ result: 'CONTINUE', reads: Number.POSITIVE_INFINITY, retryAfter: 1 });
    const h = harness([{ name: 'slow' }], { timeoutSeconds: 5 });
    assert.equal((await (await h.ledger()).coordinate('start', 0))?.status, 'IN_PROGRESS');
    for (let i = 0; i < 4; i++) {
      h.advance(1000);
      assert.equal((await (await h.ledger()).coordinate('start', 0))?.status, 'IN_PROGRESS');
    }
    h.advance(1000);
    await assert.rejects(
      (await h.ledger()).coordinate('start', 0),
      (error: unknown) => error instanceof LcmCoordinationFailed && /within 5 s/.test(error.message),
    );
    const [entry] = h.record().lcmCoordinations ?? [];
    assert.equal(entry?.coordinationResult, undefined, 'a timed-out coordination has no result (SOL003 NOTE 4)');
    assert.ok(entry?.endTime);
    assert.ok(
      em.requests.some((r) => r.method === 'POST' && r.path === `/lcmcoord/v1/coordinations/${entry?.id}/cancel`),
      'the EM is asked to cancel it',
    );
    assert.equal(h.record().coordination?.pending, undefined);
  });

  it('a coordination an earlier attempt left running is cancelled at the EM when the retry asks anew', async () => {
    em.behaviour = () => ({ result: 'CONTINUE', reads: Number.POSITIVE_INFINITY, retryAfter: 1 });
    const h = harness([{ name: 'left' }]);
    assert.equal((await (await h.ledger()).coordinate('start', 0))?.status, 'IN_PROGRESS');
    const left = h.record().lcmCoordinations?.[0]?.id;
    // The execution was stopped (FORCEFUL cancel) and the operation retried: attempt 2.
    h.record().attempts = 2;
    em.behaviour = () => ({ result: 'CONTINUE' });
    assert.equal(await (await h.ledger()).coordinate('start', 0), undefined);
    assert.ok(em.requests.some((r) => r.path === `/lcmcoord/v1/coordinations/${left}/cancel`));
    assert.deepEqual(
      h.record().lcmCoordinations?.map((entry) => [entry.coordinationResult ?? 'none', Boolean(entry.endTime)]),
      [
        ['none', true],
        ['CONTINUE', true],
      ],
    );
  });

  it('coordinations of a place run in the order given, each after the one before has said CONTINUE', async () => {
    em.behaviour = () => ({ result: 'CONTINUE' });
    const h = harness([
      { name: 'first', at: 'start' },
      { name: 'later', at: 'end' },
      { name: 'second', at: 'start' },
    ]);
    assert.equal(await (await h.ledger()).coordinate('start', 0), undefined);
    assert.deepEqual(
      h.record().lcmCoordinations?.map((entry) => entry.coordinationActionName),
      ['first', 'second'],
    );
  });

  it('refuses a request whose coordination cannot work', () => {
    const refused = (value: unknown, operation: 'INSTANTIATE' | 'CHANGE_VNFPKG' = 'INSTANTIATE') =>
      assert.throws(() => coordinationPlanOf({ lcmCoordination: value }, operation), UnprocessableEntityError);
    refused({ endpoint: 'ftp://em.example', actions: [{ name: 'a' }] });
    refused({ endpoint: 'https://user:pw@em.example', actions: [{ name: 'a' }] });
    refused({ endpoint: 'https://em.example', actions: [] });
    refused({ endpoint: 'https://em.example', actions: [{ name: 'a', at: 'vnfc' }] });
    refused({ endpoint: 'https://em.example', actions: [{ name: 'a' }], authentication: { authType: ['OAUTH2_CLIENT_CREDENTIALS'] } });
    assert.equal(
      coordinationPlanOf({ lcmCoordination: { endpoint: 'https://em.example', actions: [{ name: 'a', at: 'vnfc' }] } }, 'CHANGE_VNFPKG')?.actions[0]?.at,
      'vnfc',
    );
    assert.equal(coordinationPlanOf({}, 'INSTANTIATE'), undefined);
  });
});

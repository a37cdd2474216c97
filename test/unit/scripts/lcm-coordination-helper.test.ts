// The coordination helper for JavaScript CoordinateVNF scripts (samples/scripts/lcm-coordination.cjs),
// given what the script runner hands a script, against the test EM: the request it sends is a
// conforming LcmCoordRequest made from the VNFM's skeleton, authenticated as the LCM request says;
// it waits through 503 and 202 to the result, and gives up after its maximum wait.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { lcmCoordRequestSkeleton } from '#lib/lcm/coordination.ts';
import type { VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import { startEmSimulator, type EmSimulator } from '../../support/em-simulator.ts';

const helper = createRequire(import.meta.url)('../../../samples/scripts/lcm-coordination.cjs') as {
  coordinate(input: unknown, options: { name: string; inputParams?: Record<string, unknown>; maxWaitMs?: number }): Promise<Record<string, unknown>>;
};

let em: EmSimulator;
before(async () => {
  em = await startEmSimulator();
});
after(() => em.close());

/** A CoordinateVNF script's input as the engine makes it (lib/lcm/change-package.ts). */
function scriptInput(opOccId: string) {
  const opOcc = { id: opOccId, vnfInstanceId: 'vnf-1', operation: 'CHANGE_VNFPKG', apiMajorVersion: 2 } as VnfLcmOpOccRecord;
  return {
    operation: 'change_current_package',
    request: {
      additionalParams: {
        lcmCoordination: {
          endpoint: em.url,
          authentication: { authType: ['BASIC'], paramsBasic: { userName: 'script', password: 'pw' } },
          actions: [{ name: 'prepare' }],
        },
      },
    },
    lcmCoordRequest: {
      ...lcmCoordRequestSkeleton(opOcc, { vnfcInstanceIds: ['vnfc-1'] }),
      _links: { vnfLcmOpOcc: { href: 'http://vnfm/o' }, vnfInstance: { href: 'http://vnfm/i' } },
    },
  };
}

describe('the coordination helper for JavaScript scripts', () => {
  it('sends a conforming LcmCoordRequest, authenticated as the request says, and waits through 503 and 202 to the result', async () => {
    em.behaviour = () => ({ result: 'CONTINUE', unavailable: 1, unavailableRetryAfter: 0, reads: 1, retryAfter: 0 });
    const coord = await helper.coordinate(scriptInput('occ-helper'), { name: 'reconfigure', inputParams: { step: 1 } });
    assert.equal(coord.coordinationResult, 'CONTINUE');
    const sent = em.requests.filter((r) => r.body?.vnfLcmOpOccId === 'occ-helper');
    assert.equal(sent.length, 2, 'asked again after the 503');
    assert.ok(sent.every((r) => r.nonConforming === undefined));
    assert.deepEqual(sent[0]?.body?.inputParams, { vnfcInstanceIds: ['vnfc-1'], step: 1 });
    assert.equal(sent[0]?.body?.coordinationActionName, 'reconfigure');
    assert.equal(sent[0]?.headers.authorization, `Basic ${Buffer.from('script:pw').toString('base64')}`);
  });

  it('returns an ABORT for the script to fail with, and gives up on a coordination that never ends', async () => {
    em.behaviour = () => ({ result: 'ABORT', reason: 'not now' });
    assert.equal((await helper.coordinate(scriptInput('occ-abort'), { name: 'check' })).coordinationResult, 'ABORT');
    em.behaviour = () => ({ result: 'CONTINUE', reads: Number.POSITIVE_INFINITY, retryAfter: 1 });
    await assert.rejects(helper.coordinate(scriptInput('occ-never'), { name: 'slow', maxWaitMs: 300 }), /no coordination result for slow/);
  });
});

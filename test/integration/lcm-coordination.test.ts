// LCM coordination (SOL002 clause 10) over HTTP on the built-in OpenStack VIM: a CHANGE_VNFPKG of
// the sample VNF coordinated with a test EM at its start (answered 202, then CONTINUE after reads
// the EM paced with Retry-After), for each VNFC the rolling update moves, and at its end, completes
// and its op occ lists every coordination; one the EM aborts at the start ends FAILED_TEMP with the
// EM's reason before anything on the VIM changed (Heat's stacks, Nova's servers and Glance's images
// as the simulator has them), and then rolls back.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertEtsiSchema } from '../support/etsi.ts';
import { SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { client, startVnfm, type LocalVnfm } from '../support/runtime.ts';
import { lcmSteps, OPENSTACK_SAMPLE_INSTANTIATE } from '../support/lcm-http.ts';
import { startEmSimulator, type EmSimulator } from '../support/em-simulator.ts';
import { waitFor } from '../support/wait.ts';

let vnfm: LocalVnfm;
let em: EmSimulator;
let call: ReturnType<typeof client>;
let steps: ReturnType<typeof lcmSteps>;
let control: string;
const V1 = SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId;
const V2 = SAMPLE_PACKAGES['openstack-vnf-v2'].vnfdId;
const INSTANTIATE = OPENSTACK_SAMPLE_INSTANTIATE;

before(async () => {
  em = await startEmSimulator();
  vnfm = await startVnfm();
  call = client(vnfm);
  steps = lcmSteps(vnfm, call);
  control = JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8'))['local-openstack'].control;
  await steps.onboard(['openstack-vnf-v1', 'openstack-vnf-v2']);
});
after(async () => {
  await vnfm.stop();
  await em.close();
});

type Listed = { items: Array<{ id: string; name?: string; status?: string; nested?: boolean }> };
/** What the VIM has: every stack, server and image with its status. */
async function vimState(): Promise<Record<string, string[]>> {
  const state = (await (await fetch(`${control}state`)).json()) as Record<string, Listed>;
  const of = (kind: string) => (state[kind]?.items ?? []).map((item) => `${item.id} ${item.status ?? ''}`).sort();
  return { stacks: of('stacks'), servers: of('servers'), images: of('images') };
}

async function instantiated(): Promise<string> {
  const id = ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: V1 } })).body as { id: string }).id;
  await steps.ended(await steps.operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, INSTANTIATE), 'COMPLETED');
  return id;
}

type Coordinations = Array<{
  id: string;
  coordinationActionName: string;
  coordinationResult?: string;
  startTime: string;
  endTime?: string;
  endpointType: string;
}>;

describe('LCM coordination with an element manager', () => {
  it('CHANGE_VNFPKG coordinated at its start (202, then CONTINUE), per VNFC and at its end completes; the op occ lists each coordination', async () => {
    const id = await instantiated();
    em.behaviour = (request) =>
      request.coordinationActionName === 'prepare-upgrade' ? { result: 'CONTINUE', reads: 2, retryAfter: 1 } : { result: 'CONTINUE' };
    const request = {
      vnfdId: V2,
      additionalParams: {
        upgrade_type: 'RollingUpdate',
        lcmCoordination: {
          endpoint: em.url,
          actions: [
            { name: 'prepare-upgrade', at: 'start', inputParams: { window: 'now' } },
            { name: 'vnfc-upgraded', at: 'vnfc' },
            { name: 'upgrade-done', at: 'end' },
          ],
        },
      },
    };
    await assertEtsiSchema('vnflcm', 'ChangeCurrentVnfPkgRequest', request);
    const occ = await steps.ended(await steps.operate(`/vnflcm/v2/vnf_instances/${id}/change_vnfpkg`, request), 'COMPLETED');
    assert.equal((await steps.instance<{ vnfdId: string }>(id)).vnfdId, V2);

    const asked = em.coordinationRequests().filter((body) => body.vnfInstanceId === id);
    assert.ok(
      em.requests.every((r) => r.nonConforming === undefined),
      'every LcmCoordRequest conforms to SOL002',
    );
    const names = asked.map((body) => body.coordinationActionName);
    assert.equal(names[0], 'prepare-upgrade', 'the start coordination comes first');
    assert.equal(names.at(-1), 'upgrade-done', 'the end coordination comes last');
    const perVnfc = asked.filter((body) => body.coordinationActionName === 'vnfc-upgraded');
    assert.ok(perVnfc.length >= 2, `one coordination per VNFC the rolling update moved (${perVnfc.length})`);
    for (const body of perVnfc) assert.ok(Array.isArray((body.inputParams as { vnfcInstanceIds?: unknown }).vnfcInstanceIds));
    assert.deepEqual(asked[0]?.inputParams, { window: 'now' });
    assert.equal(asked[0]?.lcmOperationType, 'CHANGE_VNFPKG');
    const links = asked[0]?._links as { vnfLcmOpOcc: { href: string }; vnfInstance: { href: string } };
    const shownLinks = occ._links as { self: { href: string }; vnfInstance: { href: string } };
    assert.equal(links.vnfLcmOpOcc.href, shownLinks.self.href, 'the EM is pointed at the op occ as the API shows it');
    assert.equal(links.vnfInstance.href, shownLinks.vnfInstance.href);
    const reads = em.requests.filter((r) => r.method === 'GET');
    assert.equal(reads.length, 3, 'the running coordination was read until it finished: 202, 202, 200');

    const coordinations = occ.lcmCoordinations as Coordinations;
    assert.equal(coordinations.length, asked.length, 'every coordination is listed');
    for (const entry of coordinations) {
      assert.equal(entry.coordinationResult, 'CONTINUE');
      assert.equal(entry.endpointType, 'MGMT');
      assert.ok(entry.endTime && entry.endTime >= entry.startTime);
    }
    assert.equal(occ.rejectedLcmCoordinations, undefined);
    const shown = (occ.operationParams as { additionalParams: { lcmCoordination: Record<string, unknown> } }).additionalParams.lcmCoordination;
    assert.equal(shown.endpoint, em.url);
    await steps.terminateAndDelete(id);
  });

  it('an ABORT at the start fails the CHANGE_VNFPKG before the VIM is touched, with the EM’s reason; rollback leaves the VNF on its package', async () => {
    const id = await instantiated();
    em.behaviour = () => ({ result: 'ABORT', reason: 'subscribers are being migrated off this VNF' });
    const before = await vimState();
    const path = await steps.operate(`/vnflcm/v2/vnf_instances/${id}/change_vnfpkg`, {
      vnfdId: V2,
      additionalParams: {
        upgrade_type: 'RollingUpdate',
        lcmCoordination: {
          endpoint: em.url,
          // The client authenticates at the EM as asked; the credentials are never shown.
          authentication: { authType: ['BASIC'], paramsBasic: { userName: 'vnfm', password: 'em-secret-password' } },
          actions: [{ name: 'prepare-upgrade' }],
        },
      },
    });
    const occ = await steps.ended(path, 'FAILED_TEMP');
    assert.deepEqual(await vimState(), before, 'no stack, server or image changed');
    const error = occ.error as { title: string; status: number; detail: string };
    assert.equal(error.title, 'LCM coordination aborted');
    assert.match(error.detail, /subscribers are being migrated off this VNF/);
    const [entry] = occ.lcmCoordinations as Coordinations;
    assert.equal(entry?.coordinationResult, 'ABORT');
    assert.ok(!JSON.stringify(occ).includes('em-secret-password'), 'the EM credentials are never returned');
    const sent = em.requests.filter((r) => r.body?.vnfInstanceId === id);
    assert.equal(sent[0]?.headers.authorization, `Basic ${Buffer.from('vnfm:em-secret-password').toString('base64')}`);

    await call('POST', `${path}/rollback`);
    await steps.ended(path, 'ROLLED_BACK');
    assert.equal((await steps.instance<{ vnfdId: string }>(id)).vnfdId, V1);
    await steps.terminateAndDelete(id);
  });

  it('INSTANTIATE coordinated at its start (503 first, asked again after its Retry-After) and its end, TERMINATE at its start', async () => {
    em.behaviour = (request) =>
      request.coordinationActionName === 'admit' ? { result: 'CONTINUE', unavailable: 1, unavailableRetryAfter: 1 } : { result: 'CONTINUE' };
    const id = ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: V1 } })).body as { id: string }).id;
    const lcmCoordination = (actions: unknown[]) => ({ endpoint: em.url, endpointType: 'VNF', actions });
    const occ = await steps.ended(
      await steps.operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, {
        ...INSTANTIATE,
        additionalParams: { lcmCoordination: lcmCoordination([{ name: 'admit' }, { name: 'configure', at: 'end' }]) },
      }),
      'COMPLETED',
    );
    const coordinations = occ.lcmCoordinations as Coordinations;
    assert.deepEqual(
      coordinations.map((entry) => [entry.coordinationActionName, entry.coordinationResult, entry.endpointType]),
      [
        ['admit', 'CONTINUE', 'VNF'],
        ['configure', 'CONTINUE', 'VNF'],
      ],
    );
    const rejected = occ.rejectedLcmCoordinations as Array<{ coordinationActionName: string; rejectionTime: string; delay: string }>;
    assert.equal(rejected.length, 1);
    assert.equal(rejected[0]?.coordinationActionName, 'admit');
    assert.equal(Date.parse(rejected[0]?.delay ?? '') - Date.parse(rejected[0]?.rejectionTime ?? ''), 1000, 'the delay ends when the Retry-After said');
    assert.ok((coordinations[0]?.startTime ?? '') >= (rejected[0]?.delay ?? ''), 'asked again only after the delay');

    const terminated = await steps.ended(
      await steps.operate(`/vnflcm/v2/vnf_instances/${id}/terminate`, {
        terminationType: 'FORCEFUL',
        additionalParams: { lcmCoordination: lcmCoordination([{ name: 'retire' }]) },
      }),
      'COMPLETED',
    );
    assert.deepEqual(
      (terminated.lcmCoordinations as Coordinations).map((entry) => entry.coordinationActionName),
      ['retire'],
    );
    assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`)).status, 204);
  });

  it('a GRACEFUL cancel while the EM is still coordinating cancels the coordination at the EM; FAILED_TEMP with the VIM untouched', async () => {
    const id = await instantiated();
    em.behaviour = () => ({ result: 'CONTINUE', reads: Number.POSITIVE_INFINITY, retryAfter: 1 });
    const before = await vimState();
    const path = await steps.operate(`/vnflcm/v2/vnf_instances/${id}/change_vnfpkg`, {
      vnfdId: V2,
      additionalParams: { upgrade_type: 'RollingUpdate', lcmCoordination: { endpoint: em.url, actions: [{ name: 'long-running' }] } },
    });
    const occId = path.split('/').pop();
    await waitFor('the EM to be asked', () => em.requests.some((r) => r.body?.vnfLcmOpOccId === occId && r.answer === 202));
    const cancelled = await call('POST', `${path}/cancel`, { body: { cancelMode: 'GRACEFUL' } });
    assert.equal(cancelled.status, 202, cancelled.text);
    const occ = await steps.ended(path, 'FAILED_TEMP');
    assert.equal((occ.error as { title: string }).title, 'Operation cancelled');
    const [entry] = occ.lcmCoordinations as Coordinations;
    assert.ok(entry?.endTime, 'the coordination ended');
    assert.ok(
      em.requests.some((r) => r.method === 'POST' && r.path === `/lcmcoord/v1/coordinations/${entry?.id}/cancel`),
      'the EM was asked to cancel it',
    );
    assert.deepEqual(await vimState(), before, 'no stack, server or image changed');
    await call('POST', `${path}/fail`);
    await steps.ended(path, 'FAILED');
    await steps.terminateAndDelete(id);
  });

  it('refuses (422) a request whose coordination cannot work, and starts nothing', async () => {
    const id = await instantiated();
    const reply = await call('POST', `/vnflcm/v2/vnf_instances/${id}/scale`, {
      body: { type: 'SCALE_OUT', aspectId: 'VDU1_scale', additionalParams: { lcmCoordination: { endpoint: em.url, actions: [{ name: 'x', at: 'vnfc' }] } } },
    });
    assert.equal(reply.status, 422, reply.text);
    assert.match(String((reply.body as { detail: string }).detail), /CHANGE_VNFPKG only/);
    await steps.terminateAndDelete(id);
  });
});

// With an NFVO configured (NfvoEndpoint, or the older NfvoGrantEndpoint), every LCM operation asks
// it for a SOL003 grant while STARTING. The NFVO's Grant (201) or its later decision (202, then
// polled at its Retry-After until 200) lets the operation go on; a refusal, or no decision within
// NfvoGrantTimeoutSeconds, ends it ROLLED_BACK with the reason. Calls to the NFVO are retried on 5xx
// and carry an OAuth 2.0 bearer token when configured; a pending grant survives a kill of the VNFM.
// Every exchange the simulated NFVO sees conforms to the SOL003 Granting API.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { buildCsar, SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { assertEtsiSchema } from '../support/etsi.ts';
import { startNfvoSimulator, type NfvoExchange, type NfvoSimulator } from '../support/nfvo-simulator.ts';
import { client, newDataDir, ROOT, settle, startVnfm, type LocalVnfm } from '../support/runtime.ts';
import { waitFor } from '../support/wait.ts';

const INSTANTIATE = {
  flavourId: 'simple',
  extVirtualLinks: [
    { id: 'ext', resourceId: 'public', extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { a: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }] },
  ],
};

interface OpOcc {
  id: string;
  operationState: string;
  grantId?: string;
  _links: { grant?: { href: string } };
  error?: { title: string; status: number; detail: string };
}

async function onboard(vnfm: LocalVnfm): Promise<void> {
  const call = client(vnfm);
  const pkg = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
  await call('PUT', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content`, {
    raw: await buildCsar('openstack-vnf-v1'),
    headers: { 'Content-Type': 'application/zip' },
  });
  await settle(vnfm);
}

/** Creates an instance and asks to instantiate it; resolves with the op occ's path and the instance id. */
async function instantiate(vnfm: LocalVnfm): Promise<{ occPath: string; instanceId: string }> {
  const call = client(vnfm);
  const created = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId } });
  const instanceId = (created.body as { id: string }).id;
  const reply = await call('POST', `/vnflcm/v2/vnf_instances/${instanceId}/instantiate`, { body: INSTANTIATE });
  assert.equal(reply.status, 202, reply.text);
  return { occPath: new URL(reply.headers.get('location') ?? '').pathname, instanceId };
}

async function finished(vnfm: LocalVnfm, occPath: string): Promise<OpOcc> {
  await settle(vnfm);
  return (await client(vnfm)('GET', occPath)).body as OpOcc;
}

/** The exchanges since `from`, as "METHOD status" lines, for assertions on their order. */
const trace = (nfvo: NfvoSimulator, from: number): string[] =>
  nfvo
    .grantExchanges()
    .slice(from)
    .map((e: NfvoExchange) => `${e.method} ${e.status}`);

describe('an NFVO answering grants synchronously and asynchronously', () => {
  let nfvo: NfvoSimulator;
  let vnfm: LocalVnfm;
  const dataDir = newDataDir();
  before(async () => {
    nfvo = await startNfvoSimulator();
    // The older grant-only setting still names the NFVO.
    vnfm = await startVnfm({ dataDir, processGroup: true, env: { VNFM_PARAMETER_OVERRIDES: `NfvoGrantEndpoint=${nfvo.url}` } });
    await onboard(vnfm);
  });
  after(async () => {
    await vnfm.stop();
    await nfvo.close();
    assert.deepEqual(nfvo.nonConforming, []);
  });

  it('takes a Grant answered 201 and records its id on the op occ', async () => {
    nfvo.behaviour = { kind: 'sync' };
    const from = nfvo.grantExchanges().length;
    const { occPath, instanceId } = await instantiate(vnfm);
    const occ = await finished(vnfm, occPath);
    assert.equal(occ.operationState, 'COMPLETED');
    assert.deepEqual(trace(nfvo, from), ['POST 201']);
    const request = nfvo.grantExchanges()[from]?.body as {
      vnfInstanceId: string;
      operation: string;
      flavourId: string;
      addResources: Array<{ type: string; resourceTemplateId: string }>;
    };
    assert.equal(request.vnfInstanceId, instanceId);
    assert.equal(request.operation, 'INSTANTIATE');
    assert.ok(request.addResources.some((r) => r.type === 'COMPUTE' && r.resourceTemplateId === 'VDU1'));
    await assertEtsiSchema('grant', 'GrantRequest', request);
    assert.match(occ.grantId ?? '', /^grant-/);
  });

  it('waits for a Grant answered 202, polling its Location no sooner than each Retry-After asks', async () => {
    nfvo.behaviour = { kind: 'async', pending: 3, retryAfter: 2 };
    const from = nfvo.grantExchanges().length;
    const { occPath } = await instantiate(vnfm);
    const occ = await finished(vnfm, occPath);
    assert.equal(occ.operationState, 'COMPLETED', JSON.stringify(occ.error));
    // One request, three polls answered "still deciding", the fourth the Grant: no poll more, none early.
    assert.deepEqual(trace(nfvo, from), ['POST 202', 'GET 202', 'GET 202', 'GET 202', 'GET 200']);
    assert.deepEqual(
      nfvo
        .grantExchanges()
        .slice(from)
        .filter((e) => e.early),
      [],
    );
    assert.equal(occ.grantId, nfvo.grantExchanges()[from + 4]?.path.split('/').pop());
    // SOL003 5.5.2.13: the op occ links to the NFVO's Individual grant.
    assert.equal(occ._links.grant?.href, `${nfvo.url}/grant/v1/grants/${occ.grantId}`);
  });

  it('keeps polling a pending grant through 503 answers until the NFVO decides', async () => {
    nfvo.behaviour = { kind: 'async', pending: 1, retryAfter: 1, failingPolls: 4 };
    const from = nfvo.grantExchanges().length;
    const { occPath } = await instantiate(vnfm);
    const occ = await finished(vnfm, occPath);
    assert.equal(occ.operationState, 'COMPLETED', JSON.stringify(occ.error));
    // Three attempts in one poll step, then the next step's first attempt, then the grant's own answers.
    assert.deepEqual(trace(nfvo, from), ['POST 202', 'GET 503', 'GET 503', 'GET 503', 'GET 503', 'GET 202', 'GET 200']);
    assert.deepEqual(
      nfvo
        .grantExchanges()
        .slice(from)
        .filter((e) => e.early),
      [],
    );
  });

  it("rolls back an operation whose grant the NFVO refuses, with the NFVO's reason", async () => {
    nfvo.behaviour = { kind: 'refuse', detail: 'no capacity left in zone A' };
    const { occPath, instanceId } = await instantiate(vnfm);
    const occ = await finished(vnfm, occPath);
    assert.equal(occ.operationState, 'ROLLED_BACK');
    assert.equal(occ.error?.status, 403);
    assert.match(occ.error?.detail ?? '', /no capacity left in zone A/);
    const instance = (await client(vnfm)('GET', `/vnflcm/v2/vnf_instances/${instanceId}`)).body as { instantiationState: string };
    assert.equal(instance.instantiationState, 'NOT_INSTANTIATED');
  });

  it('rolls back an operation whose pending grant the NFVO refuses when polled', async () => {
    nfvo.behaviour = { kind: 'refuse', detail: 'the tenant is over its quota', whenPolled: true };
    const from = nfvo.grantExchanges().length;
    const { occPath } = await instantiate(vnfm);
    const occ = await finished(vnfm, occPath);
    assert.equal(occ.operationState, 'ROLLED_BACK');
    assert.match(occ.error?.detail ?? '', /the tenant is over its quota/);
    assert.deepEqual(trace(nfvo, from), ['POST 202', 'GET 403']);
  });

  it('asks again after a 503, as its Retry-After says, and goes on with the Grant', async () => {
    nfvo.behaviour = { kind: 'unavailable', failures: 2, retryAfter: 1 };
    const from = nfvo.grantExchanges().length;
    const { occPath } = await instantiate(vnfm);
    const occ = await finished(vnfm, occPath);
    assert.equal(occ.operationState, 'COMPLETED', JSON.stringify(occ.error));
    assert.deepEqual(trace(nfvo, from), ['POST 503', 'POST 503', 'POST 201']);
    assert.deepEqual(
      nfvo
        .grantExchanges()
        .slice(from)
        .filter((e) => e.early),
      [],
    );
  });

  it('cancels an operation waiting for its grant to ROLLED_BACK at once', async () => {
    nfvo.behaviour = { kind: 'never', retryAfter: 1 };
    const from = nfvo.grantExchanges().length;
    const { occPath, instanceId } = await instantiate(vnfm);
    await waitFor('a poll of the pending grant', () =>
      nfvo
        .grantExchanges()
        .slice(from)
        .some((e) => e.method === 'GET'),
    );
    const reply = await client(vnfm)('POST', `${occPath}/cancel`, { body: { cancelMode: 'GRACEFUL' } });
    assert.equal(reply.status, 202, reply.text);
    const occ = await finished(vnfm, occPath);
    assert.equal(occ.operationState, 'ROLLED_BACK');
    assert.equal(occ.error?.title, 'Operation cancelled');
    const instance = (await client(vnfm)('GET', `/vnflcm/v2/vnf_instances/${instanceId}`)).body as { instantiationState: string };
    assert.equal(instance.instantiationState, 'NOT_INSTANTIATED');
  });

  it('goes on polling a pending grant after the VNFM was killed, without asking for it twice', async () => {
    nfvo.behaviour = { kind: 'never', retryAfter: 1 };
    const from = nfvo.grantExchanges().length;
    const { occPath } = await instantiate(vnfm);
    await waitFor('a poll of the pending grant', () =>
      nfvo
        .grantExchanges()
        .slice(from)
        .some((e) => e.method === 'GET'),
    );
    await vnfm.kill();
    const before = nfvo.grantExchanges().length;
    vnfm = await startVnfm({ dataDir, processGroup: true, env: { VNFM_PARAMETER_OVERRIDES: `NfvoGrantEndpoint=${nfvo.url}` } });
    nfvo.release();
    const occ = await finished(vnfm, occPath);
    assert.equal(occ.operationState, 'COMPLETED', JSON.stringify(occ.error));
    const seen = trace(nfvo, from);
    assert.equal(seen.filter((e) => e.startsWith('POST')).length, 1, seen.join(', '));
    assert.equal(trace(nfvo, before).at(-1), 'GET 200');
  });
});

describe('an NFVO behind OAuth 2.0, and a grant limit', () => {
  let nfvo: NfvoSimulator;
  let vnfm: LocalVnfm;
  before(async () => {
    nfvo = await startNfvoSimulator({ clientId: 'vnfm-at-nfvo', clientSecret: 's3cret-of-the-nfvo' });
    vnfm = await startVnfm({
      env: {
        VNFM_PARAMETER_OVERRIDES: [
          `NfvoEndpoint=${nfvo.url}`,
          // The grant-only setting loses to NfvoEndpoint.
          'NfvoGrantEndpoint=http://127.0.0.1:9/nowhere',
          `NfvoTokenUrl=${nfvo.url}/token`,
          'NfvoClientId=vnfm-at-nfvo',
          'NfvoGrantTimeoutSeconds=3',
        ].join(' '),
      },
    });
    // The documented command stores the client secret, here in the running VNFM's Secrets Manager stand-in.
    const stored = spawn(process.execPath, ['--import', 'tsx', 'scripts/nfvo-secret.ts', 'set'], {
      cwd: ROOT,
      env: { ...process.env, VNFM_DATA_DIR: vnfm.dataDir },
    });
    let output = '';
    stored.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    stored.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    stored.stdin.end('s3cret-of-the-nfvo\n');
    assert.equal(await new Promise((resolve) => stored.once('exit', resolve)), 0, output);
    assert.doesNotMatch(output, /s3cret-of-the-nfvo/);
    await onboard(vnfm);
  });
  after(async () => {
    await vnfm.stop();
    await nfvo.close();
    assert.deepEqual(nfvo.nonConforming, []);
  });

  it("asks for a grant with a bearer token from the NFVO's token endpoint", async () => {
    nfvo.behaviour = { kind: 'async', pending: 1, retryAfter: 1 };
    const { occPath } = await instantiate(vnfm);
    const occ = await finished(vnfm, occPath);
    assert.equal(occ.operationState, 'COMPLETED', JSON.stringify(occ.error));
    assert.ok(nfvo.tokenRequests >= 1);
    const grantCalls = nfvo.grantExchanges();
    assert.deepEqual(
      grantCalls.map((e) => `${e.method} ${e.status}`),
      ['POST 202', 'GET 202', 'GET 200'],
    );
    for (const call of grantCalls) assert.match(call.authorization ?? '', /^Bearer nfvo-token-\d+$/);
  });

  it('rolls back an operation whose grant is not decided within NfvoGrantTimeoutSeconds', async () => {
    nfvo.behaviour = { kind: 'never', retryAfter: 1 };
    const from = nfvo.grantExchanges().length;
    const { occPath } = await instantiate(vnfm);
    const occ = await finished(vnfm, occPath);
    assert.equal(occ.operationState, 'ROLLED_BACK');
    assert.equal(occ.error?.status, 504);
    assert.match(occ.error?.detail ?? '', /did not decide the grant within 3 s/);
    const seen = trace(nfvo, from);
    assert.equal(seen[0], 'POST 202');
    assert.ok(seen.slice(1).every((e) => e === 'GET 202') && seen.length > 1, seen.join(', '));
  });
});

// `npm run nfvo-simulator`, the reference NFVO on its own, as a child process: it prints its URL and
// the override that points `npm start` at it, answers a SOL003 GrantRequest 201 (sync) or 202 with
// a Location that is then polled to 200 (async), logs each request it answers, grants a VNFM's
// INSTANTIATE, and ends cleanly on SIGTERM.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { buildCsar, SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { client, ROOT, settle, startVnfm } from '../support/runtime.ts';
import { waitFor } from '../support/wait.ts';

interface Simulator {
  url: string;
  output(): string;
  stop(): Promise<number | null>;
}

async function startSimulator(args: string[]): Promise<Simulator> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'scripts/nfvo-simulator.ts', '--port', '0', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  // Its banner ends with how to stop it.
  await waitFor('the simulator to print its URL and how to use it', () => gone || output.includes('Ctrl-C stops it'));
  const url = /listening on (http:\/\/\S+)\n/.exec(output)?.[1];
  assert.ok(url, output);
  return {
    url,
    output: () => output,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** A GrantRequest as the VNFM sends it for an INSTANTIATE (SOL003 9.5.2.2). */
function grantRequest(): Record<string, unknown> {
  const vnfInstanceId = crypto.randomUUID();
  const vnfLcmOpOccId = crypto.randomUUID();
  return {
    vnfInstanceId,
    vnfLcmOpOccId,
    vnfdId: SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId,
    flavourId: 'simple',
    operation: 'INSTANTIATE',
    isAutomaticInvocation: false,
    addResources: [{ id: crypto.randomUUID(), type: 'COMPUTE', resourceTemplateId: 'VDU1' }],
    _links: {
      vnfLcmOpOcc: { href: `http://127.0.0.1:9890/vnflcm/v2/vnf_lcm_op_occs/${vnfLcmOpOccId}` },
      vnfInstance: { href: `http://127.0.0.1:9890/vnflcm/v2/vnf_instances/${vnfInstanceId}` },
    },
  };
}

const HEADERS = { 'Content-Type': 'application/json', Version: '1.0.0' };

describe('npm run nfvo-simulator', () => {
  it('answers a grant 201 at once, logs it, says how to point the VNFM at it and stops on SIGTERM', async () => {
    const sim = await startSimulator(['--grant', 'sync']);
    assert.ok(sim.output().includes(`VNFM_PARAMETER_OVERRIDES="NfvoEndpoint=${sim.url}" npm start`), sim.output());
    const request = grantRequest();
    const reply = await fetch(`${sim.url}/grant/v1/grants`, { method: 'POST', headers: HEADERS, body: JSON.stringify(request) });
    assert.equal(reply.status, 201);
    const grant = (await reply.json()) as { id: string; vnfInstanceId: string; _links: { self: { href: string } } };
    assert.equal(grant.vnfInstanceId, request.vnfInstanceId);
    assert.equal(reply.headers.get('location'), `${sim.url}/grant/v1/grants/${grant.id}`, 'the Location names the URL it printed');
    assert.equal(grant._links.self.href, reply.headers.get('location'));
    await waitFor('the log line', () => sim.output().includes('POST /grant/v1/grants 201 (INSTANTIATE of VNF instance'));
    assert.ok(!sim.output().includes('not SOL003'), sim.output());
    assert.equal(await sim.stop(), 0);
  });

  it('answers 202 with a Location, then 202 with Retry-After at each poll it was told to, then 200 with the Grant', async () => {
    const sim = await startSimulator(['--grant', 'async', '--async-polls', '1', '--retry-after', '3']);
    const reply = await fetch(`${sim.url}/grant/v1/grants`, { method: 'POST', headers: HEADERS, body: JSON.stringify(grantRequest()) });
    assert.equal(reply.status, 202);
    assert.equal(reply.headers.get('retry-after'), '3');
    const location = new URL(reply.headers.get('location') ?? '', sim.url).href;
    const pending = await fetch(location, { headers: { Version: '1.0.0' } });
    assert.equal(pending.status, 202);
    const decided = await fetch(location, { headers: { Version: '1.0.0' } });
    assert.equal(decided.status, 200);
    assert.equal(((await decided.json()) as { id: string }).id, location.split('/').pop());
    await waitFor('the log lines', () =>
      /POST \/grant\/v1\/grants 202[\s\S]*GET \/grant\/v1\/grants\/\S+ 202[\s\S]*GET \/grant\/v1\/grants\/\S+ 200/.test(sim.output()),
    );
    assert.equal(await sim.stop(), 0);
  });

  it("places each VDU in the zone --zone names: the Grant lists the zones and a zoneId on the VDU's resources", async () => {
    const sim = await startSimulator(['--zone', 'VDU1=az-1', '--zone', 'VDU2=az-2']);
    const request = grantRequest();
    request.addResources = [
      { id: 'r1', type: 'COMPUTE', resourceTemplateId: 'VDU1' },
      { id: 'r2', type: 'COMPUTE', resourceTemplateId: 'VDU2' },
      { id: 'r3', type: 'VL', resourceTemplateId: 'internalVL1' },
    ];
    const reply = await fetch(`${sim.url}/grant/v1/grants`, { method: 'POST', headers: HEADERS, body: JSON.stringify(request) });
    assert.equal(reply.status, 201);
    const grant = (await reply.json()) as { zones: unknown; addResources: unknown };
    assert.deepEqual(grant.zones, [
      { id: 'zone-1', zoneId: 'az-1' },
      { id: 'zone-2', zoneId: 'az-2' },
    ]);
    assert.deepEqual(grant.addResources, [
      { resourceDefinitionId: 'r1', zoneId: 'zone-1' },
      { resourceDefinitionId: 'r2', zoneId: 'zone-2' },
    ]);
    await waitFor('the log line', () => sim.output().includes('POST /grant/v1/grants 201'));
    assert.ok(!sim.output().includes('not SOL003'), sim.output());
    assert.equal(await sim.stop(), 0);
  });

  it('refuses an unknown --grant with the usage', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/nfvo-simulator.ts', '--grant', 'maybe'], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolveExit) => child.once('close', resolveExit));
    assert.equal(code, 2);
    assert.match(stderr, /--grant "maybe" is not one of sync, async, refuse\nusage: /);
  });

  it("grants the INSTANTIATE of a VNFM started with the override it printed, and logs the VNFM's request", async () => {
    const sim = await startSimulator([]);
    const override = /VNFM_PARAMETER_OVERRIDES="([^"]+)"/.exec(sim.output())?.[1] ?? '';
    assert.equal(override, `NfvoEndpoint=${sim.url}`);
    const vnfm = await startVnfm({ env: { VNFM_PARAMETER_OVERRIDES: override } });
    try {
      const call = client(vnfm);
      const pkg = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
      await call('PUT', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content`, {
        raw: await buildCsar('openstack-vnf-v1'),
        headers: { 'Content-Type': 'application/zip' },
      });
      await settle(vnfm);
      const created = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId } });
      const id = (created.body as { id: string }).id;
      const reply = await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, {
        body: {
          flavourId: 'simple',
          extVirtualLinks: [
            { id: 'ext', resourceId: 'public', extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { a: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }] },
          ],
        },
      });
      assert.equal(reply.status, 202, reply.text);
      await settle(vnfm);
      const occ = (await call('GET', new URL(reply.headers.get('location') ?? '').pathname)).body as { operationState: string; grantId?: string };
      assert.equal(occ.operationState, 'COMPLETED');
      assert.match(occ.grantId ?? '', /^grant-/);
      assert.ok(sim.output().includes(`POST /grant/v1/grants 201 (INSTANTIATE of VNF instance ${id})`), sim.output());
      assert.ok(!sim.output().includes('not SOL003'), sim.output());
    } finally {
      await vnfm.stop();
      await sim.stop();
    }
  });
});

// The VIM registry over HTTP (/vnfm/v1/vims and Tacker's /v1.0/vims) and VIM reachability
// monitoring, against npm start's entry point: the built-in simulators registered again as new VIMs,
// refused registrations that leave nothing behind, unique names, one default per type, masked
// credentials, delete refused while a VNF uses the VIM, and a sweep (run through the local runtime's
// schedule control) moving a faulted VIM to UNREACHABLE, failing LCM requests on it fast, and back.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { client, localControl, settle, startVnfm, type LocalVnfm, type Reply } from '../support/runtime.ts';
import { buildCsar, SAMPLE_PACKAGES } from '../support/csar-builder.ts';

interface SimVims {
  'local-openstack': {
    authUrl: string;
    control: string;
    username: string;
    password: string;
    project: string;
    projectDomain: string;
    userDomain: string;
    region: string;
  };
  'local-kubernetes': { endpoint: string; control: string; bearer_token: string };
}
type Vim = {
  id: string;
  vimId: string;
  name: string;
  vimType: string;
  isDefault: boolean;
  status: string;
  statusChangedAt?: string;
  lastError?: string;
  accessInfo: Record<string, unknown>;
  interfaceInfo: Record<string, unknown>;
};

let vnfm: LocalVnfm;
let call: ReturnType<typeof client>;
let sims: SimVims;
const vnfdId = SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId;
const INSTANTIATE = {
  flavourId: 'simple',
  extVirtualLinks: [
    { id: 'ext', resourceId: 'public', extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { cp1: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }] },
  ],
};

before(async () => {
  // Timers off (sweeps run only when a test asks), and a short per-VIM check time limit.
  vnfm = await startVnfm({ env: { VNFM_SCHEDULE_SCALE: '0', VNFM_PARAMETER_OVERRIDES: 'VimCheckTimeoutSeconds=2' } });
  call = client(vnfm);
  sims = JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8')) as SimVims;
  const pkg = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
  await call('PUT', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content`, {
    raw: await buildCsar('openstack-vnf-v1'),
    headers: { 'Content-Type': 'application/zip' },
  });
  await settle(vnfm);
});
after(async () => {
  await vnfm?.stop();
});

function assertProblem(reply: Reply, status: number, detail?: RegExp): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.headers.get('content-type'), 'application/problem+json');
  if (detail) assert.match((reply.body as { detail: string }).detail, detail);
}

const openStackAccess = (overrides: Record<string, unknown> = {}) => {
  const os = sims['local-openstack'];
  return {
    username: os.username,
    password: os.password,
    project: os.project,
    projectDomain: os.projectDomain,
    userDomain: os.userDomain,
    region: os.region,
    ...overrides,
  };
};

async function register(body: Record<string, unknown>): Promise<Reply> {
  return call('POST', '/vnfm/v1/vims', { body });
}

async function registerOpenStack(name: string, extra: Record<string, unknown> = {}): Promise<Vim> {
  const reply = await register({
    name,
    vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3',
    interfaceInfo: { endpoint: sims['local-openstack'].authUrl },
    accessInfo: openStackAccess(),
    ...extra,
  });
  assert.equal(reply.status, 201, reply.text);
  return reply.body as Vim;
}

async function vims(): Promise<Vim[]> {
  const reply = await call('GET', '/vnfm/v1/vims');
  assert.equal(reply.status, 200, reply.text);
  return reply.body as Vim[];
}

async function sweep(): Promise<{ checked: number; changed: Array<{ vimId: string; to: string }> }> {
  const response = await localControl(vnfm, 'POST', '/_local/schedules/VimMonitorFunction/run');
  assert.equal(response.status, 200, await response.clone().text());
  return response.json() as Promise<{ checked: number; changed: Array<{ vimId: string; to: string }> }>;
}

async function simFaults(method: 'POST' | 'DELETE', fault?: Record<string, unknown>): Promise<void> {
  const response = await fetch(`${sims['local-openstack'].control}faults`, {
    method,
    headers: { 'Content-Type': 'application/json' },
    ...(fault ? { body: JSON.stringify(fault) } : {}),
  });
  assert.ok(response.ok, await response.text());
}

/** A port nothing listens on any more. */
async function closedPortUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', () => resolveListen()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
  return `http://127.0.0.1:${port}/identity/v3`;
}

async function createInstance(): Promise<string> {
  const reply = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId, vnfInstanceName: 'on-registered-vim' } });
  assert.equal(reply.status, 201, reply.text);
  return (reply.body as { id: string }).id;
}

const onVim = (vimId: string) => ({ ...INSTANTIATE, vimConnectionInfo: { vim1: { vimId, vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3' } } });

async function opOccOf(reply: Reply): Promise<Record<string, unknown>> {
  assert.equal(reply.status, 202, reply.text);
  await settle(vnfm);
  return (await call('GET', new URL(reply.headers.get('location') as string).pathname)).body as Record<string, unknown>;
}

describe('VIM registration', () => {
  it('registers both simulators as new VIMs after authenticating, with credentials masked everywhere', async () => {
    const os = await registerOpenStack('os-a', { description: 'the OpenStack simulator again' });
    assert.equal(os.status, 'REACHABLE');
    assert.equal(os.vimId, os.id);
    assert.equal(os.vimType, 'ETSINFV.OPENSTACK_KEYSTONE.V_3');
    assert.equal(os.accessInfo.password, '***');
    assert.equal(os.accessInfo.username, sims['local-openstack'].username);
    assert.equal(os.isDefault, false);

    const k8s = await register({
      name: 'k8s-a',
      vimType: 'kubernetes',
      interfaceInfo: { endpoint: sims['local-kubernetes'].endpoint },
      accessInfo: { bearer_token: sims['local-kubernetes'].bearer_token },
    });
    assert.equal(k8s.status, 201, k8s.text);
    assert.equal((k8s.body as Vim).vimType, 'ETSINFV.KUBERNETES.V_1');
    assert.equal((k8s.body as Vim).accessInfo.bearer_token, '***');
    assert.equal((k8s.body as Vim).status, 'REACHABLE');

    const listed = await vims();
    for (const name of ['local-openstack', 'local-kubernetes', 'os-a', 'k8s-a'])
      assert.ok(
        listed.some((v) => v.name === name),
        name,
      );
    const shown = await call('GET', `/vnfm/v1/vims/${os.id}`);
    const tacker = await call('GET', '/v1.0/vims.json');
    assert.equal(tacker.status, 200, tacker.text);
    const tackerVim = (tacker.body as { vims: Array<Record<string, unknown>> }).vims.find((v) => v.id === os.id) as {
      auth_cred: Record<string, unknown>;
      type: string;
      status: string;
    };
    assert.equal(tackerVim.type, 'openstack');
    assert.equal(tackerVim.auth_cred.password, '***');
    const filtered = await call('GET', `/vnfm/v1/vims?filter=${encodeURIComponent('(eq,name,k8s-a)')}`);
    assert.deepEqual(
      (filtered.body as Vim[]).map((v) => v.name),
      ['k8s-a'],
    );
    for (const reply of [shown, tacker, filtered]) {
      assert.ok(!reply.text.includes(sims['local-openstack'].password));
      assert.ok(!reply.text.includes(sims['local-kubernetes'].bearer_token));
    }
  });

  it('refuses wrong credentials, an unreachable auth URL and unknown types with 4xx, storing nothing', async () => {
    const before = (await vims()).length;
    assertProblem(
      await register({
        name: 'bad-pw',
        vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3',
        interfaceInfo: { endpoint: sims['local-openstack'].authUrl },
        accessInfo: openStackAccess({ password: 'wrong-password-123' }),
      }),
      422,
      /not registered.*(401|[Aa]uthenticat|[Uu]nauthori)/,
    );
    assertProblem(
      await register({
        name: 'bad-token',
        vimType: 'ETSINFV.KUBERNETES.V_1',
        interfaceInfo: { endpoint: sims['local-kubernetes'].endpoint },
        accessInfo: { bearer_token: 'not-the-token' },
      }),
      422,
      /401/,
    );
    assertProblem(
      await register({ name: 'nowhere', vimType: 'openstack', interfaceInfo: { endpoint: await closedPortUrl() }, accessInfo: openStackAccess() }),
      422,
      /not registered/,
    );
    assertProblem(
      await register({ name: 'vmware', vimType: 'VMWARE.VCENTER', interfaceInfo: { endpoint: 'https://vcenter.example.com' }, accessInfo: {} }),
      422,
      /not supported/,
    );
    assertProblem(
      await register({ name: 'incomplete', vimType: 'openstack', interfaceInfo: { endpoint: sims['local-openstack'].authUrl }, accessInfo: { username: 'x' } }),
      422,
      /accessInfo\.password/,
    );
    assertProblem(await register({ vimType: 'openstack' }), 400);
    const after = await vims();
    assert.equal(after.length, before);
    assert.ok(!after.some((v) => ['bad-pw', 'bad-token', 'nowhere'].includes(v.name)));
    // The refused name is free again: registering it with the right password works.
    const retried = await registerOpenStack('bad-pw');
    assert.equal((await call('DELETE', `/vnfm/v1/vims/${retried.id}`)).status, 204);
  });

  it('keeps names unique per tenant (409)', async () => {
    assertProblem(
      await register({ name: 'os-a', vimType: 'openstack', interfaceInfo: { endpoint: sims['local-openstack'].authUrl }, accessInfo: openStackAccess() }),
      409,
      /already registered/,
    );
    assertProblem(
      await register({
        name: 'local-openstack',
        vimType: 'openstack',
        interfaceInfo: { endpoint: sims['local-openstack'].authUrl },
        accessInfo: openStackAccess(),
      }),
      409,
    );
  });

  it('keeps exactly one default per VIM type', async () => {
    const defaults = async (type: string) => (await vims()).filter((v) => v.isDefault && v.vimType === type).map((v) => v.name);
    assert.deepEqual(await defaults('ETSINFV.OPENSTACK_KEYSTONE.V_3'), ['local-openstack']);
    const b = await registerOpenStack('os-default', { isDefault: true });
    assert.equal(b.isDefault, true);
    assert.deepEqual(await defaults('ETSINFV.OPENSTACK_KEYSTONE.V_3'), ['os-default']);
    assert.deepEqual(await defaults('ETSINFV.KUBERNETES.V_1'), ['local-kubernetes']);
    const back = await call('PATCH', '/vnfm/v1/vims/local-openstack', { body: { isDefault: true } });
    assert.equal(back.status, 200, back.text);
    assert.deepEqual(await defaults('ETSINFV.OPENSTACK_KEYSTONE.V_3'), ['local-openstack']);
    assert.equal((await call('DELETE', `/vnfm/v1/vims/${b.id}`)).status, 204);
    assertProblem(await call('GET', `/vnfm/v1/vims/${b.id}`), 404);
  });
});

describe('VIMs in use and reachability', () => {
  it('instantiates on a registered VIM named by vimId, and refuses to delete it until the VNF is terminated', async () => {
    const vim = await registerOpenStack('os-in-use');
    const id = await createInstance();
    const occ = await opOccOf(await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, { body: onVim(vim.id) }));
    assert.equal(occ.operationState, 'COMPLETED', JSON.stringify(occ));
    assertProblem(await call('DELETE', `/vnfm/v1/vims/${vim.id}`), 409, /used by instantiated VNF instance/);
    assertProblem(await call('DELETE', `/v1.0/vims/${vim.id}`), 409);
    const term = await opOccOf(await call('POST', `/vnflcm/v2/vnf_instances/${id}/terminate`, { body: { terminationType: 'FORCEFUL' } }));
    assert.equal(term.operationState, 'COMPLETED', JSON.stringify(term));
    assert.equal((await call('DELETE', `/vnfm/v1/vims/${vim.id}`)).status, 204);
    assert.ok(!(await vims()).some((v) => v.id === vim.id));
  });

  it('moves a failing VIM to UNREACHABLE on a sweep, fails LCM requests on it fast, and back to REACHABLE', async () => {
    const vim = await registerOpenStack('os-flaky');
    const first = await sweep();
    assert.ok(first.checked >= 3);
    assert.equal((await call('GET', `/vnfm/v1/vims/${vim.id}`)).body && ((await call('GET', `/vnfm/v1/vims/${vim.id}`)).body as Vim).status, 'REACHABLE');

    // Keystone answers 503 to every authentication.
    await simFaults('POST', { kind: 'http-5xx', service: 'keystone', status: 503, count: 1000 });
    try {
      const down = await sweep();
      assert.ok(
        down.changed.some((c) => c.vimId === vim.id && c.to === 'UNREACHABLE'),
        JSON.stringify(down),
      );
      const shown = (await call('GET', `/vnfm/v1/vims/${vim.id}`)).body as Vim;
      assert.equal(shown.status, 'UNREACHABLE');
      assert.ok(shown.statusChangedAt && !Number.isNaN(Date.parse(shown.statusChangedAt)));
      assert.match(shown.lastError ?? '', /503|keystone|[Ss]ervice/i);
      const tacker = (await call('GET', `/v1.0/vims/${vim.id}`)).body as { vim: { status: string } };
      assert.equal(tacker.vim.status, 'UNREACHABLE');

      const id = await createInstance();
      const refused = await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, { body: onVim(vim.id) });
      assertProblem(refused, 503, /UNREACHABLE/);
      assert.equal((refused.body as { vimId: string }).vimId, vim.id);
      const occs = (await call('GET', `/vnflcm/v2/vnf_lcm_op_occs?filter=${encodeURIComponent(`(eq,vnfInstanceId,${id})`)}`)).body as unknown[];
      assert.equal(occs.length, 0);
      // The default VIM is on the same simulator: it is UNREACHABLE too, and default-VIM requests fail alike.
      assertProblem(await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, { body: INSTANTIATE }), 503, /local-openstack/);
      const unchanged = await sweep();
      assert.ok(!unchanged.changed.some((c) => c.vimId === vim.id));
      assert.equal(((await call('GET', `/vnfm/v1/vims/${vim.id}`)).body as Vim).statusChangedAt, shown.statusChangedAt);
    } finally {
      await simFaults('DELETE');
    }
    const up = await sweep();
    assert.ok(
      up.changed.some((c) => c.vimId === vim.id && c.to === 'REACHABLE'),
      JSON.stringify(up),
    );
    const back = (await call('GET', `/vnfm/v1/vims/${vim.id}`)).body as Vim;
    assert.equal(back.status, 'REACHABLE');
    assert.equal(back.lastError, undefined);
  });

  it('counts a VIM that does not answer as UNREACHABLE after the check time limit, without holding up the sweep', async () => {
    const vim = await registerOpenStack('os-hanging');
    await simFaults('POST', { kind: 'slow', service: 'keystone', ms: 20_000 });
    try {
      const result = await sweep();
      assert.ok(
        result.changed.some((c) => c.vimId === vim.id && c.to === 'UNREACHABLE'),
        JSON.stringify(result),
      );
      // The Kubernetes VIMs were checked in the same sweep and stay REACHABLE.
      assert.ok((await vims()).filter((v) => v.vimType === 'ETSINFV.KUBERNETES.V_1').every((v) => v.status === 'REACHABLE'));
      assert.match(((await call('GET', `/vnfm/v1/vims/${vim.id}`)).body as Vim).lastError ?? '', /did not answer within 2 s/);
    } finally {
      await simFaults('DELETE');
    }
    await sweep();
    assert.equal(((await call('GET', `/vnfm/v1/vims/${vim.id}`)).body as Vim).status, 'REACHABLE');
  });

  it('never writes VIM credentials to the log', () => {
    const output = vnfm.output();
    assert.ok(!output.includes(sims['local-openstack'].password));
    assert.ok(!output.includes(sims['local-kubernetes'].bearer_token));
    assert.ok(!output.includes('wrong-password-123'));
    assert.ok(!output.includes('not-the-token'));
  });
});

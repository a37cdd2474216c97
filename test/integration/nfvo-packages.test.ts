// VNF packages from the NFVO: creating an instance from a vnfdId only the NFVO has fetches the
// package (SOL003 GET /vnfpkgm/v2/onboarded_vnf_packages/{vnfdId} and its package_content),
// verifies and records it as an upload would be, keeps it for later creates, and refuses a package
// that fails verification without keeping anything. Every exchange the simulated NFVO sees conforms
// to the SOL003 VNF package management API. The NFVO's notifications (to the subscription the VNFM
// makes at its first fetch, authenticated with a client of the VNFM's own made for the NFVO) disable,
// re-enable and withdraw the kept package for new instances; a subscription the NFVO dropped is made
// again at the next fetch. A change_vnfpkg to a vnfdId only the NFVO has fetches it as a create does,
// and a package the NFVO is still onboarding is a 503 with Retry-After, with nothing kept.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createLocalClient } from '../../local/oauth2.ts';
import { buildCsar, SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { startNfvoSimulator, type NfvoSimulator } from '../support/nfvo-simulator.ts';
import { accessToken, adminCredentials, client, newDataDir, ROOT, settle, startVnfm, type LocalVnfm } from '../support/runtime.ts';
import { waitFor } from '../support/wait.ts';

const OPENSTACK = SAMPLE_PACKAGES['openstack-vnf-v1'];
const INSTANTIATE = {
  flavourId: 'simple',
  extVirtualLinks: [
    { id: 'ext', resourceId: 'public', extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { a: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }] },
  ],
};

/** The VNFM's own packages (SOL005 VnfPkgInfo) with this vnfdId. */
async function packagesWith(vnfm: LocalVnfm, vnfdId: string): Promise<Array<Record<string, unknown>>> {
  const listed = await client(vnfm)('GET', `/vnfpkgm/v1/vnf_packages?filter=(eq,vnfdId,${vnfdId})`);
  assert.equal(listed.status, 200, listed.text);
  return listed.body as Array<Record<string, unknown>>;
}

/** `npm run nfvo-secret -- set` with `value` on standard input, into this VNFM's Secrets Manager stand-in. */
async function storeNfvoSecret(vnfm: LocalVnfm, value: Record<string, string>): Promise<void> {
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
  stored.stdin.end(JSON.stringify(value));
  assert.equal(await new Promise((resolve) => stored.once('exit', resolve)), 0, output);
}

interface Problem {
  status: number;
  detail: string;
}

describe('VNF packages fetched from the NFVO', () => {
  let nfvo: NfvoSimulator;
  let vnfm: LocalVnfm;
  const dataDir = newDataDir();
  before(async () => {
    nfvo = await startNfvoSimulator();
    vnfm = await startVnfm({ dataDir, processGroup: true, env: { VNFM_PARAMETER_OVERRIDES: `NfvoEndpoint=${nfvo.url}` } });
    // The operator makes the NFVO a client of the VNFM's own (package notifications need vnfpkgm:write)
    // and stores it with the NFVO's credentials.
    const callback = createLocalClient(vnfm.dataDir, { tenantId: 'nfvo', scopes: ['vnfpkgm:write'] });
    await waitFor("the NFVO's client can take a token", async () => {
      try {
        return Boolean(await accessToken({ ...callback, tokenUrl: adminCredentials(vnfm).tokenUrl }));
      } catch {
        return false;
      }
    });
    await storeNfvoSecret(vnfm, { callbackClientId: callback.clientId, callbackClientSecret: callback.clientSecret });
  });
  after(async () => {
    await vnfm.stop();
    await nfvo.close();
    assert.deepEqual(nfvo.nonConforming, []);
  });

  it('fetches, verifies and uses the package of a vnfdId only the NFVO has, and fetches it once', async () => {
    const nfvoPkgId = nfvo.addPackage({ vnfdId: OPENSTACK.vnfdId, csar: await buildCsar('openstack-vnf-v1') });
    const call = client(vnfm);
    const created = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: OPENSTACK.vnfdId } });
    assert.equal(created.status, 201, created.text);
    const instance = created.body as { id: string; vnfdId: string; vnfProductName: string };
    assert.equal(instance.vnfdId, OPENSTACK.vnfdId);
    assert.equal(instance.vnfProductName, OPENSTACK.productName);
    assert.deepEqual(
      nfvo
        .packageExchanges(OPENSTACK.vnfdId)
        .map((e) => `${e.method} ${e.path.replace(`/vnfpkgm/v2/onboarded_vnf_packages/${OPENSTACK.vnfdId}`, '')} ${e.status}`),
      ['GET  200', 'GET /package_content 200'],
    );
    // Recorded as an onboarded package of the VNFM's own, with what onboarding took from the CSAR.
    const recorded = await packagesWith(vnfm, OPENSTACK.vnfdId);
    assert.equal(recorded.length, 1);
    assert.equal(recorded[0]?.onboardingState, 'ONBOARDED');
    assert.equal(recorded[0]?.operationalState, 'ENABLED');
    assert.equal(recorded[0]?.vnfProductName, OPENSTACK.productName);
    assert.notEqual(recorded[0]?.id, nfvoPkgId);

    // Usable: it instantiates on the OpenStack simulator.
    const reply = await call('POST', `/vnflcm/v2/vnf_instances/${instance.id}/instantiate`, { body: INSTANTIATE });
    assert.equal(reply.status, 202, reply.text);
    await settle(vnfm);
    const occ = (await call('GET', new URL(reply.headers.get('location') ?? '').pathname)).body as { operationState: string; error?: unknown };
    assert.equal(occ.operationState, 'COMPLETED', JSON.stringify(occ.error));

    // A second create takes the package kept from the first: nothing more is asked of the NFVO.
    const again = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: OPENSTACK.vnfdId } });
    assert.equal(again.status, 201, again.text);
    assert.equal((await packagesWith(vnfm, OPENSTACK.vnfdId)).length, 1);
    assert.equal(nfvo.packageExchanges(OPENSTACK.vnfdId).length, 2);
  });

  it("follows the NFVO's notifications: DISABLED and deleted packages refuse new instances, ENABLED again and re-added ones take them", async () => {
    const call = client(vnfm);
    const create = () => call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: OPENSTACK.vnfdId } });
    // Subscribed at the first fetch, to every package change, with the credentials to call back with.
    assert.equal(nfvo.pkgmSubscriptions.length, 1);
    const subscription = nfvo.pkgmSubscriptions[0];
    assert.ok(subscription);
    assert.equal(new URL(subscription.request.callbackUri).pathname, '/vnfm/v1/nfvo/pkgm_notifications');
    assert.deepEqual((subscription.request.authentication as { authType?: string[] }).authType, ['OAUTH2_CLIENT_CREDENTIALS']);

    await nfvo.setOperationalState(OPENSTACK.vnfdId, 'DISABLED');
    assert.deepEqual(subscription.deliveries, [204]);
    const refused = await create();
    assert.equal(refused.status, 422, refused.text);
    assert.match((refused.body as Problem).detail, /DISABLED/);
    // The instance made from it before is untouched.
    const instances = (await call('GET', '/vnflcm/v2/vnf_instances')).body as Array<{ vnfdId: string; instantiationState: string }>;
    assert.ok(instances.some((i) => i.vnfdId === OPENSTACK.vnfdId && i.instantiationState === 'INSTANTIATED'));

    await nfvo.setOperationalState(OPENSTACK.vnfdId, 'ENABLED');
    assert.equal((await create()).status, 201);
    const fetchesBefore = nfvo.packageExchanges(OPENSTACK.vnfdId).length;
    assert.equal(fetchesBefore, 2);

    // Deleted at the NFVO: refused, and fetched again once the NFVO has it again.
    await nfvo.deletePackage(OPENSTACK.vnfdId);
    assert.deepEqual(subscription.deliveries, [204, 204, 204]);
    const gone = await create();
    assert.equal(gone.status, 422, gone.text);
    assert.match((gone.body as Problem).detail, /here or at the NFVO/);
    nfvo.addPackage({ vnfdId: OPENSTACK.vnfdId, csar: await buildCsar('openstack-vnf-v1') });
    const refetched = await create();
    assert.equal(refetched.status, 201, refetched.text);
    assert.ok(
      nfvo
        .packageExchanges(OPENSTACK.vnfdId)
        .slice(fetchesBefore)
        .some((e) => e.path.endsWith('/package_content') && e.status === 200),
    );
    const kept = await packagesWith(vnfm, OPENSTACK.vnfdId);
    assert.deepEqual(kept.map((p) => p.operationalState).sort(), ['DISABLED', 'ENABLED']);
  });

  it('refuses notifications from anyone but the NFVO', async () => {
    const other = createLocalClient(vnfm.dataDir, { tenantId: 'someone', scopes: ['vnfpkgm:write'] });
    const credentials = { ...other, tokenUrl: adminCredentials(vnfm).tokenUrl };
    await waitFor('the other client can take a token', async () => {
      try {
        return Boolean(await accessToken(credentials));
      } catch {
        return false;
      }
    });
    const reply = await client(vnfm, credentials)('POST', '/vnfm/v1/nfvo/pkgm_notifications', {
      body: { notificationType: 'VnfPackageChangeNotification', vnfPkgId: 'x', vnfdId: OPENSTACK.vnfdId, changeType: 'PKG_DELETE' },
    });
    assert.equal(reply.status, 403, reply.text);
  });

  it('refuses a vnfdId neither the VNFM nor the NFVO has', async () => {
    const vnfdId = '0b8a5c3e-1111-4e2b-9d4c-000000000000';
    const reply = await client(vnfm)('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId } });
    assert.equal(reply.status, 422, reply.text);
    assert.match((reply.body as Problem).detail, new RegExp(`no VNF package with vnfdId ${vnfdId} here or at the NFVO`));
  });

  it('refuses a tampered package from the NFVO with the verification reason, and keeps nothing of it', async () => {
    const { vnfdId } = SAMPLE_PACKAGES['k8s-cnf-v1'];
    const csar = await buildCsar('k8s-cnf-v1', {
      mutateAfterManifest: (files) => files.set('Files/kubernetes/deployment.yaml', Buffer.from('kind: Deployment # changed after signing\n')),
    });
    nfvo.addPackage({ vnfdId, csar });
    const call = client(vnfm);
    const reply = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId } });
    assert.equal(reply.status, 422, reply.text);
    assert.match((reply.body as Problem).detail, /refused: .*Files\/kubernetes\/deployment\.yaml/);
    assert.match((reply.body as Problem).detail, /hash|digest/i);
    assert.deepEqual(await packagesWith(vnfm, vnfdId), []);
  });

  it('answers 422 naming why when the NFVO has the package but not ENABLED', async () => {
    const { vnfdId } = SAMPLE_PACKAGES['openstack-vnf-v2'];
    nfvo.addPackage({ vnfdId, csar: await buildCsar('openstack-vnf-v2'), operationalState: 'DISABLED' });
    const reply = await client(vnfm)('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId } });
    assert.equal(reply.status, 422, reply.text);
    assert.match((reply.body as Problem).detail, /ONBOARDED and DISABLED; it must be ONBOARDED and ENABLED/);
    assert.deepEqual(
      nfvo.packageExchanges(vnfdId).map((e) => e.path.endsWith('/package_content')),
      [false],
    );
  });

  it('answers 503 with Retry-After while the NFVO cannot answer', async () => {
    const { vnfdId } = SAMPLE_PACKAGES['openstack-vnf-v2'];
    nfvo.pkgmFailures = 3;
    const reply = await client(vnfm)('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId } });
    assert.equal(reply.status, 503, reply.text);
    assert.match(reply.headers.get('retry-after') ?? '', /^\d+$/);
    assert.equal(nfvo.pkgmFailures, 0);
  });

  it('onboards once when two creates ask for the same unknown vnfdId at once', async () => {
    const { vnfdId } = SAMPLE_PACKAGES['k8s-cnf-v2'];
    nfvo.addPackage({ vnfdId, csar: await buildCsar('k8s-cnf-v2') });
    const call = client(vnfm);
    const replies = await Promise.all([1, 2].map(() => call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId } })));
    assert.deepEqual(
      replies.map((r) => r.status),
      [201, 201],
      replies.map((r) => r.text).join('\n'),
    );
    assert.equal(nfvo.packageExchanges(vnfdId).filter((e) => e.path.endsWith('/package_content')).length, 1);
    assert.equal((await packagesWith(vnfm, vnfdId)).length, 1);
  });

  it('answers 503 with Retry-After while the NFVO is still onboarding the package, and keeps nothing of it', async () => {
    const { vnfdId } = SAMPLE_PACKAGES['k8s-cnf-v1'];
    nfvo.addPackage({ vnfdId, csar: await buildCsar('k8s-cnf-v1'), onboardingState: 'PROCESSING', operationalState: 'DISABLED' });
    const asked = nfvo.packageExchanges(vnfdId).length;
    const reply = await client(vnfm)('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId } });
    assert.equal(reply.status, 503, reply.text);
    assert.equal(reply.headers.get('retry-after'), '10');
    assert.match(
      (reply.body as Problem).detail,
      new RegExp(`The NFVO is still onboarding the VNF package with vnfdId ${vnfdId} \\(its VNF package \\S+ is PROCESSING\\)`),
    );
    // Its VnfPkgInfo only: no content asked for, no record kept, no instance made.
    assert.deepEqual(
      nfvo
        .packageExchanges(vnfdId)
        .slice(asked)
        .map((e) => `${e.method} ${e.path.endsWith('/package_content')} ${e.status}`),
      ['GET false 200'],
    );
    assert.deepEqual(await packagesWith(vnfm, vnfdId), []);
    const instances = (await client(vnfm)('GET', '/vnflcm/v2/vnf_instances')).body as Array<{ vnfdId: string }>;
    assert.ok(!instances.some((i) => i.vnfdId === vnfdId));

    // ONBOARDED by its VnfPkgInfo, but its content answered 409 (back to onboarding meanwhile): the same,
    // and the record the download had started is gone again.
    nfvo.addPackage({ vnfdId, csar: await buildCsar('k8s-cnf-v1') });
    nfvo.contentConflicts = 1;
    const conflict = await client(vnfm)('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId } });
    assert.equal(conflict.status, 503, conflict.text);
    assert.equal(conflict.headers.get('retry-after'), '10');
    assert.match((conflict.body as Problem).detail, /still onboarding the VNF package .*its package content answered 409/);
    assert.equal(nfvo.contentConflicts, 0);
    assert.deepEqual(await packagesWith(vnfm, vnfdId), []);
    // The NFVO is left with it still onboarding, for the next test.
    nfvo.addPackage({ vnfdId, csar: await buildCsar('k8s-cnf-v1'), onboardingState: 'PROCESSING', operationalState: 'DISABLED' });
  });

  it('fetches the package a change_vnfpkg names from the NFVO, subscribing again first when the NFVO dropped the subscription', async () => {
    const v1 = SAMPLE_PACKAGES['k8s-cnf-v1'].vnfdId;
    const v2 = SAMPLE_PACKAGES['k8s-cnf-v2'].vnfdId;
    const call = client(vnfm);
    const defFiles = ['Files/kubernetes/deployment.yaml', 'Files/kubernetes/service.yaml'];
    // A CNF on the package of v2 kept from the NFVO.
    const id = ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: v2 } })).body as { id: string }).id;
    const instantiate = await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, {
      body: { flavourId: 'simple', additionalParams: { 'lcm-kubernetes-def-files': defFiles, namespace: 'nfvo-change' } },
    });
    assert.equal(instantiate.status, 202, instantiate.text);
    await settle(vnfm);
    const instantiated = (await call('GET', new URL(instantiate.headers.get('location') ?? '').pathname)).body as { operationState: string; error?: unknown };
    assert.equal(instantiated.operationState, 'COMPLETED', JSON.stringify(instantiated.error));

    // The NFVO loses the VNFM's subscription, and finishes onboarding v1.
    const dropped = nfvo.pkgmSubscriptions[0]?.id;
    assert.ok(dropped);
    nfvo.dropPkgmSubscriptions();
    nfvo.addPackage({ vnfdId: v1, csar: await buildCsar('k8s-cnf-v1') });
    const asked = nfvo.exchanges.length;

    const change = await call('POST', `/vnflcm/v2/vnf_instances/${id}/change_vnfpkg`, {
      body: { vnfdId: v1, additionalParams: { upgrade_type: 'RollingUpdate', 'lcm-kubernetes-def-files': defFiles } },
    });
    assert.equal(change.status, 202, change.text);
    await settle(vnfm);
    const occ = (await call('GET', new URL(change.headers.get('location') ?? '').pathname)).body as { operationState: string; error?: unknown };
    assert.equal(occ.operationState, 'COMPLETED', JSON.stringify(occ.error));
    assert.equal(((await call('GET', `/vnflcm/v2/vnf_instances/${id}`)).body as { vnfdId: string }).vnfdId, v1);

    // Fetched, verified and kept as a create would; the dropped subscription was noticed at that fetch and made again.
    const since = nfvo.exchanges.slice(asked).map((e) => `${e.method} ${e.path} ${e.status}`);
    assert.deepEqual(since, [
      `GET /vnfpkgm/v2/onboarded_vnf_packages/${v1} 200`,
      `GET /vnfpkgm/v2/subscriptions/${dropped} 404`,
      'POST /vnfpkgm/v2/subscriptions 201',
      `GET /vnfpkgm/v2/onboarded_vnf_packages/${v1}/package_content 200`,
      // The change's grant.
      'POST /grant/v1/grants 201',
    ]);
    const kept = await packagesWith(vnfm, v1);
    assert.deepEqual(
      kept.map((p) => `${p.onboardingState} ${p.operationalState} ${p.usageState}`),
      ['ONBOARDED ENABLED IN_USE'],
    );
    assert.equal(nfvo.pkgmSubscriptions.length, 1);
    assert.notEqual(nfvo.pkgmSubscriptions[0]?.id, dropped);

    // The new subscription carries the NFVO's word again.
    await nfvo.setOperationalState(v1, 'DISABLED');
    assert.deepEqual(nfvo.pkgmSubscriptions[0]?.deliveries, [204]);
    assert.deepEqual(
      (await packagesWith(vnfm, v1)).map((p) => p.operationalState),
      ['DISABLED'],
    );
    await nfvo.setOperationalState(v1, 'ENABLED');
  });

  it('keeps using packages uploaded to the VNFM, without asking the NFVO', async () => {
    const { vnfdId } = SAMPLE_PACKAGES['openstack-vnf-v2'];
    const call = client(vnfm);
    const pkg = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
    const upload = await call('PUT', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content`, {
      raw: await buildCsar('openstack-vnf-v2'),
      headers: { 'Content-Type': 'application/zip' },
    });
    assert.equal(upload.status, 202, upload.text);
    await settle(vnfm);
    const asked = nfvo.packageExchanges(vnfdId).length;
    const created = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId } });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(
      (await packagesWith(vnfm, vnfdId)).map((p) => p.id),
      [pkg],
    );
    assert.equal(nfvo.packageExchanges(vnfdId).length, asked);
  });
});

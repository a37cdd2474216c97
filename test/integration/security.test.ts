// SOL013 8 security over HTTP against the local runtime: every route of template.yaml refuses a
// request without a valid token (401 + WWW-Authenticate, ProblemDetails), a token without the
// route's scope gets 403, and tenants are isolated: another tenant's records look exactly like
// records that do not exist (404, absent from lists), and its changes are never notified.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { loadTemplate } from '../../local/template.ts';
import { createLocalClient } from '../../local/oauth2.ts';
import { accessToken, adminCredentials, client, ROOT, seedPackage, settle, startVnfm, type ClientCredentials, type LocalVnfm, type Reply } from '../support/runtime.ts';
import { startNfvoSink, type NfvoSink } from '../support/nfvo-sink.ts';

const TENANT_SCOPES = ['vnflcm:read', 'vnflcm:write', 'vnfpkgm:read', 'vnfpkgm:write', 'subscriptions:read', 'subscriptions:write', 'vims:read', 'vims:write', 'vnffm:read', 'vnffm:write'];

let vnfm: LocalVnfm;
let sink: NfvoSink;
let tenantA: ClientCredentials;
let tenantB: ClientCredentials;

function newClient(tenantId: string, scopes: string[]): ClientCredentials {
  return { ...createLocalClient(vnfm.dataDir, { tenantId, scopes }), tokenUrl: adminCredentials(vnfm).tokenUrl };
}

function assertUnauthorized(reply: Reply, what: string): void {
  assert.equal(reply.status, 401, `${what}: ${reply.text}`);
  assert.match(reply.headers.get('www-authenticate') ?? '', /^Bearer realm="vnfm"/, what);
  assert.equal(reply.headers.get('content-type'), 'application/problem+json', what);
  assert.equal((reply.body as { status?: number }).status, 401, what);
}

before(async () => {
  vnfm = await startVnfm();
  sink = await startNfvoSink();
  tenantA = newClient('tenant-a', TENANT_SCOPES);
  tenantB = newClient('tenant-b', TENANT_SCOPES);
});
after(async () => {
  await sink?.close();
  await vnfm?.stop();
});

describe('authentication', () => {
  it('writes credentials.json (0600) on first start and says where it is', () => {
    const path = join(vnfm.dataDir, 'credentials.json');
    const credentials = adminCredentials(vnfm);
    assert.ok(credentials.clientId && credentials.clientSecret);
    assert.equal(credentials.tokenUrl, `${vnfm.url}/oauth2/token`);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(join(vnfm.dataDir, 'auth', 'signing-key.json')).mode & 0o777, 0o600);
    assert.ok(vnfm.output().includes(path), 'the startup output names the credentials file');
    assert.ok(!vnfm.output().includes(credentials.clientSecret), 'the secret is never printed');
  });

  it('answers every route of template.yaml without a token with 401, WWW-Authenticate and ProblemDetails (api_versions excepted)', async () => {
    const template = loadTemplate(join(ROOT, 'template.yaml'));
    const call = client(vnfm);
    const paths = new Set<string>();
    for (const resource of Object.values(template.Resources)) {
      const events = ((resource.Properties ?? {}) as { Events?: Record<string, { Type: string; Properties?: { Path?: string } }> }).Events ?? {};
      for (const event of Object.values(events)) if (event.Type === 'HttpApi') paths.add(event.Properties?.Path ?? '/no/such/route');
    }
    assert.ok(paths.size > 30, `found ${paths.size} routes`);
    for (const path of paths) {
      const concrete = path.replace(/\{[A-Za-z0-9_]+\+\}/g, 'a/b.txt').replace(/\{[A-Za-z0-9_]+\}/g, crypto.randomUUID());
      for (const method of ['GET', 'POST', 'DELETE']) {
        const reply = await call(method, concrete, { token: null, ...(method === 'POST' ? { body: {} } : {}) });
        if (/\/api_versions$/.test(path)) {
          assert.ok(reply.status !== 401 && reply.status !== 403, `${method} ${path} is public`);
        } else {
          assertUnauthorized(reply, `${method} ${path}`);
        }
      }
    }
  });

  it('refuses a token with a bad signature, an expired token, an unknown scheme and wrong Basic credentials (401)', async () => {
    const call = client(vnfm);
    const path = '/vnflcm/v2/vnf_instances';
    const stranger = await generateKeyPair('ES256');
    const forged = await new SignJWT({ client_id: tenantA.clientId, token_use: 'access', scope: 'vnfm/admin vnfm/tenant:default' })
      .setProtectedHeader({ alg: 'ES256', kid: 'x' }).setIssuer(vnfm.url).setSubject(tenantA.clientId).setIssuedAt().setExpirationTime('1h').sign(stranger.privateKey);
    assertUnauthorized(await call('GET', path, { token: forged }), 'forged');
    const jwk = JSON.parse(readFileSync(join(vnfm.dataDir, 'auth', 'signing-key.json'), 'utf8')) as JWK;
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ client_id: tenantA.clientId, token_use: 'access', scope: 'vnfm/vnflcm:read vnfm/tenant:tenant-a' })
      .setProtectedHeader({ alg: 'ES256', kid: jwk.kid as string }).setIssuer(vnfm.url).setSubject(tenantA.clientId).setIssuedAt(now - 7200).setExpirationTime(now - 3600).sign(await importJWK(jwk, 'ES256'));
    const expiredReply = await call('GET', path, { token: expired });
    assertUnauthorized(expiredReply, 'expired');
    assert.match((expiredReply.body as { detail: string }).detail, /expired/);
    assertUnauthorized(await call('GET', path, { token: 'not.a.jwt' }), 'garbage');
    assertUnauthorized(await call('GET', path, { token: null, headers: { Authorization: 'Digest abc' } }), 'unknown scheme');
    const wrongBasic = `Basic ${Buffer.from(`${tenantA.clientId}:wrong`).toString('base64')}`;
    assertUnauthorized(await call('GET', path, { token: null, headers: { Authorization: wrongBasic } }), 'wrong secret');
    // The same requests with valid credentials in each accepted form.
    assert.equal((await call('GET', path, { token: null, headers: { 'X-Auth-Token': await accessToken(tenantA) } })).status, 200);
    const basic = `Basic ${Buffer.from(`${tenantA.clientId}:${tenantA.clientSecret}`).toString('base64')}`;
    assert.equal((await call('GET', path, { token: null, headers: { Authorization: basic } })).status, 200);
  });

  it('answers 403 ProblemDetails when the token lacks the scope of the route', async () => {
    const reader = newClient('tenant-a', ['vnfpkgm:read']);
    const call = client(vnfm, reader);
    assert.equal((await call('GET', '/vnfpkgm/v1/vnf_packages')).status, 200);
    for (const [method, path] of [['POST', '/vnfpkgm/v1/vnf_packages'], ['GET', '/vnflcm/v2/vnf_instances'], ['GET', '/vnflcm/v1/vnf_lcm_op_occs'], ['GET', '/vnflcm/v2/subscriptions'], ['GET', '/no/such/route']] as const) {
      const reply = await call(method, path, method === 'POST' ? { body: {} } : {});
      assert.equal(reply.status, 403, `${method} ${path}: ${reply.text}`);
      assert.equal(reply.headers.get('content-type'), 'application/problem+json');
      assert.match(reply.headers.get('www-authenticate') ?? '', /insufficient_scope/);
    }
    // A token asked for a narrower scope than the client has is narrower.
    const narrow = await accessToken(tenantA, 'vnflcm:read');
    assert.equal((await client(vnfm)('GET', '/vnflcm/v2/vnf_instances', { token: narrow })).status, 200);
    assert.equal((await client(vnfm)('POST', '/vnflcm/v2/vnf_instances', { token: narrow, body: { vnfdId: 'x' } })).status, 403);
  });
});

describe('tenant isolation', () => {
  it('hides packages, instances, op occs and subscriptions of another tenant (404, absent from lists); an admin sees them', async () => {
    const a = client(vnfm, tenantA);
    const b = client(vnfm, tenantB);
    const admin = client(vnfm);

    // Packages
    const pkgB = (await b('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string };
    for (const [method, path, body] of [
      ['GET', `/vnfpkgm/v1/vnf_packages/${pkgB.id}`], ['PATCH', `/vnfpkgm/v1/vnf_packages/${pkgB.id}`, { userDefinedData: { x: '1' } }],
      ['DELETE', `/vnfpkgm/v1/vnf_packages/${pkgB.id}`], ['GET', `/vnfpkgm/v2/vnf_packages/${pkgB.id}/package_content`],
      ['POST', `/vnfpkgm/v1/vnf_packages/${pkgB.id}/package_content/upload_url`],
    ] as Array<[string, string, unknown?]>) {
      assert.equal((await a(method, path, { headers: { Accept: '*/*' }, ...(body === undefined ? {} : { body }) })).status, 404, `${method} ${path}`);
    }
    assert.ok(!((await a('GET', '/vnfpkgm/v1/vnf_packages')).body as Array<{ id: string }>).some((p) => p.id === pkgB.id));
    assert.ok(!((await a('GET', `/vnfpkgm/v1/vnf_packages?filter=(eq,id,${pkgB.id})`)).body as unknown[]).length);
    assert.equal((await admin('GET', `/vnfpkgm/v1/vnf_packages/${pkgB.id}`)).status, 200);

    // Instances: B's onboarded package is not A's to instantiate from either.
    const onboarded = await seedPackage(vnfm, { tenantId: 'tenant-b' });
    assert.equal((await a('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: onboarded.vnfdId } })).status, 422);
    const subA = await a('POST', '/vnflcm/v2/subscriptions', { body: { callbackUri: `${sink.url}/cb/tenant-a` } });
    assert.equal(subA.status, 201, subA.text);
    const created = await b('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: onboarded.vnfdId, vnfInstanceName: 'b-vnf' } });
    assert.equal(created.status, 201, created.text);
    const vnfB = (created.body as { id: string }).id;
    for (const [method, path, body] of [
      ['GET', `/vnflcm/v2/vnf_instances/${vnfB}`], ['GET', `/vnflcm/v1/vnf_instances/${vnfB}`],
      ['PATCH', `/vnflcm/v2/vnf_instances/${vnfB}`, { vnfInstanceName: 'stolen' }], ['DELETE', `/vnflcm/v2/vnf_instances/${vnfB}`],
      ['POST', `/vnflcm/v2/vnf_instances/${vnfB}/instantiate`, { flavourId: 'simple' }], ['POST', `/vnflcm/v2/vnf_instances/${vnfB}/terminate`, { terminationType: 'FORCEFUL' }],
      ['POST', `/vnflcm/v2/vnf_instances/${vnfB}/scale`, { type: 'SCALE_OUT', aspectId: 'x' }], ['POST', `/vnflcm/v2/vnf_instances/${vnfB}/heal`, {}],
    ] as Array<[string, string, unknown?]>) {
      const reply = await a(method, path, body === undefined ? {} : { body, ...(method === 'PATCH' ? { headers: { 'Content-Type': 'application/merge-patch+json' } } : {}) });
      assert.equal(reply.status, 404, `${method} ${path}: ${reply.text}`);
    }
    assert.ok(!((await a('GET', '/vnflcm/v2/vnf_instances')).body as Array<{ id: string }>).some((i) => i.id === vnfB));
    assert.equal(((await a('GET', `/vnflcm/v2/vnf_instances?filter=(eq,id,${vnfB})`)).body as unknown[]).length, 0);
    assert.equal((await admin('GET', `/vnflcm/v2/vnf_instances/${vnfB}`)).status, 200);

    // Op occs: B's modification, invisible and untouchable for A; it records B's client.
    const patched = await b('PATCH', `/vnflcm/v2/vnf_instances/${vnfB}`, { body: { vnfInstanceName: 'b-renamed' }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    assert.equal(patched.status, 202, patched.text);
    const opOccId = (patched.headers.get('location') ?? '').split('/').pop() as string;
    await settle(vnfm);
    for (const [method, path] of [['GET', `/vnflcm/v2/vnf_lcm_op_occs/${opOccId}`], ['POST', `/vnflcm/v2/vnf_lcm_op_occs/${opOccId}/retry`], ['POST', `/vnflcm/v2/vnf_lcm_op_occs/${opOccId}/rollback`], ['POST', `/vnflcm/v2/vnf_lcm_op_occs/${opOccId}/fail`]]) {
      assert.equal((await a(method as string, path as string)).status, 404, `${method} ${path}`);
    }
    assert.ok(!((await a('GET', '/vnflcm/v2/vnf_lcm_op_occs')).body as Array<{ id: string }>).some((o) => o.id === opOccId));
    assert.equal((await b('GET', `/vnflcm/v2/vnf_lcm_op_occs/${opOccId}`)).status, 200);
    assert.equal((await admin('GET', `/vnflcm/v2/vnf_lcm_op_occs/${opOccId}`)).status, 200);
    const documents = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: vnfm.endpoints.dynamodb, region: vnfm.endpoints.region, credentials: { accessKeyId: 'l', secretAccessKey: 'l' } }));
    const stored = (await documents.send(new GetCommand({ TableName: 'VnfLcmOpOccsTable', Key: { id: opOccId } }))).Item as { startedBy?: string; tenantId: string };
    assert.equal(stored.startedBy, tenantB.clientId);
    assert.equal(stored.tenantId, 'tenant-b');
    assert.ok(!('startedBy' in ((await b('GET', `/vnflcm/v2/vnf_lcm_op_occs/${opOccId}`)).body as object)), 'internal, not in the API');

    // Subscriptions: B's is A's 404; A's, even one naming B's instance, hears nothing about it.
    const subB = await b('POST', '/vnflcm/v2/subscriptions', { body: { callbackUri: `${sink.url}/cb/tenant-b` } });
    assert.equal(subB.status, 201, subB.text);
    const subBId = (subB.body as { id: string }).id;
    assert.equal((await a('GET', `/vnflcm/v2/subscriptions/${subBId}`)).status, 404);
    assert.equal((await a('DELETE', `/vnflcm/v2/subscriptions/${subBId}`)).status, 404);
    assert.ok(!((await a('GET', '/vnflcm/v2/subscriptions')).body as Array<{ id: string }>).some((s) => s.id === subBId));
    assert.equal((await admin('GET', `/vnflcm/v2/subscriptions/${subBId}`)).status, 200);
    const naming = await a('POST', '/vnflcm/v2/subscriptions', { body: { callbackUri: `${sink.url}/cb/tenant-a-naming-b`, filter: { vnfInstanceSubscriptionFilter: { vnfInstanceIds: [vnfB] } } } });
    assert.equal(naming.status, 201, naming.text);
    const patchedAgain = await b('PATCH', `/vnflcm/v2/vnf_instances/${vnfB}`, { body: { vnfInstanceDescription: 'again' }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    assert.equal(patchedAgain.status, 202);
    await settle(vnfm);
    assert.equal((await b('DELETE', `/vnflcm/v2/vnf_instances/${vnfB}`)).status, 204);
    await settle(vnfm);
    assert.ok(sink.accepted('/cb/tenant-b').some((n) => n.vnfInstanceId === vnfB), 'tenant B is notified about its instance');
    assert.ok(sink.accepted('/cb/tenant-b').some((n) => n.notificationType === 'VnfIdentifierDeletionNotification'));
    assert.deepEqual(sink.accepted('/cb/tenant-a').filter((n) => n.vnfInstanceId === vnfB), []);
    assert.deepEqual(sink.accepted('/cb/tenant-a-naming-b'), []);
  });
});

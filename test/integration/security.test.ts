// SOL013 8 security over HTTP against the local runtime: every route of template.yaml refuses a
// request without a valid token (401 + WWW-Authenticate, ProblemDetails), a token without the
// route's scope gets 403, and tenants are isolated: another tenant's records look exactly like
// records that do not exist (404, absent from lists), and its changes are never notified.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { decodeJwt, generateKeyPair, SignJWT } from 'jose';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { loadTemplate } from '../../local/template.ts';
import { encodeMarker } from '../../lib/sol/paging.ts';
import { createLocalClient } from '../../local/oauth2.ts';
import {
  accessToken,
  deploymentSigningKey,
  openStackAccessInfo,
  adminCredentials,
  client,
  localControl,
  ROOT,
  seedPackage,
  settle,
  startVnfm,
  type ClientCredentials,
  type LocalVnfm,
  type Reply,
} from '../support/runtime.ts';
import { startNfvoSink, type NfvoSink } from '../support/nfvo-sink.ts';
import { buildCsar, SAMPLE_PACKAGES } from '../support/csar-builder.ts';

const TENANT_SCOPES = [
  'vnflcm:read',
  'vnflcm:write',
  'vnfpkgm:read',
  'vnfpkgm:write',
  'subscriptions:read',
  'subscriptions:write',
  'vims:read',
  'vims:write',
  'vnffm:read',
  'vnffm:write',
  'vnfpm:read',
  'vnfpm:write',
];

let vnfm: LocalVnfm;
let sink: NfvoSink;
let tenantA: ClientCredentials;
let tenantB: ClientCredentials;

function newClient(tenantId: string, scopes: string[], on: LocalVnfm = vnfm): ClientCredentials {
  return { ...createLocalClient(on.dataDir, { tenantId, scopes }), tokenUrl: adminCredentials(on).tokenUrl };
}

const FM = { version: '1.5.0' };
const idsOf = (reply: Reply): string[] => (reply.body as Array<{ id: string }>).map((item) => item.id);
const nextOf = (reply: Reply): string | undefined => /<([^>]+)>; rel="next"/.exec(reply.headers.get('link') ?? '')?.[1];

/** Every id of a list, following its Link headers. */
async function allIds(call: ReturnType<typeof client>, path: string, options: { version?: string } = {}): Promise<string[]> {
  const ids: string[] = [];
  for (let next: string | undefined = path; next; ) {
    const reply = await call('GET', next, options);
    assert.equal(reply.status, 200, `GET ${next}: ${reply.text}`);
    ids.push(...idsOf(reply));
    next = nextOf(reply);
  }
  return ids;
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
    assert.ok(vnfm.output().includes(path), 'the startup output names the credentials file');
    assert.ok(!vnfm.output().includes(credentials.clientSecret), 'the secret is never printed');
  });

  it('answers every route of template.yaml without a token with 401, WWW-Authenticate and ProblemDetails (api_versions and the console files excepted)', async () => {
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
        if (path.startsWith('/console') && method === 'GET') {
          // The console's static files (README "Console"): open, and nothing of a tenant in them; other methods reach the catch-all.
          assert.ok([200, 308, 404].includes(reply.status), `${method} ${path} is public: ${reply.status}`);
        } else if (/\/api_versions$/.test(path) || path === '/oauth2/token' || path === '/.well-known/jwks.json') {
          assert.ok(reply.status !== 401 || path === '/oauth2/token', `${method} ${path} is public`);
          assert.notEqual(reply.status, 403, `${method} ${path} is public`);
        } else {
          assertUnauthorized(reply, `${method} ${path}`);
        }
      }
    }
  });

  it('refuses a token with a bad signature, an expired token, an unknown scheme and wrong Basic credentials (401)', async () => {
    const call = client(vnfm);
    const path = '/vnflcm/v2/vnf_instances';
    // The deployment's real signing key, derived from its key secret as the token function derives it.
    const real = await deploymentSigningKey(vnfm);
    const issuer = decodeJwt(await accessToken(adminCredentials(vnfm))).iss as string;
    // Signed by another key under the real key's id.
    const stranger = await generateKeyPair('EdDSA');
    const forged = await new SignJWT({ client_id: tenantA.clientId, token_use: 'access', scope: 'vnfm/admin vnfm/tenant:default' })
      .setProtectedHeader({ alg: 'EdDSA', kid: real.kid })
      .setIssuer(issuer)
      .setSubject(tenantA.clientId)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(stranger.privateKey);
    assertUnauthorized(await call('GET', path, { token: forged }), 'forged');
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ client_id: tenantA.clientId, token_use: 'access', scope: 'vnfm/vnflcm:read vnfm/tenant:tenant-a' })
      .setProtectedHeader({ alg: 'EdDSA', kid: real.kid })
      .setIssuer(issuer)
      .setSubject(tenantA.clientId)
      .setIssuedAt(now - 7200)
      .setExpirationTime(now - 3600)
      .sign(real.privateKey);
    const expiredReply = await call('GET', path, { token: expired });
    assertUnauthorized(expiredReply, 'expired');
    assert.match((expiredReply.body as { detail: string }).detail, /expired/);
    // Signed with the real key, but never expiring, or claiming to live for a year.
    const key = real.privateKey;
    const base = () =>
      new SignJWT({ client_id: tenantA.clientId, token_use: 'access', scope: 'vnfm/vnflcm:read vnfm/tenant:tenant-a' })
        .setProtectedHeader({ alg: 'EdDSA', kid: real.kid })
        .setIssuer(issuer)
        .setSubject(tenantA.clientId);
    assertUnauthorized(await call('GET', path, { token: await base().setIssuedAt(now).sign(key) }), 'no exp');
    assertUnauthorized(
      await call('GET', path, {
        token: await base()
          .setIssuedAt(now)
          .setExpirationTime(now + 365 * 24 * 3600)
          .sign(key),
      }),
      'a year long',
    );
    assert.equal(
      (
        await call('GET', path, {
          token: await base()
            .setIssuedAt(now)
            .setExpirationTime(now + 600)
            .sign(key),
        })
      ).status,
      200,
      'the same claims with a short lifetime are accepted',
    );
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
    for (const [method, path] of [
      ['POST', '/vnfpkgm/v1/vnf_packages'],
      ['GET', '/vnflcm/v2/vnf_instances'],
      ['GET', '/vnflcm/v1/vnf_lcm_op_occs'],
      ['GET', '/vnflcm/v2/subscriptions'],
      ['GET', '/no/such/route'],
    ] as const) {
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
      ['GET', `/vnfpkgm/v1/vnf_packages/${pkgB.id}`],
      ['PATCH', `/vnfpkgm/v1/vnf_packages/${pkgB.id}`, { userDefinedData: { x: '1' } }],
      ['DELETE', `/vnfpkgm/v1/vnf_packages/${pkgB.id}`],
      ['GET', `/vnfpkgm/v2/vnf_packages/${pkgB.id}/package_content`],
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
      ['GET', `/vnflcm/v2/vnf_instances/${vnfB}`],
      ['GET', `/vnflcm/v1/vnf_instances/${vnfB}`],
      ['PATCH', `/vnflcm/v2/vnf_instances/${vnfB}`, { vnfInstanceName: 'stolen' }],
      ['DELETE', `/vnflcm/v2/vnf_instances/${vnfB}`],
      ['POST', `/vnflcm/v2/vnf_instances/${vnfB}/instantiate`, { flavourId: 'simple' }],
      ['POST', `/vnflcm/v2/vnf_instances/${vnfB}/terminate`, { terminationType: 'FORCEFUL' }],
      ['POST', `/vnflcm/v2/vnf_instances/${vnfB}/scale`, { type: 'SCALE_OUT', aspectId: 'x' }],
      ['POST', `/vnflcm/v2/vnf_instances/${vnfB}/heal`, {}],
    ] as Array<[string, string, unknown?]>) {
      const reply = await a(
        method,
        path,
        body === undefined ? {} : { body, ...(method === 'PATCH' ? { headers: { 'Content-Type': 'application/merge-patch+json' } } : {}) },
      );
      assert.equal(reply.status, 404, `${method} ${path}: ${reply.text}`);
    }
    assert.ok(!((await a('GET', '/vnflcm/v2/vnf_instances')).body as Array<{ id: string }>).some((i) => i.id === vnfB));
    assert.equal(((await a('GET', `/vnflcm/v2/vnf_instances?filter=(eq,id,${vnfB})`)).body as unknown[]).length, 0);
    assert.equal((await admin('GET', `/vnflcm/v2/vnf_instances/${vnfB}`)).status, 200);

    // Op occs: B's modification, invisible and untouchable for A; it records B's client.
    const patched = await b('PATCH', `/vnflcm/v2/vnf_instances/${vnfB}`, {
      body: { vnfInstanceName: 'b-renamed' },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    assert.equal(patched.status, 202, patched.text);
    const opOccId = (patched.headers.get('location') ?? '').split('/').pop() as string;
    await settle(vnfm);
    for (const [method, path] of [
      ['GET', `/vnflcm/v2/vnf_lcm_op_occs/${opOccId}`],
      ['POST', `/vnflcm/v2/vnf_lcm_op_occs/${opOccId}/retry`],
      ['POST', `/vnflcm/v2/vnf_lcm_op_occs/${opOccId}/rollback`],
      ['POST', `/vnflcm/v2/vnf_lcm_op_occs/${opOccId}/fail`],
    ]) {
      assert.equal((await a(method as string, path as string)).status, 404, `${method} ${path}`);
    }
    assert.ok(!((await a('GET', '/vnflcm/v2/vnf_lcm_op_occs')).body as Array<{ id: string }>).some((o) => o.id === opOccId));
    assert.equal((await b('GET', `/vnflcm/v2/vnf_lcm_op_occs/${opOccId}`)).status, 200);
    assert.equal((await admin('GET', `/vnflcm/v2/vnf_lcm_op_occs/${opOccId}`)).status, 200);
    const documents = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: vnfm.endpoints.dynamodb, region: vnfm.endpoints.region, credentials: vnfm.awsCredentials }),
    );
    const stored = (await documents.send(new GetCommand({ TableName: 'VnfLcmOpOccsTable', Key: { id: opOccId } }))).Item as {
      startedBy?: string;
      tenantId: string;
    };
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
    // ... and cannot subscribe to B's instance at all: 422 exactly as for an id that does not exist.
    const naming = await a('POST', '/vnflcm/v2/subscriptions', {
      body: { callbackUri: `${sink.url}/cb/tenant-a-naming-b`, filter: { vnfInstanceSubscriptionFilter: { vnfInstanceIds: [vnfB] } } },
    });
    assert.equal(naming.status, 422, naming.text);
    const patchedAgain = await b('PATCH', `/vnflcm/v2/vnf_instances/${vnfB}`, {
      body: { vnfInstanceDescription: 'again' },
      headers: { 'Content-Type': 'application/merge-patch+json' },
    });
    assert.equal(patchedAgain.status, 202);
    await settle(vnfm);
    assert.equal((await b('DELETE', `/vnflcm/v2/vnf_instances/${vnfB}`)).status, 204);
    await settle(vnfm);
    assert.ok(
      sink.accepted('/cb/tenant-b').some((n) => n.vnfInstanceId === vnfB),
      'tenant B is notified about its instance',
    );
    assert.ok(sink.accepted('/cb/tenant-b').some((n) => n.notificationType === 'VnfIdentifierDeletionNotification'));
    assert.deepEqual(
      sink.accepted('/cb/tenant-a').filter((n) => n.vnfInstanceId === vnfB),
      [],
    );
    assert.deepEqual(sink.accepted('/cb/tenant-a-naming-b'), []);
  });

  it("refuses a subscription (LCM or FM) naming another tenant's VNF instance with the 422 of an unknown id, admin included", async () => {
    const a = client(vnfm, tenantA);
    const b = client(vnfm, tenantB);
    const admin = client(vnfm);
    const pkgA = await seedPackage(vnfm, { tenantId: 'tenant-a' });
    const pkgB = await seedPackage(vnfm, { tenantId: 'tenant-b' });
    const createdA = await a('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: pkgA.vnfdId } });
    const createdB = await b('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: pkgB.vnfdId } });
    assert.equal(createdA.status, 201, createdA.text);
    assert.equal(createdB.status, 201, createdB.text);
    const vnfA = (createdA.body as { id: string }).id;
    const vnfB = (createdB.body as { id: string }).id;
    const unknown = crypto.randomUUID();
    const filter = (ids: string[]) => ({ vnfInstanceSubscriptionFilter: { vnfInstanceIds: ids } });
    const details: string[] = [];
    for (const [who, call, ids] of [
      ['A', a, [vnfB]],
      ['A', a, [unknown]],
      ['A', a, [vnfA, vnfB]],
      ['admin', admin, [vnfB]],
    ] as const) {
      for (const [path, options] of [
        ['/vnflcm/v2/subscriptions', {}],
        ['/vnflcm/v1/subscriptions', {}],
        ['/vnffm/v1/subscriptions', FM],
      ] as const) {
        const reply = await call('POST', path, { ...options, body: { callbackUri: `${sink.url}/cb/naming`, filter: filter([...ids]) } });
        assert.equal(reply.status, 422, `${who} ${path} ${ids.join(',')}: ${reply.text}`);
        assert.equal(reply.headers.get('content-type'), 'application/problem+json');
        details.push((reply.body as { detail: string }).detail.replace(ids.at(-1) as string, '<id>'));
      }
    }
    assert.equal(new Set(details).size, 1, `one answer for another tenant's and an unknown id: ${[...new Set(details)].join(' | ')}`);
    assert.match(details[0] as string, /no such VNF instance <id>/);
    for (const [path, options] of [
      ['/vnflcm/v2/subscriptions', {}],
      ['/vnffm/v1/subscriptions', FM],
    ] as const) {
      const own = await a('POST', path, { ...options, body: { callbackUri: `${sink.url}/cb/naming-own`, filter: filter([vnfA]) } });
      assert.equal(own.status, 201, `${path}: ${own.text}`);
      assert.equal((await a('DELETE', `${path}/${(own.body as { id: string }).id}`, options)).status, 204);
    }
  });

  it("lists every tenant's records to an admin (instances, op occs, packages, LCM and FM subscriptions), filters applied; a tenant lists only its own", async () => {
    const a = client(vnfm, tenantA);
    const b = client(vnfm, tenantB);
    const admin = client(vnfm);
    const created: Record<string, { a: string; b: string }> = {};
    const pkgA = await seedPackage(vnfm, { tenantId: 'tenant-a' });
    const pkgB = await seedPackage(vnfm, { tenantId: 'tenant-b' });
    created.packages = { a: pkgA.id, b: pkgB.id };
    const instance = async (call: typeof a, vnfdId: string): Promise<{ id: string; opOccId: string }> => {
      const reply = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId, vnfInstanceName: 'listed' } });
      assert.equal(reply.status, 201, reply.text);
      const id = (reply.body as { id: string }).id;
      const patched = await call('PATCH', `/vnflcm/v2/vnf_instances/${id}`, {
        body: { vnfInstanceDescription: 'listed' },
        headers: { 'Content-Type': 'application/merge-patch+json' },
      });
      assert.equal(patched.status, 202, patched.text);
      return { id, opOccId: (patched.headers.get('location') ?? '').split('/').pop() as string };
    };
    const [instA, instB] = [await instance(a, pkgA.vnfdId), await instance(b, pkgB.vnfdId)];
    await settle(vnfm);
    created.instances = { a: instA.id, b: instB.id };
    created.opOccs = { a: instA.opOccId, b: instB.opOccId };
    const subscribe = async (call: typeof a, path: string, options: { version?: string }): Promise<string> => {
      const reply = await call('POST', path, { ...options, body: { callbackUri: `${sink.url}/cb/listed` } });
      assert.equal(reply.status, 201, reply.text);
      return (reply.body as { id: string }).id;
    };
    created.subscriptions = { a: await subscribe(a, '/vnflcm/v2/subscriptions', {}), b: await subscribe(b, '/vnflcm/v2/subscriptions', {}) };
    created.fmSubscriptions = { a: await subscribe(a, '/vnffm/v1/subscriptions', FM), b: await subscribe(b, '/vnffm/v1/subscriptions', FM) };

    for (const [key, path, options] of [
      ['packages', '/vnfpkgm/v1/vnf_packages', {}],
      ['packages', '/vnfpkgm/v2/vnf_packages', {}],
      ['instances', '/vnflcm/v2/vnf_instances', {}],
      ['instances', '/vnflcm/v1/vnf_instances', {}],
      ['opOccs', '/vnflcm/v2/vnf_lcm_op_occs', {}],
      ['opOccs', '/vnflcm/v1/vnf_lcm_op_occs', {}],
      ['subscriptions', '/vnflcm/v2/subscriptions', {}],
      ['fmSubscriptions', '/vnffm/v1/subscriptions', FM],
    ] as const) {
      const ids = created[key] as { a: string; b: string };
      const all = await allIds(admin, path, options);
      assert.ok(all.includes(ids.a) && all.includes(ids.b), `admin ${path} lists both tenants' records`);
      assert.equal(new Set(all).size, all.length, `admin ${path}: no record twice`);
      const ofA = await allIds(a, path, options);
      assert.ok(ofA.includes(ids.a) && !ofA.includes(ids.b), `tenant A ${path}`);
      const ofB = await allIds(b, path, options);
      assert.ok(ofB.includes(ids.b) && !ofB.includes(ids.a), `tenant B ${path}`);
      const filtered = await admin('GET', `${path}?filter=${encodeURIComponent(`(eq,id,${ids.b})`)}`, options);
      assert.deepEqual(idsOf(filtered), [ids.b], `admin ${path} filtered`);
    }
    assert.deepEqual(
      idsOf(await admin('GET', `/vnflcm/v2/vnf_instances?filter=${encodeURIComponent(`(in,id,${instA.id},${instB.id})`)}&fields=vnfInstanceName`)).sort(),
      [instA.id, instB.id].sort(),
    );
  });

  it("pages an admin's all-tenant list with signed markers that no other scope accepts", async () => {
    const paged = await startVnfm({ env: { VNFM_PARAMETER_OVERRIDES: 'PageSize=2' } });
    let carried = '';
    try {
      const admin = client(paged);
      const a = client(paged, newClient('tenant-a', TENANT_SCOPES, paged));
      const b = client(paged, newClient('tenant-b', TENANT_SCOPES, paged));
      const mine = { a: [] as string[], b: [] as string[] };
      for (let i = 0; i < 3; i += 1) {
        for (const [tenant, call] of [
          ['a', a],
          ['b', b],
        ] as const) {
          const reply = await call('POST', '/vnfpkgm/v1/vnf_packages', { body: { userDefinedData: { page: 'yes' } } });
          assert.equal(reply.status, 201, reply.text);
          mine[tenant].push((reply.body as { id: string }).id);
        }
      }
      const all = await allIds(admin, '/vnfpkgm/v1/vnf_packages');
      assert.deepEqual([...all].sort(), [...mine.a, ...mine.b].sort(), "every tenant's packages, each once");
      assert.deepEqual((await allIds(a, '/vnfpkgm/v1/vnf_packages')).sort(), [...mine.a].sort());
      // A filtered admin list pages through matches only; the marker carries the filter.
      const filtered = await allIds(admin, `/vnfpkgm/v1/vnf_packages?filter=${encodeURIComponent(`(in,id,${mine.a[0]},${mine.b[0]},${mine.b[2]})`)}`);
      assert.deepEqual([...filtered].sort(), [mine.a[0], mine.b[0], mine.b[2]].sort());

      const adminNext = nextOf(await admin('GET', '/vnfpkgm/v1/vnf_packages')) as string;
      const tenantNext = nextOf(await a('GET', '/vnfpkgm/v1/vnf_packages')) as string;
      assert.ok(adminNext && tenantNext);
      for (const [who, call, next] of [
        ["tenant B with the admin's marker", b, adminNext],
        ["tenant B with A's marker", b, tenantNext],
        ["the admin with A's marker", admin, tenantNext],
      ] as const) {
        const reply = await call('GET', next);
        assert.equal(reply.status, 400, `${who}: ${reply.text}`);
        assert.match((reply.body as { detail: string }).detail, /nextpage_opaque_marker/);
      }
      assert.equal((await admin('GET', adminNext)).status, 200);
      assert.equal((await a('GET', tenantNext)).status, 200);
      carried = adminNext;

      // The signing key is generated for the deployment: a marker signed with a key from the source
      // (the product's former constant) is refused; the deployment's own markers outlive a restart.
      const forged = encodeMarker(
        { v: 1, resource: 'vnfpkgm/v1/vnf_packages', query: '', after: { id: mine.b[0] as string } },
        'vnfm-paging-vnfpkgm/v1/vnf_packages\n*all tenants*',
      );
      const refused = await admin('GET', `/vnfpkgm/v1/vnf_packages?nextpage_opaque_marker=${forged}`);
      assert.equal(refused.status, 400, refused.text);
      assert.match((refused.body as { detail: string }).detail, /nextpage_opaque_marker/);
    } finally {
      await paged.stop();
    }
    const restarted = await startVnfm({ dataDir: paged.dataDir, env: { VNFM_PARAMETER_OVERRIDES: 'PageSize=2' } });
    try {
      // The link names the old runtime's port; the marker is what must still verify.
      const { pathname, search } = new URL(carried);
      const reply = await client(restarted)('GET', `${pathname}${search}`);
      assert.equal(reply.status, 200, reply.text);
    } finally {
      await restarted.stop();
    }
  });

  it('hides VIMs (/vnfm/v1/vims, /v1.0/vims) and alarms of another tenant (404, absent from lists); an admin sees and lists them', async () => {
    const a = client(vnfm, tenantA);
    const b = client(vnfm, tenantB);
    const admin = client(vnfm);
    const os = (JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8')) as { 'local-openstack': Record<string, string> })['local-openstack'];
    const registration = (name: string) => ({
      name,
      vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3',
      interfaceInfo: { endpoint: os.authUrl },
      isDefault: true,
      accessInfo: openStackAccessInfo(os),
    });
    // Both tenants register a VIM of the same name (names are unique per tenant) as their default.
    const registeredA = await a('POST', '/vnfm/v1/vims', { body: registration('isolated-openstack') });
    assert.equal(registeredA.status, 201, registeredA.text);
    const vimA = (registeredA.body as { id: string }).id;
    const registeredB = await b('POST', '/vnfm/v1/vims', { body: registration('isolated-openstack') });
    assert.equal(registeredB.status, 201, registeredB.text);
    const vimB = (registeredB.body as { id: string }).id;

    for (const [method, path, body] of [
      ['GET', `/vnfm/v1/vims/${vimA}`],
      ['PATCH', `/vnfm/v1/vims/${vimA}`, { description: 'stolen' }],
      ['DELETE', `/vnfm/v1/vims/${vimA}`],
      ['GET', `/v1.0/vims/${vimA}`],
      ['GET', `/v1.0/vims/${vimA}.json`],
      ['PUT', `/v1.0/vims/${vimA}`, { vim: { description: 'stolen' } }],
      ['DELETE', `/v1.0/vims/${vimA}`],
    ] as Array<[string, string, unknown?]>) {
      const reply = await b(method, path, body === undefined ? {} : { body });
      assert.equal(reply.status, 404, `${method} ${path}: ${reply.text}`);
      assert.equal(reply.headers.get('content-type'), 'application/problem+json');
    }
    const tackerIds = async (call: typeof a, query = ''): Promise<string[]> => {
      const reply = await call('GET', `/v1.0/vims${query}`);
      assert.equal(reply.status, 200, reply.text);
      return (reply.body as { vims: Array<{ id: string }> }).vims.map((vim) => vim.id);
    };
    const listedB = idsOf(await b('GET', '/vnfm/v1/vims'));
    assert.ok(listedB.includes(vimB) && !listedB.includes(vimA));
    assert.deepEqual(idsOf(await b('GET', `/vnfm/v1/vims?filter=${encodeURIComponent(`(eq,id,${vimA})`)}`)), []);
    assert.ok((await tackerIds(b)).includes(vimB) && !(await tackerIds(b)).includes(vimA));
    assert.deepEqual(await tackerIds(b, `?id=${vimA}`), []);
    const listedA = idsOf(await a('GET', '/vnfm/v1/vims'));
    assert.ok(listedA.includes(vimA) && !listedA.includes(vimB));
    const shownA = await a('GET', `/vnfm/v1/vims/${vimA}`);
    assert.equal((shownA.body as { description?: string }).description, undefined, 'B changed nothing');
    // The admin reads, lists and changes either tenant's VIM.
    assert.equal((await admin('GET', `/vnfm/v1/vims/${vimA}`)).status, 200);
    assert.equal((await admin('GET', `/v1.0/vims/${vimB}`)).status, 200);
    const listedAdmin = idsOf(await admin('GET', '/vnfm/v1/vims'));
    assert.ok(listedAdmin.includes(vimA) && listedAdmin.includes(vimB) && listedAdmin.includes('local-openstack'));
    assert.deepEqual(idsOf(await admin('GET', `/vnfm/v1/vims?filter=${encodeURIComponent(`(eq,id,${vimB})`)}`)), [vimB]);
    assert.ok((await tackerIds(admin)).includes(vimA));
    const renamed = await admin('PATCH', `/vnfm/v1/vims/${vimB}`, { body: { name: 'renamed-by-admin' } });
    assert.equal(renamed.status, 200, renamed.text);
    const reuse = await b('PATCH', `/vnfm/v1/vims/${vimB}`, { body: { name: 'isolated-openstack' } });
    assert.equal(reuse.status, 200, `the admin's rename freed the name in B's tenant: ${reuse.text}`);

    // An alarm of A's: a VNF on A's default VIM whose server fails, found by a health sweep.
    const pkg = ((await a('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
    const uploaded = await a('PUT', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content`, {
      raw: await buildCsar('openstack-vnf-v1'),
      headers: { 'Content-Type': 'application/zip' },
    });
    assert.equal(uploaded.status, 202, uploaded.text);
    await settle(vnfm);
    const created = await a('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId, vnfInstanceName: 'alarmed' } });
    assert.equal(created.status, 201, created.text);
    const vnfA = (created.body as { id: string }).id;
    const instantiate = await a('POST', `/vnflcm/v2/vnf_instances/${vnfA}/instantiate`, {
      body: {
        flavourId: 'simple',
        instantiationLevelId: 'instantiation_level_1',
        extVirtualLinks: [
          {
            id: 'ext-public',
            resourceId: 'public',
            extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { VDU1_CP1_1: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }],
          },
        ],
      },
    });
    assert.equal(instantiate.status, 202, instantiate.text);
    await settle(vnfm);
    const shown = (await a('GET', `/vnflcm/v2/vnf_instances/${vnfA}`)).body as {
      instantiationState: string;
      vimConnectionInfo?: Record<string, { vimId?: string }>;
      instantiatedVnfInfo: { vnfcResourceInfo: Array<{ computeResource: { resourceId: string } }> };
    };
    assert.equal(shown.instantiationState, 'INSTANTIATED');
    const server = shown.instantiatedVnfInfo.vnfcResourceInfo[0]?.computeResource.resourceId as string;
    const fault = await fetch(`${os.control}servers/${server}/status`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ status: 'ERROR' }),
    });
    assert.ok(fault.ok, await fault.text());
    const swept = await localControl(vnfm, 'POST', '/_local/schedules/VnfHealthMonitorFunction/run');
    assert.equal(swept.status, 200, await swept.text());
    await settle(vnfm);
    const byInstance = `/vnffm/v1/alarms?filter=${encodeURIComponent(`(eq,managedObjectId,${vnfA})`)}`;
    const alarms = idsOf(await a('GET', byInstance, FM));
    assert.equal(alarms.length, 1, 'A sees the alarm of its VNF');
    const alarm = alarms[0] as string;

    const acknowledge = { ...FM, body: { ackState: 'ACKNOWLEDGED' }, headers: { 'Content-Type': 'application/merge-patch+json' } };
    for (const [method, options] of [
      ['GET', FM],
      ['PATCH', acknowledge],
    ] as const) {
      const reply = await b(method, `/vnffm/v1/alarms/${alarm}`, options);
      assert.equal(reply.status, 404, `${method}: ${reply.text}`);
      assert.equal(reply.headers.get('content-type'), 'application/problem+json');
    }
    assert.ok(!(await allIds(b, '/vnffm/v1/alarms', FM)).includes(alarm));
    assert.deepEqual(idsOf(await b('GET', byInstance, FM)), []);
    assert.equal(((await a('GET', `/vnffm/v1/alarms/${alarm}`, FM)).body as { ackState: string }).ackState, 'UNACKNOWLEDGED', 'B acknowledged nothing');
    assert.ok((await allIds(admin, '/vnffm/v1/alarms', FM)).includes(alarm));
    assert.deepEqual(idsOf(await admin('GET', byInstance, FM)), [alarm]);
    assert.equal((await admin('GET', `/vnffm/v1/alarms/${alarm}`, FM)).status, 200);
    const acked = await admin('PATCH', `/vnffm/v1/alarms/${alarm}`, acknowledge);
    assert.equal(acked.status, 200, acked.text);
    assert.equal(((await a('GET', `/vnffm/v1/alarms/${alarm}`, FM)).body as { ackState: string }).ackState, 'ACKNOWLEDGED');
  });
});

// SOL005 VNF package management subscriptions and notifications over HTTP against the local
// runtime: the subscriptions API on /vnfpkgm/v1 and /v2 (callback test, no credentials in any
// answer, filters on the list, tenants), and what a test NFVO receives when packages are
// onboarded, disabled and deleted: per filter, per API version (links, Version header), with BASIC
// authentication, never another tenant's, nothing after a subscription is deleted; retried through
// an NFVO that fails for a while, dead-lettered when it refuses.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createLocalClient } from '../../local/oauth2.ts';
import { assertEtsiResponse, assertEtsiSchema } from '../support/etsi.ts';
import { buildCsar, SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { startNfvoSink, type NfvoSink, type Received } from '../support/nfvo-sink.ts';
import { adminCredentials, client, settle, startVnfm, type ClientCredentials, type LocalVnfm, type Reply } from '../support/runtime.ts';

type Call = ReturnType<typeof client>;
type Notification = Received['body'] & {
  vnfPkgId: string;
  vnfdId: string;
  changeType?: string;
  operationalState?: string;
  _links: Record<string, { href: string }>;
};

const SCOPES = ['vnfpkgm:read', 'vnfpkgm:write', 'subscriptions:read', 'subscriptions:write'];

let vnfm: LocalVnfm;
let call: Call;
let sink: NfvoSink;
let tenantB: ClientCredentials;
let callB: Call;

before(async () => {
  vnfm = await startVnfm();
  call = client(vnfm);
  sink = await startNfvoSink();
  tenantB = { ...createLocalClient(vnfm.dataDir, { tenantId: 'tenant-b', scopes: SCOPES }), tokenUrl: adminCredentials(vnfm).tokenUrl };
  callB = client(vnfm, tenantB);
});
after(async () => {
  await sink.close();
  await vnfm.stop();
});

function assertProblem(reply: Reply, status: number): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.headers.get('content-type'), 'application/problem+json');
}

async function subscribe(as: Call, body: Record<string, unknown>, version: 1 | 2 = 2): Promise<string> {
  const reply = await as('POST', `/vnfpkgm/v${version}/subscriptions`, { body });
  assert.equal(reply.status, 201, reply.text);
  return (reply.body as { id: string }).id;
}

async function listIds(as: Call, query = ''): Promise<string[]> {
  const reply = await as('GET', `/vnfpkgm/v2/subscriptions${query}`);
  assert.equal(reply.status, 200, reply.text);
  return (reply.body as Array<{ id: string }>).map((s) => s.id).sort();
}

/** Creates a package and uploads a sample CSAR; returns once onboarding (and its notifications) settled. */
async function onboard(as: Call, sample: keyof typeof SAMPLE_PACKAGES): Promise<string> {
  const created = await as('POST', '/vnfpkgm/v1/vnf_packages', { body: {} });
  assert.equal(created.status, 201, created.text);
  const id = (created.body as { id: string }).id;
  const uploaded = await as('PUT', `/vnfpkgm/v1/vnf_packages/${id}/package_content`, {
    raw: await buildCsar(sample),
    headers: { 'Content-Type': 'application/zip' },
  });
  assert.equal(uploaded.status, 202, uploaded.text);
  await settle(vnfm);
  const shown = await as('GET', `/vnfpkgm/v1/vnf_packages/${id}`);
  assert.equal((shown.body as { onboardingState: string }).onboardingState, 'ONBOARDED', shown.text);
  return id;
}

/** The distinct notifications a callback path accepted (delivery is at least once). */
function notificationsAt(path: string): Notification[] {
  const seen = new Set<string>();
  return (sink.accepted(path) as Notification[]).filter((n) => !seen.has(n.id) && seen.add(n.id));
}

/** What a sequence of notifications says, one line each, for exact comparisons. */
function outline(notifications: Notification[], names: Record<string, string>): string[] {
  return notifications.map((n) => [n.notificationType, n.changeType, n.operationalState, names[n.vnfPkgId] ?? n.vnfPkgId].filter(Boolean).join(' '));
}

describe('the package subscriptions API', () => {
  it("tests the callback with the subscription's authentication, answers 201 + Location with a PkgmSubscription without it, lists, shows and deletes", async () => {
    const request = {
      callbackUri: `${sink.url}/pkg/api`,
      filter: { notificationTypes: ['VnfPackageOnboardingNotification'], vnfdId: [SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId] },
      authentication: { authType: ['BASIC'], paramsBasic: { userName: 'nfvo', password: 'secret-pw' } },
    };
    const created = await call('POST', '/vnfpkgm/v2/subscriptions', { body: request });
    assert.equal(created.status, 201, created.text);
    await assertEtsiResponse('vnfpkgm', '/subscriptions', 'post', 201, created.body);
    const subscription = created.body as { id: string; _links: { self: { href: string } } };
    assert.equal(created.headers.get('location'), subscription._links.self.href);
    assert.match(subscription._links.self.href, /\/vnfpkgm\/v2\/subscriptions\//);
    assert.deepEqual(
      { ...subscription, id: undefined, _links: undefined },
      { callbackUri: request.callbackUri, filter: request.filter, id: undefined, _links: undefined },
    );
    assert.doesNotMatch(created.text, /secret-pw|paramsBasic|authentication/);
    assert.deepEqual(sink.tests.get('/pkg/api'), { count: 1, authorization: `Basic ${Buffer.from('nfvo:secret-pw').toString('base64')}` });

    const v1 = await call('POST', '/vnfpkgm/v1/subscriptions', { body: { callbackUri: `${sink.url}/pkg/api-v1` } });
    assert.equal(v1.status, 201, v1.text);
    await assertEtsiResponse('vnfpkgm', '/subscriptions', 'post', 201, v1.body);
    const v1Id = (v1.body as { id: string }).id;
    assert.equal(v1.headers.get('location'), `${vnfm.url}/vnfpkgm/v1/subscriptions/${v1Id}`);

    const list = await call('GET', '/vnfpkgm/v2/subscriptions');
    await assertEtsiResponse('vnfpkgm', '/subscriptions', 'get', 200, list.body);
    assert.doesNotMatch(list.text, /secret-pw|paramsBasic/);
    assert.deepEqual(await listIds(call), [subscription.id, v1Id].sort());
    assert.deepEqual(await listIds(call, `?filter=${encodeURIComponent('(cont,filter/notificationTypes,VnfPackageOnboardingNotification)')}`), [
      subscription.id,
    ]);

    const shown = await call('GET', `/vnfpkgm/v2/subscriptions/${subscription.id}`);
    await assertEtsiResponse('vnfpkgm', '/subscriptions/{subscriptionId}', 'get', 200, shown.body);
    assert.deepEqual(shown.body, subscription);
    const shownV1 = await call('GET', `/vnfpkgm/v1/subscriptions/${subscription.id}`);
    assert.equal((shownV1.body as typeof subscription)._links.self.href, subscription._links.self.href.replace('/v2/', '/v1/'));

    // Another tenant neither sees nor deletes them.
    assert.deepEqual(await listIds(callB), []);
    assertProblem(await callB('GET', `/vnfpkgm/v2/subscriptions/${subscription.id}`), 404);
    assertProblem(await callB('DELETE', `/vnfpkgm/v1/subscriptions/${subscription.id}`), 404);

    assert.equal((await call('DELETE', `/vnfpkgm/v2/subscriptions/${subscription.id}`)).status, 204);
    assert.equal((await call('DELETE', `/vnfpkgm/v1/subscriptions/${v1Id}`)).status, 204);
    assertProblem(await call('GET', `/vnfpkgm/v2/subscriptions/${subscription.id}`), 404);
    assertProblem(await call('DELETE', `/vnfpkgm/v2/subscriptions/${subscription.id}`), 404);
    assertProblem(await call('PATCH', `/vnfpkgm/v2/subscriptions/${v1Id}`, { body: {} }), 405);
    assert.deepEqual(await listIds(call), []);
  });

  it('refuses a callback that fails its test (422) or a filter SOL005 forbids (400), and stores nothing', async () => {
    const refused = await call('POST', '/vnfpkgm/v2/subscriptions', { body: { callbackUri: `${sink.url}/pkg/refuse-test` } });
    assertProblem(refused, 422);
    assert.match(refused.text, /answered 404; 204 No Content is required/);
    assert.equal(sink.tests.get('/pkg/refuse-test')?.count, 1);
    for (const filter of [
      { vnfdId: ['a'], vnfPkgId: ['b'] },
      { notificationTypes: ['VnfPackageOnboardingNotification'], operationalState: ['DISABLED'] },
      { notificationTypes: 'VnfPackageOnboardingNotification' },
    ]) {
      assertProblem(await call('POST', '/vnfpkgm/v2/subscriptions', { body: { callbackUri: `${sink.url}/pkg/bad-filter`, filter } }), 400);
    }
    assert.equal(sink.tests.get('/pkg/bad-filter'), undefined, 'a refused request is not tested');
    assert.deepEqual(await listIds(call), []);
  });

  it('needs the subscriptions scopes', async () => {
    const packagesOnly = {
      ...createLocalClient(vnfm.dataDir, { tenantId: 'default', scopes: ['vnfpkgm:read', 'vnfpkgm:write'] }),
      tokenUrl: adminCredentials(vnfm).tokenUrl,
    };
    assertProblem(await client(vnfm, packagesOnly)('GET', '/vnfpkgm/v2/subscriptions'), 403);
  });
});

describe('package notifications', () => {
  it('onboarding, disabling and deleting a package notify the matching subscriptions of its tenant, valid against the ETSI schemas', async () => {
    const openstackVnfdId = SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId;
    const basic = { authType: ['BASIC'], paramsBasic: { userName: 'nfvo', password: 'pkg-pw' } };
    const all = await subscribe(call, { callbackUri: `${sink.url}/pkg/all`, authentication: basic });
    const v1 = await subscribe(call, { callbackUri: `${sink.url}/pkg/v1` }, 1);
    await subscribe(call, { callbackUri: `${sink.url}/pkg/onboarding`, filter: { notificationTypes: ['VnfPackageOnboardingNotification'] } });
    await subscribe(call, { callbackUri: `${sink.url}/pkg/vnfd`, filter: { vnfdId: [openstackVnfdId] } });
    await subscribe(call, {
      callbackUri: `${sink.url}/pkg/disabled`,
      filter: { notificationTypes: ['VnfPackageChangeNotification'], operationalState: ['DISABLED'] },
    });
    await subscribe(callB, { callbackUri: `${sink.url}/pkg/tenant-b` });
    const listed = await call('GET', '/vnfpkgm/v2/subscriptions');
    assert.equal((listed.body as unknown[]).length, 6, "the admin lists every tenant's");
    await assertEtsiResponse('vnfpkgm', '/subscriptions', 'get', 200, listed.body);

    const first = await onboard(call, 'openstack-vnf-v1');
    const patched = await call('PATCH', `/vnfpkgm/v1/vnf_packages/${first}`, { body: { operationalState: 'DISABLED' } });
    assert.equal(patched.status, 200, patched.text);
    await settle(vnfm);
    assert.equal((await call('DELETE', `/vnfpkgm/v1/vnf_packages/${first}`)).status, 204);
    await settle(vnfm);
    // After its DELETE, a subscription hears nothing more.
    assert.equal((await call('DELETE', `/vnfpkgm/v1/subscriptions/${v1}`)).status, 204);
    const second = await onboard(call, 'k8s-cnf-v1');
    const ofB = await onboard(callB, 'openstack-vnf-v1');
    const names = { [first]: 'first', [second]: 'second', [ofB]: 'tenant-b' };

    assert.deepEqual(outline(notificationsAt('/pkg/all'), names), [
      'VnfPackageOnboardingNotification first',
      'VnfPackageChangeNotification OP_STATE_CHANGE DISABLED first',
      'VnfPackageChangeNotification PKG_DELETE first',
      'VnfPackageOnboardingNotification second',
    ]);
    assert.deepEqual(outline(notificationsAt('/pkg/v1'), names), outline(notificationsAt('/pkg/all'), names).slice(0, 3));
    assert.deepEqual(outline(notificationsAt('/pkg/onboarding'), names), ['VnfPackageOnboardingNotification first', 'VnfPackageOnboardingNotification second']);
    assert.deepEqual(outline(notificationsAt('/pkg/vnfd'), names), outline(notificationsAt('/pkg/all'), names).slice(0, 3));
    assert.deepEqual(outline(notificationsAt('/pkg/disabled'), names), outline(notificationsAt('/pkg/all'), names).slice(1, 3));
    assert.deepEqual(outline(notificationsAt('/pkg/tenant-b'), names), ['VnfPackageOnboardingNotification tenant-b']);

    // One notification has one id for every subscription it goes to.
    assert.deepEqual(
      notificationsAt('/pkg/v1').map((n) => n.id),
      notificationsAt('/pkg/all')
        .slice(0, 3)
        .map((n) => n.id),
    );

    for (const path of ['/pkg/all', '/pkg/v1', '/pkg/onboarding', '/pkg/vnfd', '/pkg/disabled', '/pkg/tenant-b']) {
      for (const notification of notificationsAt(path)) await assertEtsiSchema('vnfpkgm-notification', notification.notificationType, notification);
    }
    const [onboarded, disabled, deleted] = notificationsAt('/pkg/all');
    assert.equal(onboarded?.vnfPkgId, first);
    assert.equal(onboarded?.vnfdId, openstackVnfdId);
    assert.equal(onboarded?.subscriptionId, all);
    assert.equal(disabled?.operationalState, 'DISABLED');
    assert.equal(deleted?.operationalState, undefined, 'operationalState only comes with OP_STATE_CHANGE');
    assert.deepEqual(deleted?._links, {
      vnfPackage: { href: `${vnfm.url}/vnfpkgm/v2/vnf_packages/${first}` },
      subscription: { href: `${vnfm.url}/vnfpkgm/v2/subscriptions/${all}` },
    });
    assert.equal(notificationsAt('/pkg/v1')[0]?._links.vnfPackage?.href, `${vnfm.url}/vnfpkgm/v1/vnf_packages/${first}`);

    // Version headers per API version; BASIC credentials on the subscription that asked for them only.
    const requests = (path: string) => sink.received.filter((r) => r.path === path);
    assert.deepEqual([...new Set(requests('/pkg/all').map((r) => r.headers.version))], ['2.4.0']);
    assert.deepEqual([...new Set(requests('/pkg/v1').map((r) => r.headers.version))], ['1.3.0']);
    assert.deepEqual([...new Set(requests('/pkg/all').map((r) => r.headers.authorization))], [`Basic ${Buffer.from('nfvo:pkg-pw').toString('base64')}`]);
    assert.deepEqual([...new Set(requests('/pkg/onboarding').map((r) => r.headers.authorization))], [undefined]);
  });

  it('go the durable way: retried through an NFVO answering 503 for a while, dead-lettered at once when one answers 400', async () => {
    await subscribe(call, { callbackUri: `${sink.url}/pkg/flaky` });
    await subscribe(call, { callbackUri: `${sink.url}/pkg/reject`, filter: { notificationTypes: ['VnfPackageOnboardingNotification'] } });
    sink.answer = (path, attempt) => (path === '/pkg/flaky' && attempt <= 3 ? 503 : path === '/pkg/reject' ? 400 : 204);
    try {
      const third = await onboard(call, 'openstack-vnf-v2');
      assert.equal((await call('PATCH', `/vnfpkgm/v2/vnf_packages/${third}`, { body: { operationalState: 'DISABLED' } })).status, 200);
      await settle(vnfm);
      const names = { [third]: 'third' };
      assert.equal(sink.received.filter((r) => r.path === '/pkg/flaky' && r.answer === 503).length, 3);
      assert.deepEqual(outline(notificationsAt('/pkg/flaky'), names), [
        'VnfPackageOnboardingNotification third',
        'VnfPackageChangeNotification OP_STATE_CHANGE DISABLED third',
      ]);
      assert.equal(sink.received.filter((r) => r.path === '/pkg/reject').length, 1, '400 is not retried');

      const endpoints = JSON.parse(readFileSync(join(vnfm.dataDir, 'endpoints.json'), 'utf8')) as {
        sqs: string;
        region: string;
        queues: Record<string, { url: string }>;
      };
      const sqs = new SQSClient({ endpoint: endpoints.sqs, region: endpoints.region, credentials: vnfm.awsCredentials });
      const letters =
        (
          await sqs.send(
            new ReceiveMessageCommand({
              QueueUrl: endpoints.queues.NotificationDeadLetterQueue!.url,
              MaxNumberOfMessages: 10,
              VisibilityTimeout: 0,
              MessageAttributeNames: ['All'],
            }),
          )
        ).Messages ?? [];
      assert.equal(letters.length, 1);
      const letter = JSON.parse(letters[0]!.Body ?? '{}') as { kind: string; family: string; body: Notification };
      assert.deepEqual(
        [letter.kind, letter.family, letter.body.notificationType, letter.body.vnfPkgId],
        ['delivery', 'vnfpkgm', 'VnfPackageOnboardingNotification', third],
      );
      assert.match(letters[0]!.MessageAttributes?.reason?.StringValue ?? '', /answered 400/);
    } finally {
      sink.answer = () => 204;
    }
  });
});

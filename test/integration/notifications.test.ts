// SOL003 subscriptions and VNF LCM notifications over HTTP against the local runtime: the
// subscriptions API, the notifications a test NFVO receives for whole lifecycles (per filter and
// verbosity, valid against the ETSI notification schemas), authentication (BASIC, OAuth 2.0 client
// credentials), retries through a flaky NFVO, the dead-letter queue and its redrive, and the
// egress policy.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient, StartMessageMoveTaskCommand } from '@aws-sdk/client-sqs';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { assertEtsiResponse, assertEtsiSchema } from '../support/etsi.ts';
import { buildCsar, SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { startNfvoSink, type NfvoSink, type Received } from '../support/nfvo-sink.ts';
import { client, outboxEntries, seedPackage, settle, startVnfm, type LocalVnfm, type Reply } from '../support/runtime.ts';

type Call = ReturnType<typeof client>;
type Notification = Received['body'];

const INSTANTIATE = {
  flavourId: 'simple',
  extVirtualLinks: [
    {
      id: 'ext-public',
      resourceId: 'public',
      extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { VDU1_CP1_1: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }],
    },
  ],
};

function assertProblem(reply: Reply, status: number): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.headers.get('content-type'), 'application/problem+json');
}

async function subscribe(call: Call, body: Record<string, unknown>, version: 1 | 2 = 2): Promise<string> {
  const reply = await call('POST', `/vnflcm/v${version}/subscriptions`, { body });
  assert.equal(reply.status, 201, reply.text);
  return (reply.body as { id: string }).id;
}

async function unsubscribeAll(call: Call): Promise<void> {
  for (const version of [1, 2]) {
    const list = (await call('GET', `/vnflcm/v${version}/subscriptions`)).body as Array<{ id: string }>;
    for (const { id } of list) await call('DELETE', `/vnflcm/v${version}/subscriptions/${id}`);
  }
}

/** What a sequence of notifications says, one line each, for exact comparisons. */
function outline(notifications: Notification[]): string[] {
  return notifications.map((n) => {
    if (n.notificationType !== 'VnfLcmOperationOccurrenceNotification') return n.notificationType;
    const o = n as Notification & { operation: string; operationState: string; notificationStatus: string };
    return `${o.operation} ${o.operationState} ${o.notificationStatus}`;
  });
}

function dedupe(notifications: Notification[]): Notification[] {
  const seen = new Set<string>();
  return notifications.filter((n) => !seen.has(n.id) && seen.add(n.id));
}

async function assertNotificationSchemas(notifications: Notification[]): Promise<void> {
  for (const notification of notifications) await assertEtsiSchema('vnflcm-notification', notification.notificationType, notification);
}

function sqsOf(vnfm: LocalVnfm): { sqs: SQSClient; queue: { url: string; arn: string }; dlq: { url: string; arn: string } } {
  const { sqs, region, queues } = vnfm.endpoints;
  return {
    sqs: new SQSClient({ endpoint: sqs, region, credentials: vnfm.awsCredentials }),
    queue: queues.NotificationQueue as { url: string; arn: string },
    dlq: queues.NotificationDeadLetterQueue as { url: string; arn: string },
  };
}

async function queueDepth(sqs: SQSClient, url: string): Promise<number> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
  );
  return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
}

describe('with the default retry period', () => {
  let vnfm: LocalVnfm;
  let call: Call;
  let sink: NfvoSink;
  const clientPassword = `oauth-${crypto.randomUUID()}`;

  before(async () => {
    vnfm = await startVnfm();
    call = client(vnfm);
    sink = await startNfvoSink({ clientId: 'vnfm-client', clientPassword });
  });
  after(async () => {
    await sink.close();
    await vnfm.stop();
  });

  describe('the subscriptions API', () => {
    it('tests the callback, then answers 201 + Location with an LccnSubscription; lists, filters, shows and deletes it', async () => {
      const request = {
        callbackUri: `${sink.url}/cb/api`,
        filter: { notificationTypes: ['VnfLcmOperationOccurrenceNotification'], operationStates: ['COMPLETED', 'FAILED_TEMP'] },
        verbosity: 'SHORT',
      };
      const created = await call('POST', '/vnflcm/v2/subscriptions', { body: request });
      assert.equal(created.status, 201, created.text);
      await assertEtsiResponse('vnflcm', '/subscriptions', 'post', 201, created.body);
      const subscription = created.body as { id: string; _links: { self: { href: string } } };
      assert.equal(created.headers.get('location'), subscription._links.self.href);
      assert.equal(created.headers.get('version'), '2.0.0');
      assert.deepEqual({ ...subscription, id: undefined, _links: undefined }, { ...request, id: undefined, _links: undefined });
      assert.equal(sink.tests.get('/cb/api')?.count, 1, 'the callback was tested once with GET');

      const other = await subscribe(call, { callbackUri: `${sink.url}/cb/api-other` });
      const list = await call('GET', '/vnflcm/v2/subscriptions');
      await assertEtsiResponse('vnflcm', '/subscriptions', 'get', 200, list.body);
      assert.deepEqual((list.body as Array<{ id: string }>).map((s) => s.id).sort(), [subscription.id, other].sort());
      const filtered = await call('GET', '/vnflcm/v2/subscriptions?filter=(eq,verbosity,SHORT)');
      assert.deepEqual(
        (filtered.body as Array<{ id: string }>).map((s) => s.id),
        [subscription.id],
      );
      const byType = await call('GET', `/vnflcm/v2/subscriptions?filter=${encodeURIComponent('(cont,filter/operationStates,FAILED_TEMP)')}`);
      assert.deepEqual(
        (byType.body as Array<{ id: string }>).map((s) => s.id),
        [subscription.id],
      );

      const shown = await call('GET', new URL(subscription._links.self.href).pathname);
      assert.equal(shown.status, 200);
      await assertEtsiResponse('vnflcm', '/subscriptions/{subscriptionId}', 'get', 200, shown.body);
      assert.deepEqual(shown.body, subscription);
      // The v1 API serves the same subscription with v1 links.
      const v1 = await call('GET', `/vnflcm/v1/subscriptions/${subscription.id}`);
      assert.equal((v1.body as { _links: { self: { href: string } } })._links.self.href, subscription._links.self.href.replace('/v2/', '/v1/'));

      assert.equal((await call('DELETE', `/vnflcm/v2/subscriptions/${subscription.id}`)).status, 204);
      assertProblem(await call('GET', `/vnflcm/v2/subscriptions/${subscription.id}`), 404);
      assertProblem(await call('DELETE', `/vnflcm/v2/subscriptions/${subscription.id}`), 404);
      assertProblem(await call('PATCH', `/vnflcm/v2/subscriptions/${other}`, { body: {} }), 405);
      await unsubscribeAll(call);
    });

    it('pages the list with one Link header', async () => {
      const paged = await startVnfm({ env: { VNFM_PARAMETER_OVERRIDES: 'PageSize=2' } });
      try {
        const pagedCall = client(paged);
        const ids = [];
        for (let i = 0; i < 3; i++) ids.push(await subscribe(pagedCall, { callbackUri: `${sink.url}/cb/page-${i}` }));
        const first = await pagedCall('GET', '/vnflcm/v2/subscriptions');
        assert.equal((first.body as unknown[]).length, 2);
        const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
        assert.ok(next, 'a next link');
        const second = await pagedCall('GET', next);
        assert.deepEqual([...(first.body as Array<{ id: string }>), ...(second.body as Array<{ id: string }>)].map((s) => s.id).sort(), ids.sort());
        assert.equal(second.headers.get('link'), null);
      } finally {
        await paged.stop();
      }
    });

    it('answers 422 and stores nothing when the callback test fails or the egress policy refuses the address', async () => {
      const refusals: Array<[string, Record<string, unknown>, RegExp]> = [
        ['a callback answering 404 to the test', { callbackUri: `${sink.url}/cb/refuse-test` }, /answered 404; 204 No Content is required/],
        ['a callback nobody listens on', { callbackUri: 'http://127.0.0.1:1/cb' }, /could not be reached/],
        ['the cloud metadata address', { callbackUri: 'http://169.254.169.254/latest/meta-data/' }, /egress policy.*169\.254\.169\.254.*never allowed/],
        ['an IPv4-mapped metadata address', { callbackUri: 'http://[::ffff:169.254.169.254]/' }, /egress policy/],
        ['IPv6 link-local', { callbackUri: 'http://[fe80::1]/cb' }, /egress policy/],
        [
          'a token endpoint refusing the client',
          {
            callbackUri: `${sink.url}/cb/bad-client`,
            authentication: {
              authType: ['OAUTH2_CLIENT_CREDENTIALS'],
              paramsOauth2ClientCredentials: { clientId: 'vnfm-client', clientPassword: 'wrong', tokenEndpoint: `${sink.url}/token` },
            },
          },
          /No OAuth 2.0 token could be obtained.*401/,
        ],
        ['TLS_CERT only', { callbackUri: `${sink.url}/cb/tls`, authentication: { authType: ['TLS_CERT'] } }, /TLS_CERT is not supported/],
        ['BASIC without its parameters', { callbackUri: `${sink.url}/cb/basic`, authentication: { authType: ['BASIC'] } }, /paramsBasic/],
      ];
      for (const [what, body, detail] of refusals) {
        const reply = await call('POST', '/vnflcm/v2/subscriptions', { body });
        assertProblem(reply, 422);
        assert.match((reply.body as { detail: string }).detail, detail, what);
      }
      assert.deepEqual((await call('GET', '/vnflcm/v2/subscriptions')).body, []);
    });

    it('answers 400 for malformed requests', async () => {
      const malformed: Array<Record<string, unknown>> = [
        {},
        { callbackUri: 'not a uri' },
        { callbackUri: 'ftp://example.com/cb' },
        { callbackUri: `http://user:pass@127.0.0.1:1/cb` },
        { callbackUri: `${sink.url}/cb`, verbosity: 'LOUD' },
        { callbackUri: `${sink.url}/cb`, filter: { notificationTypes: ['VnfIdentifierCreationNotification'], operationStates: ['COMPLETED'] } },
        { callbackUri: `${sink.url}/cb`, filter: { operationTypes: ['DANCE'] } },
        { callbackUri: `${sink.url}/cb`, filter: { vnfInstanceSubscriptionFilter: { vnfdIds: 'not-an-array' } } },
        { callbackUri: `${sink.url}/cb`, unknown: true },
      ];
      for (const body of malformed) assertProblem(await call('POST', '/vnflcm/v2/subscriptions', { body }), 400);
      assertProblem(await call('POST', '/vnflcm/v2/subscriptions', { body: { callbackUri: `${sink.url}/cb` }, version: null }), 400);
    });
  });

  describe('notifications', () => {
    let vnfdId: string;

    before(async () => {
      const pkg = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
      await call('PUT', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content`, {
        raw: await buildCsar('openstack-vnf-v1'),
        headers: { 'Content-Type': 'application/zip' },
      });
      await settle(vnfm);
      vnfdId = SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId;
    });

    async function operate(path: string, body?: unknown): Promise<string> {
      const reply = await call('POST', path, { body });
      assert.equal(reply.status, 202, reply.text);
      return new URL(reply.headers.get('location') ?? `${vnfm.url}${path}`).pathname;
    }

    it('create -> instantiate -> terminate -> delete reaches each subscription exactly as its filter and verbosity say', async () => {
      const name = `lifecycle-${crypto.randomUUID()}`;
      const created = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId, vnfInstanceName: 'before-subscribing' } });
      const product = created.body as { vnfProvider: string; vnfProductName: string; vnfSoftwareVersion: string; vnfdVersion: string };
      assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${(created.body as { id: string }).id}`)).status, 204);
      await settle(vnfm);

      await subscribe(call, { callbackUri: `${sink.url}/cb/all` });
      await subscribe(call, {
        callbackUri: `${sink.url}/cb/completed-short`,
        verbosity: 'SHORT',
        filter: {
          notificationTypes: ['VnfLcmOperationOccurrenceNotification'],
          operationStates: ['COMPLETED'],
          vnfInstanceSubscriptionFilter: { vnfInstanceNames: [name] },
        },
      });
      await subscribe(call, {
        callbackUri: `${sink.url}/cb/identifiers`,
        filter: {
          notificationTypes: ['VnfIdentifierCreationNotification', 'VnfIdentifierDeletionNotification'],
          vnfInstanceSubscriptionFilter: { vnfdIds: [vnfdId] },
        },
      });
      await subscribe(call, {
        callbackUri: `${sink.url}/cb/terminate`,
        filter: {
          operationTypes: ['TERMINATE'],
          vnfInstanceSubscriptionFilter: {
            vnfProductsFromProviders: [
              {
                vnfProvider: product.vnfProvider,
                vnfProducts: [
                  {
                    vnfProductName: product.vnfProductName,
                    versions: [{ vnfSoftwareVersion: product.vnfSoftwareVersion, vnfdVersions: [product.vnfdVersion] }],
                  },
                ],
              },
            ],
          },
        },
      });
      await subscribe(call, { callbackUri: `${sink.url}/cb/other-vnfd`, filter: { vnfInstanceSubscriptionFilter: { vnfdIds: ['no-such-vnfd'] } } });
      await subscribe(call, {
        callbackUri: `${sink.url}/cb/other-product`,
        filter: {
          vnfInstanceSubscriptionFilter: {
            vnfProductsFromProviders: [{ vnfProvider: product.vnfProvider, vnfProducts: [{ vnfProductName: 'another product' }] }],
          },
        },
      });
      await subscribe(
        call,
        { callbackUri: `${sink.url}/cb/v1`, filter: { vnfInstanceSubscriptionFilter: { vnfInstanceNames: [name] }, operationStates: ['STARTING'] } },
        1,
      );

      const instance = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId, vnfInstanceName: name } });
      assert.equal(instance.status, 201, instance.text);
      const id = (instance.body as { id: string }).id;
      const instantiate = await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, INSTANTIATE);
      await settle(vnfm);
      const terminate = await operate(`/vnflcm/v2/vnf_instances/${id}/terminate`, { terminationType: 'FORCEFUL' });
      await settle(vnfm);
      assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`)).status, 204);
      await settle(vnfm);
      // The notifier removed the outbox entry of every change it fanned out.
      assert.deepEqual(await outboxEntries(vnfm), []);

      const all = sink.accepted('/cb/all');
      assert.deepEqual(outline(all), [
        'VnfIdentifierCreationNotification',
        'INSTANTIATE STARTING START',
        'INSTANTIATE PROCESSING RESULT',
        'INSTANTIATE COMPLETED RESULT',
        'TERMINATE STARTING START',
        'TERMINATE PROCESSING RESULT',
        'TERMINATE COMPLETED RESULT',
        'VnfIdentifierDeletionNotification',
      ]);
      assert.equal(dedupe(all).length, all.length, 'each notification once');
      await assertNotificationSchemas(all);
      assert.ok(all.every((n) => n.vnfInstanceId === id));
      const [, , , instantiated, , , terminated] = all as Array<Notification & Record<string, unknown>>;
      assert.equal(instantiated?.vnfLcmOpOccId, instantiate.split('/').pop());
      assert.equal(terminated?.vnfLcmOpOccId, terminate.split('/').pop());
      assert.equal(instantiated?.verbosity, 'FULL');
      const added = instantiated?.affectedVnfcs as Array<{ vduId: string; changeType: string }>;
      assert.ok(added.some((c) => c.vduId === 'VDU1' && c.changeType === 'ADDED') && added.some((c) => c.vduId === 'VDU2'), JSON.stringify(added));
      assert.ok((instantiated?.affectedVirtualStorages as unknown[] | undefined)?.length, 'FULL carries the storage changes');
      assert.ok((terminated!.affectedVnfcs as Array<{ changeType: string }>).every((c) => c.changeType === 'REMOVED'));
      assert.equal(all[1]?.affectedVnfcs, undefined, 'START carries no changes');
      const links = instantiated?._links as Record<string, { href: string }>;
      assert.equal(links.vnfLcmOpOcc?.href, `${vnfm.url}${instantiate}`);
      assert.equal(links.vnfInstance?.href, `${vnfm.url}/vnflcm/v2/vnf_instances/${id}`);
      // What the op occ resource says, the notification said.
      const occ = (await call('GET', instantiate)).body as { resourceChanges: { affectedVnfcs: unknown[] } };
      assert.deepEqual(instantiated?.affectedVnfcs, occ.resourceChanges.affectedVnfcs);

      const short = sink.accepted('/cb/completed-short');
      assert.deepEqual(outline(short), ['INSTANTIATE COMPLETED RESULT', 'TERMINATE COMPLETED RESULT']);
      await assertNotificationSchemas(short);
      assert.ok(short.every((n) => n.verbosity === 'SHORT' && n.affectedVnfcs === undefined && n.affectedVirtualStorages === undefined));
      assert.deepEqual(
        short.map((n) => n.id),
        [all[3]?.id, all[6]?.id],
        'one change, one notification id, whichever subscription',
      );

      assert.deepEqual(outline(sink.accepted('/cb/identifiers')), ['VnfIdentifierCreationNotification', 'VnfIdentifierDeletionNotification']);
      assert.deepEqual(outline(sink.accepted('/cb/terminate')), [
        'VnfIdentifierCreationNotification',
        'TERMINATE STARTING START',
        'TERMINATE PROCESSING RESULT',
        'TERMINATE COMPLETED RESULT',
        'VnfIdentifierDeletionNotification',
      ]);
      assert.deepEqual(sink.accepted('/cb/other-vnfd'), []);
      assert.deepEqual(sink.accepted('/cb/other-product'), []);

      const v1 = sink.received.filter((r) => r.path === '/cb/v1');
      // operationStates filters only op occ notifications; the identifier notifications pass it.
      assert.deepEqual(outline(v1.map((r) => r.body)), [
        'VnfIdentifierCreationNotification',
        'INSTANTIATE STARTING START',
        'TERMINATE STARTING START',
        'VnfIdentifierDeletionNotification',
      ]);
      assert.ok(
        v1.every((r) => r.headers.version === '1.3.0' && (r.body._links as { vnfInstance: { href: string } }).vnfInstance.href.includes('/vnflcm/v1/')),
      );

      const posts = sink.received.filter((r) => r.path === '/cb/all');
      assert.ok(
        posts.every((r) => r.method === 'POST' && r.headers.version === '2.0.0' && r.headers['content-type'] === 'application/json' && r.answer === 204),
      );
      await unsubscribeAll(call);
    });

    it('a subscription naming instances by id hears of those alone, read through the instance index; a list filtered by id shows it', async () => {
      const create = async (name: string) =>
        ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId, vnfInstanceName: name } })).body as { id: string }).id;
      const a = await create('by-id-a');
      const b = await create('by-id-b');
      await settle(vnfm);
      const onlyA = await subscribe(call, { callbackUri: `${sink.url}/cb/only-a`, filter: { vnfInstanceSubscriptionFilter: { vnfInstanceIds: [a] } } });
      const both = await subscribe(call, {
        callbackUri: `${sink.url}/cb/a-and-b`,
        filter: { notificationTypes: ['VnfIdentifierDeletionNotification'], vnfInstanceSubscriptionFilter: { vnfInstanceIds: [a, b] } },
      });
      // The start's reconciliation has marked the table keyed: the notifier reads by instance, and the subscription has its key.
      const table = await new DynamoDBClient({ endpoint: vnfm.endpoints.dynamodb, region: vnfm.endpoints.region, credentials: vnfm.awsCredentials }).send(
        new ScanCommand({ TableName: 'SubscriptionsTable' }),
      );
      assert.ok(
        table.Items?.some((item) => item.id?.S?.startsWith('#')),
        'the keyed marker',
      );
      const keyOf = (id: string) => table.Items?.find((item) => item.id?.S === id)?.instanceKey?.S ?? '';
      assert.ok(keyOf(onlyA.split('/').pop() as string).endsWith(`#${a}#0`), keyOf(onlyA.split('/').pop() as string));
      assert.ok(keyOf(both.split('/').pop() as string).endsWith('#*#0'));

      for (const id of [b, a]) assert.equal((await call('PATCH', `/vnflcm/v2/vnf_instances/${id}`, { body: { metadata: { byId: true } } })).status, 202);
      await settle(vnfm);
      // One at a time: notifications of two instances are in two FIFO groups, whose deliveries may interleave.
      for (const id of [b, a]) {
        assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`)).status, 204);
        await settle(vnfm);
      }

      assert.deepEqual(outline(sink.accepted('/cb/only-a')), [
        'MODIFY_INFO STARTING START',
        'MODIFY_INFO PROCESSING RESULT',
        'MODIFY_INFO COMPLETED RESULT',
        'VnfIdentifierDeletionNotification',
      ]);
      assert.ok(sink.accepted('/cb/only-a').every((n) => n.vnfInstanceId === a));
      assert.deepEqual(
        sink.accepted('/cb/a-and-b').map((n) => n.vnfInstanceId),
        [b, a],
      );

      const listed = async (filter: string) =>
        ((await call('GET', `/vnflcm/v2/subscriptions?filter=${encodeURIComponent(filter)}`)).body as Array<{ callbackUri: string }>).map((s) => s.callbackUri);
      const path = 'filter/vnfInstanceSubscriptionFilter/vnfInstanceIds';
      assert.deepEqual(await listed(`(eq,${path},${b})`), [`${sink.url}/cb/a-and-b`]);
      // In the list's order (creation, then id for subscriptions made in the same millisecond), as the unfiltered list shows it.
      const inListOrder = ((await call('GET', '/vnflcm/v2/subscriptions')).body as Array<{ callbackUri: string }>)
        .map((s) => s.callbackUri)
        .filter((uri) => uri === `${sink.url}/cb/only-a` || uri === `${sink.url}/cb/a-and-b`);
      assert.equal(inListOrder.length, 2);
      assert.deepEqual(await listed(`(in,${path},${a},${b})`), inListOrder);
      assert.deepEqual(await listed(`(eq,${path},no-such-instance)`), []);
      await unsubscribeAll(call);
    });

    it('a failed operation notifies FAILED_TEMP with its error, then ROLLING_BACK and ROLLED_BACK, and FAILED after fail', async () => {
      const sim = JSON.parse(readFileSync(join(vnfm.dataDir, 'vims.json'), 'utf8'))['local-openstack'] as { control: string };
      const name = `failing-${crypto.randomUUID()}`;
      await subscribe(call, {
        callbackUri: `${sink.url}/cb/failing`,
        filter: { vnfInstanceSubscriptionFilter: { vnfInstanceNames: [name] }, notificationTypes: ['VnfLcmOperationOccurrenceNotification'] },
      });
      const fault = async () => {
        const response = await fetch(`${sim.control}faults`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ kind: 'stack-create-fail', reason: 'Injected: no valid host', count: 1 }),
        });
        assert.ok(response.ok);
      };
      const id = ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId, vnfInstanceName: name } })).body as { id: string }).id;
      await fault();
      const first = await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, INSTANTIATE);
      await settle(vnfm);
      await operate(`${first}/rollback`);
      await settle(vnfm);
      await fault();
      const second = await operate(`/vnflcm/v2/vnf_instances/${id}/instantiate`, INSTANTIATE);
      await settle(vnfm);
      assert.equal((await call('POST', `${second}/fail`)).status, 200);
      await settle(vnfm);

      const received = sink.accepted('/cb/failing');
      assert.deepEqual(outline(received), [
        'INSTANTIATE STARTING START',
        'INSTANTIATE PROCESSING RESULT',
        'INSTANTIATE FAILED_TEMP RESULT',
        'INSTANTIATE ROLLING_BACK RESULT',
        'INSTANTIATE ROLLED_BACK RESULT',
        'INSTANTIATE STARTING START',
        'INSTANTIATE PROCESSING RESULT',
        'INSTANTIATE FAILED_TEMP RESULT',
        'INSTANTIATE FAILED RESULT',
      ]);
      await assertNotificationSchemas(received);
      for (const n of received) {
        const state = (n as { operationState?: string }).operationState ?? '';
        const error = n.error as { status?: number; detail?: string } | undefined;
        if (['FAILED_TEMP', 'FAILED', 'ROLLED_BACK'].includes(state)) assert.match(error?.detail ?? '', /no valid host/, `${state} carries the error`);
        else assert.equal(error, undefined, `${state} carries no error`);
      }
      await unsubscribeAll(call);
    });

    it('BASIC and OAuth 2.0 subscriptions deliver with the right Authorization; tokens are cached and renewed; no response, log or record holds the credentials', async () => {
      const basicPassword = `basic-${crypto.randomUUID()}`;
      const name = `auth-${crypto.randomUUID()}`;
      const only = { vnfInstanceSubscriptionFilter: { vnfInstanceNames: [name] } };
      const basic = await call('POST', '/vnflcm/v2/subscriptions', {
        body: {
          callbackUri: `${sink.url}/cb/basic`,
          filter: only,
          authentication: { authType: ['BASIC'], paramsBasic: { userName: 'nfvo', password: basicPassword } },
        },
      });
      assert.equal(basic.status, 201, basic.text);
      const tokensBefore = sink.token.requests.length;
      const oauth = await call('POST', '/vnflcm/v1/subscriptions', {
        body: {
          callbackUri: `${sink.url}/cb/oauth`,
          filter: only,
          authentication: {
            authType: ['OAUTH2_CLIENT_CREDENTIALS'],
            paramsOauth2ClientCredentials: { clientId: 'vnfm-client', clientPassword, tokenEndpoint: `${sink.url}/token` },
          },
        },
      });
      assert.equal(oauth.status, 201, oauth.text);
      const expectedBasic = `Basic ${Buffer.from(`nfvo:${basicPassword}`).toString('base64')}`;
      assert.equal(sink.tests.get('/cb/basic')?.authorization, expectedBasic, 'the callback test authenticates');
      assert.equal(sink.tests.get('/cb/oauth')?.authorization, `Bearer ${sink.token.current()}`);

      const pkg = await seedPackage(vnfm);
      const id = ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: pkg.vnfdId, vnfInstanceName: name } })).body as { id: string }).id;
      assert.equal((await call('PATCH', `/vnflcm/v2/vnf_instances/${id}`, { body: { vnfInstanceDescription: 'one' } })).status, 202);
      await settle(vnfm);
      assert.equal(sink.token.requests.length, tokensBefore + 1, 'one token for the test and every delivery');
      const firstToken = sink.token.current();
      // The NFVO revokes the token: the VNFM gets a new one and delivers.
      sink.token.revoke();
      assert.equal((await call('PATCH', `/vnflcm/v2/vnf_instances/${id}`, { body: { vnfInstanceDescription: 'two' } })).status, 202);
      await settle(vnfm);
      assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${id}`)).status, 204);
      await settle(vnfm);

      const expected = [
        'VnfIdentifierCreationNotification',
        'MODIFY_INFO STARTING START',
        'MODIFY_INFO PROCESSING RESULT',
        'MODIFY_INFO COMPLETED RESULT',
        'MODIFY_INFO STARTING START',
        'MODIFY_INFO PROCESSING RESULT',
        'MODIFY_INFO COMPLETED RESULT',
        'VnfIdentifierDeletionNotification',
      ];
      assert.deepEqual(outline(sink.accepted('/cb/basic')), expected);
      assert.deepEqual(outline(sink.accepted('/cb/oauth')), expected);
      assert.ok(sink.received.filter((r) => r.path === '/cb/basic').every((r) => r.headers.authorization === expectedBasic));
      const bearers = sink.received.filter((r) => r.path === '/cb/oauth' && r.answer === 204).map((r) => r.headers.authorization);
      assert.deepEqual([...new Set(bearers)], [`Bearer ${firstToken}`, `Bearer ${sink.token.current()}`], 'the revoked token was replaced once');
      assert.ok(
        sink.token.requests
          .slice(tokensBefore)
          .every(
            (t) => t.authorization === `Basic ${Buffer.from(`vnfm-client:${clientPassword}`).toString('base64')}` && t.body === 'grant_type=client_credentials',
          ),
      );

      const replies = [
        basic,
        oauth,
        await call('GET', '/vnflcm/v2/subscriptions'),
        await call('GET', '/vnflcm/v1/subscriptions?all_fields'),
        await call('GET', `/vnflcm/v2/subscriptions/${(basic.body as { id: string }).id}`),
        await call('GET', `/vnflcm/v2/subscriptions/${(oauth.body as { id: string }).id}`),
      ];
      for (const reply of replies) {
        assert.ok(!reply.text.includes(basicPassword) && !reply.text.includes(clientPassword), `credentials in ${reply.text}`);
        assert.ok(
          !reply.text.includes('authentication') && !reply.text.includes('nfvo') && !reply.text.includes('vnfm-client'),
          `authentication in ${reply.text}`,
        );
      }
      // Filters run on the representation: the authentication cannot be probed through one.
      assertProblem(await call('GET', '/vnflcm/v2/subscriptions?filter=(eq,authentication/paramsBasic/userName,nfvo)'), 400);
      assert.ok(!vnfm.output().includes(basicPassword) && !vnfm.output().includes(clientPassword), 'credentials in the log');
      const table = await new DynamoDBClient({ endpoint: vnfm.endpoints.dynamodb, region: vnfm.endpoints.region, credentials: vnfm.awsCredentials }).send(
        new ScanCommand({ TableName: 'SubscriptionsTable' }),
      );
      const stored = JSON.stringify(table.Items);
      assert.ok(stored.includes('/cb/basic') && !stored.includes(basicPassword) && !stored.includes(clientPassword), 'credentials in the table');
      await unsubscribeAll(call);
    });

    it('through an NFVO answering 503 for a while, every notification arrives, in order per instance, none twice after deduplication', async () => {
      const name = `flaky-${crypto.randomUUID()}`;
      await subscribe(call, { callbackUri: `${sink.url}/cb/flaky`, filter: { vnfInstanceSubscriptionFilter: { vnfInstanceNames: [name] } } });
      sink.answer = (path, attempt) => (path === '/cb/flaky' && attempt <= 8 ? 503 : 204);
      try {
        const pkg = await seedPackage(vnfm);
        const ids = await Promise.all(
          [1, 2, 3].map(async () => {
            const id = ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: pkg.vnfdId, vnfInstanceName: name } })).body as { id: string }).id;
            assert.equal((await call('PATCH', `/vnflcm/v2/vnf_instances/${id}`, { body: { metadata: { flaky: true } } })).status, 202);
            return id;
          }),
        );
        await settle(vnfm);

        const attempts = sink.received.filter((r) => r.path === '/cb/flaky');
        assert.equal(attempts.filter((r) => r.answer === 503).length, 8, 'the NFVO refused the first eight attempts');
        const delivered = dedupe(sink.accepted('/cb/flaky'));
        assert.equal(delivered.length, 12, 'four notifications for each of three instances');
        await assertNotificationSchemas(delivered);
        for (const id of ids) {
          assert.deepEqual(
            outline(delivered.filter((n) => n.vnfInstanceId === id)),
            ['VnfIdentifierCreationNotification', 'MODIFY_INFO STARTING START', 'MODIFY_INFO PROCESSING RESULT', 'MODIFY_INFO COMPLETED RESULT'],
            `instance ${id}`,
          );
        }
        // Every refused notification was offered again with the same id.
        for (const refused of attempts.filter((r) => r.answer === 503)) assert.ok(delivered.some((n) => n.id === refused.body.id));
      } finally {
        sink.answer = () => 204;
      }
      await unsubscribeAll(call);
    });
  });
});

describe('with a short retry period', () => {
  let vnfm: LocalVnfm;
  let call: Call;
  let sink: NfvoSink;

  before(async () => {
    vnfm = await startVnfm({ env: { VNFM_PARAMETER_OVERRIDES: 'NotificationRetryPeriod=2' } });
    call = client(vnfm);
    sink = await startNfvoSink();
  });
  after(async () => {
    await sink.close();
    await vnfm.stop();
  });

  it('deliveries to an NFVO that stays down land in the dead-letter queue, 4xx at once; a redrive delivers them in order', async () => {
    const { sqs, queue, dlq } = sqsOf(vnfm);
    const name = `down-${crypto.randomUUID()}`;
    const only = { vnfInstanceSubscriptionFilter: { vnfInstanceNames: [name] } };
    const down = await subscribe(call, { callbackUri: `${sink.url}/cb/down`, filter: only });
    const rejecting = await subscribe(call, { callbackUri: `${sink.url}/cb/reject`, filter: only });
    let up = false;
    sink.answer = (path) => (up ? 204 : path === '/cb/down' ? 'reset' : 400);

    const pkg = await seedPackage(vnfm);
    const id = ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: pkg.vnfdId, vnfInstanceName: name } })).body as { id: string }).id;
    assert.equal((await call('PATCH', `/vnflcm/v2/vnf_instances/${id}`, { body: { vnfInstanceDescription: 'x' } })).status, 202);
    await settle(vnfm);

    const expected = ['VnfIdentifierCreationNotification', 'MODIFY_INFO STARTING START', 'MODIFY_INFO PROCESSING RESULT', 'MODIFY_INFO COMPLETED RESULT'];
    assert.equal(sink.accepted('/cb/down').length + sink.accepted('/cb/reject').length, 0);
    assert.equal(sink.received.filter((r) => r.path === '/cb/reject').length, 4, '400 is not retried');
    assert.ok(sink.received.filter((r) => r.path === '/cb/down').length > 4, 'connection failures are retried');
    assert.equal(await queueDepth(sqs, queue.url), 0);
    assert.equal(await queueDepth(sqs, dlq.url), 8);

    // An operator inspects the dead letters: what, for whom, and why.
    // Visibility 0 leaves them in place.
    const letters =
      (await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlq.url, MaxNumberOfMessages: 10, VisibilityTimeout: 0, MessageAttributeNames: ['All'] })))
        .Messages ?? [];
    assert.equal(letters.length, 8);
    for (const letter of letters) {
      const body = JSON.parse(letter.Body ?? '{}') as { kind: string; subscriptionId: string; body: Notification };
      const attributes = letter.MessageAttributes ?? {};
      assert.equal(body.kind, 'delivery');
      assert.equal(attributes.subscriptionId?.StringValue, body.subscriptionId);
      assert.equal(attributes.notificationId?.StringValue, body.body.id);
      if (body.subscriptionId === rejecting) {
        assert.equal(attributes.lastStatus?.StringValue, '400');
        assert.match(attributes.reason?.StringValue ?? '', /answered 400/);
      } else {
        assert.equal(body.subscriptionId, down);
        assert.match(attributes.reason?.StringValue ?? '', /retry period 2 s/);
      }
    }

    up = true;
    await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: dlq.arn, DestinationArn: queue.arn }));
    await settle(vnfm);
    assert.equal(await queueDepth(sqs, dlq.url), 0);
    for (const path of ['/cb/down', '/cb/reject']) {
      const delivered = sink.accepted(path);
      assert.deepEqual(outline(delivered), expected, path);
      await assertNotificationSchemas(delivered);
    }
    sqs.destroy();
  });

  it('the egress policy of a deployment without private networks refuses loopback callbacks and package sources', async () => {
    const strict = await startVnfm({ env: { VNFM_PARAMETER_OVERRIDES: 'EgressAllowPrivateNetworks=false' } });
    try {
      const strictCall = client(strict);
      const reply = await strictCall('POST', '/vnflcm/v2/subscriptions', { body: { callbackUri: `${sink.url}/cb/loopback` } });
      assertProblem(reply, 422);
      assert.match((reply.body as { detail: string }).detail, /127\.0\.0\.1 is a loopback address/);
      const named = await strictCall('POST', '/vnflcm/v2/subscriptions', { body: { callbackUri: sink.url.replace('127.0.0.1', 'localhost') } });
      assertProblem(named, 422);
      assert.match((named.body as { detail: string }).detail, /loopback address/, 'a host name is resolved and its addresses checked');
      assert.equal(sink.tests.get('/cb/loopback'), undefined, 'nothing was sent');

      const pkg = ((await strictCall('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
      assert.equal(
        (await strictCall('POST', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content/upload_from_uri`, { body: { addressInformation: `${sink.url}/pkg.zip` } }))
          .status,
        202,
      );
      await settle(strict);
      const refused = (await strictCall('GET', `/vnfpkgm/v1/vnf_packages/${pkg}`)).body as {
        onboardingState: string;
        onboardingFailureDetails: { detail: string };
      };
      assert.equal(refused.onboardingState, 'CREATED');
      assert.match(refused.onboardingFailureDetails.detail, /egress policy refuses this address: 127\.0\.0\.1 is a loopback address/);
    } finally {
      await strict.stop();
    }
  });

  it('upload_from_uri refuses metadata addresses, also behind a redirect', async () => {
    sink.answer = () => 204;
    const redirector = http.createServer((_req, res) => res.writeHead(302, { Location: 'http://169.254.169.254/latest/meta-data/' }).end());
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    try {
      for (const uri of ['http://169.254.169.254/pkg.zip', `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/pkg.zip`]) {
        const pkg = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
        assert.equal(
          (await call('POST', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content/upload_from_uri`, { body: { addressInformation: uri } })).status,
          202,
        );
        await settle(vnfm);
        const refused = (await call('GET', `/vnfpkgm/v1/vnf_packages/${pkg}`)).body as {
          onboardingState: string;
          onboardingFailureDetails: { detail: string };
        };
        assert.equal(refused.onboardingState, 'CREATED', uri);
        assert.match(refused.onboardingFailureDetails.detail, /egress policy refuses this address: 169\.254\.169\.254 .*never allowed/, uri);
      }
    } finally {
      redirector.close();
    }
  });
});

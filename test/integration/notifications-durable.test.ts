// Nothing lost, nothing stuck: notifications queued to an NFVO answering 503 (deliveries in backoff,
// which on SQS means in flight until a visibility time) survive a kill -9 of the local runtime and
// arrive after a restart on the same data folder once the NFVO recovers; dead letters stay in the
// dead-letter queue. A delivery the kill interrupts is made again as soon as the runtime is back.
// The NFVO sink lives in the test process, so it outlives the runtime.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { signedHeaders, type AwsCredentials } from '#local/sigv4.ts';
import { startNfvoSink, type Received } from '../support/nfvo-sink.ts';
import { client, newDataDir, outboxEntries, seedPackage, settle, startVnfm, type LocalVnfm } from '../support/runtime.ts';
import { waitFor } from '../support/wait.ts';

const INSTANCES = 5;
const CREATED = 'VnfIdentifierCreationNotification';

interface Queues {
  sqs: string;
  credentials: AwsCredentials;
  client: SQSClient;
  queue: string;
  deadLetters: string;
}

function queuesOf(vnfm: LocalVnfm): Queues {
  const { sqs, region, queues } = vnfm.endpoints;
  return {
    sqs,
    credentials: vnfm.awsCredentials,
    client: new SQSClient({ endpoint: sqs, region, credentials: vnfm.awsCredentials }),
    queue: queues.NotificationQueue?.url ?? '',
    deadLetters: queues.NotificationDeadLetterQueue?.url ?? '',
  };
}

/** Messages in a queue: visible, in flight (in backoff) or delayed. */
async function depth(queues: Queues, url: string): Promise<number> {
  const out = await queues.client.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  return Object.values(out.Attributes ?? {}).reduce((sum, value) => sum + Number(value), 0);
}

async function sqsControl(queues: Queues, method: 'GET' | 'POST', name: string): Promise<unknown> {
  // The stand-in's controls, like its API, answer only requests signed with the runtime's credentials.
  const url = `${queues.sqs}/_local/${name}`;
  const response = await fetch(url, { method, headers: signedHeaders({ credentials: queues.credentials, service: 'sqs', method, url }) });
  assert.equal(response.status, 200, `SQS control ${name}`);
  return response.json();
}

const idsOf = (requests: Received[]) => [...new Set(requests.map((r) => r.body.id))].sort();

it('notifications queued to an NFVO answering 503 before a kill -9 are delivered after the restart when it recovers; dead letters stay', async () => {
  const dataDir = newDataDir();
  const sink = await startNfvoSink();
  let recovered = false;
  // The NFVO refuses everything with 503 (retried) on one callback and 400 (dead-lettered at once) on the other, until it recovers.
  sink.answer = (path) => (recovered ? 204 : path === '/cb/reject' ? 400 : 503);
  let vnfm = await startVnfm({ dataDir });
  const opened: Queues[] = [];
  try {
    const call = client(vnfm);
    const name = `durable-${crypto.randomUUID()}`;
    for (const path of ['/cb/flaky', '/cb/reject']) {
      const reply = await call('POST', '/vnflcm/v2/subscriptions', {
        body: { callbackUri: `${sink.url}${path}`, filter: { vnfInstanceSubscriptionFilter: { vnfInstanceNames: [name] } } },
      });
      assert.equal(reply.status, 201, reply.text);
    }
    const pkg = await seedPackage(vnfm);
    const ids: string[] = [];
    for (let i = 0; i < INSTANCES; i++) {
      const reply = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: pkg.vnfdId, vnfInstanceName: name } });
      assert.equal(reply.status, 201, reply.text);
      ids.push((reply.body as { id: string }).id);
    }
    const attempts = (path: string) => sink.received.filter((r) => r.path === path && r.body.notificationType === CREATED);
    await waitFor(
      'each creation refused by both callbacks',
      () => ids.every((id) => ['/cb/flaky', '/cb/reject'].every((path) => attempts(path).some((r) => r.body.vnfInstanceId === id))),
      60_000,
    );
    const before = queuesOf(vnfm);
    opened.push(before);
    await waitFor('the rejected deliveries in the dead-letter queue', async () => (await depth(before, before.deadLetters)) === INSTANCES);

    // Kill at a moment when no batch is being handled: receives hand out nothing and the
    // notifier's poller is back waiting, so every refused delivery is in its backoff (a delivery
    // under way at a kill is the next test's case).
    await sqsControl(before, 'POST', 'hold');
    await waitFor(
      'the notification poller to wait for messages',
      async () => ((await sqsControl(before, 'GET', 'receives')) as Record<string, number>)['NotificationQueue.fifo'] === 1,
    );
    const refused = idsOf(attempts('/cb/flaky'));
    assert.equal(refused.length, INSTANCES, 'one notification per instance, each refused at least once');
    assert.ok(attempts('/cb/flaky').every((r) => r.answer === 503));
    assert.equal(await depth(before, before.queue), INSTANCES, 'the refused deliveries are queued, in backoff');
    const rejected = idsOf(attempts('/cb/reject'));
    assert.deepEqual(rejected, refused, 'the same notifications, for the other subscription');
    assert.equal(await vnfm.stop('SIGKILL'), null);

    recovered = true;
    vnfm = await startVnfm({ dataDir });
    await settle(vnfm);

    // Every notification arrives (at least once; the NFVO deduplicates by id), none is lost.
    const delivered = sink.accepted('/cb/flaky');
    assert.deepEqual([...new Set(delivered.map((n) => n.id))].sort(), refused);
    assert.deepEqual(
      delivered
        .map((n) => n.vnfInstanceId)
        .filter((id, i, all) => all.indexOf(id) === i)
        .sort(),
      [...ids].sort(),
    );
    assert.ok(delivered.every((n) => n.notificationType === CREATED));

    // The dead letters from before the kill are still there, for an operator to read and redrive.
    const after = queuesOf(vnfm);
    opened.push(after);
    assert.equal(await depth(after, after.deadLetters), INSTANCES);
    const letters =
      (
        await after.client.send(
          new ReceiveMessageCommand({ QueueUrl: after.deadLetters, MaxNumberOfMessages: 10, VisibilityTimeout: 0, MessageAttributeNames: ['All'] }),
        )
      ).Messages ?? [];
    assert.deepEqual(letters.map((m) => m.MessageAttributes?.notificationId?.StringValue).sort(), rejected);
    assert.ok(letters.every((m) => m.MessageAttributes?.lastStatus?.StringValue === '400'));
    assert.equal(sink.accepted('/cb/reject').length, 0);
  } finally {
    for (const queues of opened) queues.client.destroy();
    await vnfm.stop();
    await sink.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

it('a delivery a kill -9 interrupts is made again as soon as the runtime is back, not a visibility timeout later', async () => {
  const dataDir = newDataDir();
  const sink = await startNfvoSink();
  let recovered = false;
  // The NFVO takes the POST and does not answer: the delivery is under way when the kill comes.
  sink.answer = () => (recovered ? 204 : 'hold');
  let vnfm = await startVnfm({ dataDir });
  try {
    const call = client(vnfm);
    const name = `interrupted-${crypto.randomUUID()}`;
    const reply = await call('POST', '/vnflcm/v2/subscriptions', {
      body: { callbackUri: `${sink.url}/cb/hung`, filter: { vnfInstanceSubscriptionFilter: { vnfInstanceNames: [name] } } },
    });
    assert.equal(reply.status, 201, reply.text);
    const pkg = await seedPackage(vnfm);
    const created = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: pkg.vnfdId, vnfInstanceName: name } });
    assert.equal(created.status, 201, created.text);
    const id = (created.body as { id: string }).id;
    const held = () => sink.received.find((r) => r.path === '/cb/hung' && r.body.vnfInstanceId === id);
    await waitFor('the delivery under way', () => held() !== undefined, 60_000);
    assert.equal(await vnfm.stop('SIGKILL'), null);

    recovered = true;
    vnfm = await startVnfm({ dataDir });
    // The queue's visibility timeout is 6 minutes: a delivery that waited for it would fail here.
    await waitFor('the notification delivered after the restart', () => sink.accepted('/cb/hung').some((n) => n.vnfInstanceId === id), 60_000);
    await settle(vnfm);
    const delivered = sink.accepted('/cb/hung');
    assert.deepEqual([...new Set(delivered.map((n) => n.id))], [held()?.body.id], 'the interrupted notification itself, no other');
    assert.ok(delivered.every((n) => n.notificationType === CREATED));
  } finally {
    await vnfm.stop();
    await sink.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

it("a change's outbox entry stays until the notifier has fanned its event out, across a kill -9, and goes once it has", async () => {
  const dataDir = newDataDir();
  const sink = await startNfvoSink();
  sink.answer = () => 204;
  let vnfm = await startVnfm({ dataDir });
  const opened: Queues[] = [];
  try {
    const call = client(vnfm);
    const name = `outboxed-${crypto.randomUUID()}`;
    const reply = await call('POST', '/vnflcm/v2/subscriptions', {
      body: { callbackUri: `${sink.url}/cb/outbox`, filter: { vnfInstanceSubscriptionFilter: { vnfInstanceNames: [name] } } },
    });
    assert.equal(reply.status, 201, reply.text);
    const pkg = await seedPackage(vnfm);
    await settle(vnfm);
    assert.deepEqual(await outboxEntries(vnfm), []);

    // The notifier receives nothing: the creation's event waits on the queue, and its entry in the outbox.
    const queues = queuesOf(vnfm);
    opened.push(queues);
    await sqsControl(queues, 'POST', 'hold');
    const created = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: pkg.vnfdId, vnfInstanceName: name } });
    assert.equal(created.status, 201, created.text);
    const id = (created.body as { id: string }).id;
    const waiting = await outboxEntries(vnfm);
    assert.equal(waiting.length, 1);
    assert.equal(await depth(queues, queues.queue), 1);
    assert.equal(await vnfm.stop('SIGKILL'), null);

    vnfm = await startVnfm({ dataDir });
    await settle(vnfm);
    const delivered = sink.accepted('/cb/outbox');
    assert.deepEqual(
      delivered.map((n) => [n.id, n.notificationType, n.vnfInstanceId]),
      [[waiting[0], CREATED, id]],
    );
    assert.deepEqual(await outboxEntries(vnfm), []);
  } finally {
    for (const queues of opened) queues.client.destroy();
    await vnfm.stop();
    await sink.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

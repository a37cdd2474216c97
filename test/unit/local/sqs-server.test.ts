// The durable SQS stand-in through the real @aws-sdk/client-sqs: SQS's checksums (which the SDK
// verifies) and errors, message counts, long polls, FIFO deduplication, redrive to the dead-letter
// queue and message move tasks back, and what survives a kill of the process or a torn journal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListMessageMoveTasksCommand,
  ListQueuesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
  type Message,
  type MessageAttributeValue,
} from '@aws-sdk/client-sqs';
import { startLocalSqs, type LocalSqs } from '#local/sqs.ts';
import { JOURNAL_READ_BYTES } from '#local/sqs-server.ts';
import { signedHeaders } from '#local/sigv4.ts';
import { waitFor } from '../../support/wait.ts';

/** The stand-in serves only requests signed with these. */
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

const ROOT = join(import.meta.dirname, '../../..');

interface Harness {
  client: SQSClient;
  endpoint: string;
  dataDir: string;
  create(name: string, attributes?: Record<string, string>): Promise<{ url: string; arn: string }>;
  /** Closes the stand-in and starts a new one on the same data directory. */
  restart(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

async function harness(dataDir = mkdtempSync(join(tmpdir(), 'sqs-server-test-'))): Promise<Harness> {
  let sqs: LocalSqs = await startLocalSqs({ dataDir, credentials });
  const h: Harness = {
    client: clientFor(sqs.endpoint),
    endpoint: sqs.endpoint,
    dataDir,
    async create(name, attributes = {}) {
      const { QueueUrl } = await h.client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
      const attrs = await h.client.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
      return { url: QueueUrl ?? '', arn: attrs.Attributes?.QueueArn ?? '' };
    },
    async restart() {
      h.client.destroy();
      await sqs.close();
      sqs = await startLocalSqs({ dataDir, credentials });
      h.client = clientFor(sqs.endpoint);
      h.endpoint = sqs.endpoint;
    },
    async [Symbol.asyncDispose]() {
      h.client.destroy();
      await sqs.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return h;
}

function clientFor(endpoint: string): SQSClient {
  return new SQSClient({ region: 'us-east-1', endpoint, credentials });
}

async function counts(client: SQSClient, url: string): Promise<{ visible: number; inFlight: number; delayed: number }> {
  const out = await client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }));
  return {
    visible: Number(out.Attributes?.ApproximateNumberOfMessages),
    inFlight: Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible),
    delayed: Number(out.Attributes?.ApproximateNumberOfMessagesDelayed),
  };
}

async function receive(client: SQSClient, url: string, options: { max?: number; wait?: number; visibility?: number } = {}): Promise<Message[]> {
  const out = await client.send(
    new ReceiveMessageCommand({
      QueueUrl: url,
      MaxNumberOfMessages: options.max ?? 10,
      WaitTimeSeconds: options.wait ?? 0,
      VisibilityTimeout: options.visibility,
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
    }),
  );
  return out.Messages ?? [];
}

const bodies = (messages: Message[]) => messages.map((m) => m.Body);

async function rejection(promise: Promise<unknown>): Promise<Error & { Code?: string; $metadata?: { httpStatusCode?: number } }> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  return assert.fail('expected the call to fail');
}

test('checksums are the ones SQS computes: of bodies (verified by the SDK) and of message attributes', async () => {
  await using h = await harness();
  const queue = await h.create('checksums');
  // Digests that AWS returns for these attributes (as pinned by moto's SQS tests).
  const single = await h.client.send(
    new SendMessageCommand({
      QueueUrl: queue.url,
      MessageBody: 'derp',
      MessageAttributes: { timestamp: { DataType: 'Number', StringValue: '1493147359900' } },
    }),
  );
  assert.equal(single.MD5OfMessageBody, '58fd9edd83341c29f1aebba81c31e257');
  assert.equal(single.MD5OfMessageAttributes, '235c5c510d26fb653d073faed50ae77c');
  const complex: Record<string, MessageAttributeValue> = {
    ccc: { DataType: 'String', StringValue: 'testjunk' },
    aaa: { DataType: 'Binary', BinaryValue: new Uint8Array([2, 3, 4]) },
    zzz: { DataType: 'Number', StringValue: '0230.01' },
    öther_encodings: { DataType: 'String', StringValue: 'Tüst' },
  };
  const batch = await h.client.send(
    new SendMessageBatchCommand({
      QueueUrl: queue.url,
      Entries: [
        { Id: 'complex', MessageBody: 'derp', MessageAttributes: complex },
        { Id: 'unicode', MessageBody: 'Héllo!😀 <&>' },
      ],
    }),
  );
  assert.equal(batch.Failed?.length ?? 0, 0);
  assert.equal(batch.Successful?.find((e) => e.Id === 'complex')?.MD5OfMessageAttributes, '8ae21a7957029ef04146b42aeaa18a22');

  // The SDK rejects a receive whose MD5OfBody does not match the body.
  const received = await receive(h.client, queue.url);
  assert.deepEqual(bodies(received), ['derp', 'derp', 'Héllo!😀 <&>']);
  assert.equal(received[0]?.MD5OfMessageAttributes, '235c5c510d26fb653d073faed50ae77c');
  assert.equal(received[1]?.MD5OfMessageAttributes, '8ae21a7957029ef04146b42aeaa18a22');
  assert.deepEqual(received[1]?.MessageAttributes?.aaa?.BinaryValue, new Uint8Array([2, 3, 4]));
  assert.equal(received[2]?.MD5OfMessageAttributes, undefined);
});

test('errors are the ones SQS gives, and malformed requests leave the server running', async () => {
  await using h = await harness();
  const missing = await rejection(h.client.send(new GetQueueUrlCommand({ QueueName: 'nowhere' })));
  assert.equal(missing.name, 'QueueDoesNotExist');
  assert.equal(missing.Code, 'AWS.SimpleQueueService.NonExistentQueue');
  assert.equal(
    (await rejection(h.client.send(new SendMessageCommand({ QueueUrl: `${h.endpoint}/000000000000/nowhere`, MessageBody: 'x' })))).name,
    'QueueDoesNotExist',
  );

  const queue = await h.create('errors', { VisibilityTimeout: '30' });
  const fifo = await h.create('errors.fifo', { FifoQueue: 'true' });
  assert.equal((await rejection(h.client.send(new SendMessageCommand({ QueueUrl: fifo.url, MessageBody: 'x' })))).name, 'MissingParameter');
  assert.equal(
    (await rejection(h.client.send(new SendMessageCommand({ QueueUrl: fifo.url, MessageBody: 'x', MessageGroupId: 'g' })))).name,
    'InvalidParameterValue',
    'no deduplication id and no content-based deduplication',
  );
  assert.equal(
    (await rejection(h.client.send(new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: 'not-a-receipt' })))).name,
    'ReceiptHandleIsInvalid',
  );
  assert.equal((await rejection(h.client.send(new ReceiveMessageCommand({ QueueUrl: queue.url, MaxNumberOfMessages: 11 })))).name, 'InvalidParameterValue');
  assert.equal(
    (
      await rejection(
        h.client.send(
          new SendMessageBatchCommand({
            QueueUrl: queue.url,
            Entries: [
              { Id: 'a', MessageBody: '1' },
              { Id: 'a', MessageBody: '2' },
            ],
          }),
        ),
      )
    ).name,
    'BatchEntryIdsNotDistinct',
  );
  const eleven = Array.from({ length: 11 }, (_, i) => ({ Id: `m${i}`, MessageBody: String(i) }));
  assert.equal((await rejection(h.client.send(new SendMessageBatchCommand({ QueueUrl: queue.url, Entries: eleven })))).name, 'TooManyEntriesInBatchRequest');
  const exists = await rejection(h.client.send(new CreateQueueCommand({ QueueName: 'errors', Attributes: { VisibilityTimeout: '31' } })));
  assert.equal(exists.name, 'QueueNameExists');
  assert.equal(exists.Code, 'QueueAlreadyExists');
  assert.equal((await rejection(h.client.send(new CreateQueueCommand({ QueueName: 'bad name!' })))).name, 'InvalidParameterValue');
  // A bad entry fails alone in a batch.
  const mixed = await h.client.send(
    new SendMessageBatchCommand({
      QueueUrl: fifo.url,
      Entries: [
        { Id: 'ok', MessageBody: 'x', MessageGroupId: 'g', MessageDeduplicationId: 'd' },
        { Id: 'bad', MessageBody: 'y' },
      ],
    }),
  );
  assert.deepEqual(
    mixed.Successful?.map((e) => e.Id),
    ['ok'],
  );
  assert.deepEqual(
    mixed.Failed?.map((e) => [e.Id, e.Code, e.SenderFault]),
    [['bad', 'MissingParameter', true]],
  );

  const raw = async (target: string, body: string) =>
    fetch(h.endpoint, {
      method: 'POST',
      body,
      headers: signedHeaders({
        credentials,
        service: 'sqs',
        method: 'POST',
        url: h.endpoint,
        headers: { 'X-Amz-Target': target, 'Content-Type': 'application/x-amz-json-1.0' },
        body,
      }),
    });
  assert.equal((await raw('AmazonSQS.SendMessage', '{not json')).status, 400);
  assert.equal((await raw('AmazonSQS.SendMessageBatch', JSON.stringify({ QueueUrl: queue.url, Entries: 'many' }))).status, 400);
  assert.equal((await raw('AmazonSQS.ReceiveMessage', JSON.stringify({ QueueUrl: queue.url, MaxNumberOfMessages: 'ten' }))).status, 400);
  assert.equal((await raw('AmazonSQS.Explode', '{}')).status, 400);
  assert.ok(await h.client.send(new ListQueuesCommand({})), 'still serving');
});

test('CreateQueue of an existing queue with equal attributes keeps its messages; counts tell visible, in flight and delayed apart', async () => {
  await using h = await harness();
  const attributes = { VisibilityTimeout: '60' };
  const queue = await h.create('counted', attributes);
  for (const body of ['one', 'two', 'three']) await h.client.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: body }));
  await h.client.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'later', DelaySeconds: 900 }));
  await receive(h.client, queue.url, { max: 1 });
  assert.deepEqual(await counts(h.client, queue.url), { visible: 2, inFlight: 1, delayed: 1 });

  assert.equal((await h.create('counted', attributes)).url, queue.url);
  assert.deepEqual(await counts(h.client, queue.url), { visible: 2, inFlight: 1, delayed: 1 });

  // A long poll is answered by the message sent while it waits.
  await receive(h.client, queue.url);
  const polling = receive(h.client, queue.url, { wait: 20 });
  await h.client.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'awaited' }));
  assert.deepEqual(bodies(await polling), ['awaited']);
});

test('FIFO: a deduplication id is accepted once in five minutes; sequence numbers increase; other groups flow past a locked one', async () => {
  await using h = await harness();
  const queue = await h.create('dedup.fifo', { FifoQueue: 'true', ContentBasedDeduplication: 'true' });
  const send = (body: string, group: string, deduplicationId?: string) =>
    h.client.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: body, MessageGroupId: group, MessageDeduplicationId: deduplicationId }));
  const first = await send('A1', 'A', 'same');
  const again = await send('A1 again', 'A', 'same');
  assert.equal(again.MessageId, first.MessageId, 'the duplicate is acknowledged as the original');
  assert.equal(again.SequenceNumber, first.SequenceNumber);
  const byContent = await send('A2', 'A');
  assert.equal((await send('A2', 'A')).MessageId, byContent.MessageId, 'content-based deduplication');
  const b1 = await send('B1', 'B');
  assert.ok(
    BigInt(b1.SequenceNumber ?? 0) > BigInt(byContent.SequenceNumber ?? 0) && BigInt(byContent.SequenceNumber ?? 0) > BigInt(first.SequenceNumber ?? 0),
  );

  const [head] = await receive(h.client, queue.url, { max: 1 });
  assert.equal(head?.Body, 'A1');
  assert.equal(head?.Attributes?.MessageGroupId, 'A');
  assert.equal(head?.Attributes?.MessageDeduplicationId, 'same');
  assert.equal(head?.Attributes?.SequenceNumber, first.SequenceNumber);
  assert.deepEqual(bodies(await receive(h.client, queue.url)), ['B1'], 'A2 waits behind A1 in flight; B flows');

  const scoped = await h.create('scoped.fifo', { FifoQueue: 'true', DeduplicationScope: 'messageGroup' });
  for (const group of ['X', 'Y'])
    await h.client.send(new SendMessageCommand({ QueueUrl: scoped.url, MessageBody: group, MessageGroupId: group, MessageDeduplicationId: 'one' }));
  assert.equal((await counts(h.client, scoped.url)).visible, 2, 'per-group deduplication scope');
});

test('FIFO: each deduplication id is forgotten when its own five minutes end, over thousands of ids, a restart and a replay', async (t) => {
  // The stand-in's clock moves on by the test's ticks (7 minutes in all); the SDK signs on the real
  // one, within SigV4's 15 minutes of it.
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
  await using h = await harness();
  const queue = await h.create('window.fifo', { FifoQueue: 'true' });
  const send = (id: string) => h.client.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: id, MessageGroupId: 'g', MessageDeduplicationId: id }));
  // More ids than the window keeps past its head before it drops them from its columns.
  const early: string[] = [];
  for (let batch = 0; batch < 500; batch += 1) {
    const out = await h.client.send(
      new SendMessageBatchCommand({
        QueueUrl: queue.url,
        Entries: Array.from({ length: 10 }, (_, i) => ({ Id: String(i), MessageBody: 'x', MessageGroupId: 'g', MessageDeduplicationId: `e${batch * 10 + i}` })),
      }),
    );
    early.push(...(out.Successful ?? []).map((entry) => entry.MessageId ?? ''));
  }
  assert.equal(early.length, 5000);
  t.mock.timers.tick(2 * 60_000);
  const late = await send('late');
  assert.equal((await send('e0')).MessageId, early[0], 'e0 within its window');
  assert.equal((await send('e4999')).MessageId, early[4999]);

  t.mock.timers.tick(3 * 60_000); // e0..e4999's windows end; late's has 2 minutes left
  const e1 = await send('e1');
  assert.notEqual(e1.MessageId, early[1], 'e1 is new again');
  assert.ok(BigInt(e1.SequenceNumber ?? 0) > BigInt(late.SequenceNumber ?? 0));
  const again = await send('late');
  assert.deepEqual([again.MessageId, again.SequenceNumber], [late.MessageId, late.SequenceNumber], 'late within its window');

  await h.restart(); // replays the journal and rewrites it from what the window holds
  assert.equal((await send('late')).MessageId, late.MessageId, 'late remembered across the restart');
  assert.equal((await send('e1')).MessageId, e1.MessageId, "e1's second send remembered");
  assert.notEqual((await send('e2')).MessageId, early[2], 'e2 forgotten');
  await h.restart();
  assert.equal((await send('late')).MessageId, late.MessageId, 'and across a start on the rewritten journal');

  t.mock.timers.tick(2 * 60_000);
  assert.notEqual((await send('late')).MessageId, late.MessageId, "late's window ended");
  assert.equal((await send('e1')).MessageId, e1.MessageId, "e1's second window has not");
});

test('a message received maxReceiveCount times moves to the dead-letter queue on the next receive, and a move task brings it back', async () => {
  await using h = await harness();
  const dlq = await h.create('redrive-dlq');
  const queue = await h.create('redrive', { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: '2' }) });
  const other = await h.create('elsewhere');
  await h.client.send(
    new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'poison', MessageAttributes: { why: { DataType: 'String', StringValue: 'test' } } }),
  );
  assert.deepEqual(
    (await receive(h.client, queue.url, { visibility: 0 })).map((m) => m.Attributes?.ApproximateReceiveCount),
    ['1'],
  );
  assert.deepEqual(
    (await receive(h.client, queue.url, { visibility: 0 })).map((m) => m.Attributes?.ApproximateReceiveCount),
    ['2'],
  );
  assert.deepEqual(await receive(h.client, queue.url), [], 'the third receive moves it instead');
  assert.deepEqual(await counts(h.client, queue.url), { visible: 0, inFlight: 0, delayed: 0 });

  const [dead] = await receive(h.client, dlq.url, { visibility: 0 });
  assert.equal(dead?.Body, 'poison');
  assert.equal(dead?.Attributes?.DeadLetterQueueSourceArn, queue.arn);
  assert.equal(dead?.MessageAttributes?.why?.StringValue, 'test');

  assert.equal(
    (await rejection(h.client.send(new StartMessageMoveTaskCommand({ SourceArn: other.arn })))).name,
    'InvalidParameterValue',
    'only a dead-letter queue is a source',
  );
  await h.client.send(new StartMessageMoveTaskCommand({ SourceArn: dlq.arn }));
  const tasks = async () => (await h.client.send(new ListMessageMoveTasksCommand({ SourceArn: dlq.arn, MaxResults: 10 }))).Results ?? [];
  await waitFor('the move task to complete', async () => (await tasks())[0]?.Status === 'COMPLETED');
  assert.equal((await tasks())[0]?.ApproximateNumberOfMessagesMoved, 1);
  const [back] = await receive(h.client, queue.url);
  assert.equal(back?.Body, 'poison', 'back in its source queue');
  assert.equal(back?.Attributes?.ApproximateReceiveCount, '1');

  // And to another queue, when a destination is named.
  await h.client.send(new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: back?.ReceiptHandle }));
  await h.client.send(new SendMessageCommand({ QueueUrl: dlq.url, MessageBody: 'stray' }));
  await h.client.send(new StartMessageMoveTaskCommand({ SourceArn: dlq.arn, DestinationArn: other.arn }));
  await waitFor('the second move task to complete', async () => (await tasks())[0]?.Status === 'COMPLETED');
  assert.equal((await tasks()).length, 2);
  assert.deepEqual(bodies(await receive(h.client, other.url)), ['stray']);
});

test('after a SIGKILL, a new stand-in on the same folder holds exactly the messages, backoffs, dead letters, delays and FIFO state; what the killed consumer was handling is visible at once', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sqs-kill-test-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/unit/local/sqs-kill-child.ts', dataDir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  const line = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('\n')) resolve(output.split('\n')[0] as string);
    });
    void exited.then(() => reject(new Error(`the child exited early: ${output}`)));
  });
  const before = JSON.parse(line) as { backoffReceipt: string; a1: { messageId: string; receipt: string; body: string }; b1SequenceNumber: string };
  child.kill('SIGKILL');
  assert.equal(await exited, 'SIGKILL');

  await using h = await harness(dataDir);
  const url = (name: string) => `${h.endpoint}/000000000000/${name}`;
  const source = url('kill-source');
  const dlq = url('kill-dlq');
  const fifo = url('kill.fifo');
  assert.deepEqual((await h.client.send(new ListQueuesCommand({}))).QueueUrls, [dlq, source, fifo]);

  // The message received on the queue's ten-minute visibility timeout was being handled by a
  // consumer that died with the process: it is visible at once. The backoff its consumer set holds.
  assert.deepEqual(await counts(h.client, source), { visible: 3, inFlight: 1, delayed: 1 });
  const visible = await receive(h.client, source);
  assert.deepEqual(bodies(visible), ['in-flight', 'visible-1', 'visible-2']);
  assert.equal(visible[0]?.Attributes?.ApproximateReceiveCount, '2');
  assert.equal(
    visible[1]?.MD5OfMessageAttributes,
    (
      await h.client.send(
        new SendMessageCommand({
          QueueUrl: dlq,
          MessageBody: 'probe',
          MessageAttributes: { kind: { DataType: 'String', StringValue: 'first' }, size: { DataType: 'Number', StringValue: '1' } },
        }),
      )
    ).MD5OfMessageAttributes,
  );
  await h.client.send(new DeleteMessageBatchCommand({ QueueUrl: source, Entries: visible.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })) }));
  // The receipt handle from before the kill still holds the one in backoff.
  assert.deepEqual(await counts(h.client, source), { visible: 0, inFlight: 1, delayed: 1 });
  await h.client.send(new ChangeMessageVisibilityCommand({ QueueUrl: source, ReceiptHandle: before.backoffReceipt, VisibilityTimeout: 0 }));
  const backoff = await receive(h.client, source);
  assert.deepEqual(bodies(backoff), ['backoff']);
  assert.equal(backoff[0]?.Attributes?.ApproximateReceiveCount, '2');

  const dead = await receive(h.client, dlq, { visibility: 0 });
  assert.deepEqual(bodies(dead), ['poison', 'probe']);
  assert.equal(dead[0]?.Attributes?.DeadLetterQueueSourceArn, 'arn:aws:sqs:us-east-1:000000000000:kill-source');

  // FIFO: A1, which the killed consumer held, is visible again and group A with it; B1 follows. Its
  // deduplication id is still remembered.
  assert.equal(before.a1.body, 'A1');
  const received = await receive(h.client, fifo);
  assert.deepEqual(bodies(received), ['A1', 'A2', 'B1']);
  assert.equal(received[0]?.Attributes?.ApproximateReceiveCount, '2');
  const duplicate = await h.client.send(new SendMessageCommand({ QueueUrl: fifo, MessageBody: 'A1', MessageGroupId: 'A', MessageDeduplicationId: 'a1' }));
  assert.equal(duplicate.MessageId, before.a1.messageId);
  const c1 = await h.client.send(new SendMessageCommand({ QueueUrl: fifo, MessageBody: 'C1', MessageGroupId: 'C', MessageDeduplicationId: 'c1' }));
  assert.ok(BigInt(c1.SequenceNumber ?? 0) > BigInt(before.b1SequenceNumber), 'sequence numbers go on increasing');
});

test('a journal of many reads, a character cut by a read and a line that is not JSON in the middle are read whole at a start', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sqs-server-test-'));
  const logged: string[] = [];
  let sqs = await startLocalSqs({ dataDir, credentials, log: (line) => logged.push(line) });
  let client = clientFor(sqs.endpoint);
  try {
    const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: 'big' }));
    // ~2.7 MB of journal (three reads), every character of each body two to four bytes long.
    const body = (n: number) => `${'𝄞é✓'.repeat(100)} ${n}`;
    const sent = 3000;
    for (let n = 0; n < sent; n += 10)
      await client.send(
        new SendMessageBatchCommand({ QueueUrl, Entries: Array.from({ length: 10 }, (_, i) => ({ Id: String(i), MessageBody: body(n + i) })) }),
      );
    client.destroy();
    await sqs.close();

    // A line that is not JSON, inserted so that the first read ends inside a character; and a torn last line.
    const journal = join(dataDir, 'big.jsonl');
    const bytes = readFileSync(journal);
    const at = bytes.indexOf('\n', 100_000) + 1;
    let bad = 'not json';
    while (((bytes[JOURNAL_READ_BYTES - Buffer.byteLength(bad) - 1] as number) & 0xc0) !== 0x80) bad += '!';
    const rewritten = Buffer.concat([
      bytes.subarray(0, at),
      Buffer.from(`${bad}\n`),
      bytes.subarray(at),
      Buffer.from('{"op":"send","message":{"id":"torn","bo'),
    ]);
    assert.equal((rewritten[JOURNAL_READ_BYTES] as number) & 0xc0, 0x80, 'the first read ends inside a character');
    writeFileSync(journal, rewritten);
    const badLine = rewritten.subarray(0, at).toString('utf8').split('\n').length;

    sqs = await startLocalSqs({ dataDir, credentials, log: (line) => logged.push(line) });
    client = clientFor(sqs.endpoint);
    const url = `${sqs.endpoint}/000000000000/big`;
    assert.deepEqual(await counts(client, url), { visible: sent, inFlight: 0, delayed: 0 });
    assert.deepEqual(logged, [`[sqs] ${journal}: line ${badLine} is not JSON; skipped`], 'the line in the middle is named; the torn last one is not');
    const seen = new Set<string>();
    for (let got = await receive(client, url); got.length; got = await receive(client, url)) for (const message of got) seen.add(message.Body ?? '');
    assert.deepEqual(seen, new Set(Array.from({ length: sent }, (_, n) => body(n))));
  } finally {
    client.destroy();
    await sqs.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a torn last journal line is ignored, and the journal is compacted as messages come and go', async () => {
  await using h = await harness();
  const queue = await h.create('churn');
  for (let round = 0; round < 60; round++) {
    await h.client.send(
      new SendMessageBatchCommand({
        QueueUrl: queue.url,
        Entries: Array.from({ length: 10 }, (_, i) => ({ Id: String(i), MessageBody: `round ${round} message ${i}` })),
      }),
    );
    const got = await receive(h.client, queue.url);
    await h.client.send(
      new DeleteMessageBatchCommand({ QueueUrl: queue.url, Entries: got.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })) }),
    );
  }
  await h.client.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'kept' }));
  const journal = join(h.dataDir, 'churn.jsonl');
  const lines = () => readFileSync(journal, 'utf8').split('\n').filter(Boolean).length;
  assert.ok(lines() < 1200, `1800 records written, ${lines()} kept`);

  await h.restart();
  assert.equal(lines(), 3, 'compacted at start: the queue, its sequence counter and its one message');
  appendFileSync(journal, '{"op":"send","message":{"id":"torn","bo');
  await h.restart();
  const url = () => `${h.endpoint}/000000000000/churn`; // the port is new after each restart
  assert.deepEqual(await counts(h.client, url()), { visible: 1, inFlight: 0, delayed: 0 });
  await h.client.send(new SendMessageCommand({ QueueUrl: url(), MessageBody: 'after' }));
  await h.restart();
  assert.deepEqual(bodies(await receive(h.client, url())), ['kept', 'after']);
});

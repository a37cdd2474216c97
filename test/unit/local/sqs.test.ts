// Tests for local SQS and the Lambda-style queue poller, driven through the real @aws-sdk/client-sqs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { startLocalSqs, startQueuePoller } from '#local/sqs.ts';
import type { QueuePollerOptions } from '#local/sqs.ts';
import { waitFor } from '../../support/wait.ts';

/** The stand-in serves only requests signed with these. */
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

interface Harness {
  client: SQSClient;
  endpoint: string;
  createQueue(name: string, attributes?: Record<string, string>): Promise<{ url: string; arn: string }>;
  poll(opts: Omit<QueuePollerOptions, 'client'>): void;
  [Symbol.asyncDispose](): Promise<void>;
}

async function harness(): Promise<Harness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sqs-test-'));
  const sqs = await startLocalSqs({ dataDir, credentials });
  const client = new SQSClient({ region: 'us-east-1', endpoint: sqs.endpoint, credentials });
  const pollers: Array<{ stop(): Promise<void> }> = [];
  return {
    client,
    endpoint: sqs.endpoint,
    async createQueue(name, attributes = {}) {
      const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
      const attrs = await client.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
      return { url: QueueUrl ?? '', arn: attrs.Attributes?.QueueArn ?? '' };
    },
    poll(opts) {
      pollers.push(startQueuePoller({ client, ...opts }));
    },
    async [Symbol.asyncDispose]() {
      for (const poller of pollers) await poller.stop();
      client.destroy();
      await sqs.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function messageCount(client: SQSClient, url: string): Promise<number> {
  const out = await client.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
}

test('delivers Lambda-shaped SQS events in batches and deletes handled messages', async () => {
  await using h = await harness();
  const queue = await h.createQueue('deliveries', { VisibilityTimeout: '30' });
  await h.client.send(
    new SendMessageCommand({
      QueueUrl: queue.url,
      MessageBody: '{"hello":"world"}',
      MessageAttributes: {
        kind: { DataType: 'String', StringValue: 'greeting' },
        blob: { DataType: 'Binary', BinaryValue: new Uint8Array([1, 2, 3]) },
      },
    }),
  );
  for (let i = 0; i < 4; i++) await h.client.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: `m${i}` }));

  const events: SQSEvent[] = [];
  h.poll({
    queueUrl: queue.url,
    queueArn: queue.arn,
    batchSize: 2,
    handler: async (event) => {
      events.push(event);
    },
  });
  await waitFor('all five messages delivered', () => events.flatMap((e) => e.Records).length === 5);
  await waitFor('the queue to be empty', async () => (await messageCount(h.client, queue.url)) === 0);

  assert.ok(
    events.every((e) => e.Records.length >= 1 && e.Records.length <= 2),
    'batchSize is respected',
  );
  const first = events[0]?.Records[0] as SQSRecord;
  assert.deepEqual(Object.keys(first).sort(), [
    'attributes',
    'awsRegion',
    'body',
    'eventSource',
    'eventSourceARN',
    'md5OfBody',
    'md5OfMessageAttributes',
    'messageAttributes',
    'messageId',
    'receiptHandle',
  ]);
  assert.equal(first.body, '{"hello":"world"}');
  assert.equal(first.eventSource, 'aws:sqs');
  assert.equal(first.eventSourceARN, queue.arn);
  assert.equal(first.awsRegion, 'us-east-1');
  assert.match(first.md5OfBody, /^[0-9a-f]{32}$/);
  assert.equal(first.attributes.ApproximateReceiveCount, '1');
  assert.match(first.attributes.SentTimestamp, /^\d{13}$/);
  assert.match(first.attributes.ApproximateFirstReceiveTimestamp, /^\d{13}$/);
  assert.ok(first.attributes.SenderId);
  assert.deepEqual(first.messageAttributes, {
    kind: { stringValue: 'greeting', stringListValues: [], binaryListValues: [], dataType: 'String' },
    blob: { binaryValue: Buffer.from([1, 2, 3]).toString('base64'), stringListValues: [], binaryListValues: [], dataType: 'Binary' },
  });
  assert.deepEqual(
    events.flatMap((e) => e.Records.map((r) => r.body)),
    ['{"hello":"world"}', 'm0', 'm1', 'm2', 'm3'],
  );
});

test('partial batch failure redelivers only the failed message', async () => {
  await using h = await harness();
  const queue = await h.createQueue('partial', { VisibilityTimeout: '1' });
  for (const body of ['one', 'two', 'three']) await h.client.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: body }));

  const deliveries: Array<{ body: string; receiveCount: string }> = [];
  let failedOnce = false;
  h.poll({
    queueUrl: queue.url,
    queueArn: queue.arn,
    reportBatchItemFailures: true,
    handler: async (event): Promise<SQSBatchResponse> => {
      const failures: SQSBatchResponse['batchItemFailures'] = [];
      for (const record of event.Records) {
        deliveries.push({ body: record.body, receiveCount: record.attributes.ApproximateReceiveCount });
        if (record.body === 'two' && !failedOnce) {
          failedOnce = true;
          failures.push({ itemIdentifier: record.messageId });
        }
      }
      return { batchItemFailures: failures };
    },
  });
  await waitFor('"two" to be redelivered', () => deliveries.filter((d) => d.body === 'two').length === 2);
  await waitFor('the queue to be empty', async () => (await messageCount(h.client, queue.url)) === 0);
  assert.equal(deliveries.filter((d) => d.body === 'one').length, 1);
  assert.equal(deliveries.filter((d) => d.body === 'three').length, 1);
  assert.deepEqual(
    deliveries.filter((d) => d.body === 'two').map((d) => d.receiveCount),
    ['1', '2'],
  );
});

test('a message whose handler keeps throwing lands in the DLQ after maxReceiveCount receives', async () => {
  await using h = await harness();
  const dlq = await h.createQueue('poison-dlq');
  const queue = await h.createQueue('poison', {
    VisibilityTimeout: '1',
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 2 }),
  });
  await h.client.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'poison pill' }));
  const receiveCounts: string[] = [];
  h.poll({
    queueUrl: queue.url,
    queueArn: queue.arn,
    reportBatchItemFailures: true,
    handler: async (event) => {
      for (const record of event.Records) receiveCounts.push(record.attributes.ApproximateReceiveCount);
      throw new Error('cannot handle this');
    },
  });
  await waitFor('the message to reach the DLQ', async () => (await messageCount(h.client, dlq.url)) === 1);
  assert.deepEqual(receiveCounts, ['1', '2']);
  const dead = await h.client.send(new ReceiveMessageCommand({ QueueUrl: dlq.url, WaitTimeSeconds: 1 }));
  assert.equal(dead.Messages?.[0]?.Body, 'poison pill');
  assert.equal(await messageCount(h.client, queue.url), 0);
});

test('FIFO: after a failure, later messages of the same group in the batch are kept, preserving order', async () => {
  await using h = await harness();
  const queue = await h.createQueue('orders.fifo', { FifoQueue: 'true', ContentBasedDeduplication: 'true', VisibilityTimeout: '2' });
  for (const [group, body] of [
    ['A', 'A1'],
    ['A', 'A2'],
    ['B', 'B1'],
    ['A', 'A3'],
  ] as const) {
    await h.client.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: body, MessageGroupId: group }));
  }
  const batches: string[][] = [];
  const handled: string[] = [];
  const records: SQSRecord[] = [];
  let failedA2 = false;
  h.poll({
    queueUrl: queue.url,
    queueArn: queue.arn,
    reportBatchItemFailures: true,
    handler: async (event): Promise<SQSBatchResponse> => {
      batches.push(event.Records.map((r) => r.body));
      records.push(...event.Records);
      const failures: SQSBatchResponse['batchItemFailures'] = [];
      for (const record of event.Records) {
        if (record.body === 'A2' && !failedA2) {
          failedA2 = true;
          failures.push({ itemIdentifier: record.messageId });
          continue;
        }
        // A function that stops a group at its first failure still sees (and may process) later records;
        // the poller must not delete them.
        if (failures.length === 0 || record.attributes.MessageGroupId !== 'A') handled.push(record.body);
      }
      return { batchItemFailures: failures };
    },
  });
  await waitFor('every message to be handled', () => ['A1', 'A2', 'A3', 'B1'].every((b) => handled.includes(b)));
  await waitFor('the queue to be empty', async () => (await messageCount(h.client, queue.url)) === 0);

  assert.deepEqual(batches[0], ['A1', 'A2', 'B1', 'A3']);
  assert.deepEqual(
    handled.filter((b) => b.startsWith('A')),
    ['A1', 'A2', 'A3'],
    'group A handled in order, once each',
  );
  const a3 = records.filter((r) => r.body === 'A3');
  assert.deepEqual(
    a3.map((r) => r.attributes.ApproximateReceiveCount),
    ['1', '2'],
    'A3 was not deleted after A2 failed',
  );
  assert.equal(records.filter((r) => r.body === 'B1').length, 1, 'other groups are unaffected');
  const fifoAttrs = records[0]?.attributes;
  assert.equal(fifoAttrs?.MessageGroupId, 'A');
  assert.ok(fifoAttrs?.MessageDeduplicationId);
  assert.ok(fifoAttrs?.SequenceNumber);
});

test('stop() aborts an in-flight long poll', async () => {
  await using h = await harness();
  const queue = await h.createQueue('idle');
  const signals: AbortSignal[] = [];
  let received!: () => void;
  const receiving = new Promise<void>((resolve) => {
    received = resolve;
  });
  const observed = new SQSClient({ region: 'us-east-1', endpoint: h.endpoint, credentials });
  const send = observed.send.bind(observed) as (command: unknown, options?: { abortSignal?: AbortSignal }) => Promise<unknown>;
  (observed as unknown as { send: typeof send }).send = (command, options) => {
    if (options?.abortSignal) signals.push(options.abortSignal);
    received();
    return send(command, options);
  };
  const poller = startQueuePoller({ client: observed, queueUrl: queue.url, queueArn: queue.arn, handler: async () => {} });
  await receiving;
  await poller.stop();
  assert.equal(signals.length, 1);
  assert.equal(signals[0]?.aborted, true);
  observed.destroy();
});

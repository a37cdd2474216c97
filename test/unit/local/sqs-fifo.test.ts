// The local SQS stand-in's FIFO group lock and the poller's idle(), driven through the real
// @aws-sdk/client-sqs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse } from 'aws-lambda';
import { startLocalSqs, startQueuePoller } from '#local/sqs.ts';

/** The stand-in serves only requests signed with these. */
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

async function fifoQueue(name: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'sqs-fifo-test-'));
  const sqs = await startLocalSqs({ dataDir, credentials });
  const client = new SQSClient({ region: 'us-east-1', endpoint: sqs.endpoint, credentials });
  const { QueueUrl } = await client.send(
    new CreateQueueCommand({ QueueName: `${name}.fifo`, Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true', VisibilityTimeout: '30' } }),
  );
  const url = QueueUrl ?? '';
  const arn = (await client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn ?? '';
  const send = async (group: string, body: string) => client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body, MessageGroupId: group }));
  const receive = async (max: number, wait = 0): Promise<Message[]> =>
    (
      await client.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          MaxNumberOfMessages: max,
          WaitTimeSeconds: wait,
          AttributeNames: ['All'],
        }),
      )
    ).Messages ?? [];
  return {
    client,
    url,
    arn,
    send,
    receive,
    async [Symbol.asyncDispose]() {
      client.destroy();
      await sqs.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const bodies = (messages: Message[]) => messages.map((m) => m.Body);

test('a group with a message in flight gives out nothing more until that message is deleted', async () => {
  await using q = await fifoQueue('lock');
  for (const [group, body] of [
    ['A', 'A1'],
    ['A', 'A2'],
    ['B', 'B1'],
  ] as const)
    await q.send(group, body);

  const [first] = await q.receive(1);
  assert.equal(first?.Body, 'A1');
  assert.deepEqual(bodies(await q.receive(10)), ['B1'], 'A2 waits while A1 is in flight');
  assert.deepEqual(bodies(await q.receive(10)), [], 'and is not handed out on the next receive either');

  await q.client.send(new DeleteMessageCommand({ QueueUrl: q.url, ReceiptHandle: first?.ReceiptHandle }));
  assert.deepEqual(bodies(await q.receive(10, 2)), ['A2'], 'deleting A1 releases the group');
});

test('one receive may hand out several messages of a group, in order', async () => {
  await using q = await fifoQueue('same-call');
  for (const body of ['A1', 'A2', 'A3']) await q.send('A', body);
  assert.deepEqual(bodies(await q.receive(10, 1)), ['A1', 'A2', 'A3']);
});

test('a message kept in flight by ChangeMessageVisibility holds its group until it comes back, and comes back first', async () => {
  await using q = await fifoQueue('backoff');
  await q.send('A', 'A1');
  await q.send('A', 'A2');
  const [head] = await q.receive(1);
  assert.equal(head?.Body, 'A1');
  // A consumer backing off: A1 stays invisible for a second; A2 must not overtake it.
  await q.client.send(new ChangeMessageVisibilityCommand({ QueueUrl: q.url, ReceiptHandle: head?.ReceiptHandle, VisibilityTimeout: 1 }));
  assert.deepEqual(bodies(await q.receive(10)), []);
  const next = await q.receive(1, 5);
  assert.deepEqual(bodies(next), ['A1'], 'the head comes back before A2');
  await q.client.send(new DeleteMessageCommand({ QueueUrl: q.url, ReceiptHandle: next[0]?.ReceiptHandle }));
  assert.deepEqual(bodies(await q.receive(10, 5)), ['A2']);
});

test('the poller keeps a failed head in flight for its backoff, delivers its group in order, and idle() waits for all of it', async () => {
  await using q = await fifoQueue('poller');
  for (const [group, body] of [
    ['A', 'A1'],
    ['A', 'A2'],
    ['B', 'B1'],
    ['A', 'A3'],
  ] as const)
    await q.send(group, body);
  const seen: string[] = [];
  let failures = 0;
  const poller = startQueuePoller({
    client: q.client,
    queueUrl: q.url,
    queueArn: q.arn,
    reportBatchItemFailures: true,
    handler: async (event): Promise<SQSBatchResponse> => {
      const failed: string[] = [];
      for (const record of event.Records) {
        const group = record.attributes.MessageGroupId;
        if (failed.length && event.Records.some((r) => failed.includes(r.messageId) && r.attributes.MessageGroupId === group)) {
          failed.push(record.messageId);
          continue;
        }
        if (record.body === 'A2' && failures < 2) {
          failures++;
          failed.push(record.messageId);
          continue;
        }
        seen.push(record.body);
      }
      // As the notifier does: the failed messages stay invisible for a one-second backoff.
      const handles = event.Records.filter((r) => failed.includes(r.messageId)).map((r) => r.receiptHandle);
      for (const handle of handles) await q.client.send(new ChangeMessageVisibilityCommand({ QueueUrl: q.url, ReceiptHandle: handle, VisibilityTimeout: 1 }));
      return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
    },
  });
  try {
    assert.equal(await poller.idle(), true, 'there was something to wait for');
    assert.equal(failures, 2);
    assert.deepEqual(
      seen.filter((b) => b.startsWith('A')),
      ['A1', 'A2', 'A3'],
    );
    assert.ok(seen.includes('B1'));
    assert.equal(await poller.idle(), false, 'nothing left');
  } finally {
    await poller.stop();
  }
});

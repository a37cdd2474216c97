// A child process for sqs-server.test.ts, which kills it with SIGKILL: starts the SQS stand-in on
// the data directory given, leaves its queues in a known state (dead letters, a message in flight
// on its receive's timeout, one in a backoff its consumer set, one delayed, a FIFO group locked,
// deduplication ids), prints what the test needs to know as one JSON line and waits to be killed.
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { startLocalSqs } from '#local/sqs.ts';

/** The stand-in serves only requests signed with these. */
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: sqs-kill-child.ts <data dir>');
const sqs = await startLocalSqs({ dataDir, credentials });
const client = new SQSClient({ region: 'us-east-1', endpoint: sqs.endpoint, credentials });
const create = async (name: string, attributes: Record<string, string>) =>
  (await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))).QueueUrl ?? '';
const send = (url: string, body: string, extra: Partial<ConstructorParameters<typeof SendMessageCommand>[0]> = {}) =>
  client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body, ...extra }));
const receive = async (url: string, max: number, visibility?: number) =>
  (await client.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: max, VisibilityTimeout: visibility }))).Messages ?? [];
const handleOf = (messages: Array<{ Body?: string; ReceiptHandle?: string }>, body: string) => messages.find((m) => m.Body === body)?.ReceiptHandle ?? '';

await create('kill-dlq', {});
const source = await create('kill-source', {
  VisibilityTimeout: '600',
  RedrivePolicy: JSON.stringify({ deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:kill-dlq', maxReceiveCount: 2 }),
});
const fifo = await create('kill.fifo', { FifoQueue: 'true', VisibilityTimeout: '600' });

// A poison message received twice, then moved to the dead-letter queue by the next receive.
await send(source, 'poison');
await receive(source, 1, 0);
await receive(source, 1, 0);
await receive(source, 1);
// Three received: one deleted, one given a backoff by its consumer, one left on the queue's visibility timeout.
for (const body of ['in-flight', 'backoff', 'deleted']) await send(source, body);
const flying = await receive(source, 10);
await client.send(new DeleteMessageCommand({ QueueUrl: source, ReceiptHandle: handleOf(flying, 'deleted') }));
await client.send(new ChangeMessageVisibilityCommand({ QueueUrl: source, ReceiptHandle: handleOf(flying, 'backoff'), VisibilityTimeout: 600 }));
await send(source, 'visible-1', { MessageAttributes: { kind: { DataType: 'String', StringValue: 'first' }, size: { DataType: 'Number', StringValue: '1' } } });
await send(source, 'visible-2');
await send(source, 'delayed', { DelaySeconds: 900 });

const a1 = await send(fifo, 'A1', { MessageGroupId: 'A', MessageDeduplicationId: 'a1' });
await send(fifo, 'A2', { MessageGroupId: 'A', MessageDeduplicationId: 'a2' });
const b1 = await send(fifo, 'B1', { MessageGroupId: 'B', MessageDeduplicationId: 'b1' });
const [head] = await receive(fifo, 1);

process.stdout.write(
  `${JSON.stringify({
    backoffReceipt: handleOf(flying, 'backoff'),
    a1: { messageId: a1.MessageId, receipt: head?.ReceiptHandle, body: head?.Body },
    b1SequenceNumber: b1.SequenceNumber,
  })}\n`,
);
setInterval(() => {}, 60_000); // until killed

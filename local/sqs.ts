// Local SQS: the durable stand-in (local/sqs-server.ts), plus the queue poller that plays the part
// of Lambda's SQS event source mapping (batching, deletion, partial batch failures, FIFO ordering).
import { setTimeout as delay } from 'node:timers/promises';
import { DeleteMessageBatchCommand, GetQueueAttributesCommand, ListMessageMoveTasksCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { Message, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord, SQSRecordAttributes } from 'aws-lambda';

export { startLocalSqs, type LocalSqs, type LocalSqsOptions } from './sqs-server.ts';

export interface QueuePollerOptions {
  client: SQSClient;
  queueUrl: string;
  queueArn: string;
  /** Messages per handler invocation (default 10). */
  batchSize?: number;
  /** How long to keep gathering a batch once the first message arrived (default 0). */
  maximumBatchingWindowSeconds?: number;
  /** Honour `batchItemFailures` in the handler's response (FunctionResponseTypes: ReportBatchItemFailures). */
  reportBatchItemFailures?: boolean;
  // biome-ignore lint/suspicious/noConfusingVoidType: a Lambda handler without batch item failures returns nothing
  handler: (event: SQSEvent) => Promise<SQSBatchResponse | void>;
  /** The queue's dead-letter queue: idle() also waits for message move tasks (redrives) out of it. */
  deadLetterQueueArn?: string;
  log?: (line: string) => void;
}

export interface QueuePoller {
  /** Aborts the current receive, lets an in-flight handler call finish, and resolves once polling has ended. */
  stop(): Promise<void>;
  /**
   * Resolves when the queue holds no message (visible, in flight or delayed), no batch is being
   * handled and no redrive into it is running; true when there was something to wait for.
   */
  idle(): Promise<boolean>;
}

const ACCOUNT = '000000000000';
/** Lambda long-polls for 20 s; the stand-in answers as soon as a message is available. */
const LONG_POLL_SECONDS = 20;
const ERROR_BACKOFF_MS = 1000;
const IDLE_CHECK_MS = 20;

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'RequestAbortedError');
}

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

function toRecordAttributes(message: Message, fifo: boolean): SQSRecordAttributes {
  const a: Partial<Record<string, string>> = message.Attributes ?? {};
  const now = String(Date.now());
  const attributes: SQSRecordAttributes = {
    ApproximateReceiveCount: a.ApproximateReceiveCount ?? '1',
    SentTimestamp: a.SentTimestamp ?? now,
    SenderId: a.SenderId ?? ACCOUNT,
    ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp || now,
  };
  if (a.AWSTraceHeader !== undefined) attributes.AWSTraceHeader = a.AWSTraceHeader;
  if (a.DeadLetterQueueSourceArn !== undefined) attributes.DeadLetterQueueSourceArn = a.DeadLetterQueueSourceArn;
  if (fifo) {
    if (a.SequenceNumber !== undefined) attributes.SequenceNumber = a.SequenceNumber;
    if (a.MessageGroupId !== undefined) attributes.MessageGroupId = a.MessageGroupId;
    if (a.MessageDeduplicationId !== undefined) attributes.MessageDeduplicationId = a.MessageDeduplicationId;
  }
  return attributes;
}

function toMessageAttributes(message: Message): SQSMessageAttributes {
  const out: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    out[name] = {
      ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
      ...(value.BinaryValue !== undefined ? { binaryValue: Buffer.from(value.BinaryValue).toString('base64') } : {}),
      stringListValues: value.StringListValues ?? [],
      binaryListValues: (value.BinaryListValues ?? []).map((b) => Buffer.from(b).toString('base64')),
      dataType: value.DataType ?? 'String',
    };
  }
  return out;
}

/** Lambda's reading of a ReportBatchItemFailures response: failed message ids, or 'all' for an invalid response. */
function failedIds(response: unknown, ids: Set<string>): Set<string> | 'all' {
  if (response === undefined || response === null) return new Set();
  if (typeof response !== 'object' || Array.isArray(response)) return 'all';
  const failures = (response as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === undefined || failures === null) return new Set();
  if (!Array.isArray(failures)) return 'all';
  const failed = new Set<string>();
  for (const item of failures) {
    const id: unknown = typeof item === 'object' && item !== null ? (item as { itemIdentifier?: unknown }).itemIdentifier : undefined;
    if (typeof id !== 'string' || !ids.has(id)) return 'all';
    failed.add(id);
  }
  return failed;
}

/**
 * The runtime's own look at a queue (is it settled?), which no function makes and AWS would not
 * bill: the stand-in leaves calls with this header out of the meter (local/metering.ts).
 */
export const UNMETERED_HEADER = 'x-vnfm-local-unmetered';
function unmetered<C extends { middlewareStack: { add: (...args: never[]) => unknown } }>(command: C): C {
  (command.middlewareStack as unknown as { add: (mw: unknown, options: unknown) => void }).add(
    (next: (args: { request: { headers: Record<string, string> } }) => unknown) => (args: { request: { headers: Record<string, string> } }) => {
      args.request.headers[UNMETERED_HEADER] = '1';
      return next(args);
    },
    { step: 'build', name: 'vnfmLocalUnmetered' },
  );
  return command;
}

export function startQueuePoller(opts: QueuePollerOptions): QueuePoller {
  const batchSize = opts.batchSize ?? 10;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error(`batchSize must be a positive integer, got ${batchSize}`);
  const windowMs = Math.max(0, opts.maximumBatchingWindowSeconds ?? 0) * 1000;
  const fifo = opts.queueUrl.endsWith('.fifo') || opts.queueArn.endsWith('.fifo');
  const region = opts.queueArn.split(':')[3] || 'us-east-1';
  const queueName = opts.queueArn.split(':').pop() ?? opts.queueUrl;
  const log = opts.log ?? (() => {});
  const abort = new AbortController();
  let stopping = false;

  const receive = async (max: number, waitSeconds: number): Promise<Message[]> => {
    const out = await opts.client.send(
      new ReceiveMessageCommand({
        QueueUrl: opts.queueUrl,
        MaxNumberOfMessages: max,
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
      { abortSignal: abort.signal },
    );
    return out.Messages ?? [];
  };

  // As Lambda: one long poll for up to 10 messages; a larger batch, or a batching window, is
  // topped up by further receives until it is full or the window is over.
  const gather = async (): Promise<Message[]> => {
    const batch = await receive(Math.min(10, batchSize), LONG_POLL_SECONDS);
    if (batch.length === 0 || (windowMs === 0 && batchSize <= 10)) return batch;
    const deadline = Date.now() + windowMs;
    while (batch.length < batchSize && !stopping) {
      const left = deadline - Date.now();
      const more = await receive(Math.min(10, batchSize - batch.length), left > 0 ? Math.min(20, Math.ceil(left / 1000)) : 0);
      batch.push(...more);
      if (more.length === 0 && left <= 0) break;
    }
    return batch;
  };

  const remove = async (messages: Message[]) => {
    for (let i = 0; i < messages.length; i += 10) {
      const chunk = messages.slice(i, i + 10);
      try {
        const out = await opts.client.send(
          new DeleteMessageBatchCommand({
            QueueUrl: opts.queueUrl,
            Entries: chunk.map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle ?? '' })),
          }),
        );
        for (const failure of out.Failed ?? []) log(`[sqs] ${queueName}: could not delete a message: ${failure.Code ?? ''} ${failure.Message ?? ''}`);
      } catch (err) {
        log(`[sqs] ${queueName}: DeleteMessageBatch failed: ${describe(err)}`);
      }
    }
  };

  const handleBatch = async (messages: Message[]) => {
    const records: SQSRecord[] = messages.map((m) => ({
      messageId: m.MessageId ?? '',
      receiptHandle: m.ReceiptHandle ?? '',
      body: m.Body ?? '',
      attributes: toRecordAttributes(m, fifo),
      messageAttributes: toMessageAttributes(m),
      md5OfBody: m.MD5OfBody ?? '',
      ...(m.MD5OfMessageAttributes !== undefined ? { md5OfMessageAttributes: m.MD5OfMessageAttributes } : {}),
      eventSource: 'aws:sqs',
      eventSourceARN: opts.queueArn,
      awsRegion: region,
    }));
    // biome-ignore lint/suspicious/noConfusingVoidType: what the handler returned, possibly nothing
    let response: SQSBatchResponse | void;
    try {
      response = await opts.handler({ Records: records });
    } catch (err) {
      // As with Lambda: nothing is deleted; the messages reappear after the visibility timeout and the
      // queue's RedrivePolicy moves them to the DLQ after maxReceiveCount receives.
      log(`[sqs] ${queueName}: handler failed for ${messages.length} message(s): ${describe(err)}`);
      return;
    }
    const failed = opts.reportBatchItemFailures ? failedIds(response, new Set(records.map((r) => r.messageId))) : new Set<string>();
    if (failed === 'all') {
      log(`[sqs] ${queueName}: invalid batchItemFailures response; treating the whole batch as failed`);
      return;
    }
    if (fifo && failed.size > 0) {
      // Keep order within a message group: after a failure, later messages of that group stay too.
      const blocked = new Set<string>();
      for (const record of records) {
        const group = record.attributes.MessageGroupId ?? '';
        if (blocked.has(group)) failed.add(record.messageId);
        else if (failed.has(record.messageId)) blocked.add(group);
      }
    }
    if (failed.size > 0) log(`[sqs] ${queueName}: ${failed.size} of ${messages.length} message(s) reported as failed`);
    await remove(messages.filter((m) => !failed.has(m.MessageId ?? '')));
  };

  let handling: Promise<void> | undefined;
  const loop = (async () => {
    while (!stopping) {
      let batch: Message[];
      try {
        batch = await gather();
      } catch (err) {
        if (stopping || isAbort(err)) break;
        log(`[sqs] ${queueName}: ReceiveMessage failed: ${describe(err)}`);
        try {
          await delay(ERROR_BACKOFF_MS, undefined, { signal: abort.signal });
        } catch {
          break;
        }
        continue;
      }
      if (stopping) break; // received but unprocessed messages reappear after their visibility timeout
      if (batch.length > 0) {
        handling = handleBatch(batch);
        await handling;
        handling = undefined;
      }
    }
  })();

  const busy = async (): Promise<boolean> => {
    if (handling) return true;
    // Redrives first, then the queue: a redrive that ends between the two looks has put its messages
    // in the queue before the second (the other order missed them, once the queues ran on a thread
    // of their own).
    if (opts.deadLetterQueueArn) {
      const moves = await opts.client.send(unmetered(new ListMessageMoveTasksCommand({ SourceArn: opts.deadLetterQueueArn })));
      if ((moves.Results ?? []).some((task) => task.Status === 'RUNNING')) return true;
    }
    const out = await opts.client.send(
      unmetered(
        new GetQueueAttributesCommand({
          QueueUrl: opts.queueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
        }),
      ),
    );
    const counts = Object.values(out.Attributes ?? {}).reduce((sum, value) => sum + Number(value ?? 0), 0);
    return counts > 0 || handling !== undefined;
  };

  return {
    async stop() {
      stopping = true;
      abort.abort();
      await loop;
    },
    async idle() {
      // A failed look at the queue counts as busy: idle() is awaited by the runtime's /_local/idle,
      // which must not fail (or end the process) on one refused request.
      const pending = () =>
        busy().catch(async (err: unknown) => {
          log(`[sqs] ${queueName}: could not read the queue's state: ${describe(err)}`);
          await delay(ERROR_BACKOFF_MS);
          return true;
        });
      let waited = false;
      while (!stopping && (await pending())) {
        waited = true;
        if (handling) await handling;
        else await delay(IDLE_CHECK_MS);
      }
      return waited;
    },
  };
}

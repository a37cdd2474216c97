// Local SQS: local-aws-sqs served on its own HTTP server, plus the queue poller that plays the part
// of Lambda's SQS event source mapping (batching, deletion, partial batch failures, FIFO ordering).
// local-aws-sqs does not lock FIFO message groups (it hands out a group's next message while an
// earlier one is in flight), so the stand-in's FIFO queues get SQS's group lock added here.
import http from 'node:http';
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { createRequestHandler } from 'local-aws-sqs';
import { DeleteMessageBatchCommand, GetQueueAttributesCommand, ListMessageMoveTasksCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { Message, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord, SQSRecordAttributes } from 'aws-lambda';
import { closeServer, endpointHost, listen } from './aws-json.ts';

export interface LocalSqs {
  endpoint: string;
  close(): Promise<void>;
}

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
// Lambda long-polls for 20 s. local-aws-sqs keeps scanning (and receiving!) for the whole wait even
// after the client has gone away, so a short wait bounds what an aborted poll can swallow on stop().
// A long poll for one message still returns as soon as one is available, so latency is unaffected.
const LONG_POLL_SECONDS = 2;
const ERROR_BACKOFF_MS = 1000;
const IDLE_CHECK_MS = 20;
/**
 * The poller gathers one batch with several ReceiveMessage calls where Lambda makes one; this
 * header names the batch, so the group lock lets a group's messages into one batch as SQS would.
 */
const BATCH_HEADER = 'x-local-receive-batch';
const receiveBatch = new AsyncLocalStorage<string>();
/** In-flight messages whose visibility ends this close together were given it together. */
const SAME_EXPIRY_MS = 100;
/** Parked messages stay invisible this much longer than the lock, until they are released together. */
const PARK_MARGIN_S = 5;

/** What the group lock needs of local-aws-sqs's Queue (public methods of its exported type). */
interface StandInQueue {
  QueueName: string;
  FifoQueue: boolean;
  VisibilityTimeout: number;
  receive(args: { VisibilityTimeout?: unknown; WaitTimeSeconds?: unknown; MaxNumberOfMessages?: unknown }): Promise<StandInRecord[]>;
  delete(receiptHandle: string): boolean;
  changeVisibility(receiptHandle: string, seconds: string | number): boolean;
}

interface StandInRecord {
  MessageId: string;
  ReceiptHandle: string;
  attributes: Record<string, string | undefined>;
}

/**
 * SQS FIFO semantics the stand-in lacks: while a message of a group is in flight (received, not
 * deleted, visibility not over), no other message of that group is received, except later ones
 * handed out in the same ReceiveMessage call (or poller batch). A message the stand-in picks
 * against the lock is put back ("parked", invisible) and the group's parked messages are made
 * visible together when the lock ends (holder deleted, its visibility changed or run out), so the
 * stand-in hands them out again in their order.
 */
function addFifoGroupLock(queue: StandInQueue): void {
  const receive = queue.receive.bind(queue);
  const remove = queue.delete.bind(queue);
  const changeVisibility = queue.changeVisibility.bind(queue);
  const inFlight = new Map<string, { group: string; receiptHandle: string; visibleAt: number; batch: string }>();
  const parked = new Map<string, { group: string; receiptHandle: string }>();
  const timers = new Map<string, NodeJS.Timeout>();

  /** When the group's lock ends at the latest (0: not locked), ignoring messages of the given batch. */
  const lockedUntil = (group: string, now: number, batch?: string): number => {
    let until = 0;
    for (const [id, entry] of inFlight) {
      if (entry.visibleAt <= now) inFlight.delete(id);
      else if (entry.group === group && entry.batch !== batch) until = Math.max(until, entry.visibleAt);
    }
    return until;
  };
  const hasParked = (group: string) => [...parked.values()].some((entry) => entry.group === group);
  /** Keeps the group's parked messages invisible while the lock lasts, and releases them all when it ends. */
  const evaluate = (group: string) => {
    clearTimeout(timers.get(group));
    timers.delete(group);
    const now = Date.now();
    const until = lockedUntil(group, now);
    for (const [id, entry] of parked) {
      if (entry.group !== group) continue;
      try {
        // Parked past the lock's end, so they never come back one by one on their own.
        changeVisibility(entry.receiptHandle, until > now ? Math.ceil((until - now) / 1000) + PARK_MARGIN_S : 0);
      } catch {
        parked.delete(id); // visible again already, or gone
        continue;
      }
      if (until <= now) parked.delete(id);
    }
    if (until > now && hasParked(group)) timers.set(group, setTimeout(() => evaluate(group), until - now + 5).unref());
  };
  const holderOf = (receiptHandle: string) => [...inFlight.entries()].find(([, entry]) => entry.receiptHandle === receiptHandle);

  queue.receive = async (args) => {
    const batch = receiveBatch.getStore() ?? randomUUID();
    const records = await receive(args);
    const now = Date.now();
    const requested = Number(args?.VisibilityTimeout ?? NaN);
    const visibility = Number.isNaN(requested) ? queue.VisibilityTimeout : requested;
    const granted: StandInRecord[] = [];
    const parkedNow = new Set<string>();
    for (const record of records) {
      const group = record.attributes.MessageGroupId;
      parked.delete(record.MessageId);
      if (group !== undefined) {
        const previous = inFlight.get(record.MessageId);
        if (previous) {
          // Received again, so its visibility is over, and so is that of the messages whose
          // visibility was set with it: the stand-in's timers end them within milliseconds, in
          // order, while this bookkeeping clock may run a little behind.
          for (const [id, entry] of inFlight) {
            if (entry.group === group && Math.abs(entry.visibleAt - previous.visibleAt) <= SAME_EXPIRY_MS) inFlight.delete(id);
          }
        }
        // A message coming back from flight is older than the ones parked while it was away.
        if (lockedUntil(group, now, batch) > now || (!previous && hasParked(group))) {
          parked.set(record.MessageId, { group, receiptHandle: record.ReceiptHandle });
          parkedNow.add(group);
          continue;
        }
        inFlight.set(record.MessageId, { group, receiptHandle: record.ReceiptHandle, visibleAt: now + visibility * 1000, batch });
      }
      granted.push(record);
    }
    for (const group of parkedNow) evaluate(group);
    return granted;
  };
  queue.delete = (receiptHandle) => {
    const result = remove(receiptHandle);
    const holder = holderOf(receiptHandle);
    if (holder) {
      inFlight.delete(holder[0]);
      evaluate(holder[1].group);
    }
    return result;
  };
  queue.changeVisibility = (receiptHandle, seconds) => {
    const result = changeVisibility(receiptHandle, seconds);
    const holder = holderOf(receiptHandle);
    if (holder) {
      holder[1].visibleAt = Date.now() + Number(seconds) * 1000;
      evaluate(holder[1].group);
    }
    return result;
  };
}

export async function startLocalSqs(opts: { host?: string; port?: number } = {}): Promise<LocalSqs> {
  const { service, requestHandler } = createRequestHandler({
    port: opts.port ?? 0,
    hostname: endpointHost(opts.host),
    region: process.env.AWS_REGION ?? 'us-east-1',
    accountId: ACCOUNT,
  });
  const locked = new WeakSet<object>();
  const server = http.createServer((req, res) => {
    // Queues are created by requests; each FIFO queue gets its group lock before it is used.
    for (const queue of service.Queues as unknown as StandInQueue[]) {
      if (queue.FifoQueue && !locked.has(queue)) {
        addFifoGroupLock(queue);
        locked.add(queue);
      }
    }
    const handle = () => requestHandler(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify({ __type: 'InternalError', message: 'Internal error' }));
    });
    const batch = req.headers[BATCH_HEADER];
    if (typeof batch === 'string') void receiveBatch.run(batch, handle);
    else void handle();
  });
  const { port, endpoint } = await listen(server, { name: 'SQS', host: opts.host, port: opts.port });
  service.PORT = port; // queue URLs carry the real (possibly ephemeral) port

  let closing: Promise<void> | undefined;
  return {
    endpoint,
    close() {
      closing ??= closeServer(server).then(() => service.resetAll()); // resetAll clears message timers
      return closing;
    },
  };
}

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

  const receive = async (max: number, waitSeconds: number, batch: string): Promise<Message[]> => {
    const command = new ReceiveMessageCommand({
      QueueUrl: opts.queueUrl,
      MaxNumberOfMessages: max,
      WaitTimeSeconds: waitSeconds,
      // local-aws-sqs only reads the legacy AttributeNames; real SQS reads MessageSystemAttributeNames.
      AttributeNames: ['All'],
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
    });
    command.middlewareStack.add((next) => async (args) => {
      const request = args.request as { headers?: Record<string, string> };
      if (request.headers) request.headers[BATCH_HEADER] = batch;
      return next(args);
    }, { step: 'build', name: 'localReceiveBatch' });
    const out = await opts.client.send(command, { abortSignal: abort.signal });
    return out.Messages ?? [];
  };

  /** In local-aws-sqs, ApproximateNumberOfMessages also counts the messages in flight. */
  const visibleMessages = async (): Promise<number> => {
    const out = await opts.client.send(new GetQueueAttributesCommand({ QueueUrl: opts.queueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }), { abortSignal: abort.signal });
    return Math.max(0, Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) - Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0));
  };

  // local-aws-sqs answers a long poll only when MaxNumberOfMessages are in or the wait is over, so
  // wait for one message, then top the batch up (short polls, or long ones within the batching window).
  const gather = async (): Promise<Message[]> => {
    const id = randomUUID();
    const batch = await receive(1, LONG_POLL_SECONDS, id);
    if (batch.length === 0) return batch;
    const deadline = Date.now() + windowMs;
    while (batch.length < batchSize && !stopping) {
      const left = deadline - Date.now();
      let wanted = Math.min(10, batchSize - batch.length);
      if (left <= 0) {
        // local-aws-sqs holds even a short poll ~40 ms unless it finds as many messages as asked
        // for: ask for no more than are visible.
        wanted = Math.min(wanted, await visibleMessages());
        if (wanted === 0) break;
      }
      const more = await receive(wanted, left > 0 ? Math.min(20, Math.ceil(left / 1000)) : 0, id);
      batch.push(...more);
      if (left <= 0 && more.length < wanted) break;
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
    const out = await opts.client.send(new GetQueueAttributesCommand({
      QueueUrl: opts.queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }));
    const counts = Object.values(out.Attributes ?? {}).reduce((sum, value) => sum + Number(value ?? 0), 0);
    if (counts > 0 || handling) return true;
    if (!opts.deadLetterQueueArn) return false;
    const moves = await opts.client.send(new ListMessageMoveTasksCommand({ SourceArn: opts.deadLetterQueueArn }));
    return (moves.Results ?? []).some((task) => task.Status === 'RUNNING');
  };

  return {
    async stop() {
      stopping = true;
      abort.abort();
      await loop;
    },
    async idle() {
      let waited = false;
      while (!stopping && await busy()) {
        waited = true;
        if (handling) await handling;
        else await delay(IDLE_CHECK_MS);
      }
      return waited;
    },
  };
}

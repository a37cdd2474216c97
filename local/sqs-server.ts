// Local SQS stand-in: an HTTP server speaking the AWS JSON 1.0 protocol of @aws-sdk/client-sqs, with
// standard and FIFO queues (message group lock, deduplication window, sequence numbers), long
// polling, dead-letter queues (RedrivePolicy) and message move tasks. Every queue's state lives in
// an append-only journal under the data directory, so messages, in-flight receipts with the time
// they become visible again (the notifier's backoff), delayed messages, deduplication ids, dead
// letters and running move tasks survive a restart, or a kill, of the process; the messages it was
// still handling when it ended are visible again at once (Queue.releaseAbandoned).
import type http from 'node:http';
import { createHash, randomUUID } from 'node:crypto';
import { appendFileSync, closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { z } from 'zod';
import { AwsError, decodeToken, encodeToken, parseInput, startAwsJsonServer, type AwsJsonOperation } from './aws-json.ts';
import type { AwsCredentials } from './sigv4.ts';

export interface LocalSqs {
  endpoint: string;
  close(): Promise<void>;
}

export interface LocalSqsOptions {
  /** Directory holding one journal per queue (created if missing). */
  dataDir: string;
  /** The only credentials whose SigV4 signature it accepts (its /_local controls too). */
  credentials: AwsCredentials;
  host?: string;
  port?: number;
  /** Told about journal lines that could not be read at start and about internal errors. */
  log?: (line: string) => void;
}

const ACCOUNT = '000000000000';
const DEDUPLICATION_WINDOW_MS = 5 * 60_000;
const MAX_TASKS_KEPT = 10;
/** Move tasks move this many messages per step when no rate is given (steps are MOVE_STEP_MS apart). */
const DEFAULT_MOVE_BATCH = 100;
const MOVE_STEP_MS = 100;
/** A journal is rewritten once it holds this many records and several times more than the live state. */
const COMPACT_MIN_RECORDS = 1000;
const COMPACT_FACTOR = 4;
/** What a start reads of a journal at a time. */
export const JOURNAL_READ_BYTES = 1024 * 1024;
const JOURNAL_SUFFIX = '.jsonl';
const QUEUE_NAME = /^[A-Za-z0-9_-]{1,80}$/;
const FIFO_QUEUE_NAME = /^[A-Za-z0-9_-]{1,75}\.fifo$/;
const BATCH_ENTRY_ID = /^[A-Za-z0-9_-]{1,80}$/;
const ATTRIBUTE_NAME = /^[\p{L}\p{N}_.-]{1,256}$/u;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
// SQS accepts #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF.
const INVALID_CHARACTERS = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

// ---------------------------------------------------------------------------------------------
// Errors, as SQS's JSON protocol gives them: `__type` names the error shape, and the
// x-amzn-query-error header its query-protocol code, which SDK v3 reads (awsQueryCompatible).

function sqsError(shape: string, message: string, code = shape, status = 400): AwsError {
  return new AwsError(`com.amazonaws.sqs#${shape}`, message, status, { 'x-amzn-query-error': `${code};Sender` });
}
const queueDoesNotExist = () => sqsError('QueueDoesNotExist', 'The specified queue does not exist.', 'AWS.SimpleQueueService.NonExistentQueue');
const invalidParameter = (message: string) => sqsError('InvalidParameterValue', message);
const invalidValue = (name: string, value: unknown, reason: string) =>
  invalidParameter(`Value ${String(value)} for parameter ${name} is invalid. Reason: ${reason}`);
const missingParameter = (name: string) => sqsError('MissingParameter', `The request must contain the parameter ${name}.`);
const invalidAttributeValue = (name: string, reason = '') =>
  sqsError('InvalidAttributeValue', `Invalid value for the parameter ${name}.${reason ? ` Reason: ${reason}` : ''}`);
const receiptHandleIsInvalid = (handle: string) =>
  sqsError('ReceiptHandleIsInvalid', `The input receipt handle "${handle}" is not a valid receipt handle.`, 'ReceiptHandleIsInvalid', 404);
const resourceNotFound = (message: string) => sqsError('ResourceNotFoundException', message, 'ResourceNotFoundException', 404);

// ---------------------------------------------------------------------------------------------
// State, and its journal records.

interface MessageAttribute {
  DataType: string;
  StringValue?: string;
  /** base64, as the JSON protocol carries it */
  BinaryValue?: string;
}

interface StoredMessage {
  id: string;
  body: string;
  attributes?: Record<string, MessageAttribute>;
  traceHeader?: string;
  group?: string;
  deduplicationId?: string;
  sequenceNumber?: string;
  /** ms since the epoch */
  sentAt: number;
  receiveCount: number;
  firstReceiveAt?: number;
  /** When the message can be received (again): after its delay, or when its visibility timeout ends. */
  visibleAt: number;
  /** The receipt handle of its latest receive; with visibleAt in the future, the message is in flight. */
  receipt?: string;
  /** Its consumer set visibleAt itself (ChangeMessageVisibility, a backoff) since its latest receive. */
  visibilityChanged?: boolean;
  /** The queue a redrive moved it from (DeadLetterQueueSourceArn). */
  sourceArn?: string;
}

interface Deduplication {
  until: number;
  messageId: string;
  sequenceNumber?: string;
}

/** Ids past a window's head are dropped from its columns once this many are, and half of them. */
const WINDOW_DROP_MIN = 4096;

/**
 * A FIFO queue's deduplication ids within their window, oldest first, kept as columns: an id maps to
 * its slot, and a slot's end of window, message id and sequence are array elements. At the runtime's
 * rate of creates (each enqueues a notification) a window holds ~100,000 ids; a Map of one entry
 * object each (with its boxed time and sequence string) held 27 MB of the stand-ins thread's heap
 * for 100,000 ids, these columns 21 MB. An id sent again (a journal's replay) moves to a new slot;
 * its old one stays, dead, until the window passes it.
 */
class DeduplicationWindow {
  /** id -> slot; slots count up for the queue's life, and slot s is at index s - first of the columns. */
  private readonly slots = new Map<string, number>();
  private first = 0;
  /** The columns' index of the oldest slot not yet forgotten. */
  private head = 0;
  private keys: string[] = [];
  private until: number[] = [];
  private messageIds: string[] = [];
  /** The sequence number less SEQUENCE_BASE; -1 for none. */
  private sequences: number[] = [];

  get size(): number {
    return this.slots.size;
  }

  get(key: string): Deduplication | undefined {
    const slot = this.slots.get(key);
    return slot === undefined ? undefined : this.entry(slot - this.first);
  }

  /** Remembers `key` from `entry.until` back, in place of any earlier entry of it. Entries come in the order their windows end. */
  set(key: string, entry: Deduplication): void {
    this.slots.set(key, this.first + this.keys.length);
    this.keys.push(key);
    this.until.push(entry.until);
    this.messageIds.push(entry.messageId);
    this.sequences.push(entry.sequenceNumber === undefined ? -1 : Number(BigInt(entry.sequenceNumber) - SEQUENCE_BASE));
  }

  delete(key: string): void {
    this.slots.delete(key);
  }

  /** Forgets the ids whose window ended by `now`. */
  forget(now: number): void {
    let at = this.head;
    for (; at < this.keys.length && (this.until[at] as number) <= now; at++) {
      const key = this.keys[at] as string;
      if (this.slots.get(key) === this.first + at) this.slots.delete(key);
    }
    this.head = at;
    if (this.head >= WINDOW_DROP_MIN && this.head * 2 >= this.keys.length) {
      this.keys = this.keys.slice(this.head);
      this.until = this.until.slice(this.head);
      this.messageIds = this.messageIds.slice(this.head);
      this.sequences = this.sequences.slice(this.head);
      this.first += this.head;
      this.head = 0;
    }
  }

  /** The ids remembered, oldest first. */
  *entries(): Generator<[string, Deduplication]> {
    for (let at = this.head; at < this.keys.length; at++) {
      const key = this.keys[at] as string;
      if (this.slots.get(key) === this.first + at) yield [key, this.entry(at)];
    }
  }

  private entry(at: number): Deduplication {
    const sequence = this.sequences[at] as number;
    return {
      until: this.until[at] as number,
      messageId: this.messageIds[at] as string,
      ...(sequence >= 0 ? { sequenceNumber: (SEQUENCE_BASE + BigInt(sequence)).toString() } : {}),
    };
  }
}

type TaskStatus = 'RUNNING' | 'COMPLETED' | 'CANCELLING' | 'CANCELLED' | 'FAILED';

interface MoveTask {
  id: string;
  handle: string;
  sourceArn: string;
  destinationArn?: string;
  rate?: number;
  status: TaskStatus;
  moved: number;
  toMove: number;
  startedAt: number;
  failureReason?: string;
}

type JournalRecord =
  | { op: 'queue'; attributes: Record<string, string>; created: number; modified: number }
  | { op: 'send'; message: StoredMessage }
  | { op: 'receive'; id: string; receipt: string; visibleAt: number; receiveCount: number; firstReceiveAt: number }
  | { op: 'visibility'; id: string; visibleAt: number }
  | { op: 'delete'; id: string }
  | { op: 'deduplication'; key: string; entry: Deduplication }
  | { op: 'purge' }
  | { op: 'sequence'; next: number }
  | { op: 'task'; task: MoveTask };

/**
 * One queue's journal: JSON lines appended with appendFileSync, so every acknowledged change is in
 * the file (the page cache) before the answer leaves; a killed process loses nothing it answered.
 * There is no fsync per write: that would only matter if the machine itself went down.
 */
class Journal {
  records = 0;
  constructor(readonly path: string) {}

  append(records: JournalRecord[]): void {
    if (records.length === 0) return;
    appendFileSync(this.path, records.map((record) => `${JSON.stringify(record)}\n`).join(''));
    this.records += records.length;
  }

  /** Replaces the journal with `records` atomically (write a temporary file, fsync, rename). */
  rewrite(records: JournalRecord[]): void {
    const temporary = `${this.path}.${process.pid}.tmp`;
    const fd = openSync(temporary, 'w', 0o600);
    try {
      writeSync(fd, records.map((record) => `${JSON.stringify(record)}\n`).join(''));
      fsyncSync(fd); // compaction is rare; the snapshot it replaces the journal with must be whole
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, this.path);
    this.records = records.length;
  }

  /**
   * The records in the file, one at a time as it is read (a journal grows to a hundred MB or more
   * between compactions under load, ~100,000 notifications; read whole and parsed at once, it and
   * its records were ~300 MB of the stand-ins thread's heap at a start, which V8 then kept); a torn
   * last line (a write cut short by a kill) is left out.
   */
  static *read(path: string, log: (line: string) => void): Generator<JournalRecord> {
    const fd = openSync(path, 'r');
    try {
      const chunk = Buffer.allocUnsafe(JOURNAL_READ_BYTES);
      const decoder = new StringDecoder('utf8');
      let rest = '';
      let line = 0;
      /** The number of a line that is not JSON: a torn write if no line follows it, said otherwise. */
      let unparsed: number | undefined;
      const parsed = function* (text: string): Generator<JournalRecord> {
        line += 1;
        if (text.trim() === '') return;
        if (unparsed !== undefined) log(`[sqs] ${path}: line ${unparsed} is not JSON; skipped`);
        unparsed = undefined;
        try {
          yield JSON.parse(text) as JournalRecord;
        } catch {
          unparsed = line;
        }
      };
      for (;;) {
        const read = readSync(fd, chunk, 0, chunk.length, null);
        const text = rest + (read > 0 ? decoder.write(chunk.subarray(0, read)) : decoder.end());
        const lines = text.split('\n');
        rest = read > 0 ? (lines.pop() as string) : '';
        for (const each of lines) yield* parsed(each);
        if (read === 0) return;
      }
    } finally {
      closeSync(fd);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Queue attributes.

const DEFAULT_ATTRIBUTES: Record<string, string> = {
  VisibilityTimeout: '30',
  MaximumMessageSize: '262144',
  MessageRetentionPeriod: '345600',
  DelaySeconds: '0',
  ReceiveMessageWaitTimeSeconds: '0',
  SqsManagedSseEnabled: 'true',
};
const FIFO_DEFAULTS: Record<string, string> = {
  FifoQueue: 'true',
  ContentBasedDeduplication: 'false',
  DeduplicationScope: 'queue',
  FifoThroughputLimit: 'perQueue',
};
const INTEGER_ATTRIBUTES: Record<string, [number, number]> = {
  VisibilityTimeout: [0, 43_200],
  MaximumMessageSize: [1024, 1_048_576],
  MessageRetentionPeriod: [60, 1_209_600],
  DelaySeconds: [0, 900],
  ReceiveMessageWaitTimeSeconds: [0, 20],
  KmsDataKeyReusePeriodSeconds: [60, 86_400],
};
const BOOLEAN_ATTRIBUTES = new Set(['FifoQueue', 'ContentBasedDeduplication', 'SqsManagedSseEnabled']);
const COMPUTED_ATTRIBUTES = [
  'ApproximateNumberOfMessages',
  'ApproximateNumberOfMessagesNotVisible',
  'ApproximateNumberOfMessagesDelayed',
  'CreatedTimestamp',
  'LastModifiedTimestamp',
  'QueueArn',
];
const SETTABLE_ATTRIBUTES = new Set([
  ...Object.keys(INTEGER_ATTRIBUTES),
  ...BOOLEAN_ATTRIBUTES,
  'Policy',
  'RedrivePolicy',
  'RedriveAllowPolicy',
  'KmsMasterKeyId',
  'DeduplicationScope',
  'FifoThroughputLimit',
]);
const FIFO_ONLY = new Set(['ContentBasedDeduplication', 'DeduplicationScope', 'FifoThroughputLimit']);
const MESSAGE_SYSTEM_ATTRIBUTES = [
  'SenderId',
  'SentTimestamp',
  'ApproximateReceiveCount',
  'ApproximateFirstReceiveTimestamp',
  'SequenceNumber',
  'MessageDeduplicationId',
  'MessageGroupId',
  'AWSTraceHeader',
  'DeadLetterQueueSourceArn',
];

interface RedrivePolicy {
  deadLetterTargetArn: string;
  maxReceiveCount: number;
}

function parseJsonAttribute(name: string, value: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(value);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw invalidAttributeValue(name, 'not a JSON object');
}

/** Checks settable attributes and writes them the way GetQueueAttributes answers them. */
function normalizeAttributes(given: Record<string, string>, fifo: boolean, lookup: (arn: string) => Queue | undefined, self: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, raw] of Object.entries(given)) {
    const value = String(raw);
    if (!SETTABLE_ATTRIBUTES.has(name)) throw sqsError('InvalidAttributeName', `Unknown Attribute ${name}.`);
    if (FIFO_ONLY.has(name) && !fifo) throw invalidAttributeValue(name, 'only FIFO queues have it');
    if (name in INTEGER_ATTRIBUTES) {
      const [min, max] = INTEGER_ATTRIBUTES[name] as [number, number];
      const number = Number(value);
      if (!/^\d+$/.test(value.trim()) || number < min || number > max) throw invalidAttributeValue(name, `must be an integer from ${min} to ${max}`);
      out[name] = String(number);
    } else if (BOOLEAN_ATTRIBUTES.has(name)) {
      if (!/^(true|false)$/i.test(value)) throw invalidAttributeValue(name);
      out[name] = value.toLowerCase();
    } else if (name === 'RedrivePolicy') {
      if (value === '') {
        out[name] = '';
        continue;
      }
      const policy = parseJsonAttribute(name, value);
      const count = Number(policy.maxReceiveCount);
      if (typeof policy.deadLetterTargetArn !== 'string') throw invalidAttributeValue(name, 'deadLetterTargetArn is missing');
      if (!Number.isInteger(count) || count < 1 || count > 1000) throw invalidAttributeValue(name, 'maxReceiveCount must be an integer from 1 to 1000');
      const target = lookup(policy.deadLetterTargetArn);
      if (!target) throw invalidAttributeValue(name, 'Dead letter target does not exist.');
      if (target.fifo !== fifo) throw invalidAttributeValue(name, 'Dead-letter queue must be same type of queue as the source.');
      if (!target.allowsRedriveFrom(self)) throw invalidAttributeValue(name, 'Dead-letter queue does not allow this queue as a source (RedriveAllowPolicy).');
      out[name] = JSON.stringify({ deadLetterTargetArn: policy.deadLetterTargetArn, maxReceiveCount: count });
    } else if (name === 'RedriveAllowPolicy') {
      const policy = parseJsonAttribute(name, value);
      const permission = policy.redrivePermission;
      if (permission !== 'allowAll' && permission !== 'denyAll' && permission !== 'byQueue')
        throw invalidAttributeValue(name, 'redrivePermission must be allowAll, denyAll or byQueue');
      const sources = policy.sourceQueueArns;
      if (
        permission === 'byQueue' &&
        (!Array.isArray(sources) || sources.length < 1 || sources.length > 10 || !sources.every((arn) => typeof arn === 'string'))
      ) {
        throw invalidAttributeValue(name, 'byQueue needs 1 to 10 sourceQueueArns');
      }
      out[name] = JSON.stringify(permission === 'byQueue' ? { redrivePermission: permission, sourceQueueArns: sources } : { redrivePermission: permission });
    } else if (name === 'DeduplicationScope') {
      if (value !== 'queue' && value !== 'messageGroup') throw invalidAttributeValue(name);
      out[name] = value;
    } else if (name === 'FifoThroughputLimit') {
      if (value !== 'perQueue' && value !== 'perMessageGroupId') throw invalidAttributeValue(name);
      out[name] = value;
    } else {
      out[name] = value;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Checksums, as SQS computes them.

const md5 = (data: Buffer | string) => createHash('md5').update(data).digest('hex');

/** MD5OfMessageAttributes: per attribute by name, length-prefixed name, type, transport byte (1 string, 2 binary) and value. */
export function md5OfMessageAttributes(attributes: Record<string, MessageAttribute>): string {
  const parts: Buffer[] = [];
  const prefixed = (bytes: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    parts.push(length, bytes);
  };
  for (const name of Object.keys(attributes).sort()) {
    const attribute = attributes[name] as MessageAttribute;
    prefixed(Buffer.from(name, 'utf8'));
    prefixed(Buffer.from(attribute.DataType, 'utf8'));
    if (attribute.DataType.startsWith('Binary')) {
      parts.push(Buffer.from([2]));
      prefixed(Buffer.from(attribute.BinaryValue ?? '', 'base64'));
    } else {
      parts.push(Buffer.from([1]));
      prefixed(Buffer.from(attribute.StringValue ?? '', 'utf8'));
    }
  }
  return md5(Buffer.concat(parts));
}

// ---------------------------------------------------------------------------------------------
// Request shapes.

const attributeValue = z.object({
  DataType: z.string(),
  StringValue: z.string().optional(),
  BinaryValue: z.string().optional(),
  StringListValues: z.array(z.string()).optional(),
  BinaryListValues: z.array(z.string()).optional(),
});
const messageEntry = {
  MessageBody: z.string(),
  DelaySeconds: z.number().int().optional(),
  MessageAttributes: z.record(z.string(), attributeValue).optional(),
  MessageSystemAttributes: z.record(z.string(), attributeValue).optional(),
  MessageDeduplicationId: z.string().optional(),
  MessageGroupId: z.string().optional(),
};
const queueUrl = { QueueUrl: z.string() };
const attributeMap = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String));
const schemas = {
  CreateQueue: z.object({ QueueName: z.string(), Attributes: attributeMap.optional(), tags: z.record(z.string(), z.string()).optional() }),
  GetQueueUrl: z.object({ QueueName: z.string(), QueueOwnerAWSAccountId: z.string().optional() }),
  ListQueues: z.object({ QueueNamePrefix: z.string().optional(), NextToken: z.string().optional(), MaxResults: z.number().int().optional() }),
  GetQueueAttributes: z.object({ ...queueUrl, AttributeNames: z.array(z.string()).optional() }),
  SetQueueAttributes: z.object({ ...queueUrl, Attributes: attributeMap }),
  QueueOnly: z.object(queueUrl),
  SendMessage: z.object({ ...queueUrl, ...messageEntry }),
  SendMessageBatch: z.object({ ...queueUrl, Entries: z.array(z.object({ Id: z.string(), ...messageEntry })) }),
  ReceiveMessage: z.object({
    ...queueUrl,
    MaxNumberOfMessages: z.number().int().optional(),
    WaitTimeSeconds: z.number().int().optional(),
    VisibilityTimeout: z.number().int().optional(),
    AttributeNames: z.array(z.string()).optional(),
    MessageSystemAttributeNames: z.array(z.string()).optional(),
    MessageAttributeNames: z.array(z.string()).optional(),
    ReceiveRequestAttemptId: z.string().optional(),
  }),
  DeleteMessage: z.object({ ...queueUrl, ReceiptHandle: z.string() }),
  DeleteMessageBatch: z.object({ ...queueUrl, Entries: z.array(z.object({ Id: z.string(), ReceiptHandle: z.string() })) }),
  ChangeMessageVisibility: z.object({ ...queueUrl, ReceiptHandle: z.string(), VisibilityTimeout: z.number().int() }),
  ChangeMessageVisibilityBatch: z.object({
    ...queueUrl,
    Entries: z.array(z.object({ Id: z.string(), ReceiptHandle: z.string(), VisibilityTimeout: z.number().int().optional() })),
  }),
  StartMessageMoveTask: z.object({ SourceArn: z.string(), DestinationArn: z.string().optional(), MaxNumberOfMessagesPerSecond: z.number().int().optional() }),
  ListMessageMoveTasks: z.object({ SourceArn: z.string(), MaxResults: z.number().int().optional() }),
  CancelMessageMoveTask: z.object({ TaskHandle: z.string() }),
};

function parse<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  return parseInput(schema, body, (field, problem) =>
    problem.includes('received undefined') ? missingParameter(field) : invalidParameter(`Value for parameter ${field} is invalid. Reason: ${problem}`),
  );
}

type SendInput = z.infer<typeof schemas.SendMessage>;

interface SendResult {
  MessageId: string;
  MD5OfMessageBody: string;
  MD5OfMessageAttributes?: string;
  MD5OfMessageSystemAttributes?: string;
  SequenceNumber?: string;
}

interface ReceivedMessage {
  MessageId: string;
  ReceiptHandle: string;
  MD5OfBody: string;
  Body: string;
  Attributes?: Record<string, string>;
  MD5OfMessageAttributes?: string;
  MessageAttributes?: Record<string, MessageAttribute>;
}

interface ReceiveOptions {
  max: number;
  visibility: number;
  systemAttributes: string[];
  messageAttributes: string[];
}

interface Waiter {
  attempt(): boolean;
  finish(): void;
}

/** Batch requests: 1 to 10 entries with distinct, well-formed ids. */
function checkBatch(entries: Array<{ Id: string }>): void {
  if (entries.length === 0)
    throw sqsError('EmptyBatchRequest', 'There should be at least one entry in the request.', 'AWS.SimpleQueueService.EmptyBatchRequest');
  if (entries.length > 10)
    throw sqsError(
      'TooManyEntriesInBatchRequest',
      `Maximum number of entries per request are 10. You have sent ${entries.length}.`,
      'AWS.SimpleQueueService.TooManyEntriesInBatchRequest',
    );
  const ids = new Set<string>();
  for (const { Id } of entries) {
    if (!BATCH_ENTRY_ID.test(Id))
      throw sqsError(
        'InvalidBatchEntryId',
        `A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.`,
        'AWS.SimpleQueueService.InvalidBatchEntryId',
      );
    if (ids.has(Id)) throw sqsError('BatchEntryIdsNotDistinct', `Id ${Id} repeated.`, 'AWS.SimpleQueueService.BatchEntryIdsNotDistinct');
    ids.add(Id);
  }
}

/** The outcome of one batch entry: its result, or the failure as SQS reports it in `Failed`. */
function batchEntry<T>(id: string, run: () => T): { ok: T & { Id: string } } | { failed: { Id: string; SenderFault: boolean; Code: string; Message: string } } {
  try {
    return { ok: { Id: id, ...run() } };
  } catch (err) {
    if (!(err instanceof AwsError)) throw err;
    const code = err.headers['x-amzn-query-error']?.split(';')[0] ?? err.type.split('#').pop() ?? err.type;
    return { failed: { Id: id, SenderFault: err.status < 500, Code: code, Message: err.message } };
  }
}

function batchResponse<T>(outcomes: Array<{ ok: T } | { failed: unknown }>): { Successful: T[]; Failed: unknown[] } {
  const Successful: T[] = [];
  const Failed: unknown[] = [];
  for (const outcome of outcomes) {
    if ('ok' in outcome) Successful.push(outcome.ok);
    else Failed.push(outcome.failed);
  }
  return { Successful, Failed };
}

// ---------------------------------------------------------------------------------------------
// A queue.

class Queue {
  readonly messages = new Map<string, StoredMessage>();
  /** Deduplication ids within their window, oldest first (each is kept exactly as long as the window). */
  readonly deduplication = new DeduplicationWindow();
  readonly tasks = new Map<string, MoveTask>();
  readonly waiters = new Set<Waiter>();
  attributes: Record<string, string> = {};
  created = 0;
  modified = 0;
  sequence = 0;
  private timer: NodeJS.Timeout | undefined;
  private taskTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly name: string,
    readonly arn: string,
    readonly journal: Journal,
    private readonly server: SqsState,
  ) {}

  get fifo(): boolean {
    return this.attributes.FifoQueue === 'true';
  }

  number(name: string): number {
    return Number(this.attributes[name] ?? DEFAULT_ATTRIBUTES[name] ?? 0);
  }

  redrivePolicy(): RedrivePolicy | undefined {
    return this.attributes.RedrivePolicy ? (JSON.parse(this.attributes.RedrivePolicy) as RedrivePolicy) : undefined;
  }

  allowsRedriveFrom(sourceArn: string): boolean {
    if (!this.attributes.RedriveAllowPolicy) return true;
    const policy = JSON.parse(this.attributes.RedriveAllowPolicy) as { redrivePermission: string; sourceQueueArns?: string[] };
    return policy.redrivePermission === 'allowAll' || (policy.redrivePermission === 'byQueue' && (policy.sourceQueueArns ?? []).includes(sourceArn));
  }

  // --- journal ---

  apply(record: JournalRecord, now: number): void {
    switch (record.op) {
      case 'queue':
        this.attributes = record.attributes;
        this.created = record.created;
        this.modified = record.modified;
        break;
      case 'send':
        this.messages.set(record.message.id, record.message);
        if (record.message.sequenceNumber) this.sequence = Math.max(this.sequence, Number(BigInt(record.message.sequenceNumber) - SEQUENCE_BASE));
        break;
      case 'receive': {
        const message = this.messages.get(record.id);
        if (message) {
          Object.assign(message, {
            receipt: record.receipt,
            visibleAt: record.visibleAt,
            receiveCount: record.receiveCount,
            firstReceiveAt: record.firstReceiveAt,
          });
          delete message.visibilityChanged;
        }
        break;
      }
      case 'visibility': {
        const message = this.messages.get(record.id);
        if (message) {
          message.visibleAt = record.visibleAt;
          message.visibilityChanged = true;
        }
        break;
      }
      case 'delete':
        this.messages.delete(record.id);
        break;
      case 'deduplication':
        this.deduplication.delete(record.key);
        if (record.entry.until > now) this.deduplication.set(record.key, record.entry);
        break;
      case 'purge':
        this.messages.clear();
        break;
      case 'sequence':
        this.sequence = Math.max(this.sequence, record.next);
        break;
      case 'task':
        this.tasks.set(record.task.id, record.task);
        break;
    }
  }

  write(records: JournalRecord[]): void {
    this.journal.append(records);
    const live = this.messages.size + this.deduplication.size + this.tasks.size + 2;
    if (this.journal.records > COMPACT_MIN_RECORDS && this.journal.records > COMPACT_FACTOR * live) this.compact();
  }

  /**
   * At a start: the messages the previous process had received and was still handling when it ended
   * (in flight on their receive's visibility timeout) are visible at once. Their consumer was the
   * runtime that ended with it, and nobody is left to delete them; SQS, which outlives its
   * consumers, would hold them for the rest of the queue's VisibilityTimeout (the notification
   * queue's 6 minutes). A time a consumer set itself (a delivery's backoff) is kept. Returns how many.
   */
  releaseAbandoned(now: number): number {
    let released = 0;
    for (const message of this.messages.values()) {
      if (message.receipt === undefined || message.visibleAt <= now || message.visibilityChanged) continue;
      message.visibleAt = now;
      released++;
    }
    return released;
  }

  /** Rewrites the journal as a snapshot of the live state. */
  compact(): void {
    const now = Date.now();
    this.deduplication.forget(now);
    this.journal.rewrite([
      { op: 'queue', attributes: this.attributes, created: this.created, modified: this.modified },
      { op: 'sequence', next: this.sequence },
      ...[...this.messages.values()].map((message): JournalRecord => ({ op: 'send', message })),
      ...[...this.deduplication.entries()].map(([key, entry]): JournalRecord => ({ op: 'deduplication', key, entry })),
      ...[...this.tasks.values()].map((task): JournalRecord => ({ op: 'task', task })),
    ]);
  }

  // --- sending ---

  private nextSequenceNumber(): string {
    this.sequence++;
    return (SEQUENCE_BASE + BigInt(this.sequence)).toString();
  }

  send(input: Omit<SendInput, 'QueueUrl'>, now: number): SendResult {
    const body = input.MessageBody;
    if (body === '') throw missingParameter('MessageBody');
    if (INVALID_CHARACTERS.test(body))
      throw sqsError(
        'InvalidMessageContents',
        'Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF',
      );
    const attributes = checkMessageAttributes(input.MessageAttributes ?? {}, 'MessageAttribute');
    const system = checkMessageAttributes(input.MessageSystemAttributes ?? {}, 'MessageSystemAttribute');
    const unknownSystem = Object.keys(system).find((name) => name !== 'AWSTraceHeader');
    if (unknownSystem) throw invalidValue('MessageSystemAttributes', unknownSystem, 'only AWSTraceHeader can be set');
    const size =
      Buffer.byteLength(body) +
      Object.entries(attributes).reduce(
        (sum, [name, a]) =>
          sum +
          Buffer.byteLength(name) +
          Buffer.byteLength(a.DataType) +
          (a.BinaryValue !== undefined ? Buffer.from(a.BinaryValue, 'base64').length : Buffer.byteLength(a.StringValue ?? '')),
        0,
      );
    const maximum = this.number('MaximumMessageSize');
    if (size > maximum) throw invalidParameter(`One or more parameters are invalid. Reason: Message must be shorter than ${maximum} bytes.`);

    const result: SendResult = { MessageId: '', MD5OfMessageBody: md5(body) };
    if (Object.keys(attributes).length) result.MD5OfMessageAttributes = md5OfMessageAttributes(attributes);
    if (Object.keys(system).length) result.MD5OfMessageSystemAttributes = md5OfMessageAttributes(system);

    const message: StoredMessage = { id: randomUUID(), body, sentAt: now, receiveCount: 0, visibleAt: now };
    if (Object.keys(attributes).length) message.attributes = attributes;
    if (system.AWSTraceHeader?.StringValue !== undefined) message.traceHeader = system.AWSTraceHeader.StringValue;
    const records: JournalRecord[] = [];
    if (this.fifo) {
      if (input.MessageGroupId === undefined) throw missingParameter('MessageGroupId');
      if (input.DelaySeconds !== undefined)
        throw invalidValue('DelaySeconds', input.DelaySeconds, 'The request include parameter that is not valid for this queue type.');
      checkFifoId('MessageGroupId', input.MessageGroupId);
      let deduplicationId = input.MessageDeduplicationId;
      if (deduplicationId === undefined) {
        if (this.attributes.ContentBasedDeduplication !== 'true')
          throw invalidParameter('The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly');
        deduplicationId = createHash('sha256').update(body).digest('hex');
      }
      checkFifoId('MessageDeduplicationId', deduplicationId);
      this.deduplication.forget(now);
      const key = this.attributes.DeduplicationScope === 'messageGroup' ? `${input.MessageGroupId}\n${deduplicationId}` : deduplicationId;
      const duplicate = this.deduplication.get(key);
      if (duplicate) return { ...result, MessageId: duplicate.messageId, ...(duplicate.sequenceNumber ? { SequenceNumber: duplicate.sequenceNumber } : {}) };
      message.group = input.MessageGroupId;
      message.deduplicationId = deduplicationId;
      message.sequenceNumber = this.nextSequenceNumber();
      const entry: Deduplication = { until: now + DEDUPLICATION_WINDOW_MS, messageId: message.id, sequenceNumber: message.sequenceNumber };
      this.deduplication.set(key, entry);
      records.push({ op: 'deduplication', key, entry });
      result.SequenceNumber = message.sequenceNumber;
    } else {
      if (input.MessageDeduplicationId !== undefined)
        throw invalidValue('MessageDeduplicationId', input.MessageDeduplicationId, 'The request include parameter that is not valid for this queue type.');
      if (input.MessageGroupId !== undefined) message.group = input.MessageGroupId; // fair queues: accepted, no ordering
      const delay = input.DelaySeconds ?? this.number('DelaySeconds');
      if (delay < 0 || delay > 900) throw invalidValue('DelaySeconds', delay, 'must be between 0 and 900, if provided.');
      message.visibleAt = now + delay * 1000;
    }
    if (this.fifo) message.visibleAt = now + this.number('DelaySeconds') * 1000;
    result.MessageId = message.id;
    this.messages.set(message.id, message);
    this.write([{ op: 'send', message }, ...records]);
    this.wake();
    return result;
  }

  /** Takes a message another queue gives up (a redrive to the dead-letter queue, or a move task). */
  adopt(from: StoredMessage, now: number, fields: Partial<StoredMessage>): void {
    const message: StoredMessage = { id: randomUUID(), body: from.body, sentAt: now, receiveCount: 0, visibleAt: now, ...fields };
    if (from.attributes) message.attributes = from.attributes;
    if (from.traceHeader !== undefined) message.traceHeader = from.traceHeader;
    if (this.fifo) {
      // Not deduplicated: the message was accepted once already.
      message.group = from.group ?? 'default';
      message.deduplicationId = from.deduplicationId ?? randomUUID();
      message.sequenceNumber = this.nextSequenceNumber();
    }
    this.messages.set(message.id, message);
    this.write([{ op: 'send', message }]);
    this.wake();
  }

  remove(id: string): void {
    if (!this.messages.delete(id)) return;
    this.write([{ op: 'delete', id }]);
    if (this.fifo) this.wake(); // its group may be free now
  }

  purge(): void {
    this.messages.clear();
    this.write([{ op: 'purge' }]);
  }

  // --- receiving ---

  /** Hands out up to `max` messages as SQS would; redrives those received maxReceiveCount times. */
  take(options: ReceiveOptions, now: number): ReceivedMessage[] {
    // Deduplication ids past their 5 minutes are forgotten as consumers poll, not only at the next
    // send: after a burst (100,000 instance creates) they were ~25 MB of this thread's heap until then.
    this.deduplication.forget(now);
    if (this.server.held) return [];
    const retentionMs = this.number('MessageRetentionPeriod') * 1000;
    const policy = this.redrivePolicy();
    const deadLetters = policy ? this.server.byArn(policy.deadLetterTargetArn) : undefined;
    // A FIFO group with a message in flight gives out nothing else; one whose head is delayed,
    // nothing behind it.
    const blocked = new Set<string>();
    if (this.fifo) {
      for (const message of this.messages.values()) {
        if (message.receipt !== undefined && message.visibleAt > now) blocked.add(message.group ?? '');
      }
    }
    const out: ReceivedMessage[] = [];
    const records: JournalRecord[] = [];
    for (const message of [...this.messages.values()]) {
      if (out.length >= options.max) break;
      if (message.sentAt + retentionMs <= now) {
        this.messages.delete(message.id);
        records.push({ op: 'delete', id: message.id });
        continue;
      }
      const group = message.group ?? '';
      if (this.fifo && blocked.has(group)) continue;
      if (message.visibleAt > now) {
        if (this.fifo) blocked.add(group);
        continue;
      }
      if (policy && deadLetters && message.receiveCount >= policy.maxReceiveCount) {
        this.messages.delete(message.id);
        records.push({ op: 'delete', id: message.id });
        deadLetters.adopt(message, now, { sentAt: message.sentAt, sourceArn: this.arn });
        continue;
      }
      message.receiveCount++;
      message.firstReceiveAt ??= now;
      message.receipt = Buffer.from(`${this.name} ${message.id} ${randomUUID()}`).toString('base64url');
      message.visibleAt = now + options.visibility * 1000;
      delete message.visibilityChanged;
      records.push({
        op: 'receive',
        id: message.id,
        receipt: message.receipt,
        visibleAt: message.visibleAt,
        receiveCount: message.receiveCount,
        firstReceiveAt: message.firstReceiveAt,
      });
      out.push(this.render(message, options));
    }
    this.write(records);
    return out;
  }

  private render(message: StoredMessage, options: ReceiveOptions): ReceivedMessage {
    const out: ReceivedMessage = { MessageId: message.id, ReceiptHandle: message.receipt ?? '', MD5OfBody: md5(message.body), Body: message.body };
    const system: Record<string, string | undefined> = {
      SenderId: ACCOUNT,
      SentTimestamp: String(message.sentAt),
      ApproximateReceiveCount: String(message.receiveCount),
      ApproximateFirstReceiveTimestamp: String(message.firstReceiveAt ?? ''),
      SequenceNumber: message.sequenceNumber,
      MessageDeduplicationId: message.deduplicationId,
      MessageGroupId: message.group,
      AWSTraceHeader: message.traceHeader,
      DeadLetterQueueSourceArn: message.sourceArn,
    };
    const wantedSystem = options.systemAttributes.includes('All') ? MESSAGE_SYSTEM_ATTRIBUTES : options.systemAttributes;
    const attributes = Object.fromEntries(wantedSystem.flatMap((name) => (system[name] !== undefined ? [[name, system[name] as string]] : [])));
    if (Object.keys(attributes).length) out.Attributes = attributes;
    const wanted = options.messageAttributes;
    const selected = Object.fromEntries(
      Object.entries(message.attributes ?? {}).filter(([name]) =>
        wanted.some(
          (pattern) => pattern === 'All' || pattern === '.*' || pattern === name || (pattern.endsWith('.*') && name.startsWith(pattern.slice(0, -1))),
        ),
      ),
    );
    if (Object.keys(selected).length) {
      out.MessageAttributes = selected;
      out.MD5OfMessageAttributes = md5OfMessageAttributes(selected);
    }
    return out;
  }

  /** The message a receipt handle of this queue names, if it is still the message's latest receipt. */
  byReceipt(handle: string): StoredMessage | undefined {
    const [queue, id, nonce, ...rest] = Buffer.from(handle, 'base64url').toString('utf8').split(' ');
    if (queue !== this.name || !id || !nonce || rest.length) throw receiptHandleIsInvalid(handle);
    const message = this.messages.get(id);
    return message?.receipt === handle ? message : undefined;
  }

  changeVisibility(handle: string, seconds: number, now: number): void {
    if (!Number.isInteger(seconds) || seconds < 0 || seconds > 43_200) throw invalidValue('VisibilityTimeout', seconds, 'Must be between 0 and 43200.');
    const message = this.byReceipt(handle);
    if (!message) throw invalidValue('ReceiptHandle', handle, 'Message does not exist or is not available for visibility timeout change.');
    if (message.visibleAt <= now)
      throw sqsError('MessageNotInflight', 'The message referred to is not in flight.', 'AWS.SimpleQueueService.MessageNotInflight');
    message.visibleAt = now + seconds * 1000;
    message.visibilityChanged = true;
    this.write([{ op: 'visibility', id: message.id, visibleAt: message.visibleAt }]);
    this.wake();
  }

  deleteByReceipt(handle: string): void {
    const message = this.byReceipt(handle);
    if (message) this.remove(message.id); // a stale receipt or a message already gone: nothing to do, as SQS
  }

  counts(now: number): { visible: number; inFlight: number; delayed: number } {
    const counts = { visible: 0, inFlight: 0, delayed: 0 };
    for (const message of this.messages.values()) {
      if (message.visibleAt <= now) counts.visible++;
      else if (message.receipt !== undefined) counts.inFlight++;
      else counts.delayed++;
    }
    return counts;
  }

  // --- long polls ---

  /** Offers what is available to the waiting receives, oldest first, and sets a timer for the next message to become visible. */
  wake(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const waiter of this.waiters) {
      if (!waiter.attempt()) break;
    }
    if (this.waiters.size === 0 || this.server.held) return;
    const now = Date.now();
    let next = Infinity;
    for (const message of this.messages.values()) if (message.visibleAt > now && message.visibleAt < next) next = message.visibleAt;
    if (next !== Infinity) this.timer = setTimeout(() => this.wake(), Math.min(next - now + 1, 2 ** 31 - 1)).unref();
  }

  // --- move tasks ---

  startTask(task: MoveTask): void {
    this.tasks.set(task.id, task);
    for (const id of [...this.tasks.keys()].slice(0, Math.max(0, this.tasks.size - MAX_TASKS_KEPT))) this.tasks.delete(id);
    this.write([{ op: 'task', task }]);
    this.scheduleTask(0);
  }

  runningTask(): MoveTask | undefined {
    return [...this.tasks.values()].find((task) => task.status === 'RUNNING');
  }

  scheduleTask(delayMs = MOVE_STEP_MS): void {
    clearTimeout(this.taskTimer);
    this.taskTimer = setTimeout(() => this.stepTask(), delayMs).unref();
  }

  private endTask(task: MoveTask, status: TaskStatus, failureReason?: string): void {
    task.status = status;
    if (failureReason) task.failureReason = failureReason;
    this.write([{ op: 'task', task }]);
  }

  /** Moves the next few messages of the running task; every step is journalled, so a restart resumes it. */
  private stepTask(): void {
    const task = this.runningTask();
    if (!task) return;
    const now = Date.now();
    const perStep = task.rate ? Math.max(1, Math.ceil((task.rate * MOVE_STEP_MS) / 1000)) : DEFAULT_MOVE_BATCH;
    let moved = 0;
    for (const message of [...this.messages.values()]) {
      if (moved >= perStep) break;
      if (message.receipt !== undefined && message.visibleAt > now) continue; // in flight: not available to move
      const destinationArn = task.destinationArn ?? message.sourceArn;
      const destination = destinationArn ? this.server.byArn(destinationArn) : undefined;
      if (!destination) {
        this.endTask(
          task,
          'FAILED',
          destinationArn ? `Destination queue ${destinationArn} does not exist.` : 'A message has no source queue to return to; give a DestinationArn.',
        );
        return;
      }
      destination.adopt(message, now, {});
      this.remove(message.id);
      moved++;
    }
    task.moved += moved;
    if (moved < perStep) this.endTask(task, 'COMPLETED');
    else {
      this.write([{ op: 'task', task }]);
      this.scheduleTask();
    }
  }

  /** Ends the queue's timers and answers its waiting receives (with nothing). */
  shutdown(): void {
    clearTimeout(this.timer);
    clearTimeout(this.taskTimer);
    for (const waiter of [...this.waiters]) waiter.finish();
  }
}

const SEQUENCE_BASE = 10n ** 19n;

function checkFifoId(name: string, value: string): void {
  if (!/^[\x21-\x7E]{1,128}$/.test(value))
    throw invalidValue(name, value, `${name} can only include alphanumeric and punctuation characters. 1 to 128 in length.`);
}

function checkMessageAttributes(attributes: Record<string, z.infer<typeof attributeValue>>, what: string): Record<string, MessageAttribute> {
  const names = Object.keys(attributes);
  if (names.length > 10) throw invalidParameter(`Number of message attributes [${names.length}] exceeds the allowed maximum [10].`);
  const out: Record<string, MessageAttribute> = {};
  for (const name of names) {
    const value = attributes[name] as z.infer<typeof attributeValue>;
    if (!ATTRIBUTE_NAME.test(name) || name.startsWith('.') || name.endsWith('.') || name.includes('..') || /^(aws\.|amazon\.)/i.test(name)) {
      throw invalidParameter(`${what} name '${name}' is invalid.`);
    }
    const type = value.DataType;
    const base = type.split('.')[0];
    if (base !== 'String' && base !== 'Number' && base !== 'Binary')
      throw invalidParameter(
        `The type of message (user) attribute '${name}' is invalid. You must use only the following supported type prefixes: Binary, Number, String.`,
      );
    if (base === 'Binary') {
      if (value.BinaryValue === undefined || value.BinaryValue === '' || !BASE64.test(value.BinaryValue))
        throw invalidParameter(`The message attribute '${name}' with type 'Binary' must use field 'Binary'.`);
      out[name] = { DataType: type, BinaryValue: value.BinaryValue };
    } else {
      if (value.StringValue === undefined || value.StringValue === '')
        throw invalidParameter(`The message attribute '${name}' must contain non-empty message attribute value for message attribute type '${base}'.`);
      if (base === 'Number' && !/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(value.StringValue))
        throw invalidParameter(`Can't cast the value of message (user) attribute '${name}' to a number.`);
      out[name] = { DataType: type, StringValue: value.StringValue };
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The server.

interface SqsState {
  held: boolean;
  byArn(arn: string): Queue | undefined;
}

export async function startLocalSqs(options: LocalSqsOptions): Promise<LocalSqs> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const region = process.env.AWS_REGION ?? 'us-east-1';
  const dataDir = options.dataDir;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const queues = new Map<string, Queue>();
  const arnOf = (name: string) => `arn:aws:sqs:${region}:${ACCOUNT}:${name}`;
  const state: SqsState = {
    held: false,
    byArn: (arn) => {
      const name = arn.split(':').pop() ?? '';
      const queue = queues.get(name);
      return queue?.arn === arn ? queue : undefined;
    },
  };
  const journalPath = (name: string) => join(dataDir, `${name}${JOURNAL_SUFFIX}`);

  // Load every queue's journal and rewrite it compacted (which also drops a torn last line).
  const now = Date.now();
  for (const file of readdirSync(dataDir)) {
    if (file.endsWith('.tmp')) rmSync(join(dataDir, file), { force: true }); // a compaction cut short
    if (!file.endsWith(JOURNAL_SUFFIX)) continue;
    const name = file.slice(0, -JOURNAL_SUFFIX.length);
    if (!QUEUE_NAME.test(name) && !FIFO_QUEUE_NAME.test(name)) continue;
    const queue = new Queue(name, arnOf(name), new Journal(journalPath(name)), state);
    let first: string | undefined;
    for (const record of Journal.read(queue.journal.path, log)) {
      first ??= record.op;
      if (first !== 'queue') break;
      try {
        queue.apply(record, now);
      } catch {
        log(`[sqs] ${queue.journal.path}: a ${String(record.op)} record is malformed; skipped`);
      }
    }
    if (first !== 'queue') {
      log(`[sqs] ${queue.journal.path} does not start with its queue; ignored`);
      continue;
    }
    const released = queue.releaseAbandoned(now);
    if (released) log(`[sqs] ${name}: ${released} message(s) received before the restart and never deleted are visible again`);
    queue.compact();
    queues.set(name, queue);
  }
  for (const queue of queues.values()) if (queue.runningTask()) queue.scheduleTask(0);

  let endpoint = '';
  const urlOf = (queue: Queue) => `${endpoint}/${ACCOUNT}/${queue.name}`;
  const queueOf = (url: string): Queue => {
    const queue = queues.get(url.split('/').pop() ?? '');
    if (!queue) throw queueDoesNotExist();
    return queue;
  };

  const receive = (input: z.infer<typeof schemas.ReceiveMessage>, req: http.IncomingMessage) => {
    const queue = queueOf(input.QueueUrl);
    const max = input.MaxNumberOfMessages ?? 1;
    if (max < 1 || max > 10) throw invalidValue('MaxNumberOfMessages', max, 'Must be between 1 and 10, if provided.');
    const wait = input.WaitTimeSeconds ?? queue.number('ReceiveMessageWaitTimeSeconds');
    if (wait < 0 || wait > 20) throw invalidValue('WaitTimeSeconds', wait, 'Must be >= 0 and <= 20, if provided.');
    const visibility = input.VisibilityTimeout ?? queue.number('VisibilityTimeout');
    if (visibility < 0 || visibility > 43_200) throw invalidValue('VisibilityTimeout', visibility, 'Must be between 0 and 43200, if provided.');
    const receiveOptions: ReceiveOptions = {
      max,
      visibility,
      systemAttributes: [...(input.AttributeNames ?? []), ...(input.MessageSystemAttributeNames ?? [])],
      messageAttributes: input.MessageAttributeNames ?? [],
    };
    const answer = (messages: ReceivedMessage[]) => (messages.length ? { Messages: messages } : {});
    const first = queue.take(receiveOptions, Date.now());
    if (first.length || wait === 0) return answer(first);
    // A long poll: answered as soon as a message is available, with nothing when the wait is over.
    return new Promise((resolve) => {
      const socket = req.socket;
      const finish = (messages: ReceivedMessage[] = []) => {
        clearTimeout(timeout);
        socket.off('close', onClose);
        queue.waiters.delete(waiter);
        resolve(answer(messages));
      };
      const onClose = () => finish();
      const waiter: Waiter = {
        attempt: () => {
          // A client that went away (a poller stopping) must not be handed messages.
          if (socket.destroyed) {
            finish();
            return true;
          }
          const messages = queue.take(receiveOptions, Date.now());
          if (messages.length === 0) return false;
          finish(messages);
          return true;
        },
        finish: () => finish(),
      };
      const timeout = setTimeout(() => finish(), wait * 1000);
      socket.once('close', onClose);
      queue.waiters.add(waiter);
      queue.wake();
    });
  };

  const createQueue = (input: z.infer<typeof schemas.CreateQueue>) => {
    const name = input.QueueName;
    const given = { ...input.Attributes };
    const fifo = String(given.FifoQueue ?? '').toLowerCase() === 'true';
    if (fifo ? !FIFO_QUEUE_NAME.test(name) : !QUEUE_NAME.test(name)) {
      throw invalidParameter(
        fifo
          ? 'The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length.'
          : 'Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length',
      );
    }
    const attributes = normalizeAttributes(given, fifo, state.byArn, arnOf(name));
    const existing = queues.get(name);
    if (existing) {
      for (const [key, value] of Object.entries(attributes)) {
        const current = existing.attributes[key] ?? (key === 'FifoQueue' ? 'false' : (DEFAULT_ATTRIBUTES[key] ?? ''));
        if (current !== value)
          throw sqsError('QueueNameExists', `A queue already exists with the same name and a different value for attribute ${key}`, 'QueueAlreadyExists');
      }
      return { QueueUrl: urlOf(existing) };
    }
    const queue = new Queue(name, arnOf(name), new Journal(journalPath(name)), state);
    const time = Date.now();
    queue.attributes = { ...DEFAULT_ATTRIBUTES, ...(fifo ? FIFO_DEFAULTS : {}), ...attributes };
    if (!queue.attributes.RedrivePolicy) delete queue.attributes.RedrivePolicy;
    if (!fifo) delete queue.attributes.FifoQueue;
    queue.created = time;
    queue.modified = time;
    queue.journal.rewrite([{ op: 'queue', attributes: queue.attributes, created: time, modified: time }]);
    queues.set(name, queue);
    return { QueueUrl: urlOf(queue) };
  };

  const queueAttributes = (queue: Queue, names: string[]): Record<string, string> => {
    const counts = queue.counts(Date.now());
    const all: Record<string, string> = {
      ...queue.attributes,
      ApproximateNumberOfMessages: String(counts.visible),
      ApproximateNumberOfMessagesNotVisible: String(counts.inFlight),
      ApproximateNumberOfMessagesDelayed: String(counts.delayed),
      CreatedTimestamp: String(Math.floor(queue.created / 1000)),
      LastModifiedTimestamp: String(Math.floor(queue.modified / 1000)),
      QueueArn: queue.arn,
    };
    if (names.includes('All')) return all;
    const out: Record<string, string> = {};
    for (const name of names) {
      if (!SETTABLE_ATTRIBUTES.has(name) && !COMPUTED_ATTRIBUTES.includes(name)) throw sqsError('InvalidAttributeName', `Unknown Attribute ${name}.`);
      if (all[name] !== undefined) out[name] = all[name];
    }
    return out;
  };

  const operations: Record<string, AwsJsonOperation> = {
    CreateQueue: (body) => createQueue(parse(schemas.CreateQueue, body)),
    GetQueueUrl: (body) => {
      const queue = queues.get(parse(schemas.GetQueueUrl, body).QueueName);
      if (!queue) throw queueDoesNotExist();
      return { QueueUrl: urlOf(queue) };
    },
    ListQueues: (body) => {
      const input = parse(schemas.ListQueues, body);
      const max = input.MaxResults;
      if (max !== undefined && (max < 1 || max > 1000)) throw invalidValue('MaxResults', max, 'Must be between 1 and 1000.');
      let after = '';
      if (input.NextToken !== undefined) {
        const token = decodeToken(input.NextToken);
        if (typeof token?.after !== 'string') throw invalidParameter('Invalid NextToken value.');
        after = token.after;
      }
      const names = [...queues.keys()].filter((name) => name.startsWith(input.QueueNamePrefix ?? '') && name > after).sort();
      const page = names.slice(0, max ?? 1000);
      return {
        ...(page.length ? { QueueUrls: page.map((name) => urlOf(queues.get(name) as Queue)) } : {}),
        ...(max !== undefined && names.length > page.length ? { NextToken: encodeToken({ after: page.at(-1) }) } : {}),
      };
    },
    GetQueueAttributes: (body) => {
      const input = parse(schemas.GetQueueAttributes, body);
      const attributes = queueAttributes(queueOf(input.QueueUrl), input.AttributeNames ?? []);
      return Object.keys(attributes).length ? { Attributes: attributes } : {};
    },
    SetQueueAttributes: (body) => {
      const input = parse(schemas.SetQueueAttributes, body);
      const queue = queueOf(input.QueueUrl);
      const { FifoQueue: fifo, ...rest } = input.Attributes;
      if (fifo !== undefined && fifo.toLowerCase() !== String(queue.fifo)) throw invalidAttributeValue('FifoQueue', 'a queue cannot change its type');
      const attributes = { ...queue.attributes, ...normalizeAttributes(rest, queue.fifo, state.byArn, queue.arn) };
      if (!attributes.RedrivePolicy) delete attributes.RedrivePolicy;
      queue.attributes = attributes;
      queue.modified = Date.now();
      queue.write([{ op: 'queue', attributes, created: queue.created, modified: queue.modified }]);
      queue.wake();
      return {};
    },
    PurgeQueue: (body) => {
      queueOf(parse(schemas.QueueOnly, body).QueueUrl).purge();
      return {};
    },
    DeleteQueue: (body) => {
      const queue = queueOf(parse(schemas.QueueOnly, body).QueueUrl);
      queues.delete(queue.name);
      queue.shutdown();
      rmSync(queue.journal.path, { force: true });
      return {};
    },
    SendMessage: (body) => {
      const { QueueUrl, ...entry } = parse(schemas.SendMessage, body);
      return queueOf(QueueUrl).send(entry, Date.now());
    },
    SendMessageBatch: (body) => {
      const input = parse(schemas.SendMessageBatch, body);
      const queue = queueOf(input.QueueUrl);
      checkBatch(input.Entries);
      const total = input.Entries.reduce((sum, entry) => sum + Buffer.byteLength(entry.MessageBody), 0);
      if (total > queue.number('MaximumMessageSize'))
        throw sqsError(
          'BatchRequestTooLong',
          `Batch requests cannot be longer than ${queue.number('MaximumMessageSize')} bytes. You have sent ${total} bytes.`,
          'AWS.SimpleQueueService.BatchRequestTooLong',
        );
      const now = Date.now();
      return batchResponse(input.Entries.map(({ Id, ...entry }) => batchEntry(Id, () => queue.send(entry, now))));
    },
    ReceiveMessage: (body, req) => receive(parse(schemas.ReceiveMessage, body), req),
    DeleteMessage: (body) => {
      const input = parse(schemas.DeleteMessage, body);
      queueOf(input.QueueUrl).deleteByReceipt(input.ReceiptHandle);
      return {};
    },
    DeleteMessageBatch: (body) => {
      const input = parse(schemas.DeleteMessageBatch, body);
      const queue = queueOf(input.QueueUrl);
      checkBatch(input.Entries);
      return batchResponse(
        input.Entries.map((entry) =>
          batchEntry(entry.Id, () => {
            queue.deleteByReceipt(entry.ReceiptHandle);
            return {};
          }),
        ),
      );
    },
    ChangeMessageVisibility: (body) => {
      const input = parse(schemas.ChangeMessageVisibility, body);
      queueOf(input.QueueUrl).changeVisibility(input.ReceiptHandle, input.VisibilityTimeout, Date.now());
      return {};
    },
    ChangeMessageVisibilityBatch: (body) => {
      const input = parse(schemas.ChangeMessageVisibilityBatch, body);
      const queue = queueOf(input.QueueUrl);
      checkBatch(input.Entries);
      const now = Date.now();
      return batchResponse(
        input.Entries.map((entry) =>
          batchEntry(entry.Id, () => {
            if (entry.VisibilityTimeout === undefined) throw missingParameter('VisibilityTimeout');
            queue.changeVisibility(entry.ReceiptHandle, entry.VisibilityTimeout, now);
            return {};
          }),
        ),
      );
    },
    StartMessageMoveTask: (body) => {
      const input = parse(schemas.StartMessageMoveTask, body);
      const source = state.byArn(input.SourceArn);
      if (!source) throw resourceNotFound(`The resource that you specified for the SourceArn parameter doesn't exist.`);
      if (![...queues.values()].some((queue) => queue.redrivePolicy()?.deadLetterTargetArn === source.arn))
        throw invalidParameter('Source queue must be configured as a Dead Letter Queue.');
      if (input.DestinationArn !== undefined && !state.byArn(input.DestinationArn))
        throw resourceNotFound(`The resource that you specified for the DestinationArn parameter doesn't exist.`);
      const rate = input.MaxNumberOfMessagesPerSecond;
      if (rate !== undefined && (rate < 1 || rate > 500)) throw invalidValue('MaxNumberOfMessagesPerSecond', rate, 'Must be between 1 and 500.');
      if (source.runningTask())
        throw sqsError(
          'UnsupportedOperation',
          'There is already a task running. Only one active task is allowed for a source queue arn at a given time.',
          'AWS.SimpleQueueService.UnsupportedOperation',
        );
      const id = randomUUID();
      const task: MoveTask = {
        id,
        handle: Buffer.from(JSON.stringify({ taskId: id, sourceArn: source.arn })).toString('base64'),
        sourceArn: source.arn,
        status: 'RUNNING',
        moved: 0,
        toMove: source.messages.size,
        startedAt: Date.now(),
        ...(input.DestinationArn !== undefined ? { destinationArn: input.DestinationArn } : {}),
        ...(rate !== undefined ? { rate } : {}),
      };
      source.startTask(task);
      return { TaskHandle: task.handle };
    },
    ListMessageMoveTasks: (body) => {
      const input = parse(schemas.ListMessageMoveTasks, body);
      const source = state.byArn(input.SourceArn);
      if (!source) throw resourceNotFound(`The resource that you specified for the SourceArn parameter doesn't exist.`);
      const max = input.MaxResults ?? 1;
      if (max < 1 || max > 10) throw invalidValue('MaxResults', max, 'Must be between 1 and 10.');
      const tasks = [...source.tasks.values()].reverse().slice(0, max);
      return {
        Results: tasks.map((task) => ({
          ...(task.status === 'RUNNING' ? { TaskHandle: task.handle } : {}),
          Status: task.status,
          SourceArn: task.sourceArn,
          ...(task.destinationArn !== undefined ? { DestinationArn: task.destinationArn } : {}),
          ...(task.rate !== undefined ? { MaxNumberOfMessagesPerSecond: task.rate } : {}),
          ApproximateNumberOfMessagesMoved: task.moved,
          ApproximateNumberOfMessagesToMove: task.toMove,
          ...(task.failureReason !== undefined ? { FailureReason: task.failureReason } : {}),
          StartedTimestamp: task.startedAt,
        })),
      };
    },
    CancelMessageMoveTask: (body) => {
      const handle = parse(schemas.CancelMessageMoveTask, body).TaskHandle;
      const decoded = decodeTaskHandle(handle);
      const task = decoded ? state.byArn(decoded.sourceArn)?.tasks.get(decoded.taskId) : undefined;
      if (task?.status !== 'RUNNING') throw resourceNotFound('The task handle does not name a running message move task.');
      const source = state.byArn(task.sourceArn) as Queue;
      task.status = 'CANCELLED';
      source.write([{ op: 'task', task }]);
      return { ApproximateNumberOfMessagesMoved: task.moved };
    },
  };

  const api = await startAwsJsonServer({
    name: 'SQS',
    targetPrefix: 'AmazonSQS',
    contentType: 'application/x-amz-json-1.0',
    operations,
    signedBy: { credentials: options.credentials, service: 'sqs' },
    controls: {
      // For tests that need a moment when no message is being handled: receives hand out nothing
      // (long polls wait) until released. Not kept across a restart.
      'POST /_local/hold': () => {
        state.held = true;
        return {};
      },
      'POST /_local/release': () => {
        state.held = false;
        for (const queue of queues.values()) queue.wake();
        return {};
      },
      /** Long polls waiting, per queue: a poller waiting there is not handling a batch. */
      'GET /_local/receives': () => Object.fromEntries([...queues.values()].map((queue) => [queue.name, queue.waiters.size])),
    },
    maxBodyBytes: 16 * 1024 * 1024,
    validationErrorType: 'com.amazonaws.sqs#InvalidParameterValue',
    internalError: { type: 'com.amazonaws.sqs#InternalError', message: 'We encountered an internal error. Please try again.' },
    onInternalError: (err) => log(`[sqs] internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`),
    host: options.host,
    port: options.port,
  });
  endpoint = api.endpoint;

  let closing: Promise<void> | undefined;
  return {
    endpoint,
    close() {
      closing ??= (async () => {
        for (const queue of queues.values()) queue.shutdown();
        await api.close();
      })();
      return closing;
    },
  };
}

function decodeTaskHandle(handle: string): { taskId: string; sourceArn: string } | undefined {
  try {
    const value = JSON.parse(Buffer.from(handle, 'base64').toString('utf8')) as { taskId?: unknown; sourceArn?: unknown };
    if (typeof value.taskId === 'string' && typeof value.sourceArn === 'string') return { taskId: value.taskId, sourceArn: value.sourceArn };
  } catch {
    // not a handle of ours
  }
  return undefined;
}

// The local DynamoDB and SQS run on a thread of their own (local/standins-worker.ts), as those
// services run apart from the functions that call them. On the runtime's thread they were the
// largest single cost of every request: dynalite's request handling, its LevelDB reads and writes
// (an instance create writes the item and six index entries), the queue journal and the signature
// checks took over a third of that thread's CPU under 8 concurrent creates, time the functions now
// get back while the stand-ins work on another core. The handlers reach them exactly as before, over
// HTTP with the SDK at AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_SQS.
import { Worker } from 'node:worker_threads';
import { type IndexShape, usage } from './metering.ts';
import type { AwsCredentials } from './sigv4.ts';

/** Runtime thread -> stand-ins thread. */
export type StandinsMessage = { kind: 'indexes'; table: string; indexes: IndexShape[] } | { kind: 'close' };

/** Stand-ins thread -> runtime thread. */
export type StandinsReport =
  | { kind: 'ready'; dynamodb: string; sqs: string }
  | { kind: 'failed'; message: string }
  | { kind: 'log'; line: string }
  | { kind: 'call'; service: string; operation: string }
  | { kind: 'capacity'; operation: string; consumed: unknown };

export interface StandinsSetup {
  dynamoDir: string;
  sqsDir: string;
  credentials: AwsCredentials;
  maxDynamoBodyBytes: number;
  meter: boolean;
}

export interface StandinsThread {
  /** The endpoints, as AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_SQS take them. */
  dynamodb: string;
  sqs: string;
  /** The table's global secondary indexes, for the index write units the meter counts. */
  describeIndexes(table: string, indexes: IndexShape[]): void;
  /** The thread's own JS heap (V8's statistics of its isolate; process.memoryUsage() counts the runtime's thread only). */
  heapStatistics(): Promise<import('node:v8').HeapInfo>;
  close(): Promise<void>;
}

export function startStandinsThread(
  setup: Omit<StandinsSetup, 'meter'> & {
    log: (line: string) => void;
    /** Called when the thread ends without being asked to: the runtime cannot go on without its tables and queues. */
    onLost: (error: Error) => void;
  },
): Promise<StandinsThread> {
  const { log, onLost, ...data } = setup;
  const worker = new Worker(new URL('./standins-worker.ts', import.meta.url), { workerData: { ...data, meter: usage.enabled } satisfies StandinsSetup });
  const send = (message: StandinsMessage) => worker.postMessage(message);
  let closing = false;
  return new Promise((resolve, reject) => {
    let started = false;
    const fail = (error: Error) => {
      if (!started) reject(error);
      else if (!closing) onLost(error);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the local DynamoDB and SQS thread ended (exit code ${code})`)));
    worker.on('message', (message: StandinsReport) => {
      switch (message.kind) {
        case 'ready':
          started = true;
          resolve({
            dynamodb: message.dynamodb,
            sqs: message.sqs,
            describeIndexes: (table, indexes) => send({ kind: 'indexes', table, indexes }),
            heapStatistics: () => worker.getHeapStatistics(),
            close: () =>
              new Promise((closed) => {
                closing = true;
                worker.once('exit', () => closed());
                send({ kind: 'close' });
              }),
          });
          return;
        case 'failed':
          fail(new Error(message.message));
          return;
        case 'log':
          log(message.line);
          return;
        case 'call':
          usage.call(message.service, message.operation);
          return;
        case 'capacity':
          usage.dynamoCapacity(message.operation, message.consumed);
          return;
      }
    });
  });
}

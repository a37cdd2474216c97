// The local DynamoDB runs on a thread of its own (local/dynamodb-worker.ts), as DynamoDB runs apart
// from the functions that call it. On the runtime's thread it was the largest single cost of every
// request: dynalite's request handling, its LevelDB reads and writes (an instance create writes the
// item and six index entries) and the signature checks took about a third of that thread's CPU under
// 8 concurrent creates, time the functions now get back while the stand-in works on the other core.
// The handlers reach it exactly as before, over HTTP with the SDK at AWS_ENDPOINT_URL_DYNAMODB.
import { Worker } from 'node:worker_threads';
import { type IndexShape, usage } from './metering.ts';
import type { AwsCredentials } from './sigv4.ts';

/** Runtime thread -> DynamoDB thread. */
export type DynamoThreadMessage = { kind: 'indexes'; table: string; indexes: IndexShape[] } | { kind: 'open-resources' } | { kind: 'close' };

/** DynamoDB thread -> runtime thread. */
export type DynamoWorkerMessage =
  | { kind: 'ready'; port: number }
  | { kind: 'failed'; message: string }
  | { kind: 'log'; line: string }
  | { kind: 'call'; operation: string }
  | { kind: 'capacity'; operation: string; consumed: unknown }
  | { kind: 'open-resources'; count: number }
  | { kind: 'closed' };

export interface DynamoThread {
  endpoint: string;
  /** The table's global secondary indexes, for the index write units the meter counts. */
  describeIndexes(table: string, indexes: IndexShape[]): void;
  /** LevelDB iterators (and chained batches) open now: 0 when nothing is being read. */
  openResources(): Promise<number>;
  close(): Promise<void>;
}

export function startDynamoThread(options: {
  dir: string;
  credentials: AwsCredentials;
  maxBodyBytes: number;
  log: (line: string) => void;
  /** Called when the thread ends without being asked to: the runtime cannot go on without its tables. */
  onLost: (error: Error) => void;
}): Promise<DynamoThread> {
  const worker = new Worker(new URL('./dynamodb-worker.ts', import.meta.url), {
    workerData: { dir: options.dir, credentials: options.credentials, maxBodyBytes: options.maxBodyBytes, meter: usage.enabled },
  });
  const send = (message: DynamoThreadMessage) => worker.postMessage(message);
  let closing = false;
  const counts: Array<(count: number) => void> = [];
  return new Promise((resolve, reject) => {
    let started = false;
    const fail = (error: Error) => {
      if (!started) reject(error);
      else if (!closing) options.onLost(error);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the local DynamoDB thread ended (exit code ${code})`)));
    worker.on('message', (message: DynamoWorkerMessage) => {
      switch (message.kind) {
        case 'ready':
          started = true;
          resolve({
            endpoint: `http://127.0.0.1:${message.port}`,
            describeIndexes: (table, indexes) => send({ kind: 'indexes', table, indexes }),
            openResources: () =>
              new Promise((answer) => {
                counts.push(answer);
                send({ kind: 'open-resources' });
              }),
            close: () =>
              new Promise((closed) => {
                closing = true;
                worker.once('exit', () => closed());
                send({ kind: 'close' });
              }),
          });
          return;
        case 'failed':
          fail(new Error(`the local DynamoDB could not listen: ${message.message}`));
          return;
        case 'log':
          options.log(message.line);
          return;
        case 'call':
          usage.call('dynamodb', message.operation);
          return;
        case 'capacity':
          usage.dynamoCapacity(message.operation, message.consumed);
          return;
        case 'open-resources':
          counts.shift()?.(message.count);
          return;
        case 'closed':
          return;
      }
    });
  });
}

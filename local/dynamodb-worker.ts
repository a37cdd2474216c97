// The local DynamoDB's thread (started by local/dynamodb-thread.ts): dynalite on its LevelDB folder,
// behind the same SigV4 admission as every stand-in, listening on a port of its own. What it meters
// and logs goes to the runtime's thread as messages, where the runtime's one meter and log are.
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { startLocalDynamo } from './dynamodb.ts';
import { containRequestErrors } from './http-guard.ts';
import { type IndexShape, usage } from './metering.ts';
import { admitSigned, type AwsCredentials, refuseAsJson } from './sigv4.ts';
import type { DynamoThreadMessage, DynamoWorkerMessage } from './dynamodb-thread.ts';

interface Setup {
  dir: string;
  credentials: AwsCredentials;
  maxBodyBytes: number;
  meter: boolean;
}

const port = parentPort;
if (!port) throw new Error('local/dynamodb-worker.ts runs as a worker thread (local/dynamodb-thread.ts starts it)');
const setup = workerData as Setup;
const post = (message: DynamoWorkerMessage) => port.postMessage(message);

/**
 * With metering on: counts each request, has it answer its consumed capacity (which changes nothing
 * else) and reports what it consumed. A request that asked for its capacity itself is counted only.
 */
function meterDynamoDb(body: Buffer, req: http.IncomingMessage, res: http.ServerResponse): Buffer {
  if (!usage.enabled) return body;
  const target = String(req.headers['x-amz-target'] ?? '');
  const operation = target.slice(target.indexOf('.') + 1);
  post({ kind: 'call', operation });
  let request: Record<string, unknown>;
  try {
    request = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return body;
  }
  if (request.ReturnConsumedCapacity !== undefined && request.ReturnConsumedCapacity !== 'NONE') return body;
  const asked = Buffer.from(JSON.stringify({ ...request, ReturnConsumedCapacity: 'TOTAL' }));
  req.headers['content-length'] = String(asked.length);
  const chunks: Buffer[] = [];
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => http.ServerResponse;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk === 'string' || chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
    return write(chunk, ...rest);
  }) as typeof res.write;
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (typeof chunk === 'string' || chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
    try {
      const answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { ConsumedCapacity?: unknown };
      post({ kind: 'capacity', operation, consumed: answer.ConsumedCapacity });
    } catch {
      // not JSON (an error page): nothing consumed
    }
    return end(chunk, ...rest);
  }) as typeof res.end;
  return asked;
}

usage.enabled = setup.meter;
const dynamo = startLocalDynamo(setup.dir);
containRequestErrors(
  dynamo.server,
  'DynamoDB',
  (line) => post({ kind: 'log', line }),
  admitSigned({
    credentials: setup.credentials,
    service: 'dynamodb',
    refuse: refuseAsJson('application/x-amz-json-1.0'),
    maxBodyBytes: setup.maxBodyBytes,
    inspect: meterDynamoDb,
  }),
);
dynamo.server.once('error', (error) => post({ kind: 'failed', message: error.message }));
dynamo.server.listen(0, '127.0.0.1', () => post({ kind: 'ready', port: (dynamo.server.address() as AddressInfo).port }));

port.on('message', (message: DynamoThreadMessage) => {
  switch (message.kind) {
    case 'indexes':
      usage.indexes.set(message.table, message.indexes as IndexShape[]);
      return;
    case 'open-resources':
      post({ kind: 'open-resources', count: dynamo.openResources() });
      return;
    case 'close':
      // dynalite closes its LevelDB with its server; the thread ends once nothing is left to run.
      dynamo.server.close(() => {
        post({ kind: 'closed' });
        port.close();
      });
      dynamo.server.closeAllConnections();
      return;
  }
});

// The local DynamoDB and SQS thread (started by local/standins-thread.ts): dynalite on its LevelDB
// folder and the SQS stand-in on its journals, each behind the SigV4 admission every stand-in has,
// each on a port of its own. What they meter and log goes to the runtime's thread as messages, where
// the runtime's one meter and log are.
import type http from 'node:http';
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { closeServer, listen } from './aws-json.ts';
import { startLocalDynamo } from './dynamodb.ts';
import { containRequestErrors, guardProcess } from './http-guard.ts';
import { usage } from './metering.ts';
import { admitSigned, refuseAsJson } from './sigv4.ts';
import { startLocalSqs } from './sqs-server.ts';
import { releaseTranspiler } from './transpiler.ts';
import type { StandinsMessage, StandinsReport, StandinsSetup } from './standins-thread.ts';

if (!parentPort) throw new Error('local/standins-worker.ts runs as a worker thread (local/standins-thread.ts starts it)');
const port: MessagePort = parentPort;
const setup = workerData as StandinsSetup;
const post = (message: StandinsReport) => port.postMessage(message);
const log = (line: string) => post({ kind: 'log', line });
let serving = false;
// As on the runtime's thread (local/main.ts): an error no request contained is logged, and the
// stand-ins go on serving; before they serve, it fails the start.
guardProcess(log, () => serving);

// This thread's meter counts nothing itself: what the stand-ins count is the runtime's.
usage.enabled = setup.meter;
usage.call = (service, operation) => {
  if (usage.enabled) post({ kind: 'call', service, operation });
};
usage.dynamoCapacity = (operation, consumed) => {
  if (usage.enabled) post({ kind: 'capacity', operation, consumed });
};

/**
 * While metering, a DynamoDB request asks for its consumed capacity (ReturnConsumedCapacity TOTAL,
 * which changes nothing else) and the answer's is counted.
 */
function meterDynamoDb(body: Buffer, req: http.IncomingMessage, res: http.ServerResponse): Buffer {
  if (!usage.enabled) return body;
  const target = String(req.headers['x-amz-target'] ?? '');
  const operation = target.slice(target.indexOf('.') + 1);
  usage.call('dynamodb', operation);
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
      usage.dynamoCapacity(operation, answer.ConsumedCapacity);
    } catch {
      // not JSON (an error page): nothing consumed
    }
    return end(chunk, ...rest);
  }) as typeof res.end;
  return asked;
}

async function start() {
  const dynamo = startLocalDynamo(setup.dynamoDir);
  containRequestErrors(
    dynamo.server,
    'DynamoDB',
    log,
    admitSigned({
      credentials: setup.credentials,
      service: 'dynamodb',
      refuse: refuseAsJson('application/x-amz-json-1.0'),
      maxBodyBytes: setup.maxDynamoBodyBytes,
      inspect: meterDynamoDb,
    }),
  );
  const dynamoEndpoint = (await listen(dynamo.server, { name: 'DynamoDB' })).endpoint;
  const sqs = await startLocalSqs({ dataDir: setup.sqsDir, credentials: setup.credentials, log });

  port.on('message', (message: StandinsMessage) => {
    switch (message.kind) {
      case 'indexes':
        usage.indexes.set(message.table, message.indexes);
        return;
      case 'close':
        // dynalite closes its LevelDB with its server; the thread ends once nothing is left to run.
        void sqs
          .close()
          .then(() => closeServer(dynamo.server))
          .then(() => port.close());
        return;
    }
  });
  await releaseTranspiler();
  serving = true;
  post({ kind: 'ready', dynamodb: dynamoEndpoint, sqs: sqs.endpoint });
}

start().catch((error: unknown) => {
  post({ kind: 'failed', message: error instanceof Error ? error.message : String(error) });
  // Ends this thread (not the process): the runtime's start fails with the message.
  process.exit(1);
});

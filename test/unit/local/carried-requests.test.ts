// The runtime's SDK requests to its local DynamoDB and SQS travel over a message port
// (local/carried-requests.ts). Carried, a request meets the stand-in it would meet over HTTP: the
// same answers, the same signature check; a long poll given up is a client gone (no message is
// handed to it); the stand-ins' thread ending fails what is in flight instead of leaving it
// waiting; and a request to any other address still goes over HTTP.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { newAwsCredentials, signedHeaders } from '#local/sigv4.ts';
import { startStandinsThread, type StandinsThread } from '#local/standins-thread.ts';

const region = 'us-east-1';
const credentials = newAwsCredentials();
let standins: StandinsThread;
let lost: Error | undefined;

before(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-carried-'));
  standins = await startStandinsThread({
    dynamoDir: join(dir, 'dynamodb'),
    sqsDir: join(dir, 'sqs'),
    credentials,
    maxDynamoBodyBytes: 1024 * 1024,
    log: () => undefined,
    onLost: (error) => {
      lost = error;
    },
  });
});
after(async () => {
  await standins?.close();
});

/** The long polls waiting on `queue` now, as the SQS stand-in counts them (its /_local/receives control, over HTTP). */
async function waitingPolls(queue: string): Promise<number> {
  const url = `${standins.sqs}/_local/receives`;
  const response = await fetch(url, { headers: signedHeaders({ credentials, service: 'sqs', method: 'GET', url }) });
  assert.equal(response.status, 200);
  return ((await response.json()) as Record<string, number>)[queue] ?? 0;
}

const dynamo = (overrides: object = {}) =>
  new DynamoDBClient({ region, credentials, endpoint: standins.dynamodb, requestHandler: standins.requestHandler, maxAttempts: 1, ...overrides });
const sqs = () => new SQSClient({ region, credentials, endpoint: standins.sqs, requestHandler: standins.requestHandler, maxAttempts: 1 });

describe('requests carried to the local DynamoDB and SQS', () => {
  it('answers a carried request as the stand-in answers one over HTTP', async () => {
    const carried = dynamo();
    const overHttp = new DynamoDBClient({ region, credentials, endpoint: standins.dynamodb, maxAttempts: 1 });
    await carried.send(
      new CreateTableCommand({
        TableName: 'CarriedTable',
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    await carried.send(new PutItemCommand({ TableName: 'CarriedTable', Item: { id: { S: 'a' }, note: { S: 'ünïcode ✓' } } }));
    const viaPort = await carried.send(new GetItemCommand({ TableName: 'CarriedTable', Key: { id: { S: 'a' } } }));
    const viaHttp = await overHttp.send(new GetItemCommand({ TableName: 'CarriedTable', Key: { id: { S: 'a' } } }));
    assert.deepEqual(viaPort.Item, { id: { S: 'a' }, note: { S: 'ünïcode ✓' } });
    assert.deepEqual(viaPort.Item, viaHttp.Item);
    // A failed condition comes back as the stand-in's error, with its type and status.
    await assert.rejects(
      carried.send(new PutItemCommand({ TableName: 'CarriedTable', Item: { id: { S: 'a' } }, ConditionExpression: 'attribute_not_exists(id)' })),
      (error: Error & { $metadata?: { httpStatusCode?: number } }) =>
        error.name === 'ConditionalCheckFailedException' && error.$metadata?.httpStatusCode === 400,
    );
    overHttp.destroy();
  });

  it('checks the signature of a carried request as of one over HTTP', async () => {
    const stranger = dynamo({ credentials: newAwsCredentials() });
    await assert.rejects(
      stranger.send(new GetItemCommand({ TableName: 'CarriedTable', Key: { id: { S: 'a' } } })),
      (error: Error & { $metadata?: { httpStatusCode?: number } }) => error.$metadata?.httpStatusCode === 403,
    );
  });

  it('hands no message to a long poll that was given up', async () => {
    const client = sqs();
    const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: 'carried-polls' }));
    const giveUp = new AbortController();
    const poll = client.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 20, VisibilityTimeout: 600 }), { abortSignal: giveUp.signal });
    // Given up once the stand-in has it waiting (each look is a request answered after the last).
    while ((await waitingPolls('carried-polls')) === 0);
    giveUp.abort();
    await assert.rejects(poll, (error: Error) => error.name === 'AbortError');
    assert.equal(await waitingPolls('carried-polls'), 0, 'the stand-in stopped waiting for it');
    await client.send(new SendMessageCommand({ QueueUrl, MessageBody: 'for whoever still listens' }));
    // Had the abandoned poll taken it, the message would be hidden for the 600 s of its visibility timeout.
    const next = await client.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 20 }));
    assert.deepEqual(
      next.Messages?.map((message) => message.Body),
      ['for whoever still listens'],
    );
  });

  it('sends a request to any other address over HTTP', async () => {
    let seen: string | undefined;
    const other = http.createServer((req, res) => {
      seen = req.headers['x-amz-target'] as string;
      res.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.0' }).end('{"Item":{"id":{"S":"elsewhere"}}}');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const { port } = other.address() as { port: number };
    try {
      const out = await dynamo({ endpoint: `http://127.0.0.1:${port}` }).send(new GetItemCommand({ TableName: 'Anything', Key: { id: { S: 'x' } } }));
      assert.equal(seen, 'DynamoDB_20120810.GetItem');
      assert.deepEqual(out.Item, { id: { S: 'elsewhere' } });
    } finally {
      other.close();
    }
  });

  it('fails the requests in flight when the stand-ins thread ends', async () => {
    const client = sqs();
    const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: 'carried-close' }));
    const poll = client.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 20 }));
    while ((await waitingPolls('carried-close')) === 0);
    const failed = assert.rejects(poll, (error: Error & { code?: string }) => {
      assert.equal(error.code, 'ECONNRESET', error.message);
      return true;
    });
    await standins.close();
    await failed;
    await assert.rejects(client.send(new CreateQueueCommand({ QueueName: 'after-close' })));
    assert.equal(lost, undefined, 'a close asked for is not a loss');
  });
});

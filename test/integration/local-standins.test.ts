// The local stand-ins are no open doors (issue 14, item 2). Each AWS stand-in (Secrets Manager,
// DynamoDB, S3, SQS, Step Functions, Lambda) answers a request that is unsigned, or signed with
// any credentials but the ones this start made, 403 in its protocol's error shape, and changes
// nothing; signed with the runtime's credentials the same request works. The Lambda stand-in
// drops an authorizer a caller put in an API event, the /_local controls (the scheduler's among
// them) need an admin token, and no stand-in listens beyond loopback.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { networkInterfaces } from 'node:os';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CreateSecretCommand, DescribeSecretCommand, ListSecretsCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { CreateQueueCommand, GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DescribeExecutionCommand, SFNClient, StartExecutionCommand, StopExecutionCommand } from '@aws-sdk/client-sfn';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { createLocalClient } from '#local/oauth2.ts';
import { newAwsCredentials, type AwsCredentials } from '#local/sigv4.ts';
import { accessToken, adminCredentials, client, localControl, ROOT, seedPackage, startVnfm, type LocalVnfm } from '../support/runtime.ts';

interface Endpoints {
  api: string;
  dynamodb: string;
  s3: string;
  sqs: string;
  stepfunctions: string;
  secretsmanager: string;
  lambda: string;
  region: string;
  buckets: Record<string, string>;
}

let vnfm: LocalVnfm;
let endpoints: Endpoints;
/** Not the runtime's: another key pair altogether, and the runtime's key id with a wrong secret. */
let strangers: Array<[string, AwsCredentials]>;

before(async () => {
  vnfm = await startVnfm();
  endpoints = JSON.parse(readFileSync(join(vnfm.dataDir, 'endpoints.json'), 'utf8')) as Endpoints;
  strangers = [
    ['another key pair', newAwsCredentials()],
    ["the runtime's key id with another secret", { accessKeyId: vnfm.awsCredentials.accessKeyId, secretAccessKey: newAwsCredentials().secretAccessKey }],
  ];
});
after(async () => {
  await vnfm?.stop();
});

const config = (endpoint: string, credentials: AwsCredentials) => ({ endpoint, region: endpoints.region, credentials, maxAttempts: 1 });

/** An AWS JSON protocol request without any signature. */
function unsignedJson(endpoint: string, target: string, contentType: string, body: unknown): Promise<Response> {
  return fetch(endpoint, { method: 'POST', headers: { 'Content-Type': contentType, 'X-Amz-Target': target }, body: JSON.stringify(body) });
}

async function jsonErrorType(response: Response): Promise<string> {
  return ((await response.json()) as { __type?: string }).__type ?? '';
}

async function s3ErrorCode(response: Response): Promise<string> {
  return /<Code>([^<]*)<\/Code>/.exec(await response.text())?.[1] ?? '';
}

/** The SDK's error for a refused call: its HTTP status and name. */
async function refusal(call: Promise<unknown>): Promise<{ status?: number; name: string }> {
  try {
    await call;
  } catch (error) {
    const err = error as { name: string; $metadata?: { httpStatusCode?: number } };
    return { status: err.$metadata?.httpStatusCode, name: err.name };
  }
  assert.fail('the call was served');
}

const absent = (call: Promise<unknown>, missing: string) =>
  call.then(
    () => true,
    (error: Error) => {
      if (error.name === missing) return false;
      throw error;
    },
  );

interface StandIn {
  name: string;
  /** The change sent without a signature, and the error its refusal names. */
  unsigned(): Promise<Response>;
  errorOf(response: Response): Promise<string>;
  missingSignature: string;
  /** The change, signed with `credentials` by the SDK. */
  change(credentials: AwsCredentials): Promise<unknown>;
  /** Whether the change happened (asked with the runtime's credentials). */
  changed(): Promise<boolean>;
  /** What the SDK names a refusal for another key pair, and for a wrong secret. */
  refusals: [string, string];
}

/** The stand-ins, each with a change that creates something named `probe`. */
function standIns(probe: string): StandIn[] {
  const bucket = Object.values(endpoints.buckets)[0] as string;
  const own = vnfm.awsCredentials;
  const packageUpload = `arn:aws:states:${endpoints.region}:000000000000:stateMachine:PackageUploadStateMachine`;
  const jsonRefusals: [string, string] = ['UnrecognizedClientException', 'InvalidSignatureException'];
  return [
    {
      name: 'Secrets Manager',
      unsigned: () =>
        unsignedJson(endpoints.secretsmanager, 'secretsmanager.CreateSecret', 'application/x-amz-json-1.1', { Name: probe, SecretString: 'forged' }),
      errorOf: jsonErrorType,
      missingSignature: 'MissingAuthenticationTokenException',
      change: (credentials) =>
        new SecretsManagerClient(config(endpoints.secretsmanager, credentials)).send(new CreateSecretCommand({ Name: probe, SecretString: 'x' })),
      changed: () =>
        absent(
          new SecretsManagerClient(config(endpoints.secretsmanager, own)).send(new DescribeSecretCommand({ SecretId: probe })),
          'ResourceNotFoundException',
        ),
      refusals: jsonRefusals,
    },
    {
      name: 'DynamoDB',
      unsigned: () =>
        unsignedJson(endpoints.dynamodb, 'DynamoDB_20120810.PutItem', 'application/x-amz-json-1.0', {
          TableName: 'VnfPackagesTable',
          Item: { id: { S: probe } },
        }),
      errorOf: jsonErrorType,
      missingSignature: 'MissingAuthenticationTokenException',
      change: (credentials) =>
        new DynamoDBClient(config(endpoints.dynamodb, credentials)).send(new PutItemCommand({ TableName: 'VnfPackagesTable', Item: { id: { S: probe } } })),
      changed: async () =>
        (await new DynamoDBClient(config(endpoints.dynamodb, own)).send(new GetItemCommand({ TableName: 'VnfPackagesTable', Key: { id: { S: probe } } })))
          .Item !== undefined,
      refusals: jsonRefusals,
    },
    {
      name: 'S3',
      unsigned: () => fetch(`${endpoints.s3}/${bucket}/probes/${probe}`, { method: 'PUT', body: 'forged' }),
      errorOf: s3ErrorCode,
      missingSignature: 'AccessDenied',
      change: (credentials) =>
        new S3Client({ ...config(endpoints.s3, credentials), forcePathStyle: true }).send(
          new PutObjectCommand({ Bucket: bucket, Key: `probes/${probe}`, Body: 'x' }),
        ),
      changed: () =>
        absent(
          new S3Client({ ...config(endpoints.s3, own), forcePathStyle: true }).send(new HeadObjectCommand({ Bucket: bucket, Key: `probes/${probe}` })),
          'NotFound',
        ),
      refusals: ['InvalidAccessKeyId', 'SignatureDoesNotMatch'],
    },
    {
      name: 'SQS',
      unsigned: () => unsignedJson(endpoints.sqs, 'AmazonSQS.CreateQueue', 'application/x-amz-json-1.0', { QueueName: probe }),
      errorOf: jsonErrorType,
      missingSignature: 'MissingAuthenticationTokenException',
      change: (credentials) => new SQSClient(config(endpoints.sqs, credentials)).send(new CreateQueueCommand({ QueueName: probe })),
      changed: () => absent(new SQSClient(config(endpoints.sqs, own)).send(new GetQueueUrlCommand({ QueueName: probe })), 'QueueDoesNotExist'),
      refusals: jsonRefusals,
    },
    {
      // Executions are held meanwhile (below), so the one started takes no step.
      name: 'Step Functions',
      unsigned: () =>
        unsignedJson(endpoints.stepfunctions, 'AWSStepFunctions.StartExecution', 'application/x-amz-json-1.0', {
          stateMachineArn: packageUpload,
          name: probe,
          input: '{}',
        }),
      errorOf: jsonErrorType,
      missingSignature: 'MissingAuthenticationTokenException',
      change: (credentials) =>
        new SFNClient(config(endpoints.stepfunctions, credentials)).send(
          new StartExecutionCommand({ stateMachineArn: packageUpload, name: probe, input: '{}' }),
        ),
      changed: () =>
        absent(
          new SFNClient(config(endpoints.stepfunctions, own)).send(
            new DescribeExecutionCommand({ executionArn: `${packageUpload.replace(':stateMachine:', ':execution:')}:${probe}` }),
          ),
          'ExecutionDoesNotExist',
        ),
      refusals: jsonRefusals,
    },
  ];
}

describe('each AWS stand-in', () => {
  const probe = `probe-${crypto.randomUUID()}`;
  before(async () => {
    assert.equal((await localControl(vnfm, 'POST', '/_local/stepfunctions/hold')).status, 204);
  });
  after(async () => {
    const sfn = new SFNClient(config(endpoints.stepfunctions, vnfm.awsCredentials));
    await sfn.send(new StopExecutionCommand({ executionArn: `arn:aws:states:${endpoints.region}:000000000000:execution:PackageUploadStateMachine:${probe}` }));
    await localControl(vnfm, 'POST', '/_local/stepfunctions/release');
  });

  it("refuses a change unsigned or signed with other credentials (403, nothing changed) and makes it signed with the runtime's", async () => {
    for (const standIn of standIns(probe)) {
      const unsigned = await standIn.unsigned();
      assert.equal(unsigned.status, 403, `${standIn.name}: unsigned`);
      assert.equal(await standIn.errorOf(unsigned), standIn.missingSignature, `${standIn.name}: unsigned`);
      for (const [index, [what, credentials]] of strangers.entries()) {
        assert.deepEqual(await refusal(standIn.change(credentials)), { status: 403, name: standIn.refusals[index] }, `${standIn.name}: ${what}`);
      }
      assert.equal(await standIn.changed(), false, `${standIn.name}: changed by a refused request`);
      await standIn.change(vnfm.awsCredentials);
      assert.equal(await standIn.changed(), true, `${standIn.name}: not changed with the runtime's credentials`);
    }
  });

  it('Secrets Manager names no secret to an unsigned or foreign caller', async () => {
    const unsigned = await unsignedJson(endpoints.secretsmanager, 'secretsmanager.ListSecrets', 'application/x-amz-json-1.1', {});
    assert.equal(unsigned.status, 403);
    assert.doesNotMatch(await unsigned.text(), /SecretList|vnfm\//);
    for (const [what, credentials] of strangers) {
      assert.equal((await refusal(new SecretsManagerClient(config(endpoints.secretsmanager, credentials)).send(new ListSecretsCommand({})))).status, 403, what);
    }
    const listed = await new SecretsManagerClient(config(endpoints.secretsmanager, vnfm.awsCredentials)).send(new ListSecretsCommand({}));
    assert.ok((listed.SecretList ?? []).length > 0, "the runtime's credentials list the secrets");
  });

  it("S3 serves a URL presigned with the runtime's credentials, and refuses one presigned with others or tampered with", async () => {
    const bucket = Object.values(endpoints.buckets)[0] as string;
    const key = `probes/presigned-${crypto.randomUUID()}`;
    const s3 = (credentials: AwsCredentials) => new S3Client({ ...config(endpoints.s3, credentials), forcePathStyle: true });
    await s3(vnfm.awsCredentials).send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'presigned content' }));
    const url = await getSignedUrl(s3(vnfm.awsCredentials), new GetObjectCommand({ Bucket: bucket, Key: key }), { expiresIn: 60 });
    const served = await fetch(url);
    assert.equal(served.status, 200);
    assert.equal(await served.text(), 'presigned content');
    for (const [what, credentials] of strangers) {
      const foreign = await fetch(await getSignedUrl(s3(credentials), new GetObjectCommand({ Bucket: bucket, Key: key }), { expiresIn: 60 }));
      assert.equal(foreign.status, 403, what);
      assert.doesNotMatch(await foreign.text(), /presigned content/, what);
    }
    const tampered = await fetch(url.replace(encodeURIComponent(key).replace(/%2F/g, '/'), 'probes/other'));
    assert.equal(tampered.status, 403);
    assert.equal(await s3ErrorCode(tampered), 'SignatureDoesNotMatch');
  });

  it("Lambda refuses an unsigned or foreign Invoke before the handler runs, and runs it signed with the runtime's credentials", async () => {
    const pkg = await seedPackage(vnfm);
    const token = await accessToken(adminCredentials(vnfm));
    const name = `probe-${crypto.randomUUID()}`;
    // A valid API token inside the event does not make up for the invocation's own signature.
    const event = apiEvent(
      'POST',
      '/vnflcm/v2/vnf_instances',
      { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      JSON.stringify({ vnfdId: pkg.vnfdId, vnfInstanceName: name }),
    );
    const invocation = (credentials: AwsCredentials) =>
      new LambdaClient(config(endpoints.lambda, credentials)).send(
        new InvokeCommand({ FunctionName: 'VnfInstancesFunction', Payload: Buffer.from(JSON.stringify(event)) }),
      );
    const created = async () =>
      ((await client(vnfm)('GET', `/vnflcm/v2/vnf_instances?filter=${encodeURIComponent(`(eq,vnfInstanceName,${name})`)}`)).body as unknown[]).length;

    const unsigned = await fetch(`${endpoints.lambda}/2015-03-31/functions/VnfInstancesFunction/invocations`, { method: 'POST', body: JSON.stringify(event) });
    assert.equal(unsigned.status, 403);
    assert.equal(unsigned.headers.get('x-amzn-errortype'), 'MissingAuthenticationTokenException');
    for (const [index, [what, credentials]] of strangers.entries()) {
      assert.deepEqual(
        await refusal(invocation(credentials)),
        { status: 403, name: ['UnrecognizedClientException', 'InvalidSignatureException'][index] },
        what,
      );
    }
    assert.equal(await created(), 0);
    const answer = await invocation(vnfm.awsCredentials);
    assert.equal((JSON.parse(Buffer.from(answer.Payload ?? []).toString('utf8')) as { statusCode: number }).statusCode, 201);
    assert.equal(await created(), 1);
  });
});

/** An API Gateway (payload format 2.0) event as the HTTP API front builds it. */
function apiEvent(method: string, path: string, headers: Record<string, string>, body?: string, authorizer?: unknown): Record<string, unknown> {
  const sample = JSON.parse(readFileSync(join(ROOT, 'events/vnf-instances.json'), 'utf8')) as { requestContext: Record<string, unknown> };
  return {
    ...sample,
    routeKey: `${method} ${path}`,
    rawPath: path,
    rawQueryString: '',
    queryStringParameters: undefined,
    headers: { accept: 'application/json', version: '2.0.0', host: 'localhost', ...headers },
    requestContext: {
      ...sample.requestContext,
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      routeKey: `${method} ${path}`,
      authorizer,
    },
    body,
    isBase64Encoded: false,
  };
}

describe('the Lambda stand-in', () => {
  it('drops an authorizer a caller put in an API event: the handler sees no token and answers 401', async () => {
    const forged = {
      jwt: {
        claims: { client_id: 'forger', sub: 'forger', token_use: 'access', scope: 'vnfm/admin vnfm/tenant:default' },
        scopes: ['vnfm/admin', 'vnfm/tenant:default'],
      },
    };
    const event = apiEvent('GET', '/vnflcm/v2/vnf_instances', {}, undefined, forged);
    const answer = await new LambdaClient(config(endpoints.lambda, vnfm.awsCredentials)).send(
      new InvokeCommand({ FunctionName: 'VnfInstancesFunction', Payload: Buffer.from(JSON.stringify(event)) }),
    );
    const result = JSON.parse(Buffer.from(answer.Payload ?? []).toString('utf8')) as { statusCode: number; body: string };
    assert.equal(result.statusCode, 401, result.body);
    assert.doesNotMatch(result.body, /vnfInstanceName/);
  });
});

describe('the /_local controls', () => {
  const control = (path: string, headers: Record<string, string> = {}) => fetch(`${vnfm.url}${path}`, { method: 'POST', headers });
  const asTenant = async () =>
    `Bearer ${await accessToken({ ...createLocalClient(vnfm.dataDir, { tenantId: 'tenant-x', scopes: ['vnflcm:read', 'vnflcm:write'] }), tokenUrl: adminCredentials(vnfm).tokenUrl })}`;

  for (const path of ['/_local/stepfunctions/hold', '/_local/schedules/VnfHealthMonitorFunction/run', '/_local/idle']) {
    it(`${path}: 401 without a valid token, 403 without the admin scope, served with it`, async () => {
      for (const headers of [{}, { Authorization: 'Bearer not.a.token' }] as Array<Record<string, string>>) {
        const refused = await control(path, headers);
        assert.equal(refused.status, 401);
        assert.equal(refused.headers.get('content-type'), 'application/problem+json');
        assert.match(refused.headers.get('www-authenticate') ?? '', /^Bearer realm="vnfm"/);
        assert.equal(((await refused.json()) as { status: number }).status, 401);
      }
      const forbidden = await control(path, { Authorization: await asTenant() });
      assert.equal(forbidden.status, 403);
      assert.equal(((await forbidden.json()) as { status: number }).status, 403);
      const served = await localControl(vnfm, 'POST', path);
      assert.ok(served.status === 200 || served.status === 204, `${path}: ${served.status}`);
      if (path.endsWith('/hold')) assert.equal((await localControl(vnfm, 'POST', '/_local/stepfunctions/release')).status, 204);
    });
  }
});

describe('where the stand-ins listen', () => {
  const names = ['dynamodb', 's3', 'sqs', 'stepfunctions', 'secretsmanager', 'lambda'] as const;

  it('on loopback only: endpoints.json names 127.0.0.1, and no other address of the machine answers', async () => {
    const others = Object.values(networkInterfaces())
      .flat()
      .filter((i) => i && !i.internal)
      .map((i) => i?.address as string);
    for (const name of names) {
      const url = new URL(endpoints[name]);
      assert.equal(url.hostname, '127.0.0.1', name);
      for (const address of others) {
        const outcome = await new Promise<string>((resolve) => {
          const socket = net.connect({ host: address, port: Number(url.port) });
          socket.once('connect', () => {
            socket.destroy();
            resolve('connected');
          });
          socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
        });
        assert.notEqual(outcome, 'connected', `${name} answers on ${address}:${url.port}`);
      }
    }
  });
});

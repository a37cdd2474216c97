// The engine's side of the script runner: invokeScriptRunner over the Lambda Invoke API (here the
// local stand-in, with the real runner handler behind it), how a function error, an unknown function
// and an oversized request come back, and the runner handler's own answer to a bad request.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { InvokeCommand, LambdaClient, ResourceNotFoundException } from '@aws-sdk/client-lambda';
import { startLocalLambdaApi, type LocalLambdaApi } from '#local/lambda-api.ts';
import { lambdaContext, type LocalFunction } from '#local/lambda.ts';
import { invokeScriptRunner } from '#lib/scripts/client.ts';
import type { ScriptRequest } from '#lib/scripts/contract.ts';
import { handler } from '#functions/steps/script-runner.ts';

/** The stand-in serves only requests signed with these. */
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

const REGION = 'us-east-1';
const ARN = `arn:aws:lambda:${REGION}:000000000000:function:`;

const localFunction = (logicalId: string, fn: (event: unknown) => Promise<unknown>): LocalFunction => ({
  logicalId,
  arn: `${ARN}${logicalId}`,
  file: `${logicalId}.ts`,
  exportName: 'handler',
  timeoutSeconds: 60,
  memorySize: 512,
  properties: {},
  handler: fn,
});

const invocations: string[] = [];
const functions = [
  localFunction('ScriptRunnerFunction', (event) => handler(event as ScriptRequest)),
  localFunction('BrokenFunction', async () => {
    throw new TypeError('Cannot read properties of undefined (reading "kind")');
  }),
];

const request = (
  script: string,
  files: Record<string, string> = { [script]: Buffer.from('console.log(JSON.stringify({ ok: true, answer: 42 }))').toString('base64') },
): ScriptRequest => ({
  kind: 'lcm-hook',
  script,
  files,
  input: { operation: 'terminate_end', request: {}, vnfInstance: { id: 'i' }, is_rollback: false },
});

let api: LocalLambdaApi;
let lambda: LambdaClient;
before(async () => {
  api = await startLocalLambdaApi({
    functions,
    credentials,
    invoke: async (fn, event) => {
      invocations.push(fn.logicalId);
      return fn.handler?.(event, lambdaContext(fn));
    },
  });
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_LAMBDA: api.endpoint,
    AWS_REGION: REGION,
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
  });
  lambda = new LambdaClient({ endpoint: api.endpoint, region: REGION, credentials });
});
after(async () => {
  lambda.destroy();
  await api.close();
});

describe('invokeScriptRunner', () => {
  it('runs the script in the runner function named by name or ARN and returns its result', async () => {
    for (const name of ['ScriptRunnerFunction', `${ARN}ScriptRunnerFunction`, `${ARN}ScriptRunnerFunction:$LATEST`]) {
      const result = await invokeScriptRunner(request('Scripts/end.js'), name);
      assert.equal(result.ok, true, JSON.stringify(result));
      assert.deepEqual(result.ok && result.output, { ok: true, answer: 42 });
    }
  });

  it('takes the function from SCRIPT_RUNNER_FUNCTION, and says so when it is not set', async () => {
    process.env.SCRIPT_RUNNER_FUNCTION = 'ScriptRunnerFunction';
    try {
      assert.equal((await invokeScriptRunner(request('a.js'))).ok, true);
    } finally {
      delete process.env.SCRIPT_RUNNER_FUNCTION;
    }
    const unset = await invokeScriptRunner(request('a.js'));
    assert.equal(unset.ok, false);
    assert.match(!unset.ok ? unset.error.detail : '', /SCRIPT_RUNNER_FUNCTION is not set/);
  });

  it('turns a function error into an ok:false result with status 500', async () => {
    const result = await invokeScriptRunner(request('a.js'), 'BrokenFunction');
    assert.equal(result.ok, false);
    assert.deepEqual(!result.ok && { status: result.error.status, reason: result.reason }, { status: 500, reason: 'runner' });
    assert.match(!result.ok ? result.error.detail : '', /\(Unhandled\) running a\.js: TypeError: Cannot read properties of undefined/);
  });

  it('refuses a request over 6 MB without sending it', async () => {
    const before = invocations.length;
    const big = Buffer.alloc(5 * 1024 * 1024, 1).toString('base64');
    const result = await invokeScriptRunner(request('a.js', { 'a.js': big }), 'ScriptRunnerFunction');
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.error.status, 413);
    assert.equal(invocations.length, before);
  });

  it('throws when Lambda itself refuses the call (an unknown function), so the state machine can retry or fail', async () => {
    await assert.rejects(invokeScriptRunner(request('a.js'), 'NoSuchFunction'), ResourceNotFoundException);
  });
});

describe('the local Lambda Invoke API', () => {
  it('answers 200 with the result and X-Amz-Executed-Version', async () => {
    const out = await lambda.send(new InvokeCommand({ FunctionName: 'ScriptRunnerFunction', Payload: Buffer.from(JSON.stringify(request('a.js'))) }));
    assert.equal(out.StatusCode, 200);
    assert.equal(out.ExecutedVersion, '$LATEST');
    assert.equal(out.FunctionError, undefined);
    assert.equal(JSON.parse(Buffer.from(out.Payload ?? []).toString()).ok, true);
  });

  it("reports a thrown error as Unhandled with Lambda's error JSON", async () => {
    const out = await lambda.send(new InvokeCommand({ FunctionName: `${ARN}BrokenFunction`, Payload: Buffer.from('{}') }));
    assert.equal(out.StatusCode, 200);
    assert.equal(out.FunctionError, 'Unhandled');
    const payload = JSON.parse(Buffer.from(out.Payload ?? []).toString()) as { errorType: string; errorMessage: string; trace: string[] };
    assert.equal(payload.errorType, 'TypeError');
    assert.match(payload.errorMessage, /reading "kind"/);
    assert.ok(Array.isArray(payload.trace) && payload.trace.length > 1);
  });

  it('answers an unknown function with 404 ResourceNotFoundException', async () => {
    const error = await lambda.send(new InvokeCommand({ FunctionName: 'Nope', Payload: Buffer.from('{}') })).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof ResourceNotFoundException, String(error));
    assert.equal(error.$metadata.httpStatusCode, 404);
    assert.match(error.message, /Function not found: Nope/);
  });

  it('runs an Event invocation without waiting (202)', async () => {
    const out = await lambda.send(
      new InvokeCommand({ FunctionName: 'ScriptRunnerFunction', InvocationType: 'Event', Payload: Buffer.from(JSON.stringify(request('a.js'))) }),
    );
    assert.equal(out.StatusCode, 202);
  });
});

describe('the script runner handler', () => {
  it('answers a bad request with an ok:false result, status 400, instead of throwing', async () => {
    const result = await handler({ kind: 'shell', script: 'x.sh', files: {}, input: {} } as unknown as ScriptRequest);
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.error.status, 400);
    assert.match(!result.ok ? result.error.detail : '', /^invalid script request: kind: /);
    const traversal = await handler(request('../up.js', { '../up.js': '' }));
    assert.equal(!traversal.ok && traversal.error.status, 400);
  });

  it('applies SCRIPT_TIMEOUT_SECONDS', async () => {
    process.env.SCRIPT_TIMEOUT_SECONDS = '0.5';
    try {
      const result = await handler(request('loop.js', { 'loop.js': Buffer.from('for (;;) {}').toString('base64') }));
      assert.equal(!result.ok && result.reason, 'timeout');
      assert.match(!result.ok ? result.error.detail : '', /timed out after 500 ms/);
    } finally {
      delete process.env.SCRIPT_TIMEOUT_SECONDS;
    }
  });
});

// Tests for the local Step Functions stand-in, driven through the real @aws-sdk/client-sfn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DescribeExecutionCommand,
  DescribeStateMachineCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  InvalidExecutionInput,
  InvalidName,
  ListExecutionsCommand,
  ListStateMachinesCommand,
  SFNClient,
  StartExecutionCommand,
  StateMachineDoesNotExist,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import type { DescribeExecutionCommandOutput } from '@aws-sdk/client-sfn';
import { randomUUID } from 'node:crypto';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { startLocalStepFunctions, validatedMarker } from '#local/stepfunctions.ts';
import type { LocalStateMachineSpec, LocalStepFunctions, TaskInvoker } from '#local/stepfunctions.ts';
import { signedHeaders } from '#local/sigv4.ts';

/** The stand-in serves only requests signed with these. */
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

const ACCOUNT = '000000000000';
const fn = (name: string) => `arn:aws:lambda:us-east-1:${ACCOUNT}:function:${name}`;
const machineArn = (name: string) => `arn:aws:states:us-east-1:${ACCOUNT}:stateMachine:${name}`;

class NamedError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

const PIPELINE: Record<string, unknown> = {
  Comment: 'Task -> Choice -> Parallel/Map -> Catch',
  StartAt: 'Prepare',
  States: {
    Prepare: {
      Type: 'Task',
      Resource: fn('prepare'),
      ResultPath: '$.prepared',
      Retry: [{ ErrorEquals: ['Flaky'], IntervalSeconds: 1, MaxAttempts: 3, BackoffRate: 2 }],
      Next: 'Route',
    },
    Route: {
      Type: 'Choice',
      Choices: [
        { Variable: '$.mode', StringEquals: 'parallel', Next: 'Fan' },
        { Variable: '$.mode', StringEquals: 'map', Next: 'Each' },
      ],
      Default: 'Nothing',
    },
    Fan: {
      Type: 'Parallel',
      Branches: [
        {
          StartAt: 'Left',
          States: {
            Left: {
              Type: 'Task',
              Resource: 'arn:aws:states:::lambda:invoke',
              Parameters: { FunctionName: 'left', 'Payload.$': '$' },
              ResultSelector: { 'value.$': '$.Payload' },
              End: true,
            },
          },
        },
        {
          StartAt: 'Pause',
          States: {
            Pause: { Type: 'Wait', Seconds: 5, Next: 'PauseMore' },
            PauseMore: { Type: 'Wait', SecondsPath: '$.delay', Next: 'Right' },
            Right: { Type: 'Task', Resource: fn('right'), InputPath: '$.n', End: true },
          },
        },
      ],
      ResultPath: '$.results',
      Catch: [{ ErrorEquals: ['BranchError'], ResultPath: '$.error', Next: 'HandleFailure' }],
      Next: 'Done',
    },
    Each: {
      Type: 'Map',
      ItemsPath: '$.items',
      ItemProcessor: {
        ProcessorConfig: { Mode: 'INLINE' },
        StartAt: 'Square',
        States: { Square: { Type: 'Task', Resource: fn('square'), ResultPath: '$', End: true } },
      },
      ResultPath: '$.squares',
      Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'HandleFailure' }],
      Next: 'Done',
    },
    Nothing: { Type: 'Pass', Result: 0, ResultPath: '$.zero', Next: 'Done' },
    HandleFailure: { Type: 'Task', Resource: fn('onFailure'), Next: 'Failed' },
    Failed: { Type: 'Fail', Error: 'PipelineFailed', Cause: 'handled' },
    Done: { Type: 'Succeed' },
  },
};

const BLOCKING: Record<string, unknown> = {
  StartAt: 'Block',
  States: {
    Block: {
      Type: 'Task',
      Resource: 'arn:aws:states:::lambda:invoke',
      Parameters: { FunctionName: fn('block'), Payload: { 'executionId.$': '$$.Execution.Id', 'input.$': '$' } },
      OutputPath: '$.Payload',
      End: true,
    },
  },
};

interface Harness {
  sfn: LocalStepFunctions;
  client: SFNClient;
  calls: Array<{ functionArn: string; input: unknown }>;
  handlers: Map<string, (input: unknown) => unknown>;
  [Symbol.asyncDispose](): Promise<void>;
}

async function harness(machines?: LocalStateMachineSpec[]): Promise<Harness> {
  const calls: Harness['calls'] = [];
  const handlers = new Map<string, (input: unknown) => unknown>();
  const invoke: TaskInvoker = async (functionArn, input) => {
    calls.push({ functionArn, input });
    const handler = handlers.get(functionArn.slice(functionArn.lastIndexOf(':') + 1));
    if (!handler) throw new NamedError('Lambda.ResourceNotFoundException', `no function ${functionArn}`);
    return handler(input);
  };
  const sfn = await startLocalStepFunctions({
    stateMachines: machines ?? [
      { arn: machineArn('Pipeline'), name: 'Pipeline', definition: PIPELINE },
      { arn: machineArn('Blocking'), name: 'Blocking', definition: BLOCKING },
    ],
    invoke,
    credentials,
    waitScale: 0.001,
  });
  const client = new SFNClient({
    region: 'us-east-1',
    endpoint: sfn.endpoint,
    credentials,
  });
  return {
    sfn,
    client,
    calls,
    handlers,
    async [Symbol.asyncDispose]() {
      client.destroy();
      await sfn.close();
    },
  };
}

async function runToEnd(h: Harness, stateMachine: string, input: unknown, name?: string): Promise<DescribeExecutionCommandOutput> {
  const { executionArn } = await h.client.send(
    new StartExecutionCommand({ stateMachineArn: machineArn(stateMachine), input: JSON.stringify(input), ...(name ? { name } : {}) }),
  );
  await h.sfn.idle();
  return h.client.send(new DescribeExecutionCommand({ executionArn }));
}

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

test('Parallel path: Retry on a custom error, lambda:invoke Payload wrapping, scaled Waits, output passing', async () => {
  await using h = await harness();
  let prepareAttempts = 0;
  h.handlers.set('prepare', () => {
    prepareAttempts++;
    if (prepareAttempts < 3) throw new NamedError('Flaky', `attempt ${prepareAttempts}`);
    return { ok: true };
  });
  h.handlers.set('left', (input) => ({ echoed: input }));
  h.handlers.set('right', (input) => (input as number) * 10);

  const out = await runToEnd(h, 'Pipeline', { mode: 'parallel', n: 4, delay: 3 });
  assert.equal(out.status, 'SUCCEEDED', `${out.error}: ${out.cause}`);
  assert.equal(prepareAttempts, 3);
  assert.ok(out.startDate instanceof Date && out.stopDate instanceof Date);
  assert.deepEqual(JSON.parse(out.input ?? ''), { mode: 'parallel', n: 4, delay: 3 });
  assert.deepEqual(JSON.parse(out.output ?? ''), {
    mode: 'parallel',
    n: 4,
    delay: 3,
    prepared: { ok: true },
    results: [{ value: { echoed: { mode: 'parallel', n: 4, delay: 3, prepared: { ok: true } } } }, 40],
  });
  const left = h.calls.find((c) => c.functionArn.endsWith(':left'));
  assert.equal(left?.functionArn, fn('left'), 'a bare FunctionName resolves to the machine region/account');
});

test('Map path with ResultPath "$" in the iterator and a falsy Pass Result', async () => {
  await using h = await harness();
  h.handlers.set('prepare', () => 'p');
  h.handlers.set('square', (input) => (input as number) ** 2);

  const mapped = await runToEnd(h, 'Pipeline', { mode: 'map', items: [1, 2, 3] });
  assert.equal(mapped.status, 'SUCCEEDED');
  assert.deepEqual(JSON.parse(mapped.output ?? '').squares, [1, 4, 9]);

  const passed = await runToEnd(h, 'Pipeline', { mode: 'other' });
  assert.equal(passed.status, 'SUCCEEDED');
  assert.deepEqual(JSON.parse(passed.output ?? ''), { mode: 'other', prepared: 'p', zero: 0 });
});

test('Catch routes task errors (by name and States.ALL) to the failure handler', async () => {
  await using h = await harness();
  const failures: unknown[] = [];
  h.handlers.set('prepare', () => null);
  h.handlers.set('left', () => 'l');
  h.handlers.set('right', () => {
    throw new NamedError('BranchError', 'right side broke');
  });
  h.handlers.set('square', (input) => {
    if (input === 2) throw new TypeError('cannot square 2');
    return input;
  });
  h.handlers.set('onFailure', (input) => {
    failures.push(input);
    return input;
  });

  const fan = await runToEnd(h, 'Pipeline', { mode: 'parallel', n: 1, delay: 0 });
  assert.equal(fan.status, 'FAILED');
  assert.equal(fan.error, 'PipelineFailed');
  assert.equal(fan.cause, 'handled');
  assert.deepEqual((failures[0] as { error: unknown }).error, { Error: 'BranchError', Cause: 'right side broke' });

  const each = await runToEnd(h, 'Pipeline', { mode: 'map', items: [1, 2, 3] });
  assert.equal(each.status, 'FAILED');
  assert.deepEqual((failures[1] as { error: unknown }).error, { Error: 'TypeError', Cause: 'cannot square 2' });
});

test('uncaught task errors fail the execution with the error name and message; Retry gives up after MaxAttempts', async () => {
  await using h = await harness();
  h.handlers.set('prepare', () => {
    throw new NamedError('Boom', 'it exploded');
  });
  const boom = await runToEnd(h, 'Pipeline', { mode: 'map', items: [] });
  assert.equal(boom.status, 'FAILED');
  assert.equal(boom.error, 'Boom');
  assert.equal(boom.cause, 'it exploded');
  assert.equal(boom.output, undefined);

  let attempts = 0;
  h.handlers.set('prepare', () => {
    attempts++;
    throw new NamedError('Flaky', 'still flaky');
  });
  const flaky = await runToEnd(h, 'Pipeline', { mode: 'map', items: [] });
  assert.equal(flaky.status, 'FAILED');
  assert.equal(flaky.error, 'Flaky');
  assert.equal(attempts, 4, 'one attempt plus MaxAttempts retries');
});

test('execution names: idempotent while open with the same input, ExecutionAlreadyExists otherwise; AWS validation errors', async () => {
  await using h = await harness();
  h.handlers.set('block', (input) => input);
  h.sfn.hold();
  const start = (name: string, input: string, sm = 'Blocking') => h.client.send(new StartExecutionCommand({ stateMachineArn: machineArn(sm), name, input }));

  const first = await start('order-1', '{"a":1}');
  const again = await start('order-1', '{"a":1}');
  assert.equal(again.executionArn, first.executionArn);
  assert.equal(first.executionArn, `arn:aws:states:us-east-1:${ACCOUNT}:execution:Blocking:order-1`);
  await assert.rejects(start('order-1', '{"a":2}'), ExecutionAlreadyExists);
  const other = await start('order-1', '{"a":1}', 'Pipeline');
  assert.notEqual(other.executionArn, first.executionArn, 'names are unique per state machine');

  await assert.rejects(start('has space', '{}'), InvalidName);
  await assert.rejects(start('a/b', '{}'), InvalidName);
  await assert.rejects(start('x'.repeat(81), '{}'), InvalidName);
  await assert.rejects(start('bad-input', '{nope'), InvalidExecutionInput);
  await assert.rejects(start('order-2', '{}', 'Missing'), StateMachineDoesNotExist);
  await assert.rejects(
    h.client.send(new DescribeExecutionCommand({ executionArn: `arn:aws:states:us-east-1:${ACCOUNT}:execution:Blocking:nope` })),
    ExecutionDoesNotExist,
  );

  await h.client.send(new StopExecutionCommand({ executionArn: other.executionArn }));
  h.sfn.release();
  await h.sfn.idle();
  // Once closed, the name cannot be reused, whatever the input (AWS semantics).
  await assert.rejects(start('order-1', '{"a":1}'), ExecutionAlreadyExists);
  const generated = await h.client.send(new StartExecutionCommand({ stateMachineArn: machineArn('Blocking') }));
  assert.match(generated.executionArn ?? '', /:execution:Blocking:[0-9a-f-]{36}$/);
  await h.sfn.idle();
});

test('StopExecution aborts a running execution; a late task result does not revive it', async () => {
  await using h = await harness();
  const entered = deferred<unknown>();
  const unblock = deferred<unknown>();
  h.handlers.set('block', (input) => {
    entered.resolve(input);
    return unblock.promise;
  });

  const { executionArn } = await h.client.send(new StartExecutionCommand({ stateMachineArn: machineArn('Blocking'), name: 'to-stop', input: '{"k":"v"}' }));
  assert.deepEqual(await entered.promise, { executionId: executionArn, input: { k: 'v' } }, 'context object reaches Parameters');
  const running = await h.client.send(new DescribeExecutionCommand({ executionArn }));
  assert.equal(running.status, 'RUNNING');
  assert.equal(running.stopDate, undefined);

  const stopped = await h.client.send(new StopExecutionCommand({ executionArn, error: 'Operator', cause: 'cancelled' }));
  assert.ok(stopped.stopDate instanceof Date);
  await h.sfn.idle();
  unblock.resolve({ late: true });
  await unblock.promise;
  const after = await h.client.send(new DescribeExecutionCommand({ executionArn }));
  assert.equal(after.status, 'ABORTED');
  assert.equal(after.error, 'Operator');
  assert.equal(after.cause, 'cancelled');
  assert.equal(after.output, undefined);
});

test('hold() keeps new executions RUNNING without steps until release(); idle() waits for them', async () => {
  await using h = await harness();
  h.handlers.set('block', (input) => input);
  await h.sfn.idle(); // nothing running: resolves at once

  h.sfn.hold();
  const a = await h.client.send(new StartExecutionCommand({ stateMachineArn: machineArn('Blocking'), input: '{"n":1}' }));
  const b = await h.client.send(new StartExecutionCommand({ stateMachineArn: machineArn('Blocking'), input: '{"n":2}' }));
  let idle = false;
  const idlePromise = h.sfn.idle().then(() => {
    idle = true;
  });
  const heldA = await h.client.send(new DescribeExecutionCommand({ executionArn: a.executionArn }));
  assert.equal(heldA.status, 'RUNNING');
  assert.equal(h.calls.length, 0, 'no step runs while held');
  assert.equal(idle, false);

  h.sfn.release();
  await idlePromise;
  assert.equal(h.calls.length, 2);
  for (const arn of [a.executionArn, b.executionArn]) {
    const done = await h.client.send(new DescribeExecutionCommand({ executionArn: arn }));
    assert.equal(done.status, 'SUCCEEDED');
  }
  const outB = await h.client.send(new DescribeExecutionCommand({ executionArn: b.executionArn }));
  assert.deepEqual(JSON.parse(outB.output ?? ''), { executionId: b.executionArn, input: { n: 2 } });
});

test('ListExecutions filters and pages; ListStateMachines and DescribeStateMachine describe the machines', async () => {
  await using h = await harness();
  h.handlers.set('block', (input) => input);
  for (let i = 0; i < 5; i++) await runToEnd(h, 'Blocking', { i }, `ok-${i}`);
  h.sfn.hold();
  await h.client.send(new StartExecutionCommand({ stateMachineArn: machineArn('Blocking'), name: 'held' }));

  const names: string[] = [];
  let nextToken: string | undefined;
  do {
    const page = await h.client.send(
      new ListExecutionsCommand({ stateMachineArn: machineArn('Blocking'), statusFilter: 'SUCCEEDED', maxResults: 2, nextToken }),
    );
    assert.ok((page.executions ?? []).length <= 2);
    for (const e of page.executions ?? []) {
      assert.equal(e.status, 'SUCCEEDED');
      assert.ok(e.startDate instanceof Date && e.stopDate instanceof Date);
      names.push(e.name ?? '');
    }
    nextToken = page.nextToken;
  } while (nextToken);
  assert.deepEqual(names, ['ok-4', 'ok-3', 'ok-2', 'ok-1', 'ok-0'], 'newest first');

  const runningOnly = await h.client.send(new ListExecutionsCommand({ stateMachineArn: machineArn('Blocking'), statusFilter: 'RUNNING' }));
  assert.deepEqual(
    runningOnly.executions?.map((e) => e.name),
    ['held'],
  );
  await assert.rejects(h.client.send(new ListExecutionsCommand({ stateMachineArn: machineArn('Missing') })), StateMachineDoesNotExist);

  const listed = await h.client.send(new ListStateMachinesCommand({}));
  assert.deepEqual(
    listed.stateMachines?.map((m) => [m.name, m.type]),
    [
      ['Pipeline', 'STANDARD'],
      ['Blocking', 'STANDARD'],
    ],
  );
  const described = await h.client.send(new DescribeStateMachineCommand({ stateMachineArn: machineArn('Pipeline') }));
  assert.equal(described.status, 'ACTIVE');
  assert.deepEqual(JSON.parse(described.definition ?? ''), PIPELINE);
  assert.ok(described.creationDate instanceof Date);
  h.sfn.release();
  await h.sfn.idle();
});

test('wire protocol: unknown operations and malformed bodies get AWS JSON errors', async () => {
  await using h = await harness();
  const post = (target: string, body: string) =>
    fetch(h.sfn.endpoint, {
      method: 'POST',
      body,
      headers: signedHeaders({
        credentials,
        service: 'states',
        method: 'POST',
        url: h.sfn.endpoint,
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': target },
        body,
      }),
    });
  const unknown = await post('AWSStepFunctions.DoSomethingElse', '{}');
  assert.equal(unknown.status, 400);
  assert.equal(unknown.headers.get('content-type'), 'application/x-amz-json-1.0');
  assert.equal(((await unknown.json()) as { __type: string }).__type, 'UnknownOperationException');
  const garbled = await post('AWSStepFunctions.ListStateMachines', '{not json');
  assert.equal(garbled.status, 400);
  assert.equal(((await garbled.json()) as { __type: string }).__type, 'SerializationException');
  const invalid = await post('AWSStepFunctions.DescribeExecution', '{}');
  assert.equal(((await invalid.json()) as { __type: string }).__type, 'ValidationException');
  const badArn = await post('AWSStepFunctions.DescribeExecution', '{"executionArn":"nope"}');
  assert.equal(((await badArn.json()) as { __type: string }).__type, 'InvalidArn');
});

test('an invalid definition is refused at every start; a valid one is validated once, then known by its content', async () => {
  const invoke: TaskInvoker = async () => null;
  const one = (definition: Record<string, unknown>) =>
    startLocalStepFunctions({ stateMachines: [{ arn: machineArn('X'), name: 'X', definition }], invoke, credentials });
  // A Next with no such state (and a Comment of its own): asl-validator's verdict, at each start.
  const broken = { Comment: randomUUID(), StartAt: 'A', States: { A: { Type: 'Pass', Next: 'Nowhere' } } };
  for (let start = 0; start < 2; start++) await assert.rejects(one(broken), /state machine X: State machine definition is invalid/);
  assert.equal(existsSync(validatedMarker(broken)), false, 'a refusal is not remembered');
  const valid = { Comment: randomUUID(), StartAt: 'A', States: { A: { Type: 'Pass', End: true } } };
  await (await one(valid)).close();
  assert.equal(existsSync(validatedMarker(valid)), true, 'a definition passed is remembered');
  rmSync(validatedMarker(valid));
  // What is remembered is not validated again: a marker is all the next start reads (here, one
  // planted for the broken definition lets it through).
  writeFileSync(validatedMarker(broken), '');
  try {
    await (await one(broken)).close();
  } finally {
    rmSync(validatedMarker(broken));
  }
});

test('definitions that cannot run locally are rejected at startup', async () => {
  const invoke: TaskInvoker = async () => null;
  const one = (definition: Record<string, unknown>) =>
    startLocalStepFunctions({ stateMachines: [{ arn: machineArn('X'), name: 'X', definition }], invoke, credentials });
  await assert.rejects(
    one({
      StartAt: 'T',
      States: { T: { Type: 'Task', Resource: 'arn:aws:states:::sqs:sendMessage', Parameters: { QueueUrl: 'q', MessageBody: 'b' }, End: true } },
    }),
    /only Lambda function ARNs/,
  );
  await assert.rejects(
    one({
      StartAt: 'T',
      States: { T: { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken', Parameters: { FunctionName: 'f' }, End: true } },
    }),
    /only Lambda function ARNs/,
  );
  await assert.rejects(one({ StartAt: 'T', States: { T: { Type: 'Pass', Next: 'Missing' } } }), /invalid/i);
  const ok = await one({ StartAt: 'T', States: { T: { Type: 'Pass', End: true } } });
  await ok.close();
});

test('close() aborts running executions', async () => {
  const h = await harness();
  const entered = deferred();
  h.handlers.set('block', () => {
    entered.resolve();
    return new Promise(() => {});
  });
  const { executionArn } = await h.client.send(new StartExecutionCommand({ stateMachineArn: machineArn('Blocking') }));
  await entered.promise;
  h.sfn.hold();
  await h.client.send(new StartExecutionCommand({ stateMachineArn: machineArn('Blocking') }));
  h.client.destroy();
  await h.sfn.close();
  await h.sfn.idle();
  assert.ok(executionArn);
});

test('States.TaskFailed matches any task error in Retry and Catch', async () => {
  const definition = {
    StartAt: 'Try',
    States: {
      Try: {
        Type: 'Task',
        Resource: fn('shaky'),
        Retry: [{ ErrorEquals: ['States.TaskFailed'], IntervalSeconds: 2, MaxAttempts: 1 }],
        Catch: [{ ErrorEquals: ['States.TaskFailed'], ResultPath: '$.caught', Next: 'Recovered' }],
        End: true,
      },
      Recovered: { Type: 'Pass', End: true },
    },
  };
  await using h = await harness([{ arn: machineArn('Shaky'), name: 'Shaky', definition }]);
  let attempts = 0;
  h.handlers.set('shaky', () => {
    attempts++;
    throw new NamedError('AnythingAtAll', `attempt ${attempts}`);
  });
  const out = await runToEnd(h, 'Shaky', { id: 7 });
  assert.equal(out.status, 'SUCCEEDED');
  assert.equal(attempts, 2);
  assert.deepEqual(JSON.parse(out.output ?? ''), { id: 7, caught: { Error: 'AnythingAtAll', Cause: 'attempt 2' } });
});

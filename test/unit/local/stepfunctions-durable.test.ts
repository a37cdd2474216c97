// Durable executions of the local Step Functions stand-in: with a data folder an execution is a file
// rewritten at every top-level Task and Wait, and a new stand-in on the same folder runs every
// execution that was RUNNING on from where it stood, through the real @aws-sdk/client-sfn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeExecutionCommand, ExecutionAlreadyExists, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { startLocalStepFunctions, type ExecutionStatusChange, type LocalStepFunctions } from '#local/stepfunctions.ts';

/** The stand-in serves only requests signed with these. */
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

const ACCOUNT = '000000000000';
const fn = (name: string) => `arn:aws:lambda:us-east-1:${ACCOUNT}:function:${name}`;
const MACHINE = `arn:aws:states:us-east-1:${ACCOUNT}:stateMachine:Flow`;
const execution = (name: string) => `arn:aws:states:us-east-1:${ACCOUNT}:execution:Flow:${name}`;

class NamedError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

const FLOW = {
  StartAt: 'First',
  States: {
    First: { Type: 'Task', Resource: fn('first'), Parameters: { 'n.$': '$.n' }, ResultPath: '$.first', Next: 'Pause' },
    // Long enough that a restarted wait would never end within a test.
    Pause: { Type: 'Wait', Seconds: 100000, Next: 'Flaky' },
    Flaky: {
      Type: 'Task',
      Resource: fn('flaky'),
      ResultPath: '$.flaky',
      Retry: [{ ErrorEquals: ['Flaky'], IntervalSeconds: 0, MaxAttempts: 2 }],
      Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.caught', Next: 'Caught' }],
      Next: 'Last',
    },
    Caught: { Type: 'Pass', End: true },
    Last: { Type: 'Task', Resource: fn('last'), ResultPath: '$.last', End: true },
  },
};

interface Stand {
  sfn: LocalStepFunctions;
  client: SFNClient;
  calls: Record<string, number>;
  ended: ExecutionStatusChange[];
  close(): Promise<void>;
}

async function stand(dataDir: string, handlers: Record<string, (input: unknown) => unknown>): Promise<Stand> {
  const calls: Record<string, number> = {};
  const ended: ExecutionStatusChange[] = [];
  const sfn = await startLocalStepFunctions({
    stateMachines: [{ arn: MACHINE, name: 'Flow', definition: FLOW }],
    dataDir,
    credentials,
    waitScale: 1,
    onExecutionEnd: (detail) => ended.push(detail),
    invoke: async (functionArn, input) => {
      const name = functionArn.slice(functionArn.lastIndexOf(':') + 1);
      calls[name] = (calls[name] ?? 0) + 1;
      const handler = handlers[name];
      if (!handler) throw new NamedError('Lambda.ResourceNotFoundException', name);
      return handler(input);
    },
  });
  const client = new SFNClient({ region: 'us-east-1', endpoint: sfn.endpoint, credentials });
  return {
    sfn,
    client,
    calls,
    ended,
    close: async () => {
      client.destroy();
      await sfn.close();
    },
  };
}

/** Writes an execution file as the stand-in keeps it, RUNNING at `checkpoint`. */
function interrupted(dataDir: string, name: string, input: unknown, checkpoint?: Record<string, unknown>): void {
  const dir = join(dataDir, 'executions');
  const file = join(dir, `Flow.${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      arn: execution(name),
      name,
      stateMachineArn: MACHINE,
      input: JSON.stringify(input),
      status: 'RUNNING',
      startDate: Date.now() / 1000,
      ...(checkpoint ? { checkpoint } : {}),
    }),
  );
}

async function described(s: Stand, name: string) {
  await s.sfn.idle();
  return s.client.send(new DescribeExecutionCommand({ executionArn: execution(name) }));
}

test('an execution interrupted in a Task resumes there after a restart; Tasks that finished are not run again', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sfn-durable-'));
  let entered!: () => void;
  const inFlaky = new Promise<void>((resolve) => {
    entered = resolve;
  });
  const first = await stand(dataDir, {
    first: (input) => ({ doubled: (input as { n: number }).n * 2 }),
    flaky: () => {
      entered();
      return new Promise(() => {});
    },
  });
  await first.client.send(new StartExecutionCommand({ stateMachineArn: MACHINE, name: 'run-1', input: JSON.stringify({ n: 21 }) }));
  const file = join(dataDir, 'executions', 'Flow.run-1.json');
  // Stop it at Pause (the file says so), then move the Wait's recorded deadline into the past: the
  // resumed Wait ends at the recorded deadline, not one counted anew (100000 s).
  while (!readFileSync(file, 'utf8').includes('"state":"Pause"')) await new Promise((resolve) => setImmediate(resolve));
  await first.close();
  const atPause = JSON.parse(readFileSync(file, 'utf8')) as { status: string; checkpoint: { state: string; input: unknown; waitUntil: number } };
  assert.equal(atPause.status, 'RUNNING');
  assert.equal(atPause.checkpoint.state, 'Pause');
  assert.deepEqual(atPause.checkpoint.input, { n: 21, first: { doubled: 42 } });
  assert.ok(atPause.checkpoint.waitUntil > Date.now() + 1000, "the deadline is the Wait state's");
  writeFileSync(file, JSON.stringify({ ...atPause, checkpoint: { ...atPause.checkpoint, waitUntil: Date.now() - 1 } }));

  const second = await stand(dataDir, {
    flaky: () => {
      entered();
      return new Promise(() => {});
    },
  });
  await inFlaky;
  await second.close();
  const atFlaky = JSON.parse(readFileSync(file, 'utf8')) as { status: string; checkpoint: { state: string; attempts: number[] } };
  assert.equal(atFlaky.status, 'RUNNING');
  assert.deepEqual(atFlaky.checkpoint, { ...atFlaky.checkpoint, state: 'Flaky', attempts: [0] });

  const third = await stand(dataDir, { flaky: () => ({ ok: true }), last: () => 'done' });
  try {
    const out = await described(third, 'run-1');
    assert.equal(out.status, 'SUCCEEDED');
    assert.deepEqual(JSON.parse(out.output ?? ''), { n: 21, first: { doubled: 42 }, flaky: { ok: true }, last: 'done' });
    assert.deepEqual(third.calls, { flaky: 1, last: 1 }, 'First ran once, in the first stand-in only');
    assert.equal(third.ended.length, 1);
    assert.equal(third.ended[0]?.status, 'SUCCEEDED');
  } finally {
    await third.close();
  }
});

test('a Task whose result was recorded is not run again: the result is passed on', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sfn-durable-'));
  await (await stand(dataDir, {})).close();
  interrupted(dataDir, 'run-2', { n: 1 }, { state: 'Last', input: { n: 1, flaky: 'f' }, attempts: [], result: 'recorded' });
  const s = await stand(dataDir, {});
  try {
    const out = await described(s, 'run-2');
    assert.equal(out.status, 'SUCCEEDED');
    assert.deepEqual(JSON.parse(out.output ?? ''), { n: 1, flaky: 'f', last: 'recorded' });
    assert.deepEqual(s.calls, {});
  } finally {
    await s.close();
  }
});

test('retries used before the restart count: only the attempts left are made, then Catch', async () => {
  for (const [used, expected] of [
    [0, 2],
    [1, 1],
    [2, 0],
  ] as const) {
    const dataDir = mkdtempSync(join(tmpdir(), 'sfn-durable-'));
    await (await stand(dataDir, {})).close();
    // Failed `used + 1` times already (the failure recorded last was not yet retried).
    interrupted(dataDir, 'run-3', { n: 3 }, { state: 'Flaky', input: { n: 3 }, attempts: [used], failure: { name: 'Flaky', message: 'recorded failure' } });
    const s = await stand(dataDir, {
      flaky: () => {
        throw new NamedError('Flaky', 'again');
      },
    });
    try {
      const out = await described(s, 'run-3');
      assert.equal(out.status, 'SUCCEEDED');
      assert.equal(s.calls.flaky ?? 0, expected, `after ${used} retries`);
      const caught = (JSON.parse(out.output ?? '') as { caught: { Error: string; Cause: string } }).caught;
      assert.deepEqual(caught, { Error: 'Flaky', Cause: expected ? 'again' : 'recorded failure' });
    } finally {
      await s.close();
    }
  }
});

test('an execution that cannot be resumed ends FAILED, as AWS ends it, and tells EventBridge', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sfn-durable-'));
  await (await stand(dataDir, {})).close();
  interrupted(dataDir, 'run-4', { opOccId: 'x' }, { state: 'RemovedState', input: {}, attempts: [] });
  writeFileSync(join(dataDir, 'executions', 'Flow.garbage.json'), '{"arn": 12');
  const s = await stand(dataDir, {});
  try {
    const out = await described(s, 'run-4');
    assert.equal(out.status, 'FAILED');
    assert.equal(out.error, 'States.Runtime');
    assert.match(out.cause ?? '', /RemovedState/);
    assert.deepEqual(
      s.ended.map((e) => [e.name, e.status, e.input]),
      [['run-4', 'FAILED', '{"opOccId":"x"}']],
    );
    assert.ok(readdirSync(join(dataDir, 'executions')).includes('Flow.garbage.json.damaged'), 'a damaged file is moved aside, not deleted');
  } finally {
    await s.close();
  }
});

test('finished executions are described after a restart, and their names stay taken', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sfn-durable-'));
  const first = await stand(dataDir, {});
  interrupted(dataDir, 'run-5', { n: 5 }, { state: 'Last', input: { n: 5 }, attempts: [], result: 5 });
  await first.close();
  const second = await stand(dataDir, {});
  assert.equal((await described(second, 'run-5')).status, 'SUCCEEDED');
  await second.close();
  const third = await stand(dataDir, {});
  try {
    const out = await third.client.send(new DescribeExecutionCommand({ executionArn: execution('run-5') }));
    assert.equal(out.status, 'SUCCEEDED');
    assert.deepEqual(JSON.parse(out.output ?? ''), { n: 5, last: 5 });
    await assert.rejects(third.client.send(new StartExecutionCommand({ stateMachineArn: MACHINE, name: 'run-5', input: '{}' })), ExecutionAlreadyExists);
  } finally {
    await third.close();
  }
});

// The local runtime's meter (`npm run cost`): what it counts is what AWS bills for.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { DescribeExecutionCommand, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { startLocalStepFunctions } from '#local/stepfunctions.ts';
import { usage } from '#local/metering.ts';
import { waitFor } from '../../support/wait.ts';

const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
const ACCOUNT = '000000000000';

afterEach(() => {
  usage.enabled = false;
  usage.reset();
  usage.indexes.clear();
});

test('counts nothing unless metering is on', () => {
  usage.reset();
  usage.lambda('Fn', 12, 512);
  usage.call('sqs', 'SendMessage');
  usage.dynamoCapacity('GetItem', { TableName: 'T', CapacityUnits: 1 });
  const snapshot = usage.snapshot();
  assert.deepEqual(snapshot.lambda, {});
  assert.deepEqual(snapshot.calls, {});
  assert.equal(snapshot.dynamodb.readUnits, 0);
});

test('bills Lambda duration rounded up to the millisecond, and adds its platform log lines', () => {
  usage.enabled = true;
  usage.lambda('Fn', 10.2, 512);
  usage.lambda('Fn', 0.1, 512);
  const { lambda, logBytes } = usage.snapshot();
  assert.deepEqual(lambda.Fn, { invocations: 2, billedMs: 12, memoryMb: 512 });
  assert.ok(logBytes > 0);
});

test('adds a write to each global secondary index of the table: the item size for a projection of all attributes, one unit for keys only', () => {
  usage.enabled = true;
  usage.indexes.set('Instances', [{ projection: 'ALL' }, { projection: 'KEYS_ONLY' }]);
  usage.dynamoCapacity('PutItem', { TableName: 'Instances', CapacityUnits: 3 });
  usage.dynamoCapacity('UpdateItem', { TableName: 'Other', CapacityUnits: 2 });
  usage.dynamoCapacity('Query', { TableName: 'Instances', CapacityUnits: 0.5 });
  usage.dynamoCapacity('BatchWriteItem', [
    { TableName: 'Instances', CapacityUnits: 1 },
    { TableName: 'Other', CapacityUnits: 1 },
  ]);
  assert.deepEqual(usage.snapshot().dynamodb, { readUnits: 0.5, writeUnits: 7, indexWriteUnits: 3 + 1 + 1 + 1 });
});

test('counts a Standard workflow state transitions (each state entered, and each retry) and the API calls made to the stand-in', async () => {
  usage.enabled = true;
  let calls = 0;
  const sfn = await startLocalStepFunctions({
    stateMachines: [
      {
        arn: `arn:aws:states:us-east-1:${ACCOUNT}:stateMachine:Metered`,
        name: 'Metered',
        definition: {
          StartAt: 'Work',
          States: {
            Work: {
              Type: 'Task',
              Resource: `arn:aws:lambda:us-east-1:${ACCOUNT}:function:work`,
              Retry: [{ ErrorEquals: ['Flaky'], IntervalSeconds: 1, MaxAttempts: 2 }],
              Next: 'Done',
            },
            Done: { Type: 'Pass', End: true },
          },
        },
      },
    ],
    invoke: async () => {
      calls += 1;
      if (calls === 1) throw Object.assign(new Error('once'), { name: 'Flaky' });
      return {};
    },
    credentials,
    waitScale: 0.001,
  });
  try {
    const client = new SFNClient({ region: 'us-east-1', endpoint: sfn.endpoint, credentials });
    const { executionArn } = await client.send(
      new StartExecutionCommand({ stateMachineArn: `arn:aws:states:us-east-1:${ACCOUNT}:stateMachine:Metered`, input: '{}' }),
    );
    await waitFor('the execution ends', async () => (await client.send(new DescribeExecutionCommand({ executionArn }))).status === 'SUCCEEDED');
    await waitFor('its events are counted', () => usage.snapshot().transitions.Metered === 3);
    const snapshot = usage.snapshot();
    assert.equal(snapshot.transitions.Metered, 3, 'Work, its retry, Done');
    assert.equal(snapshot.executions.Metered, 1);
    assert.equal(snapshot.calls['states:StartExecution'], 1);
    assert.ok((snapshot.calls['states:DescribeExecution'] ?? 0) >= 1);
  } finally {
    await sfn.close();
  }
});

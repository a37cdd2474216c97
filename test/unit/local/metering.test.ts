// The local runtime's meter (`npm run cost`): what it counts is what AWS bills for.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { DescribeExecutionCommand, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { startLocalStepFunctions } from '#local/stepfunctions.ts';
import { indexWriteUnitsOf, usage, type IndexShape } from '#local/metering.ts';
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

const shape = (name: string, projection: IndexShape['projection'], keys: string[], include: string[] = []): IndexShape => ({
  name,
  keys,
  tableKeys: ['id'],
  projection,
  include,
});

test('a batch write, whose items it does not see, is taken to write every index of the table: the item size for all attributes, one unit for keys only', () => {
  usage.enabled = true;
  usage.indexes.set('Instances', [shape('a', 'ALL', ['tenantId']), shape('k', 'KEYS_ONLY', ['tenantId'])]);
  usage.dynamoCapacity('UpdateItem', { TableName: 'Other', CapacityUnits: 2 });
  usage.dynamoCapacity('Query', { TableName: 'Instances', CapacityUnits: 0.5 });
  usage.dynamoCapacity('BatchWriteItem', [
    { TableName: 'Instances', CapacityUnits: 3 },
    { TableName: 'Other', CapacityUnits: 1 },
  ]);
  assert.deepEqual(usage.snapshot().dynamodb, { readUnits: 0.5, writeUnits: 6, indexWriteUnits: 3 + 1 });
});

test('adds the index write units a single write reports per index', () => {
  usage.enabled = true;
  usage.dynamoCapacity('PutItem', { TableName: 'Instances', CapacityUnits: 3, GlobalSecondaryIndexes: { a: { CapacityUnits: 3 }, k: { CapacityUnits: 0 } } });
  assert.deepEqual(usage.snapshot().dynamodb, { readUnits: 0, writeUnits: 3, indexWriteUnits: 3 });
});

test('counts an index write as DynamoDB does: none for an item outside a sparse index or whose projection did not change, two when its index key moved', () => {
  const s = (value: string) => ({ S: value });
  const big = s('x'.repeat(3000));
  const sparse = shape('monitored', 'ALL', ['monitored']);
  const lease = { id: s('lease#sweep'), holder: s('h') };
  assert.equal(indexWriteUnitsOf(sparse, undefined, lease), 0, 'an item without the index key is not in the index');
  assert.equal(indexWriteUnitsOf(sparse, lease, undefined), 0);
  const instance = { id: s('i'), monitored: s('Y'), body: big };
  assert.equal(indexWriteUnitsOf(sparse, undefined, instance), 3, 'entering: the projected size');
  assert.equal(indexWriteUnitsOf(sparse, instance, { id: s('i'), body: big }), 3, 'leaving: a delete of its size');
  assert.equal(indexWriteUnitsOf(sparse, instance, { ...instance, body: s('y') }), 3, 'changing in place: the larger size');
  const keysOnly = shape('byTenant', 'KEYS_ONLY', ['tenantId']);
  const a = { id: s('i'), tenantId: s('t1'), body: big };
  assert.equal(indexWriteUnitsOf(keysOnly, a, { ...a, body: s('y') }), 0, 'a keys-only projection did not change');
  assert.equal(indexWriteUnitsOf(keysOnly, a, { ...a, tenantId: s('t2') }), 2, 'its key moved: a delete and a put');
  const include = shape('byState', 'INCLUDE', ['tenantId'], ['state']);
  assert.equal(indexWriteUnitsOf(include, a, { ...a, state: s('X') }), 1, 'an included attribute changed');
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

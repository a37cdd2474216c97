// Metrics: the EMF documents an invocation publishes when it ends (namespace Vnfm, the function as
// service, the operation as dimension), what an op occ's moves count, and nothing at all from an
// invocation that counted nothing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Context } from 'aws-lambda';
import { countNotification, instrumented, timedVimCall } from '#lib/metrics.ts';
import { createOpOcc, moveOpOcc } from '#lib/lcm/op-occs.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { LcmOperationType, VnfLcmOpOccRecord } from '#lib/sol/model.ts';

type Document = Record<string, unknown> & {
  _aws: { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }> };
};

/** What `run` writes: the EMF documents on stdout and any line on stderr; the test runner's own output passes through. */
async function emitted(run: () => unknown): Promise<{ documents: Document[]; stderr: string[] }> {
  const documents: Document[] = [];
  const stderr: string[] = [];
  const { stdout: out, stderr: err } = process;
  const [outWrite, errWrite] = [out.write, err.write];
  out.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk === 'string' && chunk.startsWith('{"_aws"')) return Boolean(documents.push(JSON.parse(chunk) as Document));
    return (outWrite as (...args: unknown[]) => boolean).call(out, chunk, ...rest);
  }) as typeof out.write;
  err.write = ((chunk: unknown) => Boolean(stderr.push(String(chunk)))) as typeof err.write;
  try {
    await run();
  } finally {
    out.write = outWrite;
    err.write = errWrite;
  }
  return { documents, stderr };
}

const context = { functionName: 'vnfm-dev-OpOccTransitionFunction-9Z8Y7X6W5V4U', awsRequestId: 'req-1' } as unknown as Context;

const opOcc = (operation: LcmOperationType, operationState: VnfLcmOpOccRecord['operationState']) =>
  ({ id: `op-${operation}`, vnfInstanceId: 'inst-1', operation, operationState }) as VnfLcmOpOccRecord;

/** Deps whose op occ store moves every op occ it is asked to, as `moved` says. */
const depsMoving = (moved: (to: VnfLcmOpOccRecord['operationState']) => VnfLcmOpOccRecord | undefined) =>
  ({
    opOccs: { transition: async (_id: string, transition: { to: VnfLcmOpOccRecord['operationState'] }) => moved(transition.to), create: async () => undefined },
  }) as unknown as CoreDeps;

const move = (deps: CoreDeps, from: VnfLcmOpOccRecord['operationState'], to: VnfLcmOpOccRecord['operationState']) =>
  moveOpOcc(deps, 'op-1', { from: [from], to, now: '2026-01-01T00:00:00Z' });

describe('metrics', () => {
  it('a completed operation: one EMF document in namespace Vnfm, OperationsCompleted 1 by service and operation', async () => {
    const deps = depsMoving((to) => opOcc('INSTANTIATE', to));
    const handler = instrumented(async () => {
      await move(deps, 'PROCESSING', 'COMPLETED');
    });
    const { documents, stderr } = await emitted(() => handler({}, context));
    assert.deepEqual(stderr, []);
    assert.equal(documents.length, 1);
    const [document] = documents as [Document];
    assert.deepEqual(document._aws.CloudWatchMetrics, [
      { Namespace: 'Vnfm', Dimensions: [['service', 'operation']], Metrics: [{ Name: 'OperationsCompleted', Unit: 'Count' }] },
    ]);
    assert.equal(document.service, 'OpOccTransitionFunction');
    assert.equal(document.operation, 'INSTANTIATE');
    assert.equal(document.OperationsCompleted, 1);
  });

  it('counts starts, failures and roll-backs by operation, in one document per operation, when the invocation ends', async () => {
    const heal = depsMoving((to) => opOcc('HEAL', to));
    const scale = depsMoving((to) => opOcc('SCALE', to));
    const handler = instrumented(async () => {
      await createOpOcc(scale, opOcc('SCALE', 'STARTING'));
      await move(scale, 'PROCESSING', 'FAILED_TEMP');
      await move(scale, 'ROLLING_BACK', 'ROLLED_BACK');
      await move(heal, 'PROCESSING', 'FAILED_TEMP');
      await move(heal, 'FAILED_TEMP', 'FAILED_TEMP');
      await move(heal, 'FAILED_TEMP', 'PROCESSING');
    });
    const { documents } = await emitted(() => handler({}, context));
    const byOperation = Object.fromEntries(
      documents.map((document) => [
        document.operation,
        Object.fromEntries(document._aws.CloudWatchMetrics[0]?.Metrics.map((metric) => [metric.Name, document[metric.Name]]) ?? []),
      ]),
    );
    assert.deepEqual(byOperation, {
      SCALE: { OperationsStarted: 1, OperationsFailed: 1, OperationsRolledBack: 1 },
      // A write that keeps the state and a retry back to PROCESSING count nothing.
      HEAL: { OperationsFailed: 1 },
    });
  });

  it('counts nothing when the op occ was not in a state it may move from', async () => {
    const handler = instrumented(async () => {
      await move(
        depsMoving(() => undefined),
        'PROCESSING',
        'COMPLETED',
      );
    });
    assert.deepEqual(await emitted(() => handler({}, context)), { documents: [], stderr: [] });
  });

  it('publishes nothing, warns nothing and throws nothing for an invocation that counted nothing', async () => {
    const handler = instrumented(async () => 'done');
    let result: unknown;
    assert.deepEqual(
      await emitted(async () => {
        result = await handler({}, context);
      }),
      { documents: [], stderr: [] },
    );
    assert.equal(result, 'done');
  });

  it("publishes what a failing invocation counted before it failed, and the handler's error is the one thrown", async () => {
    const handler = instrumented(async () => {
      countNotification('Retried');
      throw new Error('the queue is gone');
    });
    const { documents } = await emitted(() => assert.rejects(handler({}, context), /the queue is gone/));
    assert.deepEqual(
      documents.map((document) => [document._aws.CloudWatchMetrics[0]?.Metrics[0]?.Name, document.NotificationsRetried, document.service]),
      [['NotificationsRetried', 1, 'OpOccTransitionFunction']],
    );
  });

  it('keeps the notification outcomes of one invocation in one document (repeated values as an EMF value array)', async () => {
    const handler = instrumented(async () => {
      countNotification('Delivered');
      countNotification('Delivered');
      countNotification('DeadLettered');
    });
    const { documents } = await emitted(() => handler({}, context));
    assert.equal(documents.length, 1);
    const [document] = documents as [Document];
    assert.deepEqual(document._aws.CloudWatchMetrics[0]?.Dimensions, [['service']]);
    assert.deepEqual(document.NotificationsDelivered, [1, 1]);
    assert.equal(document.NotificationsDeadLettered, 1);
  });

  it('times VIM API calls within an invocation (VimApiLatency by VIM type and API, failures too) and not outside one', async () => {
    const handler = instrumented(async () => {
      await timedVimCall('openstack', 'heat', async () => 'answered');
      await assert.rejects(
        timedVimCall('openstack', 'heat', async () => {
          throw new Error('refused');
        }),
        /refused/,
      );
      await timedVimCall('kubernetes', 'GET', async () => 'answered');
    });
    const { documents } = await emitted(() => handler({}, context));
    const latencies = documents.map((document) => [document.vimType, document.api, ([] as unknown[]).concat(document.VimApiLatency).length]);
    assert.deepEqual(latencies.sort(), [
      ['kubernetes', 'GET', 1],
      ['openstack', 'heat', 2],
    ]);
    assert.equal(documents[0]?._aws.CloudWatchMetrics[0]?.Metrics[0]?.Unit, 'Milliseconds');
    const outside = await emitted(() => timedVimCall('openstack', 'nova', async () => 'answered'));
    assert.deepEqual(outside.documents, []);
  });

  it('publishes a metric counted outside an invocation at once', async () => {
    const { documents } = await emitted(() => countNotification('Delivered'));
    assert.deepEqual(
      documents.map((document) => [document.service, document.NotificationsDelivered]),
      [['vnfm', 1]],
    );
  });
});

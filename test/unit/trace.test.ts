// X-Ray tracing (lib/trace.ts through lib/tracing.ts): with the Tracer on, an instrumented handler runs in a
// subsegment `## <function>` of the invocation's segment, annotated with the service and the correlation
// keys as they become known, closed when it ends (an error recorded on it), and the AWS SDK clients carry
// X-Ray's middleware; with it off (outside Lambda, POWERTOOLS_TRACE_ENABLED=false) nothing is opened,
// nothing captured and nothing printed.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Tracer } from '@aws-lambda-powertools/tracer';
import type { Context } from 'aws-lambda';
import { log } from '#lib/log.ts';
import { instrumented } from '#lib/metrics.ts';
import { tracer as productTracer, tracingWanted, tracingWith } from '#lib/trace.ts';
import { tracedClient, useTracing } from '#lib/tracing.ts';

type Segment = NonNullable<ReturnType<Tracer['getSegment']>>;
type Recorded = Segment & { name: string; annotations?: Record<string, unknown>; end_time?: number; fault?: boolean; cause?: unknown };

/** A tracer as Lambda has it (AWS_EXECUTION_ENV is what tells the Tracer it runs in Lambda). */
function lambdaTracer(): Tracer {
  const before = process.env.AWS_EXECUTION_ENV;
  process.env.AWS_EXECUTION_ENV = 'AWS_Lambda_nodejs22.x';
  try {
    return new Tracer({ captureHTTPsRequests: false });
  } finally {
    if (before === undefined) delete process.env.AWS_EXECUTION_ENV;
    else process.env.AWS_EXECUTION_ENV = before;
  }
}

/** A stand-in for the segment Lambda opens for an invocation (a detached segment that sends nothing). */
function invocationSegment(): Recorded {
  return new Tracer({ enabled: false }).getSegment() as Recorded;
}

/** Runs `run` with `parent` as the current segment, as Lambda's invocation context has it. */
function inSegment<T>(tracer: Tracer, parent: Segment, run: () => Promise<T>): Promise<T> {
  const namespace = (tracer.provider as unknown as { getNamespace(): { runPromise<R>(fn: () => Promise<R>): Promise<R> } }).getNamespace();
  return namespace.runPromise(async () => {
    tracer.setSegment(parent);
    return run();
  });
}

/** What `run` prints on the console (where the Tracer and the X-Ray SDK complain); log lines of the product are not counted. */
async function consoleOutput(run: () => Promise<unknown>): Promise<string[]> {
  const printed: string[] = [];
  const saved = { warn: console.warn, error: console.error };
  console.warn = (...args: unknown[]) => printed.push(args.join(' '));
  console.error = (...args: unknown[]) => printed.push(args.join(' '));
  try {
    await run();
  } finally {
    Object.assign(console, saved);
  }
  return printed;
}

const context = { functionName: 'vnfm-dev-OpOccTransitionFunction-AbC123', awsRequestId: 'req-1' } as Context;
const xrayMiddleware = (client: DynamoDBClient) => client.middlewareStack.identify().filter((name) => name.startsWith('XRaySDKInstrumentation'));

after(() => useTracing(undefined));

describe('with the Tracer on (in Lambda)', () => {
  const tracer = lambdaTracer();

  it('runs the handler in a subsegment annotated with the service and the op occ and VNF instance ids, and closes it', async () => {
    useTracing(tracingWith(tracer));
    const parent = invocationSegment();
    let inside: Recorded | undefined;
    const handler = instrumented(
      async (event: { opOccId: string }) => {
        inside = tracer.getSegment() as Recorded;
        log.appendKeys({ vnfInstanceId: 'inst-1', absent: undefined });
        return `done ${event.opOccId}`;
      },
      (event) => ({ opOccId: event.opOccId }),
    );
    const printed = await consoleOutput(async () => {
      assert.equal(await inSegment(tracer, parent, () => handler({ opOccId: 'occ-1' }, context)), 'done occ-1');
      assert.equal(tracer.getSegment(), parent, 'the invocation segment is current again');
    });
    assert.deepEqual(printed, []);
    const [subsegment, ...others] = (parent.subsegments ?? []) as Recorded[];
    assert.equal(others.length, 0);
    assert.equal(subsegment, inside, 'the handler ran in it');
    assert.equal(subsegment?.name, '## OpOccTransitionFunction');
    const { ColdStart, ...annotations } = subsegment?.annotations ?? {};
    assert.equal(typeof ColdStart, 'boolean');
    assert.deepEqual(annotations, { Service: 'OpOccTransitionFunction', opOccId: 'occ-1', vnfInstanceId: 'inst-1' });
    assert.equal(typeof subsegment?.end_time, 'number', 'closed');
  });

  it('records an error on the subsegment, closes it and throws it on', async () => {
    useTracing(tracingWith(tracer));
    const parent = invocationSegment();
    const handler = instrumented(async () => {
      throw new Error('VIM unreachable');
    });
    await assert.rejects(
      inSegment(tracer, parent, () => handler({}, context)),
      /VIM unreachable/,
    );
    const [subsegment] = (parent.subsegments ?? []) as Recorded[];
    assert.equal(typeof subsegment?.end_time, 'number');
    assert.equal(subsegment?.fault, true);
    assert.match(JSON.stringify(subsegment?.cause), /VIM unreachable/);
  });

  it('records AWS SDK calls: clients built through tracedClient carry X-Ray middleware', () => {
    useTracing(tracingWith(tracer));
    assert.equal(xrayMiddleware(tracedClient(new DynamoDBClient({ region: 'us-east-1' }))).length, 1);
  });
});

describe('with the Tracer off (outside Lambda, as in the local runtime and tests)', () => {
  it('is not even loaded here (no X-Ray SDK and its async hook in the local runtime and the tests)', () => {
    assert.equal(productTracer, undefined);
  });

  it('is loaded only where the Tracer would be on: in Lambda, not under sam local, not with POWERTOOLS_TRACE_ENABLED=false', () => {
    const lambda = { AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x' };
    assert.equal(tracingWanted(lambda), true);
    assert.equal(tracingWanted({ ...lambda, POWERTOOLS_TRACE_ENABLED: 'true' }), true);
    assert.equal(tracingWanted({}), false);
    assert.equal(tracingWanted({ ...lambda, POWERTOOLS_TRACE_ENABLED: 'FALSE' }), false);
    assert.equal(tracingWanted({ ...lambda, AWS_SAM_LOCAL: 'true' }), false);
    assert.equal(tracingWanted({ AWS_EXECUTION_ENV: 'AWS_Lambda_amplify-mock' }), false);
  });

  it('opens no subsegment, annotates nothing, captures no client and prints nothing', async () => {
    const before = process.env.POWERTOOLS_TRACE_ENABLED;
    process.env.POWERTOOLS_TRACE_ENABLED = 'false';
    const off = (() => {
      try {
        // Even where AWS_EXECUTION_ENV says Lambda (CloudShell and ECS set it too), the setting turns it off.
        return lambdaTracer();
      } finally {
        if (before === undefined) delete process.env.POWERTOOLS_TRACE_ENABLED;
        else process.env.POWERTOOLS_TRACE_ENABLED = before;
      }
    })();
    assert.equal(off.isTracingEnabled(), false);
    useTracing(tracingWith(off));
    const parent = invocationSegment();
    const handler = instrumented(
      async (event: { opOccId: string }) => {
        log.appendKeys({ vnfInstanceId: 'inst-1' });
        return event.opOccId;
      },
      (event) => ({ opOccId: event.opOccId }),
    );
    const printed = await consoleOutput(async () => {
      assert.equal(await inSegment(lambdaTracer(), parent, () => handler({ opOccId: 'occ-1' }, context)), 'occ-1');
    });
    assert.deepEqual(printed, []);
    assert.deepEqual(parent.subsegments ?? [], []);
    assert.equal((parent as Recorded).annotations, undefined);
    assert.deepEqual(xrayMiddleware(tracedClient(new DynamoDBClient({ region: 'us-east-1' }))), []);
  });

  it('runs handlers as they are when no function registered tracing', async () => {
    useTracing(undefined);
    assert.equal(await instrumented(async () => 'plain')({}, context), 'plain');
    assert.deepEqual(xrayMiddleware(tracedClient(new DynamoDBClient({ region: 'us-east-1' }))), []);
  });
});

// The logger: Powertools' JSON lines with the old redaction, LOG_LEVEL, and an invocation's Lambda
// context and correlation keys on its own lines only (also when invocations run side by side, as
// in the local runtime).
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Context } from 'aws-lambda';
import { log, serviceOf } from '#lib/log.ts';
import { instrumented } from '#lib/metrics.ts';

type Line = Record<string, unknown>;

/** The JSON lines `run` writes to stdout and stderr; whatever else is written (the test runner's reports) passes through. */
async function captured(run: () => unknown): Promise<{ out: Line[]; err: Line[] }> {
  const out: Line[] = [];
  const err: Line[] = [];
  const tap = (stream: NodeJS.WriteStream, into: Line[]) => {
    const write = stream.write;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (typeof chunk === 'string' && chunk.startsWith('{')) return Boolean(into.push(JSON.parse(chunk) as Line));
      return (write as (...args: unknown[]) => boolean).call(stream, chunk, ...rest);
    }) as typeof stream.write;
    return () => {
      stream.write = write;
    };
  };
  const untapOut = tap(process.stdout, out);
  const untapErr = tap(process.stderr, err);
  try {
    await run();
  } finally {
    untapOut();
    untapErr();
  }
  return { out, err };
}

const contextOf = (functionName: string, awsRequestId: string) =>
  ({
    functionName,
    awsRequestId,
    invokedFunctionArn: `arn:aws:lambda:eu-west-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '512',
    functionVersion: '$LATEST',
    getRemainingTimeInMillis: () => 30_000,
  }) as unknown as Context;

const savedLevel = process.env.LOG_LEVEL;
afterEach(() => {
  if (savedLevel === undefined) delete process.env.LOG_LEVEL;
  else process.env.LOG_LEVEL = savedLevel;
});

describe('log', () => {
  it("writes Powertools' structured JSON: level, message, timestamp, service, then the fields", async () => {
    delete process.env.LOG_LEVEL;
    const { out } = await captured(() => log.info('package onboarded', { packageId: 'pkg-1', bytes: 42 }));
    assert.equal(out.length, 1);
    const [line] = out as [Line];
    assert.deepEqual(Object.keys(line).slice(0, 4), ['level', 'message', 'timestamp', 'service']);
    assert.equal(line.level, 'INFO');
    assert.equal(line.message, 'package onboarded');
    assert.match(String(line.timestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(line.service, 'vnfm');
    assert.equal(line.packageId, 'pkg-1');
    assert.equal(line.bytes, 42);
  });

  it('masks credential-named fields at any depth and removes URL userinfo from the message, fields and errors', async () => {
    const error = new Error('GET https://admin:Err-S3cret@vim.example/v3 failed');
    const { out, err } = await captured(() => {
      log.info('token from http://svc:Msg-S3cret@auth.example/token', {
        password: 'Pw-S3cret',
        vim: { accessInfo: { username: 'u', password: 'Nested-S3cret' }, endpoint: 'https://k8s:Url-S3cret@k8s.example:6443/' },
        headers: [{ Authorization: 'Bearer Tok-S3cret' }],
      });
      log.error('VIM call failed', { error });
    });
    const text = JSON.stringify([out, err]);
    for (const secret of ['Err-S3cret', 'Msg-S3cret', 'Pw-S3cret', 'Nested-S3cret', 'Url-S3cret', 'Tok-S3cret']) assert.ok(!text.includes(secret), secret);
    const [info] = out as [Line];
    assert.equal(info.message, 'token from http://auth.example/token');
    assert.equal(info.password, '[redacted]');
    assert.deepEqual(info.vim, { accessInfo: '[redacted]', endpoint: 'https://k8s.example:6443/' });
    assert.deepEqual(info.headers, [{ Authorization: '[redacted]' }]);
    const [failure] = err as [Line];
    const logged = failure.error as { name: string; message: string; stack: string };
    assert.equal(logged.message, 'GET https://vim.example/v3 failed');
    assert.match(logged.stack, /^Error: GET https:\/\/vim\.example\/v3 failed\n/);
  });

  it('writes warnings and errors to stderr, the rest to stdout', async () => {
    const { out, err } = await captured(() => {
      log.info('i');
      log.warn('w');
      log.error('e');
    });
    assert.deepEqual(
      out.map((line) => line.level),
      ['INFO'],
    );
    assert.deepEqual(
      err.map((line) => line.level),
      ['WARN', 'ERROR'],
    );
  });

  it('keeps a field named like a key Powertools writes itself, under another name', async () => {
    const { out } = await captured(() => log.info('openstack token refused', { service: 'nova', level: 3 }));
    const [line] = out as [Line];
    assert.equal(line.service, 'vnfm');
    assert.equal(line.field_service, 'nova');
    assert.equal(line.field_level, 3);
  });

  it('writes the lines at or above LOG_LEVEL, read when the line is written (INFO when unset or unknown)', async () => {
    const levels = async () => {
      const { out, err } = await captured(() => {
        log.debug('d');
        log.info('i');
        log.warn('w');
        log.error('e');
      });
      return [...out, ...err].map((line) => line.message).sort();
    };
    delete process.env.LOG_LEVEL;
    assert.deepEqual(await levels(), ['e', 'i', 'w']);
    process.env.LOG_LEVEL = 'debug';
    assert.deepEqual(await levels(), ['d', 'e', 'i', 'w']);
    process.env.LOG_LEVEL = 'WARN';
    assert.deepEqual(await levels(), ['e', 'w']);
    process.env.LOG_LEVEL = 'chatty';
    assert.deepEqual(await levels(), ['e', 'i', 'w']);
  });
});

describe("an invocation's logger", () => {
  const step = instrumented(
    async (input: { opOccId: string; extra?: string }) => {
      log.info('step ran');
      if (input.extra) log.appendKeys({ vnfInstanceId: input.extra });
      log.info('step went on');
    },
    (input) => ({ opOccId: input.opOccId }),
  );

  it("adds the function's service, cold start, request id and the event's correlation keys, and drops them when the invocation ends", async () => {
    const { out } = await captured(async () => {
      await step({ opOccId: 'op-1', extra: 'inst-1' }, contextOf('vnfm-dev-LogTestStepFunction-1A2B3C4D5E6F', 'req-1'));
      await step({ opOccId: 'op-2' }, contextOf('vnfm-dev-LogTestStepFunction-1A2B3C4D5E6F', 'req-2'));
      log.info('outside');
    });
    const pick = (line: Line) => [line.message, line.service, line.cold_start, line.function_request_id, line.opOccId, line.vnfInstanceId];
    assert.deepEqual(out.map(pick), [
      ['step ran', 'LogTestStepFunction', true, 'req-1', 'op-1', undefined],
      ['step went on', 'LogTestStepFunction', true, 'req-1', 'op-1', 'inst-1'],
      // The warm function's next invocation has none of the first one's keys.
      ['step ran', 'LogTestStepFunction', false, 'req-2', 'op-2', undefined],
      ['step went on', 'LogTestStepFunction', false, 'req-2', 'op-2', undefined],
      ['outside', 'vnfm', undefined, undefined, undefined, undefined],
    ]);
    assert.equal(out[0]?.function_name, 'vnfm-dev-LogTestStepFunction-1A2B3C4D5E6F');
  });

  it("keeps each invocation's keys on its own lines when invocations run side by side", async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const waiting = instrumented(
      async (_input: { opOccId: string }) => {
        log.info('before');
        await gate;
        log.info('after');
      },
      (input) => ({ opOccId: input.opOccId }),
    );
    const { out } = await captured(async () => {
      const first = waiting({ opOccId: 'op-a' }, contextOf('LogTestSideFunction', 'req-a'));
      const second = waiting({ opOccId: 'op-b' }, contextOf('LogTestSideFunction', 'req-b'));
      release();
      await Promise.all([first, second]);
    });
    assert.equal(out.length, 4);
    for (const line of out) assert.equal(line.opOccId, line.function_request_id === 'req-a' ? 'op-a' : 'op-b');
  });

  it('adds no keys outside an invocation, so none leak into the next one', async () => {
    log.appendKeys({ opOccId: 'stray' });
    const { out } = await captured(async () => {
      log.info('outside');
      await step({ opOccId: 'op-3' }, contextOf('LogTestStepFunction', 'req-3'));
    });
    assert.deepEqual(
      out.map((line) => line.opOccId),
      [undefined, 'op-3', 'op-3'],
    );
  });

  it('is a plain logger for a handler called without a Lambda context', async () => {
    const { out } = await captured(() => step({ opOccId: 'op-4' }));
    assert.deepEqual(
      out.map((line) => [line.service, line.function_request_id, line.opOccId]),
      [
        ['vnfm', undefined, 'op-4'],
        ['vnfm', undefined, 'op-4'],
      ],
    );
  });
});

describe('serviceOf', () => {
  it("names the function by its template logical id, from CloudFormation's physical name or the local runtime's", () => {
    assert.equal(serviceOf({ functionName: 'vnfm-prod-LcmPollFunction-Xy12Ab34Cd56' }), 'LcmPollFunction');
    assert.equal(serviceOf({ functionName: 'LcmStepFunction' }), 'LcmStepFunction');
    assert.equal(serviceOf({ functionName: 'my-own-name' }), 'my-own-name');
    assert.equal(serviceOf(undefined), 'vnfm');
  });
});

// The script runner: runs one vendor script of a VNF package (VNFD LCM hook or CoordinateVNF) in a
// sandboxed child process and answers a ScriptResult. Its role holds nothing but logs and its
// environment nothing of the product, so a script has nothing to reach but what it was handed.
// A bad request or a failing script is an ok:false result, never a throw.
import { describeIssue, failure, fitInvokePayload, scriptRequestSchema, type ScriptRequest, type ScriptResult } from '#lib/scripts/contract.ts';
import { optionsFromEnv, runScript } from '#lib/scripts/sandbox.ts';
import { log } from '#lib/log.ts';
import { instrumented } from '#lib/metrics.ts';

// `event` is validated: whoever invokes the function may send anything.
const handle = async (event: ScriptRequest): Promise<ScriptResult> => {
  const request = scriptRequestSchema.safeParse(event);
  if (!request.success) return failure(400, describeIssue(request.error), 'bad-request');
  let options: ReturnType<typeof optionsFromEnv>;
  try {
    options = optionsFromEnv();
  } catch (error) {
    return failure(500, `The script runner is misconfigured: ${(error as Error).message}`, 'runner');
  }
  const result = await runScript(request.data, options);
  log.info('script ran', {
    kind: request.data.kind,
    script: request.data.script,
    operation: request.data.input.operation,
    ok: result.ok,
    durationMs: result.durationMs,
    ...(result.ok ? {} : { reason: result.reason, detail: result.error.detail }),
  });
  return fitInvokePayload(result);
};

export const handler = instrumented(handle);

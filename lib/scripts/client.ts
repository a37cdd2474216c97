// How the LCM engine runs a vendor script: a synchronous invocation of the script runner function
// (SCRIPT_RUNNER_FUNCTION, a name or ARN) that answers a ScriptResult. Whatever goes wrong with the
// script or the runner comes back as an ok:false result; only failing to reach Lambda at all (the
// SDK's own errors, after its retries) throws, so the state machine's Retry can try again.
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { failure, MAX_INVOKE_PAYLOAD_BYTES, scriptResultSchema, type ScriptRequest, type ScriptResult } from './contract.ts';
import { awsClient } from '#lib/aws-client.ts';

let client: LambdaClient | undefined;

/** Created on first use, so AWS_ENDPOINT_URL_LAMBDA set after import (the local runtime) still applies. */
function lambda(): LambdaClient {
  client ??= awsClient(new LambdaClient({}));
  return client;
}

export async function invokeScriptRunner(request: ScriptRequest, functionName = process.env.SCRIPT_RUNNER_FUNCTION): Promise<ScriptResult> {
  if (!functionName) return failure(500, 'SCRIPT_RUNNER_FUNCTION is not set: there is no script runner to run vendor scripts', 'runner');
  const payload = Buffer.from(JSON.stringify(request));
  if (payload.length > MAX_INVOKE_PAYLOAD_BYTES) {
    return failure(
      413,
      `The script ${request.script} and its files make a ${payload.length}-byte request; the script runner takes at most ${MAX_INVOKE_PAYLOAD_BYTES} bytes`,
      'bad-request',
    );
  }
  const answer = await lambda().send(new InvokeCommand({ FunctionName: functionName, InvocationType: 'RequestResponse', Payload: payload }));
  const text = answer.Payload ? Buffer.from(answer.Payload).toString('utf8') : '';
  if (answer.FunctionError) {
    let reason = text;
    try {
      const { errorType, errorMessage } = JSON.parse(text) as { errorType?: string; errorMessage?: string };
      if (errorMessage !== undefined) reason = `${errorType ?? 'Error'}: ${errorMessage}`;
    } catch {
      // not Lambda's error JSON: keep the text
    }
    return failure(500, `The script runner failed (${answer.FunctionError}) running ${request.script}: ${reason.slice(0, 2000)}`, 'runner');
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const result = scriptResultSchema.safeParse(body);
  if (!result.success)
    return failure(500, `The script runner answered something that is not a script result for ${request.script}: ${text.slice(0, 200)}`, 'runner');
  return result.data;
}

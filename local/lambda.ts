// How the local runtime holds and invokes a Lambda function: its template facts, its loaded
// handler, and a Lambda-shaped context object.
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

export interface LocalFunction {
  logicalId: string;
  arn: string;
  file: string;
  exportName: string;
  timeoutSeconds: number;
  memorySize: number;
  properties: Record<string, unknown>;
  handler?: (event: unknown, context: Context) => Promise<unknown>;
}

export function lambdaContext(fn: LocalFunction): Context {
  const deadline = Date.now() + fn.timeoutSeconds * 1000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: fn.logicalId,
    functionVersion: '$LATEST',
    invokedFunctionArn: fn.arn,
    memoryLimitInMB: String(fn.memorySize),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${fn.logicalId}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

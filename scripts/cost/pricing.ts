// Pricing of what the local runtime's meter counted (local/metering.ts), from the dated price table
// prices.json (us-east-1 list prices, arm64 Lambda, on-demand DynamoDB): used by `npm run cost` and
// by `npm run bench`, which prints an instantiate's cost beside its overhead.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { UsageSnapshot } from '../../local/metering.ts';
import { localControl, settle, type LocalVnfm } from '../../test/support/runtime.ts';

export const prices = JSON.parse(readFileSync(join(import.meta.dirname, 'prices.json'), 'utf8')) as Prices;

export interface Prices {
  region: string;
  asOf: string;
  lambda: { arm64GbSecondUsd: number; requestUsd: number };
  stepFunctions: { standardTransitionUsd: number };
  apiGateway: { httpApiRequestUsd: number };
  dynamodb: { onDemandWriteUnitUsd: number; onDemandReadUnitUsd: number };
  sqs: { requestUsd: number };
  secretsManager: { secretMonthUsd: number; apiCallUsd: number };
  kms: { keyMonthUsd: number; requestUsd: number };
  xray: { traceRecordedUsd: number };
  cloudWatchLogs: { ingestedGbUsd: number };
  cognito: { m2mAppClientMonthUsd: number };
  eventBridgeScheduler: { invocationUsd: number };
  s3: { putUsd: number; getUsd: number };
}

export type Bill = Record<string, number>;

/** Prices one metered stretch: USD by service. */
export function price(usage: UsageSnapshot): Bill {
  const calls = (prefix: string) => Object.entries(usage.calls).filter(([key]) => key.startsWith(`${prefix}:`));
  const count = (prefix: string, operations?: string[]) =>
    calls(prefix)
      .filter(([key]) => !operations || operations.includes(key.slice(prefix.length + 1)))
      .reduce((sum, [, n]) => sum + n, 0);
  const lambdas = Object.values(usage.lambda);
  const gbSeconds = lambdas.reduce((sum, fn) => sum + (fn.billedMs / 1000) * (fn.memoryMb / 1024), 0);
  const invocations = lambdas.reduce((sum, fn) => sum + fn.invocations, 0);
  const executions = Object.values(usage.executions).reduce((sum, n) => sum + n, 0);
  // A secret encrypted with the deployment's own key: each read decrypts, each write generates a data key.
  const kmsRequests = count('secretsmanager', ['GetSecretValue', 'CreateSecret', 'PutSecretValue', 'UpdateSecret']);
  // One trace per API request and per execution (its Lambda tasks join it).
  const traces = usage.apiRequests + executions;
  return {
    lambda: invocations * prices.lambda.requestUsd + gbSeconds * prices.lambda.arm64GbSecondUsd,
    stepFunctions: Object.values(usage.transitions).reduce((sum, n) => sum + n, 0) * prices.stepFunctions.standardTransitionUsd,
    apiGateway: usage.apiRequests * prices.apiGateway.httpApiRequestUsd,
    dynamodb:
      (usage.dynamodb.writeUnits + usage.dynamodb.indexWriteUnits) * prices.dynamodb.onDemandWriteUnitUsd +
      usage.dynamodb.readUnits * prices.dynamodb.onDemandReadUnitUsd,
    sqs: count('sqs') * prices.sqs.requestUsd,
    secretsManager: count('secretsmanager') * prices.secretsManager.apiCallUsd,
    kms: kmsRequests * prices.kms.requestUsd,
    xray: traces * prices.xray.traceRecordedUsd,
    logs: (usage.logBytes / 1024 ** 3) * prices.cloudWatchLogs.ingestedGbUsd,
    s3: count('s3', ['PUT', 'POST']) * prices.s3.putUsd + count('s3', ['GET', 'HEAD']) * prices.s3.getUsd,
  };
}

export const total = (bill: Bill) => Object.values(bill).reduce((sum, usd) => sum + usd, 0);
export const scaled = (bill: Bill, factor: number): Bill => Object.fromEntries(Object.entries(bill).map(([k, v]) => [k, v * factor]));
export const added = (a: Bill, b: Bill): Bill =>
  Object.fromEntries([...new Set([...Object.keys(a), ...Object.keys(b)])].map((k) => [k, (a[k] ?? 0) + (b[k] ?? 0)]));

export async function usageOf(vnfm: LocalVnfm): Promise<UsageSnapshot> {
  const reply = await localControl(vnfm, 'GET', '/_local/usage');
  const body = (await reply.json()) as UsageSnapshot & { enabled: boolean };
  if (!body.enabled) throw new Error('the runtime is not metering (VNFM_METER=1)');
  return body;
}

export async function metered(vnfm: LocalVnfm, run: () => Promise<void>): Promise<UsageSnapshot> {
  await settle(vnfm);
  await localControl(vnfm, 'POST', '/_local/usage/reset');
  await run();
  await settle(vnfm);
  return usageOf(vnfm);
}

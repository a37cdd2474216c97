// `npm run cost [-- --json]`: what each LCM operation of the sample VNF and an idle deployment would
// cost on AWS, counted on the local runtime as it runs the same handlers and state machines
// (local/metering.ts: Lambda invocations and duration at each function's memory size, state
// transitions, API requests, AWS API calls, DynamoDB capacity units, log bytes) and priced from
// the dated price table scripts/cost/prices.json (arm64 Lambda, on-demand DynamoDB, us-east-1).
//
// The VIM is the OpenStack simulator at a time scale that makes one instantiate about a minute of
// VIM work in real time (COST_SIM_TIME_SCALE; the Wait states unscaled), because waiting is billed
// by the second where a poll step waits inside its invocation. Idle cost: the template's schedules
// run once each on an empty deployment, priced per month with the fixed monthly charges of the
// template's resources (keys, secrets, app clients, queue polling). Monitoring: the schedules again
// with COST_WATCHED_INSTANCES instances on the simulator's VIM and with twice as many: per instance
// is what the second batch added, per VIM the rest. COST_ONLY=idle leaves the LCM operations out
// (then COST_SIM_TIME_SCALE=1 makes the watched instances quick to instantiate).
import { join } from 'node:path';
import { applyGlobals, evaluateCondition, intrinsicContext, loadTemplate } from '../local/template.ts';
import { rateMs } from '../local/schedules.ts';
import type { UsageSnapshot } from '../local/metering.ts';
import { SWEEP_CREDENTIALS_MAX_AGE_MS } from '../lib/secrets/vim-access.ts';
import { client, localControl, ROOT, settle, startVnfm, type LocalVnfm } from '../test/support/runtime.ts';
import { added, metered, price, prices, scaled, total, type Bill } from './cost/pricing.ts';

const json = process.argv.includes('--json');
/** The simulator's time scale: at 18 the sample's stack takes about a minute; Wait states as deployed (a smaller COST_WAIT_SCALE with a smaller COST_SIM_TIME_SCALE is quicker, and exact only for transitions). */
const SIM_SCALE = Number(process.env.COST_SIM_TIME_SCALE ?? 18);
const WAIT_SCALE = Number(process.env.COST_WAIT_SCALE ?? 1);
/** Instances added to watch in each of the two monitoring measurements. */
const WATCHED = Number(process.env.COST_WATCHED_INSTANCES ?? 4);
/** COST_ONLY=idle: only the idle and monitoring measurements (the LCM operations are left out; quicker). */
const IDLE_ONLY = process.env.COST_ONLY === 'idle';
const MONTH_MINUTES = 30 * 24 * 60;
import { INSTANTIATE_ON_SIMULATOR, onboardSample, simulatorControl } from '../bench/openstack-lifecycles.ts';

interface OperationCost {
  operation: string;
  usd: number;
  bill: Bill;
  transitions: number;
  lambdaInvocations: number;
  lambdaGbSeconds: number;
  dynamodbUnits: { read: number; write: number; indexWrite: number };
  secretReads: number;
  modelledVimSeconds?: number;
}

function describe(operation: string, usage: UsageSnapshot, extra: Partial<OperationCost> = {}): OperationCost {
  const bill = price(usage);
  const lambdas = Object.values(usage.lambda);
  return {
    operation,
    usd: total(bill),
    bill,
    transitions: Object.values(usage.transitions).reduce((sum, n) => sum + n, 0),
    lambdaInvocations: lambdas.reduce((sum, fn) => sum + fn.invocations, 0),
    lambdaGbSeconds: lambdas.reduce((sum, fn) => sum + (fn.billedMs / 1000) * (fn.memoryMb / 1024), 0),
    dynamodbUnits: { read: usage.dynamodb.readUnits, write: usage.dynamodb.writeUnits, indexWrite: usage.dynamodb.indexWriteUnits },
    secretReads: usage.calls['secretsmanager:GetSecretValue'] ?? 0,
    ...extra,
  };
}

/** The template's fixed monthly charges, its schedules (rate per month by function) and its queue pollers. */
function templateShape() {
  const template = loadTemplate(join(ROOT, 'template.yaml'));
  const functions = applyGlobals(template);
  const schedules: Array<{ fn: string; perMonth: number }> = [];
  let queuePollers = 0;
  for (const [logicalId, props] of Object.entries(functions)) {
    for (const event of Object.values((props.Events ?? {}) as Record<string, { Type: string; Properties?: Record<string, unknown> }>)) {
      if (event.Type === 'Schedule' || event.Type === 'ScheduleV2') {
        const ms = rateMs(String(event.Properties?.ScheduleExpression ?? ''));
        if (ms) schedules.push({ fn: logicalId, perMonth: (MONTH_MINUTES * 60_000) / ms });
      }
      if (event.Type === 'SQS') queuePollers += 1;
    }
  }
  // What a deployment with the default parameters has: a resource whose Condition is false is not there.
  const ctx = intrinsicContext(template, { ref: (id) => id, getAtt: (id, attribute) => `${id}.${attribute}` });
  const resources = Object.values(template.Resources).filter((r) => typeof r.Condition !== 'string' || evaluateCondition(r.Condition, ctx));
  const ofType = (type: string) => resources.filter((r) => r.Type === type);
  // Only functions with active tracing record a trace per run (X-Ray samples the first request of each second).
  const traced = new Set(
    Object.entries(functions)
      .filter(([, props]) => props.Tracing === 'Active')
      .map(([logicalId]) => logicalId),
  );
  const m2mClients = ofType('AWS::Cognito::UserPoolClient').filter((r) =>
    ((r.Properties?.AllowedOAuthFlows as string[] | undefined) ?? []).includes('client_credentials'),
  ).length;
  // An SQS event source mapping long-polls its queue with 5 pollers while idle: a ReceiveMessage per poller every 20 s.
  const idlePollRequests = queuePollers * 5 * 3 * MONTH_MINUTES;
  const fixed: Bill = {
    kms: ofType('AWS::KMS::Key').length * prices.kms.keyMonthUsd,
    secretsManager: ofType('AWS::SecretsManager::Secret').length * prices.secretsManager.secretMonthUsd,
    cognito: m2mClients * prices.cognito.m2mAppClientMonthUsd,
    cloudWatch: ofType('AWS::CloudWatch::Alarm').length * 0.1,
    sqs: idlePollRequests * prices.sqs.requestUsd,
  };
  return { schedules, fixed, queuePollers, m2mClients, traced };
}

/** Runs each schedule once: the monthly bill of them all, and each function's usage of its run. */
async function runSchedules(
  vnfm: LocalVnfm,
  schedules: Array<{ fn: string; perMonth: number }>,
  traced: Set<string>,
): Promise<{ monthly: Bill; runs: Record<string, UsageSnapshot> }> {
  let monthly: Bill = {};
  const runs: Record<string, UsageSnapshot> = {};
  for (const schedule of schedules) {
    const usage = await metered(vnfm, async () => {
      const reply = await localControl(vnfm, 'POST', `/_local/schedules/${schedule.fn}/run`);
      if (!reply.ok) throw new Error(`schedule of ${schedule.fn}: ${reply.status} ${await reply.text()}`);
    });
    runs[schedule.fn] = usage;
    // Each scheduled run is one Scheduler invocation, and one trace if the function is traced.
    const bill = added(price(usage), {
      xray: traced.has(schedule.fn) ? prices.xray.traceRecordedUsd : 0,
      scheduler: prices.eventBridgeScheduler.invocationUsd,
    });
    monthly = added(monthly, scaled(bill, schedule.perMonth));
  }
  return { monthly, runs };
}

const usd = (value: number) => `$${value < 0.01 ? value.toFixed(6) : value.toFixed(4)}`;

async function main(): Promise<void> {
  const vnfm = await startVnfm({
    env: {
      VNFM_METER: '1',
      VNFM_SIM_TIME_SCALE: String(SIM_SCALE),
      VNFM_WAIT_SCALE: String(WAIT_SCALE),
      VNFM_SCHEDULE_SCALE: '0',
      VNFM_PARAMETER_OVERRIDES: 'LogLevel=info',
    },
  });
  try {
    const call = client(vnfm);
    const shape = templateShape();
    // The first run of each schedule loads and compiles its modules (a cold start, not billed per run).
    await runSchedules(vnfm, shape.schedules, shape.traced);
    const { monthly: idleEmpty, runs: emptyRuns } = await runSchedules(vnfm, shape.schedules, shape.traced);
    const vnfdId = await onboardSample(vnfm);
    const control = simulatorControl(vnfm);
    const operations: OperationCost[] = [];
    const create = async () => ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId } })).body as { id: string }).id;
    const task = async (id: string, name: string, body: unknown) => {
      const reply = await call('POST', `/vnflcm/v2/vnf_instances/${id}/${name}`, { body });
      if (reply.status !== 202) throw new Error(`${name} answered ${reply.status}: ${reply.text}`);
      await settle(vnfm);
      const occ = (await call('GET', new URL(reply.headers.get('location') ?? '').pathname)).body as { operationState: string };
      if (occ.operationState !== 'COMPLETED') throw new Error(`${name} ended ${occ.operationState}: ${JSON.stringify(occ)}`);
    };

    if (!IDLE_ONLY) {
      const id = await create();
      let vimSeconds = 0;
      const instantiate = await metered(vnfm, async () => {
        await task(id, 'instantiate', INSTANTIATE_ON_SIMULATOR);
        const state = (await (await fetch(`${control}state`)).json()) as { stacks: { items: Array<{ id: string; name: string }> } };
        const stack = state.stacks.items.find((s) => s.name === `vnf-${id}`);
        const work = (await (await fetch(`${control}stacks/${stack?.id}/work-time`)).json()) as { actions: Array<{ action: string; workMs: number | null }> };
        vimSeconds = (work.actions.find((a) => a.action === 'CREATE')?.workMs ?? 0) / 1000 / WAIT_SCALE;
      });
      operations.push(describe('INSTANTIATE', instantiate, { modelledVimSeconds: Math.round(vimSeconds) }));
      const steps: Array<[string, string, unknown]> = [
        ['SCALE (out)', 'scale', { type: 'SCALE_OUT', aspectId: 'VDU1_scale', numberOfSteps: 1 }],
        ['SCALE (in)', 'scale', { type: 'SCALE_IN', aspectId: 'VDU1_scale', numberOfSteps: 1 }],
        ['SCALE_TO_LEVEL', 'scale_to_level', { scaleInfo: [{ aspectId: 'VDU1_scale', scaleLevel: 1 }] }],
        ['HEAL', 'heal', {}],
        ['TERMINATE', 'terminate', { terminationType: 'FORCEFUL' }],
      ];
      for (const [label, name, body] of steps) operations.push(describe(label, await metered(vnfm, () => task(id, name, body))));
      const create201 = await metered(vnfm, async () => void (await create()));
      operations.push(describe('POST /vnf_instances', create201));
    }

    // Monitoring: the same schedules with WATCHED instances on the simulator's one VIM, then with
    // twice as many. What grows with the instances is the difference between the two, per instance;
    // the rest of the difference from the empty deployment is what one VIM with watched instances
    // costs (its credentials, its list call). A read of the VIM's credentials that the warm sweep's
    // cache saved is counted as one read per SWEEP_CREDENTIALS_MAX_AGE_MS, as a month of sweeps reads.
    const watchMore = async () => {
      const watched = await Promise.all(Array.from({ length: WATCHED }, () => create()));
      for (const instance of watched) {
        const reply = await call('POST', `/vnflcm/v2/vnf_instances/${instance}/instantiate`, { body: INSTANTIATE_ON_SIMULATOR });
        if (reply.status !== 202) throw new Error(`instantiate answered ${reply.status}: ${reply.text}`);
      }
      await settle(vnfm);
      for (const instance of watched) {
        const { instantiationState } = (await call('GET', `/vnflcm/v2/vnf_instances/${instance}`)).body as { instantiationState: string };
        if (instantiationState !== 'INSTANTIATED') throw new Error(`watched instance ${instance} is ${instantiationState}`);
      }
      await runSchedules(vnfm, shape.schedules, shape.traced);
      return runSchedules(vnfm, shape.schedules, shape.traced);
    };
    const { monthly: idleWatching, runs: watchingRuns } = await watchMore();
    const { monthly: idleWatchingTwice } = await watchMore();
    const perInstance = scaled(added(idleWatchingTwice, scaled(idleWatching, -1)), 1 / WATCHED);
    const sweepSecretReads = watchingRuns.VnfHealthMonitorFunction?.calls['secretsmanager:GetSecretValue'] ?? 0;
    const cachedReads =
      sweepSecretReads > 0
        ? {}
        : scaled({ secretsManager: prices.secretsManager.apiCallUsd, kms: prices.kms.requestUsd }, (MONTH_MINUTES * 60_000) / SWEEP_CREDENTIALS_MAX_AGE_MS);
    const perVim = added(added(idleWatching, scaled(idleEmpty, -1)), added(scaled(perInstance, -WATCHED), cachedReads));
    const idle = added(shape.fixed, idleEmpty);
    const report = {
      prices: { region: prices.region, asOf: prices.asOf },
      model: {
        waitScale: WAIT_SCALE,
        simTimeScale: SIM_SCALE,
        schedules: shape.schedules,
        sqsEventSources: shape.queuePollers,
        m2mAppClients: shape.m2mClients,
      },
      operations,
      instantiateUsd: operations[0]?.usd ?? NaN,
      idleMonthly: idle,
      idleMonthlyUsd: total(idle),
      monitoringPer1000InstancesMonthlyUsd: total(perInstance) * 1000,
      monitoringPer1000InstancesMonthly: scaled(perInstance, 1000),
      monitoringPerVimMonthlyUsd: total(perVim),
      monitoringPerVimMonthly: perVim,
      // One run of each schedule on the empty deployment and with the watched instances.
      scheduleRuns: shape.schedules.map(({ fn }) => ({
        fn,
        empty: emptyRuns[fn] && describe(fn, emptyRuns[fn]),
        watching: watchingRuns[fn] && describe(fn, watchingRuns[fn]),
      })),
    };
    if (json) {
      console.log(JSON.stringify(report, null, 2));
      return;
    }
    console.log(`What AWS would bill (${prices.region} list prices of ${prices.asOf}; arm64 Lambda, on-demand DynamoDB, Standard workflows)`);
    console.log(
      'operation              total       Lambda      StepFn      DynamoDB    Secrets+KMS  other     transitions  GB-s    RRU/WRU(+GSI)  secret reads',
    );
    for (const op of operations) {
      const { lambda = 0, stepFunctions = 0, dynamodb = 0, secretsManager = 0, kms = 0 } = op.bill;
      const other = op.usd - lambda - stepFunctions - dynamodb - secretsManager - kms;
      console.log(
        `${op.operation.padEnd(22)} ${usd(op.usd).padEnd(11)} ${usd(lambda).padEnd(11)} ${usd(stepFunctions).padEnd(11)} ${usd(dynamodb).padEnd(11)} ${usd(secretsManager + kms).padEnd(12)} ${usd(other).padEnd(9)} ${String(op.transitions).padEnd(12)} ${op.lambdaGbSeconds.toFixed(2).padEnd(7)} ${`${op.dynamodbUnits.read}/${op.dynamodbUnits.write}(+${op.dynamodbUnits.indexWrite})`.padEnd(14)} ${op.secretReads}`,
      );
    }
    console.log(
      `  INSTANTIATE modelled ${operations[0]?.modelledVimSeconds ?? '?'} s of VIM work (Heat stack create); today's anchor $0.0047, target <= $0.001`,
    );
    console.log(`Idle deployment per month: ${usd(total(idle))}  (anchor about $8, target <= $1)`);
    for (const [service, value] of Object.entries(idle)
      .filter(([, v]) => v > 0.0001)
      .sort((a, b) => b[1] - a[1])) {
      console.log(`  ${service.padEnd(16)} ${usd(value)}`);
    }
    const breakdown = (bill: Bill) => {
      for (const [service, value] of Object.entries(bill)
        .filter(([, v]) => Math.abs(v) > 0.0001)
        .sort((a, b) => b[1] - a[1])) {
        console.log(`  ${service.padEnd(16)} ${usd(value)}`);
      }
    };
    console.log(`Monitoring per 1,000 instantiated instances per month: ${usd(total(perInstance) * 1000)}  (${WATCHED} -> ${2 * WATCHED} watched)`);
    breakdown(scaled(perInstance, 1000));
    console.log(`Monitoring per VIM with watched instances per month: ${usd(total(perVim))}`);
    breakdown(perVim);
  } finally {
    await vnfm.stop();
  }
}

await main();

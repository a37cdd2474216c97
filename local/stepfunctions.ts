// Local AWS Step Functions stand-in: an HTTP server speaking the AWS JSON 1.0 wire protocol that
// @aws-sdk/client-sfn uses, running executions in-process with aws-local-stepfunctions and routing
// every Lambda Task to a local invoker. With a data folder, executions are as durable as on AWS:
// each one is a file rewritten at every top-level Task and Wait (the state, its raw input, the
// retries it used, a Wait's deadline, a Task's result or error), and a restart resumes every
// execution that was running from the state it was in (a Task that may have half-run is invoked
// again, as Step Functions retries it: steps are idempotent).
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { ExecutionAbortedError, ExecutionError, ExecutionTimeoutError, StateMachine } from 'aws-local-stepfunctions';
import type { RunOptions, StateMachineDefinition } from 'aws-local-stepfunctions';
import { usage } from './metering.ts';
import { AwsError, decodeToken, encodeToken, parseInput, startAwsJsonServer, type AwsJsonOperation } from './aws-json.ts';
import type { AwsCredentials } from './sigv4.ts';
import { isRecord } from '#lib/json.ts';

export interface LocalStateMachineSpec {
  arn: string;
  name: string;
  /** ASL, DefinitionSubstitutions already applied. */
  definition: Record<string, unknown>;
}

/** Invokes a Lambda function locally; a thrown error's `name` becomes the States error name, its message the Cause. */
export type TaskInvoker = (functionArn: string, input: unknown) => Promise<unknown>;

export interface LocalStepFunctions {
  endpoint: string;
  /** Newly started executions stay RUNNING without taking any step until release(). */
  hold(): void;
  /** Lets held executions (and later ones) run. */
  release(): void;
  /** Resolves when no execution is RUNNING (held executions count as running). */
  idle(): Promise<void>;
  /**
   * Resumes the executions that were running when the data folder was last used (once; start()
   * does it unless deferResume). Resolves with how many were resumed and how many could not be
   * (those end FAILED, as AWS ends an execution it cannot continue).
   */
  resume(): { resumed: number; failed: number };
  /** Closes the server. Without a dataDir it aborts running executions; with one they stay RUNNING on disk and resume at the next start. */
  close(): Promise<void>;
}

export interface LocalStepFunctionsOptions {
  stateMachines: LocalStateMachineSpec[];
  invoke: TaskInvoker;
  /** The only credentials whose SigV4 signature its API accepts. */
  credentials: AwsCredentials;
  host?: string;
  port?: number;
  /** Multiplies Wait state durations and Retry intervals (default 1); e.g. 0.001 turns seconds into milliseconds. */
  waitScale?: number;
  log?: (line: string) => void;
  /** Told of every execution that ends, as EventBridge's "Step Functions Execution Status Change" detail. */
  onExecutionEnd?: (detail: ExecutionStatusChange) => void;
  /**
   * Where executions are kept. With it, executions survive a kill and a restart; without it they
   * live in memory and close() aborts them.
   */
  dataDir?: string;
  /** With a dataDir: do not resume the executions found there until resume() (default: at start). */
  deferResume?: boolean;
}

export interface ExecutionStatusChange {
  executionArn: string;
  stateMachineArn: string;
  name: string;
  status: 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';
  startDate: number;
  stopDate: number;
  input: string;
  output: string | null;
  error: string | null;
  cause: string | null;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Overrides = NonNullable<RunOptions['overrides']>;
type TaskHandlers = NonNullable<Overrides['taskResourceLocalHandlers']>;
type LibJson = Parameters<TaskHandlers[string]>[0];
type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';

const STATUSES = ['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED', 'PENDING_REDRIVE'] as const;
// aws-local-stepfunctions defaults a Task's TimeoutSeconds to 60 s (AWS: no practical limit) and
// setTimeout overflows past 2^31-1 ms, so Tasks without an explicit timeout get this ceiling.
const MAX_TIMER_SECONDS = 2_147_483;
const MAX_TIMER_MS = 2_147_483_647;
const WAIT_RESOURCE = 'arn:aws:states:::local:wait';
const LAMBDA_INVOKE = 'arn:aws:states:::lambda:invoke';
const LAMBDA_ARN = /^arn:(aws[a-z-]*):lambda:([a-z0-9-]+):(\d{12}):function:([A-Za-z0-9_-]{1,140})(?::(\$LATEST|[A-Za-z0-9_-]{1,128}))?$/;
const MACHINE_ARN = /^arn:(aws[a-z-]*):states:([a-z0-9-]+):(\d{12}):stateMachine:([^:\s]{1,80})$/;
const EXECUTION_ARN = /^arn:(aws[a-z-]*):states:([a-z0-9-]+):(\d{12}):execution:([^:\s]{1,80}):([^:\s]{1,80})$/;
// AWS: 1-80 chars, no whitespace, brackets, wildcards, special or control characters.
const INVALID_NAME_CHAR = /[\s<>{}[\]?*"#%\\^|~`$&,;:/\u0000-\u001f\u007f-\u009f]/u;

/** What a failed Task reports to Retry/Catch: `name` is the States error name, `message` the Cause. */
class TaskFailure extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

/** Like the library's States.Runtime: neither retryable nor catchable. */
class StatesRuntimeFailure extends Error {
  readonly isRetryable = false;
  readonly isCatchable = false;
  constructor(message: string) {
    super(message);
    this.name = 'States.Runtime';
  }
}

/** `topLevel`: a state of the machine itself (not of a Parallel branch or Map iteration): a durable execution checkpoints there. */
type TaskSpec = ({ kind: 'lambda'; functionArn: string } | { kind: 'invoke' } | { kind: 'wait' }) & { topLevel: boolean };

/**
 * Where a durable execution stands: the top-level Task or Wait state it is in and that state's raw
 * input, so that a restart can run the machine on from there.
 */
interface Checkpoint {
  state: string;
  input: Json;
  /** Retries used so far, per retrier of the state's Retry. */
  attempts: number[];
  /** A Wait state's deadline (epoch ms, already scaled). */
  waitUntil?: number;
  /** The Task returned this; the transition out of the state may not have happened yet. */
  result?: Json;
  /** The Task failed with this; its Retry or Catch decides what follows. */
  failure?: { name: string; message: string };
}

/** An execution as its file keeps it. */
interface StoredExecution {
  arn: string;
  name: string;
  stateMachineArn: string;
  input: string;
  status: ExecutionStatus;
  startDate: number;
  stopDate?: number;
  output?: string;
  error?: string;
  cause?: string;
  /** Durable executions: where it stands. */
  checkpoint?: Checkpoint;
}

// A top-level Task's Parameters are wrapped so that its handler also gets the state's raw input.
const RAW_INPUT = 'localRawInput';
const PARAMETERS = 'localParameters';
/** Finished executions kept in memory (all are on disk; DescribeExecution reads older ones from there). */
const FINISHED_IN_MEMORY = 1000;
/** Files of executions that ended longer ago than this are removed at start (AWS keeps them 90 days). */
const FINISHED_RETENTION_MS = 7 * 24 * 3600 * 1000;

interface MachineRecord {
  arn: string;
  name: string;
  partition: string;
  region: string;
  account: string;
  definition: string;
  /** The definition as it runs locally (after prepareMachine). */
  prepared: Record<string, unknown>;
  runner: StateMachine;
  tasks: Map<string, TaskSpec>;
  creationDate: number;
}

interface ExecutionRecord extends Omit<StoredExecution, 'stateMachineArn'> {
  seq: number;
  machine: MachineRecord;
  controller: AbortController;
  abortRun?: () => void;
  /** After a resume: the checkpoint whose outcome (result, failure, deadline) the state's first run replays. */
  replay?: Checkpoint;
  /** After a resume: the machine from the checkpoint's state on. */
  runner?: StateMachine;
  /** Left RUNNING on disk by close(): nothing more is recorded for it in this process. */
  detached?: boolean;
}

function toJson(value: unknown): Json {
  if (value === undefined) return null;
  const text = JSON.stringify(value);
  return text === undefined ? null : (JSON.parse(text) as Json);
}

function epochSeconds(ms = Date.now()): number {
  return ms / 1000;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) return resolve();
    let timer: NodeJS.Timeout;
    const deadline = Date.now() + ms;
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const arm = () => {
      const left = deadline - Date.now();
      if (left <= 0) {
        signal.removeEventListener('abort', onAbort);
        return resolve();
      }
      timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    arm();
  });
}

// ---------------------------------------------------------------------------------------------
// Definition preparation: works around aws-local-stepfunctions 3 gaps so executions behave as on AWS.

interface PrepareContext {
  machineName: string;
  waitScale: number;
  tasks: Map<string, TaskSpec>;
}

function registerTask(ctx: PrepareContext, stateName: string, spec: TaskSpec): void {
  const existing = ctx.tasks.get(stateName);
  if (existing && JSON.stringify(existing) !== JSON.stringify(spec)) {
    // Local Task handlers are keyed by state name across the whole machine (nested ones included).
    throw new Error(`state machine ${ctx.machineName}: state name "${stateName}" is used by two different Task/Wait states`);
  }
  ctx.tasks.set(stateName, spec);
}

function fixResultPath(holder: Record<string, unknown>): void {
  // The library writes ResultPath "$" as a literal "$" key; "$" means "replace the input", which is
  // also what it does when ResultPath is absent.
  if (holder.ResultPath === '$') delete holder.ResultPath;
}

function scaleRetries(state: Record<string, unknown>, scale: number): void {
  if (scale === 1 || !Array.isArray(state.Retry)) return;
  for (const retrier of state.Retry) {
    if (!isRecord(retrier)) continue;
    retrier.IntervalSeconds = (typeof retrier.IntervalSeconds === 'number' ? retrier.IntervalSeconds : 1) * scale;
    if (typeof retrier.MaxDelaySeconds === 'number') retrier.MaxDelaySeconds *= scale;
  }
}

function lambdaArnOf(resource: string): string | undefined {
  const m = LAMBDA_ARN.exec(resource);
  if (!m) return undefined;
  return `arn:${m[1]}:lambda:${m[2]}:${m[3]}:function:${m[4]}`;
}

function prepareMachine(definition: Record<string, unknown>, ctx: PrepareContext, where: string): void {
  if (definition.QueryLanguage === 'JSONata') {
    throw new Error(`state machine ${ctx.machineName}: ${where} uses JSONata, which aws-local-stepfunctions does not run`);
  }
  const states = definition.States;
  if (!isRecord(states)) throw new Error(`state machine ${ctx.machineName}: ${where} has no States`);
  for (const [stateName, state] of Object.entries(states)) {
    if (!isRecord(state)) continue;
    const at = `${where}.States.${stateName}`;
    if (state.QueryLanguage === 'JSONata') {
      throw new Error(`state machine ${ctx.machineName}: ${at} uses JSONata, which aws-local-stepfunctions does not run`);
    }
    fixResultPath(state);
    if (Array.isArray(state.Catch)) for (const catcher of state.Catch) if (isRecord(catcher)) fixResultPath(catcher);
    scaleRetries(state, ctx.waitScale);
    const topLevel = where === '$';
    switch (state.Type) {
      case 'Task': {
        const resource = typeof state.Resource === 'string' ? state.Resource : '';
        const functionArn = lambdaArnOf(resource);
        if (functionArn) registerTask(ctx, stateName, { kind: 'lambda', functionArn, topLevel });
        else if (resource === LAMBDA_INVOKE) registerTask(ctx, stateName, { kind: 'invoke', topLevel });
        else {
          throw new Error(`state machine ${ctx.machineName}: ${at} has Resource "${resource}"; only Lambda function ARNs and ${LAMBDA_INVOKE} run locally`);
        }
        if (topLevel) {
          // A checkpoint needs the state's raw input, which InputPath would hide from the handler.
          if (state.InputPath !== undefined)
            throw new Error(
              `state machine ${ctx.machineName}: ${at} has an InputPath; the local runtime resumes top-level Tasks from their raw input, so use Parameters instead`,
            );
          state.Parameters = { [`${RAW_INPUT}.$`]: '$', ...('Parameters' in state ? { [PARAMETERS]: state.Parameters } : {}) };
        }
        if (state.TimeoutSeconds === undefined && state.TimeoutSecondsPath === undefined) state.TimeoutSeconds = MAX_TIMER_SECONDS;
        else if (typeof state.TimeoutSeconds === 'number') state.TimeoutSeconds = Math.min(state.TimeoutSeconds, MAX_TIMER_SECONDS);
        break;
      }
      case 'Wait': {
        // Rewritten as a local Task so durations (including SecondsPath/TimestampPath ones, which the
        // library's static waitTimeOverrides cannot express) can be scaled and aborted.
        const parameters: Record<string, unknown> = { 'Input.$': '$' };
        if (state.Seconds !== undefined) parameters.Seconds = state.Seconds;
        else if (state.Timestamp !== undefined) parameters.Timestamp = state.Timestamp;
        else if (state.SecondsPath !== undefined) parameters['Seconds.$'] = state.SecondsPath;
        else if (state.TimestampPath !== undefined) parameters['Timestamp.$'] = state.TimestampPath;
        const rewritten: Record<string, unknown> = {
          Type: 'Task',
          Resource: WAIT_RESOURCE,
          Parameters: parameters,
          TimeoutSeconds: MAX_TIMER_SECONDS,
        };
        for (const key of ['Comment', 'InputPath', 'OutputPath', 'Next', 'End']) if (key in state) rewritten[key] = state[key];
        for (const key of Object.keys(state)) delete state[key];
        Object.assign(state, rewritten);
        registerTask(ctx, stateName, { kind: 'wait', topLevel });
        break;
      }
      case 'Pass':
        // The library ignores a falsy Result (0, false, "", null); Parameters yields the same value.
        if ('Result' in state && !state.Result) {
          state.Parameters = state.Result;
          delete state.Result;
        }
        break;
      case 'Parallel':
        if (Array.isArray(state.Branches)) {
          state.Branches.forEach((branch, i) => {
            if (isRecord(branch)) prepareMachine(branch, ctx, `${at}.Branches[${i}]`);
          });
        }
        break;
      case 'Map': {
        if (state.ItemReader !== undefined || state.ResultWriter !== undefined) {
          throw new Error(`state machine ${ctx.machineName}: ${at} is a distributed Map (ItemReader/ResultWriter), not supported locally`);
        }
        const processor = state.ItemProcessor ?? state.Iterator;
        if (isRecord(processor)) prepareMachine(processor, ctx, `${at}.${state.ItemProcessor ? 'ItemProcessor' : 'Iterator'}`);
        break;
      }
      default:
        break;
    }
  }
}

/**
 * Definitions the library's validator (asl-validator) passed, one empty file each named by the hash
 * of the validator's version and the definition, in the checkout's node_modules/.cache (where build
 * tools keep theirs). Validating compiles ASL's JSON schemas afresh each time (0.2-0.3 s a state
 * machine, 3 s of each start for the template's 14); a start whose definitions were already passed
 * skips it. A definition that changes is a new name, and so is validated again.
 */
const VALIDATED = (() => {
  const library = join(dirname(fileURLToPath(import.meta.resolve('aws-local-stepfunctions'))), '..');
  const versionOf = (file: string) => (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  const validator = createRequire(join(library, 'package.json')).resolve('asl-validator');
  return {
    dir: resolve(import.meta.dirname, '..', 'node_modules', '.cache', 'vnfm-local', 'asl-validated'),
    versions: `${versionOf(join(library, 'package.json'))} ${versionOf(join(dirname(validator), '..', '..', 'package.json'))}`,
  };
})();

/** The file that says the validator passed this definition. */
export function validatedMarker(definition: unknown): string {
  return join(VALIDATED.dir, createHash('sha256').update(VALIDATED.versions).update('\u0000').update(JSON.stringify(definition)).digest('hex'));
}

/** Validates a definition as written (JSONPaths, ARNs, structure) unless this one was validated before. */
function validateDefinition(spec: LocalStateMachineSpec): void {
  const marker = validatedMarker(spec.definition);
  if (existsSync(marker)) return;
  try {
    new StateMachine(structuredClone(spec.definition) as unknown as StateMachineDefinition);
  } catch (err) {
    throw new Error(`state machine ${spec.name}: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    mkdirSync(VALIDATED.dir, { recursive: true });
    writeFileSync(marker, '');
  } catch {
    // A checkout without a writable node_modules validates at every start.
  }
}

function loadMachine(spec: LocalStateMachineSpec, waitScale: number): MachineRecord {
  const m = MACHINE_ARN.exec(spec.arn);
  if (!m) throw new Error(`state machine ${spec.name}: invalid ARN ${spec.arn}`);
  const [, partition = 'aws', region = 'us-east-1', account = '000000000000', arnName = spec.name] = m;
  // Validate the definition as written before adapting it.
  validateDefinition(spec);
  const prepared = structuredClone(spec.definition);
  const ctx: PrepareContext = { machineName: spec.name, waitScale, tasks: new Map() };
  prepareMachine(prepared, ctx, '$');
  if (typeof prepared.TimeoutSeconds === 'number') prepared.TimeoutSeconds = Math.min(prepared.TimeoutSeconds, MAX_TIMER_SECONDS);
  const runner = new StateMachine(prepared as unknown as StateMachineDefinition, { validationOptions: { noValidate: true } });
  return {
    arn: spec.arn,
    name: arnName,
    partition,
    region,
    account,
    definition: JSON.stringify(spec.definition),
    prepared,
    runner,
    tasks: ctx.tasks,
    creationDate: epochSeconds(),
  };
}

// ---------------------------------------------------------------------------------------------
// Request schemas (AWS JSON 1.0 bodies as @aws-sdk/client-sfn sends them).

const schemas = {
  StartExecution: z.object({
    stateMachineArn: z.string().min(1).max(2048),
    name: z.string().optional(),
    input: z.string().optional(),
    traceHeader: z.string().optional(),
  }),
  DescribeExecution: z.object({ executionArn: z.string().min(1).max(2048), includedData: z.string().optional() }),
  StopExecution: z.object({
    executionArn: z.string().min(1).max(2048),
    error: z.string().max(256).optional(),
    cause: z.string().max(32768).optional(),
  }),
  ListExecutions: z.object({
    stateMachineArn: z.string().optional(),
    statusFilter: z.enum(STATUSES).optional(),
    maxResults: z.number().int().min(0).max(1000).optional(),
    nextToken: z.string().max(3096).optional(),
    mapRunArn: z.string().optional(),
  }),
  ListStateMachines: z.object({
    maxResults: z.number().int().min(0).max(1000).optional(),
    nextToken: z.string().max(1024).optional(),
  }),
  DescribeStateMachine: z.object({ stateMachineArn: z.string().min(1).max(2048), includedData: z.string().optional() }),
};

function parse<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  return parseInput(
    schema,
    body,
    (field, problem) => new AwsError('ValidationException', `1 validation error detected: Value at '${field}' failed to satisfy constraint: ${problem}`),
  );
}

function invalidToken(token: string): AwsError {
  return new AwsError('InvalidToken', `Invalid Token: '${token}'`);
}

// ---------------------------------------------------------------------------------------------

/** How long a Wait state (rewritten as a local Task) waits, unscaled, from its Seconds or Timestamp. */
function waitMs(stateName: string, params: Record<string, unknown>): number {
  if ('Seconds' in params) {
    const seconds = params.Seconds;
    if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 0) {
      throw new StatesRuntimeFailure(`Wait state ${stateName}: seconds must be a non-negative integer, got ${JSON.stringify(seconds)}`);
    }
    return seconds * 1000;
  }
  const timestamp = params.Timestamp;
  const at = typeof timestamp === 'string' ? Date.parse(timestamp) : NaN;
  if (Number.isNaN(at)) throw new StatesRuntimeFailure(`Wait state ${stateName}: invalid timestamp ${JSON.stringify(timestamp)}`);
  return at - Date.now();
}

/**
 * The machine run on from a checkpoint: it starts at the checkpoint's state, that state's retriers
 * have the attempts and backoff that are left, and the execution's timeout counts from its start.
 */
function runnerFrom(machine: MachineRecord, at: Checkpoint, startDate: number): StateMachine {
  const definition = structuredClone(machine.prepared);
  const states = definition.States as Record<string, Record<string, unknown>>;
  const state = states[at.state];
  if (!state) throw new Error(`its state ${at.state} is no longer in the definition of ${machine.name}`);
  definition.StartAt = at.state;
  if (Array.isArray(state.Retry)) {
    (state.Retry as Array<{ MaxAttempts?: number; IntervalSeconds?: number; BackoffRate?: number }>).forEach((retrier, i) => {
      const used = at.attempts[i] ?? 0;
      if (!used) return;
      retrier.MaxAttempts = Math.max(0, (retrier.MaxAttempts ?? 3) - used);
      retrier.IntervalSeconds = (retrier.IntervalSeconds ?? 1) * (retrier.BackoffRate ?? 2) ** used;
    });
  }
  if (typeof definition.TimeoutSeconds === 'number') definition.TimeoutSeconds = Math.max(1, definition.TimeoutSeconds - (epochSeconds() - startDate));
  return new StateMachine(definition as unknown as StateMachineDefinition, { validationOptions: { noValidate: true } });
}

export async function startLocalStepFunctions(opts: LocalStepFunctionsOptions): Promise<LocalStepFunctions> {
  const waitScale = opts.waitScale ?? 1;
  if (!(waitScale >= 0) || !Number.isFinite(waitScale)) throw new Error('waitScale must be a finite number >= 0');
  const log = opts.log ?? (() => {});
  const machines = new Map<string, MachineRecord>();
  for (const spec of opts.stateMachines) {
    if (machines.has(spec.arn)) throw new Error(`duplicate state machine ARN ${spec.arn}`);
    machines.set(spec.arn, loadMachine(spec, waitScale));
  }

  const executions = new Map<string, ExecutionRecord>();
  const held: ExecutionRecord[] = [];
  let holding = false;
  let closed = false;
  let seq = 0;
  let running = 0;
  let idleWaiters: Array<() => void> = [];
  /** Finished executions in memory, oldest first (durable executions only; see FINISHED_IN_MEMORY). */
  const finishedOrder: string[] = [];

  // --- Durability --------------------------------------------------------------------------
  const dir = opts.dataDir ? join(opts.dataDir, 'executions') : undefined;
  if (dir) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const fileOf = (machineName: string, name: string) => join(dir as string, `${machineName}.${name}.json`);
  const stored = (exec: ExecutionRecord): StoredExecution => ({
    arn: exec.arn,
    name: exec.name,
    stateMachineArn: exec.machine.arn,
    input: exec.input,
    status: exec.status,
    startDate: exec.startDate,
    ...(exec.stopDate !== undefined ? { stopDate: exec.stopDate } : {}),
    ...(exec.output !== undefined ? { output: exec.output } : {}),
    ...(exec.error !== undefined ? { error: exec.error } : {}),
    ...(exec.cause !== undefined ? { cause: exec.cause } : {}),
    ...(exec.checkpoint ? { checkpoint: exec.checkpoint } : {}),
  });
  /** Rewrites the execution's file (write and rename, so a kill leaves the old or the new one whole). */
  const persist = (exec: ExecutionRecord) => {
    if (!dir || exec.detached) return;
    const file = fileOf(exec.machine.name, exec.name);
    // No fsync: a killed process keeps what it wrote (the page cache); power loss is not the case guarded.
    writeFileSync(`${file}.tmp`, JSON.stringify(stored(exec)), { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  };
  const readStored = (file: string): StoredExecution | undefined => {
    try {
      const value = JSON.parse(readFileSync(file, 'utf8')) as StoredExecution;
      if (typeof value.arn !== 'string' || typeof value.stateMachineArn !== 'string' || typeof value.status !== 'string') throw new Error('not an execution');
      return value;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      log(`[stepfunctions] ${file} is damaged (${error instanceof Error ? error.message : String(error)}); moved aside as .damaged`);
      renameSync(file, `${file}.damaged`);
      return undefined;
    }
  };
  /** Executions that were running when the folder was last used; finished ones past retention are removed. */
  const unfinished: StoredExecution[] = [];
  if (dir) {
    for (const entry of readdirSync(dir)) {
      const file = join(dir, entry);
      if (entry.endsWith('.tmp')) {
        rmSync(file, { force: true });
        continue;
      }
      if (!entry.endsWith('.json')) continue;
      const record = readStored(file);
      if (!record) continue;
      if (record.status === 'RUNNING') unfinished.push(record);
      else if (Date.now() - (record.stopDate ?? record.startDate) * 1000 > FINISHED_RETENTION_MS || statSync(file).size === 0) rmSync(file, { force: true });
    }
    unfinished.sort((a, b) => a.startDate - b.startDate);
  }
  const forget = (exec: ExecutionRecord) => {
    if (!dir) return;
    finishedOrder.push(exec.arn);
    while (finishedOrder.length > FINISHED_IN_MEMORY) executions.delete(finishedOrder.shift() as string);
  };
  /** A finished execution no longer in memory, from its file. */
  const storedByArn = (arn: string): StoredExecution | undefined => {
    const m = EXECUTION_ARN.exec(arn);
    return dir && m ? readStored(fileOf(m[4] as string, m[5] as string)) : undefined;
  };

  const settleIdle = () => {
    if (running > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  };

  const finish = (exec: ExecutionRecord, status: Exclude<ExecutionStatus, 'RUNNING'>, fields: { output?: string; error?: string; cause?: string }) => {
    if (exec.status !== 'RUNNING' || exec.detached) return;
    exec.status = status;
    exec.stopDate = epochSeconds();
    if (fields.output !== undefined) exec.output = fields.output;
    if (fields.error !== undefined) exec.error = fields.error;
    if (fields.cause !== undefined) exec.cause = fields.cause;
    exec.controller.abort();
    persist(exec);
    // What a finished execution no longer needs: the run's closures hold the library's event log
    // (every state's input and output), and the checkpoint is on disk.
    exec.abortRun = undefined;
    exec.runner = undefined;
    exec.replay = undefined;
    exec.checkpoint = undefined;
    forget(exec);
    log(`[stepfunctions] ${exec.arn} ${status}${exec.error ? ` (${exec.error})` : ''}`);
    // Before `running` drops, so whoever waits for idle also waits for what this event starts.
    opts.onExecutionEnd?.({
      executionArn: exec.arn,
      stateMachineArn: exec.machine.arn,
      name: exec.name,
      status,
      startDate: exec.startDate * 1000,
      stopDate: (exec.stopDate ?? epochSeconds()) * 1000,
      input: exec.input,
      output: exec.output ?? null,
      error: exec.error ?? null,
      cause: exec.cause ?? null,
    });
    running--;
    settleIdle();
  };

  const invokeTask = async (exec: ExecutionRecord, functionArn: string, input: unknown): Promise<unknown> => {
    const { signal } = exec.controller;
    if (signal.aborted) throw new StatesRuntimeFailure('Execution is no longer running');
    let onAbort = () => {};
    // Settle as soon as the execution ends so the library's per-Task timeout timer is released even
    // if the invocation itself never returns.
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(new StatesRuntimeFailure('Execution is no longer running'));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return toJson(await Promise.race([opts.invoke(functionArn, toJson(input)), aborted]));
    } catch (err) {
      if (err instanceof StatesRuntimeFailure) throw err;
      if (err instanceof Error) throw new TaskFailure(err.name || 'Error', err.message);
      throw new TaskFailure('Error', String(err));
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  };

  const resolveFunctionName = (machine: MachineRecord, functionName: unknown): string => {
    if (typeof functionName !== 'string' || functionName === '') {
      throw new TaskFailure('Lambda.InvalidParameterValueException', 'FunctionName is required');
    }
    const full = lambdaArnOf(functionName);
    if (full) return full;
    const partial = /^(?:(\d{12}):function:)?([A-Za-z0-9_-]{1,140})(?::(?:\$LATEST|[A-Za-z0-9_-]{1,128}))?$/.exec(functionName);
    if (!partial) throw new TaskFailure('Lambda.InvalidParameterValueException', `Invalid FunctionName: ${functionName}`);
    return `arn:${machine.partition}:lambda:${machine.region}:${partial[1] ?? machine.account}:function:${partial[2]}`;
  };

  /** Records where the execution stands (a no-op for in-memory executions). */
  const checkpoint = (exec: ExecutionRecord, at: Checkpoint) => {
    if (!dir || exec.status !== 'RUNNING') return;
    exec.checkpoint = at;
    persist(exec);
  };

  /** The retrier of the state's Retry that the library uses for an error of this name (as its shouldRetry picks it), or -1. */
  const retriersOf = (exec: ExecutionRecord, stateName: string): Array<{ ErrorEquals: string[]; MaxAttempts?: number }> => {
    const retry = (exec.machine.prepared.States as Record<string, Record<string, unknown>>)[stateName]?.Retry;
    return Array.isArray(retry) ? retry : [];
  };

  const retrierFor = (exec: ExecutionRecord, stateName: string, errorName: string, attempts: number[]): number => {
    for (const [i, retrier] of retriersOf(exec, stateName).entries()) {
      if (retrier.ErrorEquals.some((e) => e === errorName || e === 'States.ALL' || e === 'States.TaskFailed')) {
        return (attempts[i] ?? 0) < (retrier.MaxAttempts ?? 3) ? i : -1;
      }
    }
    return -1;
  };

  /**
   * Runs a top-level Task durably: its raw input and retries are recorded before it runs, its
   * result or failure after; after a resume, its first run replays a recorded result or failure.
   */
  const durableTask = async (exec: ExecutionRecord, stateName: string, input: LibJson, run: (params: unknown) => Promise<unknown>): Promise<unknown> => {
    const wrapped = isRecord(input) ? input : {};
    const raw = (wrapped[RAW_INPUT] ?? null) as Json;
    const params = PARAMETERS in wrapped ? wrapped[PARAMETERS] : raw;
    if (!dir) return run(params);
    const replay = exec.replay?.state === stateName ? exec.replay : undefined;
    exec.replay = undefined;
    if (replay && 'result' in replay) return replay.result;
    if (replay?.failure) throw new TaskFailure(replay.failure.name, replay.failure.message);
    const previous = exec.checkpoint?.state === stateName ? exec.checkpoint : undefined;
    let attempts: number[] = retriersOf(exec, stateName).map(() => 0);
    if (previous && !('result' in previous)) {
      // Run again after a failure of this state: a retry (counted), or the same run resumed.
      attempts = [...previous.attempts];
      const i = previous.failure ? retrierFor(exec, stateName, previous.failure.name, attempts) : -1;
      if (i >= 0) attempts[i] = (attempts[i] ?? 0) + 1;
    }
    const running: Checkpoint = { state: stateName, input: raw, attempts };
    checkpoint(exec, running);
    // A run the execution has moved past (its Task timed out) must not overwrite a later checkpoint.
    const current = () => exec.checkpoint === running;
    try {
      const result = toJson(await run(params));
      if (current()) checkpoint(exec, { ...running, result });
      return result;
    } catch (error) {
      if (error instanceof TaskFailure && current()) checkpoint(exec, { ...running, failure: { name: error.name, message: error.message } });
      throw error;
    }
  };

  const buildHandlers = (exec: ExecutionRecord): TaskHandlers => {
    const handlers: TaskHandlers = {};
    for (const [stateName, spec] of exec.machine.tasks) {
      const task = (run: (params: unknown) => Promise<unknown>) => async (input: LibJson) =>
        (spec.topLevel ? await durableTask(exec, stateName, input, run) : await run(input)) as LibJson;
      switch (spec.kind) {
        case 'lambda':
          handlers[stateName] = task((params) => invokeTask(exec, spec.functionArn, params));
          break;
        case 'invoke':
          handlers[stateName] = task(async (input) => {
            const params = isRecord(input) ? input : {};
            const payload = 'Payload' in params ? params.Payload : {};
            const result = await invokeTask(exec, resolveFunctionName(exec.machine, params.FunctionName), payload);
            return { ExecutedVersion: '$LATEST', Payload: result, StatusCode: 200 };
          });
          break;
        case 'wait':
          handlers[stateName] = async (input: LibJson) => {
            const params = isRecord(input) ? input : {};
            const rawInput = (params.Input ?? null) as Json;
            // Resumed at this Wait: it ends at the recorded deadline, not one counted anew.
            const replay = spec.topLevel && exec.replay?.state === stateName ? exec.replay : undefined;
            exec.replay = undefined;
            const until = replay?.waitUntil ?? Date.now() + waitMs(stateName, params) * waitScale;
            if (spec.topLevel) checkpoint(exec, { state: stateName, input: rawInput, attempts: [], waitUntil: until });
            await sleep(until - Date.now(), exec.controller.signal);
            return rawInput as LibJson;
          };
          break;
      }
    }
    return handlers;
  };

  const begin = (exec: ExecutionRecord) => {
    if (exec.status !== 'RUNNING') return;
    const { machine } = exec;
    let run: ReturnType<StateMachine['run']>;
    try {
      const input = exec.replay ? exec.replay.input : (JSON.parse(exec.input) as Json);
      run = (exec.runner ?? machine.runner).run(input as LibJson, {
        overrides: { taskResourceLocalHandlers: buildHandlers(exec) },
        noThrowOnAbort: true,
        context: {
          Execution: { Id: exec.arn, Name: exec.name, RoleArn: `arn:${machine.partition}:iam::${machine.account}:role/local-stepfunctions` },
          StateMachine: { Id: machine.arn, Name: machine.name },
        },
      });
    } catch (err) {
      finish(exec, 'FAILED', { error: 'States.Runtime', cause: err instanceof Error ? err.message : String(err) });
      return;
    }
    exec.abortRun = run.abort;
    if (usage.enabled) void countTransitions(machine.name, run.eventLogs);
    run.result.then(
      (output) => finish(exec, 'SUCCEEDED', { output: JSON.stringify(output ?? null) }),
      (err: unknown) => {
        if (err instanceof ExecutionAbortedError) return finish(exec, 'ABORTED', {});
        if (err instanceof ExecutionTimeoutError) return finish(exec, 'TIMED_OUT', { error: 'States.Timeout', cause: 'The execution timed out' });
        const failure = err instanceof ExecutionError ? err.cause : err;
        if (failure instanceof Error) {
          // Errors the library raises itself carry isRetryable; ours are TaskFailure; anything else is a runtime fault.
          const known = failure instanceof TaskFailure || failure instanceof StatesRuntimeFailure || 'isRetryable' in failure;
          if (!known) return finish(exec, 'FAILED', { error: 'States.Runtime', cause: failure.message });
          // A Fail state without Error/Cause gets the library's defaults; AWS reports none.
          const defaultFail = failure.constructor.name === 'FailStateError';
          const error = defaultFail && failure.name === 'FailStateError' ? undefined : failure.name;
          const cause = defaultFail && failure.message === 'Execution failed because of a Fail state' ? undefined : failure.message;
          return finish(exec, 'FAILED', { ...(error !== undefined ? { error } : {}), ...(cause !== undefined ? { cause } : {}) });
        }
        return finish(exec, 'FAILED', { error: 'States.Runtime', cause: String(err) });
      },
    );
  };

  const machineByArn = (arn: string | undefined): MachineRecord => {
    if (!arn || !MACHINE_ARN.test(arn)) throw new AwsError('InvalidArn', `Invalid Arn: '${arn ?? ''}'`);
    const machine = machines.get(arn);
    if (!machine) throw new AwsError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${arn}'`);
    return machine;
  };

  /** An execution in memory, or a finished one from its file (as a record that is never run). */
  const executionByArn = (arn: string): ExecutionRecord => {
    if (!EXECUTION_ARN.test(arn)) throw new AwsError('InvalidArn', `Invalid Arn: '${arn}'`);
    const exec = executions.get(arn);
    if (exec) return exec;
    const record = storedByArn(arn);
    const machine = record ? machines.get(record.stateMachineArn) : undefined;
    if (!record || !machine) throw new AwsError('ExecutionDoesNotExist', `Execution Does Not Exist: '${arn}'`);
    return { ...record, seq: 0, machine, controller: new AbortController() };
  };

  const stop = (exec: ExecutionRecord, error?: string, cause?: string) => {
    if (exec.status !== 'RUNNING') return;
    const idx = held.indexOf(exec);
    if (idx >= 0) held.splice(idx, 1);
    const abortRun = exec.abortRun;
    finish(exec, 'ABORTED', { ...(error !== undefined ? { error } : {}), ...(cause !== undefined ? { cause } : {}) });
    abortRun?.();
  };

  const summary = (exec: ExecutionRecord) => ({
    executionArn: exec.arn,
    stateMachineArn: exec.machine.arn,
    name: exec.name,
    status: exec.status,
    startDate: exec.startDate,
    ...(exec.stopDate !== undefined ? { stopDate: exec.stopDate } : {}),
  });

  const operations: Record<string, AwsJsonOperation> = {
    StartExecution(body) {
      const req = parse(schemas.StartExecution, body);
      const machine = machineByArn(req.stateMachineArn);
      const name = req.name ?? randomUUID();
      if (name.length < 1 || name.length > 80 || INVALID_NAME_CHAR.test(name)) throw new AwsError('InvalidName', `Invalid Name: '${name}'`);
      const input = req.input ?? '{}';
      try {
        JSON.parse(input);
      } catch {
        throw new AwsError('InvalidExecutionInput', `Invalid State Machine Execution Input: '${input.slice(0, 100)}'`);
      }
      if (Buffer.byteLength(input) > 262_144) throw new AwsError('InvalidExecutionInput', 'Execution input exceeds the maximum size of 262144 bytes');
      const arn = `arn:${machine.partition}:states:${machine.region}:${machine.account}:execution:${machine.name}:${name}`;
      const existing = executions.get(arn) ?? (storedByArn(arn) ? executionByArn(arn) : undefined);
      if (existing) {
        // AWS: same name and input as an open execution is idempotent; a closed one or different input is not.
        if (existing.status === 'RUNNING' && existing.input === input) return { executionArn: existing.arn, startDate: existing.startDate };
        throw new AwsError('ExecutionAlreadyExists', `Execution Already Exists: '${arn}'`);
      }
      if (closed) throw new AwsError('ServiceUnavailable', 'The local Step Functions server is closing', 503);
      const exec: ExecutionRecord = {
        seq: ++seq,
        arn,
        name,
        machine,
        input,
        status: 'RUNNING',
        startDate: epochSeconds(),
        controller: new AbortController(),
      };
      executions.set(arn, exec);
      running++;
      persist(exec);
      log(`[stepfunctions] ${arn} RUNNING${holding ? ' (held)' : ''}`);
      if (holding) held.push(exec);
      else begin(exec);
      return { executionArn: arn, startDate: exec.startDate };
    },

    DescribeExecution(body) {
      const req = parse(schemas.DescribeExecution, body);
      const exec = executionByArn(req.executionArn);
      return {
        ...summary(exec),
        input: exec.input,
        inputDetails: { included: true },
        ...(exec.output !== undefined ? { output: exec.output, outputDetails: { included: true } } : {}),
        ...(exec.error !== undefined ? { error: exec.error } : {}),
        ...(exec.cause !== undefined ? { cause: exec.cause } : {}),
      };
    },

    StopExecution(body) {
      const req = parse(schemas.StopExecution, body);
      const exec = executionByArn(req.executionArn);
      stop(exec, req.error, req.cause);
      return { stopDate: exec.stopDate ?? epochSeconds() };
    },

    ListExecutions(body) {
      const req = parse(schemas.ListExecutions, body);
      if (req.mapRunArn !== undefined) throw new AwsError('ResourceNotFound', `Map Run Does Not Exist: '${req.mapRunArn}'`);
      if (req.stateMachineArn === undefined) throw new AwsError('ValidationException', 'Must provide a StateMachine ARN or MapRun ARN');
      const machine = machineByArn(req.stateMachineArn);
      const limit = req.maxResults || 100;
      let after = Number.POSITIVE_INFINITY;
      if (req.nextToken !== undefined) {
        const token = decodeToken(req.nextToken);
        if (token?.sm !== machine.arn || token.status !== (req.statusFilter ?? null) || typeof token.seq !== 'number') {
          throw invalidToken(req.nextToken);
        }
        after = token.seq;
      }
      const matching = [...executions.values()]
        .filter((e) => e.machine === machine && e.seq < after && (!req.statusFilter || e.status === req.statusFilter))
        .sort((a, b) => b.seq - a.seq);
      const page = matching.slice(0, limit);
      const last = page[page.length - 1];
      return {
        executions: page.map(summary),
        ...(matching.length > limit && last ? { nextToken: encodeToken({ sm: machine.arn, status: req.statusFilter ?? null, seq: last.seq }) } : {}),
      };
    },

    ListStateMachines(body) {
      const req = parse(schemas.ListStateMachines, body);
      const limit = req.maxResults || 100;
      let offset = 0;
      if (req.nextToken !== undefined) {
        const token = decodeToken(req.nextToken);
        if (typeof token?.offset !== 'number') throw invalidToken(req.nextToken);
        offset = token.offset;
      }
      const all = [...machines.values()];
      const page = all.slice(offset, offset + limit);
      return {
        stateMachines: page.map((m) => ({ stateMachineArn: m.arn, name: m.name, type: 'STANDARD', creationDate: m.creationDate })),
        ...(offset + limit < all.length ? { nextToken: encodeToken({ offset: offset + limit }) } : {}),
      };
    },

    DescribeStateMachine(body) {
      const req = parse(schemas.DescribeStateMachine, body);
      const machine = machineByArn(req.stateMachineArn);
      return {
        stateMachineArn: machine.arn,
        name: machine.name,
        status: 'ACTIVE',
        definition: machine.definition,
        roleArn: `arn:${machine.partition}:iam::${machine.account}:role/local-stepfunctions`,
        type: 'STANDARD',
        creationDate: machine.creationDate,
        loggingConfiguration: { level: 'OFF', includeExecutionData: false },
        tracingConfiguration: { enabled: false },
      };
    },
  };

  const api = await startAwsJsonServer({
    name: 'Step Functions',
    targetPrefix: 'AWSStepFunctions',
    contentType: 'application/x-amz-json-1.0',
    operations,
    signedBy: { credentials: opts.credentials, service: 'states' },
    maxBodyBytes: 8 * 1024 * 1024,
    validationErrorType: 'ValidationException',
    internalError: { type: 'InternalFailure', message: 'Internal failure' },
    onInternalError: (err) => log(`[stepfunctions] internal error: ${err instanceof Error ? err.message : String(err)}`),
    host: opts.host,
    port: opts.port,
  });
  const { endpoint } = api;
  log(`[stepfunctions] listening on ${endpoint} with ${machines.size} state machine(s)`);

  // Executions that were running when the folder was last used: RUNNING again now (so that a
  // StartExecution of the same name finds them), running on from their checkpoints at resume().
  const toResume: Array<{ exec: ExecutionRecord; problem?: string }> = [];
  for (const record of unfinished) {
    const machine = machines.get(record.stateMachineArn);
    if (!machine) {
      // Nothing to run it with: it ends as AWS ends an execution that cannot go on.
      const fallback = { arn: record.stateMachineArn, name: record.stateMachineArn.split(':').pop() ?? '' } as MachineRecord;
      toResume.push({
        exec: { ...record, seq: ++seq, machine: fallback, controller: new AbortController() },
        problem: `its state machine ${record.stateMachineArn} no longer exists`,
      });
      running++;
      continue;
    }
    const exec: ExecutionRecord = { ...record, seq: ++seq, machine, status: 'RUNNING', controller: new AbortController() };
    let problem: string | undefined;
    if (record.checkpoint) {
      try {
        exec.runner = runnerFrom(machine, record.checkpoint, record.startDate);
        exec.replay = record.checkpoint;
      } catch (error) {
        problem = error instanceof Error ? error.message : String(error);
      }
    }
    executions.set(exec.arn, exec);
    running++;
    toResume.push({ exec, ...(problem ? { problem } : {}) });
  }
  let resumed = false;

  const stepFunctions: LocalStepFunctions = {
    endpoint,
    resume() {
      const counts = { resumed: 0, failed: 0 };
      if (resumed) return counts;
      resumed = true;
      for (const { exec, problem } of toResume.splice(0)) {
        if (problem) {
          log(`[stepfunctions] ${exec.arn} cannot be resumed: ${problem}`);
          finish(exec, 'FAILED', { error: 'States.Runtime', cause: `The execution was interrupted and cannot be resumed: ${problem}` });
          counts.failed++;
          continue;
        }
        log(`[stepfunctions] ${exec.arn} resumed${exec.checkpoint ? ` at ${exec.checkpoint.state}` : ' from the start'}`);
        counts.resumed++;
        if (holding) held.push(exec);
        else begin(exec);
      }
      return counts;
    },
    hold() {
      holding = true;
    },
    release() {
      holding = false;
      for (const exec of held.splice(0)) begin(exec);
    },
    idle() {
      if (running === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const exec of executions.values()) {
        if (!dir) {
          stop(exec);
        } else if (exec.status === 'RUNNING' && !exec.detached) {
          // Kept RUNNING on disk; the next start resumes it.
          exec.detached = true;
          exec.controller.abort();
          exec.abortRun?.();
          running--;
        }
      }
      held.splice(0);
      settleIdle();
      await api.close();
    },
  };
  if (!opts.deferResume) stepFunctions.resume();
  return stepFunctions;
}

/** Step Functions bills a Standard workflow per state transition: each state entered, and each retry. */
async function countTransitions(machine: string, events: AsyncGenerator<{ type: string }>): Promise<void> {
  try {
    for await (const event of events) {
      if (event.type === 'StateEntered' || event.type === 'StateRetried') usage.transition(machine);
      else if (event.type === 'ExecutionStarted') usage.execution(machine);
    }
  } catch {
    // the run ended; what was counted stays
  }
}

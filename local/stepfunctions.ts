// Local AWS Step Functions stand-in: an HTTP server speaking the AWS JSON 1.0 wire protocol that
// @aws-sdk/client-sfn uses, running executions in-process with aws-local-stepfunctions and routing
// every Lambda Task to a local invoker.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ExecutionAbortedError, ExecutionError, ExecutionTimeoutError, StateMachine } from 'aws-local-stepfunctions';
import type { RunOptions, StateMachineDefinition } from 'aws-local-stepfunctions';
import { AwsError, decodeToken, encodeToken, parseInput, startAwsJsonServer, type AwsJsonOperation } from './aws-json.ts';

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
  /** Aborts running executions and closes the server. */
  close(): Promise<void>;
}

export interface LocalStepFunctionsOptions {
  stateMachines: LocalStateMachineSpec[];
  invoke: TaskInvoker;
  host?: string;
  port?: number;
  /** Multiplies Wait state durations and Retry intervals (default 1); e.g. 0.001 turns seconds into milliseconds. */
  waitScale?: number;
  log?: (line: string) => void;
  /** Told of every execution that ends, as EventBridge's "Step Functions Execution Status Change" detail. */
  onExecutionEnd?: (detail: ExecutionStatusChange) => void;
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

type TaskSpec = { kind: 'lambda'; functionArn: string } | { kind: 'invoke' } | { kind: 'wait' };

interface MachineRecord {
  arn: string;
  name: string;
  partition: string;
  region: string;
  account: string;
  definition: string;
  runner: StateMachine;
  tasks: Map<string, TaskSpec>;
  creationDate: number;
}

interface ExecutionRecord {
  seq: number;
  arn: string;
  name: string;
  machine: MachineRecord;
  input: string;
  status: ExecutionStatus;
  startDate: number;
  stopDate?: number;
  output?: string;
  error?: string;
  cause?: string;
  controller: AbortController;
  abortRun?: () => void;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
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
    const onAbort = () => { clearTimeout(timer); resolve(); };
    const arm = () => {
      const left = deadline - Date.now();
      if (left <= 0) { signal.removeEventListener('abort', onAbort); return resolve(); }
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
    switch (state.Type) {
      case 'Task': {
        const resource = typeof state.Resource === 'string' ? state.Resource : '';
        const functionArn = lambdaArnOf(resource);
        if (functionArn) registerTask(ctx, stateName, { kind: 'lambda', functionArn });
        else if (resource === LAMBDA_INVOKE) registerTask(ctx, stateName, { kind: 'invoke' });
        else {
          throw new Error(`state machine ${ctx.machineName}: ${at} has Resource "${resource}"; only Lambda function ARNs and ${LAMBDA_INVOKE} run locally`);
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
        registerTask(ctx, stateName, { kind: 'wait' });
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

function loadMachine(spec: LocalStateMachineSpec, waitScale: number): MachineRecord {
  const m = MACHINE_ARN.exec(spec.arn);
  if (!m) throw new Error(`state machine ${spec.name}: invalid ARN ${spec.arn}`);
  const [, partition = 'aws', region = 'us-east-1', account = '000000000000', arnName = spec.name] = m;
  // Validate the definition as written (JSONPaths, ARNs, structure) before adapting it.
  try {
    new StateMachine(structuredClone(spec.definition) as unknown as StateMachineDefinition);
  } catch (err) {
    throw new Error(`state machine ${spec.name}: ${err instanceof Error ? err.message : String(err)}`);
  }
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
  return parseInput(schema, body, (field, problem) => new AwsError('ValidationException', `1 validation error detected: Value at '${field}' failed to satisfy constraint: ${problem}`));
}

function invalidToken(token: string): AwsError {
  return new AwsError('InvalidToken', `Invalid Token: '${token}'`);
}

// ---------------------------------------------------------------------------------------------

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

  const settleIdle = () => {
    if (running > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  };

  const finish = (exec: ExecutionRecord, status: Exclude<ExecutionStatus, 'RUNNING'>, fields: { output?: string; error?: string; cause?: string }) => {
    if (exec.status !== 'RUNNING') return;
    exec.status = status;
    exec.stopDate = epochSeconds();
    if (fields.output !== undefined) exec.output = fields.output;
    if (fields.error !== undefined) exec.error = fields.error;
    if (fields.cause !== undefined) exec.cause = fields.cause;
    exec.controller.abort();
    log(`[stepfunctions] ${exec.arn} ${status}${exec.error ? ` (${exec.error})` : ''}`);
    // Before `running` drops, so whoever waits for idle also waits for what this event starts.
    opts.onExecutionEnd?.({
      executionArn: exec.arn, stateMachineArn: exec.machine.arn, name: exec.name, status,
      startDate: exec.startDate * 1000, stopDate: (exec.stopDate ?? epochSeconds()) * 1000,
      input: exec.input, output: exec.output ?? null, error: exec.error ?? null, cause: exec.cause ?? null,
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

  const buildHandlers = (exec: ExecutionRecord): TaskHandlers => {
    const handlers: TaskHandlers = {};
    for (const [stateName, spec] of exec.machine.tasks) {
      switch (spec.kind) {
        case 'lambda':
          handlers[stateName] = async (input: LibJson) => (await invokeTask(exec, spec.functionArn, input)) as LibJson;
          break;
        case 'invoke':
          handlers[stateName] = async (input: LibJson) => {
            const params = isRecord(input) ? input : {};
            const payload = 'Payload' in params ? params.Payload : {};
            const result = await invokeTask(exec, resolveFunctionName(exec.machine, params.FunctionName), payload);
            return { ExecutedVersion: '$LATEST', Payload: result, StatusCode: 200 } as LibJson;
          };
          break;
        case 'wait':
          handlers[stateName] = async (input: LibJson) => {
            const params = isRecord(input) ? input : {};
            let ms: number;
            if ('Seconds' in params) {
              const seconds = params.Seconds;
              if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 0) {
                throw new StatesRuntimeFailure(`Wait state ${stateName}: seconds must be a non-negative integer, got ${JSON.stringify(seconds)}`);
              }
              ms = seconds * 1000;
            } else {
              const timestamp = params.Timestamp;
              const at = typeof timestamp === 'string' ? Date.parse(timestamp) : NaN;
              if (Number.isNaN(at)) throw new StatesRuntimeFailure(`Wait state ${stateName}: invalid timestamp ${JSON.stringify(timestamp)}`);
              ms = at - Date.now();
            }
            await sleep(ms * waitScale, exec.controller.signal);
            return (params.Input ?? null) as LibJson;
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
      run = machine.runner.run(JSON.parse(exec.input) as LibJson, {
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

  const executionByArn = (arn: string): ExecutionRecord => {
    if (!EXECUTION_ARN.test(arn)) throw new AwsError('InvalidArn', `Invalid Arn: '${arn}'`);
    const exec = executions.get(arn);
    if (!exec) throw new AwsError('ExecutionDoesNotExist', `Execution Does Not Exist: '${arn}'`);
    return exec;
  };

  const stop = (exec: ExecutionRecord, error?: string, cause?: string) => {
    if (exec.status !== 'RUNNING') return;
    const idx = held.indexOf(exec);
    if (idx >= 0) held.splice(idx, 1);
    finish(exec, 'ABORTED', { ...(error !== undefined ? { error } : {}), ...(cause !== undefined ? { cause } : {}) });
    exec.abortRun?.();
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
      const existing = executions.get(arn);
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
    maxBodyBytes: 8 * 1024 * 1024,
    validationErrorType: 'ValidationException',
    internalError: { type: 'InternalFailure', message: 'Internal failure' },
    onInternalError: (err) => log(`[stepfunctions] internal error: ${err instanceof Error ? err.message : String(err)}`),
    host: opts.host,
    port: opts.port,
  });
  const { endpoint } = api;
  log(`[stepfunctions] listening on ${endpoint} with ${machines.size} state machine(s)`);

  return {
    endpoint,
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
      for (const exec of executions.values()) stop(exec);
      await api.close();
    },
  };
}

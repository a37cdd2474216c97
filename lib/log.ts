// Structured JSON logging through Powertools Logger (level, message, timestamp, service, and in a
// handler's invocation its cold start and Lambda request id), with secret redaction: any attribute
// whose name looks like a credential is masked and URL userinfo removed before the line is written
// (lib/redact.ts), so credentials cannot reach CloudWatch or a terminal even when a whole request or
// record is logged by mistake.
//
// Each invocation logs through a logger of its own, held in async context (inInvocation): the local
// runtime runs many functions' invocations at once in one process, so a shared logger's Lambda
// context and correlation keys (appendKeys) would land on other invocations' lines. An invocation's
// keys end with it; a warm function starts the next one without them.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger, LogLevel, LogLevelThreshold } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { redactSecrets, withoutUserinfo } from './redact.ts';
import { annotate } from './tracing.ts';

type Level = 'debug' | 'info' | 'warn' | 'error';
type Fields = Record<string, unknown>;

/** The service of lines written outside a handler's invocation (the local runtime, scripts, tests). */
export const DEFAULT_SERVICE = 'vnfm';
type PowertoolsLevel = (typeof LogLevel)[keyof typeof LogLevel];
const LEVELS = new Set<string>(Object.values(LogLevel));
/** Keys Powertools writes itself and drops from a line's fields: such a field is written as `field_<key>`. */
const RESERVED = new Set(['level', 'message', 'sampling_rate', 'service', 'timestamp']);
const MARKER = { marker: '[redacted]' };

/** LOG_LEVEL (or Powertools' POWERTOOLS_LOG_LEVEL), read at every line as before; INFO when unset or unknown. */
function levelFromEnv(): PowertoolsLevel {
  const wanted = (process.env.POWERTOOLS_LOG_LEVEL || process.env.LOG_LEVEL || 'INFO').toUpperCase();
  return LEVELS.has(wanted) ? (wanted as PowertoolsLevel) : 'INFO';
}

class VnfmLogger extends Logger {
  #coldStart = false;

  /** A logger for one invocation: the function's service and Lambda context, cold start as this process saw it. */
  forInvocation(context: Context | undefined, coldStart: boolean): VnfmLogger {
    const logger = new VnfmLogger({ serviceName: serviceOf(context), logLevel: levelFromEnv() });
    logger.#coldStart = coldStart;
    if (context) logger.addContext(context);
    return logger;
  }

  /** Powertools counts one cold start per logger; here each invocation has one, so inInvocation decides. */
  override getColdStart(): boolean {
    return this.#coldStart;
  }
}

/**
 * One invocation's logger, made at its first line or key: most invocations (a list, a read) write
 * none, and a Powertools logger is costly to make (it reads its whole configuration anew).
 */
class InvocationLog {
  #logger: VnfmLogger | undefined;
  constructor(
    private readonly context: Context | undefined,
    private readonly coldStart: boolean,
  ) {}

  get made(): VnfmLogger | undefined {
    return this.#logger;
  }

  logger(): VnfmLogger {
    this.#logger ??= root.forInvocation(this.context, this.coldStart);
    return this.#logger;
  }
}

const root = new VnfmLogger({ serviceName: DEFAULT_SERVICE, logLevel: levelFromEnv() });
const invocations = new AsyncLocalStorage<InvocationLog>();
/** Functions that had an invocation in this process: the next ones are warm. */
const warm = new Set<string>();

/**
 * The function a Lambda context belongs to, as template.yaml names it: CloudFormation names a
 * function <stack>-<LogicalId>-<suffix>, the local runtime by its logical id.
 */
export function serviceOf(context: Pick<Context, 'functionName'> | undefined): string {
  const name = context?.functionName || DEFAULT_SERVICE;
  return /(?:^|-)([A-Za-z0-9]+Function)(?:-[A-Za-z0-9]+)?$/.exec(name)?.[1] ?? name;
}

/**
 * Runs one invocation of a handler with a logger of its own: its Lambda context (none when the
 * handler is called directly) on every line, its keys dropped at its end.
 */
export function inInvocation<T>(context: Context | undefined, run: () => Promise<T>): Promise<T> {
  const service = serviceOf(context);
  // Lambda sets the initialization type (on-demand, provisioned-concurrency, snap-start); the local runtime does not.
  const initialization = process.env.AWS_LAMBDA_INITIALIZATION_TYPE ?? 'on-demand';
  const coldStart = !warm.has(service) && initialization === 'on-demand';
  warm.add(service);
  return invocations.run(new InvocationLog(context, coldStart), run);
}

/** The fields as written: redacted, reserved names moved aside. */
function fieldsOf(fields: Fields): Fields {
  const out: Fields = {};
  for (const [key, value] of Object.entries(redactSecrets(fields, MARKER))) out[RESERVED.has(key) ? `field_${key}` : key] = value;
  return out;
}

/** A key given no value (an API route without that path parameter) is not added. */
function definedOnly(fields: Fields): Fields {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

function write(level: Level, message: string, fields?: Fields): void {
  const wanted = levelFromEnv();
  // A line below the level is not redacted (nor its invocation's logger made) for nothing.
  if (LogLevelThreshold[level.toUpperCase() as PowertoolsLevel] < LogLevelThreshold[wanted]) return;
  const logger = invocations.getStore()?.logger() ?? root;
  if (logger.getLevelName() !== wanted) logger.setLogLevel(wanted);
  logger[level](withoutUserinfo(message), fieldsOf(fields ?? {}));
}

export const log = {
  debug: (message: string, fields?: Fields) => write('debug', message, fields),
  info: (message: string, fields?: Fields) => write('info', message, fields),
  warn: (message: string, fields?: Fields) => write('warn', message, fields),
  error: (message: string, fields?: Fields) => write('error', message, fields),
  /**
   * Adds correlation keys (opOccId, vnfInstanceId, ...) to every later line of the current
   * invocation; they end with it. Outside an invocation there is nothing to add them to. Where the
   * function traces, they also annotate its invocation's subsegment, so X-Ray finds its traces by them.
   */
  appendKeys: (keys: Fields) => {
    const invocation = invocations.getStore();
    if (!invocation) return;
    const defined = definedOnly(keys);
    if (Object.keys(defined).length === 0) return;
    annotate(defined);
    invocation.logger().appendKeys(fieldsOf(defined));
  },
  /** Removes correlation keys from the current invocation's later lines (a logger not made yet has none). */
  removeKeys: (names: string[]) => invocations.getStore()?.made?.removeKeys(names),
};

// What the local runtime would be billed for on AWS, counted as it runs (`npm run cost` reads it
// through GET /_local/usage): Lambda invocations and their duration at each function's memory
// size, Step Functions state transitions, API Gateway requests, every AWS API call the handlers
// make (by service and operation), DynamoDB capacity units as DynamoDB computes them (dynalite
// reports them when asked), and the bytes the functions log. Off unless the runtime is started
// with metering on (VNFM_METER=1): then DynamoDB requests are asked for their consumed capacity,
// which changes nothing else.

export interface LambdaUsage {
  invocations: number;
  /** Sum of each invocation's duration, rounded up to 1 ms as Lambda bills it. */
  billedMs: number;
  memoryMb: number;
}

export interface UsageSnapshot {
  since: string;
  lambda: Record<string, LambdaUsage>;
  /** State transitions (states entered, retries included) by state machine. */
  transitions: Record<string, number>;
  executions: Record<string, number>;
  /** HTTP API requests that reached a route. */
  apiRequests: number;
  /** AWS API calls by `service:Operation`. */
  calls: Record<string, number>;
  dynamodb: {
    /** Read and write request units of the tables themselves (strongly consistent reads count double). */
    readUnits: number;
    writeUnits: number;
    /** Write units the tables' global secondary indexes add (each index written with the item; an upper bound: every write is taken to touch every index). */
    indexWriteUnits: number;
  };
  /** Bytes written to the log by the functions (CloudWatch Logs ingestion), plus Lambda's own START/END/REPORT lines. */
  logBytes: number;
}

/** Each Lambda invocation adds START, END and REPORT lines of about this many bytes to its log group. */
const PLATFORM_LOG_BYTES = 330;

export interface IndexShape {
  projection: 'ALL' | 'KEYS_ONLY' | 'INCLUDE';
}

export class Usage {
  enabled = false;
  #snapshot: UsageSnapshot = Usage.#empty();
  /** Global secondary indexes by table name, for the index write units. */
  readonly indexes = new Map<string, IndexShape[]>();

  static #empty(): UsageSnapshot {
    return {
      since: new Date().toISOString(),
      lambda: {},
      transitions: {},
      executions: {},
      apiRequests: 0,
      calls: {},
      dynamodb: { readUnits: 0, writeUnits: 0, indexWriteUnits: 0 },
      logBytes: 0,
    };
  }

  reset(): void {
    this.#snapshot = Usage.#empty();
  }

  snapshot(): UsageSnapshot {
    return structuredClone(this.#snapshot);
  }

  lambda(name: string, ms: number, memoryMb: number): void {
    if (!this.enabled) return;
    const entry = (this.#snapshot.lambda[name] ??= { invocations: 0, billedMs: 0, memoryMb });
    entry.invocations += 1;
    entry.billedMs += Math.max(1, Math.ceil(ms));
    this.#snapshot.logBytes += PLATFORM_LOG_BYTES;
  }

  transition(machine: string, count = 1): void {
    if (!this.enabled) return;
    this.#snapshot.transitions[machine] = (this.#snapshot.transitions[machine] ?? 0) + count;
  }

  execution(machine: string): void {
    if (!this.enabled) return;
    this.#snapshot.executions[machine] = (this.#snapshot.executions[machine] ?? 0) + 1;
  }

  apiRequest(): void {
    if (this.enabled) this.#snapshot.apiRequests += 1;
  }

  call(service: string, operation: string): void {
    if (!this.enabled) return;
    const key = `${service}:${operation}`;
    this.#snapshot.calls[key] = (this.#snapshot.calls[key] ?? 0) + 1;
  }

  log(bytes: number): void {
    if (this.enabled) this.#snapshot.logBytes += bytes;
  }

  /** A DynamoDB answer's ConsumedCapacity (one object or, for batches, a list). */
  dynamoCapacity(operation: string, consumed: unknown): void {
    if (!this.enabled) return;
    const list = Array.isArray(consumed) ? consumed : consumed ? [consumed] : [];
    const write = WRITES.has(operation);
    for (const entry of list as Array<{ TableName?: string; CapacityUnits?: number }>) {
      const units = Number(entry.CapacityUnits ?? 0);
      if (write) {
        this.#snapshot.dynamodb.writeUnits += units;
        for (const index of this.indexes.get(entry.TableName ?? '') ?? []) {
          // An index projecting only keys is written with the keys alone: one unit.
          this.#snapshot.dynamodb.indexWriteUnits += index.projection === 'KEYS_ONLY' ? Math.min(units, 1) : units;
        }
      } else {
        this.#snapshot.dynamodb.readUnits += units;
      }
    }
  }
}

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

/** The runtime's one meter (the runtime is one process; so are its counts). */
export const usage = new Usage();

/**
 * Counts the functions' log lines (the JSON lines lib/log.ts writes to stdout and stderr) while
 * metering is on; the runtime's and simulators' own lines are not the functions' and are left out.
 */
export function meterLogs(): void {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      const text = typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk).toString('utf8') : '';
      if (text.startsWith('{"level"')) usage.log(Buffer.byteLength(text));
      return write(chunk, ...rest);
    }) as typeof stream.write;
  }
}

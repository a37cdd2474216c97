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
    /** Write units the tables' global secondary indexes add, as DynamoDB counts them from the item before and after each write (indexWriteUnitsOf). */
    indexWriteUnits: number;
  };
  /** Bytes written to the log by the functions (CloudWatch Logs ingestion), plus Lambda's own START/END/REPORT lines. */
  logBytes: number;
}

/** Each Lambda invocation adds START, END and REPORT lines of about this many bytes to its log group. */
const PLATFORM_LOG_BYTES = 330;

export interface IndexShape {
  name: string;
  /** The index's key attributes (hash, then range). */
  keys: string[];
  /** The table's key attributes, in every index item. */
  tableKeys: string[];
  projection: 'ALL' | 'KEYS_ONLY' | 'INCLUDE';
  /** INCLUDE: the non-key attributes projected. */
  include: string[];
}

type StoredItem = Record<string, unknown>;

/** DynamoDB's item size (attribute names and values), near enough for write units: the JSON of each value. */
function writeUnits(item: StoredItem): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) bytes += Buffer.byteLength(name) + Buffer.byteLength(JSON.stringify(value));
  return Math.max(1, Math.ceil(bytes / 1024));
}

/**
 * The write units one item write costs an index, as DynamoDB charges them: nothing when the item is
 * in the index neither before nor after (a sparse index) or its projection did not change; the
 * projected item's size when it enters, leaves or changes in place; both when its index key changed.
 */
export function indexWriteUnitsOf(index: IndexShape, before: StoredItem | undefined, after: StoredItem | undefined): number {
  const inIndex = (item: StoredItem | undefined): item is StoredItem => item !== undefined && index.keys.every((key) => item[key] !== undefined);
  const projected = (item: StoredItem): StoredItem => {
    if (index.projection === 'ALL') return item;
    const names = new Set([...index.tableKeys, ...index.keys, ...(index.projection === 'INCLUDE' ? index.include : [])]);
    return Object.fromEntries(Object.entries(item).filter(([name]) => names.has(name)));
  };
  const was = inIndex(before) ? projected(before) : undefined;
  const is = inIndex(after) ? projected(after) : undefined;
  if (!was && !is) return 0;
  if (!was) return writeUnits(is as StoredItem);
  if (!is) return writeUnits(was);
  const keyOf = (item: StoredItem) => JSON.stringify(index.keys.map((key) => item[key]));
  if (keyOf(was) !== keyOf(is)) return writeUnits(was) + writeUnits(is);
  return JSON.stringify(was) === JSON.stringify(is) ? 0 : Math.max(writeUnits(was), writeUnits(is));
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
    for (const entry of list as Array<{ TableName?: string; CapacityUnits?: number; GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }> }>) {
      const units = Number(entry.CapacityUnits ?? 0);
      if (write) {
        this.#snapshot.dynamodb.writeUnits += units;
        if (entry.GlobalSecondaryIndexes) {
          // Counted from the item before and after (meterIndexWrites).
          for (const index of Object.values(entry.GlobalSecondaryIndexes)) this.#snapshot.dynamodb.indexWriteUnits += Number(index.CapacityUnits ?? 0);
          continue;
        }
        // A batch: an upper bound, every index written with the item (an index of keys alone with one unit).
        for (const index of this.indexes.get(entry.TableName ?? '') ?? []) {
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

/**
 * Teaches the local DynamoDB (dynalite, whose capacity answers name the table only) to answer the
 * write units of each global secondary index a write touched, from the item before and after, as
 * DynamoDB's ConsumedCapacity.GlobalSecondaryIndexes does; the meter adds those instead of taking
 * every write to touch every index. `db` is dynalite's db module, whose addConsumedCapacity each
 * single-item write calls with the item before and after.
 */
export function meterIndexWrites(db: { addConsumedCapacity: ((...args: unknown[]) => unknown) & { metered?: true } }): void {
  if (db.addConsumedCapacity.metered) return;
  const original = db.addConsumedCapacity;
  db.addConsumedCapacity = (data: unknown, isRead: unknown, before: unknown, after: unknown) => {
    const consumed = original(data, isRead, before, after) as Record<string, unknown> | undefined;
    const table = (data as { TableName?: string }).TableName ?? '';
    const indexes = usage.indexes.get(table);
    if (!consumed || isRead || !indexes?.length) return consumed;
    consumed.GlobalSecondaryIndexes = Object.fromEntries(
      indexes.map((index) => [index.name, { CapacityUnits: indexWriteUnitsOf(index, before as StoredItem | undefined, after as StoredItem | undefined) }]),
    );
    return consumed;
  };
  db.addConsumedCapacity.metered = true;
}

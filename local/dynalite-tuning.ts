// Cheaper requests to the local DynamoDB (dynalite 4), with every answer as it was. Seven patches,
// made through dynalite's module exports as local/dynamodb.ts makes its own, each checked at start
// against the internals it relies on (a dynalite that changed them fails the start, loudly):
//
// - The table descriptions in memory. dynalite's store.getTable read the table's description from
//   LevelDB and JSON-parsed it on every request (VnfInstancesTable's, with its 7 global secondary
//   indexes), through LevelDB's thread pool and a promise chain. The item operations
//   (GetItem, PutItem, UpdateItem, DeleteItem, Query, Scan, BatchGetItem, BatchWriteItem: the
//   calls that pass getTable a status check) now get it from a map. They only read it (checked
//   against dynalite 4.0.0's actions and db/index.js; test/unit/local/dynalite-tuning.test.ts
//   compares the cached description with the stored one after each of them), so they share one
//   object. The table operations (CreateTable, UpdateTable, DeleteTable, DescribeTable, the tag
//   calls: getTable without a status check, and CreateTable's own tableDb.get) still read LevelDB
//   and get an object of their own, which UpdateTable and DeleteTable change before they store it.
//   Every write of a description (tableDb put/del/batch: the table operations, and the status
//   changes their timers write afterwards) drops the table's entry when it starts and again when it
//   ends, and a read fills the map only if no write of that table started or ended while it read,
//   so the map never holds a description older than LevelDB's. A table still CREATING or DELETING,
//   a table not found and a closing database all take dynalite's own path, with its own errors.
// - The x-amz-crc32 header of each response with zlib.crc32 (native) instead of buffer-crc32's JS
//   loop: the same number for every string and Buffer (checked at start); anything else (and a
//   Buffer as the previous value) still goes to buffer-crc32, whose module yazl shares.
// - One LevelDB batch per item write. dynalite's updateIndexes wrote each index entry of a PutItem,
//   UpdateItem or DeleteItem on its own (a put or del per secondary index, then the item's put or
//   del): VnfInstancesTable's create was eight LevelDB writes, each a round trip to libuv's thread
//   pool (a thread woken, then the event loop: on a small VM the costliest part of a write). Now the
//   index entries and the item go to LevelDB as one batch, atomic as DynamoDB's own write of an item
//   and its indexes is (a kill between two of the old writes could leave an index entry without its
//   item). An index entry the write leaves as it was (same key, same projected attributes of a
//   KEYS_ONLY or INCLUDE index) is not written again. The three actions call updateIndexes and, in
//   its callback and in the same turn, their item's put or del (checked against dynalite 4.0.0's
//   actions): updateIndexes hands its entries over, and that put or del writes them with the item.
// - Item reads without the thread pool. Every GetItem and BatchGetItem key, and the read of the
//   item before each PutItem, UpdateItem and DeleteItem (its condition, its old index entries), was
//   a LevelDB get through libuv's thread pool; it is now LevelDB's synchronous get (classic-level's
//   getSync: a lookup in the memtable or the block cache, or a read of a table file the OS has
//   cached), answered in a later turn as before. What a get sees is unchanged: a write is visible
//   once its batch has completed, and dynalite's per-item lock orders its writes' reads as before.
// - Query and Scan pages read straight from a LevelDB iterator. dynalite's queryTable piped the
//   iterator's values through a Readable and three stages of the `lazy` library (an event per item
//   at each stage: ~0.7 ms of the stand-ins thread's ~1.9 ms for a list page of 100, and much of its
//   garbage). It now takes the same values (the same range, through the same sub-database prefixing)
//   in pages of LevelDB's own nextv and stops at the same item: the page's Limit or 1 MB, counted as
//   dynalite counts them; the filter, the projection, LastEvaluatedKey, the counts and the consumed
//   capacity are then dynalite's own code's, applied as it applied them. A Query of a local
//   secondary index for attributes it does not project (dynalite fetches those from the table, item
//   by item) still takes dynalite's path. Eight paired runs (the previous commit's runtime and this
//   one, alternating; 2,000 first pages of 100 instances each, one client): stand-ins thread CPU
//   2.04 -> 1.66 ms a page, all the runtime's threads 6.04 -> 4.63 ms (V8's GC helpers most of the
//   rest), list p50 5.33 -> 4.52 ms. Values are read as their JSON text and decoded through a cache
//   of decoded values by that text (at most DECODED_CHARS of it, values of at most
//   DECODED_VALUE_CHARS, the least recently read dropped):
//   a page read again (a list polled) parses and sizes nothing again. Query of 100 items
//   (bench/dynamodb-requests.ts, four alternating pairs): median 2.96 -> 2.44 ms on average.
// - Expressions parsed once. dynalite parsed every request's update, condition, key condition,
//   filter and projection expressions with its PEG grammars (~0.1-0.2 ms of the stand-ins thread
//   for an instance create's writes, ~0.04 ms for a list page's Query). What that parse sets on the
//   request (its syntax trees) follows from the expressions, their attribute names, and of the
//   values only their types (which the grammars check) and the objects themselves (which the trees
//   hold where the expression names them), except for two checks that read what a value holds:
//   attribute_type's type name and BETWEEN's order of its bounds. So an expression set that
//   validated is kept, per its expressions, names and the types of its values (per the values
//   themselves for a set with attribute_type or BETWEEN), and each later request with the same gets
//   its own deep copy of the trees, with its own value objects where the kept set's were (dynalite
//   changes a key condition's tree as it reads it), after the check of each value validateExpressions
//   makes before it parses (a number that is not one, say), with its words. An update that sets a
//   timestamp is kept as well as a condition without values. At most EXPRESSION_CACHE sets are
//   kept, the least recently used dropped, each of at most EXPRESSION_KEY_CHARS (a few MB in all at
//   most). A set whose expressions do not validate is parsed each time. Timed as a loop over
//   validateExpressions in one process: `attribute_not_exists(id)`, a create's condition, 63-85 us
//   parsed, 2-3 us kept; a list page's key condition and 11-attribute projection 35-37 us parsed,
//   6 us kept. The updates kept too (a package taken into use on each instance create), four
//   paired runs of 3,000 creates by 8 clients: stand-ins thread 1.77 -> 1.64 ms a create, 334 ->
//   345 creates/s.
// - Live item counts. dynalite's DescribeTable answered the ItemCount CreateTable stored, 0 for
//   ever, so the local runtime's count of its records (manifest.json, at start and every 5 minutes:
//   local/data-check.ts) was a Scan of every table, ~2-3 s of this thread at 100,000 instances and
//   op occs, each page holding the API's requests behind it, and each count leaving the last table
//   files it read mapped (80-100 MiB of RSS). The store now counts each table's items once as it
//   opens (their keys only, ~0.2 s at 200,000 items; every request waits for it), and each item
//   write since then counts +1 (an item that was not there) or -1 (an item deleted) once its batch
//   is written; the table operations' descriptions (DescribeTable, UpdateTable, DeleteTable) carry
//   that count as their ItemCount, as DynamoDB's do (where it is refreshed every six hours or so).
//
// The table cache is pinned to the dynalite it was checked against (CHECKED_DYNALITE): another
// version fails the start until its actions are read again.
//
// Measured with bench/dynamodb-requests.ts (raw SDK calls from another process, medians of 600, three
// alternating runs each on the shared 2-core box; with the SigV4 signing-key cache of local/sigv4.ts):
// Query of 0 items 1.47 -> 1.40 ms (runtime CPU 0.97 -> 0.83 ms a call), 1 item 1.43 -> 1.37 ms
// (1.01 -> 0.87), 100 items 2.97 -> 2.81 ms (2.39 -> 2.28), GetItem 1.08 -> 1.03 ms (0.51 -> 0.45).
// The synchronous item reads, the same way (one run each): GetItem 1.04 -> 0.95 ms (stand-ins CPU
// 0.70 -> 0.55 ms a call), PutItem 0.97 -> 0.94 ms, Query of 100 items 2.74 -> 2.48 ms.
import { createRequire } from 'node:module';
import { crc32 as nativeCrc32 } from 'node:zlib';

type Callback = (err: unknown, value?: unknown) => void;
type GetTable = (name: string, checkStatus: unknown, cb?: Callback) => void;

interface TableDb {
  get: (key: string, cb?: Callback) => unknown;
  put: (key: string, value: unknown, cb?: Callback) => unknown;
  del: (key: string, cb?: Callback) => unknown;
  batch: (operations: Array<{ key: string }>, cb?: Callback) => unknown;
  [tuned]?: true;
}

/** The part of dynalite's store (db/index.js create()) the patches use. */
export interface DynaliteStore {
  getTable: GetTable;
  tableDb: TableDb;
  lifecycleManager: { getState(): string };
  /** The main LevelDB (every sub-database's keys carry its prefix), with dynalite's callback methods. */
  db?: {
    batch: (operations: BatchOperation[], cb: Callback) => unknown;
    get?: (key: string, cb?: Callback) => unknown;
    getSync?: (key: string) => unknown;
    status?: string;
    supports?: { getSync?: boolean };
    createValueStream?: (options: Record<string, unknown>) => unknown;
    values?: (options: Record<string, unknown>) => { nextv(size: number): Promise<unknown[]>; close(): Promise<void> };
    keys?: (options: Record<string, unknown>) => { nextv(size: number): Promise<string[]>; close(): Promise<void> };
  };
  getItemDb?: (tableName: string) => ItemDb;
  getIndexDb?: (kind: string, tableName: string, indexName: string) => SubDb;
}

type Item = Record<string, unknown>;
type BatchOperation = { type: 'put'; key: string; value: Item } | { type: 'del'; key: string };

/** A table's item sub-database as dynalite's actions use it. */
interface ItemDb {
  put: (key: string, value: Item, cb: Callback) => unknown;
  del: (key: string, cb: Callback) => unknown;
  [tuned]?: true;
}

interface IndexDescription {
  IndexName: string;
  Projection?: { ProjectionType?: string };
}

interface TableDescription {
  TableName: string;
  LocalSecondaryIndexes?: IndexDescription[];
  GlobalSecondaryIndexes?: IndexDescription[];
}

/** dynalite's db module (db/index.js), as far as the batched item writes and the direct pages use it. */
interface DynaliteDbModule {
  queryTable: QueryTable;
  itemSize: (item: Item, compress?: boolean, addMetaSize?: boolean, rangeKey?: string) => number;
  matchesExprFilter: (item: Item, expression: unknown) => boolean;
  matchesFilter: (item: Item, filter: unknown, conditionalOperator: unknown) => boolean;
  mapPaths: (paths: unknown, item: Item) => Item;
  updateIndexes: (store: DynaliteStore, table: TableDescription, existing: Item | null | undefined, item: Item | null | undefined, cb: Callback) => void;
  getIndexActions: (
    indexes: IndexDescription[],
    existing: Item | null | undefined,
    item: Item | null | undefined,
    table: TableDescription,
  ) => { puts: Array<{ index: string; key: string; item: Item }>; deletes: Array<{ index: string; key: string }> };
}

/** A Query's or Scan's request as dynalite's actions leave it for queryTable (the parsed expressions included). */
interface PageRequest {
  TableName: string;
  IndexName?: string;
  Limit?: number;
  Select?: string;
  ConsistentRead?: boolean;
  ReturnConsumedCapacity?: string;
  QueryFilter?: unknown;
  ScanFilter?: unknown;
  ConditionalOperator?: unknown;
  AttributesToGet?: unknown;
  _filter?: { expression: unknown };
  _projection?: { paths: unknown };
}

type QueryTable = (
  store: DynaliteStore,
  table: TableDescription & { KeySchema: Array<{ AttributeName: string }> },
  data: PageRequest,
  opts: Record<string, unknown>,
  isLocal: boolean,
  fetchFromItemDb: boolean,
  startKeyNames: string[],
  cb: Callback,
) => void;

/** A sub-database of dynalite's (db/index.js createPrefixedDbWrapper): its keys carry a prefix in the main LevelDB. */
interface SubDb {
  createValueStream: (options: Record<string, unknown>) => unknown;
}

const tuned = Symbol('vnfm.dynaliteTuned');
/** The dynalite whose actions and db/index.js the table cache was checked against. */
const CHECKED_DYNALITE = '4.0.0';

function expectFunction(owner: object, name: string, where: string): void {
  if (typeof (owner as Record<string, unknown>)[name] !== 'function')
    throw new Error(`dynalite is not as local/dynalite-tuning.ts expects: ${where}.${name} is not a function`);
}

/**
 * Tunes one dynalite store (db/index.js create()'s result) and, once per process, its expression
 * parsing and its HTTP handler's checksum. Its Query and Scan pages are directPages' (called with the
 * iterator's step by local/dynamodb.ts).
 */
export function tuneDynalite(store: DynaliteStore): void {
  cacheExpressions(true);
  cacheTableDescriptions(store);
  batchItemWrites(store);
  liveItemCounts(store);
  synchronousReads(store);
  nativeResponseChecksums();
}

/**
 * Reads a key with LevelDB's synchronous get instead of a round trip through libuv's thread pool
 * (see the head of this file). The callback still comes in a later turn, as dynalite's did; a
 * database not open, or a read that throws, takes dynalite's own path with its own errors.
 */
export function synchronousReads(store: DynaliteStore): void {
  const main = store.db;
  if (!main || typeof main.get !== 'function' || typeof main.getSync !== 'function' || main.supports?.getSync !== true)
    throw new Error('dynalite is not as local/dynalite-tuning.ts expects: its LevelDB has no get, or no getSync');
  const get = main.get;
  main.get = (key, cb) => {
    if (typeof cb !== 'function' || main.status !== 'open' || store.lifecycleManager.getState() !== 'open') return get.call(main, key, cb);
    let value: unknown;
    try {
      value = (main.getSync as (key: string) => unknown).call(main, key);
    } catch {
      return get.call(main, key, cb);
    }
    setImmediate(cb, null, value);
  };
}

/**
 * Serves getTable(name, checkStatus truthy, cb) from memory. The cached object is one the item
 * operations share and only read; see the head of this file.
 */
export function cacheTableDescriptions(store: DynaliteStore): void {
  // The cache is right only while every write of a description goes through store.tableDb, as in the
  // dynalite whose actions were read for it: another version is to be read again, not trusted.
  const { version } = createRequire(import.meta.url)('dynalite/package.json') as { version: string };
  if (version !== CHECKED_DYNALITE)
    throw new Error(
      `local/dynalite-tuning.ts was checked against dynalite ${CHECKED_DYNALITE}, not ${version}: read its actions again before caching its tables`,
    );
  for (const name of ['getTable'] as const) expectFunction(store, name, 'store');
  if (!store.tableDb || typeof store.lifecycleManager?.getState !== 'function')
    throw new Error('dynalite is not as local/dynalite-tuning.ts expects: the store has no tableDb or lifecycleManager.getState');
  for (const name of ['get', 'put', 'del', 'batch'] as const) expectFunction(store.tableDb, name, 'store.tableDb');
  // getTable(name, cb) treats the callback as the status check (truthy): the item operations' call.
  if (store.getTable.length !== 3) throw new Error('dynalite is not as local/dynalite-tuning.ts expects: store.getTable(name, checkStatus, cb)');
  const tableDb = store.tableDb;
  if (tableDb[tuned]) throw new Error('dynalite store tuned twice');
  tableDb[tuned] = true;

  const cache = new Map<string, { TableStatus?: unknown }>();
  /** Per table, bumped at the start and at the end of each write of its description. */
  const writes = new Map<string, number>();
  let allWrites = 0; // batches (dynalite makes none on tableDb, but they would count)
  const writeCount = (name: string) => `${allWrites}/${writes.get(name) ?? 0}`;
  const written = (name: string) => {
    writes.set(name, (writes.get(name) ?? 0) + 1);
    cache.delete(name);
  };
  const writtenAll = () => {
    allWrites += 1;
    cache.clear();
  };

  /** Calls `write`, marking the write (`mark`) when it starts and again when it ends, however it ends. */
  const counted = (mark: () => void, write: (cb?: Callback) => unknown, cb: Callback | undefined): unknown => {
    mark();
    if (typeof cb === 'function') {
      try {
        return write((err, value) => {
          mark();
          cb(err, value);
        });
      } catch (error) {
        mark();
        throw error;
      }
    }
    let result: unknown;
    try {
      result = write();
    } finally {
      if (!(result instanceof Promise)) mark();
    }
    if (result instanceof Promise) result.then(mark, mark);
    return result;
  };
  const { put, del, batch } = tableDb;
  tableDb.put = (key, value, cb) =>
    counted(
      () => written(key),
      (done) => put.call(tableDb, key, value, done),
      cb,
    );
  tableDb.del = (key, cb) =>
    counted(
      () => written(key),
      (done) => del.call(tableDb, key, done),
      cb,
    );
  tableDb.batch = (operations, cb) => counted(writtenAll, (done) => batch.call(tableDb, operations, done), cb);

  const getTable = store.getTable;
  store.getTable = function cachedGetTable(name, checkStatus, cb) {
    const callback = (typeof checkStatus === 'function' ? checkStatus : cb) as Callback;
    // Without the status check the caller may change the description before storing it: its own copy, from LevelDB.
    if (!checkStatus || store.lifecycleManager.getState() !== 'open') return getTable.call(this, name, checkStatus, cb);
    const table = cache.get(name);
    if (table) {
      // dynalite answers the callback from a later turn of the event loop, never synchronously.
      queueMicrotask(() => callback(null, table));
      return;
    }
    const before = writeCount(name);
    // (With a function for checkStatus, dynalite would call that function instead of this callback.)
    getTable.call(this, name, true, (err: unknown, found?: unknown) => {
      const description = found as { TableStatus?: unknown } | undefined;
      if (!err && description?.TableStatus === 'ACTIVE' && writeCount(name) === before && store.lifecycleManager.getState() === 'open')
        cache.set(name, description);
      callback(err, found);
    });
  };
}

/**
 * What an item write hands to its item's put or del (see the head of this file), by store: its index
 * entries, and how it changes its table's item count (+1 for an item that was not there, -1 for one
 * deleted). Set by updateIndexes just before it calls back, taken by the put or del that callback makes.
 */
interface HandedOver {
  writes: BatchOperation[];
  table: string;
  added: number;
}
const handedOver = new WeakMap<DynaliteStore, HandedOver>();

/** The LevelDB writes of an item's secondary index entries, as dynalite's updateIndexes made them one by one. */
function indexWrites(db: DynaliteDbModule, table: TableDescription, existing: Item | null | undefined, item: Item | null | undefined): BatchOperation[] {
  const writes: BatchOperation[] = [];
  for (const kind of ['Local', 'Global'] as const) {
    const indexes = table[`${kind}SecondaryIndexes`] ?? [];
    if (indexes.length === 0) continue;
    // dynalite's sub-database of an index (db/index.js getIndexDb): its keys' prefix in the main LevelDB.
    const prefix = (index: string) => `index-${kind.toLowerCase()}~${table.TableName}~${index}~`;
    const actions = db.getIndexActions(indexes, existing, item, table);
    for (const removed of actions.deletes) writes.push({ type: 'del', key: prefix(removed.index) + removed.key });
    // What the item had in each index before this write: an entry left as it was is not written again.
    const before = existing && item ? new Map(db.getIndexActions(indexes, undefined, existing, table).puts.map((put) => [put.index, put])) : undefined;
    const projections = new Map(indexes.map((index) => [index.IndexName, index.Projection?.ProjectionType]));
    for (const put of actions.puts) {
      const had = before?.get(put.index);
      // An ALL projection holds the whole item, which a write changes: only the smaller projections are compared.
      if (had && had.key === put.key && projections.get(put.index) !== 'ALL' && JSON.stringify(had.item) === JSON.stringify(put.item)) continue;
      writes.push({ type: 'put', key: prefix(put.index) + put.key, value: put.item });
    }
  }
  return writes;
}

/** Writes an item's index entries with the item, in one LevelDB batch (see the head of this file). */
export function batchItemWrites(store: DynaliteStore): void {
  const db = createRequire(import.meta.url)('dynalite/db') as DynaliteDbModule & { [tuned]?: true };
  for (const name of ['updateIndexes', 'getIndexActions'] as const) expectFunction(db, name, "require('dynalite/db')");
  const main = store.db;
  const getItemDb = store.getItemDb;
  if (!main || typeof main.batch !== 'function' || typeof getItemDb !== 'function')
    throw new Error('dynalite is not as local/dynalite-tuning.ts expects: the store has no db.batch or getItemDb');

  if (!db[tuned]) {
    db[tuned] = true;
    db.updateIndexes = (owner, table, existing, item, cb) => {
      if (!existing && !item) return cb(null);
      let writes: BatchOperation[];
      try {
        writes = indexWrites(db, table, existing, item);
      } catch (error) {
        return cb(error);
      }
      const added = (item ? 1 : 0) - (existing ? 1 : 0);
      if (writes.length === 0 && added === 0) return cb(null);
      if (!owner.db) return cb(new Error('dynalite store without its LevelDB'));
      const handed: HandedOver = { writes, table: table.TableName, added };
      handedOver.set(owner, handed);
      try {
        cb(null);
      } finally {
        // Not taken (no action of dynalite 4.0.0 leaves it): written on their own, as before.
        if (handedOver.get(owner) === handed) {
          handedOver.delete(owner);
          if (writes.length > 0) owner.db.batch(writes, () => undefined);
        }
      }
    };
  }

  store.getItemDb = (tableName) => {
    const itemDb = getItemDb.call(store, tableName);
    if (itemDb[tuned]) return itemDb;
    itemDb[tuned] = true;
    // dynalite's sub-database of a table's items (db/index.js getItemDb): its keys' prefix in the main LevelDB.
    const prefix = `item-${tableName}~`;
    const { put, del } = itemDb;
    /** The item's write (`alone`, as dynalite makes it, when it has no index entries), then its count. */
    const withIndexes = (write: BatchOperation, alone: (cb: Callback) => unknown, cb: Callback): unknown => {
      const handed = handedOver.get(store);
      if (!handed) return alone(cb);
      handedOver.delete(store);
      const counted: Callback = (err, value) => {
        if (!err) countAdded(store, handed.table, handed.added);
        cb(err, value);
      };
      if (handed.writes.length === 0) return alone(counted);
      return main.batch([...handed.writes, write], counted);
    };
    itemDb.put = (key, value, cb) => withIndexes({ type: 'put', key: prefix + key, value }, (done) => put.call(itemDb, key, value, done), cb);
    itemDb.del = (key, cb) => withIndexes({ type: 'del', key: prefix + key }, (done) => del.call(itemDb, key, done), cb);
    return itemDb;
  };
}

/** Per store: each table's items, counted as it opened and kept by every item write since (see the head of this file). */
const itemCounts = new WeakMap<DynaliteStore, Map<string, number>>();

function countAdded(store: DynaliteStore, table: string, added: number): void {
  const counts = itemCounts.get(store);
  // A table created since the store opened began empty.
  if (counts && added !== 0) counts.set(table, (counts.get(table) ?? 0) + added);
}

/** The keys of `main` from `prefix` on that start with it (dynalite's sub-databases: `table~`, `item-<table>~`). */
async function keysCount(main: MainDb, prefix: string, each?: (key: string) => void): Promise<number> {
  // Every character of a sub-database's keys (hex, table names, `~`, `/`) is below U+FFFF.
  const keys = main.keys({
    gte: prefix,
    lt: `${prefix}\uffff`,
    highWaterMarkBytes: 1024 * 1024,
  });
  let count = 0;
  try {
    for (;;) {
      const page = await keys.nextv(1000);
      if (page.length === 0) return count;
      count += page.length;
      if (each) for (const key of page) each(key.slice(prefix.length));
    }
  } finally {
    await keys.close();
  }
}

/**
 * Counts each table's items as the store opens, and answers the table operations' descriptions with
 * the count as it is now (see the head of this file). Every request waits for the first count, so
 * no write comes between it and the writes it counts from.
 */
export function liveItemCounts(store: DynaliteStore): void {
  const main = store.db as MainDb | undefined;
  if (!main || typeof main.keys !== 'function') throw new Error('dynalite is not as local/dynalite-tuning.ts expects: its LevelDB has no keys()');
  const counts = new Map<string, number>();
  // Counted once itemCounts holds them (the item writes keep them from then on).
  const counting = (async () => {
    const tables: string[] = [];
    await keysCount(main, 'table~', (name) => tables.push(name));
    for (const table of tables) counts.set(table, await keysCount(main, `item-${table}~`));
    itemCounts.set(store, counts);
  })();
  // A store closed before its count ends answers with its own errors; the count's is not one more.
  counting.catch(() => undefined);

  const { tableDb } = store;
  const del = tableDb.del;
  // A table's description is deleted once its items are: its count goes with it.
  tableDb.del = (key, cb) => {
    counts.delete(key);
    return del.call(tableDb, key, cb);
  };
  const getTable = store.getTable;
  store.getTable = function countedGetTable(name, checkStatus, cb) {
    const callback = (typeof checkStatus === 'function' ? checkStatus : cb) as Callback;
    if (!itemCounts.has(store)) {
      counting.then(
        () => store.getTable.call(this, name, checkStatus, cb),
        (error: unknown) => callback(error),
      );
      return;
    }
    // With the status check: an item operation's, which reads no count.
    if (checkStatus) return getTable.call(this, name, checkStatus, cb);
    getTable.call(this, name, checkStatus, (err: unknown, found?: unknown) => {
      const count = counts.get(name);
      if (!err && found && typeof found === 'object' && count !== undefined) (found as { ItemCount?: number }).ItemCount = count;
      callback(err, found);
    });
  };
}

let checksumsTuned = false;

/** buffer-crc32's `unsigned`, as dynalite's index.js calls it for every response, on zlib's native CRC-32. */
export function nativeResponseChecksums(): void {
  if (checksumsTuned) return;
  const fromDynalite = createRequire(createRequire(import.meta.url).resolve('dynalite'));
  const crc32 = fromDynalite('buffer-crc32') as { unsigned: (input: unknown, previous?: unknown) => number };
  expectFunction(crc32, 'unsigned', "require('buffer-crc32')");
  const original = crc32.unsigned;
  const native = (input: unknown, previous?: unknown): number => {
    if ((typeof input === 'string' || Buffer.isBuffer(input)) && (previous === undefined || typeof previous === 'number'))
      return nativeCrc32(input, (previous as number | undefined) ?? 0);
    return original(input, previous);
  };
  // The same numbers as buffer-crc32's, or no patch: empty, ASCII, multi-byte UTF-8, a Buffer, a continued checksum.
  const samples: Array<[unknown, number?]> = [[''], ['{"Items":[]}'], ['héllo ✓ 𝄞'], [Buffer.from([0, 1, 2, 255, 128])], ['more', 123456789]];
  for (const [input, previous] of samples) {
    if (native(input, previous) !== original(input, previous))
      throw new Error(`zlib.crc32 and buffer-crc32 disagree on ${JSON.stringify(input)}: local/dynalite-tuning.ts cannot patch the checksum`);
  }
  crc32.unsigned = native;
  checksumsTuned = true;
}

/** What a page of a Query or Scan reads at most, as dynalite's queryTable counts it (DynamoDB's 1 MB). */
const PAGE_BYTES = 1024 * 1024;

type MainDb = Required<NonNullable<DynaliteStore['db']>>;
type LevelValues = ReturnType<MainDb['values']>;

/** The stores whose pages are read directly, with their iterators' step (values, and bytes at most). */
const directStores = new WeakMap<DynaliteStore, { step: number; stepBytes: number }>();

/**
 * Serves dynalite's queryTable (every Query and Scan page) of `store` from a LevelDB iterator read in
 * steps of `step` values (at most `stepBytes` each), with everything else as dynalite's queryTable
 * does it (see the head of this file). A local index read for attributes it does not project takes
 * dynalite's own path.
 */
export function directPages(store: DynaliteStore, step: number, stepBytes: number): void {
  const db = createRequire(import.meta.url)('dynalite/db') as DynaliteDbModule & { [directPagesTuned]?: true };
  for (const name of ['queryTable', 'itemSize', 'matchesExprFilter', 'matchesFilter', 'mapPaths'] as const) expectFunction(db, name, "require('dynalite/db')");
  const main = store.db;
  if (!main || typeof main.values !== 'function') throw new Error('dynalite is not as local/dynalite-tuning.ts expects: its LevelDB has no values()');
  if (typeof store.getItemDb !== 'function' || typeof store.getIndexDb !== 'function')
    throw new Error('dynalite is not as local/dynalite-tuning.ts expects: the store has no getItemDb or getIndexDb');
  directStores.set(store, { step, stepBytes });
  if (db[directPagesTuned]) return;
  db[directPagesTuned] = true;
  const original = db.queryTable;
  db.queryTable = (owner, table, data, opts, isLocal, fetchFromItemDb, startKeyNames, cb) => {
    const direct = directStores.get(owner);
    if (!direct || fetchFromItemDb || owner.lifecycleManager.getState() !== 'open')
      return original(owner, table, data, opts, isLocal, fetchFromItemDb, startKeyNames, cb);
    let called = false;
    const done: Callback = (err, value) => {
      if (called) return;
      called = true;
      cb(err, value);
    };
    let iterator: LevelValues;
    try {
      const sub = (data.IndexName
        ? (owner.getIndexDb as NonNullable<DynaliteStore['getIndexDb']>)(isLocal ? 'local' : 'global', data.TableName, data.IndexName)
        : (owner.getItemDb as NonNullable<DynaliteStore['getItemDb']>)(data.TableName)) as unknown as SubDb;
      const level = owner.db as MainDb;
      // The values as LevelDB holds them (JSON text), decoded through the cache of decoded values.
      iterator = level.values({ ...rangeOf(level, sub, opts), highWaterMarkBytes: direct.stepBytes, valueEncoding: 'utf8' });
    } catch (error) {
      return done(error);
    }
    const calculateCapacity = data.ReturnConsumedCapacity === 'TOTAL' || data.ReturnConsumedCapacity === 'INDEXES';
    const rangeKey = table.KeySchema[1]?.AttributeName;
    const limit = data.Limit as number; // undefined: no limit (a comparison with it is false, as in dynalite)
    let tableCapacity = 0;
    let indexCapacity = 0;
    let size = 0;
    let count = 0;
    let items: Item[] = [];
    const read = async (): Promise<void> => {
      try {
        for (;;) {
          const values = (await iterator.nextv(direct.step)) as string[];
          if (values.length === 0) return;
          for (const raw of values) {
            // dynalite's takeWhile: the item that finds the page full is read, not taken.
            if (count >= limit || size >= PAGE_BYTES) return;
            const { item: value, size: itemBytes } = decoded(db, raw, rangeKey);
            if (calculateCapacity) {
              if (data.IndexName) indexCapacity += db.itemSize(value);
              else tableCapacity += db.itemSize(value);
            }
            count += 1;
            size += itemBytes;
            items.push(value);
          }
        }
      } finally {
        await iterator.close();
      }
    };
    read().then(() => {
      // From here on, dynalite's queryTable (db/index.js, its join) as it is.
      const lastItem = items[items.length - 1];
      const queryFilter = data.QueryFilter || data.ScanFilter;
      const filter = data._filter;
      if (filter) items = items.filter((value) => db.matchesExprFilter(value, filter.expression));
      else if (queryFilter) items = items.filter((value) => db.matchesFilter(value, queryFilter, data.ConditionalOperator));
      const result: Record<string, unknown> = { ScannedCount: count };
      if (count >= limit || size >= PAGE_BYTES) {
        if (data.Limit) items.splice(data.Limit);
        if (lastItem) {
          result.LastEvaluatedKey = startKeyNames.reduce<Item>((key, attr) => {
            key[attr] = lastItem[attr];
            return key;
          }, {});
        }
      }
      const paths = data._projection ? data._projection.paths : data.AttributesToGet;
      if (paths) items = items.map((item) => db.mapPaths(paths, item));
      result.Count = items.length;
      if (data.Select !== 'COUNT') result.Items = items;
      if (calculateCapacity) {
        const tableUnits = Math.ceil(tableCapacity / 1024 / 4) * (data.ConsistentRead ? 1 : 0.5);
        const indexUnits = Math.ceil(indexCapacity / 1024 / 4) * (data.ConsistentRead ? 1 : 0.5);
        const consumed: Record<string, unknown> = { CapacityUnits: tableUnits + indexUnits, TableName: data.TableName };
        if (data.ReturnConsumedCapacity === 'INDEXES') {
          consumed.Table = { CapacityUnits: tableUnits };
          if (data.IndexName) consumed[isLocal ? 'LocalSecondaryIndexes' : 'GlobalSecondaryIndexes'] = { [data.IndexName]: { CapacityUnits: indexUnits } };
        }
        result.ConsumedCapacity = consumed;
      }
      done(null, result);
    }, done);
  };
}

/**
 * Decoded values by their JSON text, the least recently read dropped first once they hold
 * DECODED_CHARS characters of it: what a page of a Query or Scan reads again (a list polled, its
 * first page above all) is not parsed and sized again (~0.25 ms of the stand-ins thread's ~1.3 ms
 * for a page of 100). The objects are shared by every page that reads them: dynalite's queryTable,
 * its filters, its projection (mapPaths builds new items of the same attribute values) and the
 * answer's JSON only read them (checked against dynalite 4.0.0's actions/query.js, actions/scan.js
 * and db/index.js), and a write of an item writes new text, which is a new entry. Only values of
 * at most DECODED_VALUE_CHARS are kept (index entries, list summaries, op occs): whole instantiated
 * records (~8 KB) read a page at a time (all_fields) would churn through the cache, each entry
 * living long enough to be promoted to the old generation and die there, which grew that heap.
 */
const decodedValues = new Map<string, { item: Item; size: number; rangeKey: string | undefined }>();
let decodedChars = 0;
let decodedHits = 0;
/** The JSON text the decoded values are kept by at most: ~1 MB of objects and text with it. */
export const DECODED_CHARS = 256 * 1024;
/** The longest JSON text of a value kept decoded. */
export const DECODED_VALUE_CHARS = 2048;

/** What the cache of decoded values holds now, and how many reads it has answered (tests). */
export const decodedValuesKept = (): { entries: number; chars: number; hits: number } => ({
  entries: decodedValues.size,
  chars: decodedChars,
  hits: decodedHits,
});

/** `raw` parsed, with its size as dynalite counts a page's 1 MB (itemSize with the range key), kept or reused. */
function decoded(db: DynaliteDbModule, raw: string, rangeKey: string | undefined): { item: Item; size: number } {
  const kept = decodedValues.get(raw);
  if (kept && kept.rangeKey === rangeKey) {
    decodedHits += 1;
    decodedValues.delete(raw);
    decodedValues.set(raw, kept);
    return kept;
  }
  const item = JSON.parse(raw) as Item;
  const entry = { item, size: db.itemSize(item, true, true, rangeKey), rangeKey };
  if (raw.length > DECODED_VALUE_CHARS) return entry;
  if (kept) decodedChars -= raw.length;
  decodedValues.delete(raw);
  decodedValues.set(raw, entry);
  decodedChars += raw.length;
  for (const key of decodedValues.keys()) {
    if (decodedChars <= DECODED_CHARS) break;
    decodedValues.delete(key);
    decodedChars -= key.length;
  }
  return entry;
}

/** Gives `store`'s pages back to dynalite's own queryTable (its tests compare the two). */
export function streamedPages(store: DynaliteStore): void {
  directStores.delete(store);
}

const directPagesTuned = Symbol('vnfm.dynaliteDirectPages');

/** The range a sub-database's value stream reads in the main LevelDB: dynalite's own prefixing, captured. */
function rangeOf(level: MainDb, sub: SubDb, opts: Record<string, unknown>): Record<string, unknown> {
  const createValueStream = level.createValueStream;
  let range: Record<string, unknown> | undefined;
  level.createValueStream = (options) => {
    range = options;
    return undefined;
  };
  try {
    sub.createValueStream(opts);
  } finally {
    level.createValueStream = createValueStream;
  }
  if (!range) throw new Error('dynalite is not as local/dynalite-tuning.ts expects: a sub-database did not read through its LevelDB');
  return range;
}

/** Expression sets kept (see the head of this file): the distinct ones the product sends again and again are fewer. */
const EXPRESSION_CACHE = 500;
/** A larger set (a filter naming many values, say) is parsed every time: it seldom comes again, and would hold memory. */
const EXPRESSION_KEY_CHARS = 2048;

/** The request fields dynalite's validateExpressions parses, and the field each one's tree goes to. */
const PARSED_EXPRESSIONS = [
  ['UpdateExpression', '_updates'],
  ['ConditionExpression', '_condition'],
  ['KeyConditionExpression', '_keyCondition'],
  ['FilterExpression', '_filter'],
  ['ProjectionExpression', '_projection'],
] as const;

/**
 * The two parts of dynalite's condition grammar that read what a value holds, not only its type:
 * attribute_type's type name and BETWEEN's order of its bounds. A set with either is kept per values.
 */
const READS_VALUES = /attribute_type|between/i;

/** dynalite's getImmediateType: the type a parse checks a value for (the first it holds, in this order). */
const VALUE_TYPES = ['S', 'N', 'B', 'NULL', 'BOOL', 'SS', 'NS', 'BS', 'L', 'M'] as const;

type AttributeValues = Record<string, Record<string, unknown>>;
type ValidateExpressions = (data: Record<string, unknown>) => string | undefined;
type ValidateAttributeValue = (value: unknown) => string | undefined;

/** Where a kept tree had one of its request's values: the next request's value of that name goes there. */
class ValueOf {
  constructor(readonly name: string) {}
}

interface KeptSet {
  /** Each parsed field and its tree, its values as ValueOf. */
  trees: Array<[string, unknown]>;
  /** Kept per the types of its values (else per the values themselves): each new value is validated as dynalite's parse does first. */
  typed: boolean;
}

const expressionCache = new Map<string, KeptSet>();
let expressionsCached = false;

/** What a copyTree substitution answers for a node it leaves to be copied. */
const COPIED = Symbol('copied');

/**
 * A deep copy of a parse tree, each object with the prototype it had (dynalite's trees hold
 * null-prototype maps); a node for which `substitute` answers other than COPIED is that answer instead.
 */
function copyTree(value: unknown, substitute: (node: unknown) => unknown): unknown {
  const substituted = substitute(value);
  if (substituted !== COPIED) return substituted;
  if (Array.isArray(value)) return value.map((item) => copyTree(item, substitute));
  if (value === null || typeof value !== 'object') return value;
  const copy = Object.create(Object.getPrototypeOf(value)) as Record<string, unknown>;
  for (const key of Object.keys(value)) copy[key] = copyTree((value as Record<string, unknown>)[key], substitute);
  return copy;
}

/** Keeps the parse of each validated expression set (see the head of this file); false: every request parsed again (tests compare the two). */
export function cacheExpressions(on: boolean): void {
  const validations = createRequire(import.meta.url)('dynalite/validations') as {
    validateExpressions: ValidateExpressions;
    validateAttributeValue: ValidateAttributeValue;
    [tuned]?: ValidateExpressions;
  };
  expectFunction(validations, 'validateExpressions', "require('dynalite/validations')");
  expectFunction(validations, 'validateAttributeValue', "require('dynalite/validations')");
  expressionCache.clear();
  expressionsCached = on;
  if (validations[tuned]) return;
  const parse = validations.validateExpressions;
  const validateValue = validations.validateAttributeValue;
  validations[tuned] = parse;
  validations.validateExpressions = (data) => {
    if (!expressionsCached) return parse(data);
    const expressions = PARSED_EXPRESSIONS.map(([field]) => (data[field] as string | undefined) ?? null);
    const values = data.ExpressionAttributeValues as AttributeValues | undefined;
    const typed = !expressions.some((expression) => expression !== null && READS_VALUES.test(expression));
    const key = JSON.stringify([
      ...expressions,
      data.ExpressionAttributeNames ?? null,
      values && typed ? Object.entries(values).map(([name, value]) => [name, VALUE_TYPES.find((type) => value?.[type] != null) ?? null]) : (values ?? null),
    ]);
    if (key.length > EXPRESSION_KEY_CHARS) return parse(data);
    const kept = expressionCache.get(key);
    if (kept) {
      if (kept.typed && values) {
        // What validateExpressions checks of the values before it parses, in its order and words:
        // the names and types are the kept set's, which passed; what each value holds is new.
        for (const [name, value] of Object.entries(values)) {
          const message = validateValue(value);
          if (message) return `ExpressionAttributeValues contains invalid value: ${message} for key ${name}`;
        }
      }
      expressionCache.delete(key);
      expressionCache.set(key, kept);
      // Each request its own copy (dynalite changes a key condition's tree as it reads it), its own value objects where the kept set's were.
      const ownValue = (node: unknown) => (node instanceof ValueOf ? values?.[node.name] : COPIED);
      for (const [field, tree] of kept.trees) data[field] = copyTree(tree, ownValue);
      return undefined;
    }
    const message = parse(data);
    if (message !== undefined) return message;
    const valueNames = new Map<unknown, string>(Object.entries(values ?? {}).map(([name, value]) => [value, name]));
    const keptValue = (node: unknown) => {
      const name = valueNames.get(node);
      return name === undefined ? COPIED : new ValueOf(name);
    };
    // Only the trees this parse set: an expression present is parsed into its field, or fails the request.
    expressionCache.set(key, {
      trees: PARSED_EXPRESSIONS.filter(([field]) => data[field] != null).map(([, parsed]) => [parsed, copyTree(data[parsed], keptValue)]),
      typed,
    });
    if (expressionCache.size > EXPRESSION_CACHE) expressionCache.delete(expressionCache.keys().next().value as string);
    return undefined;
  };
}

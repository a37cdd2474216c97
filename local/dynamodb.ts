// The local DynamoDB: dynalite on LevelDB files, with its Query and Scan streams closing their
// LevelDB iterators. dynalite closes them with `iterator.return()`, which abstract-level iterators
// do not have, and the database holds every open iterator until it closes: each pinned the
// version it started on, so LevelDB could delete no table file (they stayed on disk and mapped,
// ~180 MB of the runtime's RSS after three rounds of 100 lifecycles, the folder 60 MB per 100
// lifecycles while the live data stayed at a few MB) and the iterators' memory stayed allocated.
// With them closed, LevelDB's own compactions keep the folder at ~10 MB through the same load.
// LevelDB also maps each table file it keeps open; the open files and their size are bounded
// (MAX_OPEN_FILES, TABLE_FILE_BYTES) so that a large data folder is not mapped whole into the process.
import { createRequire } from 'node:module';
import type http from 'node:http';
import { Readable } from 'node:stream';
import dynalite from 'dynalite';
import { type DynaliteStore, directPages, tuneDynalite } from './dynalite-tuning.ts';
import { meterIndexWrites } from './metering.ts';

interface LevelIterator {
  nextv(size: number): Promise<unknown[]>;
  close(): Promise<void>;
}

interface LevelDb {
  _open(options: unknown): Promise<void>;
  keys(options: unknown): LevelIterator;
  values(options: unknown): LevelIterator;
  createKeyStream(options: unknown): Readable;
  createValueStream(options: unknown): Readable;
  attachResource(resource: unknown): void;
  detachResource(resource: unknown): void;
}

/**
 * LevelDB's open files: the fewest it takes (it raises a smaller max_open_files to 74), of which 10
 * are its own (log, MANIFEST, lock) and 64 its table cache. Each table file is mapped while open.
 */
const MAX_OPEN_FILES = 74;
/**
 * The size a compaction cuts table files at: the least LevelDB takes (it raises a smaller one to
 * 1 MiB; the default is 2 MiB). A file's pages count in the process's RSS once read through its
 * mapping, and a compaction or a whole-collection read touches every page: at 100,000 instances and
 * op occs the 64 files left open were ~110 MiB of RSS at 2 MiB each, ~50 MiB at 1 MiB.
 */
const TABLE_FILE_BYTES = 1024 * 1024;

export interface LocalDynamo {
  server: http.Server;
  /** Iterators (and chained batches) open on the database now: 0 when nothing is being read. */
  openResources(): number;
}

/**
 * Entries read from LevelDB per step of a stream, and the bytes a step may hold. Each step is a
 * round trip through libuv's thread pool (a thread woken, then the event loop): with 16 entries and
 * classic-level's default 16 KiB, a 100-item Query took 7 steps, and a page of 100 instantiated
 * instances (~8 KB each) 50. A Query's iterator stops at its Limit (plus one) by itself, and no
 * answer holds more than 1 MB, so one step now reads a whole page.
 */
const STREAM_STEP = 128;
const STREAM_STEP_BYTES = 1024 * 1024;

/** A stream of a LevelDB iterator that closes it when the stream ends or is destroyed. */
function closingStream(iterator: LevelIterator): Readable {
  return new Readable({
    objectMode: true,
    read() {
      iterator.nextv(STREAM_STEP).then(
        (items) => {
          if (items.length === 0) this.push(null);
          else for (const item of items) this.push(item);
        },
        (error: unknown) => this.destroy(error as Error),
      );
    },
    destroy(error, callback) {
      iterator.close().then(
        () => callback(error),
        () => callback(error),
      );
    },
  });
}

export function startLocalDynamo(dir: string): LocalDynamo {
  // dynalite keeps its LevelDB handle to itself; its store factory is a plain CommonJS export, so
  // wrapping it for the one call dynalite() makes hands the handle over.
  const stores = createRequire(import.meta.url)('dynalite/db') as {
    create: (options: unknown) => { db: LevelDb };
    addConsumedCapacity: (...args: unknown[]) => unknown;
  };
  meterIndexWrites(stores);
  const create = stores.create;
  let db: LevelDb | undefined;
  stores.create = (options) => {
    const store = create(options);
    tuneDynalite(store as unknown as DynaliteStore); // table descriptions in memory, batched item writes, synchronous gets, expressions parsed once, native checksums (local/dynalite-tuning.ts)
    directPages(store as unknown as DynaliteStore, STREAM_STEP, STREAM_STEP_BYTES); // Query and Scan pages without streams
    db = store.db;
    // LevelDB maps every table file it holds open (up to 1,000 by default): at 100,000 instances
    // and op occs that was the whole data folder, a few hundred MB, in the process's RSS. Fewer and
    // smaller open files bound what is mapped (MAX_OPEN_FILES, TABLE_FILE_BYTES); reads reopen a
    // table file's index now and then (the OS caches it).
    const open = store.db._open.bind(store.db);
    // Table files uncompressed: LevelDB rewrites each entry a dozen times or more as it compacts its
    // levels, and Snappy on each rewrite (and on each read) was half of the compactions' CPU at
    // 100,000 instances (1.5 ms of a 2-core box's time per instance create); the folder is larger
    // on disk instead (the records are JSON, which Snappy packs two to three times).
    store.db._open = (openOptions) => open({ ...(openOptions as object), maxOpenFiles: MAX_OPEN_FILES, maxFileSize: TABLE_FILE_BYTES, compression: false });
    return store;
  };
  let server: http.Server;
  try {
    server = dynalite({ path: dir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  } finally {
    stores.create = create;
  }
  const level = db;
  if (!level) throw new Error('dynalite did not open its store through dynalite/db create()');
  // Every table's sub-database reads through these two on the main one.
  level.createKeyStream = (options) => closingStream(level.keys({ ...(options as object), highWaterMarkBytes: STREAM_STEP_BYTES }));
  level.createValueStream = (options) => closingStream(level.values({ ...(options as object), highWaterMarkBytes: STREAM_STEP_BYTES }));
  const open = new Set<unknown>();
  const attach = level.attachResource.bind(level);
  const detach = level.detachResource.bind(level);
  level.attachResource = (resource) => {
    open.add(resource);
    attach(resource);
  };
  level.detachResource = (resource) => {
    open.delete(resource);
    detach(resource);
  };
  return { server, openResources: () => open.size };
}

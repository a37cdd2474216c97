// The local DynamoDB: dynalite on LevelDB files, with its read streams closing their iterators,
// and the files' compaction. LevelDB keeps every overwritten version of a record until a
// compaction reaches its level, and with the tables' indexes an op occ updated a few dozen times
// in its life leaves ~100 KB of dead versions; LevelDB maps every table file it reads, so the
// process's resident memory grows with the files. Under load (and with the iterators then left
// open, which kept LevelDB from deleting any file) the folder grew by ~60 MB per 100 lifecycles
// while the live data stayed at a few MB. When the files have grown by 32 MB since the last
// compaction, the whole key range is compacted (measured: 233 MB to 6.5 MB in 0.7 s), which also
// unmaps the files it deletes.
import { createRequire } from 'node:module';
import type http from 'node:http';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import dynalite from 'dynalite';

/** How much the files may grow past what the last compaction left (a size taken under load holds live data too, so growth, not a ratio). */
const COMPACT_GROWTH_BYTES = 32 * 2 ** 20;
const CHECK_EVERY_MS = 15_000;

interface LevelIterator {
  next(): Promise<unknown>;
  close(): Promise<void>;
}

interface LevelDb {
  compactRange(start: string, end: string): Promise<void>;
  keys(options: unknown): LevelIterator;
  values(options: unknown): LevelIterator;
  createKeyStream(options: unknown): Readable;
  createValueStream(options: unknown): Readable;
  attachResource(resource: unknown): void;
  detachResource(resource: unknown): void;
}

/**
 * A stream of a LevelDB iterator that closes it when the stream ends or is destroyed. dynalite's
 * own streams close theirs with `iterator.return()`, which abstract-level iterators do not have:
 * every Query and Scan left its iterator open, and the database holds open iterators until it
 * closes. Each one pinned the LevelDB version it started on, so compactions could delete no table
 * file (they stayed on disk and mapped) and its memory stayed allocated.
 */
function closingStream(iterator: LevelIterator): Readable {
  return new Readable({
    objectMode: true,
    read() {
      iterator.next().then((item) => this.push(item === undefined ? null : item), (error: unknown) => this.destroy(error as Error));
    },
    destroy(error, callback) {
      iterator.close().then(() => callback(error), () => callback(error));
    },
  });
}

export interface LocalDynamo {
  server: http.Server;
  /** Compacts now if the files have grown by 32 MB since the last compaction (the timer's check); answers whether it did. */
  compactIfGrown(): Promise<boolean>;
  /** Compacts the whole key range now. */
  compact(): Promise<void>;
  /** Iterators (and chained batches) open on the database now: 0 when nothing is being read. */
  openResources(): number;
  /** Stops the compaction timer (before the server closes). */
  stop(): Promise<void>;
}

async function tableFileBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir)) {
    if (name.endsWith('.ldb') || name.endsWith('.log')) total += await stat(join(dir, name)).then((s) => s.size, () => 0);
  }
  return total;
}

export function startLocalDynamo(dir: string): LocalDynamo {
  // dynalite keeps its LevelDB handle to itself; its store factory is a plain CommonJS export, so
  // wrapping it for the one call dynalite() makes hands the handle over.
  const stores = createRequire(import.meta.url)('dynalite/db') as { create: (options: unknown) => { db: LevelDb } };
  const create = stores.create;
  let db: LevelDb | undefined;
  stores.create = (options) => {
    const store = create(options);
    db = store.db;
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
  level.createKeyStream = (options) => closingStream(level.keys(options));
  level.createValueStream = (options) => closingStream(level.values(options));
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

  let baseline = 0;
  let running: Promise<unknown> = Promise.resolve();
  const compact = async () => {
    // Every dynalite key is printable ASCII: this range holds them all.
    await level.compactRange('\u0000', '\uffff');
    baseline = await tableFileBytes(dir);
  };
  const compactIfGrown = async () => {
    const bytes = await tableFileBytes(dir);
    if (bytes < baseline + COMPACT_GROWTH_BYTES) return false;
    await compact();
    return true;
  };
  const timer = setInterval(() => {
    running = compactIfGrown().catch(() => undefined); // a failed check or compaction is tried again at the next tick
  }, CHECK_EVERY_MS);
  timer.unref();
  return {
    server,
    compactIfGrown,
    compact,
    openResources: () => open.size,
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}

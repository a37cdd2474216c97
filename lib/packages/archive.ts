// Reads an uploaded CSAR zip as hostile input: lists the central directory once through ranged reads of a
// ByteSource, vets every entry before use, and only streams content, enforcing declared sizes and CRC-32
// while inflating so that a zip bomb which lies about its size is cut off.
import { createHash } from 'node:crypto';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { crc32 } from 'node:zlib';
import yauzl from 'yauzl';
import type { ByteSource } from '#lib/packages/byte-source.ts';
import { PackageError } from '#lib/packages/errors.ts';

export interface ArchiveLimits {
  /** Most entries (files and directories) the central directory may list. */
  maxEntries: number;
  /** Largest declared uncompressed size of one entry, in bytes. */
  maxEntryBytes: number;
  /** Largest sum of declared uncompressed sizes, in bytes. */
  maxTotalBytes: number;
  /** Largest uncompressed/compressed ratio for an entry bigger than `ratioThresholdBytes`. */
  maxRatio: number;
  /** Entries up to this size may compress as well as they like (small text compresses very well). */
  ratioThresholdBytes: number;
}

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

export const DEFAULT_ARCHIVE_LIMITS: Readonly<ArchiveLimits> = Object.freeze({
  maxEntries: 10_000,
  maxEntryBytes: 2 * GiB,
  maxTotalBytes: 4 * GiB,
  maxRatio: 200,
  ratioThresholdBytes: 1 * MiB,
});

export interface ArchiveEntry {
  /** Archive-relative, forward slashes, no leading "./", no trailing "/" (even for directories). */
  readonly path: string;
  readonly uncompressedSize: number;
  readonly compressedSize: number;
  readonly crc32: number;
  readonly isDirectory: boolean;
}

export type HashAlgorithm = 'sha224' | 'sha256' | 'sha384' | 'sha512';

export interface CsarArchive {
  entries(): readonly ArchiveEntry[];
  /** True if the archive lists this file or directory explicitly. */
  has(path: string): boolean;
  /** Whole entry decoded as UTF-8 (a BOM is dropped); PackageError if missing, larger than maxBytes or not UTF-8. */
  readText(path: string, maxBytes?: number): Promise<string>;
  readBytes(path: string, maxBytes: number): Promise<Buffer>;
  /** The entry's content; the stream fails with a PackageError if the content disagrees with the central directory. */
  openStream(path: string): Promise<Readable>;
  /** Lower-case hex digest of the entry's content, computed while streaming (or as primed). */
  hashEntry(path: string, algorithm: HashAlgorithm): Promise<string>;
  /**
   * Where a stored (uncompressed) entry's bytes lie in the archive, after vetting its local header;
   * undefined for a deflated entry. Lets a caller serve or hash big entries straight from the source.
   */
  storedRange(path: string): Promise<{ offset: number; length: number } | undefined>;
  /** Supplies a digest computed elsewhere (e.g. in one sequential pass over the whole source). */
  primeHash(path: string, algorithm: HashAlgorithm, digest: Promise<string>): void;
  /** Ends open entry streams and closes the ByteSource (the archive owns it once openArchive succeeds). */
  close(): Promise<void>;
}

const DEFAULT_TEXT_BYTES = 10 * MiB;
/** Longest entry name accepted, in bytes: far beyond any real CSAR path, and 10,000 of them stay small. */
const MAX_NAME_BYTES = 1024;
/** Small reads (central directory records, local headers) are served from one window this big, so an S3
 * source answers a whole central directory in a handful of GetObject calls instead of two per entry. */
const WINDOW_BYTES = 256 * 1024;
/** Entry data is read in ranges this big: few requests, bounded memory. */
const DATA_CHUNK_BYTES = 1 * MiB;

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;

/** What we keep of a central directory record: no extra fields or comments, which can be 128 KiB each. */
interface StoredEntry extends ArchiveEntry {
  readonly name: string;
  readonly yauzlEntry: yauzl.Entry;
  readonly nameBytes: Buffer;
  /** Where this entry's data must end: the next local header, or the central directory. */
  dataLimit: number;
}

export async function openArchive(source: ByteSource, limits: Partial<ArchiveLimits> = {}): Promise<CsarArchive> {
  const effective = checkLimits({ ...DEFAULT_ARCHIVE_LIMITS, ...limits });
  const reader = new SourceReader(source);
  let zipfile: yauzl.ZipFile;
  try {
    zipfile = await new Promise<yauzl.ZipFile>((resolve, reject) => {
      // decodeStrings is off so that names reach us undecoded: we decode them with the same strict rule
      // (getFileNameLowLevel, strictFileNames) and can report a bad name as the PackageError's `where`
      // instead of yauzl's anonymous error. autoClose is off because entries are read after listing.
      yauzl.fromRandomAccessReader(
        reader,
        source.size,
        { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: true, strictFileNames: true },
        (error, opened) => (error ? reject(error) : resolve(opened)),
      );
    });
  } catch (error) {
    throw centralDirectoryError(error);
  }
  try {
    const entries = await listEntries(zipfile, source.size, effective);
    return new YauzlArchive(zipfile, source, entries);
  } catch (error) {
    zipfile.close();
    throw error;
  }
}

function checkLimits(limits: ArchiveLimits): ArchiveLimits {
  for (const [key, value] of Object.entries(limits)) {
    if (typeof value !== 'number' || Number.isNaN(value) || value <= 0)
      throw new RangeError(`archive limit ${key} must be a positive number, not ${String(value)}`);
  }
  return limits;
}

async function listEntries(zipfile: yauzl.ZipFile, archiveSize: number, limits: ArchiveLimits): Promise<StoredEntry[]> {
  if (zipfile.entryCount > limits.maxEntries) {
    throw new PackageError(`the archive has ${zipfile.entryCount} entries, more than the limit of ${limits.maxEntries}`);
  }
  // yauzl starts its cursor at the central directory; the typings get its type wrong, hence the check.
  const cursor: unknown = (zipfile as unknown as { readEntryCursor?: unknown }).readEntryCursor;
  const centralDirectoryOffset = typeof cursor === 'number' ? cursor : archiveSize;

  const entries: StoredEntry[] = [];
  const byPath = new Map<string, StoredEntry>();
  let total = 0;
  try {
    for await (const raw of zipfile.eachEntry()) {
      const entry = vetEntry(raw, limits);
      const previous = byPath.get(entry.path);
      if (previous) throw new PackageError(`duplicate entry: "${previous.name}" is already in the archive`, entry.name);
      total += entry.uncompressedSize;
      if (total > limits.maxTotalBytes) {
        throw new PackageError(
          `the entries declare more than ${limits.maxTotalBytes} bytes uncompressed in total; a package may expand to at most that (MaxPackageExpandedBytes)`,
          entry.name,
        );
      }
      byPath.set(entry.path, entry);
      entries.push(entry);
    }
  } catch (error) {
    throw error instanceof PackageError ? error : centralDirectoryError(error);
  }
  checkTree(entries, byPath);
  checkOverlaps(entries, centralDirectoryOffset);
  return entries;
}

function vetEntry(raw: yauzl.Entry, limits: ArchiveLimits): StoredEntry {
  const nameBytes = Buffer.from(raw.fileNameRaw);
  const name = yauzl.getFileNameLowLevel(raw.generalPurposeBitFlag, nameBytes, raw.extraFields, true);
  if (nameBytes.length > MAX_NAME_BYTES)
    throw new PackageError(`entry name is ${nameBytes.length} bytes long, more than ${MAX_NAME_BYTES}`, name.slice(0, 200));
  const problem = nameProblem(name);
  if (problem) throw new PackageError(problem, name);
  const isDirectory = name.endsWith('/');
  const path = normalisePath(name);

  const fileType = (raw.externalFileAttributes >>> 16) & S_IFMT;
  if (fileType === S_IFLNK) throw new PackageError('symbolic links are not allowed in a package', name);
  if (fileType !== 0 && fileType !== S_IFREG && fileType !== S_IFDIR) {
    throw new PackageError(`special files are not allowed in a package (unix file type 0o${fileType.toString(8)})`, name);
  }
  if (raw.generalPurposeBitFlag & 0x1) throw new PackageError('entry is encrypted; encrypted zip entries are not supported', name);
  if (raw.compressionMethod !== 0 && raw.compressionMethod !== 8) {
    throw new PackageError(`unsupported compression method ${raw.compressionMethod} (only 0 stored and 8 deflate are accepted)`, name);
  }
  if (isDirectory && raw.uncompressedSize !== 0) throw new PackageError(`directory entry declares ${raw.uncompressedSize} bytes of content`, name);
  if (raw.uncompressedSize > limits.maxEntryBytes) {
    throw new PackageError(`entry declares ${raw.uncompressedSize} bytes uncompressed, more than the limit of ${limits.maxEntryBytes}`, name);
  }
  if (raw.uncompressedSize > limits.ratioThresholdBytes) {
    const ratio = raw.uncompressedSize / Math.max(1, raw.compressedSize);
    if (ratio > limits.maxRatio) {
      throw new PackageError(
        `compression ratio ${Math.round(ratio)}:1 (${raw.compressedSize} bytes inflating to ${raw.uncompressedSize}) exceeds the limit of ${limits.maxRatio}:1`,
        name,
      );
    }
  }

  // A fresh yauzl.Entry with only what reading needs, so the record's extra fields and comment are freed.
  const slim = Object.assign(new yauzl.Entry(), {
    generalPurposeBitFlag: raw.generalPurposeBitFlag,
    compressionMethod: raw.compressionMethod,
    compressedSize: raw.compressedSize,
    uncompressedSize: raw.uncompressedSize,
    crc32: raw.crc32,
    relativeOffsetOfLocalHeader: raw.relativeOffsetOfLocalHeader,
  });
  return {
    path,
    name,
    isDirectory,
    uncompressedSize: raw.uncompressedSize,
    compressedSize: raw.compressedSize,
    crc32: raw.crc32,
    yauzlEntry: slim,
    nameBytes,
    dataLimit: Number.MAX_SAFE_INTEGER,
  };
}

/** Why an entry name is unsafe to use as a path, or undefined if it is fine. */
function nameProblem(name: string): string | undefined {
  if (name === '' || name === '/') return 'empty entry name';
  if (name.includes('\0')) return 'entry name contains a NUL character';
  if (/[\u0001-\u001f\u007f]/.test(name)) return 'entry name contains a control character';
  if (name.includes('\\')) return 'entry name contains a backslash';
  if (/^[A-Za-z]:/.test(name)) return 'entry name starts with a drive letter';
  if (name.startsWith('/')) return 'entry name is an absolute path';
  if (name.split('/').includes('..')) return 'entry name contains a ".." segment';
  if (normalisePath(name) === '') return 'entry name has no path segments';
  return undefined;
}

/** Drops "." and empty segments and the trailing "/", so "./a//b/" is "a/b". */
function normalisePath(name: string): string {
  return name
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.')
    .join('/');
}

/** A path cannot be a file and also have entries below it. */
function checkTree(entries: readonly StoredEntry[], byPath: ReadonlyMap<string, StoredEntry>): void {
  for (const entry of entries) {
    const segments = entry.path.split('/');
    for (let i = 1; i < segments.length; i += 1) {
      const parent = byPath.get(segments.slice(0, i).join('/'));
      if (parent && !parent.isDirectory) throw new PackageError(`"${parent.name}" is a file but the archive also has entries below it`, entry.name);
    }
  }
}

/**
 * Refuses entries whose data would overlap the next local header (or the central directory): overlapping
 * entries are how a small zip makes many entries share one bomb, and no honest zip writer produces them.
 * A local header is at least 30 bytes plus the name; its extra field is checked when the entry is read.
 */
function checkOverlaps(entries: StoredEntry[], centralDirectoryOffset: number): void {
  const ordered = [...entries].sort((a, b) => a.yauzlEntry.relativeOffsetOfLocalHeader - b.yauzlEntry.relativeOffsetOfLocalHeader);
  for (let i = 0; i < ordered.length; i += 1) {
    const entry = ordered[i]!;
    const next = ordered[i + 1];
    const limit = next ? next.yauzlEntry.relativeOffsetOfLocalHeader : centralDirectoryOffset;
    const minimumEnd = entry.yauzlEntry.relativeOffsetOfLocalHeader + 30 + entry.nameBytes.length + entry.compressedSize;
    if (minimumEnd > limit) {
      throw new PackageError(next ? `entry data overlaps entry "${next.name}"` : 'entry data overlaps the central directory', entry.name);
    }
    entry.dataLimit = limit;
  }
}

/** Turns what yauzl reports while opening or listing into a PackageError about the archive as a whole. */
function centralDirectoryError(error: unknown): PackageError {
  if (error instanceof PackageError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (/end of central directory record signature not found/i.test(message)) {
    return new PackageError('not a zip archive, or a truncated one: no end of central directory record', undefined, { cause: error });
  }
  return new PackageError(`the zip central directory is unreadable (truncated or corrupt archive): ${message}`, undefined, { cause: error });
}

/** Turns what yauzl or zlib reports while reading an entry into a PackageError about that entry. */
function entryError(error: unknown, entry: StoredEntry): PackageError {
  if (error instanceof PackageError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  if (/too many bytes in the stream/.test(message)) return inflatedTooMuch(entry, error);
  if (/not enough bytes in the stream/.test(message)) return inflatedTooLittle(entry, error);
  if (typeof code === 'string' && code.startsWith('Z_')) {
    return new PackageError(`corrupt deflate data: ${message}`, entry.name, { cause: error });
  }
  if (/unexpected EOF|overflows file bounds|end of archive data/.test(message)) {
    return new PackageError(`entry data is truncated: ${message}`, entry.name, { cause: error });
  }
  return new PackageError(`cannot read entry: ${message}`, entry.name, { cause: error });
}

function inflatedTooMuch(entry: StoredEntry, cause?: unknown): PackageError {
  return new PackageError(
    `content is larger than the ${entry.uncompressedSize} bytes the central directory declares (zip bomb or corrupt archive); reading stopped`,
    entry.name,
    cause === undefined ? undefined : { cause },
  );
}

function inflatedTooLittle(entry: StoredEntry, cause?: unknown): PackageError {
  return new PackageError(
    `content is smaller than the ${entry.uncompressedSize} bytes the central directory declares`,
    entry.name,
    cause === undefined ? undefined : { cause },
  );
}

function hex32(value: number): string {
  return (value >>> 0).toString(16).padStart(8, '0');
}

class YauzlArchive implements CsarArchive {
  readonly #zipfile: yauzl.ZipFile;
  readonly #source: ByteSource;
  readonly #entries: readonly StoredEntry[];
  readonly #byPath: ReadonlyMap<string, StoredEntry>;
  readonly #open = new Set<Readable>();
  readonly #primed = new Map<string, Promise<string>>();
  #closed = false;

  constructor(zipfile: yauzl.ZipFile, source: ByteSource, entries: readonly StoredEntry[]) {
    this.#zipfile = zipfile;
    this.#source = source;
    this.#entries = entries;
    this.#byPath = new Map(entries.map((entry) => [entry.path, entry]));
  }

  entries(): readonly ArchiveEntry[] {
    return this.#entries.map(({ path, uncompressedSize, compressedSize, crc32, isDirectory }) => ({
      path,
      uncompressedSize,
      compressedSize,
      crc32,
      isDirectory,
    }));
  }

  has(path: string): boolean {
    return this.#byPath.has(normalisePath(path));
  }

  async readText(path: string, maxBytes = DEFAULT_TEXT_BYTES): Promise<string> {
    const bytes = await this.readBytes(path, maxBytes);
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch (error) {
      throw new PackageError('content is not valid UTF-8 text', this.#file(path).name, { cause: error });
    }
  }

  async readBytes(path: string, maxBytes: number): Promise<Buffer> {
    const entry = this.#file(path);
    if (entry.uncompressedSize > maxBytes) {
      throw new PackageError(`entry is ${entry.uncompressedSize} bytes, more than the ${maxBytes} bytes accepted here`, entry.name);
    }
    const chunks: Buffer[] = [];
    for await (const chunk of await this.openStream(path)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  primeHash(path: string, algorithm: HashAlgorithm, digest: Promise<string>): void {
    digest.catch(() => undefined); // observed by whoever asks for it
    this.#primed.set(`${algorithm}:${normalisePath(path)}`, digest);
  }

  async storedRange(path: string): Promise<{ offset: number; length: number } | undefined> {
    const entry = this.#file(path);
    const header = await this.#vettedHeader(entry);
    return entry.yauzlEntry.compressionMethod === 0 ? { offset: header.fileDataStart, length: entry.compressedSize } : undefined;
  }

  async hashEntry(path: string, algorithm: HashAlgorithm): Promise<string> {
    const primed = this.#primed.get(`${algorithm}:${normalisePath(path)}`);
    if (primed) return primed;
    const hash = createHash(algorithm);
    for await (const chunk of await this.openStream(path)) hash.update(chunk as Buffer);
    return hash.digest('hex');
  }

  async openStream(path: string): Promise<Readable> {
    const entry = this.#file(path);
    const { yauzlEntry } = entry;
    const header = await this.#vettedHeader(entry);
    this.#assertOpen();
    const raw = await new Promise<Readable>((resolve, reject) => {
      this.#zipfile.openReadStreamLowLevel(
        header.fileDataStart,
        entry.compressedSize,
        0,
        entry.compressedSize,
        yauzlEntry.compressionMethod === 8,
        entry.uncompressedSize,
        (error, stream) => (error ? reject(entryError(error, entry)) : resolve(stream)),
      );
    });
    const guarded = new EntryGuard(entry);
    raw.on('error', (error) => guarded.destroy(entryError(error, entry)));
    guarded.on('close', () => {
      this.#open.delete(guarded);
      raw.unpipe(guarded);
      raw.destroy();
    });
    this.#open.add(guarded);
    raw.pipe(guarded);
    return guarded;
  }

  /** The entry's local header, checked against what the central directory said. */
  async #vettedHeader(entry: StoredEntry): Promise<yauzl.LocalFileHeader> {
    const { yauzlEntry } = entry;
    let header: yauzl.LocalFileHeader;
    try {
      header = await this.#zipfile.readLocalFileHeaderPromise(yauzlEntry);
    } catch (error) {
      throw entryError(error, entry);
    }
    // Another reader that trusts local headers must see the same file we vetted.
    if (!header.fileName.equals(entry.nameBytes)) {
      throw new PackageError(`the local file header names "${header.fileName.toString('latin1')}", not this entry`, entry.name);
    }
    if (header.compressionMethod !== yauzlEntry.compressionMethod || header.generalPurposeBitFlag & 0x1) {
      throw new PackageError('the local file header disagrees with the central directory (compression method or encryption)', entry.name);
    }
    if (header.fileDataStart + entry.compressedSize > entry.dataLimit) {
      throw new PackageError('entry data overlaps the next entry or the central directory', entry.name);
    }
    return header;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const stream of this.#open) stream.destroy(new Error('the archive was closed'));
    this.#zipfile.close();
    await this.#source.close?.();
  }

  #file(path: string): StoredEntry {
    this.#assertOpen();
    const entry = this.#byPath.get(normalisePath(path));
    if (!entry) throw new PackageError('no such file in the archive', path);
    if (entry.isDirectory) throw new PackageError('is a directory, not a file', entry.name);
    return entry;
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('the archive is closed');
  }
}

/** Passes an entry's content through, failing as soon as it exceeds the declared size, and checking size and CRC-32 at the end. */
class EntryGuard extends Transform {
  readonly #entry: StoredEntry;
  #bytes = 0;
  #crc = 0;

  constructor(entry: StoredEntry) {
    super();
    this.#entry = entry;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#bytes += chunk.length;
    if (this.#bytes > this.#entry.uncompressedSize) {
      callback(inflatedTooMuch(this.#entry));
      return;
    }
    this.#crc = crc32(chunk, this.#crc);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    if (this.#bytes < this.#entry.uncompressedSize) callback(inflatedTooLittle(this.#entry));
    else if (this.#crc >>> 0 !== this.#entry.crc32 >>> 0) {
      callback(new PackageError(`CRC-32 mismatch: central directory says ${hex32(this.#entry.crc32)}, content is ${hex32(this.#crc)}`, this.#entry.name));
    } else callback();
  }
}

/** yauzl's view of the ByteSource: small reads through a cached window, entry data as a stream of bounded ranges. */
class SourceReader extends yauzl.RandomAccessReader {
  readonly #source: ByteSource;
  #window: { start: number; data: Buffer } | undefined;

  constructor(source: ByteSource) {
    super();
    this.#source = source;
  }

  /** At most `length` bytes at `position`; fewer only at the end of the source. */
  async #fetch(position: number, length: number): Promise<Buffer> {
    const end = Math.min(this.#source.size, position + length);
    if (position >= end) return Buffer.alloc(0);
    const window = this.#window;
    if (window && position >= window.start && end <= window.start + window.data.length) {
      return window.data.subarray(position - window.start, end - window.start);
    }
    if (length > WINDOW_BYTES) return this.#source.read(position, end - position);
    const data = await this.#source.read(position, Math.min(WINDOW_BYTES, this.#source.size - position));
    this.#window = { start: position, data };
    return data.subarray(0, end - position);
  }

  override read(buffer: Buffer, offset: number, length: number, position: number, callback: (error: Error | null, bytesRead?: number) => void): void {
    this.#fetch(position, length).then(
      (data) => {
        data.copy(buffer, offset);
        callback(null, data.length);
      },
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
    );
  }

  override _readStreamForRange(start: number, end: number): Readable {
    let position = start;
    const fetch = (at: number, length: number) => this.#fetch(at, length);
    return new Readable({
      highWaterMark: DATA_CHUNK_BYTES,
      read() {
        if (position >= end) {
          this.push(null);
          return;
        }
        fetch(position, Math.min(DATA_CHUNK_BYTES, end - position)).then(
          (chunk) => {
            if (chunk.length === 0) {
              this.destroy(new Error(`unexpected end of archive data at byte ${position}`));
              return;
            }
            position += chunk.length;
            this.push(chunk);
          },
          (error: unknown) => this.destroy(error instanceof Error ? error : new Error(String(error))),
        );
      },
    });
  }
}

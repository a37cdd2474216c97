// Test support: zips built in memory. `buildZip` makes honest ones with yazl; `craftZip` writes local
// headers, central directory and end record by hand so a test can choose names, flags, methods, declared
// sizes, CRCs and unix modes that no honest writer would produce.
import { crc32, createDeflateRaw, deflateRawSync } from 'node:zlib';
import yazl from 'yazl';

/** An honest zip (deflated unless `store`), entries in the given order; a name ending in "/" is a directory. */
export async function buildZip(files: Record<string, string | Buffer>, options: { store?: boolean } = {}): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(files)) {
    if (name.endsWith('/')) zip.addEmptyDirectory(name);
    else zip.addBuffer(Buffer.from(content), name, { compress: !options.store, mtime: new Date('2024-01-01T00:00:00Z') });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

export interface CraftEntry {
  name: string | Buffer;
  /** Uncompressed content; deflated for method 8 unless `data` is given. Default empty. */
  content?: Buffer | string;
  /** The entry's data exactly as stored in the archive (already compressed for method 8). */
  data?: Buffer;
  /** 0 stored (default), 8 deflate, anything else to test refusal. */
  method?: number;
  flags?: number;
  /** Declared values; default to the truth. */
  crc32?: number;
  compressedSize?: number;
  uncompressedSize?: number;
  /** Unix mode in the high 16 bits, e.g. unixMode(0o120777) for a symlink. Default a regular 0644 file. */
  externalAttributes?: number;
  /** Name in the local file header when it should differ from the central directory's. */
  localName?: string | Buffer;
  /** Local header offset written in the central directory instead of the real one (for overlapping entries). */
  centralOffset?: number;
}

export function unixMode(mode: number): number {
  return (mode << 16) >>> 0;
}

const UNIX_MADE_BY = (3 << 8) | 30;

/** A zip written byte by byte: each local header and data in order, then the central directory and end record. */
export function craftZip(entries: readonly CraftEntry[], options: { entryCount?: number; centralDirectoryOffset?: number } = {}): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name);
    const localName = entry.localName === undefined ? name : Buffer.from(entry.localName);
    const content = Buffer.from(entry.content ?? '');
    const method = entry.method ?? 0;
    const data = entry.data ?? (method === 8 ? deflateRawSync(content) : content);
    const flags = entry.flags ?? 0x800;
    const crc = entry.crc32 ?? crc32(content);
    const compressedSize = entry.compressedSize ?? data.length;
    const uncompressedSize = entry.uncompressedSize ?? content.length;

    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE(0x5821, 12);
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(compressedSize, 18);
    local.writeUInt32LE(uncompressedSize, 22);
    local.writeUInt16LE(localName.length, 26);
    local.writeUInt16LE(0, 28);
    locals.push(local, localName, data);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(UNIX_MADE_BY, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x5821, 14);
    central.writeUInt32LE(crc >>> 0, 16);
    central.writeUInt32LE(compressedSize, 20);
    central.writeUInt32LE(uncompressedSize, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt16LE(0, 30);
    central.writeUInt16LE(0, 32);
    central.writeUInt16LE(0, 34);
    central.writeUInt16LE(0, 36);
    central.writeUInt32LE(entry.externalAttributes ?? unixMode(0o100644), 38);
    central.writeUInt32LE(entry.centralOffset ?? offset, 42);
    centrals.push(central, name);

    offset += local.length + localName.length + data.length;
  }
  const centralDirectory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(options.entryCount ?? entries.length, 8);
  end.writeUInt16LE(options.entryCount ?? entries.length, 10);
  end.writeUInt32LE(centralDirectory.length, 12);
  end.writeUInt32LE(options.centralDirectoryOffset ?? offset, 16);
  end.writeUInt16LE(0, 20);
  return Buffer.concat([...locals, centralDirectory, end]);
}

/** `bytes` zeros deflated (about 1 KiB per MiB), built in 1 MiB steps so the test never holds the zeros. */
export async function deflatedZeros(bytes: number): Promise<{ data: Buffer; crc32: number }> {
  const deflate = createDeflateRaw({ level: 9 });
  const chunks: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve, reject) => {
    deflate.on('end', resolve);
    deflate.on('error', reject);
  });
  const zeros = Buffer.alloc(1024 * 1024);
  let crc = 0;
  for (let left = bytes; left > 0; left -= zeros.length) {
    const piece = zeros.subarray(0, Math.min(zeros.length, left));
    crc = crc32(piece, crc);
    if (!deflate.write(piece)) await new Promise((resolve) => deflate.once('drain', resolve));
  }
  deflate.end();
  await ended;
  return { data: Buffer.concat(chunks), crc32: crc };
}

// Verifies a LevelDB folder (dynalite's) without opening it. LevelDB itself, opened as dynalite
// opens it, skips log records whose checksum fails and reads table blocks unverified: bit flips
// or a truncated file give an emptier or older database without a word, and the open rewrites
// the files so the damage can no longer be seen. This reads the files as they are: CURRENT names
// a MANIFEST; every record of the MANIFEST and of the write-ahead logs has a good CRC32C; every
// table file the MANIFEST lists is there at its recorded size, and every block of it (index,
// metaindex and data) has a good CRC32C. Formats: leveldb/doc/log_format.md and table_format.md.
// A record cut off by the end of the newest write-ahead log or of the MANIFEST is no damage: it is
// a write the process was killed in the middle of (LevelDB writes a record larger than its buffer
// in more than one write(2)), which had not returned to its caller, and which LevelDB's own reader
// drops as "the writer died in the middle of writing the record" (log_reader.cc). Anywhere else a
// record that runs past its file's end is a truncated file.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const CRC32C_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32c(...parts: Uint8Array[]): number {
  let crc = 0xffffffff;
  for (const bytes of parts) for (const byte of bytes) crc = (CRC32C_TABLE[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** LevelDB stores CRCs masked, so a CRC of data holding CRCs is not itself trivial. */
function unmask(masked: number): number {
  const rot = (masked - 0xa282ead8) >>> 0;
  return ((rot >>> 17) | (rot << 15)) >>> 0;
}

class Reader {
  offset = 0;
  constructor(readonly bytes: Buffer) {}
  get done(): boolean {
    return this.offset >= this.bytes.length;
  }
  varint(): number {
    let value = 0;
    for (let shift = 1; ; shift *= 128) {
      if (this.offset >= this.bytes.length) throw new Error('a varint runs past the end');
      const byte = this.bytes[this.offset++] as number;
      value += (byte & 0x7f) * shift;
      if (byte < 0x80) return value;
      if (shift > 2 ** 56) throw new Error('a varint is too long');
    }
  }
  slice(length = this.varint()): Buffer {
    if (this.offset + length > this.bytes.length) throw new Error('a field runs past the end');
    this.offset += length;
    return this.bytes.subarray(this.offset - length, this.offset);
  }
}

const BLOCK = 32768;
const HEADER = 7;

/**
 * The logical records of a log-format file (write-ahead log or MANIFEST); throws on a bad CRC, a bad
 * length or a truncated record, except, when `tornTail`, a last record cut off by the file's end
 * (the write a kill interrupted: see the head of this file), which ends the records as it ends LevelDB's.
 */
function logRecords(bytes: Buffer, tornTail = false): Buffer[] {
  const records: Buffer[] = [];
  let pending: Buffer[] | undefined;
  let offset = 0;
  while (offset < bytes.length) {
    const left = BLOCK - (offset % BLOCK);
    if (left < HEADER) {
      offset += left;
      continue;
    } // block trailer
    if (offset + HEADER > bytes.length) {
      if (tornTail) break;
      throw new Error(`ends in a partial record header at byte ${offset} (truncated)`);
    }
    const length = bytes.readUInt16LE(offset + 4);
    const type = bytes[offset + 6] as number;
    if (type === 0 && length === 0) {
      offset += left;
      continue;
    } // preallocated zeros
    if (HEADER + length > left) throw new Error(`has a record with a bad length at byte ${offset}`);
    if (offset + HEADER + length > bytes.length) {
      if (tornTail) break;
      throw new Error(`ends in a partial record at byte ${offset} (truncated)`);
    }
    const data = bytes.subarray(offset + HEADER, offset + HEADER + length);
    if (crc32c(Uint8Array.of(type), data) !== unmask(bytes.readUInt32LE(offset)))
      throw new Error(`has a record whose checksum does not match at byte ${offset}`);
    if (type === 1) records.push(data);
    else if (type === 2) pending = [data];
    else if (type === 3 && pending) pending.push(data);
    else if (type === 4 && pending) {
      records.push(Buffer.concat([...pending, data]));
      pending = undefined;
    } else throw new Error(`has a record of unexpected type ${type} at byte ${offset}`);
    offset += HEADER + length;
  }
  return records;
}

/** The table files a MANIFEST says are live: file number -> size in bytes. */
function liveTables(manifest: Buffer, tornTail: boolean): Map<number, number> {
  const live = new Map<number, number>();
  for (const record of logRecords(manifest, tornTail)) {
    const edit = new Reader(record);
    while (!edit.done) {
      const tag = edit.varint();
      if (tag === 1)
        edit.slice(); // comparator
      else if (tag === 2 || tag === 3 || tag === 4 || tag === 9)
        edit.varint(); // log, next file, last sequence, prev log
      else if (tag === 5) {
        edit.varint();
        edit.slice();
      } // compact pointer
      else if (tag === 6) {
        edit.varint();
        live.delete(edit.varint());
      } // deleted file
      else if (tag === 7) {
        edit.varint();
        const number = edit.varint();
        live.set(number, edit.varint());
        edit.slice();
        edit.slice();
      } // new file
      else throw new Error(`has a version edit with unknown tag ${tag}`);
    }
  }
  return live;
}

/** Snappy decompression (format_description.txt), for index blocks LevelDB compressed. */
function unsnappy(input: Buffer): Buffer {
  const reader = new Reader(input);
  const output = Buffer.alloc(reader.varint());
  let at = 0;
  while (!reader.done) {
    const tag = input[reader.offset++] as number;
    let length: number;
    let distance: number;
    if ((tag & 3) === 0) {
      length = tag >>> 2;
      if (length >= 60) {
        const bytes = length - 59;
        length = input.readUIntLE(reader.offset, bytes);
        reader.offset += bytes;
      }
      reader.slice(length + 1).copy(output, at);
      at += length + 1;
      continue;
    }
    if ((tag & 3) === 1) {
      length = 4 + ((tag >>> 2) & 7);
      distance = ((tag >>> 5) << 8) | (input[reader.offset++] as number);
    } else if ((tag & 3) === 2) {
      length = (tag >>> 2) + 1;
      distance = input.readUInt16LE(reader.offset);
      reader.offset += 2;
    } else {
      length = (tag >>> 2) + 1;
      distance = input.readUInt32LE(reader.offset);
      reader.offset += 4;
    }
    if (distance === 0 || distance > at || at + length > output.length) throw new Error('a compressed block is malformed');
    for (let i = 0; i < length; i++, at++) output[at] = output[at - distance] as number;
  }
  if (at !== output.length) throw new Error('a compressed block is short');
  return output;
}

const TABLE_MAGIC = Buffer.from('57fb808b247547db', 'hex');

/** A table block's contents after its CRC is checked (and decompressed when `decompress`). */
function tableBlock(file: Buffer, offset: number, size: number, decompress: boolean): Buffer {
  if (offset + size + 5 > file.length) throw new Error(`has a block past its end at byte ${offset} (truncated)`);
  const contents = file.subarray(offset, offset + size);
  const type = file[offset + size] as number;
  if (crc32c(contents, Uint8Array.of(type)) !== unmask(file.readUInt32LE(offset + size + 1)))
    throw new Error(`has a block whose checksum does not match at byte ${offset}`);
  if (!decompress || type === 0) return contents;
  if (type === 1) return unsnappy(contents);
  throw new Error(`has a block of unknown compression ${type} at byte ${offset}`);
}

/** The values of a block's entries (the restart array at its end is skipped). */
function blockValues(block: Buffer): Buffer[] {
  if (block.length < 4) throw new Error('has a block too short for its restart array');
  const end = block.length - 4 - 4 * block.readUInt32LE(block.length - 4);
  if (end < 0) throw new Error('has a block with a bad restart array');
  const reader = new Reader(block.subarray(0, end));
  const values: Buffer[] = [];
  while (!reader.done) {
    reader.varint(); // shared key bytes
    const unshared = reader.varint();
    const valueLength = reader.varint();
    reader.slice(unshared);
    values.push(reader.slice(valueLength));
  }
  return values;
}

function verifyTable(file: Buffer): void {
  if (file.length < 48 || !file.subarray(file.length - 8).equals(TABLE_MAGIC)) throw new Error('has no table footer (truncated or overwritten)');
  const footer = new Reader(file.subarray(file.length - 48, file.length - 8));
  const metaindex = [footer.varint(), footer.varint()] as const;
  const index = [footer.varint(), footer.varint()] as const;
  tableBlock(file, metaindex[0], metaindex[1], false);
  for (const handle of blockValues(tableBlock(file, index[0], index[1], true))) {
    const data = new Reader(handle);
    tableBlock(file, data.varint(), data.varint(), false);
  }
}

/** What is wrong with a LevelDB folder, one line per damaged file (naming it); empty when it is sound. */
export function levelDbDamage(dir: string): string[] {
  const damage: string[] = [];
  const check = (path: string, verify: () => void) => {
    try {
      verify();
    } catch (error) {
      damage.push(`${path} ${(error as Error).message}`);
    }
  };
  const current = join(dir, 'CURRENT');
  if (!existsSync(current)) return [`${current} is missing (the folder holds no LevelDB database)`];
  const manifestName = readFileSync(current, 'utf8').trim();
  const manifest = join(dir, manifestName);
  if (!/^MANIFEST-\d+$/.test(manifestName) || !existsSync(manifest)) return [`${current} names "${manifestName.slice(0, 40)}", which is not there`];
  let tables = new Map<number, number>();
  check(manifest, () => {
    tables = liveTables(readFileSync(manifest), true);
  });
  // Log files are numbered in the order LevelDB made them (zero-padded to six digits at least).
  const logs = readdirSync(dir)
    .filter((n) => /^\d+\.log$/.test(n))
    .sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10));
  for (const [i, name] of logs.entries()) {
    const path = join(dir, name);
    check(path, () => logRecords(readFileSync(path), i === logs.length - 1));
  }
  for (const [number, size] of tables) {
    const base = join(dir, String(number).padStart(6, '0'));
    const path = existsSync(`${base}.ldb`) ? `${base}.ldb` : existsSync(`${base}.sst`) ? `${base}.sst` : undefined;
    if (!path) {
      damage.push(`${base}.ldb is missing (the MANIFEST lists it)`);
      continue;
    }
    const actual = statSync(path).size;
    if (actual !== size) {
      damage.push(`${path} is ${actual} bytes where the MANIFEST records ${size} (truncated or overwritten)`);
      continue;
    }
    check(path, () => verifyTable(readFileSync(path)));
  }
  return damage;
}

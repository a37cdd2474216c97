// JSON data as a Python pickle (protocol 2), for the dict a Python vendor script reads from stdin
// (`pickle.load(sys.stdin.buffer)`, as Tacker hands it). The value unpickled is the one Python's
// `json.loads(JSON.stringify(value))` gives: dicts in the same key order, ints for the numbers JSON
// writes without a fraction or exponent (any size), floats for the others, str, bool, None. Writing
// the pickle here spares a python3 process per script; only data goes in, no code.

const MARK = 0x28; // (
const STOP = 0x2e; // .
const NONE = 0x4e; // N
const NEWTRUE = 0x88;
const NEWFALSE = 0x89;
const PROTO = 0x80;
const BININT = 0x4a; // J: 4-byte signed little-endian
const LONG1 = 0x8a; // 1-byte length, then a little-endian two's complement integer
const BINFLOAT = 0x47; // G: 8-byte big-endian double
const BINUNICODE = 0x58; // X: 4-byte little-endian length, then UTF-8 (surrogatepass)
const EMPTY_LIST = 0x5d; // ]
const APPENDS = 0x65; // e
const EMPTY_DICT = 0x7d; // }
const SETITEMS = 0x75; // u

/** Items per MARK ... APPENDS/SETITEMS group, as Python's pickler batches them. */
const BATCH = 1000;

class Writer {
  readonly #chunks: Buffer[] = [];

  byte(value: number): void {
    this.#chunks.push(Buffer.of(value));
  }

  bytes(value: Buffer): void {
    this.#chunks.push(value);
  }

  done(): Buffer {
    return Buffer.concat(this.#chunks);
  }
}

/** UTF-8, with lone surrogates as their own three bytes (Python's 'surrogatepass', which unpickling uses). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function utf8(text: string): Buffer {
  if (!LONE_SURROGATE.test(text)) return Buffer.from(text, 'utf8');
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      out.push(...Buffer.from(text.slice(i, i + 2), 'utf8'));
      i++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      out.push(0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f));
    } else {
      out.push(...Buffer.from(text[i] as string, 'utf8'));
    }
  }
  return Buffer.from(out);
}

/** A little-endian two's complement integer in as few bytes as hold its sign. */
function longBytes(value: bigint): Buffer {
  const out: number[] = [];
  let rest = value;
  for (;;) {
    const byte = Number(rest & 0xffn);
    out.push(byte);
    rest >>= 8n;
    if ((rest === 0n && (byte & 0x80) === 0) || (rest === -1n && (byte & 0x80) !== 0)) break;
  }
  return Buffer.from(out);
}

function writeString(out: Writer, text: string): void {
  const data = utf8(text);
  const header = Buffer.alloc(5);
  header[0] = BINUNICODE;
  header.writeUInt32LE(data.length, 1);
  out.bytes(header);
  out.bytes(data);
}

function writeNumber(out: Writer, value: number): void {
  // What JSON.stringify writes for it, and so what json.loads makes of it.
  const text = Number.isFinite(value) ? String(value) : 'null';
  if (text === 'null') {
    out.byte(NONE);
  } else if (/^-?\d+$/.test(text)) {
    const integer = BigInt(text);
    if (integer >= -(2n ** 31n) && integer < 2n ** 31n) {
      const data = Buffer.alloc(5);
      data[0] = BININT;
      data.writeInt32LE(Number(integer), 1);
      out.bytes(data);
    } else {
      const bytes = longBytes(integer);
      out.bytes(Buffer.of(LONG1, bytes.length));
      out.bytes(bytes);
    }
  } else {
    const data = Buffer.alloc(9);
    data[0] = BINFLOAT;
    data.writeDoubleBE(value, 1);
    out.bytes(data);
  }
}

function write(out: Writer, value: unknown): void {
  if (value === null) out.byte(NONE);
  else if (value === true) out.byte(NEWTRUE);
  else if (value === false) out.byte(NEWFALSE);
  else if (typeof value === 'number') writeNumber(out, value);
  else if (typeof value === 'string') writeString(out, value);
  else if (Array.isArray(value)) {
    out.byte(EMPTY_LIST);
    for (let start = 0; start < value.length; start += BATCH) {
      out.byte(MARK);
      for (const item of value.slice(start, start + BATCH)) write(out, item);
      out.byte(APPENDS);
    }
  } else if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    out.byte(EMPTY_DICT);
    for (let start = 0; start < entries.length; start += BATCH) {
      out.byte(MARK);
      for (const [key, item] of entries.slice(start, start + BATCH)) {
        writeString(out, key);
        write(out, item);
      }
      out.byte(SETITEMS);
    }
  } else {
    throw new TypeError(`cannot pickle a ${typeof value}`);
  }
}

/** `value` as JSON sees it (JSON.stringify), pickled with protocol 2. */
export function pickleJson(value: unknown): Buffer {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError('the value has no JSON form');
  const out = new Writer();
  out.bytes(Buffer.of(PROTO, 2));
  write(out, JSON.parse(text) as unknown);
  out.byte(STOP);
  return out.done();
}

// The pickle a Python vendor script reads from stdin: Python unpickles exactly what json.loads makes of
// the same data's JSON (key order, ints of any size versus floats, str with any code point, bool, None).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { pickleJson } from '#lib/scripts/pickle.ts';
import { findPython } from '#lib/scripts/sandbox.ts';

const PYTHON = findPython();

/** What Python makes of the pickle and of the JSON, each as repr() (which tells an int from a float and keeps key order). */
function python(value: unknown): { unpickled: string; fromJson: string } {
  const program = `import json, pickle, sys
data = sys.stdin.buffer.read()
n = int.from_bytes(data[:4], 'little')
unpickled = pickle.loads(data[4:4 + n])
from_json = json.loads(data[4 + n:])
sys.stdout.write(json.dumps({'unpickled': repr(unpickled), 'fromJson': repr(from_json)}))`;
  const pickled = pickleJson(value);
  const length = Buffer.alloc(4);
  length.writeUInt32LE(pickled.length);
  const run = spawnSync(PYTHON as string, ['-I', '-c', program], { input: Buffer.concat([length, pickled, Buffer.from(JSON.stringify(value))]) });
  assert.equal(run.status, 0, run.stderr.toString());
  return JSON.parse(run.stdout.toString()) as { unpickled: string; fromJson: string };
}

describe('pickleJson', { skip: PYTHON ? false : 'python3 is not installed' }, () => {
  it('gives Python what json.loads gives it for the same data', () => {
    const values: unknown[] = [
      {
        operation: 'instantiate_start',
        request: { flavourId: 'simple', additionalParams: { password: 'pa55', nested: [1, 2.5, -3, null, true, false, 'x'] } },
        vnf_instance: { id: 'inst-1', '2': 'integer-like key first', b: 'then b', a: 'then a' },
        grant_request: null,
        user_script_err_handling_data: {},
      },
      [],
      {},
      '',
      0,
      -0,
      1.0,
      0.1,
      -1.5e-7,
      1e21,
      1e300,
      2 ** 31 - 1,
      2 ** 31,
      -(2 ** 31),
      -(2 ** 31) - 1,
      255,
      128,
      -128,
      -129,
      2 ** 53,
      -(2 ** 53),
      1e20,
      -1e20,
      Number.MAX_SAFE_INTEGER,
      'ünïcödé ✓ 𝄞 \u0000 \n "quoted"',
      'lone \ud800 high and \udc00 low surrogates',
      Array.from({ length: 2500 }, (_, i) => i),
      Object.fromEntries(Array.from({ length: 1500 }, (_, i) => [`k${i}`, i % 2 ? `v${i}` : i])),
      { undefinedIsLeftOut: undefined, date: new Date(0), nan: Number.NaN, infinite: Number.POSITIVE_INFINITY },
    ];
    for (const value of values) {
      const { unpickled, fromJson } = python(value);
      assert.equal(unpickled, fromJson, `for ${JSON.stringify(value)?.slice(0, 200)}`);
    }
  });

  it('refuses what has no JSON form', () => {
    assert.throws(() => pickleJson(undefined), TypeError);
  });
});

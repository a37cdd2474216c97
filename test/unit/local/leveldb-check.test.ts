// Tests for the start-up check of the local DynamoDB's LevelDB folder: a record cut off at the end
// of the newest write-ahead log or of the MANIFEST (a write a kill -9 interrupted) is what LevelDB
// itself reads past, not damage; the same cut anywhere else still is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, copyFileSync, mkdtempSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { levelDbDamage } from '#local/leveldb-check.ts';

const VALUE = 'v'.repeat(2000);

/** A LevelDB folder holding keys k0..k(n-1) in its write-ahead log only (closed before any compaction). */
async function database(n: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'leveldb-check-'));
  const db = new ClassicLevel<string, string>(dir);
  await db.open();
  for (let i = 0; i < n; i += 1) await db.put(`k${i}`, VALUE);
  await db.close();
  return dir;
}

const logs = (dir: string) => readdirSync(dir).filter((name) => /^\d+\.log$/.test(name));

async function keys(dir: string): Promise<string[]> {
  const db = new ClassicLevel<string, string>(dir);
  await db.open();
  try {
    return await db.keys().all();
  } finally {
    await db.close();
  }
}

test('a record cut off at the end of the newest write-ahead log is no damage, and LevelDB opens the folder without that write', async () => {
  const dir = await database(3);
  const [log] = logs(dir);
  assert.ok(log);
  const path = join(dir, log);
  // The last record holds 2,000 bytes of value: cutting 500 leaves its header and part of its payload.
  truncateSync(path, statSync(path).size - 500);
  assert.deepEqual(levelDbDamage(dir), []);
  assert.deepEqual(await keys(dir), ['k0', 'k1']);
});

test('a header cut off at the end of the newest write-ahead log is no damage', async () => {
  const dir = await database(2);
  const [log] = logs(dir);
  assert.ok(log);
  appendFileSync(join(dir, log), Buffer.from([1, 2, 3]));
  assert.deepEqual(levelDbDamage(dir), []);
  assert.deepEqual(await keys(dir), ['k0', 'k1']);
});

test('a record cut off at the end of the MANIFEST is no damage', async () => {
  const dir = await database(1);
  const manifest = readFileSync(join(dir, 'CURRENT'), 'utf8').trim();
  appendFileSync(join(dir, manifest), Buffer.from([9, 9, 9, 9, 40, 0, 1, 7]));
  assert.deepEqual(levelDbDamage(dir), []);
});

test('a record cut off at the end of a write-ahead log that is not the newest is named', async () => {
  const dir = await database(3);
  const [log] = logs(dir);
  assert.ok(log);
  const path = join(dir, log);
  // An older log, cut short, before the newest one (LevelDB numbers its files in the order it makes them).
  const older = join(dir, `${String(Number.parseInt(log, 10) - 1).padStart(6, '0')}.log`);
  copyFileSync(path, older);
  truncateSync(older, statSync(older).size - 500);
  const damage = levelDbDamage(dir);
  assert.equal(damage.length, 1);
  assert.match(damage[0] as string, /\.log ends in a partial record at byte \d+ \(truncated\)/);
  assert.ok((damage[0] as string).startsWith(older));
});

test('a bad checksum in the newest write-ahead log is still named, at its end or before it', async () => {
  for (const at of ['last', 'first'] as const) {
    const dir = await database(3);
    const [log] = logs(dir);
    assert.ok(log);
    const path = join(dir, log);
    const bytes = readFileSync(path);
    const flipped = at === 'last' ? bytes.length - 10 : 20;
    bytes[flipped] = (bytes[flipped] as number) ^ 0xff;
    writeFileSync(path, bytes);
    const damage = levelDbDamage(dir);
    assert.equal(damage.length, 1, at);
    assert.match(damage[0] as string, /has a record whose checksum does not match/);
  }
});

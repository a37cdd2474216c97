// Tests for local/s3-objects.ts: the local S3 replaces an object whole (a reader sees the old body
// or the new one, never part of one), its ObjectCreated event comes once the whole body is
// readable (HEAD's size included), and a write that fails leaves the object as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { CreateBucketCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { atomicObjectWrites } from '#local/s3-objects.ts';

atomicObjectWrites();

type Store = {
  getResourcePath(bucket: string, key: string, resource: string): string;
  putObject(object: { bucket: string; key: string; metadata: Record<string, string>; content: Buffer | Readable }): Promise<{ size: number; md5: string }>;
};
const FilesystemStore = createRequire(import.meta.url)('s3rver/lib/stores/filesystem') as new (root: string) => Store;

const bytes = (size: number, fill: number) => Buffer.alloc(size, fill);
const md5 = (body: Buffer) => createHash('md5').update(body).digest('hex');

/** A body streamed in `chunks` pieces, each in a later turn of the event loop; `fail` makes it end in an error half-way. */
function slowBody(body: Buffer, chunks: number, fail = false): Readable {
  const size = Math.ceil(body.length / chunks);
  return Readable.from(
    (async function* () {
      for (let i = 0; i < chunks; i++) {
        if (fail && i === chunks / 2) throw new Error('the upload broke off');
        await new Promise((resolve) => setImmediate(resolve));
        yield body.subarray(i * size, (i + 1) * size);
      }
    })(),
  );
}

test('a reader sees the old body or the new one, never part of one, and a failed write changes nothing', async () => {
  const store = new FilesystemStore(await mkdtemp(join(tmpdir(), 's3-objects-')));
  const at = { bucket: 'packages', key: 'a/package.zip', metadata: { 'content-type': 'application/zip' } };
  const before = bytes(256 * 1024, 1);
  await store.putObject({ ...at, content: before });
  const file = store.getResourcePath(at.bucket, at.key, 'object');
  assert.deepEqual(await readFile(file), before);

  const after = bytes(4 * 1024 * 1024, 2);
  let writing = true;
  const written = store.putObject({ ...at, content: slowBody(after, 64) }).finally(() => {
    writing = false;
  });
  const seen = new Set<string>();
  while (writing) {
    const body = await readFile(file);
    seen.add(body.equals(before) ? 'before' : body.equals(after) ? 'after' : `part of ${body.length} bytes`);
  }
  assert.deepEqual(await written, { size: after.length, md5: md5(after) });
  assert.deepEqual(await readFile(file), after);
  assert.ok(
    [...seen].every((what) => what === 'before' || what === 'after'),
    [...seen].join(', '),
  );
  assert.ok(seen.has('before'), 'the old body was read while the new one was written');

  await assert.rejects(store.putObject({ ...at, content: slowBody(bytes(1024 * 1024, 3), 8, true) }), /broke off/);
  assert.deepEqual(await readFile(file), after);
  assert.equal(await readFile(store.getResourcePath(at.bucket, at.key, 'object.md5'), 'utf8'), md5(after));
  // What the failed write left is no object: only the object's own files end in ._S3rver_object*.
  const names = await readdir(join(file, '..'));
  assert.deepEqual(
    names.filter((name) => name.endsWith('._S3rver_object')),
    ['package.zip._S3rver_object'],
  );
});

test('the ObjectCreated event comes once the whole object is readable', async () => {
  const s3rver = new S3rver({ address: '127.0.0.1', port: 0, directory: await mkdtemp(join(tmpdir(), 's3-objects-')), silent: true });
  const { port } = (await s3rver.run()) as AddressInfo;
  const client = new S3Client({
    region: 'us-east-1',
    endpoint: `http://127.0.0.1:${port}`,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  try {
    await client.send(new CreateBucketCommand({ Bucket: 'packages' }));
    const bodies = [bytes(8 * 1024 * 1024, 7), bytes(64, 8), bytes(3 * 1024 * 1024, 9)];
    const readAtEvent: Array<Promise<{ size?: number; body: Buffer }>> = [];
    s3rver.on('event', (event: { Records: Array<{ s3: { object: { key: string } } }> }) => {
      for (const record of event.Records) {
        const Key = record.s3.object.key;
        readAtEvent.push(
          (async () => {
            const head = await client.send(new HeadObjectCommand({ Bucket: 'packages', Key }));
            const got = await client.send(new GetObjectCommand({ Bucket: 'packages', Key }));
            return { size: head.ContentLength, body: Buffer.from(await (got.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray()) };
          })(),
        );
      }
    });
    for (const [n, body] of bodies.entries()) await client.send(new PutObjectCommand({ Bucket: 'packages', Key: `p${n}/package.zip`, Body: body }));
    const read = await Promise.all(readAtEvent);
    assert.equal(read.length, bodies.length);
    for (const [n, body] of bodies.entries()) {
      assert.equal(read[n]?.size, body.length);
      assert.ok(read[n]?.body.equals(body), `object ${n} read whole at its event`);
    }
  } finally {
    client.destroy();
    await s3rver.close();
  }
});

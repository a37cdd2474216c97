// Object writes of the local S3 (s3rver 3.7) as S3 makes them: a reader sees the old object or the
// whole new one, never a part, and the ObjectCreated event comes once the whole object is readable.
// s3rver's FilesystemStore.putObject wrote the object's file in place (truncated first) and resolved,
// for a body in one buffer, as soon as it had handed the buffer to the file stream, and for a
// streamed body once the last chunk had passed its checksum, not once the file held it. Its HEAD
// takes the size from the file: an onboarding started by the event could read a CSAR of a few
// bytes, or its first half, and refuse it as "not a zip archive, or a truncated one" (seen after a
// restart, with the disk still busy writing out the 64 MiB CSAR before it). Now the body goes to a
// file of its own next to the object's, which replaces the object's file (a rename, atomic on one
// file system) once the whole body is in it; then the metadata, as before. A write that fails, or a
// process killed in the middle, leaves the object as it was and a `.partial-*` file that no listing
// shows (s3rver lists the names ending in `._S3rver_object`).
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

interface StoredObject {
  bucket: string;
  key: string;
  metadata: Record<string, string>;
  content: Buffer | Readable;
}

/** The part of s3rver's FilesystemStore (lib/stores/filesystem.js) the patch uses and replaces. */
interface FilesystemStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5: string): Promise<void>;
  putObject(object: StoredObject): Promise<{ size: number; md5: string }>;
}

const patched = Symbol('vnfm.atomicObjectWrites');

/** Makes every s3rver filesystem store of this process write objects whole (see the head of this file). */
export function atomicObjectWrites(): void {
  const Store = createRequire(import.meta.url)('s3rver/lib/stores/filesystem') as {
    prototype: FilesystemStore & { [patched]?: true };
  };
  const prototype = Store.prototype;
  for (const name of ['getResourcePath', 'putMetadata', 'putObject'] as const) {
    if (typeof prototype[name] !== 'function') throw new Error(`s3rver is not as local/s3-objects.ts expects: FilesystemStore.${name} is not a function`);
  }
  if (prototype[patched]) return;
  prototype[patched] = true;
  prototype.putObject = async function putObject(this: FilesystemStore, object: StoredObject) {
    const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
    await mkdir(dirname(objectPath), { recursive: true });
    const partial = `${objectPath}.partial-${randomBytes(6).toString('hex')}`;
    const md5 = createHash('md5');
    let size = 0;
    try {
      await pipeline(
        Buffer.isBuffer(object.content) ? Readable.from([object.content]) : object.content,
        new Transform({
          transform(chunk: Buffer, _encoding, done) {
            md5.update(chunk);
            size += chunk.length;
            done(null, chunk);
          },
        }),
        createWriteStream(partial),
      );
      await rename(partial, objectPath);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
    const digest = md5.digest('hex');
    await this.putMetadata(object.bucket, object.key, object.metadata, digest);
    return { size, md5: digest };
  };
}

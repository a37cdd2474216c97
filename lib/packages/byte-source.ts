// Random access to the bytes of a CSAR wherever it lives: an S3 object read by ranges, a local
// file, or a buffer. The zip reader only ever asks for ranges, so a package is never held whole
// in memory.
import { open } from 'node:fs/promises';

export interface ByteSource {
  readonly size: number;
  /** Reads exactly `length` bytes at `offset` (fewer only at the end of the source). */
  read(offset: number, length: number): Promise<Buffer>;
  close?(): Promise<void>;
}

export function bufferSource(buffer: Buffer): ByteSource {
  return {
    size: buffer.length,
    read: async (offset, length) => buffer.subarray(offset, Math.min(buffer.length, offset + length)),
  };
}

export async function fileSource(path: string): Promise<ByteSource> {
  const handle = await open(path, 'r');
  const { size } = await handle.stat();
  return {
    size,
    read: async (offset, length) => {
      const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - offset)));
      let done = 0;
      while (done < buffer.length) {
        const { bytesRead } = await handle.read(buffer, done, buffer.length - done, offset + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return buffer.subarray(0, done);
    },
    close: () => handle.close(),
  };
}

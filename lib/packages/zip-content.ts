// The package reads that answer with a zip built for the request (SOL005 GET .../artifacts and a
// VNFD of several files), apart from content.ts so that what only reads a package's files (the LCM
// engine) does not bundle the zip writer.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import yazl from 'yazl';
import { ProblemError } from '#lib/sol/errors.ts';
import type { VnfPackageRecord } from '#lib/store/packages.ts';
import {
  type ArtifactSelection,
  type ByteRangeBody,
  indexedFile,
  packageIndex,
  readFile,
  readLocated,
  requireOnboarded,
  selectedArtifacts,
} from './content.ts';
import { getStream, objectSize, onboardedKey, putObject, SMALL_PARTS } from './storage.ts';

/**
 * SOL005 9.4.5a `GET .../artifacts`: a zip of the selected artifacts in the package's directory
 * structure. It is built once per selection as its own S3 object, streamed entry by entry (images
 * are large), and served like any content: inline when small, else a presigned redirect.
 */
export async function readArtifactSet(record: VnfPackageRecord, selection: ArtifactSelection, rangeHeader: string | undefined): Promise<ByteRangeBody> {
  requireOnboarded(record);
  const index = await packageIndex(record);
  const paths = selectedArtifacts(record, selection);
  const key = onboardedKey(record.id, `artifact-sets/${createHash('sha256').update(JSON.stringify(paths)).digest('hex')}.zip`);
  let size = await objectSize(key);
  if (size === undefined) {
    const zip = new yazl.ZipFile();
    const added = (async () => {
      for (const path of paths) {
        const file = indexedFile(record, index, path, 'artifact');
        const range = file.size === 0 ? undefined : { start: file.offset, end: file.offset + file.size - 1 };
        zip.addReadStream(range ? await getStream(file.key, range) : Readable.from([]), path, { size: file.size });
      }
      zip.end();
    })();
    await Promise.all([added, putObject(key, Readable.from(zip.outputStream), 'application/zip', SMALL_PARTS)]);
    size = (await objectSize(key)) ?? 0;
  }
  return readLocated({ key, offset: 0, size, ownObject: async () => key }, rangeHeader, 'application/zip');
}

/** SOL005 9.4.4.3.2: the VNFD as one YAML (text/plain) or, with several files, a zip of them with TOSCA.meta. */
export async function readVnfd(record: VnfPackageRecord, accept: string | undefined): Promise<{ contentType: string; bytes: Buffer }> {
  requireOnboarded(record);
  const index = await packageIndex(record);
  const files = record.vnfdFiles ?? [index.entryDefinitions];
  const acceptsText = !accept || /text\/plain|\*\/\*|text\/\*/.test(accept);
  const acceptsZip = !accept || /application\/zip|\*\/\*|application\/\*/.test(accept);
  if (files.length === 1 && acceptsText) return { contentType: 'text/plain', bytes: await readFile(record, files[0] as string) };
  if (!acceptsZip) {
    throw new ProblemError(
      406,
      'Not Acceptable',
      `The VNFD of package ${record.id} consists of ${files.length} files and is returned as application/zip; Accept it`,
    );
  }
  const zip = new yazl.ZipFile();
  const paths = index.toscaMetaPath ? [index.toscaMetaPath, ...files] : files;
  for (const path of paths) zip.addBuffer(await readFile(record, path), path);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return { contentType: 'application/zip', bytes: Buffer.concat(chunks) };
}

import { ConflictError, NotFoundError, ProblemError } from '#lib/sol/errors.ts';
import type { VnfPackageRecord } from '#lib/store/packages.ts';
import { contentKey, extractedKey, getBytes, getJson, getStream, objectSize, onboardedKey, presignedGet, putObject } from './storage.ts';

/** Where each file of an onboarded package can be read. */
export interface PackageIndex {
  /** Path inside the CSAR -> S3 object holding exactly its bytes, or a byte range of the stored CSAR. */
  files: Record<string, { key: string; size: number } | { csarOffset: number; size: number }>;
  manifestPath?: string;
  entryDefinitions: string;
  toscaMetaPath?: string;
}

export const INDEX_FILE = 'index.json';

export class RangeNotSatisfiableError extends ProblemError {
  constructor(size: number) {
    super(416, 'Range Not Satisfiable', `The requested range is not within the ${size} bytes of this resource`, {
      headers: { 'Content-Range': `bytes */${size}` },
    });
  }
}

/** One `bytes=a-b`, `bytes=a-` or `bytes=-n` range (SOL005 asks for single ranges). Undefined = whole. */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | undefined {
  if (!header) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) throw new RangeNotSatisfiableError(size);
  let start: number;
  let end: number;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) throw new RangeNotSatisfiableError(size);
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  if (start > end || start >= size) throw new RangeNotSatisfiableError(size);
  return { start, end };
}

export function requireOnboarded(record: VnfPackageRecord): void {
  if (record.onboardingState !== 'ONBOARDED')
    throw new ConflictError(`VNF package ${record.id} is ${record.onboardingState}; its content is available once it is ONBOARDED`);
}

const indexCache = new Map<string, PackageIndex>();
export async function packageIndex(record: VnfPackageRecord): Promise<PackageIndex> {
  const cacheKey = `${record.id}:${record.revision}`;
  let index = indexCache.get(cacheKey);
  if (!index) {
    index = await getJson<PackageIndex>(onboardedKey(record.id, INDEX_FILE));
    if (indexCache.size > 100) indexCache.clear();
    indexCache.set(cacheKey, index);
  }
  return index;
}

export interface ByteRangeBody {
  /** Bytes to send inline, or a URL to redirect to when the body is too large for a Lambda response. */
  bytes?: Buffer;
  redirect?: string;
  size: number;
  range?: { start: number; end: number };
}

/**
 * Lambda responses carry at most 6 MB (base64 inflates by a third), and a body held whole costs its
 * size in memory: anything larger is a 302 to a presigned S3 GET, the same on AWS and locally.
 */
export const MAX_INLINE_BYTES = 4 * 1024 * 1024;
/** How long a download redirect stays valid. */
const PRESIGNED_GET_SECONDS = 900;

/** Where a file's bytes are: a byte range of an S3 object; `ownObject` gives an object holding exactly them. */
export interface Located {
  key: string;
  offset: number;
  size: number;
  ownObject: () => Promise<string>;
}

export async function readLocated(file: Located, rangeHeader: string | undefined, contentType: string): Promise<ByteRangeBody> {
  const range = parseRange(rangeHeader, file.size);
  const length = range ? range.end - range.start + 1 : file.size;
  // The client sends its Range again to the presigned URL; S3 answers it with the 206.
  if (length > MAX_INLINE_BYTES) return { redirect: await presignedGet(await file.ownObject(), PRESIGNED_GET_SECONDS, contentType), size: file.size, range };
  const start = file.offset + (range?.start ?? 0);
  const bytes = length === 0 ? Buffer.alloc(0) : await getBytes(file.key, { start, end: start + length - 1 });
  return { bytes, size: file.size, range };
}

/** Own properties only: a path such as "constructor" or "__proto__" must not find Object.prototype's. */
export function indexedFile(record: VnfPackageRecord, index: PackageIndex, path: string, what: string): Located {
  const file = Object.hasOwn(index.files, path) ? index.files[path] : undefined;
  if (!file) throw new NotFoundError(`VNF package ${record.id} has no ${what} "${path}"`);
  if ('key' in file) return { key: file.key, offset: 0, size: file.size, ownObject: async () => file.key };
  const own = extractedKey(record.id, path);
  const range = { start: file.csarOffset, end: file.csarOffset + file.size - 1 };
  return {
    key: contentKey(record.id),
    offset: file.csarOffset,
    size: file.size,
    // Onboarding copies stored entries over the inline limit to their own objects; a package
    // onboarded before it did gets the copy (streaming, once) on the first download that needs it.
    ownObject: async () => {
      if ((await objectSize(own)) !== file.size) await putObject(own, await getStream(contentKey(record.id), range), 'application/octet-stream');
      return own;
    },
  };
}

export async function readPackageContent(record: VnfPackageRecord, rangeHeader: string | undefined): Promise<ByteRangeBody> {
  requireOnboarded(record);
  const key = contentKey(record.id);
  return readLocated({ key, offset: 0, size: record.contentSize ?? 0, ownObject: async () => key }, rangeHeader, 'application/zip');
}

export async function readArtifact(record: VnfPackageRecord, path: string, rangeHeader: string | undefined): Promise<ByteRangeBody> {
  requireOnboarded(record);
  return readLocated(indexedFile(record, await packageIndex(record), path, 'artifact'), rangeHeader, 'application/octet-stream');
}

/** SOL005 9.4.5a.3.2 selection of `GET .../artifacts` (URI query flags and set ids). */
export interface ArtifactSelection {
  includeSignatures: boolean;
  excludeManoArtifacts: boolean;
  excludeNonManoArtifacts: boolean;
  /** Only the non-MANO artifacts of these sets (undefined: of every set). */
  nonManoSets?: string[];
}

/** The artifact files (in the package) the selection names, in path order. */
export function selectedArtifacts(record: VnfPackageRecord, selection: ArtifactSelection): string[] {
  const chosen = new Set<string>();
  for (const image of record.softwareImages ?? []) {
    if (!selection.excludeManoArtifacts && typeof image.imagePath === 'string') chosen.add(image.imagePath);
  }
  for (const artifact of record.additionalArtifacts ?? []) {
    if (typeof artifact.artifactPath !== 'string') continue; // external: not in the package
    const set = typeof artifact.nonManoArtifactSetId === 'string' ? artifact.nonManoArtifactSetId : undefined;
    if (
      set === undefined ? selection.excludeManoArtifacts : selection.excludeNonManoArtifacts || (selection.nonManoSets && !selection.nonManoSets.includes(set))
    )
      continue;
    chosen.add(artifact.artifactPath);
  }
  if (selection.includeSignatures) {
    for (const path of [...chosen])
      for (const extra of (record.artifactSignatures && Object.hasOwn(record.artifactSignatures, path) ? record.artifactSignatures[path] : undefined) ?? [])
        chosen.add(extra);
  }
  return [...chosen].sort();
}

/** Small files of onboarded packages as read last (a package's files never change): the templates and scripts every operation reads again. */
const smallFiles = new Map<string, Buffer>();
const SMALL_FILE_BYTES = 256 * 1024;
const SMALL_FILES_BYTES = 16 * 1024 * 1024;
let smallFilesBytes = 0;

export async function readFile(record: VnfPackageRecord, path: string): Promise<Buffer> {
  const file = indexedFile(record, await packageIndex(record), path, 'file');
  if (file.size === 0) return Buffer.alloc(0);
  const cacheKey = `${record.id}:${record.revision}:${file.key}:${file.offset}:${file.size}`;
  const cached = smallFiles.get(cacheKey);
  if (cached) return Buffer.from(cached);
  const bytes = await getBytes(file.key, { start: file.offset, end: file.offset + file.size - 1 });
  if (bytes.length <= SMALL_FILE_BYTES) {
    if (smallFilesBytes + bytes.length > SMALL_FILES_BYTES) {
      smallFiles.clear();
      smallFilesBytes = 0;
    }
    smallFiles.set(cacheKey, Buffer.from(bytes));
    smallFilesBytes += bytes.length;
  }
  return bytes;
}

export async function readManifest(record: VnfPackageRecord): Promise<Buffer> {
  requireOnboarded(record);
  const index = await packageIndex(record);
  if (!index.manifestPath) throw new NotFoundError(`VNF package ${record.id} has no manifest file`);
  return readFile(record, index.manifestPath);
}

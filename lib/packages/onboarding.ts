// Onboarding of a VNF package (SOL005 9.4 state model): when its CSAR lands at the content key,
// the package goes PROCESSING, the CSAR is checked (SOL004 structure, manifest hashes, signature)
// and its VNFD parsed (SOL001) once; everything later operations need is kept (the record, the
// parsed VNFD and an index of the files in S3). Any problem returns the package to CREATED with
// onboardingFailureDetails saying what and where, and leaves nothing behind.
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { CoreDeps } from '#lib/ports.ts';
import { log } from '#lib/log.ts';
import type { ProblemDetailsRecord } from '#lib/sol/model.ts';
import { openArchive, type CsarArchive } from './archive.ts';
import { quotaExceeded, storageLimitsFromEnv, tenantStoredBytes } from './limits.ts';
import { inspectCsar } from './csar.ts';
import { PackageError } from './errors.ts';
import type { ParsedVnfd } from './vnfd/model.ts';
import { parseVnfd } from './vnfd/parse.ts';
import { INDEX_FILE, MAX_INLINE_BYTES, type PackageIndex } from './content.ts';
import { contentKey, deletePrefix, extractedKey, getStream, onboardedKey, putObject, s3Source, SMALL_PARTS } from './storage.ts';

export const PARSED_VNFD_FILE = 'vnfd.json';

export type OnboardingOutcome = 'ONBOARDED' | 'FAILED' | 'IGNORED';

/** Entries this big and stored uncompressed (images, typically) are never copied out of the CSAR. */
const IN_PLACE_BYTES = 1024 * 1024;

interface InPlaceEntry {
  path: string;
  offset: number;
  length: number;
}

/** A stored entry too big to answer inline gets its own object (so downloads can be presigned), written in the same pass. */
const ownObjectFor = (entry: InPlaceEntry): boolean => entry.length > MAX_INLINE_BYTES;

/**
 * One sequential read of the whole CSAR computes its SHA-256 and, from the same bytes, the SHA-256
 * of every big stored entry, which the manifest check then takes instead of reading them again, and
 * copies those over the inline limit to their own objects.
 */
async function hashInOnePass(key: string, archive: CsarArchive, packageId: string, inPlace: readonly InPlaceEntry[]): Promise<string> {
  const whole = createHash('sha256');
  const pending = inPlace.map((entry) => {
    let settle!: { resolve: (digest: string) => void; reject: (error: unknown) => void };
    const digest = new Promise<string>((resolve, reject) => {
      settle = { resolve, reject };
    });
    archive.primeHash(entry.path, 'sha256', digest);
    const sink = ownObjectFor(entry) ? new PassThrough() : undefined;
    const stored = sink ? putObject(extractedKey(packageId, entry.path), sink, 'application/octet-stream', SMALL_PARTS) : undefined;
    stored?.catch(() => undefined); // awaited below
    return { ...entry, hash: createHash('sha256'), settle, sink, stored };
  });
  try {
    let position = 0;
    for await (const chunk of await getStream(key)) {
      const bytes = chunk as Buffer;
      whole.update(bytes);
      const end = position + bytes.length;
      for (const entry of pending) {
        const from = Math.max(entry.offset, position);
        const to = Math.min(entry.offset + entry.length, end);
        if (from >= to) continue;
        const slice = bytes.subarray(from - position, to - position);
        entry.hash.update(slice);
        if (entry.sink && entry.stored) {
          if (!entry.sink.write(slice)) await Promise.race([once(entry.sink, 'drain'), entry.stored]);
          if (to === entry.offset + entry.length) entry.sink.end();
        }
      }
      position = end;
    }
    if (pending.some((entry) => entry.sink && !entry.sink.writableEnded)) throw new PackageError('the package content ended inside a stored entry');
    for (const entry of pending) entry.settle.resolve(entry.hash.digest('hex'));
    await Promise.all(pending.map((entry) => entry.stored));
    return whole.digest('hex');
  } catch (error) {
    for (const entry of pending) {
      entry.settle.reject(error);
      entry.sink?.destroy(error as Error);
    }
    await Promise.allSettled(pending.map((entry) => entry.stored));
    throw error;
  }
}

/** Copies the small or compressed files out to their own S3 objects; big stored ones are read in place (or were copied by hashInOnePass). */
async function indexFiles(archive: CsarArchive, packageId: string, inPlace: readonly InPlaceEntry[]): Promise<PackageIndex['files']> {
  const files: PackageIndex['files'] = {};
  for (const entry of inPlace) {
    files[entry.path] = ownObjectFor(entry)
      ? { key: extractedKey(packageId, entry.path), size: entry.length }
      : { csarOffset: entry.offset, size: entry.length };
  }
  for (const entry of archive.entries()) {
    if (entry.isDirectory || files[entry.path]) continue;
    const key = extractedKey(packageId, entry.path);
    await putObject(
      key,
      entry.uncompressedSize <= IN_PLACE_BYTES ? await archive.readBytes(entry.path, entry.uncompressedSize) : await archive.openStream(entry.path),
      'application/octet-stream',
    );
    files[entry.path] = { key, size: entry.uncompressedSize };
  }
  return files;
}

async function inPlaceEntries(archive: CsarArchive): Promise<InPlaceEntry[]> {
  const found: InPlaceEntry[] = [];
  for (const entry of archive.entries()) {
    if (entry.isDirectory || entry.uncompressedSize < IN_PLACE_BYTES) continue;
    const range = await archive.storedRange(entry.path);
    if (range) found.push({ path: entry.path, ...range });
  }
  return found;
}

function signaturesOf(artifacts: ReadonlyArray<{ artifactPath: string; signaturePath?: string; certificatePath?: string }>): {
  artifactSignatures?: Record<string, string[]>;
} {
  const entries = artifacts
    .map(
      (artifact) => [artifact.artifactPath, [artifact.signaturePath, artifact.certificatePath].filter((path): path is string => path !== undefined)] as const,
    )
    .filter(([, paths]) => paths.length > 0);
  return entries.length ? { artifactSignatures: Object.fromEntries(entries) } : {};
}

function softwareImagesOf(vnfd: ParsedVnfd, createdAt: string): Array<Record<string, unknown>> {
  return vnfd.softwareImages.map((image) => ({
    id: image.id,
    name: image.name,
    provider: image.provider ?? vnfd.vnfProvider,
    version: image.version,
    // SOL005 spells algorithms like "SHA-512"; VNFDs often write "sha-512" or "sha512".
    checksum: { algorithm: image.checksum.algorithm.toUpperCase().replace(/^SHA-?(\d+)$/, 'SHA-$1'), hash: image.checksum.hash },
    isEncrypted: false,
    containerFormat: image.containerFormat.toUpperCase(),
    diskFormat: image.diskFormat.toUpperCase(),
    createdAt,
    minDisk: image.minDisk,
    minRam: image.minRam ?? 0,
    size: image.size,
    // SOL005 9.5.3.2: present for an image in the package, absent for one the VNFD only names.
    ...(image.imagePath !== undefined ? { imagePath: image.imagePath } : {}),
    ...(image.userMetadata ? { userMetadata: image.userMetadata } : {}),
  }));
}

export async function onboardPackage(
  deps: CoreDeps,
  packageId: string,
  options: { trustAnchors?: string[]; requireSignature?: boolean } = {},
): Promise<OnboardingOutcome> {
  const started = await deps.packages.change(packageId, {
    from: { onboardingState: ['CREATED', 'UPLOADING'] },
    set: { onboardingState: 'PROCESSING', stateSince: deps.now() },
    remove: ['onboardingFailureDetails'],
  });
  if (!started) {
    // A repeated event, content for a deleted package, or one already being onboarded.
    log.warn('package content arrived for a package that is not waiting for it', { packageId });
    return 'IGNORED';
  }
  let archive: CsarArchive | undefined;
  let checksum: Promise<string> | undefined;
  try {
    const source = await s3Source(contentKey(packageId));
    const limits = storageLimitsFromEnv();
    // The declared sizes are checked as the central directory is read, and inflating never goes past them.
    archive = await openArchive(source, { maxTotalBytes: limits.maxExpandedBytes });
    const opened = archive;
    const expandedSize = opened.entries().reduce((sum, entry) => sum + entry.uncompressedSize, 0);
    const overQuota = quotaExceeded(await tenantStoredBytes(deps, started.tenantId, packageId), source.size + expandedSize, limits);
    if (overQuota) throw new PackageError(overQuota);
    const inPlace = await inPlaceEntries(opened);
    checksum = hashInOnePass(contentKey(packageId), opened, packageId, inPlace);
    checksum.catch(() => undefined); // awaited below; a failure also fails the manifest check
    const info = await inspectCsar(opened, { trustAnchors: options.trustAnchors, requireSignature: options.requireSignature });
    const vnfd = await parseVnfd({ readText: (path) => opened.readText(path), has: (path) => opened.has(path) }, info.entryDefinitions);

    // A package the NFVO deleted (kept for its instances, to be fetched again) does not count.
    const others = (await deps.packages.findByVnfdId(vnfd.vnfdId)).filter(
      (p) =>
        p.id !== packageId && p.tenantId === started.tenantId && p.onboardingState === 'ONBOARDED' && !(p.source as { refetch?: boolean } | undefined)?.refetch,
    );
    if (others.length)
      throw new PackageError(`vnfdId ${vnfd.vnfdId} is already onboarded as VNF package ${others[0]?.id}; a VNFD can be onboarded once`, info.entryDefinitions);

    const files = await indexFiles(opened, packageId, inPlace);
    const index: PackageIndex = {
      files,
      entryDefinitions: info.entryDefinitions,
      manifestPath: info.manifestPath,
      toscaMetaPath: opened.has('TOSCA-Metadata/TOSCA.meta') ? 'TOSCA-Metadata/TOSCA.meta' : undefined,
    };
    await putObject(onboardedKey(packageId, PARSED_VNFD_FILE), JSON.stringify(vnfd), 'application/json');
    await putObject(onboardedKey(packageId, INDEX_FILE), JSON.stringify(index), 'application/json');

    const now = deps.now();
    const imagePaths = new Set(vnfd.softwareImages.map((image) => image.imagePath));
    const descriptorFiles = new Set(vnfd.descriptorFiles);
    const additionalArtifacts = info.artifacts
      .filter(
        (artifact) =>
          artifact.checksum &&
          !imagePaths.has(artifact.artifactPath) &&
          !descriptorFiles.has(artifact.artifactPath) &&
          !artifact.artifactPath.startsWith('TOSCA-Metadata/'),
      )
      .map((artifact) => ({
        ...(artifact.isExternal ? { artifactURI: artifact.artifactPath } : { artifactPath: artifact.artifactPath }),
        checksum: artifact.checksum,
        isEncrypted: false,
        ...(artifact.nonManoArtifactSetId ? { nonManoArtifactSetId: artifact.nonManoArtifactSetId } : {}),
        ...(artifact.metadata && Object.keys(artifact.metadata).length ? { metadata: artifact.metadata } : {}),
      }));
    const done = await deps.packages.change(packageId, {
      from: { onboardingState: ['PROCESSING'] },
      set: {
        onboardingState: 'ONBOARDED',
        operationalState: 'ENABLED',
        stateSince: now,
        vnfdId: vnfd.vnfdId,
        vnfProvider: vnfd.vnfProvider,
        vnfProductName: vnfd.vnfProductName,
        vnfSoftwareVersion: vnfd.vnfSoftwareVersion,
        vnfdVersion: vnfd.vnfdVersion,
        // SOL005 9.5.2.5: copied from the VNFD's vnfm_info; present once onboarded.
        vnfmInfo: vnfd.vnfmInfo ?? [],
        checksum: { algorithm: 'SHA-256', hash: await checksum },
        // SOL004 option 1: the manifest (not the whole CSAR) carries the signature, when there is one.
        packageSecurityOption: 'OPTION_1',
        softwareImages: softwareImagesOf(vnfd, now),
        additionalArtifacts,
        contentSize: source.size,
        expandedSize,
        vnfdFiles: vnfd.descriptorFiles,
        // SOL004 per-artifact Signature:/Certificate: files, for GET .../artifacts?include_signatures.
        ...signaturesOf(info.artifacts),
      },
    });
    if (!done) throw new Error('the package changed state while it was being onboarded');
    log.info('VNF package onboarded', { packageId, vnfdId: vnfd.vnfdId });
    return 'ONBOARDED';
  } catch (error) {
    const problem: ProblemDetailsRecord =
      error instanceof PackageError
        ? error.toProblem()
        : {
            title: 'VNF package onboarding failed',
            status: 500,
            detail: 'Onboarding failed because of an internal error; it has been logged. Upload the package again.',
          };
    if (!(error instanceof PackageError)) log.error('onboarding failed unexpectedly', { packageId, error });
    else log.warn('VNF package refused', { packageId, detail: problem.detail });
    // The copying pass may still be writing under the prefix: let it end before removing it.
    await checksum?.catch(() => undefined);
    await deletePrefix(`packages/${packageId}/`).catch((cleanup: unknown) => log.error('could not clean up a refused package', { packageId, error: cleanup }));
    await deps.packages.change(packageId, {
      from: { onboardingState: ['PROCESSING'] },
      set: { onboardingState: 'CREATED', onboardingFailureDetails: problem, stateSince: deps.now() },
    });
    return 'FAILED';
  } finally {
    await archive?.close().catch(() => undefined);
  }
}

// What the LCM engine and its requests read of an onboarded package: the VNFD onboarding parsed
// (cached, never re-parsed per operation), the package's files by their path in the CSAR, and the
// check that Kubernetes manifests a request names are artifacts the package declares.
import { BadRequestError, NotFoundError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { VnfPackageRecord } from '#lib/store/packages.ts';
import type { ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import { PARSED_VNFD_FILE } from '#lib/packages/onboarding.ts';
import { contentKey, getJson, getStream, onboardedKey } from '#lib/packages/storage.ts';
import { packageIndex, readFile } from '#lib/packages/content.ts';

/**
 * A package's files by their path in the CSAR, as the VIM drivers read them (Heat templates,
 * manifests, images): lib/vim/driver.ts names it PackageFiles. Declared here, where packages are
 * read, so that the VIM layer depends on the package layer and never the other way round.
 */
export interface PackageFileReader {
  read(path: string): Promise<Buffer>;
  /** Size in bytes, and a stream for large files such as images. */
  size(path: string): Promise<number>;
  stream(path: string): Promise<NodeJS.ReadableStream>;
  list(): Promise<string[]>;
  /** Paths of the files the package declares as artifacts (manifest or TOSCA.meta entries, with checksums). */
  artifacts(): Promise<string[]>;
}

/** The two reads of an onboarded package an operation needs; tests hand in their own. */
export interface PackageAccess {
  vnfdOf(packageId: string): Promise<ParsedVnfd>;
  filesOf(pkg: VnfPackageRecord): PackageFileReader;
}

const vnfdCache = new Map<string, Promise<ParsedVnfd>>();

/** The VNFD as onboarding parsed it (never re-parsed per operation). */
export function parsedVnfd(packageId: string): Promise<ParsedVnfd> {
  let vnfd = vnfdCache.get(packageId);
  if (!vnfd) {
    vnfd = getJson<ParsedVnfd>(onboardedKey(packageId, PARSED_VNFD_FILE));
    vnfd.catch(() => vnfdCache.delete(packageId));
    if (vnfdCache.size > 200) vnfdCache.clear();
    vnfdCache.set(packageId, vnfd);
  }
  return vnfd;
}

export function packageFiles(pkg: VnfPackageRecord): PackageFileReader {
  const fileOf = async (path: string) => {
    const file = (await packageIndex(pkg)).files[path];
    if (!file) throw new NotFoundError(`VNF package ${pkg.id} has no file "${path}"`);
    return file;
  };
  return {
    read: (path) => readFile(pkg, path),
    size: async (path) => (await fileOf(path)).size,
    stream: async (path) => {
      const file = await fileOf(path);
      if ('key' in file) return getStream(file.key);
      return getStream(contentKey(pkg.id), file.size === 0 ? undefined : { start: file.csarOffset, end: file.csarOffset + file.size - 1 });
    },
    list: async () => Object.keys((await packageIndex(pkg)).files),
    artifacts: async () => (pkg.additionalArtifacts ?? []).flatMap((artifact) => (typeof artifact.artifactPath === 'string' ? [artifact.artifactPath] : [])),
  };
}

/** Packages as onboarding stored them (S3 and the package table). */
export const storedPackages: PackageAccess = { vnfdOf: parsedVnfd, filesOf: packageFiles };

/** Kubernetes manifests named by a request (INSTANTIATE, CHANGE_VNFPKG) must be artifacts the package declares (with checksums). */
export function checkDefinitionFiles(pkg: VnfPackageRecord, files: unknown): string[] | undefined {
  if (files === undefined) return undefined;
  if (!Array.isArray(files) || files.length === 0 || !files.every((file) => typeof file === 'string' && file.length > 0)) {
    throw new BadRequestError('additionalParams.lcm-kubernetes-def-files must be a non-empty list of paths in the VNF package');
  }
  const declared = new Set((pkg.additionalArtifacts ?? []).map((artifact) => artifact.artifactPath));
  const unknown = files.filter((file) => !declared.has(file));
  if (unknown.length) {
    throw new UnprocessableEntityError(
      `additionalParams.lcm-kubernetes-def-files names ${unknown.join(', ')}, which VNF package ${pkg.id} does not declare as an artifact (in its manifest or TOSCA.meta)`,
    );
  }
  return files as string[];
}

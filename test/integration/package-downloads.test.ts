// Reading packages back safely: artifact paths are looked up as the package's own files only (never
// Object.prototype's), bodies above the inline limit are 302s to presigned S3 URLs that serve the
// right bytes and ranges, a CSAR that expands beyond MaxPackageExpandedBytes fails onboarding, and
// an upload beyond the tenant's TenantStorageQuotaBytes is refused.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HeadObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { MAX_INLINE_BYTES } from '#lib/packages/content.ts';
import { buildCsar, SAMPLE_PACKAGES, sampleImage } from '../support/csar-builder.ts';
import { assertEtsiResponse } from '../support/etsi.ts';
import { accessToken, adminCredentials, client, settle, startVnfm, type LocalVnfm, type Reply } from '../support/runtime.ts';

const MiB = 1024 * 1024;
const BIG_IMAGE = MAX_INLINE_BYTES + 4096;
const image = SAMPLE_PACKAGES['openstack-vnf-v1'].image!;

let vnfm: LocalVnfm;
let call: ReturnType<typeof client>;
let packageId: string;
let csar: Buffer;
let brokenId: string;
let s3: S3Client;
let bucket: string;

/** Creates a package and sends `bytes` to its presigned upload URL (the way past the API's body limit). */
async function uploadThroughUrl(bytes: Buffer): Promise<string> {
  const id = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
  const grant = (await call('POST', `/vnfpkgm/v1/vnf_packages/${id}/package_content/upload_url`)).body as {
    uploadUri: string;
    headers: Record<string, string>;
  };
  const put = await fetch(grant.uploadUri, { method: 'PUT', headers: grant.headers, body: bytes });
  assert.equal(put.status, 200, await put.text());
  await settle(vnfm);
  return id;
}

/** A GET that does not follow redirects, so the test sees the 302 itself. */
async function getManually(path: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${vnfm.url}${path}`, { redirect: 'manual', headers: { Authorization: `Bearer ${await accessToken(adminCredentials(vnfm))}`, ...headers } });
}

function assertProblem(reply: Reply, status: number, detail?: RegExp): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.headers.get('content-type'), 'application/problem+json');
  if (detail) assert.match((reply.body as { detail: string }).detail, detail);
}

before(async () => {
  // 8 MiB per package; 9 MiB per tenant: one package with a big image fits, with little room left.
  vnfm = await startVnfm({ env: { VNFM_PARAMETER_OVERRIDES: `MaxPackageExpandedBytes=${8 * MiB} TenantStorageQuotaBytes=${9 * MiB}` } });
  call = client(vnfm);
  s3 = new S3Client({ endpoint: vnfm.endpoints.s3, region: vnfm.endpoints.region, forcePathStyle: true, credentials: vnfm.awsCredentials });
  bucket = Object.values(vnfm.endpoints.buckets)[0] as string;
  // First (while the quota has room for it) a package whose big image is copied before a bad hash fails it.
  brokenId = await uploadThroughUrl(
    await buildCsar('openstack-vnf-v2', {
      imageBytes: BIG_IMAGE,
      mutateAfterManifest: (files) => {
        const path = [...files.keys()].find((name) => name.startsWith('Scripts/')) as string;
        files.set(path, Buffer.concat([files.get(path) as Buffer, Buffer.from('\n# changed after the manifest\n')]));
      },
    }),
  );
  csar = await buildCsar('openstack-vnf-v1', { imageBytes: BIG_IMAGE });
  packageId = await uploadThroughUrl(csar);
  const pkg = (await call('GET', `/vnfpkgm/v1/vnf_packages/${packageId}`)).body as { onboardingState: string; onboardingFailureDetails?: unknown };
  assert.equal(pkg.onboardingState, 'ONBOARDED', JSON.stringify(pkg.onboardingFailureDetails));
});
after(async () => {
  s3.destroy();
  await vnfm.stop();
});

describe('package downloads', () => {
  it('answers 404 for artifact paths that name Object.prototype members', async () => {
    for (const version of [1, 2]) {
      for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
        const reply = await call('GET', `/vnfpkgm/v${version}/vnf_packages/${packageId}/artifacts/${name}`, { headers: { Accept: '*/*' } });
        assertProblem(reply, 404);
        await assertEtsiResponse('vnfpkgm', '/vnf_packages/{vnfPkgId}/artifacts/{artifactPath}', 'get', 404, reply.body);
      }
    }
  });

  it('redirects an artifact larger than the inline limit to a presigned URL that serves it, ranges included', async () => {
    const expected = sampleImage(image.seed, BIG_IMAGE);
    // Onboarding already copied the image out of the CSAR, so a download only has to presign.
    const own = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: `packages/${packageId}/onboarded/files/${image.path}` }));
    assert.equal(own.ContentLength, BIG_IMAGE);
    const redirect = await getManually(`/vnfpkgm/v1/vnf_packages/${packageId}/artifacts/${image.path}`);
    assert.equal(redirect.status, 302);
    const location = redirect.headers.get('location') ?? '';
    assert.match(location, /X-Amz-Signature=/);
    const part = await fetch(location, { headers: { Range: 'bytes=1000-1999' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 1000-1999/${BIG_IMAGE}`);
    assert.ok(Buffer.from(await part.arrayBuffer()).equals(expected.subarray(1000, 2000)));
    const whole = await fetch(location);
    assert.equal(whole.status, 200);
    assert.ok(Buffer.from(await whole.arrayBuffer()).equals(expected));
    // A range larger than the inline limit is redirected too; a small one is answered directly.
    const big = await getManually(`/vnfpkgm/v2/vnf_packages/${packageId}/artifacts/${image.path}`, { Range: `bytes=0-${MAX_INLINE_BYTES}` });
    assert.equal(big.status, 302);
    const small = await call('GET', `/vnfpkgm/v2/vnf_packages/${packageId}/artifacts/${image.path}`, { headers: { Range: `bytes=${BIG_IMAGE - 100}-` } });
    assert.equal(small.status, 206);
    assert.ok(small.bytes.equals(expected.subarray(BIG_IMAGE - 100)));
  });

  it('redirects the package content too, and the redirect honours Range', async () => {
    const redirect = await getManually(`/vnfpkgm/v1/vnf_packages/${packageId}/package_content`, { Accept: 'application/zip' });
    assert.equal(redirect.status, 302);
    const part = await fetch(redirect.headers.get('location') ?? '', { headers: { Range: 'bytes=0-99' } });
    assert.equal(part.status, 206);
    assert.ok(Buffer.from(await part.arrayBuffer()).equals(csar.subarray(0, 100)));
  });

  it('leaves nothing in S3 when a package with a big image fails after its image was being copied', async () => {
    const pkg = (await call('GET', `/vnfpkgm/v1/vnf_packages/${brokenId}?all_fields`)).body as {
      onboardingState: string;
      onboardingFailureDetails?: { detail: string };
    };
    assert.equal(pkg.onboardingState, 'CREATED');
    assert.match(pkg.onboardingFailureDetails?.detail ?? '', /Scripts\//);
    const left = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `packages/${brokenId}/` }));
    assert.deepEqual(
      (left.Contents ?? []).map((object) => object.Key),
      [],
    );
  });

  it('fails onboarding of a package that expands beyond MaxPackageExpandedBytes', async () => {
    const id = await uploadThroughUrl(await buildCsar('openstack-vnf-v2', { imageBytes: 9 * MiB }));
    const pkg = (await call('GET', `/vnfpkgm/v1/vnf_packages/${id}?all_fields`)).body as {
      onboardingState: string;
      onboardingFailureDetails?: { status: number; detail: string };
    };
    assert.equal(pkg.onboardingState, 'CREATED');
    assert.equal(pkg.onboardingFailureDetails?.status, 422);
    assert.match(pkg.onboardingFailureDetails?.detail ?? '', new RegExp(`more than ${8 * MiB} bytes uncompressed.*MaxPackageExpandedBytes`));
  });

  it('refuses an upload that would take the tenant beyond TenantStorageQuotaBytes, and records sizes', async () => {
    const id = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
    const reply = await call('PUT', `/vnfpkgm/v1/vnf_packages/${id}/package_content`, {
      raw: await buildCsar('openstack-vnf-v2'),
      headers: { 'Content-Type': 'application/zip' },
    });
    assertProblem(reply, 409, /storage quota of 9437184 bytes \(TenantStorageQuotaBytes\)/);
    await assertEtsiResponse('vnfpkgm', '/vnf_packages/{vnfPkgId}/package_content', 'put', 409, reply.body);
    assert.equal(((await call('GET', `/vnfpkgm/v1/vnf_packages/${id}`)).body as { onboardingState: string }).onboardingState, 'CREATED');
  });
});

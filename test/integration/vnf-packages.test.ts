// SOL005 VNF packages over HTTP against the local runtime: onboarding through the API upload,
// upload_from_uri and a direct S3 put (and the presigned-URL extension), content, VNFD, manifest
// and artifacts read back, the state model and its 409s, all bodies checked against SOL005.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import yauzl from 'yauzl';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { assertEtsiResponse } from '../support/etsi.ts';
import { buildCsar, sampleImage, SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { client, settle, startVnfm, type LocalVnfm, type Reply } from '../support/runtime.ts';

let vnfm: LocalVnfm;
let call: ReturnType<typeof client>;
let openstackCsar: Buffer;

before(async () => {
  vnfm = await startVnfm();
  call = client(vnfm);
  openstackCsar = await buildCsar('openstack-vnf-v1');
});
after(async () => {
  await vnfm.stop();
});

function assertProblem(reply: Reply, status: number): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.headers.get('content-type'), 'application/problem+json');
  assert.equal((reply.body as { status: number }).status, status);
}

async function createPackage(userDefinedData?: Record<string, unknown>): Promise<string> {
  const reply = await call('POST', '/vnfpkgm/v1/vnf_packages', { body: userDefinedData ? { userDefinedData } : {} });
  assert.equal(reply.status, 201, reply.text);
  return (reply.body as { id: string }).id;
}

async function show(id: string): Promise<Record<string, unknown>> {
  const reply = await call('GET', `/vnfpkgm/v1/vnf_packages/${id}?all_fields`);
  assert.equal(reply.status, 200, reply.text);
  return reply.body as Record<string, unknown>;
}

async function upload(id: string, csar: Buffer): Promise<Reply> {
  return call('PUT', `/vnfpkgm/v1/vnf_packages/${id}/package_content`, {
    raw: csar,
    headers: { 'Content-Type': 'application/zip', Accept: 'application/zip' },
  });
}

async function _onboard(name: string): Promise<{ id: string; csar: Buffer }> {
  const csar = name === 'openstack-vnf-v1' ? openstackCsar : await buildCsar(name);
  const id = await createPackage();
  assert.equal((await upload(id, csar)).status, 202);
  await settle(vnfm);
  return { id, csar };
}

describe('onboarding through PUT package_content', () => {
  let id: string;

  it('creates a package CREATED / DISABLED / NOT_IN_USE (201, SOL005 body)', async () => {
    const reply = await call('POST', '/vnfpkgm/v2/vnf_packages', { body: { userDefinedData: { owner: 'ops' } } });
    assert.equal(reply.status, 201, reply.text);
    await assertEtsiResponse('vnfpkgm', '/vnf_packages', 'post', 201, reply.body);
    const body = reply.body as Record<string, unknown> & { id: string };
    assert.equal(reply.headers.get('location'), `${vnfm.url}/vnfpkgm/v2/vnf_packages/${body.id}`);
    assert.deepEqual([body.onboardingState, body.operationalState, body.usageState], ['CREATED', 'DISABLED', 'NOT_IN_USE']);
    assert.deepEqual(body.userDefinedData, { owner: 'ops' });
    id = body.id;
  });

  it('accepts the CSAR (202, empty body) and onboards it: every VnfPkgInfo field', async () => {
    const reply = await upload(id, openstackCsar);
    assert.equal(reply.status, 202, reply.text);
    assert.equal(reply.text, '');
    await settle(vnfm);
    const pkg = await show(id);
    await assertEtsiResponse('vnfpkgm', '/vnf_packages/{vnfPkgId}', 'get', 200, pkg);
    const sample = SAMPLE_PACKAGES['openstack-vnf-v1'];
    assert.equal(pkg.onboardingState, 'ONBOARDED', JSON.stringify(pkg.onboardingFailureDetails));
    assert.equal(pkg.operationalState, 'ENABLED');
    assert.equal(pkg.usageState, 'NOT_IN_USE');
    assert.equal(pkg.vnfdId, sample.vnfdId);
    assert.equal(pkg.vnfProvider, sample.provider);
    assert.equal(pkg.vnfProductName, sample.productName);
    assert.equal(pkg.vnfSoftwareVersion, sample.softwareVersion);
    assert.equal(pkg.vnfdVersion, sample.vnfdVersion);
    assert.deepEqual(pkg.vnfmInfo, ['Tacker'], 'vnfmInfo is copied from the VNFD (SOL005 9.5.2.5)');
    assert.deepEqual(pkg.checksum, { algorithm: 'SHA-256', hash: createHash('sha256').update(openstackCsar).digest('hex') });
    const images = pkg.softwareImages as Array<Record<string, unknown>>;
    // One per VNFD node with sw_image_data (VDU1 and its VirtualStorage share the image file).
    assert.equal(images.length, 2);
    for (const image of images) {
      assert.match(String(image.imagePath), /^Files\/images\//);
      assert.equal((image.checksum as { algorithm: string }).algorithm, 'SHA-512');
    }
    const artifacts = (pkg.additionalArtifacts as Array<{ artifactPath: string }>).map((a) => a.artifactPath);
    assert.ok(
      artifacts.some((p) => p.startsWith('Scripts/')),
      artifacts.join(','),
    );
    assert.ok(
      artifacts.some((p) => p.startsWith('BaseHOT/')),
      artifacts.join(','),
    );
    // Lists leave out the default-excluded complex attributes.
    const listed = (await call('GET', `/vnfpkgm/v1/vnf_packages?filter=(eq,id,${id})`)).body as Array<Record<string, unknown>>;
    assert.equal(listed.length, 1);
    assert.ok(!('softwareImages' in (listed[0] ?? {})) && !('checksum' in (listed[0] ?? {})));
  });

  it('returns the CSAR exactly as application/zip, with Range', async () => {
    const whole = await call('GET', `/vnfpkgm/v1/vnf_packages/${id}/package_content`, { headers: { Accept: 'application/zip' } });
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('content-type'), 'application/zip');
    assert.ok(whole.bytes.equals(openstackCsar));
    const part = await call('GET', `/vnfpkgm/v1/vnf_packages/${id}/package_content`, { headers: { Accept: 'application/zip', Range: 'bytes=10-109' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 10-109/${openstackCsar.length}`);
    assert.ok(part.bytes.equals(openstackCsar.subarray(10, 110)));
    const bad = await call('GET', `/vnfpkgm/v1/vnf_packages/${id}/package_content`, {
      headers: { Accept: 'application/zip', Range: `bytes=${openstackCsar.length + 5}-` },
    });
    assertProblem(bad, 416);
  });

  it('returns the VNFD (zip of its files, or 406 for text/plain only), the manifest and artifacts', async () => {
    const vnfd = await call('GET', `/vnfpkgm/v1/vnf_packages/${id}/vnfd`, { headers: { Accept: 'application/zip' } });
    assert.equal(vnfd.status, 200);
    assert.equal(vnfd.headers.get('content-type'), 'application/zip');
    assert.equal(vnfd.bytes.readUInt32LE(0), 0x04034b50);
    assertProblem(await call('GET', `/vnfpkgm/v1/vnf_packages/${id}/vnfd`, { headers: { Accept: 'text/plain' } }), 406);
    const manifest = await call('GET', `/vnfpkgm/v1/vnf_packages/${id}/manifest`, { headers: { Accept: 'text/plain' } });
    assert.equal(manifest.status, 200);
    assert.match(manifest.text, /Source: /);
    const script = await call('GET', `/vnfpkgm/v1/vnf_packages/${id}/artifacts/Scripts/coordinate_vnf.py`, { headers: { Accept: '*/*' } });
    assert.equal(script.status, 200, script.text);
    assert.match(script.text, /pickle\.load\(sys\.stdin\.buffer\)/);
    const range = await call('GET', `/vnfpkgm/v1/vnf_packages/${id}/artifacts/Scripts/coordinate_vnf.py`, { headers: { Range: 'bytes=0-3' } });
    assert.equal(range.status, 206);
    assert.equal(range.text, script.text.slice(0, 4));
    assertProblem(await call('GET', `/vnfpkgm/v1/vnf_packages/${id}/artifacts/Scripts/none.py`), 404);
    // The image is served in place from the stored CSAR, by range.
    const image = SAMPLE_PACKAGES['openstack-vnf-v1'].image;
    assert.ok(image);
    const expected = sampleImage(image.seed, image.bytes);
    const head = await call('GET', `/vnfpkgm/v1/vnf_packages/${id}/artifacts/${image.path}`, { headers: { Range: 'bytes=1000-1999' } });
    assert.equal(head.status, 206);
    assert.equal(head.headers.get('content-range'), `bytes 1000-1999/${expected.length}`);
    assert.ok(head.bytes.equals(expected.subarray(1000, 2000)));
    const all = await call('GET', `/vnfpkgm/v1/vnf_packages/${id}/artifacts/${image.path}`);
    assert.ok(all.bytes.equals(expected));
  });

  it("returns the artifact set as a zip in the package's layout, as SOL005 9.4.5a selects it", async () => {
    const entries = async (query: string): Promise<Map<string, Buffer>> => {
      const reply = await call('GET', `/vnfpkgm/v2/vnf_packages/${id}/artifacts${query}`, { headers: { Accept: 'application/zip' } });
      assert.equal(reply.status, 200, reply.text);
      assert.equal(reply.headers.get('content-type'), 'application/zip');
      const zip = await yauzl.fromBufferPromise(reply.bytes, { lazyEntries: true });
      const found = new Map<string, Buffer>();
      for await (const entry of zip.eachEntry()) {
        const chunks: Buffer[] = [];
        for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
        found.set(entry.fileName, Buffer.concat(chunks));
      }
      return found;
    };
    const pkg = await show(id);
    const expected = [
      ...(pkg.softwareImages as Array<{ imagePath: string }>).map((image) => image.imagePath),
      ...(pkg.additionalArtifacts as Array<{ artifactPath: string }>).map((artifact) => artifact.artifactPath),
    ];
    const all = await entries('');
    assert.deepEqual([...all.keys()].sort(), [...new Set(expected)].sort());
    const image = SAMPLE_PACKAGES['openstack-vnf-v1'].image!;
    assert.ok(all.get(image.path)?.equals(sampleImage(image.seed, image.bytes)), 'the image, byte for byte');
    assert.match(all.get('Scripts/coordinate_vnf.py')?.toString('utf8') ?? '', /pickle\.load/);
    // The sample has no non-MANO artifact sets: without MANO artifacts nothing is left.
    assert.deepEqual([...(await entries('?exclude_all_mano_artifacts')).keys()], []);
    assert.deepEqual([...(await entries('?exclude_all_non_mano_artifacts&include_signatures')).keys()].sort(), [...all.keys()].sort());
    const zip = { headers: { Accept: 'application/zip' } };
    assertProblem(await call('GET', `/vnfpkgm/v2/vnf_packages/${id}/artifacts?exclude_all_non_mano_artifacts&select_non_mano_artifact_sets=a`, zip), 400);
    assertProblem(await call('GET', `/vnfpkgm/v2/vnf_packages/${id}/artifacts?everything`, zip), 400);
  });

  it('modifies operationalState and userDefinedData (200 + modifications; 409 when nothing changes)', async () => {
    const disable = await call('PATCH', `/vnfpkgm/v1/vnf_packages/${id}`, { body: { operationalState: 'DISABLED' } });
    assert.equal(disable.status, 200, disable.text);
    assert.deepEqual(disable.body, { operationalState: 'DISABLED' });
    assertProblem(await call('PATCH', `/vnfpkgm/v1/vnf_packages/${id}`, { body: { operationalState: 'DISABLED' } }), 409);
    const data = await call('PATCH', `/vnfpkgm/v1/vnf_packages/${id}`, { body: { userDefinedData: { site: 'a' } } });
    assert.deepEqual(data.body, { userDefinedData: { site: 'a' } });
    assertProblem(await call('PATCH', `/vnfpkgm/v1/vnf_packages/${id}`, { body: { operationalState: 'BROKEN' } }), 400);
    assertProblem(await call('PATCH', `/vnfpkgm/v1/vnf_packages/${id}`, { body: {} }), 400);
    assert.equal((await call('PATCH', `/vnfpkgm/v1/vnf_packages/${id}`, { body: { operationalState: 'ENABLED' } })).status, 200);
  });

  it('refuses a second upload to an onboarded package and bad uploads, without changing it', async () => {
    assertProblem(await upload(id, openstackCsar), 409);
    const fresh = await createPackage();
    assertProblem(
      await call('PUT', `/vnfpkgm/v1/vnf_packages/${fresh}/package_content`, {
        raw: Buffer.from('not a zip at all'),
        headers: { 'Content-Type': 'application/zip' },
      }),
      422,
    );
    assertProblem(await call('PUT', `/vnfpkgm/v1/vnf_packages/${fresh}/package_content`, { raw: '{}', headers: { 'Content-Type': 'application/json' } }), 415);
    assertProblem(await call('GET', `/vnfpkgm/v1/vnf_packages/${fresh}/package_content`, { headers: { Accept: 'application/zip' } }), 409);
    assert.equal((await show(fresh)).onboardingState, 'CREATED');
  });

  it('tracks usage by VNF instances and deletes only DISABLED, NOT_IN_USE packages', async () => {
    const vnfdId = SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId;
    const instance = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId } });
    assert.equal(instance.status, 201, instance.text);
    assert.equal((await show(id)).usageState, 'IN_USE');
    assertProblem(await call('DELETE', `/vnfpkgm/v1/vnf_packages/${id}`), 409);
    await call('PATCH', `/vnfpkgm/v1/vnf_packages/${id}`, { body: { operationalState: 'DISABLED' } });
    assertProblem(await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId } }), 422);
    assertProblem(await call('DELETE', `/vnfpkgm/v1/vnf_packages/${id}`), 409);
    assert.equal((await call('DELETE', `/vnflcm/v2/vnf_instances/${(instance.body as { id: string }).id}`)).status, 204);
    assert.equal((await show(id)).usageState, 'NOT_IN_USE');
    const deleted = await call('DELETE', `/vnfpkgm/v1/vnf_packages/${id}`);
    assert.equal(deleted.status, 204);
    assertProblem(await call('GET', `/vnfpkgm/v1/vnf_packages/${id}`), 404);
  });
});

describe('software images', () => {
  it('lists an image the VNFD only names (no file in the package) without imagePath, as Tacker does', async () => {
    const vnfdId = SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId;
    const namedOnly = 'c0ffee00-1111-4222-8333-444455556666';
    const csar = await buildCsar('openstack-vnf-v1', {
      mutate: (files) => {
        for (const [path, content] of files) {
          if (path.startsWith('Definitions/') && content.includes(vnfdId)) files.set(path, Buffer.from(String(content).replaceAll(vnfdId, namedOnly)));
        }
        // VDU1 keeps its sw_image_data but loses the artifact: an image the VIM is expected to have.
        const df = 'Definitions/sample_vnfd_df_simple.yaml';
        const text = String(files.get(df));
        const artifact =
          '      artifacts:\n        sw_image:\n          type: tosca.artifacts.nfv.SwImage\n          file: ../Files/images/cirros-0.5.2-x86_64-disk.img\n      capabilities:';
        assert.ok(text.includes(artifact));
        files.set(df, Buffer.from(text.replace(artifact, '      capabilities:')));
      },
    });
    const id = await createPackage();
    assert.equal((await upload(id, csar)).status, 202);
    await settle(vnfm);
    const pkg = await show(id);
    assert.equal(pkg.onboardingState, 'ONBOARDED', JSON.stringify(pkg.onboardingFailureDetails));
    await assertEtsiResponse('vnfpkgm', '/vnf_packages/{vnfPkgId}', 'get', 200, pkg);
    const images = new Map((pkg.softwareImages as Array<Record<string, unknown>>).map((image) => [image.id, image]));
    assert.deepEqual([...images.keys()].sort(), ['VDU1', 'VirtualStorage']);
    const vdu1 = images.get('VDU1') as Record<string, unknown>;
    assert.equal(vdu1.imagePath, undefined);
    assert.equal(vdu1.name, 'VDU1-image');
    assert.equal(vdu1.version, '0.5.2');
    assert.equal((vdu1.checksum as { algorithm: string }).algorithm, 'SHA-512');
    assert.equal(vdu1.size, 1024 * 1024);
    assert.match(String(images.get('VirtualStorage')?.imagePath), /^Files\/images\//);
  });
});

describe('other ways in', () => {
  it('onboards from a URI with basic authentication (userName and username spellings)', async () => {
    const csar = await buildCsar('k8s-cnf-v1');
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(req.headers.authorization ?? '');
      if (req.headers.authorization !== `Basic ${Buffer.from('vendor:pw-for-download').toString('base64')}`) {
        res.writeHead(401).end();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/zip', 'Content-Length': csar.length }).end(csar);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/k8s.zip`;
    try {
      const denied = await createPackage();
      assert.equal(
        (
          await call('POST', `/vnfpkgm/v1/vnf_packages/${denied}/package_content/upload_from_uri`, {
            body: { addressInformation: uri, userName: 'vendor', password: 'wrong' },
          })
        ).status,
        202,
      );
      await settle(vnfm);
      const refused = await show(denied);
      assert.equal(refused.onboardingState, 'CREATED');
      assert.match(String((refused.onboardingFailureDetails as { detail: string }).detail), /401/);

      const id = await createPackage();
      const reply = await call('POST', `/vnfpkgm/v1/vnf_packages/${id}/package_content/upload_from_uri`, {
        body: { addressInformation: uri, username: 'vendor', password: 'pw-for-download' },
      });
      assert.equal(reply.status, 202, reply.text);
      assert.equal(reply.text, '');
      await settle(vnfm);
      const pkg = await show(id);
      assert.equal(pkg.onboardingState, 'ONBOARDED', JSON.stringify(pkg.onboardingFailureDetails));
      assert.equal(pkg.vnfdId, SAMPLE_PACKAGES['k8s-cnf-v1'].vnfdId);
      assert.ok(!vnfm.output().includes('pw-for-download'));
      assertProblem(
        await call('POST', `/vnfpkgm/v1/vnf_packages/${id}/package_content/upload_from_uri`, { body: { addressInformation: 'ftp://x/y.zip' } }),
        400,
      );
    } finally {
      server.close();
    }
  });

  it('onboards a CSAR put straight into the packages bucket, and through the presigned upload URL', async () => {
    const s3 = new S3Client({ endpoint: vnfm.endpoints.s3, region: vnfm.endpoints.region, forcePathStyle: true, credentials: vnfm.awsCredentials });
    const bucket = Object.values(vnfm.endpoints.buckets)[0] as string;
    const direct = await createPackage();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `packages/${direct}/package.zip`, Body: await buildCsar('openstack-vnf-v2') }));
    await settle(vnfm);
    assert.equal((await show(direct)).vnfdId, SAMPLE_PACKAGES['openstack-vnf-v2'].vnfdId);

    const presigned = await createPackage();
    const grant = await call('POST', `/vnfpkgm/v1/vnf_packages/${presigned}/package_content/upload_url`);
    assert.equal(grant.status, 200, grant.text);
    const { uploadUri, method, headers } = grant.body as { uploadUri: string; method: string; headers: Record<string, string> };
    const put = await fetch(uploadUri, { method, headers, body: await buildCsar('k8s-cnf-v2') });
    assert.equal(put.status, 200);
    await settle(vnfm);
    const pkg = await show(presigned);
    assert.equal(pkg.onboardingState, 'ONBOARDED', JSON.stringify(pkg.onboardingFailureDetails));
    assert.equal(pkg.vnfdId, SAMPLE_PACKAGES['k8s-cnf-v2'].vnfdId);
  });

  it('refuses a package whose manifest hash does not match, says where, and accepts a good upload afterwards', async () => {
    const id = await createPackage();
    const broken = await buildCsar('openstack-vnf-v1', {
      mutateAfterManifest: (files) => files.set('Scripts/coordinate_vnf.py', Buffer.from('# changed after signing\n')),
    });
    assert.equal((await upload(id, broken)).status, 202);
    await settle(vnfm);
    const refused = await show(id);
    assert.equal(refused.onboardingState, 'CREATED');
    const failure = refused.onboardingFailureDetails as { status: number; detail: string };
    assert.match(failure.detail, /Scripts\/coordinate_vnf\.py/);
    assert.match(failure.detail, /hash/i);
    await assertEtsiResponse('vnfpkgm', '/vnf_packages/{vnfPkgId}', 'get', 200, refused);
    // The same package takes a corrected upload (a duplicate vnfdId is refused, so use another sample).
    assert.equal((await upload(id, await buildCsar('k8s-cnf-v1', { mutate: (files) => files.set('Scripts/extra.txt', Buffer.from('x')) }))).status, 202);
    await settle(vnfm);
    const second = await show(id);
    assert.equal(second.onboardingState, 'CREATED');
    assert.match(String((second.onboardingFailureDetails as { detail: string }).detail), /already onboarded/);
  });
});

// Downloading a 200 MiB artifact through the API: the runtime answers a 302 to a presigned S3 URL
// (onboarding copied the stored image out of the CSAR to its own object), so its RSS
// should barely move while the bytes flow. Reports the RSS growth of the runtime process (the
// in-process S3 stand-in included) over the first and a second download.
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buildCsarFile, SAMPLE_PACKAGES } from '../test/support/csar-builder.ts';
import { accessToken, adminCredentials, client, settle, startVnfm } from '../test/support/runtime.ts';
import { residentMiB } from './openstack-lifecycles.ts';

const IMAGE_BYTES = Number(process.env.BENCH_ARTIFACT_MIB ?? 200) * 2 ** 20;

/** Downloads `url` (following the redirect), discarding the bytes; returns their count and the runtime's highest RSS seen meanwhile. */
async function download(url: string, token: string, pid: number): Promise<{ bytes: number; status: number; peakMiB: number; seconds: number }> {
  let peakMiB = residentMiB(pid).now;
  const started = performance.now();
  const response = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
  let bytes = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    peakMiB = Math.max(peakMiB, residentMiB(pid).now);
  }
  return { bytes, status: response.status, peakMiB, seconds: (performance.now() - started) / 1000 };
}

export async function benchDownloads(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-bench-'));
  const image = SAMPLE_PACKAGES['openstack-vnf-v1'].image!;
  const env = { VNFM_PARAMETER_OVERRIDES: 'LogLevel=warn' };
  let vnfm = await startVnfm({ env });
  try {
    const { path, size } = await buildCsarFile('openstack-vnf-v1', join(dir, 'large.zip'), { imageBytes: IMAGE_BYTES });
    const call = client(vnfm);
    const id = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
    const grant = (await call('POST', `/vnfpkgm/v1/vnf_packages/${id}/package_content/upload_url`)).body as {
      uploadUri: string;
      headers: Record<string, string>;
    };
    const put = await fetch(grant.uploadUri, {
      method: 'PUT',
      headers: { ...grant.headers, 'Content-Length': String(size) },
      body: Readable.toWeb(createReadStream(path)) as ReadableStream,
      duplex: 'half',
    } as RequestInit);
    if (put.status !== 200) throw new Error(`upload answered ${put.status}`);
    await settle(vnfm);
    const state = ((await call('GET', `/vnfpkgm/v1/vnf_packages/${id}`)).body as { onboardingState: string }).onboardingState;
    if (state !== 'ONBOARDED') throw new Error(`the package is ${state}`);
    // A fresh process on the same data: onboarding's own peak is not the baseline.
    await vnfm.stop();
    vnfm = await startVnfm({ env, dataDir: vnfm.dataDir });

    const token = await accessToken(adminCredentials(vnfm));
    const url = `${vnfm.url}/vnfpkgm/v1/vnf_packages/${id}/artifacts/${image.path}`;
    const before = residentMiB(vnfm.pid).now;
    const first = await download(url, token, vnfm.pid);
    const second = await download(url, token, vnfm.pid);
    if (first.bytes !== IMAGE_BYTES || second.bytes !== IMAGE_BYTES) throw new Error(`downloaded ${first.bytes} and ${second.bytes} bytes, not ${IMAGE_BYTES}`);
    console.log(`Downloading a ${IMAGE_BYTES / 2 ** 20} MiB artifact stored in a CSAR (GET .../artifacts/${image.path}: 302 to a presigned S3 URL)`);
    console.log(`  runtime RSS before  ${before.toFixed(0)} MiB (a runtime started after the onboarding)`);
    console.log(
      `  first download      +${(first.peakMiB - before).toFixed(0)} MiB peak RSS growth, ${first.seconds.toFixed(2)} s   (target < 50 MiB; was +1047 MiB inline)`,
    );
    console.log(`  second download     +${(second.peakMiB - before).toFixed(0)} MiB peak RSS growth, ${second.seconds.toFixed(2)} s`);
  } finally {
    await vnfm.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

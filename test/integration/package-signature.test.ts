// With RequirePackageSignature=true, onboarding refuses a package whose manifest is not signed by
// a CA in the operator's trust store, and says so.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { buildCsar } from '../support/csar-builder.ts';
import { client, settle, startVnfm } from '../support/runtime.ts';

it('refuses an unsigned package when signatures are required', async () => {
  const vnfm = await startVnfm({ env: { VNFM_PARAMETER_OVERRIDES: 'RequirePackageSignature=true' } });
  try {
    const call = client(vnfm);
    const id = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
    const upload = await call('PUT', `/vnfpkgm/v1/vnf_packages/${id}/package_content`, {
      raw: await buildCsar('k8s-cnf-v1'),
      headers: { 'Content-Type': 'application/zip' },
    });
    assert.equal(upload.status, 202);
    await settle(vnfm);
    const pkg = (await call('GET', `/vnfpkgm/v1/vnf_packages/${id}?all_fields`)).body as {
      onboardingState: string;
      onboardingFailureDetails: { detail: string };
    };
    assert.equal(pkg.onboardingState, 'CREATED');
    assert.match(pkg.onboardingFailureDetails.detail, /sign/i);
  } finally {
    await vnfm.stop();
  }
});

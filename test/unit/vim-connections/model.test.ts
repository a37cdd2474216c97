// Registered VIMs: what a registration must hold, what is never shown, and the one VIM-type
// normaliser (Tacker's aliases become the ETSI types).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MASK, maskAccessInfo, productRegistrationOf } from '#lib/vim-connections/model.ts';
import { ProblemError } from '#lib/sol/errors.ts';

const status = (error: unknown): number | undefined => (error instanceof ProblemError ? error.toProblem().status : undefined);

describe('VIM connection records', () => {
  it('mask every credential of accessInfo and keep what identifies the account', () => {
    const masked = maskAccessInfo({
      username: 'nfv',
      password: 'p',
      user_pass: 'p',
      bearer_token: 't',
      key: 'k',
      client_private_key: 'k',
      project: 'demo',
      region: 'RegionOne',
    });
    assert.deepEqual(masked, {
      username: 'nfv',
      password: MASK,
      user_pass: MASK,
      bearer_token: MASK,
      key: MASK,
      client_private_key: MASK,
      project: 'demo',
      region: 'RegionOne',
    });
  });

  it('register a Tacker-typed Kubernetes VIM under its ETSI type', async () => {
    const registration = await productRegistrationOf({
      name: 'k8s',
      vimType: 'kubernetes',
      interfaceInfo: { endpoint: 'https://k8s.example:6443' },
      accessInfo: { bearer_token: 't' },
    });
    assert.equal(registration.vimType, 'ETSINFV.KUBERNETES.V_1');
    assert.equal(registration.isDefault, false);
  });

  it('refuse an unknown VIM type, incomplete credentials and credentials in interfaceInfo with a 4xx', async () => {
    const base = { name: 'v', interfaceInfo: { endpoint: 'https://vim.example' } };
    await assert.rejects(productRegistrationOf({ ...base, vimType: 'VMWARE.V_1', accessInfo: {} }), (error) => status(error) === 422);
    await assert.rejects(
      productRegistrationOf({ ...base, vimType: 'kubernetes', accessInfo: {} }),
      (error) => status(error) === 422 && /bearer_token/.test(String((error as Error).message)),
    );
    await assert.rejects(
      productRegistrationOf({
        name: 'v',
        vimType: 'kubernetes',
        interfaceInfo: { endpoint: 'https://vim.example', token: 't' },
        accessInfo: { bearer_token: 't' },
      }),
      (error) => status(error) === 400 && /named like a credential/.test(String((error as Error).message)),
    );
    await assert.rejects(
      productRegistrationOf({ name: 'v', vimType: 'kubernetes', interfaceInfo: { endpoint: 'https://u:p@vim.example' }, accessInfo: { bearer_token: 't' } }),
      (error) => status(error) === 400,
    );
  });
});

// The VIM reachability sweep reads a reachable VIM's credentials at most every few minutes (a warm
// function reuses what it read), and a VIM that was not reachable, or never checked, afresh.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { SWEEP_CREDENTIALS_MAX_AGE_MS } from '#lib/secrets/vim-access.ts';
import type { VimRecord, VimStatus } from '#lib/store/vims.ts';
import { checkRegisteredVim } from '#lib/vim-connections/reachability.ts';
import type { SweepDeps } from '#lib/vim-connections/ports.ts';

function deps(reads: Array<number | undefined>): SweepDeps {
  return {
    secrets: {
      read: async (_id: string, options?: { maxAgeMs?: number }) => {
        reads.push(options?.maxAgeMs);
        return { username: 'u', password: 'p', project: 'p', userDomain: 'Default', projectDomain: 'Default' };
      },
    },
    vims: { update: async () => undefined },
    now: () => '2026-12-02T12:00:00.000Z',
  } as unknown as SweepDeps;
}

// A Keystone that refuses connections: every check ends UNREACHABLE, quickly.
const vim = (status?: VimStatus): VimRecord =>
  ({
    id: 'vim-1',
    tenantId: 't',
    name: 'site',
    vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3',
    interfaceInfo: { endpoint: 'http://127.0.0.1:9/identity/v3' },
    accessSecret: 'vnfm/test/vims/vim-1',
    ...(status ? { status } : {}),
  }) as unknown as VimRecord;

it('reuses the credentials of a VIM that was reachable, and reads them afresh for one that was not or was never checked', async () => {
  const reads: Array<number | undefined> = [];
  for (const status of ['REACHABLE', 'UNREACHABLE', undefined] as const) {
    const outcome = await checkRegisteredVim(deps(reads), vim(status), 2_000);
    assert.equal(outcome.status, 'UNREACHABLE');
  }
  assert.deepEqual(reads, [SWEEP_CREDENTIALS_MAX_AGE_MS, undefined, undefined]);
});

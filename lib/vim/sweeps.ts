// What the scheduled sweeps that ask every VIM something share (VNFC health, performance
// collection): bounded concurrency, a time limit per VIM, and the VIM connection of an instance
// with credentials a warm function reuses for a few sweeps, read afresh after a VIM failed a call.
import type { SecretStore } from '#lib/secrets/vim-access.ts';
import { SWEEP_CREDENTIALS_MAX_AGE_MS } from '#lib/secrets/vim-access.ts';
import type { VimReference } from '#lib/sol/model.ts';
import type { VimConnection } from './driver.ts';

export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `work` over `items`, at most `limit` at a time. */
export async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

/** The key that groups instances for one call per VIM: the same endpoint and the same credentials. */
export function vimGroupKey(vim: VimReference): string {
  return `${vim.vimType}|${String(vim.interfaceInfo.endpoint ?? vim.vimId)}|${vim.accessSecret}`;
}

// A warm sweep function reuses the VIM credentials it read for SWEEP_CREDENTIALS_MAX_AGE_MS (a few
// sweeps); a VIM that failed a call has its credentials read afresh by the next sweep.
const credentialsToReread = new Set<string>();

export async function sweepConnection(secrets: SecretStore, vim: VimReference): Promise<VimConnection> {
  const maxAgeMs = credentialsToReread.has(vim.accessSecret) ? undefined : SWEEP_CREDENTIALS_MAX_AGE_MS;
  const accessInfo = await secrets.read(vim.accessSecret, { maxAgeMs });
  credentialsToReread.delete(vim.accessSecret);
  return { vimId: vim.vimId, vimType: vim.vimType, interfaceInfo: vim.interfaceInfo, accessInfo, extra: vim.extra };
}

/** After a VIM failed a call: the next sweep reads its credentials afresh (they may have been rotated). */
export function rereadCredentials(vim: VimReference): void {
  credentialsToReread.add(vim.accessSecret);
}

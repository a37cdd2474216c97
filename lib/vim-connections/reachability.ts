// VIM reachability: one check authenticates against the VIM with its driver's verify() under a
// time limit (a VIM that never answers cannot hold up a registration or the sweep); the sweep
// checks every VIM, a bounded number at once, and records REACHABLE <-> UNREACHABLE changes with
// the time of the change and the last error. Drivers load as the VIMs checked need them.
import { loadDriver } from '#lib/vim/registry.ts';
import { log } from '#lib/log.ts';
import type { VimRecord, VimStatus } from '#lib/store/vims.ts';
import type { SweepDeps } from './ports.ts';
import { SWEEP_CREDENTIALS_MAX_AGE_MS } from '#lib/secrets/vim-access.ts';

export function checkTimeoutMs(): number {
  const seconds = Number(process.env.VIM_CHECK_TIMEOUT_SECONDS ?? 10);
  return (Number.isFinite(seconds) && seconds > 0 ? seconds : 10) * 1000;
}

/** Checks run at once by a sweep. */
const SWEEP_CONCURRENCY = 8;

/** Why a VIM cannot be used, in words an operator can act on; undefined when it answered and accepted the credentials. */
export async function vimProblem(
  vim: { id: string; vimType: string; interfaceInfo: Record<string, unknown>; accessInfo: Record<string, unknown>; extra?: Record<string, unknown> },
  timeoutMs = checkTimeoutMs(),
): Promise<string | undefined> {
  const driver = await loadDriver(vim.vimType);
  if (!driver) return `no driver for VIM type ${vim.vimType}`;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolveTimeout) => {
    timer = setTimeout(() => resolveTimeout(`the VIM at ${String(vim.interfaceInfo.endpoint)} did not answer within ${timeoutMs / 1000} s`), timeoutMs);
  });
  try {
    return await Promise.race([
      driver.verify({ vimId: vim.id, vimType: vim.vimType, interfaceInfo: vim.interfaceInfo, accessInfo: vim.accessInfo, extra: vim.extra }).then(
        () => undefined,
        (error: unknown) => messageOf(error),
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Driver errors say what failed (401, catalog, connection refused); their messages never carry credentials. */
function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error && !error.message.includes(error.cause.message) ? ` (${error.cause.message})` : '';
  return `${error.message}${cause}`;
}

export interface SweepResult {
  checked: number;
  reachable: number;
  unreachable: number;
  changed: Array<{ vimId: string; from: VimStatus | undefined; to: VimStatus; error?: string }>;
}

/**
 * Checks one registered VIM and records the outcome; returns its new status. The sweep reuses
 * credentials it read within SWEEP_CREDENTIALS_MAX_AGE_MS for a VIM that was reachable, instead of
 * a secret read and a KMS decrypt per VIM every minute; a VIM that was not is checked with its
 * credentials read afresh (they may have been rotated since).
 */
/** How stale a VIM's lastCheckedAt may grow while its status and error stay the same. */
export const CHECKED_AT_REFRESH_MS = 10 * 60_000;

export async function checkRegisteredVim(
  deps: SweepDeps,
  record: VimRecord,
  timeoutMs = checkTimeoutMs(),
): Promise<{ status: VimStatus; error?: string; changed: boolean }> {
  let error: string | undefined;
  const maxAgeMs = record.status === 'REACHABLE' ? SWEEP_CREDENTIALS_MAX_AGE_MS : undefined;
  try {
    error = await vimProblem({ ...record, accessInfo: await deps.secrets.read(record.accessSecret, { maxAgeMs }) }, timeoutMs);
  } catch (failure) {
    error = `the VIM's credentials could not be read: ${messageOf(failure)}`;
  }
  const status: VimStatus = error ? 'UNREACHABLE' : 'REACHABLE';
  const now = deps.now();
  const changed = (record.status ?? 'REACHABLE') !== status || record.status === undefined;
  // A VIM that stays as it was is recorded again only when its lastCheckedAt is CHECKED_AT_REFRESH_MS
  // old: a write per VIM every minute was most of what watching a VIM cost.
  const recordedAgo = record.lastCheckedAt ? Date.parse(now) - Date.parse(record.lastCheckedAt) : Number.POSITIVE_INFINITY;
  if (!changed && (error ?? undefined) === (record.lastError ?? undefined) && recordedAgo < CHECKED_AT_REFRESH_MS) return { status, error, changed };
  await deps.vims.update(
    record.id,
    {
      status,
      lastCheckedAt: now,
      ...(changed ? { statusChangedAt: now } : {}),
      ...(error ? { lastError: error } : {}),
    },
    error ? [] : ['lastError'],
  );
  if (changed) log.info('VIM status changed', { vimId: record.id, from: record.status, to: status, error });
  return { status, error, changed };
}

/** The scheduled sweep: every VIM of every tenant, SWEEP_CONCURRENCY at a time. */
export async function sweepVims(deps: SweepDeps): Promise<SweepResult> {
  const vims = await deps.vims.listAll();
  const result: SweepResult = { checked: 0, reachable: 0, unreachable: 0, changed: [] };
  let next = 0;
  const worker = async () => {
    while (next < vims.length) {
      const record = vims[next++] as VimRecord;
      const outcome = await checkRegisteredVim(deps, record);
      result.checked += 1;
      if (outcome.status === 'REACHABLE') result.reachable += 1;
      else result.unreachable += 1;
      if (outcome.changed)
        result.changed.push({ vimId: record.id, from: record.status, to: outcome.status, ...(outcome.error ? { error: outcome.error } : {}) });
    }
  };
  await Promise.all(Array.from({ length: Math.min(SWEEP_CONCURRENCY, vims.length) }, worker));
  return result;
}

// The recovery path for state machine executions that die (timeout, abort, a failing transition):
// the op occ they drove must not stay STARTING/PROCESSING/ROLLING_BACK holding its instance's
// lock. PROCESSING and ROLLING_BACK become FAILED_TEMP (the NFVO may retry, roll back or fail),
// STARTING becomes ROLLED_BACK (nothing was done yet) — SOL003 5.4.1.2. One whose cancel is
// pending (a FORCEFUL cancel stopped its execution) becomes FAILED_TEMP as the cancel says.
import type { CoreDeps } from '#lib/ports.ts';
import { finishOperation } from './operations.ts';
import { moveOpOcc } from './op-occs.ts';
import { cancelCanBePending, endCancelled } from './cancellation.ts';
import { log } from '#lib/log.ts';

export interface DeadExecution {
  name: string;
  status: string;
  input: string;
  error?: string | null;
  cause?: string | null;
}

export async function recoverDeadExecution(deps: CoreDeps, execution: DeadExecution): Promise<string> {
  let opOccId: string | undefined;
  try {
    opOccId = (JSON.parse(execution.input) as { opOccId?: string }).opOccId;
  } catch {
    opOccId = undefined;
  }
  if (!opOccId) return 'not an LCM execution';
  const opOcc = await deps.opOccs.get(opOccId);
  if (!opOcc) return 'op occ gone';
  // A retry or rollback started since: the op occ is another execution's now.
  if (opOcc.execution && opOcc.execution.name !== execution.name) return `driven by a later execution (${opOcc.execution.name})`;
  // A cancelled operation (its execution stopped by a FORCEFUL cancel, or dead while a cancel was
  // pending) ends as the cancel ends it, whichever of the two gets there first.
  if (opOcc.isCancelPending && cancelCanBePending(opOcc.operationState)) {
    const cancelled = await endCancelled(deps, opOcc);
    if (!cancelled) return 'moved on meanwhile';
    log.info('ended the cancel of an operation whose execution was stopped', { opOccId, execution: execution.name, status: execution.status });
    return `cancelled from ${opOcc.operationState}`;
  }
  const error = {
    title: 'Operation interrupted',
    status: 500,
    detail: `The state machine execution ${execution.name} ended ${execution.status}${execution.error ? ` (${execution.error})` : ''} while the operation was ${opOcc.operationState}`,
  };
  switch (opOcc.operationState) {
    case 'STARTING':
      await finishOperation(deps, opOcc.id, 'ROLLED_BACK', { error });
      break;
    case 'PROCESSING':
    case 'ROLLING_BACK':
      await moveOpOcc(deps, opOcc.id, { from: [opOcc.operationState], to: 'FAILED_TEMP', now: deps.now(), set: { error } });
      break;
    default:
      return `nothing to recover (${opOcc.operationState})`;
  }
  log.warn('recovered an operation whose execution died', { opOccId, execution: execution.name, status: execution.status });
  return `recovered from ${opOcc.operationState}`;
}

export interface ReconcileOptions {
  /**
   * Op occs that entered their state less than this long ago are left alone: their execution may
   * be about to start (the op occ is written first). 0 when nothing can be starting (the local
   * runtime at start-up).
   */
  graceSeconds?: number;
  /** Packages PROCESSING longer than this were abandoned by their onboarding run (its function's time limit is 15 minutes). */
  onboardingDeadlineSeconds?: number;
  /** Packages UPLOADING longer than this never got their content (a presigned upload URL lasts an hour). */
  uploadDeadlineSeconds?: number;
  /**
   * A package taken into use longer ago than this has no take still to be followed by its
   * instance's write: the longest function that takes one (an LCM step) has ended by then.
   */
  takeWindowSeconds?: number;
  /**
   * ISO time: only what entered its state before it is looked at (the local runtime's start, whose
   * sweep with no deadlines must not take an upload made since, while it runs, for one the crash left).
   */
  startedBefore?: string;
}

export interface ReconcileReport {
  /** Op occs in flight that were looked at. */
  checked: number;
  /** Op occs moved on, as `<id>: <outcome>`. */
  recovered: string[];
  /** Packages returned to CREATED, by id. */
  packages: string[];
  /** Notifications queued from the outbox (a process died between a change and its notification). */
  notifications: string[];
  /** Packages whose instance count no instance backed, set back to zero (NOT_IN_USE), by id. */
  usage: string[];
}

const DEFAULTS: Required<Omit<ReconcileOptions, 'startedBefore'>> = {
  graceSeconds: 120,
  onboardingDeadlineSeconds: 960,
  uploadDeadlineSeconds: 4500,
  takeWindowSeconds: 960,
};

/**
 * The reconciliation sweep (scheduled on AWS, and at every start of the local runtime): an op occ
 * STARTING, PROCESSING or ROLLING_BACK whose execution is gone or finished gets the recovery rule
 * its dead execution's event would have applied (the event may never have come: a process killed
 * between the two, a lost invocation); a package left UPLOADING or PROCESSING by a run that died
 * goes back to CREATED, saying why, so it can be uploaded again; a notification whose change was
 * written but never queued is queued from the outbox; and a package that counts instances none of
 * which refers to it (a process died between taking it into use and writing its instance, or
 * between deleting an instance and releasing its package) counts none again, so that it can be
 * deleted.
 */
export async function reconcile(deps: CoreDeps, options: ReconcileOptions = {}): Promise<ReconcileReport> {
  const { graceSeconds, onboardingDeadlineSeconds, uploadDeadlineSeconds, takeWindowSeconds } = { ...DEFAULTS, ...options };
  const now = Date.parse(deps.now());
  const before = options.startedBefore ? Date.parse(options.startedBefore) : Number.POSITIVE_INFINITY;
  const olderThan = (time: string | undefined, seconds: number) => !time || (Date.parse(time) <= now - seconds * 1000 && Date.parse(time) < before);
  const report: ReconcileReport = { checked: 0, recovered: [], packages: [], notifications: [], usage: [] };
  // First the notifications of changes already made, so that they go out before those of the recoveries.
  report.notifications = (await deps.republishUnsent?.(new Date(now - graceSeconds * 1000).toISOString())) ?? [];
  for (const opOcc of await deps.opOccs.listInFlight()) {
    report.checked++;
    if (!olderThan(opOcc.stateEnteredTime, graceSeconds)) continue;
    // Op occs from before executions were recorded ran under their own id.
    const execution = opOcc.execution ?? { machine: opOcc.operation, name: opOcc.id };
    const status = await deps.executor.status(execution.machine, execution.name);
    if (status === 'RUNNING') continue;
    const outcome = await recoverDeadExecution(deps, { name: execution.name, status: status ?? 'NOT_FOUND', input: JSON.stringify({ opOccId: opOcc.id }) });
    report.recovered.push(`${opOcc.id}: ${outcome}`);
  }
  for (const pkg of await deps.packages.listOnboarding()) {
    const processing = pkg.onboardingState === 'PROCESSING';
    if (!olderThan(pkg.stateSince ?? pkg.createdAt, processing ? onboardingDeadlineSeconds : uploadDeadlineSeconds)) continue;
    const detail = processing
      ? 'Onboarding was interrupted before it finished (the VNF manager stopped or its run died); upload the package content again'
      : 'The upload did not complete; upload the package content again';
    const moved = await deps.packages.change(pkg.id, {
      from: { onboardingState: [pkg.onboardingState] },
      set: {
        onboardingState: 'CREATED',
        stateSince: deps.now(),
        onboardingFailureDetails: { title: 'VNF package onboarding interrupted', status: 409, detail },
      },
    });
    if (moved) {
      log.warn('returned an interrupted package to CREATED', { packageId: pkg.id, was: pkg.onboardingState });
      report.packages.push(pkg.id);
    }
  }
  report.usage = await clearUnbackedCounts(deps, options.startedBefore ?? new Date(now - takeWindowSeconds * 1000).toISOString());
  return report;
}

/**
 * Packages whose instance count no instance backs, set back to zero. A package is counted on when
 * it is taken into use, before its instance is written, and released after its instance is deleted
 * (or moved to another package): a process that dies in between leaves the count one too high, and
 * the package IN_USE for good, which no operator could delete. Only a count of no instance at all is
 * corrected, and only of a package last taken before `takesEndedBy` (the runtime's start, or the
 * longest function's time limit ago), so no take it counts is still to be followed by its instance's
 * write; the correction holds only if the package was neither taken nor released since it was read.
 * A release still under way when the count is zeroed finds nothing to release (a count never goes
 * below zero). A count too high of a package that some instances still use is corrected once they
 * are gone. Returns the ids corrected.
 */
async function clearUnbackedCounts(deps: CoreDeps, takesEndedBy: string): Promise<string[]> {
  const corrected: string[] = [];
  const usage = deps.packageUsage;
  if (!usage) return corrected;
  for (const pkg of await usage.counted()) {
    const instanceCount = pkg.instanceCount ?? 0;
    if (instanceCount <= 0 || !pkg.vnfdId || (pkg.takenAt !== undefined && pkg.takenAt >= takesEndedBy)) continue;
    if (await usage.anyInstanceOf(pkg.vnfdId, pkg.id)) continue;
    if (await usage.clear(pkg.id, { instanceCount, takenAt: pkg.takenAt })) {
      log.warn('a package counted instances none of which refers to it; it counts none again (NOT_IN_USE)', { packageId: pkg.id, instanceCount });
      corrected.push(pkg.id);
    }
  }
  return corrected;
}

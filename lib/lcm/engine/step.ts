// What every LCM step is: one function of the op occ's loaded records, called by the operation's
// state machine with an action name, returning whether the VIM work is done and when to poll again.
// Steps are idempotent and never wait: the machines poll the VIM with Wait states.
import { NotFoundError, ProblemError } from '#lib/sol/errors.ts';
import type { VnfInstanceRecord, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { VnfPackageRecord } from '#lib/store/packages.ts';
import type { ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import type { PackageAccess } from '#lib/packages/access.ts';
import type { PackageFiles, Progress } from '#lib/vim/driver.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { saveDriverState } from '#lib/lcm/op-occs.ts';
import type { CoordinationLedger } from '#lib/lcm/coordination.ts';

/** The actions the state machines (statemachines/*.asl.json) name in their lcm-step tasks. */
export type StepAction =
  | 'grant'
  | 'grant-poll'
  | 'instantiate-start'
  | 'instantiate-poll'
  | 'instantiate-finish'
  | 'terminate-start'
  | 'terminate-poll'
  | 'terminate-finish'
  | 'update-start'
  | 'update-poll'
  | 'update-finish'
  | 'rollback-start'
  | 'rollback-poll'
  | 'rollback-finish';

export interface StepResult {
  status: 'IN_PROGRESS' | 'DONE';
  /** When the state machine's Wait state should poll again (an RFC 3339 timestamp). */
  waitUntil: string;
  polls?: number;
  /** Seconds the machine's Wait state waits before the next poll, where the other side says (a grant's Retry-After). */
  waitSeconds?: number;
  /** The grant was decided at once and the operation's start step ran in the same invocation (chain.ts). */
  started?: boolean;
  /** The operation's finish step ran and the op occ is COMPLETED, in the same invocation (chain.ts). */
  completed?: boolean;
}

/**
 * The poll steps that wait for VIM work, polling again within one invocation (poll-loop.ts). A
 * grant is polled once per invocation instead: the NFVO says when to ask again, and the machine's
 * Wait state waits that long without holding a function.
 */
export function isVimPoll(action: StepAction): boolean {
  return action.endsWith('-poll') && action !== 'grant-poll';
}

/** The records a step works on, read afresh for every step (a retried task sees what the last one wrote); the polls of one poll loop share the instance and package (run.ts pollStep). */
export interface Loaded {
  opOcc: VnfLcmOpOccRecord;
  instance: VnfInstanceRecord;
  /** The instance's package, its VNFD and files. */
  pkg: VnfPackageRecord;
  vnfd: ParsedVnfd;
  files: PackageFiles;
  /** For the steps that read another package (CHANGE_VNFPKG's new one). */
  packages: PackageAccess;
  /** The op occ's LCM coordinations, when its request asks for some (coordinated.ts). */
  coordination?: CoordinationLedger;
}

/** The one signature of every step; `polls` counts the polls so far (for the back-off). */
export type Step = (deps: CoreDeps, loaded: Loaded, polls: number) => Promise<StepResult>;

/** An operation's steps by the action its state machine calls them with. */
export type StepTable = Partial<Record<StepAction, Step>>;

/** A VIM refused or failed the work; the op occ's error carries the VIM's own reason. */
export class VimOperationFailed extends ProblemError {
  constructor(reason: string) {
    super(500, 'VIM operation failed', reason);
    this.name = 'VimOperationFailed';
  }
}

export async function load(deps: CoreDeps, opOccId: string, packages: PackageAccess): Promise<Loaded> {
  const opOcc = await deps.opOccs.get(opOccId);
  if (!opOcc) throw new NotFoundError(`VNF LCM operation occurrence ${opOccId} does not exist`);
  const instance = await deps.instances.get(opOcc.vnfInstanceId);
  if (!instance) throw new NotFoundError(`VNF instance ${opOcc.vnfInstanceId} no longer exists`);
  const pkg = await deps.packages.get(instance.vnfPkgId);
  if (!pkg) throw new NotFoundError(`VNF package ${instance.vnfPkgId} no longer exists`);
  return { opOcc, instance, pkg, vnfd: await packages.vnfdOf(pkg.id), files: packages.filesOf(pkg), packages };
}

/**
 * How long to wait before poll number `polls` of the VIM: 50 ms for the first 5 s (the operation
 * ends on average half an interval after the VIM's work does, and many stacks are done within
 * seconds: one cheap GET of the stack per poll), 500 ms to 30 s, 1 s to about three minutes, then
 * 2 s to spare the VIM's API. A poll
 * step polls at these intervals itself within one invocation (poll-loop.ts); the state machine's
 * Wait state comes between invocations only.
 */
export function pollIntervalMs(polls: number): number {
  return polls < 100 ? 50 : polls < 150 ? 500 : polls < 300 ? 1000 : 2000;
}

export function nextPoll(polls: number): string {
  return new Date(Date.now() + pollIntervalMs(polls)).toISOString();
}

/**
 * A step that started VIM work: the machine's Wait state passes at once and the poll step polls
 * straight away, then at the intervals above. Waiting a first interval here would add it to every
 * operation whole: the poll loop already waits between its polls, and a Wait state's end is only
 * seen when the next invocation starts.
 */
export const started = (): StepResult => ({ status: 'IN_PROGRESS', waitUntil: new Date().toISOString(), polls: 0 });

/** A step that ran as poll number `polls` (a start with nothing to wait for is DONE at once). */
export const polled = (polls: number, status: StepResult['status'] = 'DONE'): StepResult => ({ status, waitUntil: nextPoll(polls), polls: polls + 1 });

/** What a driver's poll said, recorded: its state saved, a failure thrown with the VIM's reason. */
export async function progressed(deps: CoreDeps, opOcc: VnfLcmOpOccRecord, progress: Progress, polls: number): Promise<StepResult> {
  await saveDriverState(deps, opOcc, progress.state);
  if (progress.status === 'FAILED') throw new VimOperationFailed(progress.reason);
  return polled(polls, progress.status === 'DONE' ? 'DONE' : 'IN_PROGRESS');
}

// The ports every service depends on (stores, secrets, the state-machine executor, the clock),
// as interfaces only. lib/deps.ts wires them to their AWS implementations; tests and the benchmark
// hand in others.
import type { LcmOperationType } from '#lib/sol/model.ts';
import type { VnfInstanceStore } from '#lib/store/vnf-instances.ts';
import type { VnfLcmOpOccStore } from '#lib/store/op-occs.ts';
import type { VnfPackageStore } from '#lib/store/packages.ts';
import type { SecretStore } from '#lib/secrets/vim-access.ts';
import type { VimStore } from '#lib/store/vims.ts';

/**
 * Starts state machines. An LCM operation's execution is named after its op occ id, so a retried
 * start is idempotent; the machine's ARN comes from `<OPERATION>_STATE_MACHINE_ARN`.
 */
export interface OperationExecutor {
  start(operation: LcmOperationType | 'PACKAGE_UPLOAD' | 'ROLLBACK', executionName: string, input: Record<string, unknown>): Promise<void>;
  /** The execution's status (RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED), or undefined when there is none of that name. */
  status(operation: LcmOperationType | 'PACKAGE_UPLOAD' | 'ROLLBACK', executionName: string): Promise<string | undefined>;
}

export interface CoreDeps {
  instances: VnfInstanceStore;
  opOccs: VnfLcmOpOccStore;
  packages: VnfPackageStore;
  vims: VimStore;
  secrets: SecretStore;
  executor: OperationExecutor;
  now(): string;
  newId(): string;
  /** With notifications: queues what a dead process left in the outbox before `olderThan`; returns the ids queued. */
  republishUnsent?(olderThan: string): Promise<string[]>;
}

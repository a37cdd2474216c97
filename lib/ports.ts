// The ports every service depends on (stores, secrets, the state-machine executor, the clock),
// as interfaces only. lib/deps.ts wires them to their AWS implementations; tests and the benchmark
// hand in others.
import type { OperationExecutor } from '#lib/store/executions.ts';
import type { VnfInstanceStore } from '#lib/store/vnf-instances.ts';
import type { VnfLcmOpOccStore } from '#lib/store/op-occs.ts';
import type { VnfPackageStore } from '#lib/store/packages.ts';
import type { SecretStore } from '#lib/secrets/vim-access.ts';
import type { VimStore } from '#lib/store/vims.ts';
import type { VnfSnapshotStore } from '#lib/store/vnf-snapshots.ts';

export interface CoreDeps {
  instances: VnfInstanceStore;
  opOccs: VnfLcmOpOccStore;
  packages: VnfPackageStore;
  vims: VimStore;
  /** "Individual VNF snapshot" resources (SOL003 5.4.23); absent where a process has no snapshot table. */
  snapshots?: VnfSnapshotStore;
  secrets: SecretStore;
  executor: OperationExecutor;
  now(): string;
  newId(): string;
  /** With notifications: queues what a dead process left in the outbox before `olderThan`; returns the ids queued. */
  republishUnsent?(olderThan: string): Promise<string[]>;
}

// The ports every service depends on (stores, secrets, the state-machine executor, the clock),
// as interfaces only. lib/deps.ts wires them to their AWS implementations; tests and the benchmark
// hand in others.
import type { OperationExecutor } from '#lib/store/executions.ts';
import type { VnfInstanceStore } from '#lib/store/vnf-instances.ts';
import type { VnfLcmOpOccStore } from '#lib/store/op-occs.ts';
import type { VnfPackageRecord, VnfPackageStore } from '#lib/store/packages.ts';
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
  /** The recovery sweep's: package instance counts and the instances that back them (lib/store/package-usage.ts). */
  packageUsage?: PackageUsage;
}

/** What the sweep reads and writes to zero a package's instance count that no instance backs. */
export interface PackageUsage {
  /** Every package that counts instances. */
  counted(): Promise<VnfPackageRecord[]>;
  /** Whether any instance has this package. */
  anyInstanceOf(vnfdId: string, vnfPkgId: string): Promise<boolean>;
  /** Zeroes the count (NOT_IN_USE) if the package is still as `seen`; false when it changed or is gone. */
  clear(id: string, seen: { instanceCount: number; takenAt?: string }): Promise<boolean>;
}

// The ports the registered VIMs' service works through; the composition root (lib/deps.ts) wires
// them to DynamoDB and Secrets Manager.
import type { SecretStore } from '#lib/secrets/vim-access.ts';
import type { VimRegistryStore } from '#lib/store/vims.ts';
import type { VnfInstanceStore } from '#lib/store/vnf-instances.ts';

export interface VimRegistryDeps {
  vims: VimRegistryStore;
  secrets: SecretStore;
  instances: VnfInstanceStore;
  now(): string;
  newId(): string;
}

/** What the reachability sweep needs of them. */
export type SweepDeps = Pick<VimRegistryDeps, 'vims' | 'secrets' | 'now'>;

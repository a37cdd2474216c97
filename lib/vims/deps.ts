// The VIM registry's ports, wired once per process to DynamoDB and Secrets Manager.
import { DynamoVimStore } from '#lib/store/vims.ts';
import { DynamoVnfInstanceStore } from '#lib/store/vnf-instances.ts';
import { SecretsManagerStore } from '#lib/secrets/vim-access.ts';
import type { VimRegistryDeps } from './registry.ts';

let deps: VimRegistryDeps | undefined;

export function vimRegistryDeps(): VimRegistryDeps {
  deps ??= {
    vims: new DynamoVimStore(),
    secrets: new SecretsManagerStore(),
    instances: new DynamoVnfInstanceStore(),
    now: () => new Date().toISOString(),
    newId: () => crypto.randomUUID(),
  };
  return deps;
}

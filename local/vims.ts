// The local runtime's default VIMs: it starts the built-in OpenStack simulator and registers it as
// the default OpenStack VIM "local-openstack" (credentials in the secret store like any VIM), and
// writes where it is and how to log in to $VNFM_DATA_DIR/vims.json for operators and tests.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SecretsManagerStore } from '#lib/secrets/vim-access.ts';
import { DynamoVimStore } from '#lib/store/vims.ts';
import { OPENSTACK_VIM } from '#lib/lcm/lifecycle.ts';
import { startOpenStackSimulator, type OpenStackSimulator } from './openstack/simulator.ts';

export interface LocalVims {
  openstack: OpenStackSimulator;
  close(): Promise<void>;
}

export async function startLocalVims(dataDir: string, options: { timeScale: number; log: (line: string) => void }): Promise<LocalVims> {
  // A laptop-sized cloud would stop at Nova's default quota of 10 instances; the local VIM is for
  // trying things out and load tests, so it has none (faults can still impose one).
  const openstack = await startOpenStackSimulator({
    timeScale: options.timeScale,
    log: options.log,
    quotas: { instances: -1, cores: -1, ram: -1, volumes: -1, gigabytes: -1, ports: -1 },
    // Room for a few hundred VNFs at once (load tests): sixteen large hosts in zone nova.
    computeHosts: Array.from({ length: 16 }, (_, i) => ({ name: `local-compute-${i + 1}`, zone: 'nova', vcpus: 256, memoryMb: 65536, diskGb: 2000 })),
  });
  const accessSecret = await new SecretsManagerStore().put('vims/local-openstack', openstack.credentials);
  await new DynamoVimStore().put({
    id: 'local-openstack',
    tenantId: 'default',
    name: 'local-openstack',
    vimType: OPENSTACK_VIM,
    interfaceInfo: { endpoint: openstack.authUrl },
    accessSecret,
    isDefault: true,
    createdAt: '1970-01-01T00:00:00.000Z',
    extra: { simulator: true },
  });
  writeFileSync(join(dataDir, 'vims.json'), `${JSON.stringify({
    'local-openstack': { vimType: OPENSTACK_VIM, authUrl: openstack.authUrl, control: new URL('/_sim/', openstack.authUrl).href, ...openstack.credentials },
  }, null, 2)}\n`, { mode: 0o600 });
  return { openstack, close: () => openstack.close() };
}

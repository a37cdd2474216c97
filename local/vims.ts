// The local runtime's default VIMs: it starts the built-in OpenStack and Kubernetes simulators and
// registers them as the default VIMs "local-openstack" and "local-kubernetes" (credentials in the
// secret store like any VIM's), and writes where they are and how to log in to
// $VNFM_DATA_DIR/vims.json for operators and tests.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SecretsManagerStore } from '#lib/secrets/vim-access.ts';
import { DynamoVimStore } from '#lib/store/vims.ts';
import { KUBERNETES_VIM, OPENSTACK_VIM } from '#lib/vim/registry.ts';
import { maskAccessInfo } from '#lib/vim-connections/model.ts';
import { startOpenStackSimulator, type OpenStackSimulator } from './openstack/simulator.ts';
import { startKubernetesSimulator, type KubernetesSimulator } from './kubernetes/simulator.ts';

export interface LocalVims {
  openstack: OpenStackSimulator;
  kubernetes: KubernetesSimulator;
  close(): Promise<void>;
}

export async function startLocalVims(dataDir: string, options: { timeScale: number; log: (line: string) => void }): Promise<LocalVims> {
  // A laptop-sized cloud would stop at Nova's default quota of 10 instances; the local VIM is for
  // trying things out and load tests, so it has none (faults can still impose one).
  const openstack = await startOpenStackSimulator({
    timeScale: options.timeScale,
    log: options.log,
    quotas: { instances: -1, cores: -1, ram: -1, volumes: -1, gigabytes: -1, snapshots: -1, ports: -1 },
    // Room for a few hundred VNFs at once (load tests): sixteen large hosts in zone nova.
    computeHosts: Array.from({ length: 16 }, (_, i) => ({ name: `local-compute-${i + 1}`, zone: 'nova', vcpus: 256, memoryMb: 65536, diskGb: 2000 })),
  });
  await registerDefaultVim('local-openstack', OPENSTACK_VIM, openstack.authUrl, openstack.credentials);
  // Request lines would drown the VNFM's own log; failures still show.
  const kubernetes = await startKubernetesSimulator({
    timeScale: options.timeScale,
    log: (line) => {
      if (/fail|error/i.test(line)) options.log(line);
    },
  });
  await registerDefaultVim('local-kubernetes', KUBERNETES_VIM, kubernetes.url, { bearer_token: kubernetes.token });
  writeFileSync(
    join(dataDir, 'vims.json'),
    `${JSON.stringify(
      {
        'local-openstack': { vimType: OPENSTACK_VIM, authUrl: openstack.authUrl, control: new URL('/_sim/', openstack.authUrl).href, ...openstack.credentials },
        'local-kubernetes': {
          vimType: KUBERNETES_VIM,
          endpoint: kubernetes.url,
          control: new URL('/_sim/', kubernetes.url).href,
          bearer_token: kubernetes.token,
        },
      },
      null,
      2,
    )}\n`,
    { mode: 0o600 },
  );
  return {
    openstack,
    kubernetes,
    close: async () => {
      await Promise.all([openstack.close(), kubernetes.close()]);
    },
  };
}

/** Registers a simulator as the default VIM of its type, its credentials in the secret store like any VIM's. */
async function registerDefaultVim(id: string, vimType: string, endpoint: string, credentials: Record<string, unknown>): Promise<void> {
  const accessSecret = await new SecretsManagerStore().put(`vims/${id}`, credentials);
  await new DynamoVimStore().put({
    id,
    tenantId: 'default',
    name: id,
    vimType,
    interfaceInfo: { endpoint },
    accessSecret,
    isDefault: true,
    createdAt: '1970-01-01T00:00:00.000Z',
    extra: { simulator: true },
    maskedAccessInfo: maskAccessInfo(credentials),
    status: 'REACHABLE',
    statusChangedAt: new Date().toISOString(),
  });
}

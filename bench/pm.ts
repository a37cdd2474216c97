// Performance management collection cost: VIM API calls and time of one collection period's read
// (the drivers' measure()) of 1,000 VNFCs on each simulator. The sample VNF is instantiated once on
// each VIM and its VNFCs referenced 1,000 times over, each reference read as a VNFC of its own,
// so every read is a real answer (Nova diagnostics of a running server, a pod with metrics).
import '#lib/vim/openstack/index.ts';
import '#lib/vim/kubernetes/index.ts';
import type { MeasureTarget } from '#lib/vim/driver.ts';
import { measureTargetsOf } from '#lib/vim/measure.ts';
import { driverFor } from '#lib/vim/registry.ts';
import { SAMPLE_PACKAGES } from '../test/support/csar-builder.ts';
import { lcmSteps } from '../test/support/lcm-http.ts';
import { client, instanceRecord, localVims, settle, startVnfm } from '../test/support/runtime.ts';

const VNFCS = Number(process.env.BENCH_PM_VNFCS ?? 1000);
const PER_INSTANCE = 10;

/** VNFCS references to the VNFCs of `target`, PER_INSTANCE to an instance. */
function spread(target: MeasureTarget): MeasureTarget[] {
  return Array.from({ length: Math.ceil(VNFCS / PER_INSTANCE) }, (_, i) => ({
    vnfInstanceId: `${target.vnfInstanceId}-${i}`,
    state: target.state,
    vnfcs: Array.from({ length: PER_INSTANCE }, (_, j) => {
      const vnfc = target.vnfcs[(i * PER_INSTANCE + j) % target.vnfcs.length] as MeasureTarget['vnfcs'][number];
      return { ...vnfc, vnfcResourceInfoId: `${vnfc.vnfcResourceInfoId}-${i}-${j}` };
    }),
  }));
}

export async function benchPm(): Promise<void> {
  const vnfm = await startVnfm({ env: { VNFM_PARAMETER_OVERRIDES: 'LogLevel=warn', VNFM_SCHEDULE_SCALE: '0' } });
  try {
    const call = client(vnfm);
    await lcmSteps(vnfm, call).onboard(['openstack-vnf-v1', 'k8s-cnf-v1']);
    const vims = localVims(vnfm);
    console.log(`\nPM collection cost: one read of ${VNFCS} VNFCs (measure())`);
    for (const [label, vim, vnfdId, request] of [
      [
        'OpenStack (Nova diagnostics)',
        vims.openstack.vim,
        SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId,
        {
          flavourId: 'simple',
          extVirtualLinks: [
            { id: 'ext', resourceId: 'public', extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { c: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }] },
          ],
        },
      ],
      [
        'Kubernetes (metrics.k8s.io, one namespace)',
        vims.kubernetes.vim,
        SAMPLE_PACKAGES['k8s-cnf-v1'].vnfdId,
        {
          flavourId: 'simple',
          additionalParams: { 'lcm-kubernetes-def-files': ['Files/kubernetes/deployment.yaml', 'Files/kubernetes/service.yaml'], namespace: 'bench-pm' },
        },
      ],
    ] as const) {
      const id = ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId } })).body as { id: string }).id;
      await call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, { body: request });
      await settle(vnfm);
      const shown = (await call('GET', `/vnflcm/v2/vnf_instances/${id}`)).body as { instantiatedVnfInfo: unknown };
      const record = (await instanceRecord(vnfm, id)) as { vimResources: { driverState: Record<string, unknown> } };
      const targets = spread(measureTargetsOf(id, record.vimResources.driverState, shown.instantiatedVnfInfo));
      const driver = driverFor(vim.vimType);
      if (!driver) throw new Error(`no driver for ${vim.vimType}`);
      await driver.measure(vim, targets); // warm-up (token, discovery)
      const started = performance.now();
      const report = await driver.measure(vim, targets);
      const ms = performance.now() - started;
      console.log(
        `  ${label}: ${report.results.length} VNFCs read, ${report.unavailable.length} unavailable; ${report.apiCalls} VIM API call(s), ${ms.toFixed(0)} ms`,
      );
    }
  } finally {
    await vnfm.stop();
  }
}

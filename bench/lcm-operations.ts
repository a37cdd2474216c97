// Control-plane overhead of every LCM operation on one VNF of the OpenStack simulator: for each,
// 202 -> COMPLETED divided by the Heat stack's own work time for the action it caused (the CREATE,
// UPDATE or DELETE the simulator records), as instantiate's ratio is taken. OPERATE changes the
// servers' power state through Nova, not Heat: its line gives the operation's duration alone.
import { client, settle, startVnfm, type LocalVnfm } from '../test/support/runtime.ts';
import { INSTANTIATE_ON_SIMULATOR, onboardSample, simulatorControl } from './openstack-lifecycles.ts';

interface WorkTime {
  actions: Array<{ action: string; workMs: number | null }>;
}

async function stackOf(vnfm: LocalVnfm, instanceId: string): Promise<string | undefined> {
  const state = (await (await fetch(`${simulatorControl(vnfm)}state`)).json()) as { stacks: { items: Array<{ id: string; name: string }> } };
  return state.stacks.items.find((s) => s.name === `vnf-${instanceId}`)?.id;
}

async function actionsOf(vnfm: LocalVnfm, stackId: string): Promise<WorkTime['actions']> {
  const reply = await fetch(`${simulatorControl(vnfm)}stacks/${stackId}/work-time`);
  return reply.ok ? ((await reply.json()) as WorkTime).actions : [];
}

export async function benchLcmOperations(timeScale = process.env.BENCH_LCM_OPS_TIME_SCALE ?? '1'): Promise<void> {
  const vnfm = await startVnfm({ env: { VNFM_SIM_TIME_SCALE: timeScale, VNFM_WAIT_SCALE: '1', VNFM_PARAMETER_OVERRIDES: 'LogLevel=warn' } });
  try {
    const call = client(vnfm);
    const vnfdId = await onboardSample(vnfm);
    const id = ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId } })).body as { id: string }).id;
    const operations: Array<[string, string, unknown]> = [
      // Its images' upload to Glance is not the stack's work: benchLcm gives instantiate's full ratio.
      ['INSTANTIATE', 'instantiate', INSTANTIATE_ON_SIMULATOR],
      ['SCALE out', 'scale', { type: 'SCALE_OUT', aspectId: 'VDU1_scale', numberOfSteps: 1 }],
      ['SCALE in', 'scale', { type: 'SCALE_IN', aspectId: 'VDU1_scale', numberOfSteps: 1 }],
      ['SCALE_TO_LEVEL', 'scale_to_level', { scaleInfo: [{ aspectId: 'VDU1_scale', scaleLevel: 2 }] }],
      ['HEAL (every VNFC)', 'heal', {}],
      ['CHANGE_FLAVOUR', 'change_flavour', { newFlavourId: 'large' }],
      ['OPERATE stop', 'operate', { changeStateTo: 'STOPPED', stopType: 'FORCEFUL' }],
      ['OPERATE start', 'operate', { changeStateTo: 'STARTED' }],
      ['TERMINATE', 'terminate', { terminationType: 'FORCEFUL' }],
    ];
    console.log(`Every LCM operation on one sample VNF, OpenStack simulator at time scale ${timeScale} (Wait states as deployed):`);
    let stackId: string | undefined;
    for (const [label, task, body] of operations) {
      const before = stackId ? (await actionsOf(vnfm, stackId)).length : 0;
      const reply = await call('POST', `/vnflcm/v2/vnf_instances/${id}/${task}`, { body });
      if (reply.status !== 202) throw new Error(`${label} answered ${reply.status}: ${reply.text}`);
      await settle(vnfm);
      const occ = (await call('GET', new URL(reply.headers.get('location') ?? '').pathname)).body as {
        operationState: string;
        startTime: string;
        stateEnteredTime: string;
      };
      if (occ.operationState !== 'COMPLETED') throw new Error(`${label} ended ${occ.operationState}`);
      stackId ??= await stackOf(vnfm, id);
      const vnfmMs = Date.parse(occ.stateEnteredTime) - Date.parse(occ.startTime);
      // The stack actions this operation caused (a rollback-free operation: UPDATEs, or the CREATE / DELETE).
      const caused = stackId ? (await actionsOf(vnfm, stackId)).slice(before).filter((a) => a.action !== 'INIT') : [];
      const workMs = caused.reduce((sum, a) => sum + (a.workMs ?? 0), 0);
      const ratio =
        workMs > 0 ? `${(vnfmMs / workMs).toFixed(3)}x of ${(workMs / 1000).toFixed(2)} s of stack ${caused.map((a) => a.action).join('+')}` : 'no Heat work';
      console.log(`  ${label.padEnd(18)} 202 -> COMPLETED ${(vnfmMs / 1000).toFixed(2)} s   ${ratio}`);
    }
  } finally {
    await vnfm.stop();
  }
}

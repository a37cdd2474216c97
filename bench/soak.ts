// Memory under repeated load: rounds of concurrent create + instantiate + terminate + delete on the
// OpenStack simulator, the runtime's RSS and JS heap after each. Memory a round takes should be
// given back before the next: rounds 2..n flat within 10%.
// BENCH_SOAK_ROUNDS (default 5) and BENCH_SOAK_CONCURRENCY (default 100) change the sizes.
import { client, settle, startVnfm, type LocalVnfm, type Reply } from '../test/support/runtime.ts';
import {
  createInstances,
  describeOutcomes,
  type Outcomes,
  heapOf,
  INSTANTIATE_ON_SIMULATOR,
  onboardSample,
  outcomesOf,
  residentMiB,
} from './openstack-lifecycles.ts';

const ROUNDS = Number(process.env.BENCH_SOAK_ROUNDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_SOAK_CONCURRENCY ?? 100);
const MiB = 2 ** 20;

/** `count` concurrent create + instantiate + terminate, then their deletes; how the operations ended and how many instances were deleted. */
export async function lifecycleRound(vnfm: LocalVnfm, vnfdId: string, count: number): Promise<{ outcomes: Outcomes; deleted: number }> {
  const call = client(vnfm);
  const ids = await createInstances(vnfm, vnfdId, count);
  const replies: Reply[] = await Promise.all(ids.map((id) => call('POST', `/vnflcm/v2/vnf_instances/${id}/instantiate`, { body: INSTANTIATE_ON_SIMULATOR })));
  await settle(vnfm);
  replies.push(...(await Promise.all(ids.map((id) => call('POST', `/vnflcm/v2/vnf_instances/${id}/terminate`, { body: { terminationType: 'FORCEFUL' } })))));
  await settle(vnfm);
  const outcomes = await outcomesOf(vnfm, replies);
  const deletes = await Promise.all(ids.map((id) => call('DELETE', `/vnflcm/v2/vnf_instances/${id}`)));
  await settle(vnfm);
  return { outcomes, deleted: deletes.filter((r) => r.status === 204).length };
}

export async function benchSoak(): Promise<void> {
  const vnfm = await startVnfm({ env: { VNFM_PARAMETER_OVERRIDES: 'LogLevel=warn' } });
  try {
    const vnfdId = await onboardSample(vnfm);
    console.log(`Soak: ${ROUNDS} rounds of ${CONCURRENCY} concurrent create + instantiate + terminate + delete on the OpenStack simulator`);
    console.log(`  after start and onboarding: RSS ${residentMiB(vnfm.pid).now.toFixed(0)} MiB`);
    const rss: number[] = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      const started = performance.now();
      const { outcomes, deleted } = await lifecycleRound(vnfm, vnfdId, CONCURRENCY);
      const seconds = (performance.now() - started) / 1000;
      const memory = residentMiB(vnfm.pid);
      const heap = await heapOf(vnfm);
      rss.push(memory.now);
      console.log(
        `  round ${round}: RSS ${memory.now.toFixed(0)} MiB (peak ${memory.peak.toFixed(0)}), JS heap used ${(heap.heapUsed / MiB).toFixed(0)} of ${(heap.heapTotal / MiB).toFixed(0)} MiB, external ${(heap.external / MiB).toFixed(0)} MiB, array buffers ${(heap.arrayBuffers / MiB).toFixed(0)} MiB; ${describeOutcomes(outcomes)}, ${deleted} of ${CONCURRENCY} deleted; ${seconds.toFixed(1)} s`,
      );
      for (const [reason, count] of outcomes.reasons) console.log(`    ${count} x ${reason}`);
    }
    const later = rss.slice(1);
    if (later.length > 1) {
      const spread = Math.max(...later) / Math.min(...later) - 1;
      console.log(`  RSS spread over rounds 2..${ROUNDS}: ${(spread * 100).toFixed(1)}% (max/min; goal <= 10%)`);
    }
  } finally {
    await vnfm.stop();
  }
}

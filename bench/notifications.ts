// Notification delivery in the local runtime, to a local NFVO sink answering 204: the delay from
// an op-occ state change (its stateEnteredTime, the notification's timeStamp) to the sink
// receiving the notification, one operation at a time; then deliveries per second for a burst of
// changes fanned out to several subscriptions. Locally one poller takes batches of 10 from the
// queue, where Lambda would run several batches at once.
import { client, seedPackage, settle, startVnfm } from '../test/support/runtime.ts';
import { startNfvoSink } from '../test/support/nfvo-sink.ts';
import { percentile } from './stats.ts';

const OPERATIONS = Number(process.env.BENCH_NOTIFY_OPERATIONS ?? 100);
const INSTANCES = Number(process.env.BENCH_NOTIFY_INSTANCES ?? 500);
const SUBSCRIPTIONS = Number(process.env.BENCH_NOTIFY_SUBSCRIPTIONS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_NOTIFY_CONCURRENCY ?? 8);

export async function benchNotifications(): Promise<void> {
  const vnfm = await startVnfm({ env: { VNFM_PARAMETER_OVERRIDES: 'LogLevel=warn' } });
  const sink = await startNfvoSink();
  try {
    const call = client(vnfm);
    const pkg = await seedPackage(vnfm);
    const subscribe = async (path: string) => {
      const reply = await call('POST', '/vnflcm/v2/subscriptions', { body: { callbackUri: `${sink.url}${path}` } });
      if (reply.status !== 201) throw new Error(`subscription answered ${reply.status}: ${reply.text}`);
      return (reply.body as { id: string }).id;
    };

    // 1. Delay, one MODIFY_INFO at a time (STARTING, PROCESSING, COMPLETED each notified).
    const first = await subscribe('/delay');
    const instance = ((await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: pkg.vnfdId, vnfInstanceName: 'bench' } })).body as { id: string }).id;
    await settle(vnfm);
    const before = sink.received.length;
    for (let i = 0; i < OPERATIONS; i++) {
      const reply = await call('PATCH', `/vnflcm/v2/vnf_instances/${instance}`, { body: { vnfInstanceDescription: `run ${i}` } });
      if (reply.status !== 202) throw new Error(`PATCH answered ${reply.status}: ${reply.text}`);
      await settle(vnfm);
    }
    const changes = sink.received.slice(before).filter((r) => r.body.notificationType === 'VnfLcmOperationOccurrenceNotification');
    if (changes.length !== OPERATIONS * 3) throw new Error(`expected ${OPERATIONS * 3} op occ notifications, the sink has ${changes.length}`);
    const delays = changes.map((r) => r.at - Date.parse(String(r.body.timeStamp))).sort((a, b) => a - b);
    console.log(
      `Notifications: op-occ state change -> delivered to the sink, ${changes.length} changes one operation at a time   p50 ${percentile(delays, 50).toFixed(0)} ms  p99 ${percentile(delays, 99).toFixed(0)} ms  max ${delays.at(-1)?.toFixed(0)} ms   (Tacker: sent from the LCM thread, not retried)`,
    );
    await call('DELETE', `/vnflcm/v2/subscriptions/${first}`);

    // 2. Throughput: a burst of instance creations, each fanned out to every subscription.
    for (let i = 0; i < SUBSCRIPTIONS; i++) await subscribe(`/burst-${i}`);
    const start = sink.received.length;
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < INSTANCES) {
          next++;
          const reply = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: pkg.vnfdId, vnfInstanceName: 'burst' } });
          if (reply.status !== 201) throw new Error(`POST answered ${reply.status}`);
        }
      }),
    );
    const produced = (performance.now() - started) / 1000;
    await settle(vnfm);
    const burst = sink.received.slice(start);
    const expected = INSTANCES * SUBSCRIPTIONS;
    if (burst.length !== expected || new Set(burst.map((r) => `${r.path} ${r.body.id}`)).size !== expected) {
      throw new Error(`expected ${expected} distinct deliveries, the sink has ${burst.length}`);
    }
    const span = ((burst.at(-1)?.at ?? 0) - (burst[0]?.at ?? 0)) / 1000;
    const lag = (burst.at(-1)?.at ?? 0) - Date.parse(String(burst.at(-1)?.body.timeStamp));
    console.log(
      `Notifications: ${INSTANCES} instances created by ${CONCURRENCY} clients in ${produced.toFixed(1)} s, x ${SUBSCRIPTIONS} subscriptions = ${expected} deliveries   ${(expected / span).toFixed(0)} deliveries/s to the local sink (first to last delivery ${span.toFixed(1)} s; the last one ${(lag / 1000).toFixed(1)} s after its change)`,
    );
  } finally {
    await sink.close();
    await vnfm.stop();
  }
}

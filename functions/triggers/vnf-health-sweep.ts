// Scheduled (EventBridge Scheduler): one VNFC health sweep over every instantiated VNF, raising and
// clearing alarms and starting automatic heals (lib/fm/monitor.ts). A lease keeps sweeps from
// overlapping (no reserved concurrency needed), so an alarm is never raised twice for one fault;
// it lasts this invocation's remaining time and a margin. Drivers load as the sweep meets their
// VIMs (lib/vim/registry.ts). Invoked once with {"markUnmonitored": true} after an upgrade, it marks
// the instances instantiated before the sweep's index existed instead (lib/store/vnf-instances.ts).
// X-Ray subsegments for its invocations and AWS SDK calls (lib/trace.ts; not every function has room for it).
import '#lib/trace.ts';
import type { Context } from 'aws-lambda';
import { fmDeps } from '#lib/deps.ts';
import { sweep, type SweepReport } from '#lib/fm/monitor.ts';
import { instrumented } from '#lib/metrics.ts';
import { markUnmonitored } from '#lib/store/vnf-instances.ts';

export const handler = instrumented(
  async (event: { markUnmonitored?: boolean } | null, context: Context): Promise<SweepReport | { marked: number }> =>
    event?.markUnmonitored === true ? { marked: await markUnmonitored() } : sweep(fmDeps(), context.getRemainingTimeInMillis()),
);

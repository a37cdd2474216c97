// Scheduled (EventBridge Scheduler): one VNFC health sweep over every instantiated VNF, raising and
// clearing alarms and starting automatic heals (lib/fm/monitor.ts). Reserved concurrency 1 keeps
// sweeps from overlapping, so an alarm is never raised twice for one fault. Drivers load as the
// sweep meets their VIMs (lib/vim/registry.ts).
import { fmDeps } from '#lib/deps.ts';
import { sweep, type SweepReport } from '#lib/fm/monitor.ts';
import { instrumented } from '#lib/metrics.ts';

export const handler = instrumented(async (): Promise<SweepReport> => sweep(fmDeps()));

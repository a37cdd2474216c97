// Scheduled (EventBridge Scheduler): one VNFC health sweep over every instantiated VNF, raising and
// clearing alarms and starting automatic heals (lib/fm/monitor.ts). A lease keeps sweeps from
// overlapping (no reserved concurrency needed), so an alarm is never raised twice for one fault;
// it lasts this invocation's remaining time and a margin. Drivers load as the sweep meets their
// VIMs (lib/vim/registry.ts).
import type { Context } from 'aws-lambda';
import { fmDeps } from '#lib/deps.ts';
import { sweep, type SweepReport } from '#lib/fm/monitor.ts';

export const handler = async (_event: unknown, context: Context): Promise<SweepReport> => sweep(fmDeps(), context.getRemainingTimeInMillis());

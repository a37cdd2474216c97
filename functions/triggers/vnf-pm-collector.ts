// Scheduled (EventBridge Scheduler): one PM collection sweep over the PM jobs due and every
// threshold (lib/pm/collector.ts): the VIMs' figures of the measured VNFCs, performance reports at
// each reporting period, threshold crossings, and their notifications. A lease keeps sweeps from
// overlapping (no reserved concurrency needed); with no job and no threshold it reads two empty
// results and stops. Drivers load as the sweep meets their VIMs (lib/vim/registry.ts).
import type { Context } from 'aws-lambda';
import { pmDeps } from '#lib/deps.ts';
import { instrumented } from '#lib/metrics.ts';
import { collect, type CollectionReport } from '#lib/pm/collector.ts';

export const handler = instrumented(
  async (_event: unknown, context: Context): Promise<CollectionReport> => collect(pmDeps(), context.getRemainingTimeInMillis()),
);

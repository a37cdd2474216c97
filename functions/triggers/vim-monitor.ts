// Scheduled (EventBridge Scheduler, every minute): checks every registered VIM and moves it between
// REACHABLE and UNREACHABLE; LCM requests on an UNREACHABLE VIM then fail before 202.
// X-Ray subsegments for its invocations and AWS SDK calls (lib/trace.ts; not every function has room for it).
import '#lib/trace.ts';
import type { ScheduledEvent } from 'aws-lambda';
import { vimRegistryDeps } from '#lib/deps.ts';
import { sweepVims, type SweepResult } from '#lib/vim-connections/reachability.ts';
import { instrumented } from '#lib/metrics.ts';

export const handler = instrumented(async (_event: ScheduledEvent | Record<string, unknown>): Promise<SweepResult> => sweepVims(vimRegistryDeps()));

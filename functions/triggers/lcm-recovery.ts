// EventBridge target for "Step Functions Execution Status Change" (FAILED, TIMED_OUT, ABORTED) of
// the LCM state machines: moves an op occ its dead execution left in flight to a defined state.
import type { EventBridgeEvent } from 'aws-lambda';
import { defaultDeps } from '#lib/lcm/deps.ts';
import { recoverDeadExecution, type DeadExecution } from '#lib/lcm/recovery.ts';

export const handler = async (event: EventBridgeEvent<'Step Functions Execution Status Change', DeadExecution>): Promise<{ result: string }> => ({
  result: await recoverDeadExecution(defaultDeps(), event.detail),
});

// Step Functions task of the LCM state machines: one step (grant, driver start/poll/finish for
// instantiate, terminate, scale, heal and rollback) of an op occ. Throws on failure so Retry/Catch see it.
import { coreDeps } from '#lib/deps.ts';
import { runStep, type StepAction, type StepResult } from '#lib/lcm/engine/run.ts';

export const handler = async (input: { opOccId: string; action: StepAction; polls?: number }): Promise<StepResult> =>
  runStep(coreDeps(), input.opOccId, input.action, input.polls ?? 0);

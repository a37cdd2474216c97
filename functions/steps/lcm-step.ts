// Step Functions task of the LCM state machines: one step (grant, driver start/poll/finish for
// instantiate, terminate, scale, heal and rollback) of an op occ. Throws on failure so Retry/Catch
// see it. A poll step polls the VIM until it is done or this invocation's time is up
// (lib/lcm/engine/poll-loop.ts), reading the instance and its package once per invocation; the state
// machines run the poll steps on a smaller function (template.yaml LcmPollFunction), as waiting
// needs little memory.
import type { Context } from 'aws-lambda';
import { stepDeps } from '#lib/deps.ts';
import { pollStep, runStep, type StepResult } from '#lib/lcm/engine/run.ts';
import { runChain, type ChainedStep } from '#lib/lcm/engine/chain.ts';
import { isVimPoll } from '#lib/lcm/engine/step.ts';
import { pollUntilSettled } from '#lib/lcm/engine/poll-loop.ts';
import { instrumented } from '#lib/metrics.ts';

/** Without a Lambda context (a direct call), a poll step waits as if it had a whole invocation. */
const POLL_FALLBACK_MS = 900_000;

const handle = async (input: ChainedStep, context?: Context): Promise<StepResult> => {
  const deps = stepDeps();
  const first = isVimPoll(input.action)
    ? () =>
        pollUntilSettled(pollStep(deps, input.opOccId, input.action), input.polls ?? 0, {
          remainingMs: () => context?.getRemainingTimeInMillis() ?? POLL_FALLBACK_MS,
        })
    : () => runStep(deps, input.opOccId, input.action, input.polls ?? 0);
  return runChain(deps, input, first, (action, polls) => runStep(deps, input.opOccId, action, polls));
};

export const handler = instrumented(handle, (input) => ({ opOccId: input.opOccId }));

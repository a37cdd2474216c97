// The steps of HEAL (SOL003 5.4.9): the driver replaces the VNFCs named and no others. No rollback:
// the VNFCs it replaced are gone (lib/lcm/requests/op-occ-tasks.ts refuses one).
import { grant, grantPoll } from './shared-steps.ts';
import type { Step, StepTable } from './step.ts';
import { finishUpdate, pollUpdate, startUpdate } from './update.ts';

const finish: Step = (deps, loaded, polls) => finishUpdate(deps, loaded, polls, () => ({}));

export const healSteps: StepTable = {
  grant,
  'grant-poll': grantPoll,
  'update-start': startUpdate,
  'update-poll': pollUpdate,
  'update-finish': finish,
};

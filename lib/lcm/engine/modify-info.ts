// MODIFY_INFO's only steps here are those of its rollback (statemachines/rollback.asl.json): it
// changed nothing on a VIM before it failed, so there is nothing to undo but the attempt's record.
// Its work is functions/steps/modify-info.ts (lib/lcm/vnf-instances.ts).
import { forgetAttempt, nothingToDo } from './shared-steps.ts';
import type { StepTable } from './step.ts';

export const modifyInfoSteps: StepTable = {
  'rollback-start': nothingToDo,
  'rollback-poll': nothingToDo,
  'rollback-finish': forgetAttempt,
};

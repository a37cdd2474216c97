// The one place the engine coordinates an operation with an EM (lib/lcm/coordination.ts), whatever
// the operation: around the steps that start and poll its VIM work. With coordinations at "start",
// the start step asks for them first and begins the VIM work only once they have all said
// CONTINUE; while one runs, it answers IN_PROGRESS, and the poll step that the state machine calls
// next keeps reading it and then runs the start step itself. With coordinations at "end", the poll
// step that sees the VIM work done asks for them and answers DONE only once they have said
// CONTINUE. No state machine changes: the Wait state between polls waits for the EM as for the VIM.
import type { CoreDeps } from '#lib/ports.ts';
import { OperationCancelled } from '#lib/lcm/cancellation.ts';
import { CoordinationLedger, recordedPlanOf } from '#lib/lcm/coordination.ts';
import { polled, type Loaded, type StepAction, type StepResult, type StepTable } from './step.ts';

/** The poll action of each VIM work and the start action that begins it. */
const START_OF: Partial<Record<StepAction, StepAction>> = {
  'instantiate-poll': 'instantiate-start',
  'terminate-poll': 'terminate-start',
  'update-poll': 'update-start',
};
const STARTS = new Set(Object.values(START_OF));

/** Runs `action` of an op occ, with the coordinations its request asks for where they belong. */
export async function coordinatedStep(deps: CoreDeps, loaded: Loaded, action: StepAction, polls: number, table: StepTable): Promise<StepResult> {
  const step = table[action];
  if (!step) throw new Error(`no step ${action}`);
  const isStart = STARTS.has(action);
  const start = isStart ? step : START_OF[action] && table[START_OF[action]];
  const plan = start ? recordedPlanOf(loaded.opOcc) : undefined;
  if (!plan || !start) return step(deps, loaded, polls);
  const ledger = new CoordinationLedger(deps, loaded.opOcc, plan);
  // The steps' own coordinations (CHANGE_VNFPKG's per VNFC batch) go through the same ledger.
  const withLedger: Loaded = { ...loaded, coordination: ledger };
  const cancelling = loaded.opOcc.isCancelPending;
  if (cancelling && ledger.pending) {
    await ledger.cancelPending();
    throw new OperationCancelled(loaded.opOcc);
  }

  const afterVimWork = async (result: StepResult): Promise<StepResult> => {
    if (result.status !== 'DONE') return result;
    await ledger.mark('vim-done');
    if (cancelling) return result;
    return (await ledger.coordinate('end', polls)) ?? result;
  };

  if (isStart || !ledger.has('started')) {
    const waiting = await ledger.coordinate('start', polls);
    if (waiting) return waiting;
    // The coordinations said CONTINUE while a cancel came: no VIM work is begun.
    if (cancelling) throw new OperationCancelled(loaded.opOcc);
    const result = await start(deps, withLedger, polls);
    await ledger.mark('started');
    return afterVimWork(result);
  }
  if (!ledger.has('vim-done')) return afterVimWork(await step(deps, withLedger, polls));
  if (cancelling) return polled(polls);
  return (await ledger.coordinate('end', polls)) ?? polled(polls);
}

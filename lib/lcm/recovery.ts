// The recovery path for state machine executions that die (timeout, abort, a failing transition):
// the op occ they drove must not stay STARTING/PROCESSING/ROLLING_BACK holding its instance's
// lock. PROCESSING and ROLLING_BACK become FAILED_TEMP (the NFVO may retry, roll back or fail),
// STARTING becomes ROLLED_BACK (nothing was done yet) — SOL003 5.4.1.2.
import type { LcmDeps } from './deps.ts';
import { finishOperation } from './operations.ts';
import { log } from '#lib/log.ts';

export interface DeadExecution {
  name: string;
  status: string;
  input: string;
  error?: string | null;
  cause?: string | null;
}

export async function recoverDeadExecution(deps: LcmDeps, execution: DeadExecution): Promise<string> {
  let opOccId: string | undefined;
  try {
    opOccId = (JSON.parse(execution.input) as { opOccId?: string }).opOccId;
  } catch {
    opOccId = undefined;
  }
  if (!opOccId) return 'not an LCM execution';
  const opOcc = await deps.opOccs.get(opOccId);
  if (!opOcc) return 'op occ gone';
  const error = {
    title: 'Operation interrupted',
    status: 500,
    detail: `The state machine execution ${execution.name} ended ${execution.status}${execution.error ? ` (${execution.error})` : ''} while the operation was ${opOcc.operationState}`,
  };
  switch (opOcc.operationState) {
    case 'STARTING':
      await finishOperation(deps, opOcc.id, 'ROLLED_BACK', { error });
      break;
    case 'PROCESSING':
    case 'ROLLING_BACK':
      await deps.opOccs.transition(opOcc.id, { from: [opOcc.operationState], to: 'FAILED_TEMP', now: deps.now(), set: { error } });
      break;
    default:
      return `nothing to recover (${opOcc.operationState})`;
  }
  log.warn('recovered an operation whose execution died', { opOccId, execution: execution.name, status: execution.status });
  return `recovered from ${opOcc.operationState}`;
}

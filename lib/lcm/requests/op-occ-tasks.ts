// The tasks on a FAILED_TEMP op occ (SOL003 5.4.14-5.4.16): retry runs the operation's state
// machine again, rollback runs the rollback machine, fail ends it FAILED and releases the lock.
import { ConflictError, ProblemError } from '#lib/sol/errors.ts';
import type { OperationExecution, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import { log } from '#lib/log.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { Caller } from '#lib/auth/tenancy.ts';
import { finishOperation } from '#lib/lcm/operations.ts';
import { getOpOcc, moveOpOcc } from '#lib/lcm/op-occs.ts';

/** SOL003 5.4.14 retry: FAILED_TEMP -> PROCESSING, the operation's state machine runs again. */
export async function retryOperation(deps: CoreDeps, caller: Caller, opOccId: string): Promise<VnfLcmOpOccRecord> {
  const current = await getOpOcc(deps, caller, opOccId);
  if (current.operationState !== 'FAILED_TEMP')
    throw new ConflictError(`VNF LCM operation occurrence ${opOccId} is ${current.operationState}; only FAILED_TEMP can be retried`);
  const attempt = (current.attempts ?? 1) + 1;
  const execution: OperationExecution = { machine: current.operation, name: `${opOccId}-retry-${attempt}` };
  const moved = await moveOpOcc(deps, opOccId, { from: ['FAILED_TEMP'], to: 'PROCESSING', now: deps.now(), set: { attempts: attempt, execution } });
  if (!moved) throw new ConflictError(`VNF LCM operation occurrence ${opOccId} changed concurrently`);
  const params = current.operationParams as { terminationType?: string; gracefulTerminationTimeout?: number } | undefined;
  await startOrFailTemp(deps, moved, execution, {
    retry: true,
    gracefulSeconds: params?.terminationType === 'GRACEFUL' ? (params.gracefulTerminationTimeout ?? 0) : 0,
  });
  return moved;
}

/** SOL003 5.4.15 rollback: FAILED_TEMP -> ROLLING_BACK; what the operation created is removed -> ROLLED_BACK. */
export async function rollbackOperation(deps: CoreDeps, caller: Caller, opOccId: string): Promise<VnfLcmOpOccRecord> {
  const current = await getOpOcc(deps, caller, opOccId);
  if (current.operationState !== 'FAILED_TEMP')
    throw new ConflictError(`VNF LCM operation occurrence ${opOccId} is ${current.operationState}; only FAILED_TEMP can be rolled back`);
  if (current.operation === 'TERMINATE')
    throw new ConflictError('A TERMINATE cannot be rolled back (its resources may be partly deleted); retry it or mark it failed');
  if (current.operation === 'HEAL') throw new ConflictError('A HEAL cannot be rolled back (the VNFCs it replaced are gone); retry it or mark it failed');
  // A rollback that failed may be asked for again: each gets an execution name of its own.
  const execution: OperationExecution = { machine: 'ROLLBACK', name: `${opOccId}-rollback-${Date.now()}` };
  const moved = await moveOpOcc(deps, opOccId, { from: ['FAILED_TEMP'], to: 'ROLLING_BACK', now: deps.now(), set: { execution } });
  if (!moved) throw new ConflictError(`VNF LCM operation occurrence ${opOccId} changed concurrently`);
  await startOrFailTemp(deps, moved, execution, {});
  return moved;
}

/** SOL003 5.4.16 fail: FAILED_TEMP -> FAILED (final), the instance's lock is released. */
export async function failOperation(deps: CoreDeps, caller: Caller, opOccId: string): Promise<VnfLcmOpOccRecord> {
  const current = await getOpOcc(deps, caller, opOccId);
  if (current.operationState !== 'FAILED_TEMP')
    throw new ConflictError(`VNF LCM operation occurrence ${opOccId} is ${current.operationState}; only FAILED_TEMP can be marked failed`);
  return finishOperation(deps, opOccId, 'FAILED');
}

async function startOrFailTemp(deps: CoreDeps, opOcc: VnfLcmOpOccRecord, execution: OperationExecution, input: Record<string, unknown>): Promise<void> {
  try {
    await deps.executor.start(execution.machine, execution.name, {
      ...input,
      opOccId: opOcc.id,
      vnfInstanceId: opOcc.vnfInstanceId,
      operation: opOcc.operation,
    });
  } catch (error) {
    log.error('could not start a state machine', { opOccId: opOcc.id, error });
    await moveOpOcc(deps, opOcc.id, {
      from: [opOcc.operationState],
      to: 'FAILED_TEMP',
      now: deps.now(),
      set: { error: { title: 'Service Unavailable', status: 503, detail: 'The operation could not be started; try again' } },
    });
    throw new ProblemError(503, 'Service Unavailable', 'The operation could not be started; it is FAILED_TEMP again, try later', { cause: error });
  }
}

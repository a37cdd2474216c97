// SOL003 VNF LCM operation occurrence resources: the read side, the task-step entry points that
// the operation state machines call, and every write lcm makes to an op occ (created, moved to
// another state, attributes updated), so that what follows a write (its notification) has one place.
import { isDeepStrictEqual } from 'node:util';
import { ConflictError, NotFoundError, ProblemError } from '#lib/sol/errors.ts';
import {
  renderVnfLcmOpOcc,
  VNF_LCM_OP_OCC_ATTRIBUTES,
  VNF_LCM_OP_OCC_DEFAULT_EXCLUDED,
  type ApiMajorVersion,
  type LcmOperationState,
  type ProblemDetailsRecord,
  type VnfLcmOpOccRecord,
} from '#lib/sol/model.ts';
import { OP_OCC_LIST_INDEXES, opOccListKey, type Transition } from '#lib/store/op-occs.ts';
import type { DriverState } from '#lib/vim/driver.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { canSee, listScope, type Caller } from '#lib/auth/tenancy.ts';
import { listCollection, type ListResult } from '#lib/sol/listing.ts';
import { countOperation } from '#lib/metrics.ts';

export async function getOpOcc(deps: CoreDeps, caller: Caller, id: string): Promise<VnfLcmOpOccRecord> {
  const record = await deps.opOccs.get(id);
  if (!record || !canSee(caller, record.tenantId)) throw new NotFoundError(`VNF LCM operation occurrence ${id} does not exist`);
  return record;
}

export function listOpOccs(deps: CoreDeps, caller: Caller, version: ApiMajorVersion, baseUrl: string, rawQuery: string, pageSize: number): Promise<ListResult> {
  return listCollection(
    {
      resource: `v${version}/vnf_lcm_op_occs`,
      attributes: VNF_LCM_OP_OCC_ATTRIBUTES,
      defaultExcluded: VNF_LCM_OP_OCC_DEFAULT_EXCLUDED,
      alwaysIncluded: ['id', '_links'],
      scope: listScope(caller),
      indexes: OP_OCC_LIST_INDEXES,
      // The list keys, and what the links follow: the operation and its state, the grant's own link.
      readAlways: [
        'id',
        'tenantId',
        'startSeq',
        'vnfInstanceId',
        'operation',
        'operationState',
        'grant._links.self.href',
        'grant.local',
        'grantPending.location',
      ],
      fetch: (scope, limit, after, plan, read) => deps.opOccs.listPage(scope, limit, after, plan, read),
      render: (record) => renderVnfLcmOpOcc(record, version, baseUrl),
      keyOf: opOccListKey,
    },
    rawQuery,
    pageSize,
  );
}

export function problemFromError(error: unknown): ProblemDetailsRecord {
  if (error instanceof ProblemError) return error.toProblem();
  return { title: 'Internal Server Error', status: 500, detail: error instanceof Error ? error.message : String(error) };
}

export type StepTarget = Extract<LcmOperationState, 'PROCESSING' | 'COMPLETED' | 'FAILED_TEMP' | 'ROLLED_BACK' | 'FAILED'>;

/** Records a new op occ (STARTING, under its instance's lock). */
export async function createOpOcc(deps: CoreDeps, record: VnfLcmOpOccRecord): Promise<void> {
  await deps.opOccs.create(record);
  countOperation(record.operation, record.operationState);
}

/**
 * Moves an op occ to `transition.to` if it is in one of `transition.from`; undefined when it was not.
 * A change of state ends a pending cancel (SOL003 5.5.2.13: isCancelPending false, no cancelMode),
 * whether the cancel brought it about or the operation got there first.
 */
export async function moveOpOcc(deps: CoreDeps, opOccId: string, transition: Transition): Promise<VnfLcmOpOccRecord | undefined> {
  if (transition.from.includes(transition.to)) return deps.opOccs.transition(opOccId, transition);
  const moved = await deps.opOccs.transition(opOccId, {
    ...transition,
    set: { isCancelPending: false, ...transition.set },
    remove: [...(transition.remove ?? []), 'cancelMode'],
  });
  if (moved) countOperation(moved.operation, transition.to);
  return moved;
}

/** Updates attributes of an op occ without changing its state; fails if the state changed meanwhile. */
export async function updateOpOcc(deps: CoreDeps, opOcc: VnfLcmOpOccRecord, set: Record<string, unknown>, remove: string[] = []): Promise<void> {
  const saved = await moveOpOcc(deps, opOcc.id, { from: [opOcc.operationState], to: opOcc.operationState, now: opOcc.stateEnteredTime, set, remove });
  if (!saved) throw new ConflictError(`VNF LCM operation occurrence ${opOcc.id} changed state while its step ran`);
}

/**
 * Records the driver's state on the op occ, unless it is what the op occ holds already: most polls
 * change nothing, and a write per poll of a 3 KB record (with its index copies) was most of what
 * the table's files grew by under load. A state change meanwhile is then caught by the next write.
 */
export async function saveDriverState(deps: CoreDeps, opOcc: VnfLcmOpOccRecord, state: DriverState): Promise<void> {
  if (isDeepStrictEqual(opOcc.driverState, state)) return;
  await updateOpOcc(deps, opOcc, { driverState: state });
}

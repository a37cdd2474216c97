// The uniform recipe of every LCM request (validate -> check state -> record the op occ as
// STARTING -> hand off), and the op-occ transitions the state machines drive, following the
// state model of SOL003 5.4.1.2.
import { ConflictError, NotFoundError, ProblemError } from '#lib/sol/errors.ts';
import {
  OP_OCC_TRANSITIONS,
  TERMINAL_STATES,
  type ApiMajorVersion,
  type LcmOperationState,
  type LcmOperationType,
  type OperationExecution,
  type ProblemDetailsRecord,
  type VnfInstanceRecord,
  type VnfLcmOpOccRecord,
} from '#lib/sol/model.ts';
import { log } from '#lib/log.ts';
import { redactSecrets } from '#lib/redact.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { Caller } from '#lib/auth/tenancy.ts';
import { createOpOcc, moveOpOcc } from './op-occs.ts';
import { coordinationPlanOf } from './coordination.ts';

/** A lock whose op occ was never written (the request died between the two writes) is taken over after this long. */
const ORPHAN_LOCK_GRACE_MS = 60_000;

export interface OperationRequest {
  /** The op occ's id when the caller has already named it elsewhere (a VNF snapshot it took); else a new one. */
  id?: string;
  tenantId: string;
  /** The OAuth 2.0 client whose request started it (kept on the op occ, not shown by the API). */
  startedBy?: string;
  /** The API root the request came through (kept on the op occ for the links it sends, e.g. to an EM). */
  apiRoot?: string;
  vnfInstanceId: string;
  operation: LcmOperationType;
  operationParams: Record<string, unknown>;
  apiMajorVersion: ApiMajorVersion;
  requireState?: VnfInstanceRecord['instantiationState'];
  /** Secrets written for this operation; removed again if it does not start. */
  pendingVimAccessSecrets?: Record<string, string>;
  isAutomaticInvocation?: boolean;
  /** Further internal attributes of the op occ (the VIM it works on, ...). */
  internal?: Pick<VnfLcmOpOccRecord, 'vim' | 'change' | 'vnfSnapshotInfoId'>;
  /** Added to the state machine's input. */
  executionInput?: Record<string, unknown>;
}

/**
 * Stores the accessInfo of each VIM connection a request brings (those not in `pending` already) as
 * a secret of the instance; startOperation records the request without it and keeps these ids on
 * the op occ.
 */
export async function storeVimCredentials(
  deps: CoreDeps,
  instanceId: string,
  connections: Record<string, { accessInfo?: Record<string, unknown> }> | undefined,
  pending: Record<string, string>,
): Promise<void> {
  for (const [connectionId, connection] of Object.entries(connections ?? {})) {
    if (pending[connectionId] || !connection.accessInfo) continue;
    pending[connectionId] = await deps.secrets.create(`vnf-instances/${instanceId}/${deps.newId()}/${connectionId}`, connection.accessInfo);
  }
}

/** Runs `start` with the secrets it writes into `pending`; if the operation does not start, they are removed again, so a refused request leaves nothing behind. */
export async function removingSecretsOnFailure<T>(deps: CoreDeps, pending: Record<string, string>, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    for (const secretId of Object.values(pending)) await deps.secrets.remove(secretId).catch(() => undefined);
    throw error;
  }
}

export class ServiceUnavailableError extends ProblemError {
  constructor(detail: string, cause?: unknown) {
    super(503, 'Service Unavailable', detail, { cause });
  }
}

/** Takes the instance's operation lock, or explains (404/409) why it cannot be taken. */
async function acquireInstanceLock(deps: CoreDeps, request: OperationRequest, opOccId: string): Promise<void> {
  const lock = { opOccId, now: deps.now(), requireState: request.requireState };
  if (await deps.instances.acquireLock(request.vnfInstanceId, lock)) return;

  const instance = await deps.instances.get(request.vnfInstanceId);
  if (!instance || instance.tenantId !== request.tenantId) throw new NotFoundError(`VNF instance ${request.vnfInstanceId} does not exist`);
  if (instance.lockOpOccId) {
    const holder = await deps.opOccs.get(instance.lockOpOccId);
    const orphaned = !holder && Date.parse(instance.lockedAt ?? '') < Date.parse(lock.now) - ORPHAN_LOCK_GRACE_MS;
    const finished = holder !== undefined && TERMINAL_STATES.includes(holder.operationState);
    if ((orphaned || finished) && (await deps.instances.acquireLock(request.vnfInstanceId, { ...lock, takeOverFrom: instance.lockOpOccId }))) {
      log.warn('took over a stale operation lock', { vnfInstanceId: request.vnfInstanceId, staleOpOccId: instance.lockOpOccId });
      return;
    }
    throw new ConflictError(
      `VNF instance ${request.vnfInstanceId} has LCM operation occurrence ${instance.lockOpOccId} in progress${holder ? ` (${holder.operation}, ${holder.operationState})` : ''}; a new operation can start only after it has finished`,
    );
  }
  if (request.requireState && instance.instantiationState !== request.requireState) {
    throw new ConflictError(`VNF instance ${request.vnfInstanceId} is ${instance.instantiationState}; ${request.operation} needs it ${request.requireState}`);
  }
  throw new ConflictError(`VNF instance ${request.vnfInstanceId} changed concurrently; try again`);
}

/** Who asked for an operation, as its op occ keeps it: the client, and the API root it used. */
export function requestedBy(caller: Caller): Pick<OperationRequest, 'startedBy' | 'apiRoot'> {
  return { startedBy: caller.clientId, ...(caller.apiRoot ? { apiRoot: caller.apiRoot } : {}) };
}

/** Records the op occ as STARTING under the instance's lock and starts its state machine. */
export async function startOperation(deps: CoreDeps, request: OperationRequest): Promise<VnfLcmOpOccRecord> {
  // Every operation may be coordinated with an EM (lib/lcm/coordination.ts): a request whose coordination cannot work is refused here.
  coordinationPlanOf(request.operationParams.additionalParams, request.operation);
  const id = request.id ?? deps.newId();
  await acquireInstanceLock(deps, request, id);
  // The record keeps the request without credentials; the scripts of the operation (its Vnflcm hooks,
  // CoordinateVNF scripts) get the additionalParams as given, kept apart and only while it runs.
  const additional = request.operationParams.additionalParams;
  let paramsSecret: string | undefined;
  try {
    if (additional !== undefined && JSON.stringify(additional) !== JSON.stringify(redactSecrets(additional))) {
      paramsSecret = await deps.secrets.create(`vnf-instances/${request.vnfInstanceId}/${id}/operation-params`, additional as Record<string, unknown>);
    }
  } catch (error) {
    await deps.instances.releaseLock(request.vnfInstanceId, id);
    throw error;
  }
  const now = deps.now();
  const execution: OperationExecution = { machine: request.operation, name: id };
  const record: VnfLcmOpOccRecord = {
    id,
    tenantId: request.tenantId,
    ...(request.startedBy ? { startedBy: request.startedBy } : {}),
    ...(request.apiRoot ? { apiRoot: request.apiRoot } : {}),
    vnfInstanceId: request.vnfInstanceId,
    operation: request.operation,
    operationState: 'STARTING',
    stateEnteredTime: now,
    startTime: now,
    startSeq: `${now}#${id}`,
    isAutomaticInvocation: request.isAutomaticInvocation ?? false,
    isCancelPending: false,
    // Whatever the request carried in the wrong place or with the wrong type, credentials are not kept.
    operationParams: redactSecrets(request.operationParams),
    pendingVimAccessSecrets: request.pendingVimAccessSecrets,
    apiMajorVersion: request.apiMajorVersion,
    ...request.internal,
    ...(paramsSecret ? { paramsSecret } : {}),
    attempts: 1,
    execution,
    revision: 1,
  };
  try {
    await createOpOcc(deps, record);
  } catch (error) {
    if (paramsSecret) await deps.secrets.remove(paramsSecret).catch(() => undefined);
    await deps.instances.releaseLock(request.vnfInstanceId, id);
    throw error;
  }
  try {
    await deps.executor.start(execution.machine, execution.name, {
      ...request.executionInput,
      opOccId: id,
      vnfInstanceId: request.vnfInstanceId,
      operation: request.operation,
    });
  } catch (error) {
    // SOL003 5.4.1.2: a failure while STARTING ends in ROLLED_BACK; nothing was done yet.
    log.error('could not start the operation state machine', { opOccId: id, error });
    await finishOperation(deps, id, 'ROLLED_BACK', {
      error: { title: 'Service Unavailable', status: 503, detail: 'The operation could not be started' },
    });
    throw new ServiceUnavailableError(`The ${request.operation} operation could not be started; nothing was changed. Try again later.`, error);
  }
  return record;
}

export interface TransitionExtras {
  error?: ProblemDetailsRecord;
  changedInfo?: Record<string, unknown>;
  /** Only from these states (default: every state SOL003 5.4.1.2 lets move to the target). */
  from?: readonly LcmOperationState[];
}

const RELEASES_LOCK: readonly LcmOperationState[] = ['COMPLETED', 'FAILED', 'ROLLED_BACK'];

/**
 * Moves an op occ to `to` from any state that SOL003 5.4.1.2 allows. Idempotent: a retried task
 * that finds the op occ already in `to` repeats only the side effects (lock release, clean-up).
 */
export async function finishOperation(deps: CoreDeps, opOccId: string, to: LcmOperationState, extras: TransitionExtras = {}): Promise<VnfLcmOpOccRecord> {
  const from = (Object.keys(OP_OCC_TRANSITIONS) as LcmOperationState[]).filter(
    (state) => OP_OCC_TRANSITIONS[state].includes(to) && (extras.from === undefined || extras.from.includes(state)),
  );
  const set: Record<string, unknown> = {};
  if (extras.error) set.error = extras.error;
  if (extras.changedInfo) set.changedInfo = extras.changedInfo;
  // SOL003 5.5.2.13: error stays through PROCESSING and ROLLING_BACK after FAILED_TEMP; a completed operation has none.
  const remove = to === 'COMPLETED' ? ['error'] : [];
  let record = await moveOpOcc(deps, opOccId, { from, to, now: deps.now(), set, remove });
  if (!record) {
    const current = await deps.opOccs.get(opOccId);
    if (!current) throw new NotFoundError(`VNF LCM operation occurrence ${opOccId} does not exist`);
    if (current.operationState !== to) {
      throw new ConflictError(`VNF LCM operation occurrence ${opOccId} is ${current.operationState}; it cannot move to ${to}`);
    }
    record = current;
  }
  if (RELEASES_LOCK.includes(to)) {
    if (to !== 'COMPLETED') await removePendingSecrets(deps, record);
    if (record.paramsSecret)
      await deps.secrets
        .remove(record.paramsSecret)
        .catch((error: unknown) => log.warn('could not remove the script parameters of an operation', { opOccId, error }));
    await deps.instances.releaseLock(record.vnfInstanceId, record.id);
  }
  return record;
}

/** Removes the secrets an operation brought but did not leave in use on its instance. */
async function removePendingSecrets(deps: CoreDeps, record: VnfLcmOpOccRecord): Promise<void> {
  const pending = Object.values(record.pendingVimAccessSecrets ?? {});
  if (pending.length === 0) return;
  const inUse = new Set(Object.values((await deps.instances.get(record.vnfInstanceId))?.vimAccessSecrets ?? {}));
  for (const secretId of pending) {
    if (!inUse.has(secretId)) await deps.secrets.remove(secretId);
  }
}

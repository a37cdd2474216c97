// Cancel of an LCM operation (SOL003 5.4.17) with in-memory stores and a recording executor: what
// each state and mode does to the op occ, its execution and its instance's lock; how a pending
// cancel stops the steps of the state machines; and how the recovery of a stopped execution ends a
// cancel instead of moving the op occ a second time.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cancelOperation } from '#lib/lcm/requests/cancel.ts';
import { recoverDeadExecution } from '#lib/lcm/recovery.ts';
import { runStep } from '#lib/lcm/engine/run.ts';
import { CANCELLED } from '#lib/lcm/cancellation.ts';
import { saveInstance } from '#lib/lcm/engine/records.ts';
import type { Loaded } from '#lib/lcm/engine/step.ts';
import type { PackageAccess } from '#lib/packages/access.ts';
import type { ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { Caller } from '#lib/auth/tenancy.ts';
import type { LcmOperationState, VnfInstanceRecord, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { Transition, VnfLcmOpOccStore } from '#lib/store/op-occs.ts';
import type { VnfInstanceStore } from '#lib/store/vnf-instances.ts';
import type { VnfPackageRecord, VnfPackageStore } from '#lib/store/packages.ts';
import type { VimStore } from '#lib/store/vims.ts';
import type { SecretStore } from '#lib/secrets/vim-access.ts';
import { problemFromTaskFailure } from '../../../functions/steps/task-failure.ts';

const clone = <T>(value: T): T => structuredClone(value);
const CALLER: Caller = { tenantId: 't1', clientId: 'nfvo' };

class MemoryOpOccs implements VnfLcmOpOccStore {
  readonly records = new Map<string, VnfLcmOpOccRecord>();
  /** Answers the next get with this state instead of the stored one (a read that is already stale). */
  staleState?: LcmOperationState;
  async create(record: VnfLcmOpOccRecord): Promise<void> {
    this.records.set(record.id, clone(record));
  }
  async get(id: string): Promise<VnfLcmOpOccRecord | undefined> {
    const record = clone(this.records.get(id));
    if (record && this.staleState) {
      record.operationState = this.staleState;
      this.staleState = undefined;
    }
    return record;
  }
  async listPage(): Promise<never> {
    throw new Error('not used');
  }
  async transition(id: string, t: Transition): Promise<VnfLcmOpOccRecord | undefined> {
    const current = this.records.get(id);
    if (!current || !t.from.includes(current.operationState)) return undefined;
    const next: Record<string, unknown> = { ...current, ...clone(t.set ?? {}), operationState: t.to, stateEnteredTime: t.now, revision: current.revision + 1 };
    for (const key of t.remove ?? []) delete next[key];
    this.records.set(id, next as unknown as VnfLcmOpOccRecord);
    return clone(next as unknown as VnfLcmOpOccRecord);
  }
  async listInFlight(): Promise<never> {
    throw new Error('not used');
  }
}

class MemoryInstances {
  readonly records = new Map<string, VnfInstanceRecord>();
  async get(id: string): Promise<VnfInstanceRecord | undefined> {
    return clone(this.records.get(id));
  }
  async updateUnderLock(id: string, opOccId: string, update: { set: Record<string, unknown>; remove: string[] }): Promise<boolean> {
    const record = this.records.get(id);
    if (record?.lockOpOccId !== opOccId) return false;
    this.records.set(id, { ...record, ...clone(update.set) });
    return true;
  }
  async releaseLock(id: string, opOccId: string): Promise<void> {
    const record = this.records.get(id);
    if (record?.lockOpOccId !== opOccId) return;
    const { lockOpOccId: _held, lockedAt: _at, ...free } = record;
    this.records.set(id, free as VnfInstanceRecord);
  }
}

const PACKAGE = { id: 'pkg-1', tenantId: 't1', vnfdId: 'vnfd-1' } as VnfPackageRecord;
const PACKAGES: PackageAccess = {
  vnfdOf: async () => ({ vnfdId: 'vnfd-1' }) as ParsedVnfd,
  filesOf: () => ({}) as ReturnType<PackageAccess['filesOf']>,
};

function world(state: LcmOperationState, extra: Partial<VnfLcmOpOccRecord> = {}) {
  const opOccs = new MemoryOpOccs();
  const instances = new MemoryInstances();
  const stopped: Array<{ machine: string; name: string }> = [];
  let clock = 0;
  const deps: CoreDeps = {
    instances: instances as unknown as VnfInstanceStore,
    opOccs,
    packages: { get: async () => PACKAGE } as unknown as VnfPackageStore,
    vims: {} as VimStore,
    secrets: { remove: async () => {} } as unknown as SecretStore,
    executor: {
      start: async () => {},
      status: async () => 'ABORTED',
      stop: async (machine, name) => {
        stopped.push({ machine, name });
      },
    },
    now: () => new Date(Date.UTC(2026, 11, 1, 0, 0, ++clock)).toISOString(),
    newId: () => 'unused',
  };
  instances.records.set('vnf-1', {
    id: 'vnf-1',
    tenantId: 't1',
    createdAt: '2026-12-01T00:00:00Z',
    createdSeq: '2026-12-01T00:00:00Z#vnf-1',
    vnfdId: 'vnfd-1',
    vnfPkgId: 'pkg-1',
    vnfProvider: 'p',
    vnfProductName: 'n',
    vnfSoftwareVersion: '1',
    vnfdVersion: '1',
    instantiationState: 'NOT_INSTANTIATED',
    lockOpOccId: 'occ-1',
    lockedAt: '2026-12-01T00:00:00Z',
    revision: 1,
  });
  opOccs.records.set('occ-1', {
    id: 'occ-1',
    tenantId: 't1',
    vnfInstanceId: 'vnf-1',
    operation: 'INSTANTIATE',
    operationState: state,
    stateEnteredTime: '2026-12-01T00:00:00Z',
    startTime: '2026-12-01T00:00:00Z',
    startSeq: '2026-12-01T00:00:00Z#occ-1',
    isAutomaticInvocation: false,
    isCancelPending: false,
    apiMajorVersion: 2,
    execution: { machine: 'INSTANTIATE', name: 'occ-1-retry-2' },
    revision: 1,
    ...extra,
  });
  const occ = () => opOccs.records.get('occ-1') as VnfLcmOpOccRecord;
  const lock = () => instances.records.get('vnf-1')?.lockOpOccId;
  return { deps, opOccs, instances, stopped, occ, lock };
}

describe('cancel', () => {
  it('moves a STARTING op occ to ROLLED_BACK, releases the lock and stops the execution, in either mode', async () => {
    for (const mode of ['GRACEFUL', 'FORCEFUL'] as const) {
      const w = world('STARTING');
      const result = await cancelOperation(w.deps, CALLER, 'occ-1', mode);
      assert.equal(result.operationState, 'ROLLED_BACK');
      assert.equal(w.occ().operationState, 'ROLLED_BACK');
      assert.equal(w.occ().isCancelPending, false);
      assert.equal(w.occ().error?.title, 'Operation cancelled');
      assert.match(w.occ().error?.detail ?? '', new RegExp(`${mode}.*STARTING`));
      assert.equal(w.lock(), undefined, 'the instance is free');
      assert.deepEqual(w.stopped, [{ machine: 'INSTANTIATE', name: 'occ-1-retry-2' }]);
    }
  });

  it('marks a PROCESSING or ROLLING_BACK op occ GRACEFUL-pending without stopping anything', async () => {
    for (const state of ['PROCESSING', 'ROLLING_BACK'] as const) {
      const w = world(state);
      await cancelOperation(w.deps, CALLER, 'occ-1', 'GRACEFUL');
      assert.equal(w.occ().operationState, state);
      assert.equal(w.occ().isCancelPending, true);
      assert.equal(w.occ().cancelMode, 'GRACEFUL');
      assert.equal(w.occ().stateEnteredTime, '2026-12-01T00:00:00Z', 'the state was not entered anew');
      assert.deepEqual(w.stopped, []);
      assert.equal(w.lock(), 'occ-1');
      // Asked again, it stays as it is.
      await cancelOperation(w.deps, CALLER, 'occ-1', 'GRACEFUL');
      assert.equal(w.occ().cancelMode, 'GRACEFUL');
    }
  });

  it('stops the execution of a FORCEFUL cancel and moves the op occ to FAILED_TEMP, the lock kept for retry or rollback', async () => {
    for (const state of ['PROCESSING', 'ROLLING_BACK'] as const) {
      const w = world(state);
      const result = await cancelOperation(w.deps, CALLER, 'occ-1', 'FORCEFUL');
      assert.equal(result.operationState, 'FAILED_TEMP');
      assert.equal(w.occ().operationState, 'FAILED_TEMP');
      assert.equal(w.occ().isCancelPending, false);
      assert.equal('cancelMode' in w.occ(), false);
      assert.match(w.occ().error?.detail ?? '', new RegExp(`FORCEFUL.*${state}`));
      assert.equal(w.stopped.length, 1);
      assert.equal(w.lock(), 'occ-1');
    }
  });

  it('turns a pending GRACEFUL cancel FORCEFUL when asked, never the other way', async () => {
    const w = world('PROCESSING');
    await cancelOperation(w.deps, CALLER, 'occ-1', 'GRACEFUL');
    await cancelOperation(w.deps, CALLER, 'occ-1', 'FORCEFUL');
    assert.equal(w.occ().operationState, 'FAILED_TEMP');
    assert.equal(w.stopped.length, 1);

    const pendingForceful = world('PROCESSING', { isCancelPending: true, cancelMode: 'FORCEFUL' });
    await cancelOperation(pendingForceful.deps, CALLER, 'occ-1', 'GRACEFUL');
    assert.equal(pendingForceful.occ().cancelMode, 'FORCEFUL');
  });

  it('ends as the cancel says when the stopped execution is recovered before the cancel moves the op occ', async () => {
    const w = world('PROCESSING');
    // The execution-ended event comes before StopExecution has answered.
    w.deps.executor.stop = async (_machine, name) => {
      assert.match(await recoverDeadExecution(w.deps, { name, status: 'ABORTED', input: JSON.stringify({ opOccId: 'occ-1' }) }), /cancelled from PROCESSING/);
    };
    const result = await cancelOperation(w.deps, CALLER, 'occ-1', 'FORCEFUL');
    assert.equal(result.operationState, 'FAILED_TEMP');
    assert.equal(w.occ().error?.title, 'Operation cancelled');
    assert.equal(w.occ().revision, 3, 'moved once: the pending cancel, then FAILED_TEMP');
    // A later event or sweep of the same execution changes nothing.
    assert.match(
      await recoverDeadExecution(w.deps, { name: 'occ-1-retry-2', status: 'ABORTED', input: JSON.stringify({ opOccId: 'occ-1' }) }),
      /nothing to recover/,
    );
    assert.equal(w.occ().revision, 3);
  });

  it('cancels what the op occ has become when its execution moved it on from STARTING meanwhile', async () => {
    const w = world('PROCESSING');
    w.opOccs.staleState = 'STARTING';
    await cancelOperation(w.deps, CALLER, 'occ-1', 'GRACEFUL');
    assert.equal(w.occ().operationState, 'PROCESSING');
    assert.equal(w.occ().isCancelPending, true);
  });

  it('refuses with 409 an op occ no longer in progress, and with 404 one of another tenant', async () => {
    for (const state of ['COMPLETED', 'FAILED_TEMP', 'FAILED', 'ROLLED_BACK'] as const) {
      const w = world(state);
      await assert.rejects(cancelOperation(w.deps, CALLER, 'occ-1', 'FORCEFUL'), (error: Error & { status?: number }) => error.status === 409);
      assert.equal(w.occ().revision, 1);
      assert.deepEqual(w.stopped, []);
    }
    const w = world('PROCESSING');
    await assert.rejects(cancelOperation(w.deps, { tenantId: 't2' }, 'occ-1', 'FORCEFUL'), (error: Error & { status?: number }) => error.status === 404);
    assert.equal(w.occ().isCancelPending, false);
  });
});

describe('a pending cancel in the steps and the recovery', () => {
  it('refuses to start any further step, and records the cancel as FAILED_TEMP through the task failure', async () => {
    const w = world('ROLLING_BACK', { operation: 'MODIFY_INFO', isCancelPending: true, cancelMode: 'GRACEFUL' });
    for (const action of ['rollback-start', 'rollback-finish'] as const) {
      await assert.rejects(runStep(w.deps, 'occ-1', action, 0, PACKAGES), (error: Error) => error.name === CANCELLED);
    }
    // A poll whose work is done ends the operation too.
    await assert.rejects(runStep(w.deps, 'occ-1', 'rollback-poll', 0, PACKAGES), (error: Error) => error.name === CANCELLED);
    const problem = problemFromTaskFailure({
      Error: CANCELLED,
      Cause: JSON.stringify({ errorType: CANCELLED, errorMessage: 'The operation was cancelled (GRACEFUL)' }),
    });
    assert.deepEqual(problem, { title: 'Operation cancelled', status: 409, detail: 'The operation was cancelled (GRACEFUL)' });
    // Without a pending cancel the same steps run.
    const free = world('ROLLING_BACK', { operation: 'MODIFY_INFO' });
    assert.equal((await runStep(free.deps, 'occ-1', 'rollback-start', 0, PACKAGES)).status, 'DONE');
  });

  it('ends a pending cancel whose execution died as the cancel, and an execution that died without one as interrupted', async () => {
    const pending = world('PROCESSING', { isCancelPending: true, cancelMode: 'GRACEFUL' });
    await recoverDeadExecution(pending.deps, { name: 'occ-1-retry-2', status: 'FAILED', input: JSON.stringify({ opOccId: 'occ-1' }) });
    assert.equal(pending.occ().operationState, 'FAILED_TEMP');
    assert.equal(pending.occ().error?.title, 'Operation cancelled');
    assert.equal(pending.occ().isCancelPending, false);
    assert.equal('cancelMode' in pending.occ(), false);

    const plain = world('PROCESSING');
    await recoverDeadExecution(plain.deps, { name: 'occ-1-retry-2', status: 'FAILED', input: JSON.stringify({ opOccId: 'occ-1' }) });
    assert.equal(plain.occ().operationState, 'FAILED_TEMP');
    assert.equal(plain.occ().error?.title, 'Operation interrupted');
  });

  it('keeps a step that runs on after a FORCEFUL cancel from writing the instance', async () => {
    const w = world('PROCESSING');
    const loaded = { opOcc: clone(w.occ()), instance: clone(w.instances.records.get('vnf-1')) } as Loaded;
    await cancelOperation(w.deps, CALLER, 'occ-1', 'FORCEFUL');
    await assert.rejects(saveInstance(w.deps, loaded, { instantiationState: 'INSTANTIATED' }), /is FAILED_TEMP; the step no longer writes/);
    assert.equal(w.instances.records.get('vnf-1')?.instantiationState, 'NOT_INSTANTIATED');
    // While the op occ is as the step read it, the step writes.
    const running = world('PROCESSING');
    await saveInstance(running.deps, { opOcc: clone(running.occ()), instance: clone(running.instances.records.get('vnf-1')) } as Loaded, {
      instantiationState: 'INSTANTIATED',
    });
    assert.equal(running.instances.records.get('vnf-1')?.instantiationState, 'INSTANTIATED');
  });
});

// The LCM step engine with in-memory stores, a fake VIM driver and a fake package: operations
// driven step by step through runStep as their state machines would, asserting the op occ's and
// the instance's records after each, and that each operation answers only its own steps.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runStep, type StepAction, type StepResult } from '#lib/lcm/engine/run.ts';
import { runChain } from '#lib/lcm/engine/chain.ts';
import { finishOperation, startOperation } from '#lib/lcm/operations.ts';
import type { PackageAccess } from '#lib/packages/access.ts';
import type { FlavourInfo, ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import type { CoreDeps } from '#lib/ports.ts';
import type { LcmOperationState, LcmOperationType, VimReference, VnfInstanceRecord, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { Transition, VnfLcmOpOccStore } from '#lib/store/op-occs.ts';
import type { InstanceUpdate, LockRequest, VnfInstanceStore } from '#lib/store/vnf-instances.ts';
import type { VnfPackageRecord, VnfPackageStore } from '#lib/store/packages.ts';
import type { VimStore } from '#lib/store/vims.ts';
import type { SecretStore } from '#lib/secrets/vim-access.ts';
import type { CollectedResources, DriverState, FaultWording, InfraDriver, Progress, UpdateChange, VimCredentials } from '#lib/vim/driver.ts';
import { OPENSTACK_VIM, registerDriver } from '#lib/vim/registry.ts';

// The fake takes the OpenStack type's place in the registry: the engine asks the registry by type.
const FAKE_VIM = OPENSTACK_VIM;
const VIM: VimReference = {
  connectionId: 'vim-1',
  vimId: 'vim-1',
  vimType: FAKE_VIM,
  interfaceInfo: { endpoint: 'http://fake' },
  accessSecret: 'secret-vim-1',
};

const FLAVOUR = {
  flavourId: 'simple',
  vdus: [{ id: 'VDU1', name: 'VDU1' }],
  storages: [],
  cps: [],
  extCps: [],
  virtualLinks: [{ id: 'VL1' }],
  scalingAspects: [{ id: 'worker', maxScaleLevel: 3 }],
  vduScalingAspectDeltas: [],
  instantiationLevels: { default: 'small', levels: { small: { scaleInfo: { worker: { scaleLevel: 0 } } } } },
  vduInstantiationLevels: {},
  vduInitialDeltas: {},
  affinityRules: [],
  lcmOperations: {},
  externalCps: [],
} as unknown as FlavourInfo;

const VNFD: ParsedVnfd = {
  vnfdId: 'vnfd-1',
  vnfProvider: 'p',
  vnfProductName: 'n',
  vnfSoftwareVersion: '1',
  vnfdVersion: '1',
  descriptorFiles: [],
  flavours: [FLAVOUR],
  softwareImages: [],
  artifactFiles: [],
};

const PACKAGES: PackageAccess = {
  vnfdOf: async () => VNFD,
  filesOf: () => ({
    read: async (path) => {
      throw new Error(`no file ${path} in the fake package`);
    },
    size: async () => 0,
    stream: async (path) => {
      throw new Error(`no file ${path} in the fake package`);
    },
    list: async () => [],
    artifacts: async () => [],
  }),
};

const vnfc = (n: number) => ({
  id: `vnfc-${n}`,
  vduId: 'VDU1',
  computeResource: { resourceId: `server-${n}` },
  metadata: { creation_time: `2026-12-01T00:00:0${n}Z` },
});
const resources = (servers: number): CollectedResources => ({
  vnfcResourceInfo: Array.from({ length: servers }, (_, i) => vnfc(i + 1)),
  vnfVirtualLinkResourceInfo: [{ id: 'vl-1', vnfVirtualLinkDescId: 'VL1', networkResource: { resourceId: 'net-1' } }],
  virtualStorageResourceInfo: [],
  extCpInfo: [],
});

/**
 * A VIM in memory: work started is done after `pollsUntilDone` polls; `failNextPoll` makes the next
 * poll report FAILED. The driver state says what is on the VIM (the number of servers).
 */
class FakeVim implements InfraDriver {
  // The engine never asks a driver for its credential schema or fault wording.
  readonly credentials = {} as VimCredentials;
  faultWording(): FaultWording {
    throw new Error('not used by the engine');
  }
  calls: string[] = [];
  pollsUntilDone = 2;
  failNextPoll?: string;
  private pollsLeft = 0;

  private poll(name: string, state: DriverState): Progress {
    this.calls.push(name);
    if (this.failNextPoll) {
      const reason = this.failNextPoll;
      this.failNextPoll = undefined;
      return { status: 'FAILED', state: { ...state, failed: true }, reason };
    }
    this.pollsLeft--;
    return this.pollsLeft > 0 ? { status: 'IN_PROGRESS', state } : { status: 'DONE', state: { ...state, settled: true } };
  }

  private begin(name: string, state: DriverState): DriverState {
    this.calls.push(name);
    this.pollsLeft = this.pollsUntilDone;
    return state;
  }

  async health(): Promise<never> {
    throw new Error('not used');
  }
  async measure(): Promise<never> {
    throw new Error('not used');
  }
  async verify(): Promise<void> {}
  async instantiateStart(): Promise<DriverState> {
    return this.begin('instantiateStart', { stack: 'stack-1', servers: 1 });
  }
  async instantiatePoll(_ctx: unknown, state: DriverState): Promise<Progress> {
    return this.poll('instantiatePoll', state);
  }
  async collect(_ctx: unknown, state: DriverState): Promise<CollectedResources> {
    return resources(Number(state.servers ?? 0));
  }
  async terminateStart(_ctx: unknown, state: DriverState): Promise<DriverState> {
    return this.begin('terminateStart', { ...state, servers: 0 });
  }
  async terminatePoll(_ctx: unknown, state: DriverState): Promise<Progress> {
    return this.poll('terminatePoll', state);
  }
  async updateStart(_ctx: unknown, state: DriverState, change: UpdateChange): Promise<DriverState> {
    return this.begin(`updateStart ${change.kind}`, { ...state, servers: change.kind === 'SCALE' ? change.targets.VDU1 : state.servers });
  }
  async updatePoll(_ctx: unknown, state: DriverState, change: UpdateChange): Promise<Progress> {
    return this.poll(`updatePoll ${change.kind}`, state);
  }
  async changeStart(): Promise<never> {
    throw new Error('not used');
  }
  async changePoll(): Promise<never> {
    throw new Error('not used');
  }
  async changeRollbackStart(): Promise<never> {
    throw new Error('not used');
  }
  async changeRollbackPoll(): Promise<never> {
    throw new Error('not used');
  }
}

const clone = <T>(value: T): T => structuredClone(value);

class MemoryOpOccs implements VnfLcmOpOccStore {
  readonly records = new Map<string, VnfLcmOpOccRecord>();
  async create(record: VnfLcmOpOccRecord): Promise<void> {
    if (this.records.has(record.id)) throw new Error(`op occ ${record.id} exists`);
    this.records.set(record.id, clone(record));
  }
  async get(id: string): Promise<VnfLcmOpOccRecord | undefined> {
    return clone(this.records.get(id));
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
  async listInFlight(): Promise<VnfLcmOpOccRecord[]> {
    return [...this.records.values()].filter((r) => ['STARTING', 'PROCESSING', 'ROLLING_BACK'].includes(r.operationState)).map(clone);
  }
}

class MemoryInstances implements VnfInstanceStore {
  readonly records = new Map<string, VnfInstanceRecord>();
  async create(record: VnfInstanceRecord, first?: () => Promise<void>): Promise<void> {
    await first?.();
    this.records.set(record.id, clone(record));
  }
  async get(id: string): Promise<VnfInstanceRecord | undefined> {
    return clone(this.records.get(id));
  }
  async listPage(): Promise<never> {
    throw new Error('not used');
  }
  async acquireLock(id: string, lock: LockRequest): Promise<boolean> {
    const record = this.records.get(id);
    if (!record || (record.lockOpOccId && record.lockOpOccId !== lock.takeOverFrom)) return false;
    if (lock.requireState && record.instantiationState !== lock.requireState) return false;
    this.records.set(id, { ...record, lockOpOccId: lock.opOccId, lockedAt: lock.now });
    return true;
  }
  async releaseLock(id: string, opOccId: string): Promise<void> {
    const record = this.records.get(id);
    if (record?.lockOpOccId !== opOccId) return;
    const { lockOpOccId: _held, lockedAt: _at, ...free } = record;
    this.records.set(id, free as VnfInstanceRecord);
  }
  async updateUnderLock(id: string, opOccId: string, update: InstanceUpdate): Promise<boolean> {
    const record = this.records.get(id);
    if (record?.lockOpOccId !== opOccId) return false;
    const next: Record<string, unknown> = { ...record, ...clone(update.set), revision: record.revision + 1 };
    for (const key of update.remove) delete next[key];
    this.records.set(id, next as unknown as VnfInstanceRecord);
    return true;
  }
  async deleteIdle(): Promise<never> {
    throw new Error('not used');
  }
}

const PACKAGE: VnfPackageRecord = {
  id: 'pkg-1',
  tenantId: 't1',
  createdAt: '2026-12-01T00:00:00Z',
  onboardingState: 'ONBOARDED',
  operationalState: 'ENABLED',
  usageState: 'IN_USE',
  vnfdId: 'vnfd-1',
  revision: 1,
};

function world() {
  const opOccs = new MemoryOpOccs();
  const instances = new MemoryInstances();
  const driver = new FakeVim();
  const started: Array<{ machine: string; name: string }> = [];
  let clock = 0;
  let ids = 0;
  const deps: CoreDeps = {
    instances,
    opOccs,
    packages: { get: async (id: string) => (id === PACKAGE.id ? clone(PACKAGE) : undefined) } as unknown as VnfPackageStore,
    vims: { get: async () => undefined, listForTenant: async () => [] } as unknown as VimStore,
    secrets: { read: async (id: string) => ({ secretOf: id }) } as unknown as SecretStore,
    executor: {
      start: async (machine, name) => {
        started.push({ machine, name });
      },
      status: async () => 'RUNNING',
      stop: async () => {},
    },
    now: () => new Date(Date.UTC(2026, 11, 1, 0, 0, clock++)).toISOString(),
    newId: () => `id-${++ids}`,
  };
  return { deps, opOccs, instances, driver, started };
}

type World = ReturnType<typeof world>;

async function newInstance(w: World): Promise<string> {
  await w.instances.create({
    id: 'vnf-1',
    tenantId: 't1',
    createdAt: '2026-12-01T00:00:00Z',
    createdSeq: '2026-12-01T00:00:00Z#vnf-1',
    vnfdId: 'vnfd-1',
    vnfPkgId: PACKAGE.id,
    vnfProvider: 'p',
    vnfProductName: 'n',
    vnfSoftwareVersion: '1',
    vnfdVersion: '1',
    instantiationState: 'NOT_INSTANTIATED',
    revision: 1,
  });
  return 'vnf-1';
}

/** Starts an operation as its request would (lock, op occ STARTING, machine started) and moves it to PROCESSING as the machine's first task does. */
async function begin(
  w: World,
  operation: LcmOperationType,
  operationParams: Record<string, unknown>,
  internal: Pick<VnfLcmOpOccRecord, 'vim' | 'change'>,
): Promise<string> {
  const occ = await startOperation(w.deps, {
    tenantId: 't1',
    vnfInstanceId: 'vnf-1',
    operation,
    operationParams,
    apiMajorVersion: 2,
    requireState: operation === 'INSTANTIATE' ? 'NOT_INSTANTIATED' : 'INSTANTIATED',
    internal,
  });
  await finishOperation(w.deps, occ.id, 'PROCESSING');
  return occ.id;
}

/**
 * Runs a phase as the machine's tasks do: the start step, the poll step (Wait/Poll/Choice loop)
 * until DONE, the finish step, then the op occ's end state when the phase ends the operation.
 */
async function runPhase(
  w: World,
  opOccId: string,
  [startAction, pollAction, finishAction]: [StepAction, StepAction, StepAction],
  end?: LcmOperationState,
): Promise<void> {
  let step = await runStep(w.deps, opOccId, startAction, 0, PACKAGES);
  for (let polls = 0; step.status !== 'DONE'; polls++) {
    assert.ok(polls < 10, 'the fake VIM finishes within 10 polls');
    step = await runStep(w.deps, opOccId, pollAction, step.polls ?? 0, PACKAGES);
  }
  await runStep(w.deps, opOccId, finishAction, 0, PACKAGES);
  if (end) await finishOperation(w.deps, opOccId, end);
}

async function instantiate(w: World): Promise<string> {
  await newInstance(w);
  const id = await begin(w, 'INSTANTIATE', { flavourId: 'simple' }, { vim: VIM });
  await runStep(w.deps, id, 'grant', 0, PACKAGES);
  await runPhase(w, id, ['instantiate-start', 'instantiate-poll', 'instantiate-finish'], 'COMPLETED');
  return id;
}

describe('the LCM step engine', () => {
  // Without an NFVO the VNFM grants itself.
  before(() => {
    delete process.env.GRANT_ENDPOINT;
  });

  it('drives an INSTANTIATE through its steps: grant, driver start and polls, instantiatedVnfInfo, COMPLETED', async () => {
    const w = world();
    registerDriver(FAKE_VIM, w.driver);
    const id = await instantiate(w);

    assert.deepEqual(w.started, [{ machine: 'INSTANTIATE', name: id }]);
    assert.deepEqual(w.driver.calls, ['instantiateStart', 'instantiatePoll', 'instantiatePoll']);
    const occ = w.opOccs.records.get(id)!;
    assert.equal(occ.operationState, 'COMPLETED');
    assert.equal((occ.grant as { local?: boolean }).local, true, 'without an NFVO the VNFM grants itself');
    assert.deepEqual(occ.driverState, { stack: 'stack-1', servers: 1, settled: true });
    const changes = occ.resourceChanges as { affectedVnfcs: Array<{ id: string; changeType: string }>; affectedVirtualLinks: Array<{ changeType: string }> };
    assert.deepEqual(
      changes.affectedVnfcs.map((c) => [c.id, c.changeType]),
      [['vnfc-1', 'ADDED']],
    );
    assert.deepEqual(
      changes.affectedVirtualLinks.map((c) => c.changeType),
      ['ADDED'],
    );

    const instance = w.instances.records.get('vnf-1')!;
    assert.equal(instance.instantiationState, 'INSTANTIATED');
    assert.equal(instance.lockOpOccId, undefined, 'COMPLETED releases the lock');
    assert.equal(instance.instantiatedVnfInfo?.flavourId, 'simple');
    assert.deepEqual(instance.instantiatedVnfInfo?.scaleStatus, [{ aspectId: 'worker', scaleLevel: 0 }]);
    assert.deepEqual(instance.vimResources, {
      vim: VIM,
      driverState: { stack: 'stack-1', servers: 1, settled: true },
      instantiateRequest: { flavourId: 'simple' },
    });
    assert.deepEqual(instance.vimConnectionInfo, { 'vim-1': { vimId: 'vim-1', vimType: FAKE_VIM, interfaceInfo: { endpoint: 'http://fake' } } });
  });

  it('drives a TERMINATE: the driver removes what the instance has, the instance is NOT_INSTANTIATED again', async () => {
    const w = world();
    registerDriver(FAKE_VIM, w.driver);
    await instantiate(w);
    w.driver.calls = [];
    const id = await begin(w, 'TERMINATE', { terminationType: 'FORCEFUL' }, { vim: VIM });
    await runStep(w.deps, id, 'grant', 0, PACKAGES);
    await runPhase(w, id, ['terminate-start', 'terminate-poll', 'terminate-finish'], 'COMPLETED');

    assert.deepEqual(w.driver.calls, ['terminateStart', 'terminatePoll', 'terminatePoll']);
    const occ = w.opOccs.records.get(id)!;
    assert.equal(occ.operationState, 'COMPLETED');
    assert.deepEqual(
      (occ.grantRequest as { removeResources: Array<{ id: string }> }).removeResources.map((r) => r.id),
      ['VDU1-compute', 'VL1-vl'],
    );
    const changes = occ.resourceChanges as { affectedVnfcs: Array<{ id: string; changeType: string }> };
    assert.deepEqual(
      changes.affectedVnfcs.map((c) => [c.id, c.changeType]),
      [['vnfc-1', 'REMOVED']],
    );
    const instance = w.instances.records.get('vnf-1')!;
    assert.equal(instance.instantiationState, 'NOT_INSTANTIATED');
    assert.equal(instance.instantiatedVnfInfo, undefined);
    assert.equal(instance.vimResources, undefined);
    assert.equal(instance.lockOpOccId, undefined);
  });

  it('drives a SCALE out through the update steps and records the new scale level and the added VNFC', async () => {
    const w = world();
    registerDriver(FAKE_VIM, w.driver);
    await instantiate(w);
    w.driver.calls = [];
    const change = { kind: 'SCALE', scaleType: 'SCALE_OUT', aspectId: 'worker', steps: 1, targets: { VDU1: 2 }, remove: [] };
    const id = await begin(w, 'SCALE', { type: 'SCALE_OUT', aspectId: 'worker', numberOfSteps: 1 }, { vim: VIM, change });
    await runStep(w.deps, id, 'grant', 0, PACKAGES);
    await runPhase(w, id, ['update-start', 'update-poll', 'update-finish']);

    assert.deepEqual(w.driver.calls, ['updateStart SCALE', 'updatePoll SCALE', 'updatePoll SCALE']);
    const occ = w.opOccs.records.get(id)!;
    assert.deepEqual(
      (occ.grantRequest as { addResources: Array<{ id: string }> }).addResources.map((r) => r.id),
      ['VDU1-compute-1'],
    );
    const changes = occ.resourceChanges as { affectedVnfcs: Array<{ id: string; changeType: string }> };
    assert.deepEqual(
      changes.affectedVnfcs.map((c) => [c.id, c.changeType]),
      [['vnfc-2', 'ADDED']],
    );
    const instance = w.instances.records.get('vnf-1')!;
    assert.deepEqual(instance.instantiatedVnfInfo?.scaleStatus, [{ aspectId: 'worker', scaleLevel: 1 }]);
    assert.deepEqual(
      (instance.instantiatedVnfInfo!.vnfcResourceInfo as Array<{ id: string }>).map((v) => v.id),
      ['vnfc-1', 'vnfc-2'],
    );
    assert.equal(instance.vimResources?.driverState.servers, 2);
  });

  it("a failed VIM poll throws with the VIM's reason and keeps the driver state; rollback removes what the INSTANTIATE created", async () => {
    const w = world();
    registerDriver(FAKE_VIM, w.driver);
    await newInstance(w);
    const id = await begin(w, 'INSTANTIATE', { flavourId: 'simple' }, { vim: VIM });
    await runStep(w.deps, id, 'grant', 0, PACKAGES);
    await runStep(w.deps, id, 'instantiate-start', 0, PACKAGES);
    w.driver.failNextPoll = 'quota exceeded';
    await assert.rejects(
      runStep(w.deps, id, 'instantiate-poll', 0, PACKAGES),
      (error: Error) => error.name === 'VimOperationFailed' && error.message.includes('quota exceeded'),
    );
    assert.equal(w.opOccs.records.get(id)!.driverState?.failed, true);

    // What the machine's Catch and the NFVO's rollback request do.
    await finishOperation(w.deps, id, 'FAILED_TEMP', { error: { title: 'VimOperationFailed', status: 500, detail: 'quota exceeded' } });
    await finishOperation(w.deps, id, 'ROLLING_BACK');
    w.driver.calls = [];
    await runPhase(w, id, ['rollback-start', 'rollback-poll', 'rollback-finish'], 'ROLLED_BACK');

    assert.deepEqual(w.driver.calls, ['terminateStart', 'terminatePoll', 'terminatePoll']);
    const occ = w.opOccs.records.get(id)!;
    assert.equal(occ.operationState, 'ROLLED_BACK');
    assert.equal(occ.driverState, undefined, 'a rolled-back INSTANTIATE leaves no driver state');
    const instance = w.instances.records.get('vnf-1')!;
    assert.equal(instance.instantiationState, 'NOT_INSTANTIATED');
    assert.equal(instance.lockOpOccId, undefined);
  });

  it('chained as the machines run it: a grant decided at once, PROCESSING and the start in one task; the poll that finds the VIM done, the finish and COMPLETED in another', async () => {
    const w = world();
    registerDriver(FAKE_VIM, w.driver);
    await newInstance(w);
    const occ = await startOperation(w.deps, {
      tenantId: 't1',
      vnfInstanceId: 'vnf-1',
      operation: 'INSTANTIATE',
      operationParams: { flavourId: 'simple' },
      apiMajorVersion: 2,
      requireState: 'NOT_INSTANTIATED',
      internal: { vim: VIM },
    });
    const step = (action: StepAction, polls: number) => runStep(w.deps, occ.id, action, polls, PACKAGES);
    const started = await runChain(w.deps, { opOccId: occ.id, action: 'grant', thenStart: 'instantiate-start' }, () => step('grant', 0), step);
    assert.equal(started.started, true);
    assert.equal(started.status, 'IN_PROGRESS');
    assert.equal(w.opOccs.records.get(occ.id)?.operationState, 'PROCESSING');
    assert.deepEqual(w.driver.calls, ['instantiateStart']);
    const chain = { opOccId: occ.id, action: 'instantiate-poll' as const, thenFinish: 'instantiate-finish' as const, complete: true };
    let polled = await runChain(w.deps, chain, () => step('instantiate-poll', 0), step);
    assert.equal(polled.completed, undefined, 'still in progress: nothing chained');
    assert.equal(w.opOccs.records.get(occ.id)?.operationState, 'PROCESSING');
    polled = await runChain(w.deps, chain, () => step('instantiate-poll', polled.polls ?? 0), step);
    assert.equal(polled.completed, true);
    assert.equal(w.opOccs.records.get(occ.id)?.operationState, 'COMPLETED');
    assert.equal(w.instances.records.get('vnf-1')?.instantiationState, 'INSTANTIATED');
    assert.equal(w.instances.records.get('vnf-1')?.lockOpOccId, undefined, 'COMPLETED releases the lock');
  });

  it('chains nothing past a grant still pending or a start that must wait, and hands a COMPLETED it cannot record to the transition task', async () => {
    const w = world();
    registerDriver(FAKE_VIM, w.driver);
    const pending = { status: 'IN_PROGRESS' as const, waitUntil: new Date().toISOString(), waitSeconds: 5 };
    const never = async (): Promise<StepResult> => assert.fail('no step may run after a pending grant');
    assert.deepEqual(await runChain(w.deps, { opOccId: 'x', action: 'grant', thenStart: 'terminate-start' }, async () => pending, never), pending);
    const granted = { status: 'DONE' as const, waitUntil: new Date().toISOString() };
    assert.deepEqual(
      await runChain(w.deps, { opOccId: 'x', action: 'grant', thenStart: 'terminate-start', startAfterSeconds: 30 }, async () => granted, never),
      granted,
      'a graceful termination waits between PROCESSING and its start',
    );
    const id = await instantiate(w);
    const id2 = await begin(w, 'OPERATE', { changeStateTo: 'STOPPED' }, { vim: VIM });
    const transition = w.deps.opOccs.transition.bind(w.deps.opOccs);
    w.deps.opOccs.transition = async (opOccId, t) => {
      if (t.to === 'COMPLETED') throw new Error('ProvisionedThroughputExceededException');
      return transition(opOccId, t);
    };
    await assert.rejects(
      runChain(w.deps, { opOccId: id2, action: 'update-finish', complete: true }, async () => granted, never),
      (error: Error) => error.name === 'CompletionPending' && /ProvisionedThroughputExceeded/.test(error.message),
    );
    assert.equal(w.opOccs.records.get(id2)?.operationState, 'PROCESSING', 'left for the Complete task, not failed');
    assert.equal(w.opOccs.records.get(id)?.operationState, 'COMPLETED');
  });

  it('an operation answers only the steps of its own table', async () => {
    const w = world();
    registerDriver(FAKE_VIM, w.driver);
    await instantiate(w);
    const id = await begin(w, 'TERMINATE', {}, { vim: VIM });
    await assert.rejects(runStep(w.deps, id, 'rollback-start', 0, PACKAGES), /TERMINATE, which has no step "rollback-start"/);
    await assert.rejects(runStep(w.deps, id, 'instantiate-start', 0, PACKAGES), /has no step "instantiate-start"/);
    assert.deepEqual(
      w.driver.calls.filter((call) => call.startsWith('terminate')),
      [],
      'nothing reached the VIM',
    );
  });
});

// INSTANTIATE and TERMINATE (SOL003 5.4.4, 5.4.8) and the op-occ tasks retry, rollback and fail
// (5.4.14-5.4.16): the requests, checked and recorded before 202, and the steps the state
// machines run. Steps are idempotent and never wait: the machines poll the VIM with Wait states.
import { isDeepStrictEqual } from 'node:util';
import { BadRequestError, ConflictError, NotFoundError, ProblemError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { ApiMajorVersion, OperationExecution, VimReference, VnfInstanceRecord, VnfLcmOpOccRecord } from '#lib/sol/model.ts';
import type { InstantiateVnfRequest, TerminateVnfRequest } from '#lib/sol/requests.ts';
import type { VnfPackageRecord } from '#lib/store/packages.ts';
import type { FlavourInfo, ParsedVnfd } from '#lib/packages/vnfd/model.ts';
import { PARSED_VNFD_FILE } from '#lib/packages/onboarding.ts';
import { contentKey, getJson, getStream, onboardedKey } from '#lib/packages/storage.ts';
import { packageIndex, readFile } from '#lib/packages/content.ts';
import { driverFor, type CollectedResources, type DriverState, type OperationContext, type PackageChange, type PackageFiles, type Progress, type UpdateChange, type VimConnection } from '#lib/vim/driver.ts';
import { flavourOf } from '#lib/vim/flavour.ts';
import { log } from '#lib/log.ts';
import { assertReachable } from '#lib/vims/model.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { finishOperation, startOperation } from './operations.ts';
import { getVnfInstance } from './vnf-instances.ts';
import { canSee, type Caller } from '#lib/auth/tenancy.ts';
import { getOpOcc } from './op-occs.ts';
import { grantFor } from './grant.ts';
import { ageOrdered, resourceDiff, reverseScale, scaledStatus } from './scale-heal.ts';
import { runHook } from './scripts.ts';
import { changedAttributes, coordinate, instantiateRequestAfter, scriptRequest, type ChangePlan } from './change-package.ts';

export const OPENSTACK_VIM = 'ETSINFV.OPENSTACK_KEYSTONE.V_3';
export const KUBERNETES_VIM = 'ETSINFV.KUBERNETES.V_1';

/** A VIM refused or failed the work; the op occ's error carries the VIM's own reason. */
export class VimOperationFailed extends ProblemError {
  constructor(reason: string) {
    super(500, 'VIM operation failed', reason);
    this.name = 'VimOperationFailed';
  }
}

const vnfdCache = new Map<string, Promise<ParsedVnfd>>();

/** The VNFD as onboarding parsed it (never re-parsed per operation). */
export function parsedVnfd(packageId: string): Promise<ParsedVnfd> {
  let vnfd = vnfdCache.get(packageId);
  if (!vnfd) {
    vnfd = getJson<ParsedVnfd>(onboardedKey(packageId, PARSED_VNFD_FILE));
    vnfd.catch(() => vnfdCache.delete(packageId));
    if (vnfdCache.size > 200) vnfdCache.clear();
    vnfdCache.set(packageId, vnfd);
  }
  return vnfd;
}

export function packageFiles(pkg: VnfPackageRecord): PackageFiles {
  const fileOf = async (path: string) => {
    const file = (await packageIndex(pkg)).files[path];
    if (!file) throw new NotFoundError(`VNF package ${pkg.id} has no file "${path}"`);
    return file;
  };
  return {
    read: (path) => readFile(pkg, path),
    size: async (path) => (await fileOf(path)).size,
    stream: async (path) => {
      const file = await fileOf(path);
      if ('key' in file) return getStream(file.key);
      return getStream(contentKey(pkg.id), file.size === 0 ? undefined : { start: file.csarOffset, end: file.csarOffset + file.size - 1 });
    },
    list: async () => Object.keys((await packageIndex(pkg)).files),
    artifacts: async () => (pkg.additionalArtifacts ?? []).flatMap((artifact) => (typeof artifact.artifactPath === 'string' ? [artifact.artifactPath] : [])),
  };
}

/** Which kind of VIM a package needs: Kubernetes when it brings manifests for the operation, else OpenStack. */
function vimTypeFor(request: { additionalParams?: Record<string, unknown> }): string {
  return request.additionalParams?.['lcm-kubernetes-def-files'] ? KUBERNETES_VIM : OPENSTACK_VIM;
}

/** Kubernetes manifests named by a request (INSTANTIATE, CHANGE_VNFPKG) must be artifacts the package declares (with checksums). */
export function checkDefinitionFiles(pkg: VnfPackageRecord, files: unknown): string[] | undefined {
  if (files === undefined) return undefined;
  if (!Array.isArray(files) || files.length === 0 || !files.every((file) => typeof file === 'string' && file.length > 0)) {
    throw new BadRequestError('additionalParams.lcm-kubernetes-def-files must be a non-empty list of paths in the VNF package');
  }
  const declared = new Set((pkg.additionalArtifacts ?? []).map((artifact) => artifact.artifactPath));
  const unknown = files.filter((file) => !declared.has(file));
  if (unknown.length) {
    throw new UnprocessableEntityError(`additionalParams.lcm-kubernetes-def-files names ${unknown.join(', ')}, which VNF package ${pkg.id} does not declare as an artifact (in its manifest or TOSCA.meta)`);
  }
  return files as string[];
}

function sameVimType(a: string, b: string): boolean {
  const norm = (t: string) => t.toUpperCase().replace(/\.V_2$/, '.V_3');
  return norm(a) === norm(b) || (a.toLowerCase() === 'openstack' && norm(b) === OPENSTACK_VIM);
}

/**
 * The VIM an INSTANTIATE works on: a connection in the request (its credentials go to the secret
 * store), a connection the instance already has, a registered VIM named by vimId, or the default
 * VIM of the type the package needs.
 */
async function chooseVim(deps: CoreDeps, caller: Caller, instance: VnfInstanceRecord, request: InstantiateVnfRequest, vimType: string, pending: Record<string, string>, scope: string): Promise<VimReference> {
  const candidates = Object.entries(request.vimConnectionInfo ?? {}).filter(([, c]) => sameVimType(c.vimType, vimType));
  for (const [connectionId, connection] of candidates) {
    if (connection.accessInfo && connection.interfaceInfo) {
      pending[connectionId] = await deps.secrets.create(`vnf-instances/${instance.id}/${scope}/${connectionId}`, connection.accessInfo);
      return { connectionId, vimId: connection.vimId ?? connectionId, vimType: connection.vimType, interfaceInfo: connection.interfaceInfo, accessSecret: pending[connectionId], extra: connection.extra };
    }
    if (connection.vimId) return registeredVim(deps, caller, connection.vimId, connectionId);
  }
  for (const [connectionId, connection] of Object.entries(instance.vimConnectionInfo ?? {})) {
    const secret = instance.vimAccessSecrets?.[connectionId];
    if (!sameVimType(connection.vimType, vimType)) continue;
    if (secret && connection.interfaceInfo) return { connectionId, vimId: connection.vimId ?? connectionId, vimType: connection.vimType, interfaceInfo: connection.interfaceInfo, accessSecret: secret, extra: connection.extra };
    if (connection.vimId) return registeredVim(deps, caller, connection.vimId, connectionId);
  }
  const defaults = (await deps.vims.listForTenant(caller.tenantId)).filter((v) => v.isDefault && sameVimType(v.vimType, vimType));
  const vim = defaults[0];
  if (!vim) throw new UnprocessableEntityError(`No VIM of type ${vimType} is given in vimConnectionInfo and none is registered as the default`);
  assertReachable(vim);
  return { connectionId: vim.id, vimId: vim.id, vimType: vim.vimType, interfaceInfo: vim.interfaceInfo, accessSecret: vim.accessSecret, extra: vim.extra };
}

async function registeredVim(deps: CoreDeps, caller: Caller, vimId: string, connectionId: string): Promise<VimReference> {
  const vim = await deps.vims.get(vimId);
  if (!vim || !canSee(caller, vim.tenantId)) throw new UnprocessableEntityError(`vimConnectionInfo.${connectionId} names VIM ${vimId}, which is not registered`);
  assertReachable(vim);
  return { connectionId, vimId: vim.id, vimType: vim.vimType, interfaceInfo: vim.interfaceInfo, accessSecret: vim.accessSecret, extra: vim.extra };
}

export async function requestInstantiate(deps: CoreDeps, caller: Caller, id: string, request: InstantiateVnfRequest, version: ApiMajorVersion): Promise<VnfLcmOpOccRecord> {
  const instance = await getVnfInstance(deps, caller, id);
  if (instance.instantiationState !== 'NOT_INSTANTIATED') throw new ConflictError(`VNF instance ${id} is already INSTANTIATED`);
  const pkg = await deps.packages.get(instance.vnfPkgId);
  if (!pkg || pkg.onboardingState !== 'ONBOARDED') throw new UnprocessableEntityError(`The VNF package of VNF instance ${id} is no longer onboarded`);
  const vnfd = await parsedVnfd(pkg.id);
  const flavour = flavourOf(vnfd, request.flavourId);
  if (request.instantiationLevelId && !flavour.instantiationLevels.levels[request.instantiationLevelId]) {
    throw new UnprocessableEntityError(`Deployment flavour ${request.flavourId} has no instantiation level "${request.instantiationLevelId}"`);
  }
  const vimType = vimTypeFor(request);
  // The API function checks against the list, not the driver registry: drivers load only in the step function.
  if (![OPENSTACK_VIM, KUBERNETES_VIM].includes(vimType)) throw new UnprocessableEntityError(`VIMs of type ${vimType} are not supported`);
  checkDefinitionFiles(pkg, request.additionalParams?.['lcm-kubernetes-def-files']);
  const pending: Record<string, string> = {};
  try {
    const vim = await chooseVim(deps, caller, instance, request, vimType, pending, deps.newId());
    // Credentials of other connections in the request are kept too, as MODIFY_INFO would.
    for (const [connectionId, connection] of Object.entries(request.vimConnectionInfo ?? {})) {
      if (pending[connectionId] || !connection.accessInfo) continue;
      pending[connectionId] = await deps.secrets.create(`vnf-instances/${id}/${deps.newId()}/${connectionId}`, connection.accessInfo);
    }
    return await startOperation(deps, {
      tenantId: instance.tenantId,
      startedBy: caller.clientId,
      vnfInstanceId: id,
      operation: 'INSTANTIATE',
      operationParams: request,
      apiMajorVersion: version,
      requireState: 'NOT_INSTANTIATED',
      pendingVimAccessSecrets: pending,
      internal: { vim },
    });
  } catch (error) {
    for (const secretId of Object.values(pending)) await deps.secrets.remove(secretId).catch(() => undefined);
    throw error;
  }
}

export async function requestTerminate(deps: CoreDeps, caller: Caller, id: string, request: TerminateVnfRequest, version: ApiMajorVersion): Promise<VnfLcmOpOccRecord> {
  const instance = await getVnfInstance(deps, caller, id);
  if (instance.instantiationState !== 'INSTANTIATED') throw new ConflictError(`VNF instance ${id} is NOT_INSTANTIATED; there is nothing to terminate`);
  return startOperation(deps, {
    tenantId: instance.tenantId,
    startedBy: caller.clientId,
    vnfInstanceId: id,
    operation: 'TERMINATE',
    operationParams: request,
    apiMajorVersion: version,
    requireState: 'INSTANTIATED',
    internal: { vim: instance.vimResources?.vim },
    executionInput: { gracefulSeconds: request.terminationType === 'GRACEFUL' ? request.gracefulTerminationTimeout ?? 0 : 0 },
  });
}

/** SOL003 5.4.14 retry: FAILED_TEMP -> PROCESSING, the operation's state machine runs again. */
export async function retryOperation(deps: CoreDeps, caller: Caller, opOccId: string): Promise<VnfLcmOpOccRecord> {
  const current = await getOpOcc(deps, caller, opOccId);
  if (current.operationState !== 'FAILED_TEMP') throw new ConflictError(`VNF LCM operation occurrence ${opOccId} is ${current.operationState}; only FAILED_TEMP can be retried`);
  const attempt = (current.attempts ?? 1) + 1;
  const execution: OperationExecution = { machine: current.operation, name: `${opOccId}-retry-${attempt}` };
  const moved = await deps.opOccs.transition(opOccId, { from: ['FAILED_TEMP'], to: 'PROCESSING', now: deps.now(), set: { attempts: attempt, execution } });
  if (!moved) throw new ConflictError(`VNF LCM operation occurrence ${opOccId} changed concurrently`);
  const params = current.operationParams as { terminationType?: string; gracefulTerminationTimeout?: number } | undefined;
  await startOrFailTemp(deps, moved, execution, {
    retry: true,
    gracefulSeconds: params?.terminationType === 'GRACEFUL' ? params.gracefulTerminationTimeout ?? 0 : 0,
  });
  return moved;
}

/** SOL003 5.4.15 rollback: FAILED_TEMP -> ROLLING_BACK; what the operation created is removed -> ROLLED_BACK. */
export async function rollbackOperation(deps: CoreDeps, caller: Caller, opOccId: string): Promise<VnfLcmOpOccRecord> {
  const current = await getOpOcc(deps, caller, opOccId);
  if (current.operationState !== 'FAILED_TEMP') throw new ConflictError(`VNF LCM operation occurrence ${opOccId} is ${current.operationState}; only FAILED_TEMP can be rolled back`);
  if (current.operation === 'TERMINATE') throw new ConflictError('A TERMINATE cannot be rolled back (its resources may be partly deleted); retry it or mark it failed');
  if (current.operation === 'HEAL') throw new ConflictError('A HEAL cannot be rolled back (the VNFCs it replaced are gone); retry it or mark it failed');
  // A rollback that failed may be asked for again: each gets an execution name of its own.
  const execution: OperationExecution = { machine: 'ROLLBACK', name: `${opOccId}-rollback-${Date.now()}` };
  const moved = await deps.opOccs.transition(opOccId, { from: ['FAILED_TEMP'], to: 'ROLLING_BACK', now: deps.now(), set: { execution } });
  if (!moved) throw new ConflictError(`VNF LCM operation occurrence ${opOccId} changed concurrently`);
  await startOrFailTemp(deps, moved, execution, {});
  return moved;
}

/** SOL003 5.4.16 fail: FAILED_TEMP -> FAILED (final), the instance's lock is released. */
export async function failOperation(deps: CoreDeps, caller: Caller, opOccId: string): Promise<VnfLcmOpOccRecord> {
  const current = await getOpOcc(deps, caller, opOccId);
  if (current.operationState !== 'FAILED_TEMP') throw new ConflictError(`VNF LCM operation occurrence ${opOccId} is ${current.operationState}; only FAILED_TEMP can be marked failed`);
  return finishOperation(deps, opOccId, 'FAILED');
}

async function startOrFailTemp(deps: CoreDeps, opOcc: VnfLcmOpOccRecord, execution: OperationExecution, input: Record<string, unknown>): Promise<void> {
  try {
    await deps.executor.start(execution.machine, execution.name, { ...input, opOccId: opOcc.id, vnfInstanceId: opOcc.vnfInstanceId, operation: opOcc.operation });
  } catch (error) {
    log.error('could not start a state machine', { opOccId: opOcc.id, error });
    await deps.opOccs.transition(opOcc.id, {
      from: [opOcc.operationState], to: 'FAILED_TEMP', now: deps.now(),
      set: { error: { title: 'Service Unavailable', status: 503, detail: 'The operation could not be started; try again' } },
    });
    throw new ProblemError(503, 'Service Unavailable', 'The operation could not be started; it is FAILED_TEMP again, try later', { cause: error });
  }
}

// ---------------------------------------------------------------------------------------------
// Steps
// ---------------------------------------------------------------------------------------------

export type StepAction =
  | 'grant' | 'instantiate-start' | 'instantiate-poll' | 'instantiate-finish'
  | 'terminate-start' | 'terminate-poll' | 'terminate-finish'
  | 'update-start' | 'update-poll' | 'update-finish'
  | 'rollback-start' | 'rollback-poll' | 'rollback-finish';

export interface StepResult {
  status: 'IN_PROGRESS' | 'DONE';
  /** When the state machine's Wait state should poll again (an RFC 3339 timestamp). */
  waitUntil: string;
  polls?: number;
}

interface Loaded {
  opOcc: VnfLcmOpOccRecord;
  instance: VnfInstanceRecord;
  pkg: VnfPackageRecord;
  vnfd: ParsedVnfd;
}

async function load(deps: CoreDeps, opOccId: string): Promise<Loaded> {
  const opOcc = await deps.opOccs.get(opOccId);
  if (!opOcc) throw new NotFoundError(`VNF LCM operation occurrence ${opOccId} does not exist`);
  const instance = await deps.instances.get(opOcc.vnfInstanceId);
  if (!instance) throw new NotFoundError(`VNF instance ${opOcc.vnfInstanceId} no longer exists`);
  const pkg = await deps.packages.get(instance.vnfPkgId);
  if (!pkg) throw new NotFoundError(`VNF package ${instance.vnfPkgId} no longer exists`);
  return { opOcc, instance, pkg, vnfd: await parsedVnfd(pkg.id) };
}

async function vimConnection(deps: CoreDeps, vim: VimReference | undefined): Promise<VimConnection> {
  if (!vim) throw new BadRequestError('The operation has no VIM');
  // A registered VIM is reached where the registry says now (it may have moved since the request,
  // e.g. a VIM re-registered at a new endpoint while an operation waited to resume).
  const registered = await deps.vims.get(vim.vimId);
  const interfaceInfo = registered && registered.accessSecret === vim.accessSecret ? registered.interfaceInfo : vim.interfaceInfo;
  return { vimId: vim.vimId, vimType: vim.vimType, interfaceInfo, accessInfo: await deps.secrets.read(vim.accessSecret), extra: vim.extra };
}

async function context(deps: CoreDeps, loaded: Loaded, vim: VimReference | undefined): Promise<OperationContext> {
  const instantiating = loaded.opOcc.operation === 'INSTANTIATE';
  const instantiateRequest = (instantiating ? loaded.opOcc.operationParams : loaded.instance.vimResources?.instantiateRequest) ?? {};
  const params = instantiateRequest as Partial<InstantiateVnfRequest>;
  const flavourId = instantiating ? String(params.flavourId ?? '') : String(loaded.instance.instantiatedVnfInfo?.flavourId ?? params.flavourId ?? '');
  return {
    vnfInstanceId: loaded.instance.id,
    opOccId: loaded.opOcc.id,
    vnfd: loaded.vnfd,
    flavourId,
    ...(params.instantiationLevelId !== undefined ? { instantiationLevelId: params.instantiationLevelId } : {}),
    request: loaded.opOcc.operationParams ?? {},
    instantiateRequest,
    files: packageFiles(loaded.pkg),
    vim: await vimConnection(deps, vim),
    grant: (loaded.opOcc.grant?.decision ?? {}) as OperationContext['grant'],
  };
}

function driverOf(vim: VimReference | undefined) {
  const driver = vim ? driverFor(vim.vimType) : undefined;
  if (!driver) throw new UnprocessableEntityError(`No driver for VIM type ${vim?.vimType ?? '(none)'}`);
  return driver;
}

/**
 * Poll every second for the first minute (most stacks complete within it, and a late poll is pure
 * overhead), then back off to spare the VIM's API: 2 s, and 5 s after three minutes. Measured
 * locally, polling faster than 1 s costs more than it saves.
 */
function nextPoll(polls: number): string {
  const ms = polls < 60 ? 1000 : polls < 120 ? 2000 : 5000;
  return new Date(Date.now() + ms).toISOString();
}

/** Updates attributes of an op occ without changing its state; fails if the state changed meanwhile. */
async function updateOpOcc(deps: CoreDeps, opOcc: VnfLcmOpOccRecord, set: Record<string, unknown>, remove: string[] = []): Promise<void> {
  const saved = await deps.opOccs.transition(opOcc.id, { from: [opOcc.operationState], to: opOcc.operationState, now: opOcc.stateEnteredTime, set, remove });
  if (!saved) throw new ConflictError(`VNF LCM operation occurrence ${opOcc.id} changed state while its step ran`);
}

/**
 * Records the driver's state on the op occ, unless it is what the op occ holds already: most polls
 * change nothing, and a write per poll of a 3 KB record (with its index copies) was most of what
 * the table's files grew by under load. A state change meanwhile is then caught by the next write.
 */
async function saveDriverState(deps: CoreDeps, opOcc: VnfLcmOpOccRecord, state: DriverState): Promise<void> {
  if (isDeepStrictEqual(opOcc.driverState, state)) return;
  await updateOpOcc(deps, opOcc, { driverState: state });
}

function resourceChanges(collected: CollectedResources, changeType: 'ADDED' | 'REMOVED'): Record<string, unknown> {
  return {
    affectedVnfcs: collected.vnfcResourceInfo.map((vnfc) => ({
      id: vnfc.id, vduId: vnfc.vduId, changeType, computeResource: vnfc.computeResource,
      ...(Array.isArray(vnfc.vnfcCpInfo) ? { affectedVnfcCpIds: (vnfc.vnfcCpInfo as Array<{ id: string }>).map((cp) => cp.id) } : {}),
      ...(Array.isArray(vnfc.storageResourceIds) && vnfc.storageResourceIds.length ? { [changeType === 'ADDED' ? 'addedStorageResourceIds' : 'removedStorageResourceIds']: vnfc.storageResourceIds } : {}),
    })),
    affectedVirtualLinks: collected.vnfVirtualLinkResourceInfo.map((vl) => ({ id: vl.id, vnfVirtualLinkDescId: vl.vnfVirtualLinkDescId, changeType, networkResource: vl.networkResource })),
    affectedVirtualStorages: collected.virtualStorageResourceInfo.map((st) => ({ id: st.id, virtualStorageDescId: st.virtualStorageDescId, changeType, storageResource: st.storageResource })),
  };
}

function instantiatedVnfInfo(flavour: FlavourInfo, levelId: string | undefined, collected: CollectedResources): Record<string, unknown> {
  const level = flavour.instantiationLevels.levels[levelId ?? flavour.instantiationLevels.default ?? ''];
  return {
    flavourId: flavour.flavourId,
    vnfState: 'STARTED',
    scaleStatus: flavour.scalingAspects.map((aspect) => ({ aspectId: aspect.id, scaleLevel: level?.scaleInfo?.[aspect.id]?.scaleLevel ?? 0 })),
    maxScaleLevels: flavour.scalingAspects.map((aspect) => ({ aspectId: aspect.id, scaleLevel: aspect.maxScaleLevel })),
    extCpInfo: collected.extCpInfo,
    ...(collected.extVirtualLinkInfo?.length ? { extVirtualLinkInfo: collected.extVirtualLinkInfo } : {}),
    vnfcResourceInfo: collected.vnfcResourceInfo,
    vnfVirtualLinkResourceInfo: collected.vnfVirtualLinkResourceInfo,
    virtualStorageResourceInfo: collected.virtualStorageResourceInfo,
    ...(collected.vnfcInfo ? { vnfcInfo: collected.vnfcInfo } : {}),
  };
}

/** The collected resources of an instance, rebuilt from its instantiatedVnfInfo (for REMOVED changes). */
function collectedOf(info: Record<string, unknown> | undefined): CollectedResources {
  const list = (key: string) => (Array.isArray(info?.[key]) ? info[key] : []) as Array<Record<string, unknown>>;
  return { vnfcResourceInfo: list('vnfcResourceInfo'), vnfVirtualLinkResourceInfo: list('vnfVirtualLinkResourceInfo'), virtualStorageResourceInfo: list('virtualStorageResourceInfo'), extCpInfo: list('extCpInfo') };
}

export async function runStep(deps: CoreDeps, opOccId: string, action: StepAction, polls = 0): Promise<StepResult> {
  const loaded = await load(deps, opOccId);
  const { opOcc, instance } = loaded;
  const done = (status: StepResult['status'] = 'DONE'): StepResult => ({ status, waitUntil: nextPoll(polls), polls: polls + 1 });
  switch (action) {
    case 'grant': {
      if (!opOcc.grant) {
        const { grantRequest, grant } = await grantFor(deps, loaded);
        await updateOpOcc(deps, opOcc, { grantRequest, grant, ...(grant.local ? {} : { grantId: grant.id }) });
      }
      return done();
    }
    case 'instantiate-start': {
      const vim = opOcc.vim;
      const ctx = await context(deps, loaded, vim);
      await hook(deps, loaded, ctx, 'start');
      const state = await driverOf(vim).instantiateStart(ctx);
      await saveDriverState(deps, opOcc, state);
      if (state.warnings?.length) await updateOpOcc(deps, opOcc, { warnings: state.warnings });
      return { status: 'IN_PROGRESS', waitUntil: nextPoll(0), polls: 0 };
    }
    case 'instantiate-poll':
    case 'rollback-poll':
    case 'terminate-poll': {
      if (action === 'rollback-poll' && opOcc.operation === 'CHANGE_VNFPKG') return changeStep(deps, loaded, 'rollback-poll', polls);
      const rescale = action === 'rollback-poll' && opOcc.operation === 'SCALE' && opOcc.rollbackChange;
      if (action === 'rollback-poll' && !rescale && (opOcc.operation !== 'INSTANTIATE' || !opOcc.driverState)) return done();
      const vim = action === 'terminate-poll' ? instance.vimResources?.vim : opOcc.vim;
      const driver = driverOf(vim);
      const ctx = await context(deps, loaded, vim);
      const state = opOcc.driverState ?? {};
      const progress = action === 'instantiate-poll'
        ? await driver.instantiatePoll(ctx, state)
        : rescale ? await driver.updatePoll(ctx, state, opOcc.rollbackChange as UpdateChange) : await driver.terminatePoll(ctx, state);
      await saveDriverState(deps, opOcc, progress.state);
      if (progress.status === 'FAILED') throw new VimOperationFailed(progress.reason);
      return done(progress.status === 'DONE' ? 'DONE' : 'IN_PROGRESS');
    }
    case 'instantiate-finish': {
      const vim = opOcc.vim;
      const params = opOcc.operationParams as InstantiateVnfRequest;
      const ctx = await context(deps, loaded, vim);
      await hook(deps, loaded, ctx, 'end');
      const found = await driverOf(vim).collect(ctx, opOcc.driverState ?? {});
      const collected = { ...found, vnfcResourceInfo: ageOrdered(undefined, found.vnfcResourceInfo) };
      const flavour = flavourOf(loaded.vnfd, params.flavourId);
      const connections = { ...(instance.vimConnectionInfo ?? {}) };
      const secrets = { ...(instance.vimAccessSecrets ?? {}) };
      for (const [key, connection] of Object.entries((params.vimConnectionInfo ?? {}) as Record<string, Record<string, unknown>>)) {
        connections[key] = connection as unknown as (typeof connections)[string];
        const pending = opOcc.pendingVimAccessSecrets?.[key];
        if (pending) secrets[key] = pending;
      }
      if (vim && !connections[vim.connectionId]) connections[vim.connectionId] = { vimId: vim.vimId, vimType: vim.vimType, interfaceInfo: vim.interfaceInfo };
      const set: Record<string, unknown> = {
        instantiationState: 'INSTANTIATED',
        instantiatedVnfInfo: instantiatedVnfInfo(flavour, params.instantiationLevelId, collected),
        vimConnectionInfo: connections,
        vimAccessSecrets: secrets,
        vimResources: { vim, driverState: opOcc.driverState ?? {}, instantiateRequest: opOcc.operationParams ?? {} },
      };
      if (params.vnfConfigurableProperties) set.vnfConfigurableProperties = params.vnfConfigurableProperties;
      if (params.extensions) set.extensions = params.extensions;
      if (!await deps.instances.updateUnderLock(instance.id, opOcc.id, { set, remove: [] })) {
        throw new ConflictError(`VNF LCM operation occurrence ${opOcc.id} lost the lock of VNF instance ${instance.id}`);
      }
      await updateOpOcc(deps, opOcc, { resourceChanges: resourceChanges(collected, 'ADDED') });
      return done();
    }
    case 'terminate-start': {
      const vim = instance.vimResources?.vim;
      const ctx = await context(deps, loaded, vim);
      await hook(deps, loaded, ctx, 'start');
      const state = await driverOf(vim).terminateStart(ctx, instance.vimResources?.driverState ?? {});
      await saveDriverState(deps, opOcc, state);
      return { status: 'IN_PROGRESS', waitUntil: nextPoll(0), polls: 0 };
    }
    case 'terminate-finish': {
      await hook(deps, loaded, await context(deps, loaded, instance.vimResources?.vim), 'end');
      const changes = resourceChanges(collectedOf(instance.instantiatedVnfInfo), 'REMOVED');
      if (!await deps.instances.updateUnderLock(instance.id, opOcc.id, { set: { instantiationState: 'NOT_INSTANTIATED' }, remove: ['instantiatedVnfInfo', 'vimResources'] })) {
        throw new ConflictError(`VNF LCM operation occurrence ${opOcc.id} lost the lock of VNF instance ${instance.id}`);
      }
      await updateOpOcc(deps, opOcc, { resourceChanges: changes });
      return done();
    }
    case 'update-start': {
      const vim = instance.vimResources?.vim;
      if (opOcc.operation === 'CHANGE_VNFPKG') return changeStep(deps, loaded, 'start', polls);
      const ctx = await context(deps, loaded, vim);
      await hook(deps, loaded, ctx, 'start');
      const state = await driverOf(vim).updateStart(ctx, instance.vimResources?.driverState ?? {}, changeOf(opOcc));
      await saveDriverState(deps, opOcc, state);
      return { status: 'IN_PROGRESS', waitUntil: nextPoll(0), polls: 0 };
    }
    case 'update-poll': {
      const vim = instance.vimResources?.vim;
      if (opOcc.operation === 'CHANGE_VNFPKG') return changeStep(deps, loaded, 'poll', polls);
      const progress = await driverOf(vim).updatePoll(await context(deps, loaded, vim), opOcc.driverState ?? instance.vimResources?.driverState ?? {}, changeOf(opOcc));
      await saveDriverState(deps, opOcc, progress.state);
      if (progress.status === 'FAILED') throw new VimOperationFailed(progress.reason);
      return done(progress.status === 'DONE' ? 'DONE' : 'IN_PROGRESS');
    }
    case 'update-finish': {
      if (opOcc.operation === 'CHANGE_VNFPKG') return changeStep(deps, loaded, 'finish', polls);
      await hook(deps, loaded, await context(deps, loaded, instance.vimResources?.vim), 'end');
      const change = changeOf(opOcc);
      const info = await recollect(deps, loaded, change.kind === 'SCALE' ? { scaleStatus: scaledStatus(instance.instantiatedVnfInfo, change) } : {});
      await updateOpOcc(deps, opOcc, { resourceChanges: resourceDiff(collectedOf(instance.instantiatedVnfInfo), collectedOf(info)) });
      return done();
    }
    case 'rollback-start': {
      if (opOcc.operation === 'CHANGE_VNFPKG') return changeStep(deps, loaded, 'rollback-start', polls);
      if (opOcc.operation === 'SCALE') {
        // Back to the counts the instance had, from whatever the failed attempt left on the VIM.
        const vim = instance.vimResources?.vim;
        const driver = driverOf(vim);
        const ctx = await context(deps, loaded, vim);
        const state = opOcc.driverState ?? instance.vimResources?.driverState ?? {};
        const reverse = reverseScale(changeOf(opOcc) as Extract<UpdateChange, { kind: 'SCALE' }>, instance.instantiatedVnfInfo, await driver.collect(ctx, state));
        await updateOpOcc(deps, opOcc, { rollbackChange: reverse, driverState: await driver.updateStart(ctx, state, reverse) });
        return { status: 'IN_PROGRESS', waitUntil: nextPoll(0), polls: 0 };
      }
      // Only INSTANTIATE leaves VIM resources to remove; MODIFY_INFO changed nothing before it failed.
      // Without a recorded driver state (the start step died before recording it) the driver
      // finds what it made by its deterministic names and labels.
      if (opOcc.operation !== 'INSTANTIATE' || !opOcc.vim) return done();
      const vim = opOcc.vim;
      const state = await driverOf(vim).terminateStart(await context(deps, loaded, vim), opOcc.driverState ?? {});
      await saveDriverState(deps, opOcc, state);
      return { status: 'IN_PROGRESS', waitUntil: nextPoll(0), polls: 0 };
    }
    case 'rollback-finish': {
      // A rolled-back SCALE has the VNFCs it had before (ids of VNFCs a scale-in removed are new ones).
      if ((opOcc.operation === 'SCALE' && opOcc.rollbackChange) || opOcc.operation === 'CHANGE_VNFPKG') await recollect(deps, loaded, {});
      // A retried INSTANTIATE starts from scratch; a rolled-back one leaves nothing behind.
      await updateOpOcc(deps, opOcc, {}, ['driverState', 'rollbackChange']);
      return done();
    }
  }
}

function changeOf(opOcc: VnfLcmOpOccRecord): UpdateChange {
  if (!opOcc.change) throw new BadRequestError(`VNF LCM operation occurrence ${opOcc.id} (${opOcc.operation}) records no change to make`);
  return opOcc.change as unknown as UpdateChange;
}

/**
 * instantiatedVnfInfo once an operation has changed the VNF's resources: what the VIM reports now,
 * the VNFCs the instance already had keeping their places (oldest first), the rest as it was.
 */
function infoAfter(instance: VnfInstanceRecord, collected: CollectedResources): Record<string, unknown> {
  return {
    ...instance.instantiatedVnfInfo,
    extCpInfo: collected.extCpInfo,
    vnfcResourceInfo: ageOrdered(collectedOf(instance.instantiatedVnfInfo).vnfcResourceInfo, collected.vnfcResourceInfo),
    vnfVirtualLinkResourceInfo: collected.vnfVirtualLinkResourceInfo,
    virtualStorageResourceInfo: collected.virtualStorageResourceInfo,
    ...(collected.vnfcInfo ? { vnfcInfo: collected.vnfcInfo } : {}),
    ...(collected.extVirtualLinkInfo?.length ? { extVirtualLinkInfo: collected.extVirtualLinkInfo } : {}),
  };
}

/**
 * Reads the instance's resources back from the VIM after its driver state changed (SCALE, HEAL,
 * a rolled-back SCALE) and stores them, with the new driver state, under the operation's lock.
 */
async function recollect(deps: CoreDeps, loaded: Loaded, extra: Record<string, unknown>): Promise<Record<string, unknown>> {
  const { opOcc, instance } = loaded;
  const vim = instance.vimResources?.vim;
  if (!vim || !instance.vimResources) throw new ConflictError(`VNF instance ${instance.id} has no VIM resources`);
  const driverState = opOcc.driverState ?? instance.vimResources.driverState;
  const collected = await driverOf(vim).collect(await context(deps, loaded, vim), driverState);
  const info = { ...infoAfter(instance, collected), ...extra };
  const set = { instantiatedVnfInfo: info, vimResources: { ...instance.vimResources, driverState } };
  if (!await deps.instances.updateUnderLock(instance.id, opOcc.id, { set, remove: [] })) {
    throw new ConflictError(`VNF LCM operation occurrence ${opOcc.id} lost the lock of VNF instance ${instance.id}`);
  }
  return info;
}

/** Runs the VNFD's Vnflcm `<operation>_start`/`_end` script of this operation, if it declares one. */
async function hook(deps: CoreDeps, loaded: Loaded, ctx: OperationContext, phase: 'start' | 'end', vnfd = loaded.vnfd, files = ctx.files): Promise<void> {
  await runHook({
    operation: loaded.opOcc.operation,
    phase,
    vnfd,
    flavourId: ctx.flavourId,
    files,
    request: await scriptRequest(deps, loaded.opOcc),
    instance: loaded.instance,
    extra: { grantRequest: loaded.opOcc.grantRequest ?? null, grant: loaded.opOcc.grant ?? null },
  });
}

interface NewPackage {
  pkg: VnfPackageRecord;
  plan: ChangePlan;
  change: PackageChange;
}

async function newPackageOf(deps: CoreDeps, loaded: Loaded, flavourId: string): Promise<NewPackage> {
  const plan = loaded.opOcc.change as unknown as ChangePlan | undefined;
  if (plan?.kind !== 'CHANGE_VNFPKG') throw new BadRequestError(`VNF LCM operation occurrence ${loaded.opOcc.id} records no package change`);
  const pkg = await deps.packages.get(plan.vnfPkgId);
  if (!pkg || pkg.onboardingState !== 'ONBOARDED') throw new UnprocessableEntityError(`VNF package ${plan.vnfPkgId} is no longer onboarded`);
  const vnfd = await parsedVnfd(pkg.id);
  const flavour = flavourOf(vnfd, flavourId);
  return {
    pkg,
    plan,
    change: {
      upgradeType: plan.upgradeType,
      vnfPkgId: pkg.id,
      vnfd,
      files: packageFiles(pkg),
      flavourId,
      vduIds: plan.vduIds.length ? plan.vduIds : flavour.vdus.map((vdu) => vdu.id),
      ...(plan.defFiles ? { defFiles: plan.defFiles } : {}),
      grant: (loaded.opOcc.grant?.decision ?? {}) as PackageChange['grant'],
    },
  };
}

/**
 * The steps of CHANGE_VNFPKG (update-start/poll/finish) and of its rollback. A retry resumes from
 * where the failed attempt stopped; a coordination that failed is asked for again, because the
 * driver state is saved only once its script has succeeded.
 */
async function changeStep(deps: CoreDeps, loaded: Loaded, phase: 'start' | 'poll' | 'finish' | 'rollback-start' | 'rollback-poll', polls: number): Promise<StepResult> {
  const { opOcc, instance } = loaded;
  const vim = instance.vimResources?.vim;
  const driver = driverOf(vim);
  const ctx = await context(deps, loaded, vim);
  const next = await newPackageOf(deps, loaded, ctx.flavourId);
  const newCtx: OperationContext = { ...ctx, vnfd: next.change.vnfd, files: next.change.files };
  const rollingBack = phase.startsWith('rollback');
  const advance = async (progress: Progress): Promise<StepResult> => {
    if (progress.status === 'FAILED') {
      await saveDriverState(deps, opOcc, progress.state);
      throw new VimOperationFailed(progress.reason);
    }
    if (progress.status === 'COORDINATE') {
      await coordinate(deps, { opOcc, instance, plan: next.plan, coordination: progress.coordinate, isRollback: rollingBack, newFiles: next.change.files, oldFiles: ctx.files });
      await saveDriverState(deps, opOcc, progress.state);
      // Straight on: the next poll is the driver's next step, not a wait for the VIM.
      return { status: 'IN_PROGRESS', waitUntil: new Date().toISOString(), polls: polls + 1 };
    }
    await saveDriverState(deps, opOcc, progress.state);
    return { status: progress.status === 'DONE' ? 'DONE' : 'IN_PROGRESS', waitUntil: nextPoll(polls), polls: polls + 1 };
  };
  switch (phase) {
    case 'start': {
      if (opOcc.driverState) return { status: 'IN_PROGRESS', waitUntil: nextPoll(0), polls: 0 };
      await hook(deps, loaded, newCtx, 'start', next.change.vnfd, next.change.files);
      const state = await driver.changeStart(ctx, instance.vimResources?.driverState ?? {}, next.change);
      await saveDriverState(deps, opOcc, state);
      return { status: 'IN_PROGRESS', waitUntil: nextPoll(0), polls: 0 };
    }
    case 'poll':
      return advance(await driver.changePoll(ctx, opOcc.driverState ?? {}, next.change));
    case 'rollback-start': {
      const state = await driver.changeRollbackStart(ctx, opOcc.driverState ?? instance.vimResources?.driverState ?? {}, next.change);
      await saveDriverState(deps, opOcc, state);
      return { status: 'IN_PROGRESS', waitUntil: nextPoll(0), polls: 0 };
    }
    case 'rollback-poll':
      return advance(await driver.changeRollbackPoll(ctx, opOcc.driverState ?? {}, next.change));
    case 'finish': {
      await hook(deps, loaded, newCtx, 'end', next.change.vnfd, next.change.files);
      const driverState = opOcc.driverState ?? {};
      const before = collectedOf(instance.instantiatedVnfInfo);
      const info = infoAfter(instance, await driver.collect(newCtx, driverState));
      const { set, modifications } = changedAttributes(instance, next.pkg, next.plan, opOcc.operationParams ?? {});
      set.instantiatedVnfInfo = info;
      set.vimResources = { ...instance.vimResources, driverState, instantiateRequest: instantiateRequestAfter(instance.vimResources?.instantiateRequest, next.plan) };
      // Usage moves to the new package only now, with the records.
      if (!await deps.packages.acquireUse(next.pkg.id)) throw new UnprocessableEntityError(`VNF package ${next.pkg.id} is no longer ONBOARDED and ENABLED`);
      if (!await deps.instances.updateUnderLock(instance.id, opOcc.id, { set, remove: [] })) {
        await deps.packages.releaseUse(next.pkg.id);
        throw new ConflictError(`VNF LCM operation occurrence ${opOcc.id} lost the lock of VNF instance ${instance.id}`);
      }
      await deps.packages.releaseUse(instance.vnfPkgId);
      const changes = resourceDiff(before, collectedOf(info), new Set(next.change.vduIds));
      await updateOpOcc(deps, opOcc, { resourceChanges: changes, modificationsTriggeredByVnfPkgChange: modifications });
      return { status: 'DONE', waitUntil: nextPoll(polls), polls: polls + 1 };
    }
  }
}

// SOL003 VNF instance resources: create, read, list, delete, and MODIFY_INFO (requested here,
// applied by its state machine). Rules only; no HTTP and no Lambda shapes.
import { ConflictError, NotFoundError, UnprocessableEntityError, BadRequestError } from '#lib/sol/errors.ts';
import {
  renderVnfInstance,
  VNF_INSTANCE_ATTRIBUTES,
  VNF_INSTANCE_ATTRIBUTES_V1,
  VNF_INSTANCE_DEFAULT_EXCLUDED,
  type ApiMajorVersion,
  type VimConnectionInfo,
  type VnfInstanceRecord,
  type VnfLcmOpOccRecord,
} from '#lib/sol/model.ts';
import { vimConnectionInfo as vimConnectionInfoSchema, describeIssues, type CreateVnfRequest, type VnfInfoModificationRequest } from '#lib/sol/requests.ts';
import type { VnfPackageRecord } from '#lib/store/packages.ts';
import { VNF_INSTANCE_LIST_INDEXES, vnfInstanceListKey } from '#lib/store/vnf-instances.ts';
import { log } from '#lib/log.ts';
import { redactSecrets } from '#lib/redact.ts';
import { getVnfInstance, packageAttributes } from './instance-records.ts';

export { getVnfInstance, packageAttributes };
import type { CoreDeps } from '#lib/ports.ts';
import { canSee, listScope, type Caller } from '#lib/auth/tenancy.ts';
import { listCollection, type ListResult } from '#lib/sol/listing.ts';
import { requestedBy, startOperation } from './operations.ts';
import { mergePatch } from '#lib/sol/merge-patch.ts';

/** The package that provides a VNFD: onboarded and enabled (SOL003 5.4.2.3.1, else 422). */
export async function enabledPackageFor(deps: CoreDeps, caller: Caller, vnfdId: string): Promise<VnfPackageRecord> {
  const candidates = (await deps.packages.findByVnfdId(vnfdId)).filter((p) => p.tenantId === caller.tenantId);
  const usable = candidates.find((p) => p.onboardingState === 'ONBOARDED' && p.operationalState === 'ENABLED');
  if (usable) return usable;
  if (candidates.length === 0) throw new UnprocessableEntityError(`No VNF package with VNFD ${vnfdId} is onboarded`);
  throw new UnprocessableEntityError(
    `The VNF package with VNFD ${vnfdId} is not usable (onboardingState ${candidates[0]?.onboardingState}, operationalState ${candidates[0]?.operationalState}); it must be ONBOARDED and ENABLED`,
  );
}

/** Where a package the VNFM does not have may come from (the NFVO, lib/nfvo/packages.ts); undefined: nowhere. */
export type PackageSource = (deps: CoreDeps, caller: Caller, vnfdId: string) => Promise<VnfPackageRecord | undefined>;

/**
 * The package for a new instance, or for a package change: an onboarded one here, else (none here at
 * all) the one `source` gives.
 */
export async function usablePackageFor(deps: CoreDeps, caller: Caller, vnfdId: string, source?: PackageSource): Promise<VnfPackageRecord> {
  try {
    return await enabledPackageFor(deps, caller, vnfdId);
  } catch (error) {
    if (!(error instanceof UnprocessableEntityError) || !source) throw error;
    const here = (await deps.packages.findByVnfdId(vnfdId)).filter((p) => p.tenantId === caller.tenantId);
    // A package uploaded here decides, usable or not; one from the NFVO is the source's to judge.
    if (here.some((p) => !(p.source as { nfvo?: boolean } | undefined)?.nfvo)) throw error;
    const fetched = await source(deps, caller, vnfdId);
    if (!fetched) throw error;
    if (fetched.operationalState !== 'ENABLED')
      throw new UnprocessableEntityError(`The VNF package with VNFD ${vnfdId} from the NFVO is ${fetched.operationalState}; it must be ENABLED there`);
    return fetched;
  }
}

/** Tenant and VNFD -> the package the last instance of them was created from (a few hundred, the most recent). */
const packagesInUse = new Map<string, VnfPackageRecord>();
const REMEMBERED_PACKAGES = 256;

/** The remembered package is no longer the one to use (disabled or deleted since): look it up again. */
class PackageChanged extends Error {}

function rememberPackage(key: string, pkg: VnfPackageRecord): void {
  packagesInUse.delete(key);
  packagesInUse.set(key, pkg);
  if (packagesInUse.size > REMEMBERED_PACKAGES) packagesInUse.delete(packagesInUse.keys().next().value as string);
}

function newInstanceRecord(deps: CoreDeps, caller: Caller, request: CreateVnfRequest, pkg: VnfPackageRecord): VnfInstanceRecord {
  const id = deps.newId();
  const now = deps.now();
  return {
    id,
    tenantId: caller.tenantId,
    createdAt: now,
    createdSeq: `${now}#${id}`,
    vnfInstanceName: request.vnfInstanceName,
    vnfInstanceDescription: request.vnfInstanceDescription,
    ...packageAttributes(pkg),
    instantiationState: 'NOT_INSTANTIATED',
    metadata: redactSecrets(request.metadata),
    revision: 1,
  };
}

/**
 * Creates an instance of the package the tenant's last instance of this VNFD was created from, if
 * that package can still be taken into use (its instance count up): taking it is the conditional
 * write that checks it is still ONBOARDED and ENABLED, of the caller's tenant, and still names what
 * the instance copies of it (nothing is read back). It runs while the notification's outbox entry
 * is written, and the instance is written only once it succeeded. Undefined when there is no such
 * package or it cannot be taken any more.
 */
async function createOfRememberedPackage(deps: CoreDeps, caller: Caller, request: CreateVnfRequest, key: string): Promise<VnfInstanceRecord | undefined> {
  const remembered = packagesInUse.get(key);
  if (remembered === undefined) return undefined;
  const record = newInstanceRecord(deps, caller, request, remembered);
  let taken = false;
  const { vnfPkgId: _id, ...copied } = packageAttributes(remembered);
  const take = async () => {
    taken = await deps.packages.acquireUseIf(remembered.id, { tenantId: caller.tenantId, ...copied });
    if (!taken) throw new PackageChanged();
  };
  try {
    await deps.instances.create(record, take);
    return record;
  } catch (error) {
    if (taken) {
      await deps.packages.releaseUse(remembered.id);
      throw error;
    }
    if (!(error instanceof PackageChanged)) throw error;
    packagesInUse.delete(key);
    return undefined;
  }
}

export async function createVnfInstance(deps: CoreDeps, caller: Caller, request: CreateVnfRequest, source?: PackageSource): Promise<VnfInstanceRecord> {
  const key = `${caller.tenantId}\u0000${request.vnfdId}`;
  const fast = await createOfRememberedPackage(deps, caller, request, key);
  if (fast) return fast;
  const pkg = await usablePackageFor(deps, caller, request.vnfdId, source);
  // The package counts its instances; taking it into use fails if it was disabled meanwhile.
  const taken = await deps.packages.acquireUse(pkg.id);
  if (!taken) throw new UnprocessableEntityError(`The VNF package with VNFD ${request.vnfdId} is no longer ONBOARDED and ENABLED`);
  const record = newInstanceRecord(deps, caller, request, taken);
  try {
    await deps.instances.create(record);
  } catch (error) {
    await deps.packages.releaseUse(pkg.id);
    throw error;
  }
  rememberPackage(key, taken);
  return record;
}

export function listVnfInstances(
  deps: CoreDeps,
  caller: Caller,
  version: ApiMajorVersion,
  baseUrl: string,
  rawQuery: string,
  pageSize: number,
): Promise<ListResult> {
  return listCollection(
    {
      resource: `v${version}/vnf_instances`,
      attributes: version === 1 ? VNF_INSTANCE_ATTRIBUTES_V1 : VNF_INSTANCE_ATTRIBUTES,
      defaultExcluded: VNF_INSTANCE_DEFAULT_EXCLUDED,
      alwaysIncluded: ['id', '_links'],
      scope: listScope(caller),
      indexes: VNF_INSTANCE_LIST_INDEXES,
      // The list keys, and the state the links follow.
      readAlways: ['id', 'tenantId', 'createdSeq', 'instantiationState'],
      fetch: (scope, limit, after, plan, read) => deps.instances.listPage(scope, limit, after, plan, read),
      render: (record) => renderVnfInstance(record, version, baseUrl),
      keyOf: vnfInstanceListKey,
    },
    rawQuery,
    pageSize,
  );
}

/** SOL003 5.4.3.3.5: only a NOT_INSTANTIATED instance with no operation in progress (or FAILED_TEMP) can be deleted. */
export async function deleteVnfInstance(deps: CoreDeps, caller: Caller, id: string): Promise<VnfInstanceRecord> {
  const current = await getVnfInstance(deps, caller, id);
  const deleted = await deps.instances.deleteIdle(id);
  if (!deleted) {
    const now = await deps.instances.get(id);
    if (!now) throw new NotFoundError(`VNF instance ${id} does not exist`);
    if (now.instantiationState !== 'NOT_INSTANTIATED')
      throw new ConflictError(`VNF instance ${id} is ${now.instantiationState}; terminate it before deleting it`);
    throw new ConflictError(
      `VNF instance ${id} has LCM operation occurrence ${now.lockOpOccId} in progress or FAILED_TEMP; it cannot be deleted until that operation has finished`,
    );
  }
  await deps.packages.releaseUse(deleted.vnfPkgId);
  for (const secretId of Object.values(current.vimAccessSecrets ?? {})) {
    try {
      await deps.secrets.remove(secretId);
    } catch (error) {
      log.warn("could not remove a deleted instance's VIM secret", { vnfInstanceId: id, error });
    }
  }
  return deleted;
}

/** What MODIFY_INFO will change, computed and checked before the request is accepted. */
export interface ModificationPlan {
  operationParams: Record<string, unknown>;
  pendingVimAccessSecrets: Record<string, string>;
}

/**
 * SOL003 5.4.3.3.4 PATCH: validates the modification against the instance as it is, writes new
 * VIM credentials to the secret store, takes the instance's lock with a STARTING MODIFY_INFO op
 * occ and starts its state machine.
 */
export async function requestModifyInfo(
  deps: CoreDeps,
  caller: Caller,
  id: string,
  request: VnfInfoModificationRequest,
  version: ApiMajorVersion,
): Promise<VnfLcmOpOccRecord> {
  if (Object.keys(request).length === 0) throw new BadRequestError('Invalid VnfInfoModificationRequest: it modifies nothing');
  if (request.vnfPkgId && request.vnfdId) throw new BadRequestError('Invalid VnfInfoModificationRequest: give either vnfPkgId or vnfdId, not both');
  const instance = await getVnfInstance(deps, caller, id);

  if (request.vnfdId) await enabledPackageFor(deps, caller, request.vnfdId);
  if (request.vnfPkgId) {
    const pkg = await deps.packages.get(request.vnfPkgId);
    if (!pkg || !canSee(caller, pkg.tenantId) || pkg.onboardingState !== 'ONBOARDED' || pkg.operationalState !== 'ENABLED') {
      throw new UnprocessableEntityError(`VNF package ${request.vnfPkgId} is not onboarded and enabled`);
    }
  }
  if (request.vnfcInfoModifications) {
    const known = new Set(((instance.instantiatedVnfInfo?.vnfcInfo ?? []) as Array<{ id?: string }>).map((v) => v.id));
    const unknown = request.vnfcInfoModifications.filter((m) => !known.has(m.id)).map((m) => m.id);
    if (unknown.length) throw new UnprocessableEntityError(`vnfcInfoModifications names VNFC(s) this instance does not have: ${unknown.join(', ')}`);
  }

  // Every resulting connection must still be complete; credentials merge with the stored ones.
  const pendingVimAccessSecrets: Record<string, string> = {};
  const opOccScope = deps.newId();
  try {
    for (const [key, patch] of Object.entries(request.vimConnectionInfo ?? {})) {
      if (patch === null) continue;
      const existing = instance.vimConnectionInfo?.[key];
      const merged = mergePatch(existing ?? {}, { ...patch, accessInfo: undefined }) as Record<string, unknown>;
      const check = vimConnectionInfoSchema.safeParse(merged);
      if (!check.success)
        throw new UnprocessableEntityError(`vimConnectionInfo.${key} would be incomplete after the modification: ${describeIssues(check.error)}`);
      if (patch.accessInfo !== undefined) {
        const oldSecret = instance.vimAccessSecrets?.[key];
        const previous = oldSecret ? await deps.secrets.read(oldSecret) : {};
        const accessInfo = patch.accessInfo === null ? {} : (mergePatch(previous, patch.accessInfo) as Record<string, unknown>);
        pendingVimAccessSecrets[key] = await deps.secrets.create(`vnf-instances/${id}/${opOccScope}/${key}`, accessInfo);
      }
    }
    // startOperation records the request without its accessInfo (now in the secret store).
    return await startOperation(deps, {
      tenantId: instance.tenantId,
      ...requestedBy(caller),
      vnfInstanceId: id,
      operation: 'MODIFY_INFO',
      operationParams: request,
      apiMajorVersion: version,
      pendingVimAccessSecrets,
    });
  } catch (error) {
    // Refused or not started: the credentials written for it must not linger.
    for (const secretId of Object.values(pendingVimAccessSecrets)) await deps.secrets.remove(secretId).catch(() => undefined);
    throw error;
  }
}

/**
 * The MODIFY_INFO step: applies the op occ's modification to its instance while it holds the lock
 * and returns the VnfInfoModifications to record as changedInfo.
 */
export async function applyModifyInfo(deps: CoreDeps, opOcc: VnfLcmOpOccRecord): Promise<Record<string, unknown>> {
  const instance = await deps.instances.get(opOcc.vnfInstanceId);
  if (!instance) throw new NotFoundError(`VNF instance ${opOcc.vnfInstanceId} no longer exists`);
  if (instance.lockOpOccId !== opOcc.id)
    throw new ConflictError(`VNF LCM operation occurrence ${opOcc.id} does not hold the lock of VNF instance ${instance.id}`);
  const params = (opOcc.operationParams ?? {}) as Omit<VnfInfoModificationRequest, 'vimConnectionInfo'> & {
    vimConnectionInfo?: Record<string, Record<string, unknown> | null>;
  };
  const set: Record<string, unknown> = {};
  const remove: string[] = [];
  const changedInfo: Record<string, unknown> = {};

  for (const attribute of ['vnfInstanceName', 'vnfInstanceDescription'] as const) {
    if (params[attribute] === undefined) continue;
    if (params[attribute] === null) remove.push(attribute);
    else set[attribute] = params[attribute];
    changedInfo[attribute] = params[attribute];
  }
  for (const attribute of ['vnfConfigurableProperties', 'metadata', 'extensions'] as const) {
    if (params[attribute] === undefined) continue;
    const merged = params[attribute] === null ? undefined : mergePatch(instance[attribute] ?? {}, params[attribute]);
    if (merged === undefined || Object.keys(merged as object).length === 0) remove.push(attribute);
    else set[attribute] = merged;
    changedInfo[attribute] = params[attribute];
  }
  const newPkg = params.vnfdId
    ? await enabledPackageFor(deps, { tenantId: opOcc.tenantId }, params.vnfdId)
    : params.vnfPkgId
      ? await deps.packages.get(params.vnfPkgId)
      : undefined;
  if ((params.vnfdId || params.vnfPkgId) && !newPkg) throw new UnprocessableEntityError('The VNF package of the modification is no longer available');
  if (newPkg) {
    const attributes = packageAttributes(newPkg);
    Object.assign(set, attributes);
    const { vnfPkgId: _internal, ...visible } = attributes;
    Object.assign(changedInfo, visible);
  }
  if (params.vimConnectionInfo) {
    const connections: Record<string, VimConnectionInfo> = { ...(instance.vimConnectionInfo ?? {}) };
    const secrets: Record<string, string> = { ...(instance.vimAccessSecrets ?? {}) };
    for (const [key, patch] of Object.entries(params.vimConnectionInfo)) {
      if (patch === null) {
        delete connections[key];
        delete secrets[key];
      } else {
        connections[key] = mergePatch(connections[key] ?? {}, patch) as unknown as VimConnectionInfo;
        const pending = opOcc.pendingVimAccessSecrets?.[key];
        if (pending) secrets[key] = pending;
      }
    }
    set.vimConnectionInfo = connections;
    set.vimAccessSecrets = secrets;
    // The VIM the VNF runs on, when it is one of these connections, follows its new credentials and
    // interface: the sweeps (health, PM) and the next operation read it, and the old secret goes below.
    const running = instance.vimResources?.vim;
    const now = running ? connections[running.connectionId] : undefined;
    if (running && now && secrets[running.connectionId] && params.vimConnectionInfo[running.connectionId] !== undefined) {
      set.vimResources = {
        ...instance.vimResources,
        vim: {
          ...running,
          accessSecret: secrets[running.connectionId] as string,
          ...(now.interfaceInfo ? { interfaceInfo: now.interfaceInfo } : {}),
          ...(now.extra ? { extra: now.extra } : {}),
        },
      };
    }
    // SOL003 VnfInfoModifications: each changed connection as it now is (a VimConnectionInfo, with its vimType).
    changedInfo.vimConnectionInfo = Object.fromEntries(
      Object.keys(params.vimConnectionInfo)
        .filter((key) => connections[key])
        .map((key) => [key, connections[key]]),
    );
  }
  if (params.vnfcInfoModifications) {
    const info = structuredClone(instance.instantiatedVnfInfo ?? {}) as {
      vnfcInfo?: Array<{ id: string; vnfcConfigurableProperties?: Record<string, unknown> }>;
    };
    for (const modification of params.vnfcInfoModifications) {
      const vnfc = info.vnfcInfo?.find((v) => v.id === modification.id);
      if (!vnfc) throw new UnprocessableEntityError(`VNFC ${modification.id} no longer exists`);
      vnfc.vnfcConfigurableProperties = mergePatch(vnfc.vnfcConfigurableProperties ?? {}, modification.vnfcConfigurableProperties) as Record<string, unknown>;
    }
    set.instantiatedVnfInfo = info;
    changedInfo.vnfcInfoModifications = params.vnfcInfoModifications;
  }
  const packageChanged = newPkg !== undefined && newPkg.id !== instance.vnfPkgId;
  if (packageChanged && !(await deps.packages.acquireUse(newPkg.id))) {
    throw new UnprocessableEntityError(`VNF package ${newPkg.id} is no longer ONBOARDED and ENABLED`);
  }
  if (!(await deps.instances.updateUnderLock(instance.id, opOcc.id, { set, remove }))) {
    if (packageChanged) await deps.packages.releaseUse(newPkg.id);
    throw new ConflictError(`VNF LCM operation occurrence ${opOcc.id} lost the lock of VNF instance ${instance.id}`);
  }
  if (packageChanged) await deps.packages.releaseUse(instance.vnfPkgId);
  // Credentials replaced or removed by this modification are no longer referenced by anything.
  const stillUsed = new Set(Object.values((set.vimAccessSecrets as Record<string, string> | undefined) ?? instance.vimAccessSecrets ?? {}));
  for (const old of Object.values(instance.vimAccessSecrets ?? {})) {
    if (!stillUsed.has(old)) await deps.secrets.remove(old).catch((error: unknown) => log.warn('could not remove a replaced VIM secret', { error }));
  }
  return changedInfo;
}

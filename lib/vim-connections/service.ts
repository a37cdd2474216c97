// The registered VIMs' service (Tacker's NFVO VIM management, seed 003): register a VIM connection
// after authenticating against the VIM (PENDING -> REGISTERING -> REACHABLE, or a 4xx and nothing
// stored), names unique per tenant, one default per tenant and VIM type, credentials only in the
// secret store, and no deletion while a VNF instance uses the VIM.
import { ConflictError, NotFoundError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import { canSee, listScope, type Caller } from '#lib/auth/tenancy.ts';
import type { VimRecord } from '#lib/store/vims.ts';
import { log } from '#lib/log.ts';
import { canonicalVimType } from '#lib/vim/registry.ts';
import { checkAccessInfo, maskAccessInfo, type VimModification, type VimRegistration } from './model.ts';
import type { VimRegistryDeps } from './ports.ts';
import { vimProblem } from './reachability.ts';

const nameKey = (tenantId: string, name: string) => `name:${tenantId}:${name}`;
const defaultKey = (tenantId: string, vimType: string) => `default:${tenantId}:${canonicalVimType(vimType) ?? vimType}`;

async function nameTaken(deps: VimRegistryDeps, tenantId: string, name: string, except?: string): Promise<boolean> {
  return (await deps.vims.listForTenant(tenantId)).some((vim) => vim.name === name && vim.id !== except);
}

/** Names are unique within the VIM's tenant (an admin renaming another tenant's VIM checks that tenant's names). */
async function claimName(deps: VimRegistryDeps, tenantId: string, name: string, vimId: string): Promise<void> {
  // The marker settles races between registrations; the list also covers VIMs registered without one (the local simulators).
  if ((await nameTaken(deps, tenantId, name, vimId)) || !(await deps.vims.claim(nameKey(tenantId, name), vimId))) {
    throw new ConflictError(`A VIM named "${name}" is already registered`);
  }
}

async function verifyOrRefuse(
  registration: { name: string; vimType: string; interfaceInfo: Record<string, unknown>; accessInfo: Record<string, unknown>; extra?: Record<string, unknown> },
  id: string,
): Promise<void> {
  const problem = await vimProblem({ id, ...registration });
  if (problem) throw new UnprocessableEntityError(`VIM "${registration.name}" could not be verified, so it was not registered: ${problem}`);
}

/**
 * Makes vim the tenant's default of its type: the default marker moves to it by a conditional
 * write (a racing change loses with 409), then the record flags follow.
 */
async function makeDefault(deps: VimRegistryDeps, vim: VimRecord): Promise<void> {
  const key = defaultKey(vim.tenantId, vim.vimType);
  const holder = await deps.vims.holder(key);
  if (holder !== vim.id && !(await deps.vims.move(key, holder, vim.id))) {
    throw new ConflictError(`The default ${vim.vimType} VIM was changed by another request at the same time; try again`);
  }
  await deps.vims.update(vim.id, { isDefault: true });
  const others = (await deps.vims.listForTenant(vim.tenantId)).filter(
    (other) => other.id !== vim.id && other.isDefault && canonicalVimType(other.vimType) === canonicalVimType(vim.vimType),
  );
  for (const other of others) await deps.vims.update(other.id, { isDefault: false, updatedAt: deps.now() });
}

export async function registerVim(deps: VimRegistryDeps, caller: Caller, registration: VimRegistration): Promise<VimRecord> {
  const id = deps.newId();
  await claimName(deps, caller.tenantId, registration.name, id);
  let accessSecret: string | undefined;
  try {
    // PENDING -> REGISTERING: authenticate before anything is stored.
    await verifyOrRefuse(registration, id);
    accessSecret = await deps.secrets.create(`vims/${id}`, registration.accessInfo);
    const now = deps.now();
    const record: VimRecord = {
      id,
      tenantId: caller.tenantId,
      name: registration.name,
      ...(registration.description ? { description: registration.description } : {}),
      vimType: registration.vimType,
      interfaceInfo: registration.interfaceInfo,
      accessSecret,
      maskedAccessInfo: maskAccessInfo(registration.accessInfo),
      isDefault: false,
      createdAt: now,
      ...(registration.extra ? { extra: registration.extra } : {}),
      ...(registration.vimProject ? { vimProject: registration.vimProject } : {}),
      status: 'REACHABLE',
      statusChangedAt: now,
      lastCheckedAt: now,
    };
    if (!(await deps.vims.create(record))) throw new ConflictError(`VIM ${id} already exists`);
    if (registration.isDefault) {
      try {
        await makeDefault(deps, record);
      } catch (error) {
        await deps.vims.remove(id);
        throw error;
      }
      record.isDefault = true;
    }
    log.info('VIM registered', { vimId: id, name: record.name, vimType: record.vimType, isDefault: record.isDefault });
    return record;
  } catch (error) {
    if (accessSecret) await deps.secrets.remove(accessSecret).catch(() => undefined);
    await deps.vims.release(nameKey(caller.tenantId, registration.name), id);
    throw error;
  }
}

export async function getVim(deps: VimRegistryDeps, caller: Caller, id: string): Promise<VimRecord> {
  const vim = await deps.vims.get(id);
  // Another tenant's VIM looks exactly like a missing one (an admin sees every tenant's).
  if (!vim || !canSee(caller, vim.tenantId)) throw new NotFoundError(`No VIM ${id}`);
  return vim;
}

export async function listVims(deps: VimRegistryDeps, caller: Caller): Promise<VimRecord[]> {
  return (await deps.vims.listForTenant(listScope(caller))).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
}

export async function modifyVim(deps: VimRegistryDeps, caller: Caller, id: string, change: VimModification): Promise<VimRecord> {
  const vim = await getVim(deps, caller, id);
  const set: Partial<VimRecord> = { updatedAt: deps.now() };
  if (change.name !== undefined && change.name !== vim.name) {
    await claimName(deps, vim.tenantId, change.name, vim.id);
    set.name = change.name;
  }
  if (change.description !== undefined) set.description = change.description;
  let newSecretValue: Record<string, unknown> | undefined;
  if (change.accessInfo) {
    const merged = await checkAccessInfo(vim.vimType, { ...(await deps.secrets.read(vim.accessSecret)), ...change.accessInfo });
    try {
      await verifyOrRefuse({ ...vim, accessInfo: merged }, vim.id);
    } catch (error) {
      if (set.name) await deps.vims.release(nameKey(vim.tenantId, set.name), vim.id);
      throw error;
    }
    newSecretValue = merged;
    set.maskedAccessInfo = maskAccessInfo(merged);
    set.status = 'REACHABLE';
    set.lastCheckedAt = set.updatedAt;
    if (vim.status !== 'REACHABLE') set.statusChangedAt = set.updatedAt;
    if (change.vimProject) set.vimProject = change.vimProject;
  }
  if (newSecretValue) await deps.secrets.put(`vims/${vim.id}`, newSecretValue);
  if (!(await deps.vims.update(vim.id, set, newSecretValue ? ['lastError'] : []))) throw new NotFoundError(`No VIM ${id}`);
  if (set.name) await deps.vims.release(nameKey(vim.tenantId, vim.name), vim.id);
  if (change.isDefault === true && !vim.isDefault) await makeDefault(deps, vim);
  if (change.isDefault === false && vim.isDefault) {
    await deps.vims.update(vim.id, { isDefault: false });
    await deps.vims.release(defaultKey(vim.tenantId, vim.vimType), vim.id);
  }
  if (newSecretValue) log.info('VIM credentials replaced', { vimId: vim.id });
  return getVim(deps, caller, id);
}

/** The VNF instances (of the VIM's tenant) whose resources or connections name the VIM. */
async function instancesUsing(deps: VimRegistryDeps, vim: VimRecord): Promise<string[]> {
  const users: string[] = [];
  let after: Record<string, string | number> | undefined;
  do {
    const page = await deps.instances.listPage(vim.tenantId, 100, after);
    for (const instance of page.items) {
      const viaResources = instance.vimResources?.vim?.vimId === vim.id;
      const viaConnections = Object.values(instance.vimConnectionInfo ?? {}).some((connection) => connection.vimId === vim.id);
      if ((viaResources || viaConnections) && instance.instantiationState === 'INSTANTIATED') users.push(instance.id);
    }
    after = page.after;
  } while (after);
  return users;
}

export async function deleteVim(deps: VimRegistryDeps, caller: Caller, id: string): Promise<void> {
  const vim = await getVim(deps, caller, id);
  const users = await instancesUsing(deps, vim);
  if (users.length) throw new ConflictError(`VIM ${vim.name} (${vim.id}) is used by instantiated VNF instance(s) ${users.join(', ')}; terminate them first`);
  await deps.vims.remove(vim.id);
  await deps.vims.release(nameKey(vim.tenantId, vim.name), vim.id);
  await deps.vims.release(defaultKey(vim.tenantId, vim.vimType), vim.id);
  await deps.secrets.remove(vim.accessSecret);
  log.info('VIM deleted', { vimId: vim.id, name: vim.name });
}

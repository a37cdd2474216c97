// The VIM connection records' model: registration requests in the product shape (a SOL003
// VimConnectionInfo with a name) and in Tacker's legacy NFVO shape ({"vim": {type, auth_url,
// auth_cred, vim_project}}), both normalised to one VimRegistration; and the representations, whose
// credentials are always masked ("***"). The real accessInfo only ever travels to the secret store
// and the driver. What differs between kinds of VIM (credentials, Tacker's spelling of them) the
// kind's driver says, through the registry.
import * as z from 'zod';
import { httpUri, parseRequest, refuseCredentialsIn } from '#lib/sol/requests.ts';
import { isSecretKey } from '#lib/redact.ts';
import { ProblemError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { VimRecord } from '#lib/store/vims.ts';
import { tackerBoolean, type VimCredentials } from '#lib/vim/driver.ts';
import { canonicalVimType, loadDriver, supportedVimType, TACKER_DEFAULT_VIM, tackerTypeOf } from '#lib/vim/registry.ts';

export const MASK = '***';

/**
 * accessInfo attributes shown masked: whatever lib/redact.ts calls a credential, and in accessInfo
 * also anything with pass in its name, a bare `key` or anything private (a client key), which
 * elsewhere may be ordinary names.
 */
export function maskAccessInfo(accessInfo: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(accessInfo).map(([key, value]) => [key, isSecretKey(key) || /pass|private|^key$/i.test(key) ? MASK : value]));
}

/** A registration, whichever API it came through. */
export interface VimRegistration {
  name: string;
  description?: string;
  vimType: string;
  interfaceInfo: Record<string, unknown>;
  accessInfo: Record<string, unknown>;
  isDefault: boolean;
  vimProject?: Record<string, unknown>;
  extra?: Record<string, unknown>;
}

/** What may change after registration (PATCH /vnfm/v1/vims/{id}, PUT /v1.0/vims/{id}). */
export interface VimModification {
  name?: string;
  description?: string;
  isDefault?: boolean;
  /** Merged over the stored accessInfo; the VIM is verified again with the result. */
  accessInfo?: Record<string, unknown>;
  vimProject?: Record<string, unknown>;
}

const name = z.string().trim().min(1).max(255);
const text = z.string().max(1024);
const interfaceInfo = z
  .object({
    endpoint: httpUri('give them in accessInfo (auth_cred)'),
    ssl_ca_cert: z.string().optional(),
    cert_verify: z.boolean().optional(),
  })
  .loose()
  .superRefine(refuseCredentialsIn);

const productRegistration = z.object({
  name,
  description: text.optional(),
  vimType: z.string().min(1),
  interfaceInfo,
  accessInfo: z.record(z.string(), z.unknown()),
  isDefault: z.boolean().optional(),
  extra: z.record(z.string(), z.unknown()).optional(),
});

const productModification = z
  .object({
    name: name.optional(),
    description: text.optional(),
    isDefault: z.boolean().optional(),
    accessInfo: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

/** The credentials' description of a supported vimType (loading its driver). */
async function credentialsOf(vimType: string): Promise<VimCredentials> {
  const driver = await loadDriver(vimType);
  if (!driver) throw new UnprocessableEntityError(`VIM type "${vimType}" is not supported`);
  return driver.credentials;
}

/** The accessInfo a VIM type needs; a 422 names the missing field, never a value. */
export async function checkAccessInfo(vimType: string, accessInfo: Record<string, unknown>): Promise<Record<string, unknown>> {
  const parsed = (await credentialsOf(vimType)).accessInfo.safeParse(accessInfo);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${['accessInfo', ...issue.path].join('.')}: ${issue.message}`).join('; ');
    throw new UnprocessableEntityError(`The ${vimType} VIM's credentials are incomplete: ${issues}`);
  }
  return accessInfo;
}

export async function productRegistrationOf(body: unknown): Promise<VimRegistration> {
  const request = parseRequest(productRegistration, body, 'VIM registration');
  const vimType = supportedVimType(request.vimType);
  return {
    name: request.name,
    description: request.description,
    vimType,
    interfaceInfo: request.interfaceInfo,
    accessInfo: await checkAccessInfo(vimType, request.accessInfo),
    isDefault: request.isDefault ?? false,
    extra: request.extra,
  };
}

export function productModificationOf(body: unknown): VimModification {
  return parseRequest(productModification, body, 'VIM modification');
}

// --- Tacker's legacy NFVO API (/v1.0/vims) ----------------------------------------------------

const tackerAuthCred = z.record(z.string(), z.unknown());
const tackerVim = z.object({
  name: name.optional(),
  description: text.nullish(),
  type: z.string().optional(),
  auth_url: z.string().optional(),
  auth_cred: tackerAuthCred.optional(),
  vim_project: z.record(z.string(), z.unknown()).optional(),
  is_default: z.union([z.boolean(), z.enum(['true', 'false', 'True', 'False'])]).optional(),
  tenant_id: z.string().nullish(),
  extra: z.record(z.string(), z.unknown()).optional(),
});
const tackerBody = z.object({ vim: tackerVim });

export async function tackerRegistrationOf(body: unknown): Promise<VimRegistration> {
  const vim = parseRequest(tackerBody, body, 'VIM registration ({"vim": {...}})').vim;
  if (!vim.name) throw new UnprocessableEntityError('vim.name is required');
  if (!vim.auth_url) throw new UnprocessableEntityError('vim.auth_url is required');
  const vimType = supportedVimType(vim.type ?? TACKER_DEFAULT_VIM);
  const endpoint = interfaceInfo.shape.endpoint.safeParse(vim.auth_url);
  if (!endpoint.success) throw new UnprocessableEntityError(`vim.auth_url: ${endpoint.error.issues.map((issue) => issue.message).join('; ')}`);
  const project = vim.vim_project ?? {};
  const { accessInfo, interfaceExtra } = (await credentialsOf(vimType)).fromTacker(vim.auth_cred ?? {}, project, vim.extra);
  return {
    name: vim.name,
    description: vim.description ?? undefined,
    vimType,
    interfaceInfo: { endpoint: vim.auth_url, ...interfaceExtra },
    accessInfo: await checkAccessInfo(vimType, accessInfo),
    isDefault: tackerBoolean(vim.is_default) ?? false,
    vimProject: project,
    extra: vim.extra,
  };
}

/** `vim set`: name, description, is_default, and new credentials from a config file. */
export async function tackerModificationOf(body: unknown, vimType: string): Promise<VimModification> {
  const vim = parseRequest(tackerBody, body, 'VIM update ({"vim": {...}})').vim;
  const modification: VimModification = {};
  if (vim.name !== undefined) modification.name = vim.name;
  if (vim.description !== undefined && vim.description !== null) modification.description = vim.description;
  if (vim.is_default !== undefined) modification.isDefault = tackerBoolean(vim.is_default);
  if (vim.auth_cred && Object.keys(vim.auth_cred).length) {
    const { accessInfo } = (await credentialsOf(vimType)).fromTacker(vim.auth_cred, vim.vim_project ?? {}, vim.extra);
    modification.accessInfo = accessInfo;
    if (vim.vim_project) modification.vimProject = vim.vim_project;
  }
  return modification;
}

// --- Representations ----------------------------------------------------------------------------

const statusOf = (record: VimRecord) => record.status ?? 'REACHABLE';

/** The product representation: a SOL003 VimConnectionInfo (vimId, vimType, interfaceInfo, accessInfo masked) plus registry attributes. */
export function renderVim(record: VimRecord, baseUrl: string): Record<string, unknown> {
  return {
    id: record.id,
    vimId: record.id,
    name: record.name,
    ...(record.description ? { description: record.description } : {}),
    vimType: record.vimType,
    interfaceInfo: record.interfaceInfo,
    accessInfo: record.maskedAccessInfo ?? {},
    ...(record.extra ? { extra: record.extra } : {}),
    isDefault: record.isDefault,
    status: statusOf(record),
    ...(record.statusChangedAt ? { statusChangedAt: record.statusChangedAt } : {}),
    ...(record.lastCheckedAt ? { lastCheckedAt: record.lastCheckedAt } : {}),
    ...(record.lastError ? { lastError: record.lastError } : {}),
    createdAt: record.createdAt,
    ...(record.updatedAt ? { updatedAt: record.updatedAt } : {}),
    _links: { self: { href: `${baseUrl}/vnfm/v1/vims/${record.id}` } },
  };
}

/** Tacker's legacy representation (tacker/extensions/nfvo.py, vims), auth_cred masked as Tacker does. */
export async function renderTackerVim(record: VimRecord): Promise<Record<string, unknown>> {
  const access = record.maskedAccessInfo ?? {};
  const iface = record.interfaceInfo;
  // A record of a type no longer supported shows as Tacker's default type does.
  const { authCred, vimProject } = (await credentialsOf(canonicalVimType(record.vimType) ?? TACKER_DEFAULT_VIM)).toTacker(
    { maskedAccessInfo: access, interfaceInfo: iface, vimProject: record.vimProject },
    MASK,
  );
  return {
    id: record.id,
    tenant_id: record.tenantId,
    name: record.name,
    description: record.description ?? '',
    type: tackerTypeOf(record.vimType),
    auth_url: iface.endpoint,
    auth_cred: authCred,
    vim_project: vimProject,
    placement_attr: { regions: access.region ? [access.region] : [] },
    shared: false,
    is_default: record.isDefault,
    status: statusOf(record),
    created_at: record.createdAt,
    updated_at: record.updatedAt ?? null,
    extra: record.extra ?? {},
  };
}

/** New LCM operations on an UNREACHABLE VIM fail before 202 (the reachability sweep decides). */
export class VimUnreachableError extends ProblemError {
  constructor(record: VimRecord) {
    super(
      503,
      'VIM Unreachable',
      `VIM ${record.name} (${record.id}) is UNREACHABLE since ${record.statusChangedAt ?? 'its last check'}${record.lastError ? `: ${record.lastError}` : ''}; the operation was not started`,
      {
        extra: { vimId: record.id },
        headers: { 'Retry-After': '60' },
      },
    );
    this.name = 'VimUnreachableError';
  }
}

export function assertReachable(record: VimRecord): void {
  if (record.status === 'UNREACHABLE') throw new VimUnreachableError(record);
}

// The VIM registry's model: registration requests in the product shape (a SOL003 VimConnectionInfo
// with a name) and in Tacker's legacy NFVO shape ({"vim": {type, auth_url, auth_cred, vim_project}}),
// both normalised to one VimRegistration; and the representations, whose credentials are always
// masked ("***"). The real accessInfo only ever travels to the secret store and the driver.
import { z } from 'zod';
import { httpUri, parseRequest } from '#lib/sol/requests.ts';
import { ProblemError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { VimRecord } from '#lib/store/vims.ts';

export const OPENSTACK_VIM = 'ETSINFV.OPENSTACK_KEYSTONE.V_3';
export const KUBERNETES_VIM = 'ETSINFV.KUBERNETES.V_1';
export const MASK = '***';

/** Tacker's short type names <-> SOL003 vimType. */
const TYPE_ALIASES: Record<string, string> = { openstack: OPENSTACK_VIM, kubernetes: KUBERNETES_VIM };

/** The SOL003 vimType of a type name (Tacker's short names, old V_2, any case); undefined when unsupported. */
export function canonicalVimType(type: string): string | undefined {
  const alias = TYPE_ALIASES[type.toLowerCase()];
  if (alias) return alias;
  const upper = type.toUpperCase().replace(/\.V_2$/, '.V_3');
  return [OPENSTACK_VIM, KUBERNETES_VIM].includes(upper) ? upper : undefined;
}

export const tackerTypeOf = (vimType: string): string => (canonicalVimType(vimType) === KUBERNETES_VIM ? 'kubernetes' : 'openstack');

/** Attribute names whose values are credentials: masked in every representation and log line. */
const SECRET_NAME = /pass(word)?|token|secret|private|^key$/i;

export function maskAccessInfo(accessInfo: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(accessInfo).map(([key, value]) => [key, SECRET_NAME.test(key) ? MASK : value]));
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
const openStackAccess = z.object({
  username: z.string().min(1),
  password: z.string().min(1),
  project: z.string().min(1).optional(),
  projectId: z.string().min(1).optional(),
  projectDomain: z.string().min(1).optional(),
  userDomain: z.string().min(1).optional(),
  region: z.string().min(1).optional(),
}).refine((a) => a.project || a.projectId, { message: 'project (a name) or projectId is required' });
const kubernetesAccess = z.object({ bearer_token: z.string().min(1) });
const interfaceInfo = z.object({
  endpoint: httpUri('give them in accessInfo (auth_cred)'),
  ssl_ca_cert: z.string().optional(),
  cert_verify: z.boolean().optional(),
}).loose();

const productRegistration = z.object({
  name,
  description: text.optional(),
  vimType: z.string().min(1),
  interfaceInfo,
  accessInfo: z.record(z.string(), z.unknown()),
  isDefault: z.boolean().optional(),
  extra: z.record(z.string(), z.unknown()).optional(),
});

const productModification = z.object({
  name: name.optional(),
  description: text.optional(),
  isDefault: z.boolean().optional(),
  accessInfo: z.record(z.string(), z.unknown()).optional(),
}).strict();

/** The accessInfo a VIM type needs; a 422 names the missing field, never a value. */
export function checkAccessInfo(vimType: string, accessInfo: Record<string, unknown>): Record<string, unknown> {
  const schema = vimType === KUBERNETES_VIM ? kubernetesAccess : openStackAccess;
  const parsed = schema.safeParse(accessInfo);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${['accessInfo', ...issue.path].join('.')}: ${issue.message}`).join('; ');
    throw new UnprocessableEntityError(`The ${vimType} VIM's credentials are incomplete: ${issues}`);
  }
  return accessInfo;
}

function supportedType(type: string): string {
  const vimType = canonicalVimType(type);
  if (!vimType) throw new UnprocessableEntityError(`VIM type "${type}" is not supported; use ${OPENSTACK_VIM} (openstack) or ${KUBERNETES_VIM} (kubernetes)`);
  return vimType;
}

export function productRegistrationOf(body: unknown): VimRegistration {
  const request = parseRequest(productRegistration, body, 'VIM registration');
  const vimType = supportedType(request.vimType);
  return {
    name: request.name,
    description: request.description,
    vimType,
    interfaceInfo: request.interfaceInfo,
    accessInfo: checkAccessInfo(vimType, request.accessInfo),
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

const str = (value: unknown): string | undefined => (typeof value === 'string' && value.length > 0 ? value : undefined);
const bool = (value: unknown): boolean | undefined => (value === undefined ? undefined : value === true || String(value).toLowerCase() === 'true');

/** Tacker's auth_cred / vim_project -> SOL003 accessInfo (and interfaceInfo additions). */
function accessFromTacker(vimType: string, authCred: Record<string, unknown>, project: Record<string, unknown>, extra: Record<string, unknown> | undefined): { accessInfo: Record<string, unknown>; interfaceExtra: Record<string, unknown> } {
  if (vimType === KUBERNETES_VIM) {
    if (!str(authCred.bearer_token)) throw new UnprocessableEntityError('A Kubernetes VIM needs auth_cred.bearer_token (username/password and OIDC are not supported)');
    return { accessInfo: { bearer_token: authCred.bearer_token }, interfaceExtra: str(authCred.ssl_ca_cert) ? { ssl_ca_cert: authCred.ssl_ca_cert } : {} };
  }
  const accessInfo: Record<string, unknown> = {
    username: authCred.username,
    password: authCred.password,
    project: str(project.name) ?? str(authCred.project_name),
    projectDomain: str(project.project_domain_name) ?? str(authCred.project_domain_name),
    userDomain: str(authCred.user_domain_name),
    region: str(authCred.region) ?? str(authCred.region_name) ?? str(extra?.region),
  };
  for (const key of Object.keys(accessInfo)) if (accessInfo[key] === undefined || accessInfo[key] === '') delete accessInfo[key];
  const interfaceExtra: Record<string, unknown> = {};
  if (authCred.cert_verify !== undefined) interfaceExtra.cert_verify = bool(authCred.cert_verify);
  if (str(authCred.ssl_ca_cert)) interfaceExtra.ssl_ca_cert = authCred.ssl_ca_cert;
  return { accessInfo, interfaceExtra };
}

export function tackerRegistrationOf(body: unknown): VimRegistration {
  const vim = parseRequest(tackerBody, body, 'VIM registration ({"vim": {...}})').vim;
  if (!vim.name) throw new UnprocessableEntityError('vim.name is required');
  if (!vim.auth_url) throw new UnprocessableEntityError('vim.auth_url is required');
  const vimType = supportedType(vim.type ?? 'openstack');
  const endpoint = interfaceInfo.shape.endpoint.safeParse(vim.auth_url);
  if (!endpoint.success) throw new UnprocessableEntityError(`vim.auth_url: ${endpoint.error.issues.map((issue) => issue.message).join('; ')}`);
  const project = vim.vim_project ?? {};
  const { accessInfo, interfaceExtra } = accessFromTacker(vimType, vim.auth_cred ?? {}, project, vim.extra);
  return {
    name: vim.name,
    description: vim.description ?? undefined,
    vimType,
    interfaceInfo: { endpoint: vim.auth_url, ...interfaceExtra },
    accessInfo: checkAccessInfo(vimType, accessInfo),
    isDefault: bool(vim.is_default) ?? false,
    vimProject: project,
    extra: vim.extra,
  };
}

/** `vim set`: name, description, is_default, and new credentials from a config file. */
export function tackerModificationOf(body: unknown, vimType: string): VimModification {
  const vim = parseRequest(tackerBody, body, 'VIM update ({"vim": {...}})').vim;
  const modification: VimModification = {};
  if (vim.name !== undefined) modification.name = vim.name;
  if (vim.description !== undefined && vim.description !== null) modification.description = vim.description;
  if (vim.is_default !== undefined) modification.isDefault = bool(vim.is_default);
  if (vim.auth_cred && Object.keys(vim.auth_cred).length) {
    const { accessInfo } = accessFromTacker(vimType, vim.auth_cred, vim.vim_project ?? {}, vim.extra);
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
export function renderTackerVim(record: VimRecord): Record<string, unknown> {
  const access = record.maskedAccessInfo ?? {};
  const kubernetes = canonicalVimType(record.vimType) === KUBERNETES_VIM;
  const iface = record.interfaceInfo;
  const authCred: Record<string, unknown> = kubernetes
    ? { bearer_token: MASK, ...(iface.ssl_ca_cert ? { ssl_ca_cert: MASK } : {}) }
    : {
      username: access.username ?? '',
      password: MASK,
      user_domain_name: access.userDomain ?? 'Default',
      project_name: access.project ?? '',
      project_domain_name: access.projectDomain ?? 'Default',
      cert_verify: iface.cert_verify === false ? 'False' : 'True',
      auth_url: iface.endpoint,
    };
  const vimProject = kubernetes
    ? { name: record.vimProject?.name ?? 'default' }
    : { name: access.project ?? record.vimProject?.name ?? '', project_domain_name: access.projectDomain ?? 'Default' };
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
    super(503, 'VIM Unreachable', `VIM ${record.name} (${record.id}) is UNREACHABLE since ${record.statusChangedAt ?? 'its last check'}${record.lastError ? `: ${record.lastError}` : ''}; the operation was not started`, {
      extra: { vimId: record.id },
      headers: { 'Retry-After': '60' },
    });
    this.name = 'VimUnreachableError';
  }
}

export function assertReachable(record: VimRecord): void {
  if (record.status === 'UNREACHABLE') throw new VimUnreachableError(record);
}

// SOL005 VNF package resources: create, read, list, modify, delete, and the ways content arrives
// (API upload, upload from a URI, a presigned S3 PUT). Content always lands at the package's
// content key; its S3 ObjectCreated event starts onboarding.
import * as z from 'zod';
import { BadRequestError, ConflictError, NotFoundError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import { httpUri, parseRequest } from '#lib/sol/requests.ts';
import { canSee, listScope, type Caller } from '#lib/auth/tenancy.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { listCollection, type ListResult } from '#lib/sol/listing.ts';
import { mergePatch } from '#lib/sol/merge-patch.ts';
import { packageListKey, VNF_PACKAGE_LIST_INDEXES, type OnboardingState, type VnfPackageRecord } from '#lib/store/packages.ts';
import { log } from '#lib/log.ts';
import { redactSecrets } from '#lib/redact.ts';
import { quotaExceeded, storageLimitsFromEnv, tenantStoredBytes } from './limits.ts';
import { renderVnfPkgInfo, VNF_PKG_ATTRIBUTES, VNF_PKG_DEFAULT_EXCLUDED } from './model.ts';
import { contentKey, deletePrefix, objectSize, presignedPut, putObject } from './storage.ts';

const keyValuePairs = z.record(z.string(), z.unknown());

/** SOL005 9.5.2.2 CreateVnfPkgInfoRequest */
export const createVnfPkgInfoRequest = z.object({ userDefinedData: keyValuePairs.optional() }).strict();

/** SOL005 9.5.2.4 VnfPkgInfoModifications */
export const vnfPkgInfoModifications = z
  .object({
    operationalState: z.enum(['ENABLED', 'DISABLED']).optional(),
    userDefinedData: keyValuePairs.optional(),
  })
  .strict();

/**
 * SOL005 9.5.2.3 UploadVnfPackageFromUriRequest; Tacker's clients send `userName`/`password`
 * (some `username`), the V3 model an OAuth 2.0 client; both are accepted.
 */
export const uploadFromUriRequest = z
  .object({
    addressInformation: httpUri('give them in userName and password (or paramsOauth2ClientCredentials)'),
    authType: z.union([z.enum(['BASIC', 'OAUTH2_CLIENT_CREDENTIALS']), z.array(z.enum(['BASIC', 'OAUTH2_CLIENT_CREDENTIALS']))]).optional(),
    userName: z.string().optional(),
    username: z.string().optional(),
    password: z.string().optional(),
    paramsOauth2ClientCredentials: z
      .object({ clientId: z.string(), clientPassword: z.string(), tokenEndpoint: httpUri('give them in clientId and clientPassword') })
      .optional(),
  })
  .strict();
export type UploadFromUriRequest = z.infer<typeof uploadFromUriRequest>;

/** Uploads stuck this long (a client that never sent the bytes, a crashed run) may be restarted. */
const STALE_UPLOAD_MS = 15 * 60_000;
const UPLOADABLE: readonly OnboardingState[] = ['CREATED'];

export async function createPackage(deps: CoreDeps, caller: Caller, body: unknown): Promise<VnfPackageRecord> {
  const request = redactSecrets(parseRequest(createVnfPkgInfoRequest, body ?? {}, 'CreateVnfPkgInfoRequest'));
  const record: VnfPackageRecord = {
    id: deps.newId(),
    tenantId: caller.tenantId,
    createdAt: deps.now(),
    onboardingState: 'CREATED',
    operationalState: 'DISABLED',
    usageState: 'NOT_IN_USE',
    userDefinedData: request.userDefinedData,
    revision: 1,
  };
  await deps.packages.put(record);
  return record;
}

export async function getPackage(deps: CoreDeps, caller: Caller, id: string): Promise<VnfPackageRecord> {
  const record = await deps.packages.get(id);
  if (!record || !canSee(caller, record.tenantId)) throw new NotFoundError(`VNF package ${id} does not exist`);
  return record;
}

export function listPackages(deps: CoreDeps, caller: Caller, version: 1 | 2, baseUrl: string, rawQuery: string, pageSize: number): Promise<ListResult> {
  return listCollection(
    {
      resource: `vnfpkgm/v${version}/vnf_packages`,
      attributes: VNF_PKG_ATTRIBUTES,
      defaultExcluded: VNF_PKG_DEFAULT_EXCLUDED,
      alwaysIncluded: ['id', '_links'],
      scope: listScope(caller),
      indexes: VNF_PACKAGE_LIST_INDEXES,
      fetch: (scope, limit, after, plan) => deps.packages.listPage(scope, limit, after, plan),
      render: (record) => renderVnfPkgInfo(record, version, baseUrl),
      keyOf: packageListKey,
    },
    rawQuery,
    pageSize,
  );
}

/** SOL005 9.4.3.3.4 PATCH: operationalState and userDefinedData of an ONBOARDED package; 409 when nothing would change. */
export async function modifyPackage(deps: CoreDeps, caller: Caller, id: string, body: unknown): Promise<Record<string, unknown>> {
  const request = redactSecrets(parseRequest(vnfPkgInfoModifications, body, 'VnfPkgInfoModifications'));
  if (request.operationalState === undefined && request.userDefinedData === undefined) {
    throw new BadRequestError('Invalid VnfPkgInfoModifications: give operationalState and/or userDefinedData');
  }
  const current = await getPackage(deps, caller, id);
  if (current.onboardingState !== 'ONBOARDED')
    throw new ConflictError(`VNF package ${id} is ${current.onboardingState}; only an ONBOARDED package can be modified`);
  const set: Record<string, unknown> = {};
  const modifications: Record<string, unknown> = {};
  if (request.operationalState !== undefined && request.operationalState !== current.operationalState) {
    set.operationalState = request.operationalState;
    modifications.operationalState = request.operationalState;
  }
  if (request.userDefinedData !== undefined) {
    const merged = mergePatch(current.userDefinedData ?? {}, request.userDefinedData);
    if (JSON.stringify(merged) !== JSON.stringify(current.userDefinedData ?? {})) {
      set.userDefinedData = merged;
      modifications.userDefinedData = request.userDefinedData;
    }
  }
  if (Object.keys(set).length === 0) {
    throw new ConflictError(
      `VNF package ${id} already is ${current.operationalState}${request.userDefinedData ? ' with that userDefinedData' : ''}; nothing to change`,
    );
  }
  const updated = await deps.packages.change(id, { from: { onboardingState: ['ONBOARDED'], operationalState: current.operationalState }, set });
  if (!updated) throw new ConflictError(`VNF package ${id} changed concurrently; read it again and retry`);
  return modifications;
}

/** SOL005 9.4.3.3.5 DELETE: only a DISABLED package that no VNF instance uses. */
export async function deletePackage(deps: CoreDeps, caller: Caller, id: string): Promise<void> {
  const current = await getPackage(deps, caller, id);
  if (!(await deps.packages.deleteUnused(id))) {
    const now = await deps.packages.get(id);
    if (!now) throw new NotFoundError(`VNF package ${id} does not exist`);
    throw new ConflictError(`VNF package ${id} is ${now.operationalState} and ${now.usageState}; only a DISABLED, NOT_IN_USE package can be deleted`);
  }
  await deletePrefix(`packages/${current.id}/`).catch((error: unknown) => log.error("could not remove a deleted package's objects", { packageId: id, error }));
}

/** Moves a package to UPLOADING for a new upload, or explains why it cannot take one. */
async function beginUpload(deps: CoreDeps, caller: Caller, id: string): Promise<VnfPackageRecord> {
  const current = await getPackage(deps, caller, id);
  const stale =
    (current.onboardingState === 'UPLOADING' || current.onboardingState === 'PROCESSING') &&
    Date.parse(current.stateSince ?? current.createdAt) < Date.now() - STALE_UPLOAD_MS;
  const from = stale ? [current.onboardingState] : UPLOADABLE;
  const updated = await deps.packages.change(id, {
    from: { onboardingState: from },
    set: { onboardingState: 'UPLOADING', stateSince: deps.now() },
    remove: ['onboardingFailureDetails'],
  });
  if (!updated)
    throw new ConflictError(
      `VNF package ${id} is ${current.onboardingState}; content can be uploaded only to a package in CREATED (after a failed onboarding it returns there)`,
    );
  return updated;
}

async function failUpload(deps: CoreDeps, id: string, detail: string): Promise<void> {
  await deps.packages.change(id, {
    from: { onboardingState: ['UPLOADING'] },
    set: { onboardingState: 'CREATED', onboardingFailureDetails: { title: 'VNF package upload failed', status: 422, detail } },
  });
}

/** SOL005 9.4.5.3.3 PUT package_content: the CSAR goes to S3; onboarding follows from its event. */
export async function uploadContent(deps: CoreDeps, caller: Caller, id: string, bytes: Buffer | undefined): Promise<void> {
  if (!bytes || bytes.length === 0) throw new BadRequestError('The request body must be the VNF package (a CSAR zip)');
  if (bytes.readUInt32LE(0) !== 0x04034b50 && bytes.readUInt32LE(0) !== 0x06054b50) {
    throw new UnprocessableEntityError('The request body is not a zip archive (a CSAR must be one)');
  }
  const current = await getPackage(deps, caller, id);
  const overQuota = quotaExceeded(await tenantStoredBytes(deps, current.tenantId, id), bytes.length, storageLimitsFromEnv());
  // 409, as SOL005 9.4.5.3.3 lists for PUT: the tenant's storage, not this request, is the conflict.
  if (overQuota) throw new ConflictError(`The VNF package cannot be stored: ${overQuota}`);
  await beginUpload(deps, caller, id);
  try {
    await putObject(contentKey(id), bytes, 'application/zip');
  } catch (error) {
    log.error('could not store uploaded package content', { packageId: id, error });
    await failUpload(deps, id, 'The package content could not be stored; upload it again');
    throw error;
  }
}

/** SOL005 9.4.6.3.1 upload_from_uri: a state machine fetches the CSAR into S3. */
export async function uploadFromUri(deps: CoreDeps, caller: Caller, id: string, body: unknown): Promise<void> {
  const request = parseRequest(uploadFromUriRequest, body, 'UploadVnfPackageFromUriRequest');
  if (request.userName && request.username && request.userName !== request.username) {
    throw new BadRequestError('Invalid UploadVnfPackageFromUriRequest: userName and username differ');
  }
  await beginUpload(deps, caller, id);
  const user = request.userName ?? request.username;
  let credentialsSecret: string | undefined;
  try {
    // Download credentials travel through the secret store, never through the execution's input.
    if (user !== undefined || request.password !== undefined || request.paramsOauth2ClientCredentials) {
      credentialsSecret = await deps.secrets.create(`vnf-packages/${id}/upload-${deps.newId()}`, {
        userName: user,
        password: request.password,
        oauth2: request.paramsOauth2ClientCredentials,
      });
    }
    await deps.executor.start('PACKAGE_UPLOAD', `${id}-${Date.now()}`, { packageId: id, uri: request.addressInformation, credentialsSecret });
  } catch (error) {
    if (credentialsSecret) await deps.secrets.remove(credentialsSecret).catch(() => undefined);
    await failUpload(deps, id, 'The upload could not be started; try again');
    throw error;
  }
}

/** Extension: a presigned S3 PUT URL for CSARs larger than an API request can carry. */
export async function uploadUrl(deps: CoreDeps, caller: Caller, id: string): Promise<Record<string, unknown>> {
  const current = await getPackage(deps, caller, id);
  if (current.onboardingState !== 'CREATED')
    throw new ConflictError(`VNF package ${id} is ${current.onboardingState}; content can be uploaded only to a package in CREATED`);
  const expiresIn = 3600;
  return {
    uploadUri: await presignedPut(contentKey(id), expiresIn),
    method: 'PUT',
    headers: { 'Content-Type': 'application/zip' },
    expiresAt: new Date(Date.now() + expiresIn * 1000).toISOString(),
  };
}

export async function contentSize(id: string): Promise<number | undefined> {
  return objectSize(contentKey(id));
}

// VNF packages the VNFM takes from its NFVO (SOL003 clause 10, VNF package management, consumed):
// creating an instance from a vnfdId the VNFM has no package for asks the NFVO for its onboarded
// package, downloads the CSAR to the package's content key and lets the ordinary onboarding (the S3
// trigger: structure, manifest hashes, signature, VNFD) verify and record it, as for an upload. The
// request waits for that onboarding within the API's time limit, else answers 503 with Retry-After
// (a retry waits on the same package). The record, marked `source.nfvo`, is the cache: a later create
// uses it. Two creates racing on one vnfdId write the same record id, and only one of them wins.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Caller } from '#lib/auth/tenancy.ts';
import { log } from '#lib/log.ts';
import { quotaExceeded, storageLimitsFromEnv, tenantStoredBytes } from '#lib/packages/limits.ts';
import { contentKey, deletePrefix, putObject } from '#lib/packages/storage.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { ProblemError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import { RecordExistsError } from '#lib/store/dynamo.ts';
import type { VnfPackageRecord } from '#lib/store/packages.ts';
import { EgressDeniedError } from '#lib/egress.ts';
import { nfvoClient, nfvoSettings, type NfvoClient } from './client.ts';
import { ensurePkgmSubscription, nfvoSourceOf, PKGM_API_VERSION, type NfvoSource } from './package-notifications.ts';

/** How long a create may spend on a package from the NFVO, download and onboarding; the API's own limit is 29 s. */
const FETCH_WAIT_MS = 20_000;
const POLL_MS = 200;
/** Seconds a client is asked to wait while a package is still being fetched or onboarded. */
const RETRY_AFTER_SECONDS = 10;
/** A fetch this old and not finished was cut off (a timeout, a crash): the next create starts again. */
const STALE_FETCH_MS = 15 * 60_000;

export class NfvoUnavailableError extends ProblemError {
  constructor(detail: string, retryAfterSeconds = RETRY_AFTER_SECONDS) {
    super(503, 'Service Unavailable', detail, { headers: { 'Retry-After': String(retryAfterSeconds) } });
  }
}

/** The NFVO's words for a 4xx: its ProblemDetails' detail, else the start of the body. */
function nfvoReason(body: string): string {
  try {
    const problem = JSON.parse(body) as { detail?: unknown; title?: unknown };
    if (typeof problem.detail === 'string' && problem.detail) return problem.detail;
    if (typeof problem.title === 'string' && problem.title) return problem.title;
  } catch {
    // Not ProblemDetails.
  }
  return body.slice(0, 300) || 'no reason given';
}

/** One call to the NFVO; a connection it cannot make, or 5xx/429 after the client's retries, is a 503 for our caller. */
async function ask(nfvo: NfvoClient, target: string, options: { accept?: string; stream?: boolean } = {}) {
  let response: Awaited<ReturnType<NfvoClient['call']>>;
  try {
    response = await nfvo.call(target, { method: 'GET', version: PKGM_API_VERSION, ...options });
  } catch (error) {
    if (error instanceof EgressDeniedError) throw new UnprocessableEntityError(`The NFVO's address is refused by the egress policy: ${error.reason}`);
    log.warn('the NFVO could not be reached for a VNF package', { target, error });
    throw new NfvoUnavailableError(`The NFVO could not be reached for ${target}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (response.status >= 500 || response.status === 429) {
    throw new NfvoUnavailableError(`The NFVO answered ${response.status} for ${target}; try again later`);
  }
  return response;
}

/** A record id a vnfdId's n-th fetch for a tenant always gets: racing creates write the same id, and one wins. */
function fetchRecordId(tenantId: string, vnfdId: string, generation: number): string {
  const hex = createHash('sha256').update(`nfvo-package\n${tenantId}\n${vnfdId}\n${generation}`).digest('hex');
  // A version-5-shaped UUID, so the content key is an ordinary package's (packages/<uuid>/package.zip).
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${((Number.parseInt(hex.slice(16, 18), 16) & 0x3f) | 0x80).toString(16)}${hex.slice(18, 20)}-${hex.slice(20, 32)}`;
}

/** Forgets a fetch that did not end ONBOARDED: its objects and its record. */
async function discard(deps: CoreDeps, record: VnfPackageRecord): Promise<void> {
  await deletePrefix(`packages/${record.id}/`).catch((error: unknown) =>
    log.error('could not remove a refused fetched package', { packageId: record.id, error }),
  );
  if (record.onboardingState === 'UPLOADING') {
    await deps.packages.change(record.id, { from: { onboardingState: ['UPLOADING'] }, set: { onboardingState: 'CREATED' } });
  }
  await deps.packages.deleteUnused(record.id);
}

/**
 * Waits for the onboarding of a fetched package: ONBOARDED is the package, back to CREATED a
 * refusal (422 with the verification's reason; nothing is kept), still going after the wait a 503.
 */
async function onboarded(deps: CoreDeps, id: string, vnfdId: string, until: number): Promise<VnfPackageRecord> {
  for (;;) {
    const record = await deps.packages.get(id);
    if (!record) throw new NfvoUnavailableError(`The VNF package for vnfdId ${vnfdId} is being fetched from the NFVO again`, 1);
    if (record.onboardingState === 'ONBOARDED') {
      if (record.vnfdId === vnfdId) return record;
      await deps.packages.change(id, { from: { onboardingState: ['ONBOARDED'] }, set: { operationalState: 'DISABLED' } });
      await discard(deps, record);
      throw new UnprocessableEntityError(`The VNF package the NFVO gave for vnfdId ${vnfdId} holds the VNFD ${record.vnfdId}; it was not kept`);
    }
    if (record.onboardingState === 'CREATED') {
      const reason = record.onboardingFailureDetails?.detail ?? 'no reason was recorded';
      await discard(deps, record);
      throw new UnprocessableEntityError(`The VNF package the NFVO has for vnfdId ${vnfdId} was refused: ${reason}`);
    }
    if (Date.now() >= until) {
      throw new NfvoUnavailableError(`The VNF package for vnfdId ${vnfdId} is being onboarded from the NFVO; create the instance again shortly`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** The onboardingStates (SOL005 PackageOnboardingStateType) of a package the NFVO is still onboarding. */
const ONBOARDING_AT_NFVO = new Set(['CREATED', 'UPLOADING', 'PROCESSING']);

/** 503 with Retry-After: the NFVO has the package but has not onboarded it yet (a create or change_vnfpkg is to be tried again). */
function stillOnboarding(vnfdId: string, how: string): NfvoUnavailableError {
  return new NfvoUnavailableError(`The NFVO is still onboarding the VNF package with vnfdId ${vnfdId} (${how}); try again shortly`);
}

/** Streams the NFVO's CSAR to the package's content key, refusing more bytes than `limit`. */
async function download(nfvo: NfvoClient, vnfdId: string, packageId: string, limit: number): Promise<void> {
  const target = `vnfpkgm/v2/onboarded_vnf_packages/${encodeURIComponent(vnfdId)}/package_content`;
  const response = await ask(nfvo, target, { accept: 'application/zip', stream: true });
  // SOL003 10.4.5.3.2: 409 while the package is not ONBOARDED (it went back to onboarding since its VnfPkgInfo was read).
  if (response.status === 409) {
    throw stillOnboarding(vnfdId, `its package content answered 409: ${nfvoReason(response.body)}`);
  }
  if (response.status !== 200 || !response.stream) {
    throw new UnprocessableEntityError(`The NFVO did not give the package content of vnfdId ${vnfdId} (${response.status}): ${nfvoReason(response.body)}`);
  }
  const declared = Number(response.headers['content-length'] ?? Number.NaN);
  const tooBig = (bytes: number) =>
    new UnprocessableEntityError(
      `The NFVO's VNF package for vnfdId ${vnfdId} is ${bytes} bytes or more; at most ${limit} are accepted (MaxPackageExpandedBytes, the tenant's quota)`,
    );
  if (declared > limit) {
    response.stream.destroy();
    throw tooBig(declared);
  }
  let bytes = 0;
  let refusal: Error | undefined;
  const limited = Readable.from(
    (async function* () {
      for await (const chunk of response.stream as Readable) {
        bytes += (chunk as Buffer).length;
        if (bytes > limit) {
          refusal = tooBig(bytes);
          throw refusal;
        }
        yield chunk as Buffer;
      }
    })(),
  );
  try {
    await putObject(contentKey(packageId), limited, 'application/zip');
  } catch (error) {
    if (refusal) throw refusal;
    throw new NfvoUnavailableError(
      `The VNF package for vnfdId ${vnfdId} could not be downloaded from the NFVO: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/**
 * The tenant's package for `vnfdId` from the NFVO: the one fetched before (whatever its state says
 * about new instances), one being fetched by another request (waited for), or a new fetch. Undefined
 * when no NFVO is configured.
 */
export async function packageFromNfvo(deps: CoreDeps, caller: Caller, vnfdId: string, baseUrl: string): Promise<VnfPackageRecord | undefined> {
  const nfvo = nfvoClient(deps.secrets);
  const settings = nfvoSettings();
  if (!nfvo || !settings) return undefined;
  const until = Date.now() + FETCH_WAIT_MS;
  const fetched = (await deps.packages.findByVnfdId(vnfdId)).filter((p) => p.tenantId === caller.tenantId && nfvoSourceOf(p));
  const current = fetched.find((p) => !nfvoSourceOf(p)?.refetch);
  if (current?.onboardingState === 'ONBOARDED') return current;
  if (current && Date.parse(current.stateSince ?? current.createdAt) > Date.now() - STALE_FETCH_MS) return onboarded(deps, current.id, vnfdId, until);
  if (current) await discard(deps, current);

  const info = await ask(nfvo, `vnfpkgm/v2/onboarded_vnf_packages/${encodeURIComponent(vnfdId)}`);
  if (info.status === 404) throw new UnprocessableEntityError(`There is no VNF package with vnfdId ${vnfdId} here or at the NFVO`);
  if (info.status !== 200)
    throw new UnprocessableEntityError(`The NFVO refused to give the VNF package of vnfdId ${vnfdId} (${info.status}): ${nfvoReason(info.body)}`);
  const pkgInfo = JSON.parse(info.body) as { id?: string; onboardingState?: string; operationalState?: string };
  // Still on its way at the NFVO: it will be there, so the client is asked to come back, and nothing is kept.
  if (pkgInfo.onboardingState && ONBOARDING_AT_NFVO.has(pkgInfo.onboardingState))
    throw stillOnboarding(vnfdId, `its VNF package ${pkgInfo.id} is ${pkgInfo.onboardingState}`);
  if (pkgInfo.onboardingState !== 'ONBOARDED' || pkgInfo.operationalState !== 'ENABLED') {
    throw new UnprocessableEntityError(
      `The NFVO's VNF package ${pkgInfo.id} with vnfdId ${vnfdId} is ${pkgInfo.onboardingState} and ${pkgInfo.operationalState}; it must be ONBOARDED and ENABLED`,
    );
  }

  // Told of what becomes of the packages from now on: subscribed before the first is downloaded.
  await ensurePkgmSubscription(deps, nfvo, settings, baseUrl);
  const id = fetchRecordId(caller.tenantId, vnfdId, fetched.length);
  const now = deps.now();
  const record: VnfPackageRecord = {
    id,
    tenantId: caller.tenantId,
    createdAt: now,
    stateSince: now,
    onboardingState: 'UPLOADING',
    operationalState: 'DISABLED',
    usageState: 'NOT_IN_USE',
    vnfdId,
    source: { nfvo: true, vnfPkgId: String(pkgInfo.id ?? '') } satisfies NfvoSource,
    revision: 1,
  };
  try {
    await deps.packages.put(record);
  } catch (error) {
    // Another create is fetching this vnfdId: its package is ours too.
    if (error instanceof RecordExistsError) return onboarded(deps, id, vnfdId, until);
    throw error;
  }
  log.info('fetching a VNF package from the NFVO', { packageId: id, vnfdId, nfvoPackageId: pkgInfo.id });
  try {
    const limits = storageLimitsFromEnv();
    const used = await tenantStoredBytes(deps, caller.tenantId, id);
    const over = quotaExceeded(used, 1, limits);
    if (over) throw new UnprocessableEntityError(`The VNF package for vnfdId ${vnfdId} cannot be stored: ${over}`);
    // Onboarding checks the expanded size and the quota again, on what the CSAR declares.
    await download(nfvo, vnfdId, id, Math.min(limits.maxExpandedBytes, limits.tenantQuotaBytes - used));
  } catch (error) {
    await discard(deps, record);
    throw error;
  }
  // The content's ObjectCreated event onboards it (functions/triggers/package-onboarding.ts).
  return onboarded(deps, id, vnfdId, until);
}

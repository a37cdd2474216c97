// The NFVO's word on the packages the VNFM took from it (SOL003 10.4.7, 10.5.2.9): at the first
// fetch the VNFM subscribes to the NFVO's VnfPackageChangeNotifications (one subscription for the
// deployment, all packages; made again at a later fetch when the NFVO has dropped it), with a
// callback the VNFM serves (POST /vnfm/v1/nfvo/pkgm_notifications, GET answering 204 for the NFVO's
// test). The NFVO authenticates there as any API client does: with an OAuth 2.0 client of the
// VNFM's own issuer created for it by the operator, whose id and secret sit in the NFVO secret
// (callbackClientId, callbackClientSecret) and travel in the subscription's `authentication`. A
// change to DISABLED, or a deletion, makes the kept package refuse new instances (a deleted one is
// fetched again by the next create); ENABLED again re-enables it. Existing instances are never
// touched.
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Caller } from '#lib/auth/tenancy.ts';
import { log } from '#lib/log.ts';
import type { CoreDeps } from '#lib/ports.ts';
import { BadRequestError, ProblemError } from '#lib/sol/errors.ts';
import { conditionHeld, documentClient, requiredEnv } from '#lib/store/dynamo.ts';
import { DynamoLeaseStore, leaseId } from '#lib/store/leases.ts';
import type { NfvoClient, NfvoSecret, NfvoSettings } from './client.ts';
import type { VnfPackageRecord } from '#lib/store/packages.ts';

/** The Version header of the NFVO's VNF package management API (SOL003 10.1, API version 2). */
export const PKGM_API_VERSION = '2.1.0';

/** Where a package came from, on its record: the NFVO's own package id, and whether it must be fetched again. */
export interface NfvoSource {
  nfvo: true;
  vnfPkgId: string;
  /** The NFVO deleted it (PKG_DELETE): no new instance uses it, and the next create fetches the package again. */
  refetch?: boolean;
}

export const nfvoSourceOf = (record: VnfPackageRecord): NfvoSource | undefined =>
  (record.source as NfvoSource | undefined)?.nfvo ? (record.source as NfvoSource) : undefined;

export const PKGM_CALLBACK_PATH = '/vnfm/v1/nfvo/pkgm_notifications';
const SUBSCRIPTION_LEASE = 'nfvo-pkgm-subscription';
/** How long one create may take to subscribe before another may try. */
const SUBSCRIBING_MS = 60_000;
const FOREVER_MS = 100 * 365 * 24 * 3600_000;

/** The OAuth 2.0 client the NFVO calls back with, from the NFVO secret; undefined without one. */
async function callbackClient(deps: CoreDeps, settings: NfvoSettings): Promise<{ clientId: string; clientSecret: string } | undefined> {
  try {
    const secret = (await deps.secrets.read(settings.secretId, { maxAgeMs: 5 * 60_000 })) as NfvoSecret;
    return secret.callbackClientId && secret.callbackClientSecret
      ? { clientId: secret.callbackClientId, clientSecret: secret.callbackClientSecret }
      : undefined;
  } catch (error) {
    if (error instanceof Error && error.name === 'ResourceNotFoundException') return undefined;
    throw error;
  }
}

/** The id of the subscription the deployment made (on its lease item), if it made one. */
async function recordedSubscription(table: string): Promise<string | undefined> {
  const item = await documentClient().send(new GetCommand({ TableName: table, Key: { id: leaseId(SUBSCRIPTION_LEASE) }, ConsistentRead: true }));
  const id = item.Item?.subscriptionId;
  return typeof id === 'string' && id ? id : undefined;
}

/**
 * Whether the NFVO still has the subscription (SOL003 10.4.8.3.2 GET: 404 once it is gone). Only a
 * 404 says it is gone: an NFVO that cannot answer now is taken to still have it.
 */
async function subscriptionHeld(nfvo: NfvoClient, subscriptionId: string): Promise<boolean> {
  try {
    const response = await nfvo.call(`vnfpkgm/v2/subscriptions/${encodeURIComponent(subscriptionId)}`, { method: 'GET', version: PKGM_API_VERSION });
    return response.status !== 404;
  } catch (error) {
    log.warn("could not check the VNFM's subscription at the NFVO; taken to be there", { subscriptionId, error });
    return true;
  }
}

/**
 * Subscribes to the NFVO's package change notifications, once for the deployment: a lease in the
 * packages table (no tenant sees it) is taken while subscribing and kept once subscribed, with the
 * subscription's id. Each package fetch first asks the NFVO for that subscription: one the NFVO
 * dropped (404) is forgotten and made again. A failure is logged and gives the lease back, so the
 * next fetch tries again; the fetch itself goes on.
 */
export async function ensurePkgmSubscription(deps: CoreDeps, nfvo: NfvoClient, settings: NfvoSettings, baseUrl: string): Promise<void> {
  const table = requiredEnv('VNF_PACKAGES_TABLE');
  const recorded = await recordedSubscription(table);
  if (recorded) {
    if (await subscriptionHeld(nfvo, recorded)) return;
    log.warn("the NFVO no longer has the VNFM's package notification subscription; subscribing again", { subscriptionId: recorded });
    // Only the lease that records the dropped one: a request that subscribed again meanwhile keeps its own.
    await conditionHeld(() =>
      documentClient().send(
        new DeleteCommand({
          TableName: table,
          Key: { id: leaseId(SUBSCRIPTION_LEASE) },
          ConditionExpression: 'subscriptionId = :s',
          ExpressionAttributeValues: { ':s': recorded },
        }),
      ),
    );
  }
  const leases = new DynamoLeaseStore(table);
  const holder = deps.newId();
  const now = Date.now();
  // Subscribed already, or another request is subscribing (and gives the lease back if it fails).
  if (!(await leases.acquire(SUBSCRIPTION_LEASE, holder, now, now + SUBSCRIBING_MS))) return;
  try {
    const callback = await callbackClient(deps, settings);
    const request = {
      filter: { notificationTypes: ['VnfPackageChangeNotification'] },
      callbackUri: `${baseUrl}${PKGM_CALLBACK_PATH}`,
      ...(callback
        ? {
            authentication: {
              authType: ['OAUTH2_CLIENT_CREDENTIALS'],
              paramsOauth2ClientCredentials: { clientId: callback.clientId, clientPassword: callback.clientSecret, tokenEndpoint: `${baseUrl}/oauth2/token` },
            },
          }
        : {}),
    };
    const response = await nfvo.call('vnfpkgm/v2/subscriptions', { method: 'POST', version: PKGM_API_VERSION, body: request });
    if (response.status !== 201) throw new Error(`the NFVO answered ${response.status}: ${response.body.slice(0, 300)}`);
    const subscriptionId = String((JSON.parse(response.body) as { id?: unknown }).id ?? '');
    await conditionHeld(() =>
      documentClient().send(
        new UpdateCommand({
          TableName: table,
          Key: { id: leaseId(SUBSCRIPTION_LEASE) },
          UpdateExpression: 'SET expiresAt = :forever, subscriptionId = :s',
          ConditionExpression: 'holder = :h',
          ExpressionAttributeValues: { ':forever': now + FOREVER_MS, ':s': subscriptionId, ':h': holder },
        }),
      ),
    );
    log.info("subscribed to the NFVO's VNF package notifications", { subscriptionId, authenticated: Boolean(callback) });
  } catch (error) {
    log.warn("could not subscribe to the NFVO's VNF package notifications; the next fetch tries again", { error });
    await leases.release(SUBSCRIPTION_LEASE, holder);
  }
}

/** Only the NFVO's callback client (or an administrator) may tell the VNFM what became of the NFVO's packages. */
function mayNotify(caller: Caller, callbackClientId: string | undefined): boolean {
  return caller.admin === true || (callbackClientId !== undefined && caller.clientId === callbackClientId);
}

interface ChangeNotification {
  notificationType?: unknown;
  vnfPkgId?: unknown;
  vnfdId?: unknown;
  changeType?: unknown;
  operationalState?: unknown;
}

/**
 * A notification from the NFVO (SOL003 10.5.2.9 VnfPackageChangeNotification): applied to every
 * tenant's package kept from that NFVO package. Other notification types are acknowledged and ignored.
 */
export async function applyPkgmNotification(deps: CoreDeps, settings: NfvoSettings, caller: Caller, body: unknown): Promise<void> {
  if (!mayNotify(caller, (await callbackClient(deps, settings))?.clientId)) {
    throw new ProblemError(403, 'Forbidden', "Only the NFVO's callback client may send VNF package notifications");
  }
  const notification = (body ?? {}) as ChangeNotification;
  if (notification.notificationType !== 'VnfPackageChangeNotification') return;
  const { vnfdId, vnfPkgId, changeType, operationalState } = notification;
  if (typeof vnfdId !== 'string' || typeof vnfPkgId !== 'string' || (changeType !== 'OP_STATE_CHANGE' && changeType !== 'PKG_DELETE')) {
    throw new BadRequestError('Invalid VnfPackageChangeNotification: vnfdId, vnfPkgId and changeType (OP_STATE_CHANGE, PKG_DELETE) are required');
  }
  if (changeType === 'OP_STATE_CHANGE' && operationalState !== 'ENABLED' && operationalState !== 'DISABLED') {
    throw new BadRequestError('Invalid VnfPackageChangeNotification: OP_STATE_CHANGE needs operationalState ENABLED or DISABLED');
  }
  const kept = (await deps.packages.findByVnfdId(vnfdId)).filter((p) => nfvoSourceOf(p)?.vnfPkgId === vnfPkgId && !nfvoSourceOf(p)?.refetch);
  for (const record of kept) {
    const set: Record<string, unknown> =
      changeType === 'PKG_DELETE'
        ? { operationalState: 'DISABLED', source: { ...(nfvoSourceOf(record) as NfvoSource), refetch: true } satisfies NfvoSource }
        : { operationalState };
    // Only an ONBOARDED package has an operational state to change; one still onboarding is judged when it is.
    await deps.packages.change(record.id, { from: { onboardingState: ['ONBOARDED'] }, set });
    log.info("applied the NFVO's change to a kept VNF package", { packageId: record.id, vnfdId, changeType, operationalState });
  }
}

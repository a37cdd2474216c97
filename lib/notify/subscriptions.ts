// Subscriptions of every API family (SOL003 5.4.18-19, 7.4.4-5; SOL005 9.4.8-9): create (after
// testing the callback), list, read, delete. The subscriber's authentication goes to the secret
// store; the record and every representation leave it out. Each family brings its request, record
// and store (SubscriptionCreation); the steps they share are here.
import { EgressDeniedError, parseEgressUrl } from '#lib/egress.ts';
import { BadRequestError, NotFoundError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import { canSee, listScope, type Caller } from '#lib/auth/tenancy.ts';
import { listCollection, type ListResult } from '#lib/sol/listing.ts';
import type { ListIndexes } from '#lib/sol/plan.ts';
import type { VnfInstanceSubscriptionFilter } from '#lib/sol/subscription-filter.ts';
import { log } from '#lib/log.ts';
import { subscriptionListKey, type StoredSubscription, type SubscriptionStore } from '#lib/store/subscriptions.ts';
import type { VnfInstanceStore } from '#lib/store/vnf-instances.ts';
import { callCallback, TokenError } from './callback.ts';
import type { NotifyDeps } from './ports.ts';
import type { NotificationAuth, SubscriptionAuthentication } from './model.ts';

/** Reads VNF instances by id (only `get` is needed). */
export type InstanceLookup = Pick<VnfInstanceStore, 'get'>;

/**
 * For the families whose filter names VNF instances (SOL003 4.4.1.5: VNF LCM, VNF FM). A
 * subscription belongs to its creator's tenant and is only ever matched against that tenant's
 * changes, so the VNF instances its filter names by id must be the tenant's own (an admin's
 * subscription too): any other id, whether of another tenant or of no instance at all, gets the
 * same 422, so the answer never tells whether another tenant's instance exists. Names are not
 * checked (they are not unique and match only within the tenant anyway).
 */
export async function checkNamedInstances(instances: InstanceLookup, caller: Caller, filter: VnfInstanceSubscriptionFilter | undefined): Promise<void> {
  for (const id of new Set(filter?.vnfInstanceIds ?? [])) {
    const instance = await instances.get(id);
    if (instance?.tenantId !== caller.tenantId) {
      throw new UnprocessableEntityError(`filter.vnfInstanceSubscriptionFilter.vnfInstanceIds: no such VNF instance ${id}`);
    }
  }
}

/** The one way this subscription authenticates: OAuth 2.0 when offered, else BASIC (TLS_CERT is not supported). */
export function chooseAuth(authentication: SubscriptionAuthentication | undefined): NotificationAuth | undefined {
  if (!authentication) return undefined;
  const types = authentication.authType;
  if (types.includes('OAUTH2_CLIENT_CREDENTIALS')) {
    const params = authentication.paramsOauth2ClientCredentials;
    if (!params)
      throw new UnprocessableEntityError(
        'authentication: OAUTH2_CLIENT_CREDENTIALS needs paramsOauth2ClientCredentials (clientId, clientPassword, tokenEndpoint); nothing is provisioned out of band',
      );
    try {
      parseEgressUrl(params.tokenEndpoint);
    } catch (error) {
      throw new BadRequestError(`authentication.paramsOauth2ClientCredentials.tokenEndpoint: ${(error as EgressDeniedError).reason}`);
    }
    return { authType: 'OAUTH2_CLIENT_CREDENTIALS', ...params };
  }
  if (types.includes('BASIC')) {
    const params = authentication.paramsBasic;
    if (!params) throw new UnprocessableEntityError('authentication: BASIC needs paramsBasic (userName, password); nothing is provisioned out of band');
    return { authType: 'BASIC', ...params };
  }
  throw new UnprocessableEntityError('authentication: TLS_CERT is not supported; use BASIC or OAUTH2_CLIENT_CREDENTIALS');
}

/**
 * SOL003 5.4.18.3.1: the VNFM tests the callback with a GET, authenticated as the subscription will
 * be, and needs 204. `version` is the Version header of the family's notifications.
 */
export async function testCallback(deps: NotifyDeps, callbackUri: string, auth: NotificationAuth | undefined, version: string): Promise<void> {
  let status: number;
  try {
    status = (await callCallback(callbackUri, { method: 'GET', version, auth, policy: deps.egress })).status;
  } catch (error) {
    if (error instanceof EgressDeniedError) throw new UnprocessableEntityError(`The callback URI is not allowed by the VNFM's egress policy: ${error.reason}`);
    if (error instanceof TokenError) throw new UnprocessableEntityError(`No OAuth 2.0 token could be obtained for the callback: ${error.message}`);
    throw new UnprocessableEntityError(`The callback URI could not be reached: ${(error as Error).message}`);
  }
  if (status !== 204) throw new UnprocessableEntityError(`Testing the callback URI with GET answered ${status}; 204 No Content is required`);
}

/** What every family's subscription record holds besides its own attributes. */
export interface SubscriptionBase extends StoredSubscription {
  createdAt: string;
  callbackUri: string;
  authSecret?: string;
  revision: number;
}

/** How one API family creates a subscription (the steps every family shares are in createSubscriptionRecord). */
export interface SubscriptionCreation<R extends SubscriptionBase> {
  /** The request type's name, for 400 details. */
  requestName: string;
  /** The Version header of the callback test. */
  version: string;
  store: Pick<SubscriptionStore<R>, 'create'>;
  /** Checks of the family's own, made before the callback is tested. */
  check?(): Promise<void>;
  /** The record, from the attributes every family shares. */
  build(base: SubscriptionBase): R;
}

/**
 * Creates a subscription of any API family: the callback URI must be allowed, the authentication
 * usable and the callback must answer the test; the credentials go to the secret store (removed
 * again if the record cannot be written).
 */
export async function createSubscriptionRecord<R extends SubscriptionBase>(
  deps: NotifyDeps,
  caller: Caller,
  request: { callbackUri: string; authentication?: SubscriptionAuthentication },
  creation: SubscriptionCreation<R>,
): Promise<R> {
  try {
    parseEgressUrl(request.callbackUri);
  } catch (error) {
    throw new BadRequestError(`Invalid ${creation.requestName}: callbackUri: ${(error as EgressDeniedError).reason}`);
  }
  const auth = chooseAuth(request.authentication);
  await creation.check?.();
  await testCallback(deps, request.callbackUri, auth, creation.version);

  const id = deps.newId();
  const now = deps.now();
  const authSecret = auth ? await deps.secrets.create(`subscriptions/${id}`, auth) : undefined;
  const record = creation.build({
    id,
    tenantId: caller.tenantId,
    createdAt: now,
    createdSeq: `${now}#${id}`,
    callbackUri: request.callbackUri,
    authSecret,
    revision: 1,
  });
  try {
    await creation.store.create(record);
  } catch (error) {
    if (authSecret) await deps.secrets.remove(authSecret).catch(() => undefined);
    throw error;
  }
  return record;
}

/** The caller's subscription `id` of a family's store; another tenant's is a 404 like a missing one. */
export async function readSubscriptionRecord<R extends SubscriptionBase>(store: Pick<SubscriptionStore<R>, 'get'>, caller: Caller, id: string): Promise<R> {
  const record = await store.get(id);
  if (!record || !canSee(caller, record.tenantId)) throw new NotFoundError(`Subscription ${id} does not exist`);
  return record;
}

/** SOL003 5.4.19.3.5, SOL005 9.4.9.3.5: deletes the caller's subscription and its credentials; nothing is sent for it any more. */
export async function deleteSubscriptionRecord<R extends SubscriptionBase>(
  store: Pick<SubscriptionStore<R>, 'get' | 'delete'>,
  secrets: NotifyDeps['secrets'],
  caller: Caller,
  id: string,
): Promise<void> {
  await readSubscriptionRecord(store, caller, id);
  const deleted = await store.delete(id);
  if (!deleted) throw new NotFoundError(`Subscription ${id} does not exist`);
  if (deleted.authSecret) {
    await secrets
      .remove(deleted.authSecret)
      .catch((error: unknown) => log.warn("could not remove a deleted subscription's secret", { subscriptionId: id, error }));
  }
}

/** A page of the caller's subscriptions of one family's store, with SOL013 filters, selectors and paging. */
export function listSubscriptionRecords<R extends SubscriptionBase>(
  store: Pick<SubscriptionStore<R>, 'listPage'>,
  caller: Caller,
  list: { resource: string; attributes: readonly string[]; render(record: R): Record<string, unknown>; indexes?: ListIndexes },
  rawQuery: string,
  pageSize: number,
): Promise<ListResult> {
  return listCollection(
    {
      ...list,
      defaultExcluded: [],
      alwaysIncluded: ['id', '_links'],
      scope: listScope(caller),
      fetch: (scope, limit, after, plan) => store.listPage(scope, limit, after, plan),
      keyOf: subscriptionListKey,
    },
    rawQuery,
    pageSize,
  );
}

// SOL003 VNF LCM subscriptions and notifications as this product stores, renders and queues them:
// the LccnSubscriptionRequest schema (clause 5.5.2.15), the stored subscription (its
// authentication lives in the secret store, never here), the LccnSubscription representation
// (5.5.2.16), the state-change events the LCM writes to the notification queue, and the
// notifications (5.5.2.17-19) rendered from an event for one subscription.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { LCM_OPERATION_STATES, LCM_OPERATION_TYPES, type ApiMajorVersion, type LcmOperationState, type LcmOperationType, type ProblemDetailsRecord, v1OpOccParts } from '#lib/sol/model.ts';

/** SOL003 5.5.4.x: the notification types of the VNF LCM interface. */
export const NOTIFICATION_TYPES = ['VnfLcmOperationOccurrenceNotification', 'VnfIdentifierCreationNotification', 'VnfIdentifierDeletionNotification'] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** SOL003 5.5.4.7 LcmOpOccNotificationVerbosityType */
export const VERBOSITY = ['FULL', 'SHORT'] as const;
export type Verbosity = (typeof VERBOSITY)[number];

/** The Version header of a notification: the API version of the subscription's major version. */
export const NOTIFICATION_API_VERSION: Record<ApiMajorVersion, string> = { 1: '1.3.0', 2: '2.0.0' };

const identifier = z.string().min(1).max(255);
const nonEmpty = <T extends z.ZodType>(item: T) => z.array(item).min(1);

/** SOL003 4.4.1.5 VnfInstanceSubscriptionFilter */
export const vnfInstanceSubscriptionFilter = z.object({
  vnfdIds: nonEmpty(identifier).optional(),
  vnfProductsFromProviders: nonEmpty(z.object({
    vnfProvider: z.string().min(1),
    vnfProducts: nonEmpty(z.object({
      vnfProductName: z.string().min(1),
      versions: nonEmpty(z.object({
        vnfSoftwareVersion: z.string().min(1),
        vnfdVersions: nonEmpty(z.string().min(1)).optional(),
      }).strict()).optional(),
    }).strict()).optional(),
  }).strict()).optional(),
  vnfInstanceIds: nonEmpty(identifier).optional(),
  vnfInstanceNames: nonEmpty(z.string()).optional(),
}).strict();
export type VnfInstanceSubscriptionFilter = z.infer<typeof vnfInstanceSubscriptionFilter>;

/** SOL003 5.5.3.12 LifecycleChangeNotificationsFilter */
export const lifecycleChangeNotificationsFilter = z.object({
  vnfInstanceSubscriptionFilter: vnfInstanceSubscriptionFilter.optional(),
  notificationTypes: nonEmpty(z.enum(NOTIFICATION_TYPES)).optional(),
  operationTypes: nonEmpty(z.enum(LCM_OPERATION_TYPES)).optional(),
  operationStates: nonEmpty(z.enum(LCM_OPERATION_STATES)).optional(),
}).strict().refine(
  (f) => !(f.operationTypes || f.operationStates) || !f.notificationTypes || f.notificationTypes.includes('VnfLcmOperationOccurrenceNotification'),
  { message: 'operationTypes and operationStates apply only when notificationTypes contains VnfLcmOperationOccurrenceNotification', path: ['operationTypes'] },
);
export type LifecycleChangeNotificationsFilter = z.infer<typeof lifecycleChangeNotificationsFilter>;

/** SOL013 8.3.4 / SOL003 4.4.1.5 SubscriptionAuthentication */
export const subscriptionAuthentication = z.object({
  authType: z.array(z.enum(['BASIC', 'OAUTH2_CLIENT_CREDENTIALS', 'TLS_CERT'])).min(1),
  paramsBasic: z.object({ userName: z.string().min(1), password: z.string().min(1) }).strict().optional(),
  paramsOauth2ClientCredentials: z.object({ clientId: z.string().min(1), clientPassword: z.string().min(1), tokenEndpoint: z.string().min(1) }).strict().optional(),
}).strict();
export type SubscriptionAuthentication = z.infer<typeof subscriptionAuthentication>;

/** SOL003 5.5.2.15 LccnSubscriptionRequest */
export const lccnSubscriptionRequest = z.object({
  filter: lifecycleChangeNotificationsFilter.optional(),
  callbackUri: z.string().min(1).max(2048),
  authentication: subscriptionAuthentication.optional(),
  verbosity: z.enum(VERBOSITY).optional(),
}).strict();
export type LccnSubscriptionRequest = z.infer<typeof lccnSubscriptionRequest>;

/** What the secret store holds for a subscription: exactly one way to authenticate. */
export type NotificationAuth =
  | { authType: 'BASIC'; userName: string; password: string }
  | { authType: 'OAUTH2_CLIENT_CREDENTIALS'; clientId: string; clientPassword: string; tokenEndpoint: string };

export interface SubscriptionRecord {
  id: string;
  tenantId: string;
  createdAt: string;
  /** GSI sort key: createdAt#id. */
  createdSeq: string;
  callbackUri: string;
  filter?: LifecycleChangeNotificationsFilter;
  verbosity: Verbosity;
  /** Internal: the API the subscription was made through; its notifications link to the same API. */
  apiMajorVersion: ApiMajorVersion;
  apiRoot: string;
  /** Internal: the secret holding the NotificationAuth, when the subscriber asked for authentication. */
  authSecret?: string;
  revision: number;
}

export const SUBSCRIPTION_ATTRIBUTES = ['id', 'filter', 'callbackUri', 'verbosity', '_links'] as const;

export function renderSubscription(record: SubscriptionRecord, version: ApiMajorVersion, baseUrl: string): Record<string, unknown> {
  const body: Record<string, unknown> = { id: record.id };
  if (record.filter) body.filter = record.filter;
  body.callbackUri = record.callbackUri;
  body.verbosity = record.verbosity;
  body._links = { self: { href: `${baseUrl}/vnflcm/v${version}/subscriptions/${record.id}` } };
  return body;
}

/** The VNF instance attributes subscription filters look at, as they were when the change happened. */
export interface InstanceSnapshot {
  vnfdId: string;
  vnfProvider: string;
  vnfProductName: string;
  vnfSoftwareVersion: string;
  vnfdVersion: string;
  vnfInstanceName?: string;
}

export interface OpOccSnapshot {
  id: string;
  operation: LcmOperationType;
  operationState: LcmOperationState;
  isAutomaticInvocation: boolean;
  error?: ProblemDetailsRecord;
  resourceChanges?: Record<string, unknown>;
  changedInfo?: Record<string, unknown>;
  changedExtConnectivity?: unknown[];
  modificationsTriggeredByVnfPkgChange?: Record<string, unknown>;
}

/**
 * A change the LCM recorded, as queued for the notifier (SQS FIFO, grouped by VNF instance). It
 * carries everything a notification needs, so matching and rendering never read records that may
 * have moved on (or been deleted) since.
 */
export interface NotificationEvent {
  kind: 'event';
  /** Stable: the same change always has the same id, so queue and NFVO can deduplicate. */
  notificationId: string;
  notificationType: NotificationType;
  tenantId: string;
  vnfInstanceId: string;
  timeStamp: string;
  instance: InstanceSnapshot;
  opOcc?: OpOccSnapshot;
}

/** One notification for one subscription, as queued for delivery (grouped by subscription and VNF instance). */
export interface NotificationDelivery {
  kind: 'delivery';
  /** The API family of the subscription (VNF LCM when absent). */
  family?: 'vnffm' | 'vnfpkgm';
  subscriptionId: string;
  notificationId: string;
  body: Record<string, unknown>;
}

/**
 * A change of an API family the notifier is extended with (see NotificationFamily): it carries what
 * that family needs to match and render it, and its own FIFO group (its changes reach each NFVO in order).
 */
export interface FamilyEvent {
  kind: string;
  notificationId: string;
  notificationType: string;
  tenantId: string;
  groupId: string;
  timeStamp: string;
}

/** What the notifier knows itself; a FamilyEvent is recognised by its family's kind. */
export type NotificationMessage = NotificationEvent | NotificationDelivery | import('#lib/fm/model.ts').AlarmEvent;

/** A name-based UUID (version 8, SHA-256) for `key`: the same change always gets the same notification id. */
export function stableId(key: string): string {
  const hex = createHash('sha256').update(key).digest('hex');
  const variant = ((parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** States whose notification carries `error` (SOL003 5.5.2.17). */
const ERROR_STATES: readonly LcmOperationState[] = ['FAILED_TEMP', 'FAILED', 'ROLLED_BACK'];

/** Renders the notification an event makes for one subscription (SOL003 5.5.2.17-19). */
export function renderNotification(event: NotificationEvent, subscription: Pick<SubscriptionRecord, 'id' | 'verbosity' | 'apiMajorVersion' | 'apiRoot'>): Record<string, unknown> {
  const prefix = `${subscription.apiRoot}/vnflcm/v${subscription.apiMajorVersion}`;
  const links: Record<string, { href: string }> = {
    vnfInstance: { href: `${prefix}/vnf_instances/${event.vnfInstanceId}` },
    subscription: { href: `${prefix}/subscriptions/${subscription.id}` },
  };
  const common = {
    id: event.notificationId,
    notificationType: event.notificationType,
    subscriptionId: subscription.id,
    timeStamp: event.timeStamp,
  };
  const opOcc = event.opOcc;
  if (event.notificationType !== 'VnfLcmOperationOccurrenceNotification' || !opOcc) {
    return { ...common, vnfInstanceId: event.vnfInstanceId, _links: links };
  }
  links.vnfLcmOpOcc = { href: `${prefix}/vnf_lcm_op_occs/${opOcc.id}` };
  const start = opOcc.operationState === 'STARTING';
  const body: Record<string, unknown> = {
    ...common,
    notificationStatus: start ? 'START' : 'RESULT',
    operationState: opOcc.operationState,
    vnfInstanceId: event.vnfInstanceId,
    operation: opOcc.operation,
    isAutomaticInvocation: opOcc.isAutomaticInvocation,
    verbosity: subscription.verbosity,
    vnfLcmOpOccId: opOcc.id,
  };
  if (!start && subscription.verbosity === 'FULL') {
    // NOTE 1: the cumulative resource changes, present only when there are some.
    for (const key of ['affectedVnfcs', 'affectedVirtualLinks', 'affectedExtLinkPorts', 'affectedVirtualStorages'] as const) {
      const changes = opOcc.resourceChanges?.[key];
      if (Array.isArray(changes) && changes.length > 0) body[key] = changes;
    }
    // NOTE 3: a CHANGE_VNFPKG reports modificationsTriggeredByVnfPkgChange instead of changedInfo.
    if (opOcc.operation === 'CHANGE_VNFPKG') {
      if (opOcc.modificationsTriggeredByVnfPkgChange && Object.keys(opOcc.modificationsTriggeredByVnfPkgChange).length > 0) body.modificationsTriggeredByVnfPkgChange = opOcc.modificationsTriggeredByVnfPkgChange;
    } else if (opOcc.changedInfo && Object.keys(opOcc.changedInfo).length > 0) {
      body.changedInfo = opOcc.changedInfo;
    }
    if (opOcc.changedExtConnectivity?.length) body.changedExtConnectivity = opOcc.changedExtConnectivity;
  }
  if (opOcc.error && ERROR_STATES.includes(opOcc.operationState)) body.error = opOcc.error;
  if (subscription.apiMajorVersion === 1) v1OpOccParts(body);
  body._links = links;
  return body;
}

// What every API family's notifications share, whatever the family: how a subscriber asks to be
// authenticated (SOL013 8.3.4) and what the secret store keeps of it, the change events and the
// per-subscription deliveries as they travel on the notification queue, and the stable
// notification id. The families themselves (VNF LCM, VNF FM, VNF packages) live with their API
// (lib/lcm/notifications.ts, lib/fm/notifications.ts, lib/packages/notifications.ts).
import { createHash } from 'node:crypto';
import * as z from 'zod';

/** SOL013 8.3.4 / SOL003 4.4.1.5 SubscriptionAuthentication */
export const subscriptionAuthentication = z
  .object({
    authType: z.array(z.enum(['BASIC', 'OAUTH2_CLIENT_CREDENTIALS', 'TLS_CERT'])).min(1),
    paramsBasic: z
      .object({ userName: z.string().min(1), password: z.string().min(1) })
      .strict()
      .optional(),
    paramsOauth2ClientCredentials: z
      .object({ clientId: z.string().min(1), clientPassword: z.string().min(1), tokenEndpoint: z.string().min(1) })
      .strict()
      .optional(),
  })
  .strict();
export type SubscriptionAuthentication = z.infer<typeof subscriptionAuthentication>;

/** The attributes every family's subscription request has (LccnSubscriptionRequest, FmSubscriptionRequest, PkgmSubscriptionRequest). */
export const subscriptionRequestFields = {
  callbackUri: z.string().min(1).max(2048),
  authentication: subscriptionAuthentication.optional(),
};

/** What the secret store holds for a subscription: exactly one way to authenticate. */
export type NotificationAuth =
  | { authType: 'BASIC'; userName: string; password: string }
  | { authType: 'OAUTH2_CLIENT_CREDENTIALS'; clientId: string; clientPassword: string; tokenEndpoint: string };

/**
 * A recorded change of some API family, as queued for the notifier: it carries everything its
 * family needs to match and render it (so nothing reads records that may have moved on or been
 * deleted since), and its FIFO group (its changes reach each subscriber in order). The notifier
 * knows the family by `kind` (see NotificationFamily).
 */
export interface FamilyEvent {
  kind: string;
  /** Stable: the same change always has the same id, so queue and subscriber can deduplicate. */
  notificationId: string;
  notificationType: string;
  tenantId: string;
  /** The FIFO group: a VNF instance, a VNF package. */
  groupId: string;
  timeStamp: string;
}

/** One notification for one subscription, as queued for delivery (grouped by subscription and the event's group). */
export interface NotificationDelivery {
  kind: 'delivery';
  /**
   * The API family of the subscription. Absent in the deliveries of the family that predates the
   * others (VNF LCM), which are still written that way so that a notifier of either version reads them.
   */
  family?: string;
  subscriptionId: string;
  notificationId: string;
  body: Record<string, unknown>;
}

/** What the notifier reads from the queue: a change to fan out, or a delivery to make. */
export type NotificationMessage = FamilyEvent | NotificationDelivery;

/** A name-based UUID (version 8, SHA-256) for `key`: the same change always gets the same notification id. */
export function stableId(key: string): string {
  const hex = createHash('sha256').update(key).digest('hex');
  const variant = ((parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

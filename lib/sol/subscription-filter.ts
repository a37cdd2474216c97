// SOL003 4.4.1.5 VnfInstanceSubscriptionFilter, shared by the subscriptions of every API family
// that speaks of VNF instances (VNF LCM, VNF FM) and, for its product part, VNF packages: the
// schema, the instance attributes a filter looks at (kept with each change, so a match never reads
// a record that has moved on since), and the match itself. All attributes present must match
// (AND); an array matches when one of its values does (OR).
import * as z from 'zod';
import type { VnfInstanceRecord } from './model.ts';

/** An identifier attribute of a filter (SOL013 7.2.x: Identifier, at most 255 characters here). */
export const identifier = z.string().min(1).max(255);
/** A filter's array attributes: absent or at least one value. */
export const nonEmpty = <T extends z.ZodType>(item: T) => z.array(item).min(1);

/** SOL003 4.4.1.5 VnfInstanceSubscriptionFilter */
export const vnfInstanceSubscriptionFilter = z
  .object({
    vnfdIds: nonEmpty(identifier).optional(),
    vnfProductsFromProviders: nonEmpty(
      z
        .object({
          vnfProvider: z.string().min(1),
          vnfProducts: nonEmpty(
            z
              .object({
                vnfProductName: z.string().min(1),
                versions: nonEmpty(
                  z
                    .object({
                      vnfSoftwareVersion: z.string().min(1),
                      vnfdVersions: nonEmpty(z.string().min(1)).optional(),
                    })
                    .strict(),
                ).optional(),
              })
              .strict(),
          ).optional(),
        })
        .strict(),
    ).optional(),
    vnfInstanceIds: nonEmpty(identifier).optional(),
    vnfInstanceNames: nonEmpty(z.string()).optional(),
  })
  .strict();
export type VnfInstanceSubscriptionFilter = z.infer<typeof vnfInstanceSubscriptionFilter>;

/** The VNF instance attributes subscription filters look at, as they were when the change happened. */
export interface InstanceSnapshot {
  vnfdId: string;
  vnfProvider: string;
  vnfProductName: string;
  vnfSoftwareVersion: string;
  vnfdVersion: string;
  vnfInstanceName?: string;
}

export function instanceSnapshot(record: VnfInstanceRecord): InstanceSnapshot {
  return {
    vnfdId: record.vnfdId,
    vnfProvider: record.vnfProvider,
    vnfProductName: record.vnfProductName,
    vnfSoftwareVersion: record.vnfSoftwareVersion,
    vnfdVersion: record.vnfdVersion,
    vnfInstanceName: record.vnfInstanceName,
  };
}

export function instanceMatches(filter: VnfInstanceSubscriptionFilter, vnfInstanceId: string, instance: InstanceSnapshot): boolean {
  if (filter.vnfdIds && !filter.vnfdIds.includes(instance.vnfdId)) return false;
  if (
    filter.vnfProductsFromProviders &&
    !filter.vnfProductsFromProviders.some(
      (provider) =>
        provider.vnfProvider === instance.vnfProvider &&
        (!provider.vnfProducts ||
          provider.vnfProducts.some(
            (product) =>
              product.vnfProductName === instance.vnfProductName &&
              (!product.versions ||
                product.versions.some(
                  (version) =>
                    version.vnfSoftwareVersion === instance.vnfSoftwareVersion &&
                    (!version.vnfdVersions || version.vnfdVersions.includes(instance.vnfdVersion)),
                )),
          )),
    )
  ) {
    return false;
  }
  if (filter.vnfInstanceIds && !filter.vnfInstanceIds.includes(vnfInstanceId)) return false;
  if (filter.vnfInstanceNames && (instance.vnfInstanceName === undefined || !filter.vnfInstanceNames.includes(instance.vnfInstanceName))) return false;
  return true;
}

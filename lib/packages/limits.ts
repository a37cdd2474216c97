// How much package storage is allowed: the most one CSAR may expand to (MaxPackageExpandedBytes)
// and the most one tenant may hold in CSARs and the files taken out of them (TenantStorageQuotaBytes).
// A package's own sizes are recorded on it at onboarding, so a tenant's use is the sum over its records.
import type { CoreDeps } from '#lib/ports.ts';
import type { VnfPackageRecord } from '#lib/store/packages.ts';

const GiB = 1024 ** 3;

export interface StorageLimits {
  maxExpandedBytes: number;
  tenantQuotaBytes: number;
}

function positiveNumber(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

/** From the template parameters MaxPackageExpandedBytes and TenantStorageQuotaBytes. */
export function storageLimitsFromEnv(): StorageLimits {
  return {
    maxExpandedBytes: positiveNumber('MAX_PACKAGE_EXPANDED_BYTES', 2 * GiB),
    tenantQuotaBytes: positiveNumber('TENANT_STORAGE_QUOTA_BYTES', 50 * GiB),
  };
}

/** Bytes a package holds in S3: its CSAR and, at most, every entry once more (extracted). */
export function storedBytes(record: Pick<VnfPackageRecord, 'contentSize' | 'expandedSize'>): number {
  return (record.contentSize ?? 0) + (record.expandedSize ?? 0);
}

/** What the tenant's packages hold, leaving out `exceptId` (the package being uploaded again or onboarded). */
export async function tenantStoredBytes(deps: CoreDeps, tenantId: string, exceptId: string): Promise<number> {
  let total = 0;
  let after: Record<string, string | number> | undefined;
  do {
    const page = await deps.packages.listPage(tenantId, 500, after);
    for (const record of page.items) if (record.id !== exceptId) total += storedBytes(record);
    after = page.after;
  } while (after);
  return total;
}

export function quotaExceeded(used: number, adding: number, limits: StorageLimits): string | undefined {
  if (used + adding <= limits.tenantQuotaBytes) return undefined;
  return `the tenant's packages hold ${used} bytes; ${adding} more would exceed its storage quota of ${limits.tenantQuotaBytes} bytes (TenantStorageQuotaBytes); delete packages it no longer needs`;
}

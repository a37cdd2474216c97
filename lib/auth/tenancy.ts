// Tenancy: who is calling, and which tenants' records they may see. Every service that holds
// tenant-owned records (VNF instances, op occs, packages, VIMs, subscriptions, alarms) asks here.
import { ALL_TENANTS, type TenantScope } from '#lib/sol/paging.ts';

export interface Caller {
  tenantId: string;
  /** The OAuth 2.0 client that sent the request (recorded on the op occs it starts). */
  clientId?: string;
  /** The `admin` scope: sees and acts on every tenant's records. */
  admin?: boolean;
  /** The API root the request came through (scheme, host, stage), where the API knows it. */
  apiRoot?: string;
}

/** Whether a record of `tenantId` exists for this caller; anything else must look like 404, never 403. */
export function canSee(caller: Caller, tenantId: string): boolean {
  return caller.admin === true || caller.tenantId === tenantId;
}

/** Whose records this caller's lists show: every tenant's for an admin, else its own tenant's. */
export function listScope(caller: Caller): TenantScope {
  return caller.admin === true ? ALL_TENANTS : caller.tenantId;
}

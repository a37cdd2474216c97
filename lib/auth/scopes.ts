// OAuth 2.0 scopes (SOL013 8.3) and which one each API route needs: the one place that maps route
// paths to scopes. Read methods need `<family>:read`, every other method `<family>:write`; a path
// no rule names needs `admin` (deny by default), so a new route is never open by accident.

/** The resource server's identifier: on Cognito, token scopes read `vnfm/<scope>`. */
export const RESOURCE_SERVER = 'vnfm';

export const API_SCOPE_FAMILIES = ['vnflcm', 'vnfpkgm', 'subscriptions', 'vims', 'vnffm', 'vnfpm'] as const;
export type ApiScopeFamily = (typeof API_SCOPE_FAMILIES)[number];

/** Every scope the resource server declares, without the resource server prefix. */
export const ALL_SCOPES: readonly string[] = [...API_SCOPE_FAMILIES.flatMap((family) => [`${family}:read`, `${family}:write`]), 'admin'];

/** `tenant:<id>`: the tenant a client belongs to travels as a scope (Cognito client-credentials tokens carry no custom claims). */
export const TENANT_SCOPE_PREFIX = 'tenant:';

/** Paths anyone may read without a token (SOL013 api_versions). */
const PUBLIC_PATH = /^\/(vnflcm|vnfpkgm|vnffm|vnfpm|vnfm)(\/v\d+)?\/api_versions$/;

/** First match wins: subscriptions of any API family before the family itself. */
const RULES: ReadonlyArray<[RegExp, ApiScopeFamily]> = [
  [/^\/(vnflcm|vnfpkgm|vnffm)\/v\d+\/subscriptions(\/|$)/, 'subscriptions'],
  [/^\/vnflcm\//, 'vnflcm'],
  [/^\/vnfpkgm\//, 'vnfpkgm'],
  // The NFVO's package notifications to the VNFM (lib/nfvo/package-notifications.ts).
  [/^\/vnfm\/v\d+\/nfvo\/pkgm_notifications$/, 'vnfpkgm'],
  [/^\/(v1\.0\/vims|vnfm\/v\d+\/vims)(\/|\.json|$)/, 'vims'],
  [/^\/(vnffm\/|alert(\/|$)|server_notification(\/|$))/, 'vnffm'],
  // PM jobs and thresholds are their own notification targets (no subscriptions): all of /vnfpm is vnfpm.
  [/^\/(vnfpm\/|pm_event(\/|$)|pm_threshold(\/|$))/, 'vnfpm'],
];

export type ScopeRequirement = { public: true } | { public: false; scope: string };

/** The scope a request needs, from the route path as written in the template (or the raw path for $default). */
export function requiredScope(method: string, routePath: string): ScopeRequirement {
  if (PUBLIC_PATH.test(routePath)) return { public: true };
  const rule = RULES.find(([pattern]) => pattern.test(routePath));
  if (!rule) return { public: false, scope: 'admin' };
  const read = method === 'GET' || method === 'HEAD';
  return { public: false, scope: `${rule[1]}:${read ? 'read' : 'write'}` };
}

/** Scopes without the resource server prefix (`vnfm/vnflcm:read` -> `vnflcm:read`). */
export function normalizeScopes(scopes: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const scope of scopes) out.add(scope.startsWith(`${RESOURCE_SERVER}/`) ? scope.slice(RESOURCE_SERVER.length + 1) : scope);
  return out;
}

/** A write scope implies read of the same family; admin implies everything. */
export function grants(scopes: ReadonlySet<string>, needed: string): boolean {
  if (scopes.has(needed) || scopes.has('admin')) return true;
  return needed.endsWith(':read') && scopes.has(needed.replace(/:read$/, ':write'));
}

export function tenantOf(scopes: ReadonlySet<string>): string | undefined {
  for (const scope of scopes) if (scope.startsWith(TENANT_SCOPE_PREFIX)) return scope.slice(TENANT_SCOPE_PREFIX.length);
  return undefined;
}

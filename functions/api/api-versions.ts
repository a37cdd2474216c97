// API function for SOL013 "API versions" resources of every API family, and the catch-all route
// that answers paths no other route serves with a ProblemDetails 404.
import { API_VERSIONS, httpApi, type ApiFamily, type RouteTable } from './common/http.ts';

function versionsOf(family: ApiFamily): RouteTable {
  const info = (major: 1 | 2) => ({ version: API_VERSIONS[family][major].current, isDeprecated: false });
  const answer = (uriPrefix: string, versions: Array<ReturnType<typeof info>>) => ({ GET: async () => ({ status: 200, body: { uriPrefix, apiVersions: versions } }) });
  return {
    [`/${family}/api_versions`]: answer(`/${family}`, [info(1), info(2)]),
    [`/${family}/v1/api_versions`]: answer(`/${family}/v1`, [info(1)]),
    [`/${family}/v2/api_versions`]: answer(`/${family}/v2`, [info(2)]),
  };
}

export const handler = httpApi({ ...versionsOf('vnflcm'), ...versionsOf('vnfpkgm') });

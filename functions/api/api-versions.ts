// API function for SOL013 "API versions" resources of every API family, and the catch-all route
// that answers paths no other route serves with a ProblemDetails 404.
// X-Ray subsegments for its invocations and AWS SDK calls (lib/trace.ts; not every function has room for it).
import '#lib/trace.ts';
import { API_VERSIONS, httpApi, type ApiFamily, type RouteTable } from './common/http.ts';

function versionsOf(family: ApiFamily, majors: ReadonlyArray<1 | 2>): RouteTable {
  const info = (major: 1 | 2) => ({ version: API_VERSIONS[family][major].current, isDeprecated: false });
  const answer = (uriPrefix: string, versions: Array<ReturnType<typeof info>>) => ({
    GET: { handler: async () => ({ status: 200, body: { uriPrefix, apiVersions: versions } }) },
  });
  return {
    [`/${family}/api_versions`]: answer(`/${family}`, majors.map(info)),
    ...Object.fromEntries(majors.map((major) => [`/${family}/v${major}/api_versions`, answer(`/${family}/v${major}`, [info(major)])])),
  };
}

// SOL003 VNF fault management is served as v1 only, VNF performance management as v2 only.
export const handler = httpApi({
  ...versionsOf('vnflcm', [1, 2]),
  ...versionsOf('vnfpkgm', [1, 2]),
  ...versionsOf('vnffm', [1]),
  ...versionsOf('vnfpm', [2]),
});

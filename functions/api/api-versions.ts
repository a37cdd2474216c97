// API function for SOL013 "API versions" resources, and the catch-all route that answers paths
// no other route serves with a ProblemDetails 404.
import { API_VERSIONS, httpApi } from './common/http.ts';

const uriPrefix = (prefix: string) => ({ uriPrefix: prefix });

export const handler = httpApi({
  '/vnflcm/api_versions': {
    GET: async () => ({
      status: 200,
      body: { ...uriPrefix('/vnflcm'), apiVersions: [{ version: API_VERSIONS[1].current, isDeprecated: false }, { version: API_VERSIONS[2].current, isDeprecated: false }] },
    }),
  },
  '/vnflcm/v1/api_versions': {
    GET: async () => ({ status: 200, body: { ...uriPrefix('/vnflcm/v1'), apiVersions: [{ version: API_VERSIONS[1].current, isDeprecated: false }] } }),
  },
  '/vnflcm/v2/api_versions': {
    GET: async () => ({ status: 200, body: { ...uriPrefix('/vnflcm/v2'), apiVersions: [{ version: API_VERSIONS[2].current, isDeprecated: false }] } }),
  },
});

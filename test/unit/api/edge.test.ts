// The API edge without a runtime: fake API Gateway (payload 2.0) events through the real route
// tables and httpApi, checking what the edge decides before any store is reached: the 400 for a
// bad body, the 404 for an unknown route, the Version header, and a good body reaching its
// handler parsed (v1 shapes read as v2's).
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { httpApi, type ApiRequest, type Route, type RouteTable } from '#functions/api/common/http.ts';
import { handler as apiVersions } from '#functions/api/api-versions.ts';
import { handler as vnfInstances, routes as vnfInstanceRoutes } from '#functions/api/vnf-instances.ts';
import { handler as vims } from '#functions/api/vims.ts';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

interface FakeRequest {
  routeKey: string;
  path: string;
  pathParameters?: Record<string, string>;
  query?: string;
  headers?: Record<string, string>;
  body?: unknown;
}

function fakeEvent(request: FakeRequest): APIGatewayProxyEventV2 {
  const method = request.routeKey === '$default' ? 'GET' : (request.routeKey.split(' ')[0] ?? 'GET');
  const body = request.body === undefined ? undefined : typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
  return {
    version: '2.0',
    routeKey: request.routeKey,
    rawPath: request.path,
    rawQueryString: request.query ?? '',
    headers: { host: 'vnfm.example', ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...request.headers },
    pathParameters: request.pathParameters,
    requestContext: {
      accountId: '000000000000',
      apiId: 'unit',
      domainName: 'vnfm.example',
      domainPrefix: 'vnfm',
      requestId: 'r-1',
      routeKey: request.routeKey,
      stage: '$default',
      time: '',
      timeEpoch: 0,
      http: { method, path: request.path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'unit' },
    },
    body,
    isBase64Encoded: false,
  };
}

const context = { getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

async function call(handler: Handler, request: FakeRequest): Promise<{ status: number; headers: Record<string, string>; body: Record<string, unknown> }> {
  const result = await handler(fakeEvent(request), context);
  const headers = Object.fromEntries(Object.entries(result.headers ?? {}).map(([name, value]) => [name.toLowerCase(), String(value)]));
  return { status: result.statusCode ?? 0, headers, body: result.body ? (JSON.parse(result.body) as Record<string, unknown>) : {} };
}

/** A real route with its handler replaced by one that records what it was given. */
function spied(route: Route | undefined): { route: Route; seen: ApiRequest[] } {
  assert.ok(route, 'the route exists');
  const seen: ApiRequest[] = [];
  return {
    route: {
      ...route,
      handler: async (request) => {
        seen.push(request);
        return { status: 202 };
      },
    },
    seen,
  };
}

const V2 = { version: '2.0.0' };

describe('API edge', () => {
  before(() => {
    // No authorization server: every caller is the default tenant's admin.
    process.env.VNFM_AUTH = 'off';
  });

  it('answers a body its route schema refuses with 400 problem+json naming the SOL type, before the handler runs', async () => {
    const answer = await call(vnfInstances, {
      routeKey: 'POST /vnflcm/v2/vnf_instances',
      path: '/vnflcm/v2/vnf_instances',
      headers: V2,
      body: { vnfInstanceName: 'x' },
    });
    assert.equal(answer.status, 400);
    assert.equal(answer.headers['content-type'], 'application/problem+json');
    assert.equal(answer.body.status, 400);
    assert.match(String(answer.body.detail), /^Invalid CreateVnfRequest: .*vnfdId/);
    assert.equal(answer.headers.version, '2.0.0');
  });

  it('answers a body that is not JSON with 400, and a body of another media type with 415', async () => {
    const notJson = await call(vnfInstances, { routeKey: 'POST /vnflcm/v2/vnf_instances', path: '/vnflcm/v2/vnf_instances', headers: V2, body: '{"vnfdId":' });
    assert.equal(notJson.status, 400);
    assert.match(String(notJson.body.detail), /not valid JSON/);
    const xml = await call(vnfInstances, {
      routeKey: 'POST /vnflcm/v2/vnf_instances',
      path: '/vnflcm/v2/vnf_instances',
      headers: { ...V2, 'content-type': 'application/xml' },
      body: '<a/>',
    });
    assert.equal(xml.status, 415);
  });

  it('answers an unknown path with 404 problem+json carrying the Version of the family it names', async () => {
    const answer = await call(apiVersions, { routeKey: '$default', path: '/vnfpkgm/v1/no_such_thing' });
    assert.equal(answer.status, 404);
    assert.equal(answer.headers['content-type'], 'application/problem+json');
    assert.match(String(answer.body.detail), /No resource at \/vnfpkgm\/v1\/no_such_thing/);
    assert.equal(answer.headers.version, '1.3.0');
  });

  it('answers a method the route does not take with 405', async () => {
    const answer = await call(vnfInstances, { routeKey: 'PUT /vnflcm/v2/vnf_instances', path: '/vnflcm/v2/vnf_instances', headers: V2, body: {} });
    assert.equal(answer.status, 405);
  });

  it('carries the Version header: the path major version by default, the requested one when supported, 400/406 otherwise', async () => {
    const v1 = await call(apiVersions, { routeKey: 'GET /vnflcm/v1/api_versions', path: '/vnflcm/v1/api_versions' });
    assert.equal(v1.status, 200);
    assert.equal(v1.headers.version, '1.3.0');
    assert.deepEqual(v1.body, { uriPrefix: '/vnflcm/v1', apiVersions: [{ version: '1.3.0', isDeprecated: false }] });
    const missing = await call(vnfInstances, { routeKey: 'POST /vnflcm/v2/vnf_instances', path: '/vnflcm/v2/vnf_instances', body: { vnfdId: 'd' } });
    assert.equal(missing.status, 400);
    assert.match(String(missing.body.detail), /"Version" request header is required/);
    assert.equal(missing.headers.version, '2.0.0');
    const tooNew = await call(vnfInstances, {
      routeKey: 'POST /vnflcm/v2/vnf_instances',
      path: '/vnflcm/v2/vnf_instances',
      headers: { version: '2.9.0' },
      body: { vnfdId: 'd' },
    });
    assert.equal(tooNew.status, 406);
  });

  it('hands a valid body to its handler parsed by the route schema, with the caller and base URL', async () => {
    const { route, seen } = spied(vnfInstanceRoutes['/vnflcm/v2/vnf_instances']?.POST);
    const api = httpApi({ '/vnflcm/v2/vnf_instances': { POST: route } } satisfies RouteTable);
    const answer = await call(api, {
      routeKey: 'POST /vnflcm/v2/vnf_instances',
      path: '/vnflcm/v2/vnf_instances',
      headers: V2,
      body: { vnfdId: 'vnfd-1', vnfInstanceName: 'one' },
    });
    assert.equal(answer.status, 202);
    assert.equal(answer.headers.version, '2.0.0');
    assert.equal(seen.length, 1);
    assert.deepEqual(seen[0]?.body, { vnfdId: 'vnfd-1', vnfInstanceName: 'one' });
    assert.equal(seen[0]?.apiMajorVersion, 2);
    assert.equal(seen[0]?.baseUrl, 'https://vnfm.example');
    assert.equal(seen[0]?.caller.tenantId, 'default');
  });

  it('reads a v1 body in its own shape into the v2 shape the handler takes', async () => {
    const path = '/vnflcm/v1/vnf_instances/{vnfInstanceId}';
    const { route, seen } = spied(vnfInstanceRoutes[path]?.PATCH);
    const api = httpApi({ [path]: { PATCH: route } });
    const answer = await call(api, {
      routeKey: `PATCH ${path}`,
      path: '/vnflcm/v1/vnf_instances/i-1',
      pathParameters: { vnfInstanceId: 'i-1' },
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { vimConnectionInfo: [{ id: 'vim-1', vimType: 'kubernetes' }] },
    });
    assert.equal(answer.status, 202);
    assert.equal(answer.headers.version, '1.3.0');
    assert.deepEqual(seen[0]?.params, { vnfInstanceId: 'i-1' });
    const modification = seen[0]?.body as { vimConnectionInfo?: Record<string, unknown> } | undefined;
    assert.deepEqual(Object.keys(modification?.vimConnectionInfo ?? {}), ['vim-1']);
    // The same array is not a v2 body.
    const v2 = spied(vnfInstanceRoutes['/vnflcm/v2/vnf_instances/{vnfInstanceId}']?.PATCH);
    const refused = await call(httpApi({ [path]: { PATCH: v2.route } }), {
      routeKey: `PATCH ${path}`,
      path: '/vnflcm/v1/vnf_instances/i-1',
      pathParameters: { vnfInstanceId: 'i-1' },
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { vimConnectionInfo: [{ id: 'vim-1', vimType: 'kubernetes' }] },
    });
    assert.equal(refused.status, 400);
    assert.match(String(refused.body.detail), /^Invalid VnfInfoModificationRequest: /);
    assert.equal(v2.seen.length, 0);
  });

  it('parses the query once with the route parser: an unknown parameter is a 400 before any store is read', async () => {
    const answer = await call(vims, { routeKey: 'GET /vnfm/v1/vims', path: '/vnfm/v1/vims', query: 'colour=blue' });
    assert.equal(answer.status, 400);
    assert.equal(answer.headers['content-type'], 'application/problem+json');
    assert.equal(answer.body.detail, 'Unknown query parameter "colour"');
    let given: unknown;
    const api = httpApi({
      '/q': {
        GET: {
          query: (params) => params.getAll('x'),
          handler: async (request) => {
            given = request.query;
            return { status: 200, body: {} };
          },
        },
      },
    });
    assert.equal((await call(api, { routeKey: 'GET /q', path: '/q', query: 'x=1&x=2' })).status, 200);
    assert.deepEqual(given, ['1', '2']);
  });

  it('answers a malformed identifier in the path with 404, whatever the body', async () => {
    const path = '/vnflcm/v2/vnf_instances/{vnfInstanceId}';
    const { route, seen } = spied(vnfInstanceRoutes[path]?.PATCH);
    const answer = await call(httpApi({ [path]: { PATCH: route } }), {
      routeKey: `PATCH ${path}`,
      path: '/vnflcm/v2/vnf_instances/a b',
      pathParameters: { vnfInstanceId: 'a b' },
      headers: { ...V2, 'content-type': 'application/merge-patch+json' },
      body: { nonsense: true },
    });
    assert.equal(answer.status, 404);
    assert.equal(seen.length, 0);
  });
});

// The console function (functions/api/console.ts) without a runtime: the page and its hashed
// script and stylesheet with their media types, caching and security headers; /console sent to
// /console/; a ProblemDetails 404 for any other path, traversals and encodings included.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { buildConsole } from '#local/console-build.ts';

type Handler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;
let handler: Handler;

before(async () => {
  await buildConsole();
  // Imported once the assets module exists (a fresh clone has none before the build).
  handler = (await import('#functions/api/console.ts')).handler as unknown as Handler;
});

function get(path: string, method = 'GET'): Promise<APIGatewayProxyStructuredResultV2> {
  return handler({
    version: '2.0',
    routeKey: path === '/console' ? 'GET /console' : 'GET /console/{proxy+}',
    rawPath: path,
    rawQueryString: '',
    headers: { host: 'vnfm.example' },
    requestContext: { http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' }, requestId: 'r-1' },
    isBase64Encoded: false,
  } as unknown as APIGatewayProxyEventV2);
}

function assertSecurityHeaders(result: APIGatewayProxyStructuredResultV2): void {
  const headers = result.headers ?? {};
  assert.match(String(headers['Content-Security-Policy']), /default-src 'none'; script-src 'self'; style-src 'self'.*frame-ancestors 'none'/);
  assert.doesNotMatch(String(headers['Content-Security-Policy']), /unsafe-inline|unsafe-eval|\*/);
  assert.equal(headers['X-Content-Type-Options'], 'nosniff');
}

describe('the console function', () => {
  it('serves the page at /console/, naming its hashed script and stylesheet, which are cached for good', async () => {
    const page = await get('/console/');
    assert.equal(page.statusCode, 200);
    assert.equal(page.headers?.['Content-Type'], 'text/html; charset=utf-8');
    assert.equal(page.headers?.['Cache-Control'], 'no-cache');
    assertSecurityHeaders(page);
    const script = /src="(app-[0-9a-f]{12}\.js)"/.exec(page.body ?? '')?.[1];
    const style = /href="(style-[0-9a-f]{12}\.css)"/.exec(page.body ?? '')?.[1];
    assert.ok(script && style, page.body);
    const js = await get(`/console/${script}`);
    assert.equal(js.statusCode, 200);
    assert.equal(js.headers?.['Content-Type'], 'text/javascript; charset=utf-8');
    assert.equal(js.headers?.['Cache-Control'], 'public, max-age=31536000, immutable');
    assertSecurityHeaders(js);
    const css = await get(`/console/${style}`);
    assert.equal(css.headers?.['Content-Type'], 'text/css; charset=utf-8');
    assert.match(css.body ?? '', /:root/);
  });

  it('sends /console to /console/, where the relative names resolve', async () => {
    const result = await get('/console');
    assert.equal(result.statusCode, 308);
    assert.equal(result.headers?.Location, '/console/');
  });

  it('answers a ProblemDetails 404 for every other path, traversals included', async () => {
    for (const path of [
      '/console/nope.js',
      '/console/../template.yaml',
      '/console/%2e%2e/package.json',
      '/console/..%2Fpackage.json',
      '/console/constructor',
      '/console/__proto__',
      '/console//etc/passwd',
      '/console/app.js',
    ]) {
      const result = await get(path);
      assert.equal(result.statusCode, 404, path);
      assert.equal(result.headers?.['Content-Type'], 'application/problem+json', path);
      assert.equal(JSON.parse(result.body ?? '{}').status, 404, path);
      assertSecurityHeaders(result);
    }
  });

  it('refuses methods other than GET and HEAD', async () => {
    const result = await get('/console/', 'POST');
    assert.equal(result.statusCode, 405);
    assert.equal(result.headers?.Allow, 'GET, HEAD');
    assert.equal((await get('/console/', 'HEAD')).body, '');
  });
});

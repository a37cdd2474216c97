// Function serving the operator's console (console/, README "Console") at /console/: the page, its
// script and its stylesheet, embedded in the bundle at build time (local/console-build.ts writes
// the module imported here). No authentication: the files hold nothing of a tenant; the page signs
// in to the API itself. A path is looked up among those files and nothing else, so no path can
// reach beyond them; every answer carries a CSP that allows only this origin and no framing.
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { log } from '#lib/log.ts';
import { instrumented } from '#lib/metrics.ts';
import { CONSOLE_ASSETS } from './console-assets.generated.ts';

type Result = APIGatewayProxyStructuredResultV2;

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

const PREFIX = '/console';

function problem(status: number, title: string, detail: string, extra: Record<string, string> = {}): Result {
  return {
    statusCode: status,
    headers: { 'Content-Type': 'application/problem+json', 'Cache-Control': 'no-store', ...SECURITY_HEADERS, ...extra },
    body: JSON.stringify({ type: 'about:blank', title, status, detail }),
  };
}

/** The asset a request path names ('' for the page), or undefined: only the embedded names match. */
function assetName(path: string): string | undefined {
  if (path === `${PREFIX}/` || path === `${PREFIX}/index.html`) return '';
  if (!path.startsWith(`${PREFIX}/`)) return undefined;
  const name = path.slice(PREFIX.length + 1);
  return name && Object.hasOwn(CONSOLE_ASSETS, name) ? name : undefined;
}

async function serve(event: APIGatewayProxyEventV2): Promise<Result> {
  const method = event.requestContext.http.method;
  const path = event.rawPath;
  if (method !== 'GET' && method !== 'HEAD')
    return problem(405, 'Method Not Allowed', `${method} is not supported on the console's files`, { Allow: 'GET, HEAD' });
  // Relative asset names resolve against /console/, so the page is served only there.
  if (path === PREFIX) return { statusCode: 308, headers: { Location: `${PREFIX}/`, 'Cache-Control': 'no-cache', ...SECURITY_HEADERS } };
  const name = assetName(path);
  const asset = name === undefined ? undefined : CONSOLE_ASSETS[name];
  if (!asset) {
    log.debug('console: no such file', { path });
    return problem(404, 'Not Found', 'The console has no such file; it is served at /console/');
  }
  return {
    statusCode: 200,
    headers: {
      'Content-Type': asset.type,
      'Cache-Control': asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
      ...SECURITY_HEADERS,
    },
    body: method === 'HEAD' ? '' : asset.body,
  };
}

export const handler = middy<APIGatewayProxyEventV2, Result, Error, Context>().handler(instrumented(serve));

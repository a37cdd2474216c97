// API Gateway HTTP API (payload format 2.0) behaviour for the local runtime: route selection as
// API Gateway does it (most specific path first, a method route before ANY, $default last), the
// request event, and the structured result written back as an HTTP response.
import type http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { LocalFunction } from './lambda.ts';

export interface Route {
  routeKey: string;
  method: string;
  path: string;
  pattern: RegExp;
  parameters: string[];
  literalSegments: number;
  greedy: boolean;
  fn: LocalFunction;
}

export interface RouteMatch {
  route: Route;
  pathParameters: Record<string, string>;
}

export function compileRoute(path: string, method: string, fn: LocalFunction): Route {
  const upper = method.toUpperCase();
  if (path === '$default') {
    return { routeKey: '$default', method: 'ANY', path, pattern: /^/, parameters: [], literalSegments: -1, greedy: true, fn };
  }
  const parameters: string[] = [];
  let literalSegments = 0;
  let greedy = false;
  const source = path
    .split('/')
    .map((segment) => {
      const variable = /^\{([A-Za-z0-9_]+)(\+)?\}$/.exec(segment);
      if (!variable) {
        if (segment) literalSegments += 1;
        return segment.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
      }
      parameters.push(variable[1] as string);
      if (variable[2]) {
        greedy = true;
        return '(.+)';
      }
      return '([^/]+)';
    })
    .join('/');
  const routeKey = `${upper === 'ANY' ? 'ANY' : upper} ${path}`;
  return { routeKey, method: upper, path, pattern: new RegExp(`^${source}/?$`), parameters, literalSegments, greedy, fn };
}

export function matchRoute(routes: Route[], method: string, path: string): RouteMatch | undefined {
  const candidates: RouteMatch[] = [];
  for (const route of routes) {
    if (route.method !== 'ANY' && route.method !== method.toUpperCase()) continue;
    const found = route.pattern.exec(path);
    if (!found) continue;
    const pathParameters: Record<string, string> = {};
    route.parameters.forEach((name, i) => {
      pathParameters[name] = found[i + 1] as string;
    });
    candidates.push({ route, pathParameters });
  }
  candidates.sort(
    (a, b) =>
      b.route.literalSegments - a.route.literalSegments ||
      Number(a.route.greedy) - Number(b.route.greedy) ||
      Number(a.route.method === 'ANY') - Number(b.route.method === 'ANY'),
  );
  return candidates[0];
}

const TEXT_TYPES = /^(text\/|application\/(json|[\w.+-]+\+json|xml|[\w.+-]+\+xml|x-www-form-urlencoded|yaml|x-yaml|javascript))/i;

export function toApiGatewayEvent(req: http.IncomingMessage, body: Buffer, match: RouteMatch, requestId: string = randomUUID()): APIGatewayProxyEventV2 {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  }
  headers['x-forwarded-proto'] ??= 'http';
  const rawQueryString = url.search.startsWith('?') ? url.search.slice(1) : '';
  const queryStringParameters: Record<string, string> = {};
  for (const part of rawQueryString.split('&').filter(Boolean)) {
    const [key = '', value = ''] = part.split('=', 2);
    let name = key;
    let decoded = value;
    try {
      name = decodeURIComponent(key.replace(/\+/g, ' '));
      decoded = decodeURIComponent(value.replace(/\+/g, ' '));
    } catch {
      // API Gateway passes undecodable input through; the handler reports it.
    }
    queryStringParameters[name] = queryStringParameters[name] === undefined ? decoded : `${queryStringParameters[name]},${decoded}`;
  }
  const contentType = headers['content-type'] ?? '';
  const isText = body.length === 0 || TEXT_TYPES.test(contentType);
  const now = new Date();
  return {
    version: '2.0',
    routeKey: match.route.routeKey,
    rawPath: url.pathname,
    rawQueryString,
    headers,
    queryStringParameters: rawQueryString ? queryStringParameters : undefined,
    pathParameters: match.route.parameters.length ? match.pathParameters : undefined,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: (headers.host ?? 'localhost').split('.')[0] ?? 'localhost',
      http: {
        method: (req.method ?? 'GET').toUpperCase(),
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey: match.route.routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body: body.length ? (isText ? body.toString('utf8') : body.toString('base64')) : undefined,
    isBase64Encoded: !isText,
  };
}

/** Writes a Lambda result as API Gateway does for payload format 2.0. */
export function writeApiGatewayResult(res: http.ServerResponse, result: unknown): void {
  if (result === null || typeof result !== 'object' || !('statusCode' in result)) {
    // A non-structured result is taken as a JSON 200 body.
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(typeof result === 'string' ? result : JSON.stringify(result ?? null));
    return;
  }
  const structured = result as APIGatewayProxyStructuredResultV2;
  const headers: Record<string, string | number | string[]> = { ...(structured.headers ?? {}) } as Record<string, string | number>;
  if (structured.cookies?.length) headers['Set-Cookie'] = structured.cookies;
  const body = structured.body === undefined ? Buffer.alloc(0) : Buffer.from(structured.body, structured.isBase64Encoded ? 'base64' : 'utf8');
  res.writeHead(structured.statusCode ?? 200, headers).end(body);
}

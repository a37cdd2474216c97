// A test NFVO: an HTTP server that receives VNF LCM notifications on callback paths and records
// every request, answers each as a test decides (status, a reset connection for "down", or no
// answer until it closes, for "hung"), and serves an OAuth 2.0 token endpoint (client credentials)
// whose tokens tests can revoke.
import { AssertionError } from 'node:assert';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { notificationProblem } from './exchange.ts';

export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown> & { id: string; notificationType: string; vnfInstanceId: string };
  at: number;
  /** What the sink answered: a status, 'reset', or 'hold' (no answer until the sink closes). */
  answer: number | 'reset' | 'hold';
  /** Why the notification does not conform to its ETSI schema (support/exchange.ts), if it does not. */
  nonConforming?: string;
}

/** Decides the answer to a POST on a callback path; `attempt` counts this path's POSTs from 1. */
export type Answer = (path: string, attempt: number, request: Omit<Received, 'answer'>) => number | 'reset' | 'hold';

export interface NfvoSink {
  url: string;
  /** Every POST to a callback path, in arrival order (GETs of the callback test excluded). */
  received: Received[];
  /** The notifications a path accepted (2xx), in arrival order. */
  accepted(path: string): Received['body'][];
  /** How often each path was tested with GET, and the Authorization header of the last test. */
  tests: Map<string, { count: number; authorization?: string }>;
  token: { requests: Array<{ authorization?: string; body: string }>; revoke(): void; current(): string };
  answer: Answer;
  close(): Promise<void>;
}

export async function startNfvoSink(options: { clientId?: string; clientPassword?: string; tokenLifetime?: number } = {}): Promise<NfvoSink> {
  const received: Received[] = [];
  const attempts = new Map<string, number>();
  const tests = new Map<string, { count: number; authorization?: string }>();
  const tokenRequests: Array<{ authorization?: string; body: string }> = [];
  let tokenSerial = 0;
  let valid = new Set<string>();
  const sink: NfvoSink = {
    url: '',
    received,
    accepted: (path) => {
      const accepted = received.filter((r) => r.path === path && typeof r.answer === 'number' && r.answer < 300);
      // Every notification a test looks at conforms, whatever the test itself checks.
      const wrong = accepted.find((r) => r.nonConforming);
      if (wrong) throw new AssertionError({ message: `a notification to ${path} does not conform: ${wrong.nonConforming}`, operator: 'exchange' });
      return accepted.map((r) => r.body);
    },
    tests,
    token: {
      requests: tokenRequests,
      revoke: () => {
        valid = new Set();
      },
      current: () => `token-${tokenSerial}`,
    },
    answer: () => 204,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://sink').pathname;
      const text = Buffer.concat(chunks).toString('utf8');
      if (path === '/token') {
        tokenRequests.push({ authorization: req.headers.authorization, body: text });
        const expected = `Basic ${Buffer.from(`${options.clientId ?? 'vnfm'}:${options.clientPassword ?? ''}`).toString('base64')}`;
        if (req.headers.authorization !== expected || !text.includes('grant_type=client_credentials')) {
          res.writeHead(401, { 'Content-Type': 'application/json' }).end('{"error":"invalid_client"}');
          return;
        }
        tokenSerial++;
        valid.add(`token-${tokenSerial}`);
        res
          .writeHead(200, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ access_token: `token-${tokenSerial}`, token_type: 'Bearer', expires_in: options.tokenLifetime ?? 3600 }));
        return;
      }
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (bearer !== undefined && !valid.has(bearer)) {
        res.writeHead(401).end();
        return;
      }
      if (req.method === 'GET') {
        tests.set(path, { count: (tests.get(path)?.count ?? 0) + 1, authorization: req.headers.authorization });
        res.writeHead(path.includes('/refuse-test') ? 404 : 204).end();
        return;
      }
      const attempt = (attempts.get(path) ?? 0) + 1;
      attempts.set(path, attempt);
      const request = { method: req.method ?? '', path, headers: req.headers, body: JSON.parse(text || '{}') as Received['body'], at: Date.now() };
      const answer = sink.answer(path, attempt, request);
      const entry: Received = { ...request, answer };
      received.push(entry);
      if (answer === 'reset') req.socket.destroy();
      else if (answer !== 'hold') res.writeHead(answer).end();
      void notificationProblem(request.body, req.headers.version as string | undefined).then((problem) => {
        if (problem) entry.nonConforming = problem;
      });
    });
  });
  // Loaded now, so that each notification is checked within the microtasks that follow its arrival.
  await notificationProblem({ notificationType: 'VnfIdentifierCreationNotification' }, '2.0.0');
  await notificationProblem({ notificationType: 'AlarmNotification' }, '1.5.0');
  await notificationProblem({ notificationType: 'ThresholdCrossedNotification' }, '2.2.0');
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  sink.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return sink;
}

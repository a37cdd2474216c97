// A test NFVO serving SOL003 granting (clause 9): grants answered at once (201), asynchronously
// (202 and a Location, then 202 with Retry-After a number of times, then 200 with the Grant; some
// polls may first be answered 503),
// refused (403 ProblemDetails, at once or once asked for), never decided, or after 5xx/429 answers;
// and an OAuth 2.0 token endpoint (client credentials) whose bearer tokens the grant API then
// demands. It records every exchange, checks each against the SOL003 Granting schemas and notes a
// poll that came sooner than the Retry-After it had asked for, so tests assert counts and order.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { assertEtsiSchema } from './etsi.ts';

export type GrantBehaviour =
  | { kind: 'sync' }
  | { kind: 'async'; pending: number; retryAfter?: number; failingPolls?: number }
  | { kind: 'never'; retryAfter?: number }
  | { kind: 'refuse'; detail: string; whenPolled?: boolean }
  | { kind: 'unavailable'; failures: number; status?: number; retryAfter?: number };

export interface NfvoExchange {
  method: string;
  path: string;
  status: number;
  authorization?: string;
  version?: string;
  body?: unknown;
  /** A poll or a repeated POST that came before the Retry-After this simulator had asked for had passed. */
  early?: boolean;
}

export interface NfvoSimulator {
  url: string;
  /** How the next grant requests are answered; a grant keeps the behaviour it was asked with. */
  behaviour: GrantBehaviour;
  exchanges: NfvoExchange[];
  /** The grant requests (POST /grant/v1/grants) and the polls (GET /grant/v1/grants/{id}) only. */
  grantExchanges(): NfvoExchange[];
  tokenRequests: number;
  /** Decides every pending asynchronous grant: each is answered 200 at its next poll. */
  release(): void;
  /** Why an exchange did not conform to SOL003 (empty when all did). */
  nonConforming: string[];
  close(): Promise<void>;
}

interface PendingGrant {
  behaviour: GrantBehaviour;
  request: Record<string, unknown>;
  polls: number;
  /** Polls answered 503 so far (`failingPolls`). */
  failed: number;
  /** When the last answer asked to wait until (ms since the epoch, scaled), if it did. */
  notBefore?: number;
}

export interface NfvoSimulatorOptions {
  /** With both, the grant API demands a bearer token from /token (HTTP Basic client credentials). */
  clientId?: string;
  clientSecret?: string;
  /** The VNFM's VNFM_WAIT_SCALE: its Wait states last Retry-After times this. */
  waitScale?: number;
}

// A timer may fire a few milliseconds short of its delay.
const EARLY_SLACK_MS = 50;

export async function startNfvoSimulator(options: NfvoSimulatorOptions = {}): Promise<NfvoSimulator> {
  const grants = new Map<string, PendingGrant>();
  const tokens = new Set<string>();
  let serial = 0;
  let unavailableSeen = 0;
  let retryNotBefore: number | undefined;
  let released = false;
  const waitScale = options.waitScale ?? 0.2;
  const sim: NfvoSimulator = {
    url: '',
    behaviour: { kind: 'sync' },
    exchanges: [],
    grantExchanges: () => sim.exchanges.filter((e) => e.path.startsWith('/grant/v1/grants')),
    tokenRequests: 0,
    release: () => {
      released = true;
    },
    nonConforming: [],
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const conform = async (what: string, definition: string, body: unknown) => {
    try {
      await assertEtsiSchema('grant', definition, body);
    } catch (error) {
      sim.nonConforming.push(`${what}: ${(error as Error).message}`);
    }
  };
  const grantOf = (id: string, request: Record<string, unknown>) => ({
    id,
    vnfInstanceId: request.vnfInstanceId,
    vnfLcmOpOccId: request.vnfLcmOpOccId,
    zones: [{ id: 'zone-1', zoneId: 'nova' }],
    _links: {
      self: { href: `${sim.url}/grant/v1/grants/${id}` },
      vnfLcmOpOcc: { href: String((request._links as { vnfLcmOpOcc?: { href?: string } } | undefined)?.vnfLcmOpOcc?.href ?? '') },
      vnfInstance: { href: String((request._links as { vnfInstance?: { href?: string } } | undefined)?.vnfInstance?.href ?? '') },
    },
  });
  const waitFor = (retryAfter: number | undefined) => (retryAfter === undefined ? undefined : Date.now() + retryAfter * 1000 * waitScale - EARLY_SLACK_MS);

  const answer = async (
    req: http.IncomingMessage,
    text: string,
  ): Promise<{ status: number; headers?: Record<string, string>; body?: unknown; exchange?: Partial<NfvoExchange> }> => {
    const path = new URL(req.url ?? '/', 'http://nfvo').pathname;
    if (path === '/token') {
      sim.tokenRequests++;
      const expected = `Basic ${Buffer.from(`${options.clientId}:${options.clientSecret}`).toString('base64')}`;
      if (req.headers.authorization !== expected || !text.includes('grant_type=client_credentials')) return { status: 401, body: { error: 'invalid_client' } };
      const token = `nfvo-token-${++serial}`;
      tokens.add(token);
      return { status: 200, body: { access_token: token, token_type: 'Bearer', expires_in: 3600 } };
    }
    if (options.clientId) {
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (!bearer || !tokens.has(bearer)) return { status: 401, headers: { 'WWW-Authenticate': 'Bearer' } };
    }
    if (!req.headers.version) sim.nonConforming.push(`${req.method} ${path}: no Version header (SOL013 9.1)`);
    if (req.method === 'POST' && path === '/grant/v1/grants') {
      const request = JSON.parse(text || '{}') as Record<string, unknown>;
      await conform('GrantRequest', 'GrantRequest', request);
      const behaviour = sim.behaviour;
      const early = retryNotBefore !== undefined && Date.now() < retryNotBefore;
      retryNotBefore = undefined;
      if (behaviour.kind === 'unavailable' && unavailableSeen < behaviour.failures) {
        unavailableSeen++;
        // The VNFM waits out a 5xx's Retry-After within its step, unscaled.
        retryNotBefore = behaviour.retryAfter === undefined ? undefined : Date.now() + behaviour.retryAfter * 1000 - EARLY_SLACK_MS;
        return {
          status: behaviour.status ?? 503,
          headers: behaviour.retryAfter !== undefined ? { 'Retry-After': String(behaviour.retryAfter) } : {},
          body: { status: behaviour.status ?? 503, detail: 'the NFVO is busy' },
          exchange: { body: request, early },
        };
      }
      if (behaviour.kind === 'refuse' && !behaviour.whenPolled) {
        return { status: 403, body: { title: 'Grant rejected', status: 403, detail: behaviour.detail }, exchange: { body: request, early } };
      }
      const id = `grant-${++serial}`;
      if (behaviour.kind === 'sync' || behaviour.kind === 'unavailable') {
        const grant = grantOf(id, request);
        await conform('Grant (201)', 'Grant', grant);
        return { status: 201, headers: { Location: `${sim.url}/grant/v1/grants/${id}` }, body: grant, exchange: { body: request, early } };
      }
      const retryAfter = behaviour.kind === 'async' || behaviour.kind === 'never' ? behaviour.retryAfter : undefined;
      grants.set(id, { behaviour, request, polls: 0, failed: 0, notBefore: waitFor(retryAfter) });
      // A relative Location: the VNFM resolves it against the NFVO's endpoint.
      return {
        status: 202,
        headers: { Location: `/grant/v1/grants/${id}`, ...(retryAfter !== undefined ? { 'Retry-After': String(retryAfter) } : {}) },
        exchange: { body: request, early },
      };
    }
    const polled = /^\/grant\/v1\/grants\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && polled) {
      const grant = grants.get(polled[1] as string);
      if (!grant) return { status: 404, body: { status: 404, detail: 'no such grant' } };
      const early = grant.notBefore !== undefined && Date.now() < grant.notBefore;
      const { behaviour } = grant;
      if (behaviour.kind === 'async' && grant.failed < (behaviour.failingPolls ?? 0)) {
        grant.failed++;
        // Waited out within the VNFM's step, unscaled, as for a POST.
        grant.notBefore = Date.now() + 1000 - EARLY_SLACK_MS;
        return { status: 503, headers: { 'Retry-After': '1' }, body: { status: 503, detail: 'the NFVO is busy' }, exchange: { early } };
      }
      grant.polls++;
      if (behaviour.kind === 'refuse') return { status: 403, body: { title: 'Grant rejected', status: 403, detail: behaviour.detail }, exchange: { early } };
      if (!released && (behaviour.kind === 'never' || (behaviour.kind === 'async' && grant.polls <= behaviour.pending))) {
        grant.notBefore = waitFor(behaviour.retryAfter);
        return { status: 202, headers: behaviour.retryAfter !== undefined ? { 'Retry-After': String(behaviour.retryAfter) } : {}, exchange: { early } };
      }
      const body = grantOf(polled[1] as string, grant.request);
      await conform('Grant (200)', 'Grant', body);
      return { status: 200, body, exchange: { early } };
    }
    return { status: 404, body: { status: 404, detail: `${req.method} ${path} is not served here` } };
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      void answer(req, text).then(async ({ status, headers, body, exchange }) => {
        if (body !== undefined && status >= 400 && status !== 401 && req.url !== '/token') await conform(`ProblemDetails (${status})`, 'ProblemDetails', body);
        sim.exchanges.push({
          method: req.method ?? '',
          path: new URL(req.url ?? '/', 'http://nfvo').pathname,
          status,
          authorization: req.headers.authorization,
          version: req.headers.version as string | undefined,
          ...exchange,
        });
        const type = status >= 400 && req.url !== '/token' ? 'application/problem+json' : 'application/json';
        res
          .writeHead(status, { ...(body !== undefined ? { 'Content-Type': type } : {}), ...headers })
          .end(body !== undefined ? JSON.stringify(body) : undefined);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  sim.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return sim;
}

// A test element manager: an HTTP server with the VNF LCM Coordination interface (ETSI GS NFV-SOL
// 002 clause 10, /lcmcoord/v1) that answers each coordination as a test decides: at once (201 with
// CONTINUE, ABORT or CANCELLED), asynchronously (202 + Location, then 202 with Retry-After for a
// number of reads, then 200 with the result), or first 503 with Retry-After a number of times. It
// records every request, and checks every LcmCoordRequest it receives against the SOL002 schema
// (a non-conforming one is answered 400 and kept with the reason).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { assertEtsiSchema } from './etsi.ts';

export type EmResult = 'CONTINUE' | 'ABORT' | 'CANCELLED';

/** How the EM answers one coordination. */
export interface EmBehaviour {
  result: EmResult;
  /** The reason an ABORT gives (its LcmCoord's error.detail). */
  reason?: string;
  /** Answer 202 and then 202 to this many reads before the result (undefined: 201 at once; Infinity: never finishes). */
  reads?: number;
  /** Retry-After (seconds) of the 202 answers. */
  retryAfter?: number;
  /** Answer this many POSTs 503 with Retry-After (seconds) `unavailableRetryAfter` first. */
  unavailable?: number;
  unavailableRetryAfter?: number;
}

export interface EmRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body?: Record<string, unknown>;
  /** The status the EM answered. */
  answer: number;
  /** Why the body is not a conforming LcmCoordRequest, if it is not. */
  nonConforming?: string;
}

export interface EmSimulator {
  /** The EM's API root (what additionalParams.lcmCoordination.endpoint names). */
  url: string;
  requests: EmRequest[];
  /** The LcmCoordRequests received (conforming or not), in order. */
  coordinationRequests(): Array<Record<string, unknown>>;
  /** Decides how each coordination is answered, by its request (default: 201 CONTINUE). */
  behaviour: (request: Record<string, unknown>) => EmBehaviour;
  close(): Promise<void>;
}

interface Running {
  request: Record<string, unknown>;
  behaviour: EmBehaviour;
  readsLeft: number;
  cancelled: boolean;
}

const PREFIX = '/lcmcoord/v1/coordinations';

export async function startEmSimulator(): Promise<EmSimulator> {
  const requests: EmRequest[] = [];
  const running = new Map<string, Running>();
  const unavailableSeen = new Map<string, number>();
  let serial = 0;
  const em: EmSimulator = {
    url: '',
    requests,
    coordinationRequests: () => requests.filter((r) => r.method === 'POST' && r.path === PREFIX && r.body).map((r) => r.body as Record<string, unknown>),
    behaviour: () => ({ result: 'CONTINUE' }),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };

  const lcmCoord = (id: string, entry: Running, result: EmResult): Record<string, unknown> => ({
    id,
    coordinationResult: result,
    vnfInstanceId: entry.request.vnfInstanceId,
    vnfLcmOpOccId: entry.request.vnfLcmOpOccId,
    lcmOperationType: entry.request.lcmOperationType,
    coordinationActionName: entry.request.coordinationActionName,
    ...(result === 'ABORT' ? { error: { title: 'Coordination aborted', status: 409, detail: entry.behaviour.reason ?? 'aborted by the EM' } } : {}),
    _links: {
      self: { href: `${em.url}${PREFIX}/${id}` },
      vnfLcmOpOcc: entry.request._links && (entry.request._links as Record<string, unknown>).vnfLcmOpOcc,
      vnfInstance: entry.request._links && (entry.request._links as Record<string, unknown>).vnfInstance,
    },
  });

  const answer = async (method: string, path: string, body: Record<string, unknown> | undefined, entry: EmRequest, res: http.ServerResponse) => {
    const send = (status: number, headers: Record<string, string> = {}, payload?: unknown) => {
      entry.answer = status;
      res.writeHead(status, { ...headers, ...(payload !== undefined ? { 'Content-Type': 'application/json' } : {}), Version: '1.1.0' });
      res.end(payload !== undefined ? JSON.stringify(payload) : undefined);
    };
    if (method === 'POST' && path === PREFIX) {
      try {
        await assertEtsiSchema('lcm-coordination', 'LcmCoordRequest', body);
      } catch (error) {
        entry.nonConforming = (error as Error).message;
        return send(400, {}, { status: 400, detail: entry.nonConforming });
      }
      const request = body as Record<string, unknown>;
      const behaviour = em.behaviour(request);
      const key = `${request.vnfLcmOpOccId}/${request.coordinationActionName}`;
      const seen = unavailableSeen.get(key) ?? 0;
      if (seen < (behaviour.unavailable ?? 0)) {
        unavailableSeen.set(key, seen + 1);
        return send(503, { 'Retry-After': String(behaviour.unavailableRetryAfter ?? 1) }, { status: 503, detail: 'the EM is busy' });
      }
      serial += 1;
      const id = `coord-${serial}`;
      const run: Running = { request, behaviour, readsLeft: behaviour.reads ?? 0, cancelled: false };
      running.set(id, run);
      const location = `${em.url}${PREFIX}/${id}`;
      if (behaviour.reads === undefined) return send(201, { Location: location }, lcmCoord(id, run, behaviour.result));
      return send(202, { Location: location, ...(behaviour.retryAfter !== undefined ? { 'Retry-After': String(behaviour.retryAfter) } : {}) });
    }
    const match = /^\/lcmcoord\/v1\/coordinations\/([^/]+)(\/cancel)?$/.exec(path);
    const run = match ? running.get(match[1] as string) : undefined;
    if (!match || !run) return send(404, {}, { status: 404, detail: `no ${path}` });
    const id = match[1] as string;
    if (match[2] && method === 'POST') {
      if (run.readsLeft <= 0) return send(409, {}, { status: 409, detail: 'the coordination has finished' });
      run.cancelled = true;
      run.readsLeft = 0;
      return send(202);
    }
    if (method !== 'GET') return send(405);
    if (run.readsLeft > 0) {
      run.readsLeft -= 1;
      return send(202, run.behaviour.retryAfter !== undefined ? { 'Retry-After': String(run.behaviour.retryAfter) } : {});
    }
    return send(200, {}, lcmCoord(id, run, run.cancelled ? 'CANCELLED' : run.behaviour.result));
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://em').pathname;
      const text = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown> | undefined;
      try {
        body = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
      } catch {
        body = undefined;
      }
      const entry: EmRequest = { method: req.method ?? '', path, headers: req.headers, ...(body ? { body } : {}), answer: 0 };
      requests.push(entry);
      void answer(entry.method, path, body, entry, res);
    });
  });
  // The schema is loaded now, so that the first request is checked as quickly as the others.
  await assertEtsiSchema('lcm-coordination', 'LcmCoordRequest', {
    vnfInstanceId: 'i',
    vnfLcmOpOccId: 'o',
    lcmOperationType: 'INSTANTIATE',
    coordinationActionName: 'a',
    _links: { vnfLcmOpOcc: { href: 'http://x/o' }, vnfInstance: { href: 'http://x/i' } },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  em.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return em;
}

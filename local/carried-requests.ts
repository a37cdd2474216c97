// The runtime's own AWS SDK requests to its local DynamoDB and SQS, carried over a message port to
// the stand-ins thread (local/standins-thread.ts) instead of a loopback TCP connection. What is
// carried is the request the SDK built and signed (method, target, headers with the SigV4
// Authorization, body), and the stand-in answers it with the same server code, signature check
// included, as it answers a request from a socket (local/standins-worker.ts); the SDK reads the
// answer's status, headers and bytes as it reads an HTTP response. Only the framing is saved: on
// the runtime's thread an SDK call spent ~40% of its CPU in Node's HTTP client (sockets, the
// request and response objects, header parsing), the stand-ins thread as much again in its HTTP
// server. Every other address (S3, Secrets Manager, the Lambda and Step Functions APIs, AWS
// itself) goes through the SDK's own Node.js HTTP handler, and any other process (a vendor
// script, the CLI, a bench) still reaches the stand-ins over HTTP at their endpoints.
import type http from 'node:http';
import type { MessagePort } from 'node:worker_threads';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import inject from 'light-my-request';
import { buildQueryString, HttpResponse } from '@smithy/core/protocols';
import type { HttpHandler, HttpRequest } from '@smithy/core/protocols';
import type { HttpHandlerOptions } from '@smithy/types';

/** Runtime thread -> stand-ins thread: one request. */
export interface CarriedRequest {
  id: number;
  /** The stand-in's endpoint origin, as the SDK addressed it (`http://127.0.0.1:<port>`). */
  origin: string;
  method: string;
  /** Path and query. */
  url: string;
  headers: Record<string, string>;
  body: string | Uint8Array | undefined;
}

/** Runtime thread -> stand-ins thread: a request given up (its abort signal fired), as a client hangs up. */
export interface CarriedAbort {
  abort: number;
}

/** Stand-ins thread -> runtime thread: its answer, or why there is none (the connection's failure, as a socket's would be). */
export type CarriedAnswer = { id: number; status: number; headers: Record<string, string>; body: Uint8Array } | { id: number; failure: string };

/** The origin of an SDK request (`http://host:port`), as endpoints are written. */
export function originOf(request: Pick<HttpRequest, 'protocol' | 'hostname' | 'port'>): string {
  return `${request.protocol}//${request.hostname}${request.port ? `:${request.port}` : ''}`;
}

/** Why a request got no answer, as a socket's failure reads to the SDK's retry (a transient error). */
function connectionFailure(message: string): Error {
  return Object.assign(new Error(message), { code: 'ECONNRESET' });
}

/**
 * An HTTP handler for the runtime's SDK clients: requests to `origins` travel over `port`; every
 * other request goes to the SDK's Node.js handler. `close()` fails what is still in flight.
 */
export class CarryingHandler implements HttpHandler<Record<string, never>> {
  readonly metadata = { handlerProtocol: 'http/1.1' };
  readonly #pending = new Map<number, { resolve: (answer: CarriedAnswer) => void; reject: (error: Error) => void }>();
  readonly #origins: ReadonlySet<string>;
  #next = 0;
  #closed: string | undefined;
  #http: NodeHttpHandler | undefined;

  constructor(
    private readonly port: MessagePort,
    origins: Iterable<string>,
  ) {
    this.#origins = new Set(origins);
    port.on('message', (answer: CarriedAnswer) => {
      const waiting = this.#pending.get(answer.id);
      if (!waiting) return; // aborted meanwhile
      this.#pending.delete(answer.id);
      waiting.resolve(answer);
    });
    // Answers are awaited only while a request is pending: the port keeps no event loop alive by itself.
    port.unref();
  }

  async handle(request: HttpRequest, options: HttpHandlerOptions = {}): Promise<{ response: HttpResponse }> {
    const origin = originOf(request);
    const body: unknown = request.body;
    // A stream body (an upload) is not carried: it goes over HTTP as it is (no stand-in here is sent one).
    if (!this.#origins.has(origin) || (body !== undefined && typeof body !== 'string' && !(body instanceof Uint8Array))) {
      this.#http ??= new NodeHttpHandler();
      return this.#http.handle(request, options);
    }
    const signal = options.abortSignal as AbortSignal | undefined;
    if (signal?.aborted) throw Object.assign(new Error('Request aborted'), { name: 'AbortError' });
    if (this.#closed) throw connectionFailure(this.#closed);
    const query = request.query ? buildQueryString(request.query) : '';
    const carried: CarriedRequest = {
      id: this.#next++,
      origin,
      method: request.method,
      url: `${request.path}${query ? `?${query}` : ''}`,
      headers: request.headers,
      body: body as CarriedRequest['body'],
    };
    let done: () => void = () => undefined;
    const answer = await new Promise<CarriedAnswer>((resolve, reject) => {
      this.#pending.set(carried.id, { resolve, reject });
      if (this.#pending.size === 1) this.port.ref();
      const onAbort = () => {
        if (!this.#pending.delete(carried.id)) return;
        reject(Object.assign(new Error('Request aborted'), { name: 'AbortError' }));
        this.port.postMessage({ abort: carried.id } satisfies CarriedAbort);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.port.postMessage(carried);
      done = () => signal?.removeEventListener('abort', onAbort);
    }).finally(() => {
      done();
      if (this.#pending.size === 0) this.port.unref();
    });
    if ('failure' in answer) throw connectionFailure(answer.failure);
    return { response: new HttpResponse({ statusCode: answer.status, headers: answer.headers, body: answer.body }) };
  }

  /** Fails every request in flight and every later one to the stand-ins (their thread has ended). */
  close(reason: string): void {
    if (this.#closed) return;
    this.#closed = reason;
    for (const [id, waiting] of this.#pending) {
      this.#pending.delete(id);
      waiting.reject(connectionFailure(reason));
    }
    this.port.close();
  }

  updateHttpClientConfig(): void {
    // Nothing to configure: the SDK's own handler, when one is made, keeps its defaults.
  }

  httpHandlerConfigs(): Record<string, never> {
    return {};
  }

  destroy(): void {
    // Shared by every client of the runtime: a client's destroy() leaves it to the others.
  }
}

/** A carried request's headers as a request's own (lower-case names). */
type Headers = Record<string, string>;

/** An answer's headers as strings, the way the SDK reads an HTTP response's. */
function answerHeaders(headers: http.OutgoingHttpHeaders): Headers {
  const out: Headers = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : String(value);
  return out;
}

/**
 * Answers the requests carried over `port` (stand-ins thread): each goes to the request listeners
 * of the server at its origin, as one from a socket does, and its answer goes back. A request
 * given up is a client gone: its socket reads as closed (a long poll stops waiting for it).
 * `close()` drops the requests in flight as closing servers drop their connections (each fails
 * with the connection's loss) and refuses any later one.
 */
export function serveCarried(port: MessagePort, servers: ReadonlyMap<string, http.Server>): { close(): void } {
  const inFlight = new Map<number, http.IncomingMessage>();
  let closed = false;
  const hangUp = (req: http.IncomingMessage | undefined) => {
    const socket = req?.socket as (http.IncomingMessage['socket'] & { destroyed: boolean }) | undefined;
    if (socket && !socket.destroyed) {
      socket.destroyed = true;
      socket.emit('close');
    }
  };
  port.on('message', (message: CarriedRequest | CarriedAbort) => {
    if ('abort' in message) {
      hangUp(inFlight.get(message.abort));
      return;
    }
    const { id, origin, method, url, headers, body } = message;
    const server = closed ? undefined : servers.get(origin);
    if (!server) {
      port.postMessage({ id, failure: closed ? 'The local stand-ins are closing' : `No stand-in answers at ${origin}` } satisfies CarriedAnswer);
      return;
    }
    inject(
      (req, res) => {
        inFlight.set(id, req);
        server.emit('request', req, res);
      },
      {
        method,
        url,
        headers,
        payload: body === undefined || typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength),
      },
      (error, res) => {
        if (!inFlight.delete(id)) return; // dropped at close: its failure has gone already
        port.postMessage(
          error || !res
            ? ({ id, failure: error?.message ?? 'No answer' } satisfies CarriedAnswer)
            : ({ id, status: res.statusCode, headers: answerHeaders(res.headers), body: res.rawPayload } satisfies CarriedAnswer),
        );
      },
    );
  });
  return {
    close() {
      closed = true;
      for (const [id, req] of inFlight) {
        inFlight.delete(id);
        port.postMessage({ id, failure: 'The local stand-ins closed the connection' } satisfies CarriedAnswer);
        hangUp(req);
      }
    },
  };
}

// Keeps one request from ending the local runtime. Every local HTTP server (the API front, the
// stand-ins, the simulators) handles its requests through `guarded()`: a request the client got
// wrong is answered 4xx ProblemDetails, a client that hung up mid-request gets its socket closed
// quietly, and anything else is logged with the request's id and answered 500. The request id
// stays in async context, so the process-level guard (`guardProcess`, from local/main.ts) names
// the request behind an error that still escapes a handler.
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

interface RequestScope {
  requestId: string;
  server: string;
  method: string;
  target: string;
}

const scope = new AsyncLocalStorage<RequestScope>();

/** A request the client got wrong, answered with `status` and the message as ProblemDetails' detail. */
export class ClientRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ClientRequestError';
  }
}

/** The request target as a URL; a target that is none (`GET http://[ HTTP/1.1`) is a 400. */
export function requestUrl(req: http.IncomingMessage): URL {
  try {
    return new URL(req.url ?? '/', 'http://localhost');
  } catch {
    throw new ClientRequestError(400, 'The request target is not a valid URL');
  }
}

/** The whole request body; more than `limit` bytes is a 413. Rejects with the stream's error if the client hangs up. */
export async function readRequestBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new ClientRequestError(413, `Request bodies are limited to ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** True when `error` is what a client causes by going away mid-request (a body cut off, a reset socket). */
export function isClientGone(error: unknown, req: http.IncomingMessage): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ECONNRESET' || code === 'EPIPE' || code === 'ERR_STREAM_PREMATURE_CLOSE' || (req.destroyed && !req.complete);
}

/** Writes an application/problem+json answer (SOL013 6.3's shape). */
export function sendProblem(res: http.ServerResponse, status: number, detail: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ title: http.STATUS_CODES[status] ?? 'Error', status, detail });
  res.writeHead(status, { 'Content-Type': 'application/problem+json', 'Content-Length': Buffer.byteLength(body), ...headers }).end(body);
}

export type GuardedHandler = (req: http.IncomingMessage, res: http.ServerResponse, requestId: string) => Promise<void> | void;

/**
 * A request listener running `handler` with the request's id in async context: a
 * ClientRequestError is answered with its status, a client that went away gets its socket
 * closed, and any other failure is logged with the request id and answered 500.
 */
export function guarded(server: string, handler: GuardedHandler, log: (line: string) => void): http.RequestListener {
  return (req, res) => {
    const requestId = randomUUID();
    // A response written after its socket died emits 'error'; with no listener that would throw.
    res.on('error', () => undefined);
    scope.run({ requestId, server, method: req.method ?? '', target: printable(req.url ?? '') }, () => {
      Promise.resolve()
        .then(() => {
          if (req.httpVersionMinor >= 1 && req.headers.host === undefined) throw new ClientRequestError(400, 'An HTTP/1.1 request needs a Host header');
          return handler(req, res, requestId);
        })
        .catch((error: unknown) => {
          if (error instanceof ClientRequestError) {
            if (res.headersSent) res.destroy();
            else sendProblem(res, error.status, error.message);
            // A refused body is not read to its end: the connection goes.
            if (error.status === 413) req.destroy();
            return;
          }
          if (isClientGone(error, req)) {
            res.destroy();
            return;
          }
          log(
            `${server}: request ${requestId} (${req.method ?? ''} ${printable(req.url ?? '')}) failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
          );
          if (res.headersSent) res.destroy();
          else sendProblem(res, 500, `The request could not be completed because of an internal error; it has been logged as request ${requestId}`);
        });
    });
  };
}

/**
 * An HTTP server whose requests run through `guarded()`, and whose requests too malformed to
 * parse (bad header framing, oversized headers) are answered as ProblemDetails before the
 * connection is closed; so are the requests Node would answer with an empty body.
 */
export function createGuardedServer(name: string, handler: GuardedHandler, log: (line: string) => void): http.Server {
  // Node's own answers to a missing Host or an unknown Expect have no body; these have ProblemDetails.
  const server = http.createServer({ requireHostHeader: false }, guarded(name, handler, log));
  server.on('checkExpectation', (req: http.IncomingMessage, res: http.ServerResponse) => {
    sendProblem(res, 417, `Expect "${printable(String(req.headers.expect))}" is not supported`);
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable || (socket as Duplex & { _httpMessage?: unknown })._httpMessage) {
      socket.destroy();
      return;
    }
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const body = JSON.stringify({
      title: http.STATUS_CODES[status] ?? 'Error',
      status,
      detail: `The request could not be parsed (${error.code ?? 'malformed'})`,
    });
    socket.end(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}

/** Decides whether a request reaches a third-party server: the request to hand it on, or undefined once it has answered itself. */
export type Admission = (req: http.IncomingMessage, res: http.ServerResponse) => Promise<http.IncomingMessage | undefined>;

/**
 * Puts a third-party server's request listeners behind `guarded()`: a target that is no URL is
 * answered 400 before they see it, one `admit` refuses is answered by `admit` alone, and an
 * 'error' listener they add to a request cannot end the process by throwing (dynalite rethrows a
 * client's hang-up mid-body): the throw is contained and the socket closed.
 */
export function containRequestErrors(server: http.Server, name: string, log: (line: string) => void, admit?: Admission): void {
  const listeners = server.listeners('request') as http.RequestListener[];
  server.removeAllListeners('request');
  server.on(
    'request',
    guarded(
      name,
      async (received, res) => {
        requestUrl(received);
        const req = admit ? await admit(received, res) : received;
        if (!req) return;
        const on = req.on.bind(req);
        req.on = ((event: string, listener: (...args: unknown[]) => void) =>
          on(
            event,
            event !== 'error'
              ? listener
              : (...args: unknown[]) => {
                  try {
                    listener(...args);
                  } catch {
                    res.destroy();
                  }
                },
          )) as typeof req.on;
        for (const listener of listeners) listener(req, res);
      },
      log,
    ),
  );
}

/** The request target as it may appear in a log line: control characters escaped, bounded. */
function printable(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}...` : text).slice(1, -1);
}

/**
 * The process's own output may go away while it serves: the terminal closed, the reader of
 * `npm start | tee log` or a supervisor's pipe ended. Each write then fails with EPIPE, which Node
 * reports as an 'error' event on process.stdout or process.stderr; unheard, that is an uncaught
 * exception, whose report was itself a write to the lost stream, and so on: a loop that took a core
 * and left no turn for requests or for a stop signal. Here an output that failed is let go: what is
 * written to it later is dropped, and the process goes on serving (as a service goes on when the
 * journal that reads its output restarts) and stops when told.
 */
export function letGoOfLostOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', () => {
      stream.write = ((_chunk: unknown, encoding?: unknown, done?: unknown) => {
        const callback = typeof encoding === 'function' ? encoding : done;
        if (typeof callback === 'function') process.nextTick(callback as () => void);
        return true;
      }) as typeof stream.write;
    });
  }
}

/**
 * Process-level guard for a long-running server: once `serving()`, an uncaught exception or
 * unhandled rejection is logged, naming the request it came from when there is one, and the
 * process goes on serving; before, it ends the start (exit code 1) rather than leave it half done.
 */
export function guardProcess(log: (line: string) => void, serving: () => boolean): void {
  const report = (kind: string, error: unknown) => {
    if (!serving()) {
      log(`VNFM failed to start: ${kind}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      process.exit(1);
    }
    const at = scope.getStore();
    const where = at ? `in request ${at.requestId} (${at.server}: ${at.method} ${at.target})` : 'outside any request';
    log(`VNFM: ${kind} ${where}; still serving: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  };
  process.on('uncaughtException', (error) => report('uncaught exception', error));
  process.on('unhandledRejection', (reason) => report('unhandled rejection', reason));
}

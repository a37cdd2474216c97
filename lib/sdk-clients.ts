// Where the host of these functions may carry their AWS SDK requests itself. In Lambda nothing is
// registered: each client sends its requests with the SDK's own HTTP handler. The local runtime
// registers the one that hands its stand-ins the same signed requests without a socket
// (local/carried-requests.ts) before any function runs. Every client is built on its first use, in
// an invocation, so after the host has registered it.
import type { HttpHandler } from '@smithy/core/protocols';

let requestHandler: HttpHandler<Record<string, never>> | undefined;

/** Makes `handler` the HTTP handler of every client built from now on through sdkClientConfig(). */
export function useRequestHandler(handler: HttpHandler<Record<string, never>> | undefined): void {
  requestHandler = handler;
}

/** The part of an AWS SDK client's configuration the host decides: its HTTP handler, when it registered one. */
export function sdkClientConfig(): { requestHandler?: HttpHandler<Record<string, never>> } {
  return requestHandler ? { requestHandler } : {};
}

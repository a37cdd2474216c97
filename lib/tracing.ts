// Where X-Ray tracing plugs in, without its weight: lib/trace.ts (Powertools Tracer and the X-Ray SDK,
// 124-126 kB bundled) registers itself here when a function's entry point imports it and it runs in
// Lambda; then the handler runs in a subsegment of its own (lib/metrics.ts `instrumented`), the AWS SDK
// clients built through tracedClient (by lib/aws-client.ts) record each call, and the correlation keys (op occ, VNF instance)
// become annotations. Functions whose bundles have no room for it (README "Traces"), the script runner
// and everything outside Lambda pass straight through.

export interface Tracing {
  /** Records the client's calls as subsegments (Powertools captureAWSv3Client). */
  captureClient(client: object): void;
  /** Runs one invocation of `service`'s handler in a subsegment. */
  invocation<T>(service: string, run: () => Promise<T>): Promise<T>;
  /** Annotates the current (sub)segment: searchable in X-Ray by these values. */
  annotate(keys: Record<string, string>): void;
}

let tracing: Tracing | undefined;

/** Makes `chosen` the tracing of this process (lib/trace.ts, when a function's entry point loads it). */
export function useTracing(chosen: Tracing | undefined): void {
  tracing = chosen;
}

/**
 * An AWS SDK client whose calls are traced where tracing is registered. Every client is built on its
 * first use, in an invocation, so after the entry point has registered it.
 */
export function tracedClient<T extends object>(client: T): T {
  tracing?.captureClient(client);
  return client;
}

/** Runs one invocation of `service`'s handler, in a subsegment where tracing is registered. */
export function inTracedInvocation<T>(service: string, run: () => Promise<T>): Promise<T> {
  return tracing ? tracing.invocation(service, run) : run();
}

/** The string-valued correlation keys as annotations (X-Ray indexes annotations; keys of letters, digits and _). */
export function annotate(keys: Record<string, unknown>): void {
  if (!tracing) return;
  const annotations = Object.fromEntries(
    Object.entries(keys).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && /^\w+$/.test(entry[0])),
  );
  if (Object.keys(annotations).length) tracing.annotate(annotations);
}

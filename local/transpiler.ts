// The local runtime runs its TypeScript through tsx, which compiles each module it imports with
// esbuild's synchronous API. esbuild answers those calls from a worker thread of its own: a V8 isolate
// per thread that imports TypeScript (the runtime's and the stand-ins'), started at the first compile
// and kept for good. A start on a cold tsx cache (a fresh clone's first start compiles every module)
// sat at ~240 MiB of RSS, against ~200 MiB on a warm one, where nothing is compiled; with the threads
// ended once the runtime serves, ~215 MiB. The console's build also leaves esbuild's service process.
import { stop } from 'esbuild';

/**
 * Ends esbuild's worker thread and service process once this thread has imported what it serves. A
 * module imported later (a VIM driver, at its first operation) starts them again, if tsx's cache
 * does not hold it already.
 */
export async function releaseTranspiler(): Promise<void> {
  await stop();
}

// The runtime's threads let go of esbuild's worker thread once they have imported what they serve
// (local/transpiler.ts): tsx compiles each TypeScript module with esbuild's synchronous API, which
// esbuild answers from a thread of its own, kept for good otherwise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const TRANSPILER = pathToFileURL(join(import.meta.dirname, '..', '..', '..', 'local', 'transpiler.ts')).href;
const WAIT = pathToFileURL(join(import.meta.dirname, '..', '..', 'support', 'wait.ts')).href;

test("releaseTranspiler ends the thread tsx's compiles started, and a later import starts it again", () => {
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-transpiler-'));
  try {
    writeFileSync(join(dir, 'first.ts'), 'export const first: number = 1;\n');
    writeFileSync(join(dir, 'later.ts'), 'export const later: string = "x";\n');
    // The process's threads (Linux); a thread ends a little after it is told to, so the child waits
    // for the count to fall (and fails, naming what it waited for, if it never does).
    const script = `
      import { readdirSync } from 'node:fs';
      const { waitFor } = await import(${JSON.stringify(WAIT)});
      const threads = () => readdirSync('/proc/self/task').length;
      await import(${JSON.stringify(pathToFileURL(join(dir, 'first.ts')).href)});
      const { releaseTranspiler } = await import(${JSON.stringify(TRANSPILER)});
      const compiling = threads();
      await releaseTranspiler();
      await waitFor("esbuild's worker thread to end", () => threads() < compiling);
      const released = threads();
      await import(${JSON.stringify(pathToFileURL(join(dir, 'later.ts')).href)});
      const again = threads();
      process.stdout.write(JSON.stringify({ compiling, released, again }));
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      // No cached compiles: every import goes through esbuild.
      env: { ...process.env, TSX_DISABLE_CACHE: '1' },
      encoding: 'utf8',
    });
    const { compiling, released, again } = JSON.parse(out) as { compiling: number; released: number; again: number };
    assert.equal(released, compiling - 1, 'esbuild worker thread ended');
    assert.equal(again, compiling, 'a later import compiles on a new one');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

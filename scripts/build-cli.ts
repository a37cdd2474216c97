// `npm run build-cli`: bundles the CLI into one file, dist/vnfm.mjs (or the path given as the
// argument), that runs on Node 22 with nothing installed beside it, for operators who do not have
// the repository.
import { chmod } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../', import.meta.url));
const outfile = process.argv[2] ? resolve(process.argv[2]) : `${root}dist/vnfm.mjs`;
await build({
  entryPoints: [`${root}cli/main.ts`],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  // The CommonJS dependencies (cli-table3, cli-progress) call require() for Node's own modules.
  banner: { js: "#!/usr/bin/env node\nimport { createRequire as __vnfmRequire } from 'node:module';\nconst require = __vnfmRequire(import.meta.url);" },
  legalComments: 'none',
  logLevel: 'warning',
});
await chmod(outfile, 0o755);
process.stdout.write(`built ${outfile}\n`);

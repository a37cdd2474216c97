// `npm run build-console`: the operator's console (console/) built into the module its function serves (local/console-build.ts).
import { buildConsole } from '../local/console-build.ts';

process.stdout.write(`console built into ${await buildConsole()}\n`);

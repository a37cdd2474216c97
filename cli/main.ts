// `vnfm`: runs the command line, ending with exit code 1 and one plain message for an error the
// API answered (`Error <status>: <title>: <detail>`), a VNFM that cannot be reached, or an
// operation that did not complete.
import { CliError } from './client.ts';
import { buildProgram } from './program.ts';

try {
  await buildProgram().parseAsync(process.argv);
} catch (error) {
  if (!(error instanceof CliError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exitCode = error.exitCode;
}

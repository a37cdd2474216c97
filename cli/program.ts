// The `vnfm` command tree: global options (where the VNFM is, which profile) and every command
// family. Built by a function so that the completion script and the tests walk the same tree.
import { Command } from 'commander';
import pkg from '../package.json' with { type: 'json' };
import { alarmCommands } from './commands/alarms.ts';
import { completionCommand } from './commands/completion.ts';
import { loginCommand } from './commands/login.ts';
import { opCommands } from './commands/ops.ts';
import { packageCommands } from './commands/packages.ts';
import { snapshotCommands } from './commands/snapshots.ts';
import { vimCommands } from './commands/vims.ts';
import { vnfCommands } from './commands/vnf.ts';
import { watchCommand } from './commands/watch.ts';

export function buildProgram(): Command {
  const program = new Command('vnfm')
    .description("The VNF manager's command line: packages, VNF instances and their LCM operations, VIMs, alarms")
    .version(pkg.version)
    .option('--endpoint <url>', 'the VNFM API (default: $VNFM_ENDPOINT, else http://127.0.0.1:9890)')
    .option('--profile <name>', 'a profile saved by "vnfm login" (default: $VNFM_PROFILE)')
    .showHelpAfterError()
    .addHelpText(
      'after',
      `
Credentials: a profile (--profile, $VNFM_PROFILE), else $VNFM_DATA_DIR/credentials.json (default ./.vnfm),
else the profile "default". LCM commands wait for their operation and exit 0 when it COMPLETED.`,
    );
  loginCommand(program);
  packageCommands(program);
  vnfCommands(program);
  opCommands(program);
  snapshotCommands(program);
  vimCommands(program);
  alarmCommands(program);
  watchCommand(program);
  completionCommand(program);
  return program;
}

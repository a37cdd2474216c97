// `vnfm watch`: a live view of the VNF instances (state, VNFC counts) and the operations not yet
// at rest, drawn again every few seconds until Ctrl-C.
import type { Command } from 'commander';
import type { VnfmClient } from '../client.ts';
import { CliError } from '../client.ts';
import { clientFor, print } from '../context.ts';
import { renderList } from '../output.ts';
import type { OpOcc } from '../wait.ts';
import { OP_OCC_COLUMNS, UNFINISHED_FILTER } from './ops.ts';
import { INSTANCE_COLUMNS, type VnfInstance } from './vnf.ts';

/** One frame of the view. */
export async function watchFrame(client: VnfmClient, now = new Date()): Promise<string> {
  const [instances, running] = await Promise.all([
    client.list<VnfInstance>('/vnflcm/v2/vnf_instances', { fields: 'instantiatedVnfInfo' }),
    client.list<OpOcc>('/vnflcm/v2/vnf_lcm_op_occs', { filter: UNFINISHED_FILTER }),
  ]);
  return [
    `VNFM ${client.endpoint} at ${now.toISOString()}`,
    '',
    `VNF instances (${instances.length})`,
    renderList(instances, INSTANCE_COLUMNS, 'table'),
    `Operations in flight or waiting for the operator (${running.length})`,
    renderList(running, OP_OCC_COLUMNS, 'table'),
  ].join('\n');
}

const sleep = (ms: number) => new Promise((resolveSleep) => setTimeout(resolveSleep, ms));

export function watchCommand(program: Command): void {
  program
    .command('watch')
    .description('a live view of VNF instances and running operations (Ctrl-C ends it)')
    .option('--interval <seconds>', 'seconds between refreshes', '3')
    .option('--once', 'print one view and return')
    .action(async (options: { interval: string; once?: boolean }, command: Command) => {
      const seconds = Number(options.interval);
      if (!(seconds > 0)) throw new CliError(`--interval ${options.interval} is not a positive number of seconds`);
      const client = clientFor(command);
      if (options.once) {
        print(await watchFrame(client));
        return;
      }
      process.once('SIGINT', () => process.exit(0));
      const redraw = process.stdout.isTTY ? '\x1b[2J\x1b[H' : '';
      for (;;) {
        const frame = await watchFrame(client);
        process.stdout.write(`${redraw}${frame}\n(refreshed every ${seconds}s; Ctrl-C ends)\n`);
        await sleep(seconds * 1000);
      }
    });
}

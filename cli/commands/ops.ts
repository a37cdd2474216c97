// `vnfm op ...`: SOL003 LCM operation occurrences, and the tasks that move one on from FAILED_TEMP
// (retry, rollback, fail) or stop one in flight (cancel). retry, rollback and cancel follow the op
// occ as the LCM commands do.
import { type Command, Option } from 'commander';
import { clientFor, follow, print, showCommand, printList, readCommand, waitable } from '../context.ts';
import type { Column } from '../output.ts';
import type { OpOcc } from '../wait.ts';

const OP_OCCS = '/vnflcm/v2/vnf_lcm_op_occs';

export const OP_OCC_COLUMNS: readonly Column<OpOcc>[] = [
  { header: 'ID', value: (o) => o.id },
  { header: 'Operation', value: (o) => o.operation },
  { header: 'State', value: (o) => o.operationState },
  { header: 'VNF instance', value: (o) => o.vnfInstanceId },
  { header: 'Started', value: (o) => o.startTime },
  { header: 'State entered', value: (o) => o.stateEnteredTime },
];

/** Op occs not yet at rest, or waiting for the operator. */
export const UNFINISHED_FILTER = '(in,operationState,STARTING,PROCESSING,ROLLING_BACK,FAILED_TEMP)';

export function opCommands(program: Command): void {
  const op = program.command('op').description('LCM operation occurrences: list, show, retry, rollback, fail, cancel');

  readCommand(
    op
      .command('list')
      .description('list operation occurrences')
      .option('--vnf <id>', 'only those of this VNF instance')
      .option('--unfinished', 'only those STARTING, PROCESSING, ROLLING_BACK or FAILED_TEMP')
      .option('--filter <expression>', 'SOL013 attribute filter, e.g. "(eq,operation,INSTANTIATE)"'),
  ).action(async (options: { vnf?: string; unfinished?: boolean; filter?: string }, command: Command) => {
    const filters = [options.filter, options.vnf ? `(eq,vnfInstanceId,${options.vnf})` : undefined, options.unfinished ? UNFINISHED_FILTER : undefined];
    const filter = filters.filter(Boolean).join(';') || undefined;
    await printList(command, OP_OCCS, OP_OCC_COLUMNS, { filter });
  });

  showCommand(op, OP_OCCS, 'operation occurrence');

  const tasks: Array<{ name: string; description: string; succeeds: string[] }> = [
    { name: 'retry', description: 'retry a FAILED_TEMP operation and wait until it ends', succeeds: ['COMPLETED'] },
    { name: 'rollback', description: 'roll back a FAILED_TEMP operation and wait until it is ROLLED_BACK', succeeds: ['ROLLED_BACK'] },
  ];
  for (const task of tasks) {
    waitable(op.command(task.name).description(task.description).argument('<id>', 'op occ id')).action(
      async (id: string, options: { wait: boolean }, command: Command) => {
        const client = clientFor(command);
        const startedAt = Date.now();
        await client.request('POST', `${OP_OCCS}/${id}/${task.name}`);
        if (!options.wait) {
          print(id);
          return;
        }
        await follow(client, id, startedAt, task.succeeds);
      },
    );
  }

  op.command('fail')
    .description('give up a FAILED_TEMP operation: FAILED, the instance unlocked')
    .argument('<id>', 'op occ id')
    .action(async (id: string, _options: unknown, command: Command) => {
      const occ = (await clientFor(command).request<OpOcc>('POST', `${OP_OCCS}/${id}/fail`)).body;
      print(`${occ.operation} ${id} is ${occ.operationState}`);
    });

  waitable(
    op
      .command('cancel')
      .description('cancel an operation in flight; it ends FAILED_TEMP (or ROLLED_BACK when it had not started)')
      .argument('<id>', 'op occ id')
      .addOption(new Option('--mode <mode>', 'cancelMode').choices(['GRACEFUL', 'FORCEFUL']).default('GRACEFUL')),
  ).action(async (id: string, options: { mode: string; wait: boolean }, command: Command) => {
    const client = clientFor(command);
    const startedAt = Date.now();
    await client.request('POST', `${OP_OCCS}/${id}/cancel`, { body: { cancelMode: options.mode } });
    if (!options.wait) {
      print(id);
      return;
    }
    const occ = await follow(client, id, startedAt, ['FAILED_TEMP', 'ROLLED_BACK']);
    if (occ.operationState === 'FAILED_TEMP') print(`Next: vnfm op retry ${id}  |  vnfm op rollback ${id}  |  vnfm op fail ${id}`);
  });
}

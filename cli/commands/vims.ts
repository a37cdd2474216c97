// `vnfm vim ...`: the VIM registry (/vnfm/v1/vims). Registration authenticates against the VIM
// before anything is stored; its answer shows credentials masked.
import type { Command } from 'commander';
import { clientFor, formatOf, print, showCommand, printList, readCommand } from '../context.ts';
import { readObject } from '../input.ts';
import { renderItem, type Column } from '../output.ts';

const VIMS = '/vnfm/v1/vims';

interface Vim {
  id: string;
  name: string;
  vimType: string;
  status?: string;
  isDefault?: boolean;
  interfaceInfo?: { endpoint?: string };
}

export const VIM_COLUMNS: readonly Column<Vim>[] = [
  { header: 'ID', value: (v) => v.id },
  { header: 'Name', value: (v) => v.name },
  { header: 'Type', value: (v) => v.vimType },
  { header: 'Status', value: (v) => v.status },
  { header: 'Default', value: (v) => (v.isDefault ? 'yes' : '') },
  { header: 'Endpoint', value: (v) => v.interfaceInfo?.endpoint },
];

export function vimCommands(program: Command): void {
  const vim = program.command('vim').description('VIMs: list, show, register');

  readCommand(vim.command('list').description('list registered VIMs').option('--filter <expression>', 'SOL013 attribute filter')).action(
    async (options: { filter?: string }, command: Command) => {
      await printList(command, VIMS, VIM_COLUMNS, { filter: options.filter });
    },
  );

  showCommand(vim, VIMS, 'VIM');

  readCommand(
    vim
      .command('register')
      .description('register a VIM from a file: {name, vimType, interfaceInfo, accessInfo, isDefault}')
      .argument('<file>', 'JSON or YAML file'),
  ).action(async (file: string, _options: unknown, command: Command) => {
    const registered = (await clientFor(command).request<Vim>('POST', VIMS, { body: readObject(file, 'VIM file') })).body;
    const format = formatOf(command);
    if (format === 'table') print(`VIM ${registered.name} registered: ${registered.id} (${registered.status ?? 'registered'})`);
    else print(renderItem(registered, format));
  });
}

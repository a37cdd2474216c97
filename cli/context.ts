// What every command shares: a client for the endpoint and credentials the global options (or the
// environment) name, the -o option of read commands, and the launch of an LCM task that is then
// followed to its end unless --no-wait.
import { type Command, Option } from 'commander';
import { locationId, VnfmClient } from './client.ts';
import { resolveConnection } from './config.ts';
import { FORMATS, type Format, parseFormat, renderItem, renderList, type Column } from './output.ts';
import { followOpOcc, type OpOcc } from './wait.ts';

export function print(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

export function clientFor(command: Command): VnfmClient {
  const globals = command.optsWithGlobals<{ endpoint?: string; profile?: string }>();
  return new VnfmClient(resolveConnection({ endpoint: globals.endpoint, profile: globals.profile }));
}

/** Adds `-o, --output` to a read command. */
export function readCommand(command: Command): Command {
  return command.addOption(new Option('-o, --output <format>', 'output format').choices(FORMATS).default('table'));
}

export function formatOf(command: Command): Format {
  return parseFormat(command.opts<{ output?: string }>().output);
}

export async function printList<T>(command: Command, path: string, columns: readonly Column<T>[], query?: Record<string, string | undefined>): Promise<void> {
  const items = await clientFor(command).list<T>(path, query);
  print(renderList(items, columns, formatOf(command)));
}

export async function printItem(command: Command, path: string): Promise<void> {
  const reply = await clientFor(command).get(path);
  print(renderItem(reply.body, formatOf(command)));
}

/** `<group> show <id>`: GET `<collection>/<id>`, printed in the chosen format. */
export function showCommand(group: Command, collection: string, what: string): void {
  readCommand(group.command('show').description(`show a ${what}`).argument('<id>', `${what} id`)).action(
    async (id: string, _options: unknown, command: Command) => {
      await printItem(command, `${collection}/${id}`);
    },
  );
}

/** `<group> delete <id>`: DELETE `<collection>/<id>`. */
export function deleteCommand(group: Command, collection: string, what: string, description: string): Command {
  return group
    .command('delete')
    .description(description)
    .argument('<id>', `${what} id`)
    .action(async (id: string, _options: unknown, command: Command) => {
      await clientFor(command).request('DELETE', `${collection}/${id}`);
      print(`${what} ${id} deleted`);
    });
}

/** Adds --no-wait to an LCM command. */
export function waitable(command: Command): Command {
  return command.option('--no-wait', 'print the operation occurrence id and return at once');
}

/**
 * POSTs an LCM task and, unless --no-wait, follows its op occ (exit 0 on COMPLETED). With
 * --no-wait only the op occ id is printed, for scripts.
 */
export async function runTask(command: Command, path: string, body: unknown, succeeds?: readonly string[]): Promise<OpOcc | undefined> {
  const client = clientFor(command);
  const startedAt = Date.now();
  const reply = await client.request('POST', path, { body });
  const id = locationId(reply);
  if (command.opts<{ wait?: boolean }>().wait === false) {
    print(id);
    return undefined;
  }
  print(`Operation occurrence ${id} accepted; waiting for it (Ctrl-C stops waiting, not the operation)`);
  return follow(client, id, startedAt, succeeds);
}

export async function follow(client: VnfmClient, id: string, startedAt: number, succeeds?: readonly string[]): Promise<OpOcc> {
  return followOpOcc(client, id, { out: print, startedAt, ...(succeeds ? { succeeds } : {}) });
}

// `vnfm vnf ...`: SOL003 VNF instances and the LCM tasks on them. Each task builds its request
// from the flags (over --request FILE, when given, for attributes no flag names), POSTs it and
// follows the operation occurrence to its end.
import { type Command, Option } from 'commander';
import { CliError } from '../client.ts';
import { clientFor, deleteCommand, formatOf, print, readCommand, runTask, showCommand, waitable } from '../context.ts';
import { readList, readObject } from '../input.ts';
import { renderItem, renderList, type Column } from '../output.ts';

const INSTANCES = '/vnflcm/v2/vnf_instances';

export interface VnfInstance {
  id: string;
  vnfInstanceName?: string;
  vnfdId: string;
  instantiationState: string;
  instantiatedVnfInfo?: { flavourId?: string; vnfState?: string; vnfcResourceInfo?: unknown[]; vnfcInfo?: unknown[] };
}

export const INSTANCE_COLUMNS: readonly Column<VnfInstance>[] = [
  { header: 'ID', value: (v) => v.id },
  { header: 'Name', value: (v) => v.vnfInstanceName },
  { header: 'State', value: (v) => v.instantiationState },
  { header: 'VNF state', value: (v) => v.instantiatedVnfInfo?.vnfState },
  { header: 'Flavour', value: (v) => v.instantiatedVnfInfo?.flavourId },
  { header: 'VNFCs', value: (v) => vnfcCount(v) },
  { header: 'VNFD ID', value: (v) => v.vnfdId },
];

export function vnfcCount(instance: VnfInstance): number | undefined {
  const info = instance.instantiatedVnfInfo;
  if (!info) return undefined;
  return (info.vnfcResourceInfo ?? info.vnfcInfo ?? []).length;
}

/** --request FILE: a request body the flags then complete or override. */
function baseRequest(options: { request?: string }): Record<string, unknown> {
  return options.request ? readObject(options.request, '--request') : {};
}

function withRequest(command: Command): Command {
  return command.option('--request <file>', 'a request body (JSON or YAML) the other options complete');
}

function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new CliError(`"${value}" is not a whole number`);
  return number;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** A registered VIM named by id, as vimConnectionInfo wants it (its type read from the registry). */
async function vimConnection(command: Command, vimId: string): Promise<Record<string, unknown>> {
  const vim = (await clientFor(command).get<{ vimId?: string; id: string; vimType: string }>(`/vnfm/v1/vims/${vimId}`)).body;
  return { vim1: { vimId: vim.vimId ?? vim.id, vimType: vim.vimType } };
}

export function vnfCommands(program: Command): void {
  const vnf = program.command('vnf').description('VNF instances (SOL003): create, instantiate, scale, heal, operate, change, terminate, delete');

  readCommand(
    vnf
      .command('create')
      .description('create a VNF instance from an ONBOARDED, ENABLED package')
      .requiredOption('--vnfd-id <id>', "the package's VNFD id")
      .option('--name <name>', 'vnfInstanceName')
      .option('--description <text>', 'vnfInstanceDescription')
      .option('--metadata <file-or-json>', 'metadata (JSON or YAML file, or inline JSON)'),
  ).action(async (options: { vnfdId: string; name?: string; description?: string; metadata?: string }, command: Command) => {
    const body = {
      vnfdId: options.vnfdId,
      ...(options.name ? { vnfInstanceName: options.name } : {}),
      ...(options.description ? { vnfInstanceDescription: options.description } : {}),
      ...(options.metadata ? { metadata: readObject(options.metadata, '--metadata') } : {}),
    };
    const created = (await clientFor(command).request<VnfInstance>('POST', INSTANCES, { body })).body;
    const format = formatOf(command);
    if (format === 'table') print(`VNF instance ${created.id} created; next: vnfm vnf instantiate ${created.id} --flavour <flavour>`);
    else print(renderItem(created, format));
  });

  readCommand(
    vnf
      .command('list')
      .description('list VNF instances')
      .option('--filter <expression>', 'SOL013 attribute filter, e.g. "(eq,instantiationState,INSTANTIATED)"')
      .option('--all-fields', 'include the attributes lists leave out (instantiatedVnfInfo, metadata, ...)'),
  ).action(async (options: { filter?: string; allFields?: boolean }, command: Command) => {
    const format = formatOf(command);
    // The table counts VNFCs, which lists leave out by default; json and yaml print the API's list as asked.
    const query: Record<string, string | undefined> = { filter: options.filter };
    if (options.allFields) query.all_fields = '';
    else if (format === 'table') query.fields = 'instantiatedVnfInfo';
    const items = await clientFor(command).list<VnfInstance>(INSTANCES, query);
    print(renderList(items, INSTANCE_COLUMNS, format));
  });

  showCommand(vnf, INSTANCES, 'VNF instance');
  deleteCommand(vnf, INSTANCES, 'VNF instance', 'delete a NOT_INSTANTIATED VNF instance');

  waitable(
    withRequest(
      vnf
        .command('instantiate')
        .description('instantiate a VNF instance and wait until the operation ends')
        .argument('<id>', 'VNF instance id')
        .option('--flavour <id>', 'deployment flavour (flavourId)')
        .option('--level <id>', 'instantiation level (instantiationLevelId)')
        .option('--ext-vl <file-or-json>', 'extVirtualLinks: a list (JSON or YAML file, or inline JSON)')
        .option('--params <file>', 'additionalParams (JSON or YAML file, or inline JSON)')
        .option('--vim <vimId>', 'a registered VIM to instantiate on (else the default VIM of the type the package needs)'),
    ),
  ).action(
    async (id: string, options: { flavour?: string; level?: string; extVl?: string; params?: string; vim?: string; request?: string }, command: Command) => {
      const body = baseRequest(options);
      if (options.flavour) body.flavourId = options.flavour;
      if (!body.flavourId) throw new CliError('--flavour is required (or flavourId in --request)');
      if (options.level) body.instantiationLevelId = options.level;
      if (options.extVl) body.extVirtualLinks = readList(options.extVl, '--ext-vl');
      if (options.params) body.additionalParams = readObject(options.params, '--params');
      if (options.vim) body.vimConnectionInfo = await vimConnection(command, options.vim);
      await runTask(command, `${INSTANCES}/${id}/instantiate`, body);
    },
  );

  waitable(
    withRequest(
      vnf
        .command('scale')
        .description('scale a VNF out or in by steps of an aspect')
        .argument('<id>', 'VNF instance id')
        .requiredOption('--aspect <id>', 'scaling aspect (aspectId)')
        .addOption(new Option('--type <type>', 'direction').choices(['out', 'in']).makeOptionMandatory())
        .option('--steps <n>', 'numberOfSteps', positiveInteger, 1)
        .option('--params <file>', 'additionalParams (JSON or YAML file, or inline JSON)'),
    ),
  ).action(async (id: string, options: { aspect: string; type: 'out' | 'in'; steps: number; params?: string; request?: string }, command: Command) => {
    const body = { ...baseRequest(options), type: options.type === 'out' ? 'SCALE_OUT' : 'SCALE_IN', aspectId: options.aspect, numberOfSteps: options.steps };
    if (options.params) Object.assign(body, { additionalParams: readObject(options.params, '--params') });
    await runTask(command, `${INSTANCES}/${id}/scale`, body);
  });

  waitable(
    withRequest(
      vnf
        .command('scale-to-level')
        .description('scale a VNF to an instantiation level, or aspects to given levels')
        .argument('<id>', 'VNF instance id')
        .option('--level <id>', 'instantiation level (instantiationLevelId)')
        .option('--aspect-level <aspect=level>', 'an aspect and its scale level (repeatable)', collect)
        .option('--params <file>', 'additionalParams (JSON or YAML file, or inline JSON)'),
    ),
  ).action(async (id: string, options: { level?: string; aspectLevel?: string[]; params?: string; request?: string }, command: Command) => {
    const body = baseRequest(options);
    if (options.level) body.instantiationLevelId = options.level;
    if (options.aspectLevel) {
      body.scaleInfo = options.aspectLevel.map((pair) => {
        const [aspectId, level] = pair.split('=');
        if (!aspectId || level === undefined) throw new CliError(`--aspect-level "${pair}" is not aspect=level`);
        return { aspectId, scaleLevel: positiveInteger(level) };
      });
    }
    if (!body.instantiationLevelId && !body.scaleInfo) throw new CliError('give --level or --aspect-level');
    if (options.params) body.additionalParams = readObject(options.params, '--params');
    await runTask(command, `${INSTANCES}/${id}/scale_to_level`, body);
  });

  waitable(
    withRequest(
      vnf
        .command('heal')
        .description('heal VNFCs (all of them when none is named)')
        .argument('<id>', 'VNF instance id')
        .option('--vnfc <ids...>', 'vnfcInfo ids of the VNFCs to heal')
        .option('--cause <text>', 'why'),
    ),
  ).action(async (id: string, options: { vnfc?: string[]; cause?: string; request?: string }, command: Command) => {
    const body = baseRequest(options);
    if (options.vnfc) body.vnfcInstanceId = options.vnfc;
    if (options.cause) body.cause = options.cause;
    await runTask(command, `${INSTANCES}/${id}/heal`, body);
  });

  waitable(
    withRequest(
      vnf
        .command('operate')
        .description('start or stop the VNFCs of a VNF')
        .argument('<id>', 'VNF instance id')
        .addOption(new Option('--state <state>', 'changeStateTo').choices(['started', 'stopped']).makeOptionMandatory())
        .option('--vnfc <ids...>', 'only these VNFCs (vnfcInfo ids)')
        .option('--graceful <seconds>', 'stop gracefully, waiting up to this long', positiveInteger),
    ),
  ).action(async (id: string, options: { state: string; vnfc?: string[]; graceful?: number; request?: string }, command: Command) => {
    const body = { ...baseRequest(options), changeStateTo: options.state.toUpperCase() } as Record<string, unknown>;
    if (options.vnfc) body.vnfcInstanceId = options.vnfc;
    if (options.graceful !== undefined) {
      if (options.state !== 'stopped') throw new CliError('--graceful goes with --state stopped');
      body.stopType = 'GRACEFUL';
      body.gracefulStopTimeout = options.graceful;
    }
    await runTask(command, `${INSTANCES}/${id}/operate`, body);
  });

  waitable(
    withRequest(
      vnf
        .command('change-package')
        .description('move a VNF to another package (rolling update or blue-green)')
        .argument('<id>', 'VNF instance id')
        .requiredOption('--vnfd-id <id>', 'the new package VNFD id')
        .addOption(new Option('--upgrade-type <type>', 'additionalParams.upgrade_type').choices(['RollingUpdate', 'BlueGreen']))
        .option('--params <file>', 'additionalParams (JSON or YAML file, or inline JSON): coordinate scripts, vdu_params, ...')
        .option('--ext-vl <file-or-json>', 'extVirtualLinks: a list (JSON or YAML file, or inline JSON)'),
    ),
  ).action(async (id: string, options: { vnfdId: string; upgradeType?: string; params?: string; extVl?: string; request?: string }, command: Command) => {
    const body = { ...baseRequest(options), vnfdId: options.vnfdId } as Record<string, unknown>;
    const additionalParams = {
      ...(body.additionalParams as Record<string, unknown> | undefined),
      ...(options.params ? readObject(options.params, '--params') : {}),
    };
    if (options.upgradeType) additionalParams.upgrade_type = options.upgradeType;
    if (Object.keys(additionalParams).length) body.additionalParams = additionalParams;
    if (options.extVl) body.extVirtualLinks = readList(options.extVl, '--ext-vl');
    await runTask(command, `${INSTANCES}/${id}/change_vnfpkg`, body);
  });

  waitable(
    withRequest(
      vnf
        .command('change-ext-conn')
        .description("change a VNF's external connectivity")
        .argument('<id>', 'VNF instance id')
        .option('--ext-vl <file-or-json>', 'extVirtualLinks: a list (JSON or YAML file, or inline JSON)')
        .option('--params <file>', 'additionalParams (JSON or YAML file, or inline JSON)'),
    ),
  ).action(async (id: string, options: { extVl?: string; params?: string; request?: string }, command: Command) => {
    const body = baseRequest(options);
    if (options.extVl) body.extVirtualLinks = readList(options.extVl, '--ext-vl');
    if (!body.extVirtualLinks) throw new CliError('--ext-vl is required (or extVirtualLinks in --request)');
    if (options.params) body.additionalParams = readObject(options.params, '--params');
    await runTask(command, `${INSTANCES}/${id}/change_ext_conn`, body);
  });

  waitable(
    withRequest(
      vnf
        .command('change-flavour')
        .description('move a VNF to another deployment flavour')
        .argument('<id>', 'VNF instance id')
        .requiredOption('--flavour <id>', 'the new flavour (newFlavourId)')
        .option('--level <id>', 'instantiation level of the new flavour')
        .option('--ext-vl <file-or-json>', 'extVirtualLinks: a list (JSON or YAML file, or inline JSON)')
        .option('--params <file>', 'additionalParams (JSON or YAML file, or inline JSON)'),
    ),
  ).action(async (id: string, options: { flavour: string; level?: string; extVl?: string; params?: string; request?: string }, command: Command) => {
    const body = { ...baseRequest(options), newFlavourId: options.flavour } as Record<string, unknown>;
    if (options.level) body.instantiationLevelId = options.level;
    if (options.extVl) body.extVirtualLinks = readList(options.extVl, '--ext-vl');
    if (options.params) body.additionalParams = readObject(options.params, '--params');
    await runTask(command, `${INSTANCES}/${id}/change_flavour`, body);
  });

  waitable(
    withRequest(
      vnf
        .command('terminate')
        .description('terminate a VNF (FORCEFUL unless --graceful)')
        .argument('<id>', 'VNF instance id')
        .option('--graceful', 'GRACEFUL termination')
        .option('--timeout <seconds>', 'gracefulTerminationTimeout (with --graceful)', positiveInteger),
    ),
  ).action(async (id: string, options: { graceful?: boolean; timeout?: number; request?: string }, command: Command) => {
    const body = { ...baseRequest(options), terminationType: options.graceful ? 'GRACEFUL' : 'FORCEFUL' } as Record<string, unknown>;
    if (options.timeout !== undefined) {
      if (!options.graceful) throw new CliError('--timeout goes with --graceful');
      body.gracefulTerminationTimeout = options.timeout;
    }
    await runTask(command, `${INSTANCES}/${id}/terminate`, body);
  });
}

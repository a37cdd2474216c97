// `vnfm snapshot ...`: VNF snapshots (SOL003 5.4.21-5.4.23). Creating one is two requests: an
// empty "Individual VNF snapshot", then the CREATE_SNAPSHOT operation that fills it.
import type { Command } from 'commander';
import { locationId } from '../client.ts';
import { clientFor, deleteCommand, print, printList, readCommand, runTask, showCommand, waitable } from '../context.ts';
import { readObject } from '../input.ts';
import type { Column } from '../output.ts';

const SNAPSHOTS = '/vnflcm/v2/vnf_snapshots';

interface VnfSnapshotInfo {
  id: string;
  vnfSnapshot?: { id?: string; vnfInstanceId?: string; creationStartedAt?: string; creationFinishedAt?: string; vnfcSnapshots?: unknown[] };
}

export const SNAPSHOT_COLUMNS: readonly Column<VnfSnapshotInfo>[] = [
  { header: 'ID', value: (s) => s.id },
  { header: 'VNF instance', value: (s) => s.vnfSnapshot?.vnfInstanceId },
  { header: 'Started', value: (s) => s.vnfSnapshot?.creationStartedAt },
  { header: 'Finished', value: (s) => s.vnfSnapshot?.creationFinishedAt },
  { header: 'State', value: (s) => (!s.vnfSnapshot ? 'EMPTY' : s.vnfSnapshot.creationFinishedAt ? 'COMPLETE' : 'IN PROGRESS') },
];

export function snapshotCommands(program: Command): void {
  const snapshot = program.command('snapshot').description('VNF snapshots: create, revert, list, show, delete');

  waitable(
    snapshot
      .command('create')
      .description('snapshot a VNF instance (or one VNFC) and wait until the snapshot is complete')
      .argument('<vnf-id>', 'VNF instance id')
      .option('--vnfc <id>', 'only this VNFC (vnfcInfo id)')
      .option('--user-data <file-or-json>', 'userDefinedData (JSON or YAML file, or inline JSON)'),
  ).action(async (vnfId: string, options: { vnfc?: string; userData?: string }, command: Command) => {
    const client = clientFor(command);
    const snapshotId = locationId(await client.request('POST', SNAPSHOTS, { body: {} }));
    print(`Snapshot ${snapshotId}`);
    const body: Record<string, unknown> = { vnfSnapshotInfoId: snapshotId };
    if (options.vnfc) body.vnfcInstanceId = options.vnfc;
    if (options.userData) body.userDefinedData = readObject(options.userData, '--user-data');
    await runTask(command, `/vnflcm/v2/vnf_instances/${vnfId}/create_snapshot`, body);
  });

  waitable(
    snapshot
      .command('revert')
      .description('revert a VNF instance (or one VNFC) to a snapshot')
      .argument('<vnf-id>', 'VNF instance id')
      .requiredOption('--snapshot <id>', 'the snapshot (vnfSnapshotInfoId)')
      .option('--vnfc <id>', 'only this VNFC (vnfcInstanceId; with --vnfc-snapshot)')
      .option('--vnfc-snapshot <id>', "the VNFC's snapshot (vnfcSnapshotInfoId)"),
  ).action(async (vnfId: string, options: { snapshot: string; vnfc?: string; vnfcSnapshot?: string }, command: Command) => {
    const body: Record<string, unknown> = { vnfSnapshotInfoId: options.snapshot };
    if (options.vnfc) body.vnfcInstanceId = options.vnfc;
    if (options.vnfcSnapshot) body.vnfcSnapshotInfoId = options.vnfcSnapshot;
    await runTask(command, `/vnflcm/v2/vnf_instances/${vnfId}/revert_to_snapshot`, body);
  });

  readCommand(snapshot.command('list').description('list VNF snapshots').option('--filter <expression>', 'SOL013 attribute filter')).action(
    async (options: { filter?: string }, command: Command) => {
      await printList(command, SNAPSHOTS, SNAPSHOT_COLUMNS, { filter: options.filter });
    },
  );

  showCommand(snapshot, SNAPSHOTS, 'snapshot');
  deleteCommand(snapshot, SNAPSHOTS, 'snapshot', 'delete a snapshot and the images and volume snapshots it holds on the VIM');
}

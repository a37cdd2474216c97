// `vnfm alarm ...`: SOL003 VNF fault management alarms (/vnffm/v1/alarms).
import type { Command } from 'commander';
import { clientFor, print, showCommand, printList, readCommand } from '../context.ts';
import type { Column } from '../output.ts';

const ALARMS = '/vnffm/v1/alarms';

interface Alarm {
  id: string;
  managedObjectId: string;
  vnfcInstanceIds?: string[];
  perceivedSeverity: string;
  ackState: string;
  eventType: string;
  alarmRaisedTime: string;
  alarmClearedTime?: string;
  probableCause?: string;
}

export const ALARM_COLUMNS: readonly Column<Alarm>[] = [
  { header: 'ID', value: (a) => a.id },
  { header: 'VNF instance', value: (a) => a.managedObjectId },
  { header: 'VNFCs', value: (a) => a.vnfcInstanceIds },
  { header: 'Severity', value: (a) => a.perceivedSeverity },
  { header: 'Ack', value: (a) => a.ackState },
  { header: 'Type', value: (a) => a.eventType },
  { header: 'Raised', value: (a) => a.alarmRaisedTime },
  { header: 'Cause', value: (a) => a.probableCause },
];

export function alarmCommands(program: Command): void {
  const alarm = program.command('alarm').description('alarms (SOL003 fault management): list, show, ack');

  readCommand(
    alarm
      .command('list')
      .description('list alarms')
      .option('--active', 'only alarms not cleared')
      .option('--filter <expression>', 'SOL013 attribute filter, e.g. "(eq,perceivedSeverity,CRITICAL)"'),
  ).action(async (options: { active?: boolean; filter?: string }, command: Command) => {
    const filter = [options.filter, options.active ? '(neq,perceivedSeverity,CLEARED)' : undefined].filter(Boolean).join(';') || undefined;
    await printList(command, ALARMS, ALARM_COLUMNS, { filter });
  });

  showCommand(alarm, ALARMS, 'alarm');

  alarm
    .command('ack')
    .description('acknowledge an alarm')
    .argument('<id>', 'alarm id')
    .option('--undo', 'set it back to UNACKNOWLEDGED')
    .action(async (id: string, options: { undo?: boolean }, command: Command) => {
      const ackState = options.undo ? 'UNACKNOWLEDGED' : 'ACKNOWLEDGED';
      await clientFor(command).request('PATCH', `${ALARMS}/${id}`, { body: { ackState }, contentType: 'application/merge-patch+json' });
      print(`Alarm ${id} is ${ackState}`);
    });
}

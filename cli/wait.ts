// Following an LCM operation occurrence to its end: the op occ is polled, each state it enters is
// printed with the time since the command started, and so is each resource as it appears in
// `resourceChanges`. COMPLETED ends the wait; FAILED_TEMP, FAILED and ROLLED_BACK end it with an
// error that carries the op occ's own error detail and the commands an operator runs next.
import { CliError, problemLine, type VnfmClient } from './client.ts';
import { elapsed } from './output.ts';

export interface OpOcc {
  id: string;
  operation: string;
  operationState: string;
  vnfInstanceId: string;
  stateEnteredTime?: string;
  error?: Record<string, unknown>;
  resourceChanges?: Record<string, unknown[] | undefined>;
  [attribute: string]: unknown;
}

/** States after which nothing happens without the operator (SOL003 5.4.1.2). */
const AT_REST = new Set(['COMPLETED', 'FAILED_TEMP', 'FAILED', 'ROLLED_BACK']);

/** What `resourceChanges` lists, and which attribute names the descriptor of each entry. */
const RESOURCE_KINDS: ReadonlyArray<{ attribute: string; label: string; descriptor: string }> = [
  { attribute: 'affectedVnfcs', label: 'VNFC', descriptor: 'vduId' },
  { attribute: 'affectedVirtualLinks', label: 'virtual link', descriptor: 'vnfVirtualLinkDescId' },
  { attribute: 'affectedExtLinkPorts', label: 'external link port', descriptor: 'cpInstanceId' },
  { attribute: 'affectedVirtualStorages', label: 'storage', descriptor: 'virtualStorageDescId' },
];

const CHANGE_MARK: Record<string, string> = { ADDED: '+', REMOVED: '-', MODIFIED: '~', TEMPORARY: '~', LINK_PORT_ADDED: '+', LINK_PORT_REMOVED: '-' };

export function pollIntervalMs(env: Record<string, string | undefined> = process.env): number {
  const configured = Number(env.VNFM_POLL_INTERVAL_MS);
  return Number.isFinite(configured) && configured > 0 ? configured : 1000;
}

const sleep = (ms: number) => new Promise((resolveSleep) => setTimeout(resolveSleep, ms));

/** The progress lines a change of the op occ gives: its new state, and resources not seen before. */
export function progressLines(occ: OpOcc, seen: Set<string>, lastState: string | undefined, at: string): string[] {
  const lines: string[] = [];
  if (occ.operationState !== lastState) lines.push(`[${at}] ${occ.operation} ${occ.operationState}`);
  for (const kind of RESOURCE_KINDS) {
    for (const entry of (occ.resourceChanges?.[kind.attribute] ?? []) as Array<Record<string, unknown>>) {
      const change = String(entry.changeType ?? '');
      const key = `${kind.attribute} ${String(entry.id)} ${change}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const resource = entry.computeResource ?? entry.networkResource ?? entry.storageResource ?? entry.resourceHandle;
      const vimId = (resource as { resourceId?: string } | undefined)?.resourceId;
      const descriptor = entry[kind.descriptor] ? `${String(entry[kind.descriptor])} ` : '';
      lines.push(
        `[${at}]   ${CHANGE_MARK[change] ?? '*'} ${kind.label} ${descriptor}${String(entry.id)}${vimId && vimId !== entry.id ? ` (${vimId})` : ''} ${change}`,
      );
    }
  }
  return lines;
}

/** The commands that move an op occ on from FAILED_TEMP (SOL003: TERMINATE and HEAL cannot be rolled back). */
export function nextCommands(occ: Pick<OpOcc, 'id' | 'operation' | 'operationState'>): string[] {
  if (occ.operationState !== 'FAILED_TEMP') return [];
  const tasks = occ.operation === 'TERMINATE' || occ.operation === 'HEAL' ? ['retry', 'fail'] : ['retry', 'rollback', 'fail'];
  return tasks.map((task) => `vnfm op ${task} ${occ.id}`);
}

/** The error an operation that did not complete ends the command with. */
export function operationFailure(occ: OpOcc): CliError {
  const lines = [`${occ.operation} ${occ.id} ended ${occ.operationState}`];
  if (occ.error) {
    const status = Number(occ.error.status ?? 0);
    lines.push(problemLine(status, '', occ.error));
  }
  const next = nextCommands(occ);
  if (next.length) lines.push(`Next: ${next.join('  |  ')}`);
  else if (occ.operationState === 'ROLLED_BACK') lines.push(`The VNF instance is as it was before; see "vnfm op show ${occ.id}"`);
  return new CliError(lines.join('\n'));
}

export interface FollowOptions {
  out: (line: string) => void;
  intervalMs?: number;
  /** When the command started (progress times count from here). */
  startedAt?: number;
  /** The states that end the wait well (COMPLETED; a rollback's is ROLLED_BACK). */
  succeeds?: readonly string[];
}

/** Polls the op occ until it rests; returns it in a state of `succeeds`, throws operationFailure otherwise. */
export async function followOpOcc(client: VnfmClient, id: string, options: FollowOptions): Promise<OpOcc> {
  const startedAt = options.startedAt ?? Date.now();
  const interval = options.intervalMs ?? pollIntervalMs();
  const seen = new Set<string>();
  let lastState: string | undefined;
  // Ctrl-C leaves the operation running: say how to find it again.
  const onInterrupt = () => {
    options.out(`Stopped waiting; ${id} goes on. Follow it with "vnfm op show ${id}".`);
    process.exit(130);
  };
  process.once('SIGINT', onInterrupt);
  try {
    for (;;) {
      const occ = (await client.get<OpOcc>(`/vnflcm/v2/vnf_lcm_op_occs/${id}`)).body;
      for (const line of progressLines(occ, seen, lastState, elapsed(Date.now() - startedAt))) options.out(line);
      lastState = occ.operationState;
      if (AT_REST.has(occ.operationState)) {
        if ((options.succeeds ?? ['COMPLETED']).includes(occ.operationState)) return occ;
        throw operationFailure(occ);
      }
      await sleep(interval);
    }
  } finally {
    process.off('SIGINT', onInterrupt);
  }
}

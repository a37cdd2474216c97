// OPERATE on OpenStack (SOL003 5.4.10): the VNFCs' servers are stopped and started with Nova's own
// server actions, `os-stop` and `os-start`, directly on Nova: Heat does not manage a server's power
// state, and a stack update would neither stop nor start one.
//
// FORCEFUL and GRACEFUL. Nova's API has one way to stop a server: `os-stop`, which is already a clean
// shutdown (the guest gets an ACPI power-button event and up to Nova's `shutdown_timeout`, or the
// image's `os_shutdown_timeout`, to power itself off, after which Nova powers it off hard). There is
// no API for an immediate power cut, nor a per-request shutdown timeout. So:
// - FORCEFUL (and a stop without stopType): `os-stop` of every server at once, as soon as the
//   operation starts; done when each is SHUTOFF.
// - GRACEFUL: the VNF is first taken out of service by the VNFD's `operate_start` script, which runs
//   before any server is touched and receives the request with its gracefulStopTimeout; then the same
//   `os-stop`, and the VNFM waits for SHUTOFF. gracefulStopTimeout bounds the clean shutdown the VNFM
//   waits for: past it, a server still powering off is noted in the op occ's warnings, and its hard
//   power-off is Nova's own, which the VNFM keeps waiting for (nothing in Nova's API is harder).
// A server already in the wanted state is left alone. What the VNFM stopped is remembered in the
// driver state (`stopped`), so that the health check tells a server stopped on purpose from one that
// shut down by itself.
import * as z from 'zod';
import { log } from '#lib/log.ts';
import type { CollectedResources, DriverState, OperateChange, OperationContext, Progress } from '#lib/vim/driver.ts';
import { serviceMessage, VimError } from './errors.ts';
import { OpenStackSession } from './keystone.ts';
import { stateOf, type OpenStackState } from './state.ts';

const serverBody = z
  .object({
    server: z
      .object({
        id: z.string(),
        status: z.string(),
        'OS-EXT-STS:task_state': z.string().nullish(),
        'OS-EXT-AZ:availability_zone': z.string().nullish(),
        fault: z.object({ message: z.string().optional() }).passthrough().nullish(),
      })
      .passthrough(),
  })
  .passthrough();

type Server = z.infer<typeof serverBody>['server'];

/** What an OPERATE carries between its steps. */
const operateSchema = z.object({
  changeStateTo: z.enum(['STARTED', 'STOPPED']),
  servers: z.array(z.string()),
  /** GRACEFUL: when gracefulStopTimeout runs out (RFC 3339). */
  deadline: z.string().optional(),
  /** GRACEFUL: the servers already noted as not shut down within gracefulStopTimeout. */
  late: z.array(z.string()).optional(),
});
type Operation = z.infer<typeof operateSchema>;

const WANTED = { STOPPED: 'SHUTOFF', STARTED: 'ACTIVE' } as const;
const ACTION = { STOPPED: 'os-stop', STARTED: 'os-start' } as const;

/** The Nova servers the VNFM stopped on purpose (an OPERATE to STOPPED), by the driver state. */
export function stoppedServers(raw: DriverState): Set<string> {
  const stopped = raw?.stopped;
  return new Set(Array.isArray(stopped) ? stopped.filter((id): id is string => typeof id === 'string') : []);
}

async function readServer(session: OpenStackSession, id: string): Promise<Server | undefined> {
  const response = await session.request('nova', 'compute', `/servers/${encodeURIComponent(id)}`, { what: `reading server ${id}`, accept: [200, 404] });
  if (response.status === 404) {
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
  return (await session.json('nova', response, serverBody, `reading server ${id}`)).server;
}

const taskOf = (server: Server): string | undefined => server['OS-EXT-STS:task_state'] ?? undefined;
const settled = (server: Server, target: Operation['changeStateTo']): boolean => server.status === WANTED[target] && !taskOf(server);

/**
 * Asks Nova to bring the server to `target` unless it is there or on its way. Nova answers 409 when
 * the server's state does not allow the action: that is a failure with Nova's reason, unless the
 * server has meanwhile reached the wanted state or a task is moving it.
 */
async function nudge(session: OpenStackSession, server: Server, target: Operation['changeStateTo'], vnfInstanceId: string): Promise<void> {
  if (settled(server, target) || taskOf(server)) return;
  const action = ACTION[target];
  const response = await session.request('nova', 'compute', `/servers/${encodeURIComponent(server.id)}/action`, {
    method: 'POST',
    json: { [action]: null },
    accept: [202, 409],
    what: `${action} of server ${server.id}`,
  });
  const text = await response.text().catch(() => '');
  log.info('openstack: server power action', { vnfInstanceId, serverId: server.id, action, from: server.status, status: response.status });
  if (response.status !== 409) return;
  const again = await readServer(session, server.id);
  if (again && (settled(again, target) || taskOf(again))) return;
  throw new VimError('nova', `${action} of server ${server.id} (${server.status}) was refused: ${serviceMessage(text)}`, {
    vimStatus: 409,
    vimMessage: serviceMessage(text),
  });
}

function operationOf(state: OpenStackState): Operation | undefined {
  const parsed = operateSchema.safeParse(state.operate);
  return parsed.success ? parsed.data : undefined;
}

export async function operateStart(ctx: OperationContext, raw: DriverState, change: OperateChange): Promise<DriverState> {
  const state = stateOf(ctx, raw);
  const session = new OpenStackSession(ctx.vim);
  const servers = [...new Set(change.vnfcs.map((vnfc) => vnfc.resourceId))];
  for (const id of servers) {
    const server = await readServer(session, id);
    if (!server) throw new VimError('nova', `server ${id} of VNF instance ${ctx.vnfInstanceId} no longer exists`, { vimStatus: 404 });
    await nudge(session, server, change.changeStateTo, ctx.vnfInstanceId);
  }
  const operation: Operation = {
    changeStateTo: change.changeStateTo,
    servers,
    ...(change.changeStateTo === 'STOPPED' && change.stopType === 'GRACEFUL'
      ? { deadline: new Date(Date.now() + (change.gracefulStopTimeout ?? 0) * 1000).toISOString() }
      : {}),
  };
  // Warnings are this operation's own (the engine copies them to the op occ).
  const { warnings: _earlier, ...rest } = state;
  return { ...rest, operate: operation };
}

export async function operatePoll(ctx: OperationContext, raw: DriverState, change: OperateChange): Promise<Progress> {
  const state = stateOf(ctx, raw);
  const operation = operationOf(state) ?? { changeStateTo: change.changeStateTo, servers: change.vnfcs.map((vnfc) => vnfc.resourceId) };
  const session = new OpenStackSession(ctx.vim);
  const target = operation.changeStateTo;
  const pending: string[] = [];
  for (const id of operation.servers) {
    const server = await readServer(session, id);
    if (!server) return { status: 'FAILED', state: { ...state }, reason: `server ${id} no longer exists` };
    if (settled(server, target)) continue;
    if (target === 'STARTED' && server.status === 'ERROR' && !taskOf(server)) {
      return { status: 'FAILED', state: { ...state }, reason: `server ${id} is ERROR${server.fault?.message ? `: ${server.fault.message}` : ''}` };
    }
    // A server with no task that is not where it should be lost the action (or was changed since): ask again.
    await nudge(session, server, target, ctx.vnfInstanceId);
    pending.push(id);
  }
  if (pending.length) {
    const late = pending.filter((id) => operation.deadline && Date.now() > Date.parse(operation.deadline) && !operation.late?.includes(id));
    if (late.length) {
      const warning = `server(s) ${late.join(', ')} did not shut down within gracefulStopTimeout (${change.gracefulStopTimeout ?? 0} s); Nova powers a guest off itself once its shutdown_timeout has passed`;
      log.warn('openstack: graceful stop overran gracefulStopTimeout', { vnfInstanceId: ctx.vnfInstanceId, servers: late });
      return {
        status: 'IN_PROGRESS',
        state: {
          ...state,
          operate: { ...operation, late: [...(operation.late ?? []), ...late] },
          warnings: [...((state.warnings as string[] | undefined) ?? []), warning],
        },
      };
    }
    return { status: 'IN_PROGRESS', state: { ...state } };
  }
  const stopped = stoppedServers(state);
  for (const id of operation.servers) {
    if (target === 'STOPPED') stopped.add(id);
    else stopped.delete(id);
  }
  const { operate: _operate, ...lasting } = state;
  return { status: 'DONE', state: { ...lasting, stopped: [...stopped] } };
}

/** Nova requests collect has in flight at once for a VNF's servers. */
const READ_CONCURRENCY = 8;

/** vnfcInfo with each VNFC's state as Nova has it (a SHUTOFF server is a STOPPED VNFC, any other a STARTED one), and each VNFC's zone. */
export async function withPowerStates(ctx: OperationContext, collected: CollectedResources): Promise<CollectedResources> {
  if (!collected.vnfcInfo?.length) return collected;
  const session = new OpenStackSession(ctx.vim);
  const statuses = new Map<string, string | undefined>();
  const zones = new Map<string, string>();
  const queue = [...collected.vnfcResourceInfo];
  await Promise.all(
    Array.from({ length: Math.min(READ_CONCURRENCY, queue.length) }, async () => {
      for (let vnfc = queue.shift(); vnfc; vnfc = queue.shift()) {
        const id = String((vnfc.computeResource as { resourceId?: unknown } | undefined)?.resourceId ?? vnfc.id);
        const server = await readServer(session, id);
        statuses.set(String(vnfc.id), server?.status);
        // Nova names the zone once the server is scheduled (empty before).
        const zone = server?.['OS-EXT-AZ:availability_zone'];
        if (zone) zones.set(String(vnfc.id), zone);
      }
    }),
  );
  return {
    ...collected,
    // SOL003 VnfcResourceInfo.zoneId: where the VIM placed the server.
    vnfcResourceInfo: collected.vnfcResourceInfo.map((vnfc) => (zones.has(String(vnfc.id)) ? { ...vnfc, zoneId: zones.get(String(vnfc.id)) } : vnfc)),
    vnfcInfo: collected.vnfcInfo.map((info) => ({ ...info, vnfcState: statuses.get(String(info.vnfcResourceInfoId)) === 'SHUTOFF' ? 'STOPPED' : 'STARTED' })),
  };
}

// VNFC performance on an OpenStack VIM, read from Nova's server diagnostics (microversion 2.48, the
// standard shape every hypervisor driver fills the same way): vCPU utilisation, memory used of the
// flavor's, and per-NIC traffic counters. Nova has no bulk form of it, so it is one call per VNFC
// (a bounded number at a time), plus a Neutron port list per 50 servers to tell which NIC (a MAC
// address in the diagnostics) is which CP. The standard disk details carry I/O counters only, no
// capacity, so disk usage is left absent. Diagnostics are an admin API on a stock Nova
// (os_compute_api:os-server-diagnostics); a VIM user without it gets every VNFC unavailable, saying so.
import * as z from 'zod';
import { log } from '#lib/log.ts';
import type { CpCounters, MeasureReport, MeasureTarget, VimConnection, VnfcMeasurement } from '#lib/vim/driver.ts';
import { VimError } from './errors.ts';
import { OpenStackSession } from './keystone.ts';
import { stoppedServers } from './operate.ts';

/** The first microversion whose diagnostics have the standardised shape (cpu_details, nic_details, ...). */
const DIAGNOSTICS_MICROVERSION = { 'OpenStack-API-Version': 'compute 2.48', 'X-OpenStack-Nova-API-Version': '2.48' };
/** Diagnostics calls in flight at once per VIM: enough to read 1,000 VNFCs in a few seconds, few enough not to flood nova-api. */
const CONCURRENCY = 16;
/** Servers per port list: 50 UUIDs keep the query well under the usual 8 KB request-line limits. */
const SERVERS_PER_PORT_LIST = 50;
/** The external CP ids the driver gives (resources.ts): its prefix and the Neutron port id. */
const EXT_CP_PREFIX = 'cp-';

const count = z.number().nullish();
const diagnosticsSchema = z
  .object({
    cpu_details: z.array(z.object({ utilisation: count }).passthrough()).nullish(),
    memory_details: z.object({ maximum: count, used: count }).passthrough().nullish(),
    nic_details: z
      .array(z.object({ mac_address: z.string().nullish(), rx_octets: count, tx_octets: count, rx_packets: count, tx_packets: count }).passthrough())
      .nullish(),
  })
  .passthrough();
type Diagnostics = z.infer<typeof diagnosticsSchema>;

const portList = z.object({
  ports: z.array(z.object({ id: z.string(), mac_address: z.string().nullish(), device_id: z.string().nullish() }).passthrough()),
});

type TargetVnfc = MeasureTarget['vnfcs'][number];
type TargetCp = TargetVnfc['cps'][number];

const finite = (value: number | null | undefined): value is number => typeof value === 'number' && Number.isFinite(value);
const percent = (value: number): number => Math.min(100, Math.max(0, value));

/** The Neutron port of a CP: the one the instance records, else the driver's own link port and external CP ids, which are port ids. */
function portOf(cp: TargetCp): string | undefined {
  if (cp.portResourceId) return cp.portResourceId;
  if (cp.vnfLinkPortId) return cp.vnfLinkPortId;
  return cp.vnfExtCpId?.startsWith(EXT_CP_PREFIX) ? cp.vnfExtCpId.slice(EXT_CP_PREFIX.length) : undefined;
}

/** One VNFC's figures from its diagnostics; `macs` maps the server's port ids to their MAC addresses. */
export function measurementOf(
  vnfInstanceId: string,
  vnfc: TargetVnfc,
  diagnostics: Diagnostics,
  macs: ReadonlyMap<string, string>,
  at: string,
): VnfcMeasurement {
  const utilisations = (diagnostics.cpu_details ?? []).map((cpu) => cpu.utilisation).filter(finite);
  const memory = diagnostics.memory_details;
  const nics = new Map((diagnostics.nic_details ?? []).filter((nic) => nic.mac_address).map((nic) => [String(nic.mac_address).toLowerCase(), nic]));
  const cps = vnfc.cps.map((cp): CpCounters => {
    const port = portOf(cp);
    const mac = port ? macs.get(port) : undefined;
    const nic = mac ? nics.get(mac) : undefined;
    return {
      cpInstanceId: cp.cpInstanceId,
      cpdId: cp.cpdId,
      external: cp.external,
      ...(cp.vnfExtCpId ? { vnfExtCpId: cp.vnfExtCpId } : {}),
      // rx/tx as libvirt reports them, from the guest's side: what the VNFC received and sent.
      ...(finite(nic?.rx_octets) ? { bytesIn: nic.rx_octets } : {}),
      ...(finite(nic?.tx_octets) ? { bytesOut: nic.tx_octets } : {}),
      ...(finite(nic?.rx_packets) ? { packetsIn: nic.rx_packets } : {}),
      ...(finite(nic?.tx_packets) ? { packetsOut: nic.tx_packets } : {}),
    };
  });
  return {
    vnfInstanceId,
    vnfcResourceInfoId: vnfc.vnfcResourceInfoId,
    vduId: vnfc.vduId,
    resourceId: vnfc.resourceId,
    at,
    ...(utilisations.length ? { cpuUsagePercent: percent(utilisations.reduce((sum, value) => sum + value, 0) / utilisations.length) } : {}),
    ...(finite(memory?.used) && finite(memory?.maximum) && memory.maximum > 0 ? { memoryUsagePercent: percent((memory.used / memory.maximum) * 100) } : {}),
    cps,
  };
}

/** Why Nova would not give a server's diagnostics, in words an operator acts on. */
function refusal(status: number, serverId: string, stopped: boolean, message: string): string {
  const said = message ? `: ${message}` : '';
  if (status === 404) return `Nova server ${serverId} no longer exists`;
  if (status === 403)
    return `Nova refused the diagnostics of server ${serverId} (403${said}); its policy os_compute_api:os-server-diagnostics allows admins only, so the VIM user needs the admin role`;
  if (status === 409) return stopped ? `Nova server ${serverId} is stopped (by an OPERATE)` : `Nova server ${serverId} is not running (409${said})`;
  if (status === 406) return `Nova does not offer microversion 2.48, the standard diagnostics (406${said})`;
  return `Nova answered ${status} to the diagnostics of server ${serverId}${said}`;
}

/**
 * Server id -> its ports' MAC addresses by port id: Neutron's port list filtered by the servers
 * (device_id), SERVERS_PER_PORT_LIST at a time. Not the whole list: an admin, which diagnostics
 * need, would get every port of the cloud.
 */
async function portMacs(session: OpenStackSession, serverIds: string[], counted: () => void): Promise<Map<string, Map<string, string>>> {
  const byServer = new Map<string, Map<string, string>>();
  const what = "listing the servers' ports to match NICs to CPs";
  for (let at = 0; at < serverIds.length; at += SERVERS_PER_PORT_LIST) {
    const query = new URLSearchParams([
      ...serverIds.slice(at, at + SERVERS_PER_PORT_LIST).map((id): [string, string] => ['device_id', id]),
      ['fields', 'id'],
      ['fields', 'mac_address'],
      ['fields', 'device_id'],
    ]);
    const response = await session.request('neutron', 'network', `/ports?${query}`, { what }, (base) => (/\/v2\.0$/.test(base) ? base : `${base}/v2.0`));
    counted();
    for (const port of (await session.json('neutron', response, portList, what)).ports) {
      if (!port.device_id || !port.mac_address) continue;
      const ports = byServer.get(port.device_id) ?? new Map<string, string>();
      ports.set(port.id, port.mac_address.toLowerCase());
      byServer.set(port.device_id, ports);
    }
  }
  return byServer;
}

/** A failure that is the VIM's as a whole (no token, no answer at all), not one server's. */
const wholeVim = (error: unknown): boolean => error instanceof VimError && (error.service === 'keystone' || error.vimStatus === undefined);

export async function openStackMeasure(vim: VimConnection, targets: MeasureTarget[]): Promise<MeasureReport> {
  const session = new OpenStackSession(vim);
  let apiCalls = 0;
  const counted = () => {
    apiCalls++;
  };
  const report: MeasureReport = { results: [], unavailable: [], apiCalls: 0 };
  const work = targets.flatMap((target) => {
    const stopped = stoppedServers(target.state);
    return target.vnfcs.map((vnfc) => ({ target, vnfc, stopped: stopped.has(vnfc.resourceId) }));
  });
  // Without ports the counters cannot be told apart, but the gauges still can: a failed list costs the CPs only.
  const withCps = [...new Set(work.filter(({ vnfc }) => vnfc.cps.length > 0).map(({ vnfc }) => vnfc.resourceId))];
  const macs = withCps.length
    ? portMacs(session, withCps, counted).catch((error: unknown) => {
        if (wholeVim(error)) throw error;
        log.warn('openstack: could not list ports; CP counters left out of this read', { vimId: vim.vimId, error });
        return new Map<string, Map<string, string>>();
      })
    : Promise.resolve(new Map<string, Map<string, string>>());
  macs.catch(() => undefined); // awaited below; a rejection before then is not unhandled

  // Nova's policy and its microversions are the same for every server: once refused, not asked again.
  let refusedToAll: { status: number; message: string } | undefined;
  const read = async ({ target, vnfc, stopped }: (typeof work)[number]): Promise<void> => {
    const unavailable = (reason: string) =>
      report.unavailable.push({ vnfInstanceId: target.vnfInstanceId, vnfcResourceInfoId: vnfc.vnfcResourceInfoId, reason });
    if (refusedToAll) {
      unavailable(refusal(refusedToAll.status, vnfc.resourceId, stopped, refusedToAll.message));
      return;
    }
    const what = `reading the diagnostics of server ${vnfc.resourceId}`;
    let response: Response;
    try {
      response = await session.request('nova', 'compute', `/servers/${encodeURIComponent(vnfc.resourceId)}/diagnostics`, {
        what,
        headers: DIAGNOSTICS_MICROVERSION,
        accept: [200],
      });
      counted();
    } catch (error) {
      if (wholeVim(error)) throw error;
      counted();
      const status = error instanceof VimError ? (error.vimStatus ?? 0) : 0;
      const message = error instanceof VimError ? (error.vimMessage ?? '') : String(error);
      if (status === 403 || status === 406) refusedToAll = { status, message };
      unavailable(refusal(status, vnfc.resourceId, stopped, message));
      return;
    }
    const at = new Date().toISOString();
    let diagnostics: Diagnostics;
    try {
      diagnostics = await session.json('nova', response, diagnosticsSchema, what);
    } catch (error) {
      unavailable(error instanceof Error ? error.message : String(error));
      return;
    }
    const ports = (await macs).get(vnfc.resourceId) ?? new Map<string, string>();
    report.results.push(measurementOf(target.vnfInstanceId, vnfc, diagnostics, ports, at));
  };

  // The first read alone: a refusal for every server (or of the whole VIM) then costs one call, not one per worker.
  if (work.length) await read(work[0] as (typeof work)[number]);
  let next = 1;
  let failed = false;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, work.length) }, async () => {
      // A failure of the whole VIM ends the read: the other servers would only fail the same way, one timeout each.
      while (next < work.length && !failed)
        await read(work[next++] as (typeof work)[number]).catch((error: unknown) => {
          failed = true;
          throw error;
        });
    }),
  );
  await macs;
  report.apiCalls = apiCalls;
  return report;
}

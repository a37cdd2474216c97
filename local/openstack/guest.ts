// What runs inside each simulated server, for performance management: CPU utilisation, memory
// used, and disk and NIC counters as the hypervisor reports them through Nova's diagnostics.
// Counters grow at per-second rates in simulated time (one simulated second is 1000 × timeScale
// ms; a timeScale of 0 counts real time), only while the guest runs, and never go down, so a PM
// job can take deltas between two reads exactly as it would against libvirt. Tests set the load
// under /_sim/servers/{id}/load.
import { z } from 'zod';
import type { Port } from './neutron.ts';
import type { Server } from './nova.ts';
import { badRequest } from './state.ts';

const NIC_COUNTERS = ['rxOctets', 'txOctets', 'rxPackets', 'txPackets', 'rxErrors', 'txErrors', 'rxDrop', 'txDrop'] as const;
const DISK_COUNTERS = ['readBytes', 'writeBytes', 'readRequests', 'writeRequests'] as const;
type NicCounter = (typeof NIC_COUNTERS)[number];
type DiskCounter = (typeof DISK_COUNTERS)[number];
type Counters<K extends string> = Record<K, number>;

/** A plausible idle guest: a few percent CPU, light traffic and disk writes (logs). */
const DEFAULT_CPU_UTILISATION = 3;
const DEFAULT_MEMORY_FRACTION = 0.3;
const DEFAULT_NIC_RATES: Counters<NicCounter> = { rxOctets: 1200, txOctets: 800, rxPackets: 12, txPackets: 9, rxErrors: 0, txErrors: 0, rxDrop: 0, txDrop: 0 };
const DEFAULT_DISK_RATES: Counters<DiskCounter> = { readBytes: 4096, writeBytes: 16384, readRequests: 1, writeRequests: 4 };

interface Device<K extends string> {
  counters: Counters<K>;
  rates: Counters<K>;
}

interface GuestLoad {
  cpuUtilisation: number;
  /** undefined = a fixed share of the flavor's RAM. */
  memoryUsedMb: number | undefined;
  cpuTimeNs: number;
  /** Simulated ms the guest has run since it last started. */
  uptimeMs: number;
  nics: Map<string, Device<NicCounter>>;
  disks: Map<string, Device<DiskCounter>>;
  /** Rates for NICs and disks that appear later (a port attached, a volume added). */
  nicRates: Counters<NicCounter>;
  diskRates: Counters<DiskCounter>;
  running: boolean;
  /** Real time up to which the counters are accounted. */
  accountedAt: number;
}

const amount = z.number().finite().min(0);
const nicSettings = z
  .object({
    /** A port id or MAC address: only that NIC (default: every NIC). */
    port: z.string().min(1).optional(),
    ...Object.fromEntries(
      NIC_COUNTERS.flatMap((k) => [
        [k, amount.optional()],
        [`${k}PerSecond`, amount.optional()],
      ]),
    ),
  })
  .strict();
const diskSettings = z
  .object({
    /** A device name such as "vda" (default: every disk). */
    device: z.string().min(1).optional(),
    ...Object.fromEntries(
      DISK_COUNTERS.flatMap((k) => [
        [k, amount.optional()],
        [`${k}PerSecond`, amount.optional()],
      ]),
    ),
  })
  .strict();

export const loadSchema = z
  .object({
    /** Percent of each vCPU, 0-100. */
    cpuUtilisation: z.number().finite().min(0).max(100).optional(),
    memoryUsedMb: amount.optional(),
    nic: z.union([nicSettings, z.array(nicSettings)]).optional(),
    disk: z.union([diskSettings, z.array(diskSettings)]).optional(),
    /** Lets this many simulated seconds pass for this guest at once (as if it had run that long). */
    advanceSeconds: amount.optional(),
  })
  .strict();
export type LoadSettings = z.input<typeof loadSchema>;

/** Who the guest is: its server, its NICs (ports) and its disks (device names). */
export interface GuestView {
  server: Server;
  ports: Port[];
  disks: string[];
}

export class Guests {
  readonly #loads = new Map<string, GuestLoad>();

  constructor(private readonly timeScale: number) {}

  /** Brings a guest's counters up to now; called whenever its server changes and before reads. */
  sync(view: GuestView, now = Date.now()): GuestLoad {
    const { server } = view;
    let load = this.#loads.get(server.id);
    if (!load) {
      load = {
        cpuUtilisation: DEFAULT_CPU_UTILISATION,
        memoryUsedMb: undefined,
        cpuTimeNs: 0,
        uptimeMs: 0,
        nics: new Map(),
        disks: new Map(),
        nicRates: { ...DEFAULT_NIC_RATES },
        diskRates: { ...DEFAULT_DISK_RATES },
        running: false,
        accountedAt: now,
      };
      this.#loads.set(server.id, load);
    }
    for (const port of view.ports) if (!load.nics.has(port.id)) load.nics.set(port.id, { counters: zero(NIC_COUNTERS), rates: { ...load.nicRates } });
    for (const disk of view.disks) if (!load.disks.has(disk)) load.disks.set(disk, { counters: zero(DISK_COUNTERS), rates: { ...load.diskRates } });
    if (load.running) this.#run(load, server, this.#simulatedMs(now - load.accountedAt));
    load.accountedAt = now;
    const running = isRunning(server);
    if (running && !load.running) load.uptimeMs = 0;
    load.running = running;
    return load;
  }

  forget(serverId: string): void {
    this.#loads.delete(serverId);
  }

  /** Applies a control request; counters set explicitly must not go down. */
  set(view: GuestView, input: unknown): void {
    const parsed = loadSchema.safeParse(input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw badRequest(`invalid load: ${issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'unreadable'}`);
    }
    const settings = parsed.data;
    const load = this.sync(view);
    if (settings.memoryUsedMb !== undefined && settings.memoryUsedMb > view.server.flavor.ram) {
      throw badRequest(`invalid load: memoryUsedMb ${settings.memoryUsedMb} is more than the flavor's ${view.server.flavor.ram} MB`);
    }
    const nicPicks = [settings.nic ?? []].flat().map((s) => ({
      s: s as Record<string, unknown>,
      devices: pick(load.nics, s.port, (id) => id === s.port || view.ports.find((p) => p.id === id)?.macAddress === s.port, 'port'),
    }));
    const diskPicks = [settings.disk ?? []]
      .flat()
      .map((s) => ({ s: s as Record<string, unknown>, devices: pick(load.disks, s.device, (id) => id === s.device, 'device') }));
    // Validate everything before changing anything, so a refused request leaves no trace.
    for (const { s, devices } of nicPicks) checkGrowth(devices, s, NIC_COUNTERS);
    for (const { s, devices } of diskPicks) checkGrowth(devices, s, DISK_COUNTERS);
    if (settings.advanceSeconds !== undefined && load.running) this.#run(load, view.server, settings.advanceSeconds * 1000);
    if (settings.cpuUtilisation !== undefined) load.cpuUtilisation = settings.cpuUtilisation;
    if (settings.memoryUsedMb !== undefined) load.memoryUsedMb = settings.memoryUsedMb;
    for (const { s, devices } of nicPicks) apply(devices, s, NIC_COUNTERS, s.port === undefined ? load.nicRates : undefined);
    for (const { s, devices } of diskPicks) apply(devices, s, DISK_COUNTERS, s.device === undefined ? load.diskRates : undefined);
  }

  /** The control API's view of a guest: settings, rates and counters keyed by port id and device. */
  describe(view: GuestView): Record<string, unknown> {
    const load = this.sync(view);
    return {
      serverId: view.server.id,
      running: load.running,
      uptimeSeconds: Math.floor(load.uptimeMs / 1000),
      cpuUtilisation: load.running ? load.cpuUtilisation : 0,
      cpuTimeNs: Math.round(load.cpuTimeNs),
      memoryUsedMb: this.#memoryUsedMb(load, view.server),
      nics: view.ports.map((p) => ({ port: p.id, macAddress: p.macAddress, ...described(load.nics.get(p.id)) })),
      disks: view.disks.map((d) => ({ device: d, ...described(load.disks.get(d)) })),
    };
  }

  /** GET /servers/{id}/diagnostics at microversion 2.48 and later (the standard shape). */
  diagnostics(view: GuestView, configDrive: boolean): Record<string, unknown> {
    const load = this.sync(view);
    const { server } = view;
    const vcpus = server.flavor.vcpus;
    return {
      state: 'running',
      driver: 'libvirt',
      hypervisor: 'kvm',
      hypervisor_os: 'ubuntu',
      uptime: Math.floor(load.uptimeMs / 1000),
      config_drive: configDrive,
      num_cpus: vcpus,
      num_nics: view.ports.length,
      num_disks: view.disks.length,
      memory_details: { maximum: server.flavor.ram, used: this.#memoryUsedMb(load, server) },
      cpu_details: Array.from({ length: vcpus }, (_, id) => ({ id, time: Math.round(load.cpuTimeNs / vcpus), utilisation: load.cpuUtilisation })),
      nic_details: view.ports.map((p) => {
        const c = load.nics.get(p.id)?.counters ?? zero(NIC_COUNTERS);
        return {
          mac_address: p.macAddress,
          rx_octets: whole(c.rxOctets),
          rx_errors: whole(c.rxErrors),
          rx_drop: whole(c.rxDrop),
          rx_packets: whole(c.rxPackets),
          rx_rate: null,
          tx_octets: whole(c.txOctets),
          tx_errors: whole(c.txErrors),
          tx_drop: whole(c.txDrop),
          tx_packets: whole(c.txPackets),
          tx_rate: null,
        };
      }),
      disk_details: view.disks.map((d) => {
        const c = load.disks.get(d)?.counters ?? zero(DISK_COUNTERS);
        return {
          read_bytes: whole(c.readBytes),
          read_requests: whole(c.readRequests),
          write_bytes: whole(c.writeBytes),
          write_requests: whole(c.writeRequests),
          errors_count: 0,
        };
      }),
    };
  }

  /** Before 2.48 each driver had its own keys; these are libvirt's (memory in KiB, tap devices named after the port). */
  legacyDiagnostics(view: GuestView): Record<string, number> {
    const load = this.sync(view);
    const { server } = view;
    const out: Record<string, number> = {};
    for (let id = 0; id < server.flavor.vcpus; id++) out[`cpu${id}_time`] = Math.round(load.cpuTimeNs / server.flavor.vcpus);
    out.memory = server.flavor.ram * 1024;
    out['memory-actual'] = server.flavor.ram * 1024;
    out['memory-rss'] = this.#memoryUsedMb(load, server) * 1024;
    for (const d of view.disks) {
      const c = load.disks.get(d)?.counters ?? zero(DISK_COUNTERS);
      Object.assign(out, {
        [`${d}_read`]: whole(c.readBytes),
        [`${d}_read_req`]: whole(c.readRequests),
        [`${d}_write`]: whole(c.writeBytes),
        [`${d}_write_req`]: whole(c.writeRequests),
        [`${d}_errors`]: -1,
      });
    }
    for (const p of view.ports) {
      const c = load.nics.get(p.id)?.counters ?? zero(NIC_COUNTERS);
      const tap = `tap${p.id.slice(0, 11)}`;
      Object.assign(out, {
        [`${tap}_rx`]: whole(c.rxOctets),
        [`${tap}_rx_packets`]: whole(c.rxPackets),
        [`${tap}_rx_errors`]: whole(c.rxErrors),
        [`${tap}_rx_drop`]: whole(c.rxDrop),
        [`${tap}_tx`]: whole(c.txOctets),
        [`${tap}_tx_packets`]: whole(c.txPackets),
        [`${tap}_tx_errors`]: whole(c.txErrors),
        [`${tap}_tx_drop`]: whole(c.txDrop),
      });
    }
    return out;
  }

  #memoryUsedMb(load: GuestLoad, server: Server): number {
    if (!load.running) return 0;
    return Math.min(server.flavor.ram, Math.round(load.memoryUsedMb ?? server.flavor.ram * DEFAULT_MEMORY_FRACTION));
  }

  #simulatedMs(realMs: number): number {
    return this.timeScale > 0 ? realMs / this.timeScale : realMs;
  }

  /** The guest runs for `ms` simulated milliseconds at its current load. */
  #run(load: GuestLoad, server: Server, ms: number): void {
    if (ms <= 0) return;
    const seconds = ms / 1000;
    load.uptimeMs += ms;
    load.cpuTimeNs += (load.cpuUtilisation / 100) * server.flavor.vcpus * seconds * 1e9;
    for (const device of load.nics.values()) for (const k of NIC_COUNTERS) device.counters[k] += device.rates[k] * seconds;
    for (const device of load.disks.values()) for (const k of DISK_COUNTERS) device.counters[k] += device.rates[k] * seconds;
  }
}

/** A guest is running when the hypervisor says so and no lifecycle task has taken it down. */
function isRunning(server: Server): boolean {
  return server.powerState === 1 && !server.deleting && (server.status === 'ACTIVE' || server.status === 'VERIFY_RESIZE');
}

function zero<K extends string>(keys: readonly K[]): Counters<K> {
  return Object.fromEntries(keys.map((k) => [k, 0])) as Counters<K>;
}

function whole(n: number): number {
  return Math.floor(n);
}

function described<K extends string>(device: Device<K> | undefined): Record<string, unknown> {
  if (!device) return {};
  return { counters: Object.fromEntries(Object.entries(device.counters).map(([k, v]) => [k, whole(v as number)])), ratesPerSecond: { ...device.rates } };
}

function pick<K extends string>(devices: Map<string, Device<K>>, wanted: string | undefined, matches: (id: string) => boolean, what: string): Array<Device<K>> {
  if (wanted === undefined) return [...devices.values()];
  const found = [...devices.entries()].filter(([id]) => matches(id)).map(([, d]) => d);
  if (found.length === 0) throw badRequest(`invalid load: the server has no ${what} ${wanted}`);
  return found;
}

function checkGrowth<K extends string>(devices: Array<Device<K>>, settings: Record<string, unknown>, keys: readonly K[]): void {
  for (const k of keys) {
    const value = settings[k];
    if (typeof value !== 'number') continue;
    for (const device of devices) {
      if (value < whole(device.counters[k])) throw badRequest(`invalid load: counters only grow: ${k} is already ${whole(device.counters[k])}`);
    }
  }
}

function apply<K extends string>(devices: Array<Device<K>>, settings: Record<string, unknown>, keys: readonly K[], defaults: Counters<K> | undefined): void {
  for (const k of keys) {
    const counter = settings[k];
    const rate = settings[`${k}PerSecond`];
    for (const device of devices) {
      if (typeof counter === 'number') device.counters[k] = Math.max(device.counters[k], counter);
      if (typeof rate === 'number') device.rates[k] = rate;
    }
    if (defaults && typeof rate === 'number') defaults[k] = rate;
  }
}

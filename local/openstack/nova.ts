// Nova v2.1 with microversions up to 2.96: devstack's flavors, servers that go BUILD (scheduling,
// networking, block_device_mapping, spawning) -> ACTIVE, or ERROR with Nova's fault when no host
// fits (flavor too big, server group policy, injected fault); stop/start/reboot/rebuild/resize;
// deletion that unbinds ports and detaches volumes; quotas (instances/cores/ram -> 403); server
// groups with (anti-)affinity over a few simulated compute hosts; availability zones and limits;
// snapshots to Glance (createImage) and the guests' diagnostics (guest.ts holds their load).
import { createHash, randomBytes } from 'node:crypto';
import { empty, json, Router, type SimReply, type SimRequest } from './http.ts';
import type { Token } from './keystone.ts';
import type { Port } from './neutron.ts';
import type { Volume } from './cinder.ts';
import type { Image } from './glance.ts';
import { Guests, type GuestView } from './guest.ts';
import { ApiError, isoSeconds, isRecord, uuid, type Cloud } from './state.ts';

export interface Flavor {
  id: string;
  name: string;
  ram: number;
  vcpus: number;
  disk: number;
  ephemeral: number;
  swap: number;
  isPublic: boolean;
  description: string | null;
  extraSpecs: Record<string, string>;
}

export interface ComputeHost {
  name: string;
  zone: string;
  /** Allocatable after allocation ratios. */
  vcpus: number;
  memoryMb: number;
  diskGb: number;
}

export interface ServerGroup {
  id: string;
  name: string;
  policy: 'affinity' | 'anti-affinity' | 'soft-affinity' | 'soft-anti-affinity';
  rules: Record<string, unknown>;
  members: string[];
  projectId: string;
  userId: string;
}

export type ServerStatus = 'BUILD' | 'ACTIVE' | 'SHUTOFF' | 'ERROR' | 'REBOOT' | 'HARD_REBOOT' | 'REBUILD' | 'RESIZE' | 'VERIFY_RESIZE';

interface RequestedNic {
  kind: 'port';
  portId: string;
}
interface RequestedNet {
  kind: 'network';
  networkId: string;
  fixedIp: string | undefined;
}
type Nic = RequestedNic | RequestedNet;

interface Bdm {
  source: 'image' | 'volume' | 'blank' | 'snapshot';
  destination: 'volume' | 'local';
  uuid: string | undefined;
  bootIndex: number | null;
  volumeSize: number | undefined;
  deleteOnTermination: boolean;
}

export interface Server {
  id: string;
  name: string;
  projectId: string;
  userId: string;
  flavor: Flavor;
  imageId: string | null;
  status: ServerStatus;
  vmState: string;
  taskState: string | null;
  powerState: number;
  host: string | null;
  zone: string;
  requestedZone: string | null;
  requestedHost: string | null;
  metadata: Record<string, string>;
  keyName: string | null;
  configDrive: string;
  userData: string | null;
  description: string | null;
  tags: string[];
  ports: Array<{ portId: string; owned: boolean }>;
  nics: Nic[];
  volumes: Array<{ volumeId: string; device: string; deleteOnTermination: boolean }>;
  bdms: Bdm[];
  groupId: string | null;
  createdAt: number;
  updatedAt: number;
  launchedAt: number | null;
  fault: { code: number; message: string; details: string; created: number } | null;
  instanceName: string;
  deleting: boolean;
  /** Resize in progress: the flavor to go back to on revert. */
  oldFlavor: Flavor | null;
  /** Set when a "server-error" fault was taken for this server: the fault's details. */
  injectedFault?: string;
}

const MAX_VERSION = '2.96';
/** nova.compute.power_state.STATE_MAP. */
const POWER_STATES: Record<number, string> = { 0: 'pending', 1: 'running', 3: 'paused', 4: 'shutdown', 6: 'crashed', 7: 'suspended' };
/** Image properties a snapshot never inherits from the server's image (nova.compute.utils plus the default non_inheritable_image_properties). */
const NON_INHERITABLE_IMAGE_PROPERTIES = [
  'cinder_encryption_key_id',
  'cinder_encryption_key_deletion_policy',
  'img_signature',
  'img_signature_hash_method',
  'img_signature_key_type',
  'img_signature_certificate_uuid',
  'cache_in_nova',
  'bittorrent',
];
const KEYS: Record<number, string> = {
  400: 'badRequest',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'itemNotFound',
  405: 'badMethod',
  406: 'notAcceptable',
  409: 'conflictingRequest',
  413: 'overLimit',
  500: 'computeFault',
  501: 'notImplemented',
  503: 'serviceUnavailable',
};

export function novaError(err: ApiError): SimReply {
  const message =
    err.status === 500 && !err.message
      ? 'Unexpected API Error. Please report this at http://bugs.launchpad.net/nova/ and attach the Nova API log if possible.'
      : err.message;
  return json(err.status, { [KEYS[err.status] ?? 'computeFault']: { code: err.status, message } });
}

const DEVSTACK_FLAVORS: Array<[string, string, number, number, number]> = [
  ['1', 'm1.tiny', 512, 1, 1],
  ['2', 'm1.small', 2048, 1, 20],
  ['3', 'm1.medium', 4096, 2, 40],
  ['4', 'm1.large', 8192, 4, 80],
  ['5', 'm1.xlarge', 16384, 8, 160],
  ['42', 'm1.nano', 128, 1, 1],
  ['84', 'm1.micro', 192, 1, 1],
  ['c1', 'cirros256', 256, 1, 1],
  ['d1', 'ds512M', 512, 1, 5],
  ['d2', 'ds1G', 1024, 1, 10],
  ['d3', 'ds2G', 2048, 2, 10],
  ['d4', 'ds4G', 4096, 4, 20],
];

/** Parses "2.79" into a comparable number (2079). */
function versionNumber(v: string): number | undefined {
  const m = /^(\d+)\.(\d+)$/.exec(v.trim());
  if (!m) return undefined;
  return Number(m[1]) * 1000 + Number(m[2]);
}
const MAX = versionNumber(MAX_VERSION) as number;
const MIN = 2001;

/** The microversion a request asked for (2.1 when it did not say). */
export function requestedMicroversion(req: SimRequest): number {
  const header = (name: string) => {
    const v = req.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  let raw = header('openstack-api-version');
  if (raw !== undefined) {
    const m = /compute\s+(\S+)/i.exec(raw);
    raw = m ? m[1] : undefined;
  } else raw = header('x-openstack-nova-api-version');
  if (raw === undefined) return MIN;
  if (raw === 'latest') return MAX;
  const n = versionNumber(raw);
  if (n === undefined) throw new ApiError(400, `Invalid format for API version: ${raw}`);
  if (n < MIN || n > MAX) throw new ApiError(406, `Version ${raw} is not supported by the API. Minimum is 2.1 and maximum is ${MAX_VERSION}.`);
  return n;
}

export const microversionText = (n: number): string => `${Math.floor(n / 1000)}.${n % 1000}`;
const mv = (text: string): number => versionNumber(text) as number;

export class Nova {
  readonly flavors = new Map<string, Flavor>();
  readonly servers = new Map<string, Server>();
  readonly groups = new Map<string, ServerGroup>();
  readonly keypairs = new Map<string, { name: string; publicKey: string; userId: string; createdAt: number }>();
  readonly hosts: ComputeHost[];
  readonly quota = { instances: 10, cores: 20, ram: 51200 };
  readonly router = new Router<Token>();
  readonly guests: Guests;
  #instanceCounter = 0;

  constructor(
    private readonly cloud: Cloud,
    hosts?: ComputeHost[],
  ) {
    this.guests = new Guests(cloud.sched.timeScale);
    for (const [id, name, ram, vcpus, disk] of DEVSTACK_FLAVORS) {
      this.flavors.set(id, { id, name, ram, vcpus, disk, ephemeral: 0, swap: 0, isPublic: true, description: null, extraSpecs: {} });
    }
    this.hosts = hosts ?? [1, 2, 3, 4].map((n) => ({ name: `sim-compute-${n}`, zone: 'nova', vcpus: 16 * 16, memoryMb: Math.floor(32768 * 1.5), diskGb: 400 }));
    this.#routes();
  }

  get zones(): string[] {
    return [...new Set(this.hosts.map((h) => h.zone))];
  }

  requireServer(id: string): Server {
    const server = this.servers.get(id);
    if (!server) throw new ApiError(404, `Instance ${id} could not be found.`, 'InstanceNotFound');
    return server;
  }

  /** Flavor by id, or (as Heat resolves it) by name. */
  findFlavor(ref: string): Flavor | undefined {
    return this.flavors.get(ref) ?? [...this.flavors.values()].find((f) => f.name === ref);
  }

  #changed(server?: Server): void {
    if (server) {
      server.updatedAt = Date.now();
      if (this.servers.get(server.id) === server) this.guests.sync(this.guestView(server));
    }
    this.cloud.sched.changed();
  }

  /** A server as its guest sees it: its NICs (bound ports) and disks (device names, vda first). */
  guestView(server: Server): GuestView {
    const ports = server.ports.map(({ portId }) => this.cloud.neutron.ports.get(portId)).filter((p): p is Port => p !== undefined);
    const disks = [...new Set([...(server.imageId ? ['vda'] : []), ...server.volumes.map((v) => v.device.replace(/^\/dev\//, ''))])];
    return { server, ports, disks };
  }

  /** Something outside Nova (the control API) changed a server's power state. */
  syncGuest(server: Server): void {
    this.guests.sync(this.guestView(server));
  }

  // -------------------------------------------------------------------------------------------
  // Creating servers (the API and Heat both come through here).

  /** POST /servers: validates synchronously as Nova's API does, then builds in the background. */
  createServer(token: Token, body: unknown, microversion: number): Server {
    if (!isRecord(body) || !isRecord(body.server))
      throw new ApiError(400, "Invalid input for field/attribute server. Value: None. None is not of type 'object'");
    const input = body.server;
    const projectId = token.project?.id ?? '';
    const name = input.name;
    if (typeof name !== 'string' || name.trim().length === 0 || name.length > 255)
      throw new ApiError(
        400,
        `Invalid input for field/attribute name. Value: ${JSON.stringify(name ?? null)}. ${name === undefined ? "'name' is a required property" : 'is not a valid name'}`,
      );
    const flavorRef = lastSegment(input.flavorRef);
    if (!flavorRef) throw new ApiError(400, "Invalid input for field/attribute server. Value: {...}. 'flavorRef' is a required property");
    const flavor = this.flavors.get(flavorRef);
    if (!flavor) throw new ApiError(400, `Flavor ${flavorRef} could not be found.`);

    const imageRef = lastSegment(input.imageRef);
    const bdms = this.#parseBdms(input.block_device_mapping_v2 ?? this.#imageMapping(imageRef));
    const bootBdm = bdms.find((b) => b.bootIndex === 0);
    let imageId: string | null = null;
    if (imageRef) {
      const image = this.cloud.glance.get(imageRef);
      if (!image) throw new ApiError(400, `Image ${imageRef} could not be found.`);
      if (image.status !== 'active') throw new ApiError(400, `Image ${imageRef} is not active.`);
      if (!bootBdm || bootBdm.destination === 'local') {
        if (flavor.disk > 0 && (image.size ?? 0) > flavor.disk * 2 ** 30)
          throw new ApiError(
            400,
            `Flavor's disk is too small for requested image. Flavor disk is ${flavor.disk * 2 ** 30} bytes, image is ${image.size} bytes.`,
          );
        if (flavor.disk > 0 && image.minDisk > flavor.disk) throw new ApiError(400, "Flavor's disk is too small for requested image.");
      }
      if (image.minRam > flavor.ram) throw new ApiError(400, "Flavor's memory is too small for requested image.");
      imageId = image.id;
    } else if (!bootBdm) {
      throw new ApiError(400, 'Block Device Mapping is Invalid: Boot sequence for the instance and image/block device mapping combination is not valid.');
    }
    for (const bdm of bdms) {
      if (bdm.source === 'image') {
        const image = bdm.uuid ? this.cloud.glance.get(bdm.uuid) : undefined;
        if (!image) throw new ApiError(400, `Image ${String(bdm.uuid)} could not be found.`);
        if (image.status !== 'active') throw new ApiError(400, `Image ${image.id} is not active.`);
        if (bdm.bootIndex === 0) imageId = bdm.destination === 'local' ? image.id : imageId;
        if (bdm.destination === 'volume' && !bdm.volumeSize)
          throw new ApiError(400, 'Block Device Mapping is Invalid: You specified more local devices than the limit allows');
      } else if (bdm.source === 'volume') {
        if (!bdm.uuid || !this.cloud.cinder.volumes.has(bdm.uuid))
          throw new ApiError(400, `Block Device Mapping is Invalid: failed to get volume ${String(bdm.uuid)}.`);
      } else if (bdm.source === 'snapshot') {
        if (!bdm.uuid || !this.cloud.cinder.snapshots.has(bdm.uuid))
          throw new ApiError(400, `Block Device Mapping is Invalid: failed to get snapshot ${String(bdm.uuid)}.`);
      }
    }

    let requestedZone: string | null = null;
    let requestedHost: string | null = null;
    if (input.availability_zone !== undefined) {
      if (typeof input.availability_zone !== 'string' || input.availability_zone === '')
        throw new ApiError(400, `Invalid input for field/attribute availability_zone. Value: ${JSON.stringify(input.availability_zone)}. '' is too short`);
      const [zone, host] = input.availability_zone.split(':');
      if (!zone || !this.zones.includes(zone)) throw new ApiError(400, 'The requested availability zone is not available');
      requestedZone = zone;
      if (host) {
        if (!this.cloud.keystone.isAdmin(token)) throw new ApiError(403, "Policy doesn't allow os_compute_api:servers:create:forced_host to be performed.");
        if (!this.hosts.some((h) => h.name === host && h.zone === zone)) throw new ApiError(400, `Compute host ${host} could not be found.`);
        requestedHost = host;
      }
    }

    const nics = this.#parseNetworks(token, input.networks, microversion);
    const hints = isRecord(body['os:scheduler_hints'])
      ? body['os:scheduler_hints']
      : isRecord(body['OS-SCH-HNT:scheduler_hints'])
        ? body['OS-SCH-HNT:scheduler_hints']
        : {};
    let groupId: string | null = null;
    if (hints.group !== undefined) {
      const group = this.groups.get(String(hints.group));
      if (!group) throw new ApiError(400, `Invalid input for field/attribute group. Value: ${String(hints.group)}. '${String(hints.group)}' is not a 'uuid'`);
      groupId = group.id;
    }
    let keyName: string | null = null;
    if (input.key_name !== undefined && input.key_name !== null) {
      keyName = String(input.key_name);
      if (!this.keypairs.has(`${token.user.id}/${keyName}`)) throw new ApiError(400, 'Invalid key_name provided.');
    }
    let userData: string | null = null;
    if (input.user_data !== undefined && input.user_data !== null) {
      if (typeof input.user_data !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(input.user_data.replace(/\s/g, '')))
        throw new ApiError(400, 'User data needs to be valid base 64.');
      userData = input.user_data;
    }
    const metadata: Record<string, string> = {};
    if (input.metadata !== undefined) {
      if (!isRecord(input.metadata)) throw new ApiError(400, "Invalid input for field/attribute metadata. Value: ... is not of type 'object'");
      for (const [k, v] of Object.entries(input.metadata)) {
        if (typeof v !== 'string')
          throw new ApiError(400, `Invalid input for field/attribute ${k}. Value: ${JSON.stringify(v)}. ${JSON.stringify(v)} is not of type 'string'`);
        metadata[k] = v;
      }
    }

    this.#checkQuota(projectId, flavor, 1);

    // Reserve volumes now (Nova's API does it before returning), so a second server cannot take them.
    const id = uuid();
    const reserved: Volume[] = [];
    try {
      for (const bdm of bdms) {
        if (bdm.source !== 'volume' || !bdm.uuid) continue;
        const volume = this.cloud.cinder.require(bdm.uuid);
        this.cloud.cinder.reserve(volume, id);
        reserved.push(volume);
      }
    } catch (err) {
      for (const v of reserved) this.cloud.cinder.detach(v, id);
      throw err;
    }

    const now = Date.now();
    const server: Server = {
      id,
      name,
      projectId,
      userId: token.user.id,
      flavor,
      imageId: bootBdm && bootBdm.destination === 'volume' ? null : imageId,
      status: 'BUILD',
      vmState: 'building',
      taskState: 'scheduling',
      powerState: 0,
      host: null,
      zone: requestedZone ?? 'nova',
      requestedZone,
      requestedHost,
      metadata,
      keyName,
      configDrive: input.config_drive === true || input.config_drive === 'True' ? 'True' : '',
      userData,
      description: typeof input.description === 'string' ? input.description : null,
      tags: Array.isArray(input.tags) ? input.tags.map(String) : [],
      ports: [],
      nics,
      volumes: [],
      bdms,
      groupId,
      createdAt: now,
      updatedAt: now,
      launchedAt: null,
      fault: null,
      instanceName: `instance-${(++this.#instanceCounter).toString(16).padStart(8, '0')}`,
      deleting: false,
      oldFlavor: null,
    };
    this.servers.set(server.id, server);
    if (groupId) this.groups.get(groupId)?.members.push(server.id);
    this.#changed(server);
    // An injected scheduling failure belongs to the next server created, whatever order builds finish in.
    const fault = this.cloud.faults.take('server-error');
    if (fault) server.injectedFault = fault.message ?? 'There are not enough hosts available.';
    this.cloud.sched.spawn(() => this.#build(server, reserved));
    return server;
  }

  #checkQuota(projectId: string, flavor: Flavor, count: number): void {
    const mine = [...this.servers.values()].filter((s) => s.projectId === projectId);
    const usage = { instances: mine.length, cores: mine.reduce((n, s) => n + s.flavor.vcpus, 0), ram: mine.reduce((n, s) => n + s.flavor.ram, 0) };
    const want = { instances: count, cores: flavor.vcpus * count, ram: flavor.ram * count };
    for (const resource of ['instances', 'cores', 'ram'] as const) {
      const limit = this.quota[resource];
      if (limit >= 0 && usage[resource] + want[resource] > limit) {
        throw new ApiError(
          403,
          `Quota exceeded for ${resource}: Requested ${want[resource]}, but already used ${usage[resource]} of ${limit} ${resource}`,
          'OverQuota',
        );
      }
    }
  }

  /** The volumes an image made from a volume-backed server maps (its block_device_mapping property), in the API's form; Nova boots from them. */
  #imageMapping(imageRef: string | undefined): unknown[] | undefined {
    const text = imageRef ? this.cloud.glance.get(imageRef)?.properties.block_device_mapping : undefined;
    if (text === undefined) return undefined;
    let mapping: unknown;
    try {
      mapping = JSON.parse(text);
    } catch {
      return undefined;
    }
    if (!Array.isArray(mapping)) return undefined;
    return mapping.filter(isRecord).map((m) => ({ ...m, uuid: m.snapshot_id ?? m.volume_id ?? m.image_id }));
  }

  #parseBdms(value: unknown): Bdm[] {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) throw new ApiError(400, "Invalid input for field/attribute block_device_mapping_v2. Value: ... is not of type 'array'");
    return value.map((item: unknown) => {
      if (!isRecord(item)) throw new ApiError(400, 'Block Device Mapping is Invalid: unparseable mapping.');
      const source = String(item.source_type ?? (item.uuid ? 'volume' : 'blank'));
      if (!['image', 'volume', 'blank', 'snapshot'].includes(source))
        throw new ApiError(400, `Block Device Mapping is Invalid: source_type ${source} is invalid.`);
      const destination = String(item.destination_type ?? (source === 'image' ? 'local' : 'volume'));
      if (destination !== 'volume' && destination !== 'local')
        throw new ApiError(400, `Block Device Mapping is Invalid: destination_type ${destination} is invalid.`);
      const bootIndex = item.boot_index === undefined || item.boot_index === null ? null : Number(item.boot_index);
      return {
        source: source as Bdm['source'],
        destination,
        uuid: typeof item.uuid === 'string' ? item.uuid : undefined,
        bootIndex: bootIndex !== null && bootIndex < 0 ? null : bootIndex,
        volumeSize: item.volume_size === undefined ? undefined : Number(item.volume_size),
        deleteOnTermination: item.delete_on_termination === true || item.delete_on_termination === 'True' || item.delete_on_termination === 'true',
      };
    });
  }

  #parseNetworks(token: Token, value: unknown, microversion: number): Nic[] {
    const projectId = token.project?.id ?? '';
    const admin = this.cloud.keystone.isAdmin(token);
    if (value === undefined) {
      if (microversion >= mv('2.37')) throw new ApiError(400, "Invalid input for field/attribute server. Value: {...}. 'networks' is a required property");
      return this.#autoNetworks(projectId, admin, false);
    }
    if (value === 'none') return [];
    if (value === 'auto') return this.#autoNetworks(projectId, admin, true);
    if (!Array.isArray(value)) throw new ApiError(400, `Invalid input for field/attribute networks. Value: ${JSON.stringify(value)}.`);
    const nics: Nic[] = [];
    for (const item of value) {
      if (!isRecord(item)) throw new ApiError(400, 'Bad networks format');
      if (typeof item.port === 'string' && item.port !== '') {
        const port = this.cloud.neutron.ports.get(item.port);
        if (!port || (!admin && port.projectId !== projectId)) throw new ApiError(400, `Port id ${item.port} could not be found.`);
        if (port.deviceId !== '' || nics.some((n) => n.kind === 'port' && n.portId === port.id)) throw new ApiError(409, `Port ${port.id} is still in use.`);
        nics.push({ kind: 'port', portId: port.id });
      } else if (typeof item.uuid === 'string') {
        const net = this.cloud.neutron.networks.get(item.uuid);
        if (!net || !this.cloud.neutron.visibleNetwork(net, projectId, admin)) throw new ApiError(400, `Network ${item.uuid} could not be found.`);
        nics.push({ kind: 'network', networkId: net.id, fixedIp: typeof item.fixed_ip === 'string' ? item.fixed_ip : undefined });
      } else throw new ApiError(400, 'Bad network format: missing uuid or port');
    }
    return nics;
  }

  #autoNetworks(projectId: string, admin: boolean, explicit: boolean): Nic[] {
    const candidates = [...this.cloud.neutron.networks.values()].filter(
      (n) => !n.external && this.cloud.neutron.visibleNetwork(n, projectId, admin) && (n.projectId === projectId || n.shared),
    );
    if (candidates.length > 1) throw new ApiError(409, 'Multiple possible networks found, use a Network ID to be more specific.');
    const only = candidates[0];
    if (!only) {
      if (explicit) throw new ApiError(400, `Unable to automatically allocate a network for project ${projectId}`);
      return [];
    }
    return [{ kind: 'network', networkId: only.id, fixedIp: undefined }];
  }

  #usage(host: string): { vcpus: number; ram: number; disk: number } {
    const on = [...this.servers.values()].filter((s) => s.host === host);
    return {
      vcpus: on.reduce((n, s) => n + s.flavor.vcpus, 0),
      ram: on.reduce((n, s) => n + s.flavor.ram, 0),
      disk: on.reduce((n, s) => n + s.flavor.disk + s.flavor.ephemeral, 0),
    };
  }

  /** The filter scheduler in miniature: zone, host, group policy, free resources; spreads by free RAM. */
  #schedule(server: Server): ComputeHost | undefined {
    const group = server.groupId ? this.groups.get(server.groupId) : undefined;
    const memberHosts = new Set(
      group
        ? group.members
            .filter((id) => id !== server.id)
            .map((id) => this.servers.get(id)?.host)
            .filter((h): h is string => typeof h === 'string')
        : [],
    );
    const bootFromVolume = server.imageId === null;
    let candidates = this.hosts.filter((h) => {
      if (server.requestedZone && h.zone !== server.requestedZone) return false;
      if (server.requestedHost && h.name !== server.requestedHost) return false;
      const used = this.#usage(h.name);
      const disk = bootFromVolume ? server.flavor.ephemeral : server.flavor.disk + server.flavor.ephemeral;
      return used.vcpus + server.flavor.vcpus <= h.vcpus && used.ram + server.flavor.ram <= h.memoryMb && used.disk + disk <= h.diskGb;
    });
    if (group?.policy === 'anti-affinity') candidates = candidates.filter((h) => !memberHosts.has(h.name));
    if (group?.policy === 'affinity' && memberHosts.size > 0) candidates = candidates.filter((h) => memberHosts.has(h.name));
    const weight = (h: ComputeHost) => {
      let w = h.memoryMb - this.#usage(h.name).ram;
      if (group?.policy === 'soft-anti-affinity' && memberHosts.has(h.name)) w -= 1e9;
      if (group?.policy === 'soft-affinity' && memberHosts.has(h.name)) w += 1e9;
      return w;
    };
    return candidates.sort((a, b) => weight(b) - weight(a))[0];
  }

  async #build(server: Server, reserved: Volume[]): Promise<void> {
    const sched = this.cloud.sched;
    const alive = () => this.servers.get(server.id) === server && !server.deleting;
    await sched.sleep(200);
    if (!alive()) return;
    const injected = server.injectedFault;
    const host = injected === undefined ? this.#schedule(server) : undefined;
    if (!host) {
      this.#fail(server, 'No valid host was found. ', injected ?? 'There are not enough hosts available.', reserved);
      return;
    }
    server.host = host.name;
    server.zone = host.zone;
    server.taskState = 'networking';
    this.#changed(server);
    await sched.sleep(300);
    if (!alive()) return;
    try {
      for (const nic of server.nics) {
        let port: Port;
        if (nic.kind === 'port') {
          port = this.cloud.neutron.requirePort(nic.portId);
          if (port.deviceId !== '' && port.deviceId !== server.id) throw new ApiError(409, `Port ${port.id} is still in use.`);
          server.ports.push({ portId: port.id, owned: false });
        } else {
          port = this.cloud.neutron.createPort(
            server.projectId,
            { network_id: nic.networkId, ...(nic.fixedIp ? { fixed_ips: [{ ip_address: nic.fixedIp }] } : {}) },
            true,
          );
          server.ports.push({ portId: port.id, owned: true });
        }
        this.cloud.neutron.bindPort(port, server.id, host.name);
      }
    } catch (err) {
      this.#fail(
        server,
        `Build of instance ${server.id} aborted: Failed to allocate the network(s), not rescheduling.`,
        err instanceof Error ? err.message : String(err),
        reserved,
      );
      return;
    }
    const devices = ['vda', 'vdb', 'vdc', 'vdd', 'vde', 'vdf', 'vdg', 'vdh'];
    const bdmsWithVolumes = server.bdms.filter((b) => b.destination === 'volume');
    if (bdmsWithVolumes.length > 0) {
      server.taskState = 'block_device_mapping';
      this.#changed(server);
      await sched.sleep(200);
      if (!alive()) return;
      const ordered = [...server.bdms].sort((a, b) => (a.bootIndex ?? 99) - (b.bootIndex ?? 99));
      let next = server.imageId ? 1 : 0;
      for (const bdm of ordered) {
        if (bdm.destination !== 'volume') continue;
        let volume: Volume;
        if (bdm.source === 'volume') {
          volume = this.cloud.cinder.require(bdm.uuid ?? '');
        } else {
          try {
            volume = this.cloud.cinder.create(
              { projectId: server.projectId, userId: server.userId },
              {
                size: bdm.volumeSize,
                ...(bdm.source === 'image' ? { imageRef: bdm.uuid } : bdm.source === 'snapshot' ? { snapshot_id: bdm.uuid } : {}),
                name: '',
              },
            );
          } catch (err) {
            this.#fail(
              server,
              `Build of instance ${server.id} aborted: Failure prepping block device.`,
              err instanceof Error ? err.message : String(err),
              reserved,
            );
            return;
          }
          await sched.until(() => volume.status !== 'creating' && volume.status !== 'downloading');
          if (volume.status !== 'available') {
            this.#fail(
              server,
              `Build of instance ${server.id} aborted: Volume ${volume.id} did not finish being created even after we waited 0 seconds or 1 attempts. And its status is error.`,
              'BuildAbortException',
              reserved,
            );
            return;
          }
          this.cloud.cinder.reserve(volume, server.id);
          reserved.push(volume);
        }
        const device = `/dev/${devices[bdm.bootIndex === 0 ? 0 : Math.min(next++, devices.length - 1)] ?? 'vdz'}`;
        server.volumes.push({ volumeId: volume.id, device, deleteOnTermination: bdm.deleteOnTermination });
      }
    }
    server.taskState = 'spawning';
    this.#changed(server);
    await sched.sleep(800);
    if (!alive()) return;
    for (const v of server.volumes) {
      const volume = this.cloud.cinder.volumes.get(v.volumeId);
      if (volume) {
        volume.attachments = volume.attachments.filter((a) => a.serverId !== server.id);
        this.cloud.cinder.attach(volume, server.id, v.device, host.name);
      }
    }
    server.status = 'ACTIVE';
    server.vmState = 'active';
    server.taskState = null;
    server.powerState = 1;
    server.launchedAt = Date.now();
    this.#portsFollow(server);
    this.#changed(server);
  }

  #fail(server: Server, message: string, details: string, reserved: Volume[]): void {
    server.status = 'ERROR';
    server.vmState = 'error';
    server.taskState = null;
    server.host = null;
    server.fault = { code: 500, message, details, created: Date.now() };
    for (const volume of reserved) this.cloud.cinder.detach(volume, server.id);
    this.#releasePorts(server);
    this.#changed(server);
  }

  #portsFollow(server: Server): void {
    for (const { portId } of server.ports) {
      const port = this.cloud.neutron.ports.get(portId);
      if (port) this.cloud.neutron.setPortStatus(port, server.status === 'ACTIVE' ? 'ACTIVE' : 'DOWN');
    }
  }

  #releasePorts(server: Server): void {
    for (const { portId, owned } of server.ports) {
      const port = this.cloud.neutron.ports.get(portId);
      if (!port) continue;
      if (owned) {
        this.cloud.neutron.ports.delete(port.id);
        this.cloud.sched.changed();
      } else this.cloud.neutron.unbindPort(port);
    }
    server.ports = [];
  }

  /** Neutron telling Nova a port of a server was deleted (network-vif-deleted). */
  portDeleted(serverId: string, portId: string): void {
    const server = this.servers.get(serverId);
    if (!server) return;
    server.ports = server.ports.filter((p) => p.portId !== portId);
    this.#changed(server);
  }

  /** Interface attach, as Heat uses when a server's networks change. */
  attachPort(server: Server, port: Port): void {
    if (port.deviceId !== '' && port.deviceId !== server.id) throw new ApiError(409, `Port ${port.id} is still in use.`);
    server.ports.push({ portId: port.id, owned: false });
    this.cloud.neutron.bindPort(port, server.id, server.host ?? '');
    this.#portsFollow(server);
    this.#changed(server);
  }

  detachPort(server: Server, portId: string): void {
    const entry = server.ports.find((p) => p.portId === portId);
    if (!entry) throw new ApiError(404, `Port ${portId} is not attached`);
    server.ports = server.ports.filter((p) => p !== entry);
    const port = this.cloud.neutron.ports.get(portId);
    if (port) {
      if (entry.owned) this.cloud.neutron.ports.delete(port.id);
      else this.cloud.neutron.unbindPort(port);
    }
    this.#changed(server);
  }

  /** DELETE /servers/{id}: gone after a delay, releasing its ports, volumes and host. */
  deleteServer(server: Server): void {
    if (server.deleting) return;
    server.deleting = true;
    server.taskState = 'deleting';
    this.#changed(server);
    this.cloud.sched.spawn(async () => {
      await this.cloud.sched.sleep(500);
      this.#releasePorts(server);
      for (const v of server.volumes) {
        const volume = this.cloud.cinder.volumes.get(v.volumeId);
        if (!volume) continue;
        this.cloud.cinder.detach(volume, server.id);
        if (!v.deleteOnTermination) continue;
        try {
          this.cloud.cinder.delete(volume, true);
        } catch (err) {
          // Cinder refuses a volume that has snapshots; Nova logs it and the volume stays.
          this.cloud.log(`nova: volume ${volume.id} of deleted server ${server.id} kept: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      for (const volume of this.cloud.cinder.volumes.values()) {
        if (volume.attachments.some((a) => a.serverId === server.id) || volume.status === 'reserved') this.cloud.cinder.detach(volume, server.id);
      }
      if (server.groupId) {
        const group = this.groups.get(server.groupId);
        if (group) group.members = group.members.filter((id) => id !== server.id);
      }
      this.servers.delete(server.id);
      this.guests.forget(server.id);
      this.cloud.sched.changed();
    });
  }

  /** A lifecycle action: checks the state, moves through the task state, lands in `to`. */
  #transition(server: Server, action: string, allowed: string[], status: ServerStatus, taskState: string, ms: number, done: () => void): void {
    if (server.deleting || server.taskState !== null || !allowed.includes(server.vmState)) {
      throw new ApiError(
        409,
        `Cannot '${action}' instance ${server.id} while it is in ${server.taskState ? `task_state ${server.taskState}` : `vm_state ${server.vmState}`}`,
      );
    }
    server.status = status;
    server.taskState = taskState;
    this.#changed(server);
    this.cloud.sched.spawn(async () => {
      await this.cloud.sched.sleep(ms);
      if (this.servers.get(server.id) !== server || server.deleting) return;
      server.taskState = null;
      done();
      this.#portsFollow(server);
      this.#changed(server);
    });
  }

  stop(server: Server): void {
    this.#transition(server, 'stop', ['active', 'error'], server.status, 'powering-off', 500, () =>
      Object.assign(server, { status: 'SHUTOFF', vmState: 'stopped', powerState: 4 }),
    );
  }

  start(server: Server): void {
    this.#transition(server, 'start', ['stopped'], server.status, 'powering-on', 500, () =>
      Object.assign(server, { status: 'ACTIVE', vmState: 'active', powerState: 1 }),
    );
  }

  reboot(server: Server, hard: boolean): void {
    this.#transition(
      server,
      'reboot',
      hard ? ['active', 'stopped', 'error'] : ['active'],
      hard ? 'HARD_REBOOT' : 'REBOOT',
      hard ? 'reboot_started_hard' : 'reboot_started',
      hard ? 800 : 1000,
      () => Object.assign(server, { status: 'ACTIVE', vmState: 'active', powerState: 1 }),
    );
  }

  rebuild(server: Server, imageId: string): void {
    const image = this.cloud.glance.get(imageId);
    if (!image) throw new ApiError(400, `Image ${imageId} could not be found.`);
    if (image.status !== 'active') throw new ApiError(400, `Image ${imageId} is not active.`);
    this.#transition(server, 'rebuild', ['active', 'stopped', 'error'], 'REBUILD', 'rebuild_spawning', 1500, () => {
      Object.assign(server, { status: 'ACTIVE', vmState: 'active', powerState: 1, imageId: image.id, fault: null });
    });
  }

  resize(server: Server, flavor: Flavor): void {
    if (flavor.id === server.flavor.id) throw new ApiError(400, 'When resizing, instances must change flavor!');
    const others = { ...this.quota };
    const usedWithout = [...this.servers.values()].filter((s) => s.projectId === server.projectId && s !== server);
    if (others.cores >= 0 && usedWithout.reduce((n, s) => n + s.flavor.vcpus, 0) + flavor.vcpus > others.cores)
      throw new ApiError(
        403,
        `Quota exceeded for cores: Requested ${flavor.vcpus - server.flavor.vcpus}, but already used ${usedWithout.reduce((n, s) => n + s.flavor.vcpus, 0) + server.flavor.vcpus} of ${others.cores} cores`,
      );
    this.#transition(server, 'resize', ['active', 'stopped'], 'RESIZE', 'resize_prep', 1500, () => {
      server.oldFlavor = server.flavor;
      server.flavor = flavor;
      server.status = 'VERIFY_RESIZE';
      server.vmState = 'resized';
    });
  }

  confirmResize(server: Server): void {
    if (server.vmState !== 'resized') throw new ApiError(409, `Cannot 'confirmResize' instance ${server.id} while it is in vm_state ${server.vmState}`);
    server.oldFlavor = null;
    server.status = 'ACTIVE';
    server.vmState = 'active';
    this.#changed(server);
  }

  revertResize(server: Server): void {
    if (server.vmState !== 'resized' || !server.oldFlavor)
      throw new ApiError(409, `Cannot 'revertResize' instance ${server.id} while it is in vm_state ${server.vmState}`);
    server.flavor = server.oldFlavor;
    server.oldFlavor = null;
    server.status = 'ACTIVE';
    server.vmState = 'active';
    this.#changed(server);
  }

  /**
   * The createImage action: a snapshot of the server as a new Glance image owned by the caller's
   * project. An image-backed server passes through the libvirt driver's task states while the
   * image goes queued -> saving -> active; a volume-backed one gets a Cinder snapshot of each
   * volume (forced, as Nova does) and an image with no data that maps them.
   */
  createImage(server: Server, token: Token, name: string, metadata: Record<string, string>): Image {
    if (server.deleting || server.taskState !== null || !['active', 'stopped', 'paused', 'suspended'].includes(server.vmState)) {
      throw new ApiError(
        409,
        `Cannot 'createImage' instance ${server.id} while it is in ${server.taskState ? `task_state ${server.taskState}` : `vm_state ${server.vmState}`}`,
      );
    }
    const base = server.imageId ? this.cloud.glance.get(server.imageId) : undefined;
    const inherited = Object.fromEntries(Object.entries(base?.properties ?? {}).filter(([k]) => !NON_INHERITABLE_IMAGE_PROPERTIES.includes(k)));
    const foreign = token.project?.id !== server.projectId;
    const properties: Record<string, string> = {
      ...inherited,
      ...metadata,
      instance_uuid: server.id,
      user_id: token.user.id,
      image_type: 'snapshot',
      owner_project_name: token.project?.name ?? '',
      owner_user_name: token.user.name,
      ...(base ? { base_image_ref: base.id } : {}),
      ...(foreign ? { instance_owner: server.projectId } : {}),
    };
    const input = { name, visibility: foreign ? 'shared' : 'private', min_ram: base?.minRam ?? 0, min_disk: base?.minDisk ?? 0, ...properties };
    if (server.imageId === null) return this.#snapshotVolumeBacked(server, token, input);

    const image = this.cloud.glance.create(token, input);
    server.taskState = 'image_snapshot';
    this.#changed(server);
    const sched = this.cloud.sched;
    sched.spawn(async () => {
      const alive = () => this.servers.get(server.id) === server && !server.deleting && this.cloud.glance.get(image.id) === image;
      await sched.sleep(300);
      if (alive()) {
        server.taskState = 'image_pending_upload';
        this.#changed(server);
        await sched.sleep(200);
      }
      if (alive()) {
        server.taskState = 'image_uploading';
        this.#changed(server);
        // The bytes stand for the guest's disk: the base image's plus what the guest wrote.
        const data = Buffer.concat([base?.data ?? Buffer.alloc(0), Buffer.from(`snapshot of ${server.id} at ${new Date().toISOString()}\n`)]);
        try {
          await this.cloud.glance.storeSnapshot(image, data, base?.diskFormat ?? 'qcow2');
        } catch (err) {
          this.cloud.log(`nova: snapshot ${image.id} of ${server.id} failed: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      // A snapshot whose server went away is of no use; Nova deletes the half-made image.
      if (this.servers.get(server.id) !== server || server.deleting) {
        if (this.cloud.glance.get(image.id) === image && image.status !== 'active') this.cloud.glance.images.delete(image.id);
      } else {
        server.taskState = null;
        this.#changed(server);
      }
    });
    return image;
  }

  #snapshotVolumeBacked(server: Server, token: Token, input: Record<string, unknown>): Image {
    const owner = { projectId: token.project?.id ?? '', userId: token.user.id };
    const mapping = server.volumes.map((v, n) => {
      const volume = this.cloud.cinder.require(v.volumeId);
      const snapshot = this.cloud.cinder.createSnapshot(owner, {
        volume_id: volume.id,
        force: true,
        name: `snapshot for ${String(input.name)}`,
        ...(volume.description ? { description: volume.description } : {}),
      });
      const bdm = server.bdms.find((b) => b.uuid === volume.id) ?? server.bdms.filter((b) => b.destination === 'volume')[n];
      return {
        source_type: 'snapshot',
        destination_type: 'volume',
        snapshot_id: snapshot.id,
        volume_size: volume.size,
        boot_index: bdm?.bootIndex ?? (v.device === '/dev/vda' ? 0 : null),
        device_name: v.device,
        delete_on_termination: false,
        disk_bus: 'virtio',
        device_type: 'disk',
        guest_format: null,
        volume_type: null,
        tag: null,
        no_device: null,
        image_id: null,
        volume_id: null,
      };
    });
    const image = this.cloud.glance.create(token, {
      ...input,
      root_device_name: '/dev/vda',
      ...(mapping.length ? { block_device_mapping: JSON.stringify(mapping), bdm_v2: 'True' } : {}),
    });
    // No data: the image is only a bucket of properties, active at once with size 0.
    this.cloud.sched.spawn(() => this.cloud.glance.storeSnapshot(image, Buffer.alloc(0), null));
    return image;
  }

  // -------------------------------------------------------------------------------------------
  // Wire shapes.

  addresses(server: Server): Record<string, unknown[]> {
    const out: Record<string, unknown[]> = {};
    for (const { portId } of server.ports) {
      const port = this.cloud.neutron.ports.get(portId);
      if (!port) continue;
      const net = this.cloud.neutron.networks.get(port.networkId);
      const key = net?.name || port.networkId;
      const list = out[key] ?? (out[key] = []);
      for (const ip of port.fixedIps) list.push({ version: 4, addr: ip.ipAddress, 'OS-EXT-IPS:type': 'fixed', 'OS-EXT-IPS-MAC:mac_addr': port.macAddress });
    }
    return out;
  }

  flavorBody(f: Flavor, origin: string, version: number, detail = true): Record<string, unknown> {
    const links = [
      { rel: 'self', href: `${origin}/compute/v2.1/flavors/${f.id}` },
      { rel: 'bookmark', href: `${origin}/compute/flavors/${f.id}` },
    ];
    if (!detail) return { id: f.id, name: f.name, links, ...(version >= mv('2.55') ? { description: f.description } : {}) };
    return {
      id: f.id,
      name: f.name,
      ram: f.ram,
      vcpus: f.vcpus,
      disk: f.disk,
      'OS-FLV-EXT-DATA:ephemeral': f.ephemeral,
      swap: version >= mv('2.75') ? f.swap : f.swap === 0 ? '' : f.swap,
      'os-flavor-access:is_public': f.isPublic,
      'OS-FLV-DISABLED:disabled': false,
      rxtx_factor: 1.0,
      links,
      ...(version >= mv('2.55') ? { description: f.description } : {}),
      ...(version >= mv('2.61') ? { extra_specs: { ...f.extraSpecs } } : {}),
    };
  }

  serverBody(s: Server, origin: string, version: number, admin: boolean): Record<string, unknown> {
    const flavor =
      version >= mv('2.47')
        ? {
            vcpus: s.flavor.vcpus,
            ram: s.flavor.ram,
            disk: s.flavor.disk,
            ephemeral: s.flavor.ephemeral,
            swap: s.flavor.swap,
            original_name: s.flavor.name,
            extra_specs: { ...s.flavor.extraSpecs },
          }
        : { id: s.flavor.id, links: [{ rel: 'bookmark', href: `${origin}/compute/flavors/${s.flavor.id}` }] };
    const body: Record<string, unknown> = {
      id: s.id,
      name: s.name,
      status: s.status,
      tenant_id: s.projectId,
      user_id: s.userId,
      metadata: { ...s.metadata },
      hostId: s.host ? hostId(s.projectId, s.host) : '',
      image: s.imageId ? { id: s.imageId, links: [{ rel: 'bookmark', href: `${origin}/compute/images/${s.imageId}` }] } : '',
      flavor,
      created: isoSeconds(s.createdAt),
      updated: isoSeconds(s.updatedAt),
      addresses: this.addresses(s),
      accessIPv4: '',
      accessIPv6: '',
      links: [
        { rel: 'self', href: `${origin}/compute/v2.1/servers/${s.id}` },
        { rel: 'bookmark', href: `${origin}/compute/servers/${s.id}` },
      ],
      'OS-DCF:diskConfig': 'MANUAL',
      progress: s.status === 'BUILD' ? 0 : s.status === 'ACTIVE' ? 100 : 0,
      'OS-EXT-AZ:availability_zone': s.host ? s.zone : '',
      config_drive: s.configDrive,
      key_name: s.keyName,
      'OS-SRV-USG:launched_at': s.launchedAt ? new Date(s.launchedAt).toISOString().replace('Z', '000') : null,
      'OS-SRV-USG:terminated_at': null,
      'OS-EXT-STS:task_state': s.taskState,
      'OS-EXT-STS:vm_state': s.vmState,
      'OS-EXT-STS:power_state': s.powerState,
      'os-extended-volumes:volumes_attached': s.volumes.map((v) => ({
        id: v.volumeId,
        ...(version >= mv('2.3') ? { delete_on_termination: v.deleteOnTermination } : {}),
      })),
      security_groups: s.ports.length > 0 ? [{ name: 'default' }] : undefined,
    };
    if (body.security_groups === undefined) delete body.security_groups;
    if (admin) {
      body['OS-EXT-SRV-ATTR:host'] = s.host;
      body['OS-EXT-SRV-ATTR:hypervisor_hostname'] = s.host;
      body['OS-EXT-SRV-ATTR:instance_name'] = s.instanceName;
      if (version >= mv('2.3')) {
        Object.assign(body, {
          'OS-EXT-SRV-ATTR:hostname': s.name.toLowerCase().replace(/[^a-z0-9-]+/g, '-'),
          'OS-EXT-SRV-ATTR:launch_index': 0,
          'OS-EXT-SRV-ATTR:reservation_id': `r-${s.id.slice(0, 8)}`,
          'OS-EXT-SRV-ATTR:root_device_name': '/dev/vda',
          'OS-EXT-SRV-ATTR:kernel_id': '',
          'OS-EXT-SRV-ATTR:ramdisk_id': '',
          'OS-EXT-SRV-ATTR:user_data': s.userData,
        });
      }
    }
    if (version >= mv('2.9')) body.locked = false;
    if (version >= mv('2.19')) body.description = s.description;
    if (version >= mv('2.26')) body.tags = [...s.tags];
    if (version >= mv('2.71')) body.server_groups = s.groupId ? [s.groupId] : [];
    if (s.fault)
      body.fault = { code: s.fault.code, created: isoSeconds(s.fault.created), message: s.fault.message, ...(admin ? { details: s.fault.details } : {}) };
    return body;
  }

  groupBody(g: ServerGroup, version: number): Record<string, unknown> {
    return version >= mv('2.64')
      ? { id: g.id, name: g.name, policy: g.policy, rules: { ...g.rules }, members: [...g.members], project_id: g.projectId, user_id: g.userId }
      : {
          id: g.id,
          name: g.name,
          policies: [g.policy],
          members: [...g.members],
          metadata: {},
          ...(version >= mv('2.13') ? { project_id: g.projectId, user_id: g.userId } : {}),
        };
  }

  createGroup(token: Token, input: Record<string, unknown>, version: number): ServerGroup {
    const name = input.name;
    if (typeof name !== 'string' || name.length === 0)
      throw new ApiError(400, "Invalid input for field/attribute server_group. Value: {...}. 'name' is a required property");
    let policy: unknown;
    if (version >= mv('2.64')) policy = input.policy;
    else {
      if (!Array.isArray(input.policies) || input.policies.length !== 1)
        throw new ApiError(400, "Invalid input for field/attribute policies. Value: ... 'policies' is a required property");
      policy = input.policies[0];
    }
    if (policy !== 'affinity' && policy !== 'anti-affinity' && policy !== 'soft-affinity' && policy !== 'soft-anti-affinity') {
      throw new ApiError(
        400,
        `Invalid input for field/attribute policy. Value: ${JSON.stringify(policy)}. ${JSON.stringify(policy)} is not one of ['anti-affinity', 'affinity', 'soft-anti-affinity', 'soft-affinity']`,
      );
    }
    const group: ServerGroup = {
      id: uuid(),
      name,
      policy,
      rules: isRecord(input.rules) ? input.rules : {},
      members: [],
      projectId: token.project?.id ?? '',
      userId: token.user.id,
    };
    this.groups.set(group.id, group);
    this.cloud.sched.changed();
    return group;
  }

  // -------------------------------------------------------------------------------------------
  // HTTP.

  #routes(): void {
    const r = this.router;
    const admin = (t: Token) => this.cloud.keystone.isAdmin(t);
    const visible = (t: Token, s: Server) => admin(t) || s.projectId === t.project?.id;
    const server = (t: Token, id: string) => {
      const s = this.servers.get(id);
      if (!s || !visible(t, s)) throw new ApiError(404, `Instance ${id} could not be found.`);
      return s;
    };
    const version = (req: SimRequest) => ({
      id: 'v2.1',
      status: 'CURRENT',
      version: MAX_VERSION,
      min_version: '2.1',
      updated: '2013-07-23T11:33:21Z',
      links: [{ rel: 'self', href: `${req.origin}/compute/v2.1/` }],
      'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.compute+json;version=2.1' }],
    });
    r.on('GET', '/', (req) => json(200, { versions: [version(req)] }));
    r.on('GET', '/v2.1', (req) => json(200, { version: version(req) }));

    r.on('GET', '/v2.1/flavors', (req, _p, t) =>
      json(200, {
        flavors: [...this.flavors.values()].filter((f) => f.isPublic || admin(t)).map((f) => this.flavorBody(f, req.origin, requestedMicroversion(req), false)),
      }),
    );
    r.on('GET', '/v2.1/flavors/detail', (req, _p, t) => {
      const minRam = Number(req.query.get('minRam') ?? 0);
      const minDisk = Number(req.query.get('minDisk') ?? 0);
      return json(200, {
        flavors: [...this.flavors.values()]
          .filter((f) => (f.isPublic || admin(t)) && f.ram >= minRam && f.disk >= minDisk)
          .map((f) => this.flavorBody(f, req.origin, requestedMicroversion(req))),
      });
    });
    r.on('GET', '/v2.1/flavors/:id', (req, { id = '' }) => {
      const f = this.flavors.get(id);
      if (!f) throw new ApiError(404, `Flavor ${id} could not be found.`);
      return json(200, { flavor: this.flavorBody(f, req.origin, requestedMicroversion(req)) });
    });
    r.on('GET', '/v2.1/flavors/:id/os-extra_specs', (_req, { id = '' }) => {
      const f = this.flavors.get(id);
      if (!f) throw new ApiError(404, `Flavor ${id} could not be found.`);
      return json(200, { extra_specs: { ...f.extraSpecs } });
    });
    r.on('POST', '/v2.1/flavors', async (req, _p, t) => {
      if (!admin(t)) throw new ApiError(403, "Policy doesn't allow os_compute_api:os-flavor-manage:create to be performed.");
      const b = await req.json();
      const f = isRecord(b) && isRecord(b.flavor) ? b.flavor : undefined;
      if (!f || typeof f.name !== 'string' || typeof f.ram !== 'number' || typeof f.vcpus !== 'number' || typeof f.disk !== 'number')
        throw new ApiError(400, "Invalid input for field/attribute flavor. 'name', 'ram', 'vcpus' and 'disk' are required properties");
      const id = typeof f.id === 'string' && f.id !== '' ? f.id : uuid();
      if (this.flavors.has(id)) throw new ApiError(409, `Flavor with ID ${id} already exists.`);
      if ([...this.flavors.values()].some((x) => x.name === f.name)) throw new ApiError(409, `Flavor with name ${f.name} already exists.`);
      const flavor: Flavor = {
        id,
        name: f.name,
        ram: f.ram,
        vcpus: f.vcpus,
        disk: f.disk,
        ephemeral: Number(f['OS-FLV-EXT-DATA:ephemeral'] ?? 0),
        swap: Number(f.swap ?? 0),
        isPublic: f['os-flavor-access:is_public'] !== false,
        description: typeof f.description === 'string' ? f.description : null,
        extraSpecs: {},
      };
      this.flavors.set(id, flavor);
      return json(200, { flavor: this.flavorBody(flavor, req.origin, requestedMicroversion(req)) });
    });
    r.on('DELETE', '/v2.1/flavors/:id', (_req, { id = '' }, t) => {
      if (!admin(t)) throw new ApiError(403, "Policy doesn't allow os_compute_api:os-flavor-manage:delete to be performed.");
      if (!this.flavors.delete(id)) throw new ApiError(404, `Flavor ${id} could not be found.`);
      return empty(202);
    });

    const list = (req: SimRequest, t: Token, detail: boolean): SimReply => {
      const v = requestedMicroversion(req);
      let items = [...this.servers.values()];
      const allTenants = req.query.has('all_tenants') && admin(t);
      const projectFilter = req.query.get('project_id') ?? req.query.get('tenant_id');
      if (!allTenants || projectFilter) items = items.filter((s) => s.projectId === (projectFilter && admin(t) ? projectFilter : t.project?.id));
      const name = req.query.get('name');
      if (name !== null) {
        let re: RegExp;
        try {
          re = new RegExp(name);
        } catch {
          re = new RegExp(name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
        }
        items = items.filter((s) => re.test(s.name));
      }
      const status = req.query.get('status');
      if (status !== null) items = items.filter((s) => s.status === status.toUpperCase());
      const host = req.query.get('host');
      if (host !== null && admin(t)) items = items.filter((s) => s.host === host);
      const since = req.query.get('changes-since');
      if (since !== null) items = items.filter((s) => s.updatedAt >= Date.parse(since));
      items.sort((a, b) => b.createdAt - a.createdAt || a.id.localeCompare(b.id));
      const marker = req.query.get('marker');
      if (marker !== null) {
        const at = items.findIndex((s) => s.id === marker);
        if (at < 0) throw new ApiError(400, `marker [${marker}] not found`);
        items = items.slice(at + 1);
      }
      const limit = req.query.get('limit') === null ? 1000 : Number(req.query.get('limit'));
      const page = items.slice(0, limit);
      const out: Record<string, unknown> = {
        servers: page.map((s) =>
          detail
            ? this.serverBody(s, req.origin, v, admin(t))
            : {
                id: s.id,
                name: s.name,
                links: [
                  { rel: 'self', href: `${req.origin}/compute/v2.1/servers/${s.id}` },
                  { rel: 'bookmark', href: `${req.origin}/compute/servers/${s.id}` },
                ],
              },
        ),
      };
      if (items.length > page.length && page.length > 0) {
        const next = new URLSearchParams(req.query);
        next.set('marker', (page[page.length - 1] as Server).id);
        out.servers_links = [{ rel: 'next', href: `${req.origin}/compute/v2.1/servers${detail ? '/detail' : ''}?${next.toString()}` }];
      }
      return json(200, out);
    };
    r.on('GET', '/v2.1/servers', (req, _p, t) => list(req, t, false));
    r.on('GET', '/v2.1/servers/detail', (req, _p, t) => list(req, t, true));
    r.on('POST', '/v2.1/servers', async (req, _p, t) => {
      const v = requestedMicroversion(req);
      const s = this.createServer(t, await req.json(), v);
      const adminPass = randomBytes(9).toString('base64url').slice(0, 12);
      return json(
        202,
        {
          server: {
            id: s.id,
            links: [
              { rel: 'self', href: `${req.origin}/compute/v2.1/servers/${s.id}` },
              { rel: 'bookmark', href: `${req.origin}/compute/servers/${s.id}` },
            ],
            'OS-DCF:diskConfig': 'MANUAL',
            security_groups: [{ name: 'default' }],
            adminPass,
          },
        },
        { location: `${req.origin}/compute/v2.1/servers/${s.id}` },
      );
    });
    r.on('GET', '/v2.1/servers/:id', (req, { id = '' }, t) =>
      json(200, { server: this.serverBody(server(t, id), req.origin, requestedMicroversion(req), admin(t)) }),
    );
    r.on('PUT', '/v2.1/servers/:id', async (req, { id = '' }, t) => {
      const s = server(t, id);
      const b = await req.json();
      const input = isRecord(b) && isRecord(b.server) ? b.server : {};
      if (typeof input.name === 'string') s.name = input.name;
      if (typeof input.description === 'string' || input.description === null) s.description = input.description;
      this.#changed(s);
      return json(200, { server: this.serverBody(s, req.origin, requestedMicroversion(req), admin(t)) });
    });
    r.on('DELETE', '/v2.1/servers/:id', (_req, { id = '' }, t) => {
      this.deleteServer(server(t, id));
      return empty(204);
    });
    r.on('POST', '/v2.1/servers/:id/action', async (req, { id = '' }, t) => {
      const s = server(t, id);
      const b = await req.json();
      if (!isRecord(b)) throw new ApiError(400, 'Malformed request body');
      const action = Object.keys(b)[0];
      switch (action) {
        case 'os-stop':
          this.stop(s);
          break;
        case 'os-start':
          this.start(s);
          break;
        case 'reboot': {
          const type = isRecord(b.reboot) ? String(b.reboot.type ?? '').toUpperCase() : '';
          if (type !== 'SOFT' && type !== 'HARD')
            throw new ApiError(400, `Invalid input for field/attribute type. Value: ${type}. '${type}' does not match '^(SOFT|HARD)$'`);
          this.reboot(s, type === 'HARD');
          break;
        }
        case 'rebuild': {
          const ref = isRecord(b.rebuild) ? lastSegment(b.rebuild.imageRef) : undefined;
          if (!ref) throw new ApiError(400, "Invalid input for field/attribute rebuild. 'imageRef' is a required property");
          this.rebuild(s, ref);
          break;
        }
        case 'resize': {
          const ref = isRecord(b.resize) ? lastSegment(b.resize.flavorRef) : undefined;
          const flavor = ref ? this.flavors.get(ref) : undefined;
          if (!flavor) throw new ApiError(400, `Flavor ${String(ref)} could not be found.`);
          this.resize(s, flavor);
          break;
        }
        case 'confirmResize':
          this.confirmResize(s);
          return empty(204);
        case 'revertResize':
          this.revertResize(s);
          break;
        case 'createImage': {
          const input = b.createImage;
          if (!isRecord(input))
            throw new ApiError(
              400,
              `Invalid input for field/attribute createImage. Value: ${JSON.stringify(input ?? null)}. ${JSON.stringify(input ?? null)} is not of type 'object'`,
            );
          const name = input.name;
          if (typeof name !== 'string')
            throw new ApiError(400, `Invalid input for field/attribute createImage. Value: ${JSON.stringify(input)}. 'name' is a required property`);
          if (name.trim().length === 0 || name.length > 255)
            throw new ApiError(400, `Invalid input for field/attribute name. Value: ${name}. ${JSON.stringify(name)} is not a valid name`);
          const metadata: Record<string, string> = {};
          if (input.metadata !== undefined) {
            if (!isRecord(input.metadata))
              throw new ApiError(
                400,
                `Invalid input for field/attribute metadata. Value: ${JSON.stringify(input.metadata)}. ${JSON.stringify(input.metadata)} is not of type 'object'`,
              );
            for (const [k, v] of Object.entries(input.metadata)) {
              if (typeof v !== 'string')
                throw new ApiError(400, `Invalid input for field/attribute ${k}. Value: ${JSON.stringify(v)}. ${JSON.stringify(v)} is not of type 'string'`);
              metadata[k] = v;
            }
          }
          const image = this.createImage(s, t, name, metadata);
          // 2.45 moved the image id from the Location header (a Glance URL) to the body.
          return requestedMicroversion(req) >= mv('2.45')
            ? json(202, { image_id: image.id })
            : empty(202, { location: `${this.cloud.glance.publicUrl(req.origin)}/images/${image.id}` });
        }
        default:
          throw new ApiError(400, `There is no such action: ${String(action)}`);
      }
      return empty(202);
    });
    r.on('GET', '/v2.1/servers/:id/os-volume_attachments', (_req, { id = '' }, t) => {
      const s = server(t, id);
      return json(200, { volumeAttachments: s.volumes.map((v) => ({ id: v.volumeId, volumeId: v.volumeId, serverId: s.id, device: v.device })) });
    });
    r.on('GET', '/v2.1/servers/:id/os-interface', (_req, { id = '' }, t) => {
      const s = server(t, id);
      return json(200, {
        interfaceAttachments: s.ports
          .map(({ portId }) => this.cloud.neutron.ports.get(portId))
          .filter((p): p is Port => p !== undefined)
          .map((p) => ({
            port_id: p.id,
            net_id: p.networkId,
            mac_addr: p.macAddress,
            port_state: p.status,
            fixed_ips: p.fixedIps.map((ip) => ({ subnet_id: ip.subnetId, ip_address: ip.ipAddress })),
          })),
      });
    });
    r.on('GET', '/v2.1/servers/:id/diagnostics', (req, { id = '' }, t) => {
      // Nova looks the server up before it asks the policy, so another project's server is a 404.
      const s = server(t, id);
      if (!admin(t)) throw new ApiError(403, "Policy doesn't allow os_compute_api:os-server-diagnostics to be performed.");
      if (!s.host) throw new ApiError(409, `Instance ${s.id} is not ready`);
      if (s.powerState !== 1)
        throw new ApiError(409, `Cannot 'get_diagnostics' instance ${s.id} while it is in power state ${POWER_STATES[s.powerState] ?? 'pending'}`);
      const view = this.guestView(s);
      return json(
        200,
        requestedMicroversion(req) >= mv('2.48') ? this.guests.diagnostics(view, s.configDrive === 'True') : this.guests.legacyDiagnostics(view),
      );
    });
    r.on('GET', '/v2.1/servers/:id/metadata', (_req, { id = '' }, t) => json(200, { metadata: { ...server(t, id).metadata } }));

    r.on('GET', '/v2.1/os-server-groups', (req, _p, t) =>
      json(200, {
        server_groups: [...this.groups.values()]
          .filter((g) => (admin(t) && req.query.has('all_projects')) || g.projectId === t.project?.id)
          .map((g) => this.groupBody(g, requestedMicroversion(req))),
      }),
    );
    r.on('POST', '/v2.1/os-server-groups', async (req, _p, t) => {
      const b = await req.json();
      if (!isRecord(b) || !isRecord(b.server_group))
        throw new ApiError(400, "Invalid input for field/attribute server_group. 'server_group' is a required property");
      const v = requestedMicroversion(req);
      return json(200, { server_group: this.groupBody(this.createGroup(t, b.server_group, v), v) });
    });
    r.on('GET', '/v2.1/os-server-groups/:id', (req, { id = '' }, t) => {
      const g = this.groups.get(id);
      if (!g || (!admin(t) && g.projectId !== t.project?.id)) throw new ApiError(404, `Instance group ${id} could not be found.`);
      return json(200, { server_group: this.groupBody(g, requestedMicroversion(req)) });
    });
    r.on('DELETE', '/v2.1/os-server-groups/:id', (_req, { id = '' }, t) => {
      const g = this.groups.get(id);
      if (!g || (!admin(t) && g.projectId !== t.project?.id)) throw new ApiError(404, `Instance group ${id} could not be found.`);
      this.groups.delete(id);
      for (const s of this.servers.values()) if (s.groupId === id) s.groupId = null;
      this.cloud.sched.changed();
      return empty(204);
    });

    r.on('GET', '/v2.1/os-keypairs', (_req, _p, t) =>
      json(200, {
        keypairs: [...this.keypairs.values()]
          .filter((k) => k.userId === t.user.id)
          .map((k) => ({ keypair: { name: k.name, public_key: k.publicKey, fingerprint: fingerprint(k.publicKey), type: 'ssh' } })),
      }),
    );
    r.on('POST', '/v2.1/os-keypairs', async (req, _p, t) => {
      const b = await req.json();
      const k = isRecord(b) && isRecord(b.keypair) ? b.keypair : undefined;
      if (!k || typeof k.name !== 'string' || k.name === '')
        throw new ApiError(400, "Invalid input for field/attribute keypair. 'name' is a required property");
      if (this.keypairs.has(`${t.user.id}/${k.name}`)) throw new ApiError(409, `Key pair '${k.name}' already exists.`);
      const publicKey = typeof k.public_key === 'string' ? k.public_key : `ssh-ed25519 ${randomBytes(32).toString('base64')} Generated-by-Nova`;
      this.keypairs.set(`${t.user.id}/${k.name}`, { name: k.name, publicKey, userId: t.user.id, createdAt: Date.now() });
      return json(200, { keypair: { name: k.name, public_key: publicKey, fingerprint: fingerprint(publicKey), user_id: t.user.id, type: 'ssh' } });
    });
    r.on('DELETE', '/v2.1/os-keypairs/:name', (_req, { name = '' }, t) => {
      if (!this.keypairs.delete(`${t.user.id}/${name}`)) throw new ApiError(404, `Keypair ${name} not found for user ${t.user.id}`);
      return empty(202);
    });

    r.on('GET', '/v2.1/os-availability-zone', () =>
      json(200, { availabilityZoneInfo: this.zones.map((zoneName) => ({ zoneName, zoneState: { available: true }, hosts: null })) }),
    );
    r.on('GET', '/v2.1/os-availability-zone/detail', (_req, _p, t) => {
      if (!admin(t)) throw new ApiError(403, "Policy doesn't allow os_compute_api:os-availability-zone:detail to be performed.");
      return json(200, {
        availabilityZoneInfo: this.zones.map((zoneName) => ({
          zoneName,
          zoneState: { available: true },
          hosts: Object.fromEntries(
            this.hosts
              .filter((h) => h.zone === zoneName)
              .map((h) => [h.name, { 'nova-compute': { available: true, active: true, updated_at: isoSeconds(Date.now()) } }]),
          ),
        })),
      });
    });
    r.on('GET', '/v2.1/os-hypervisors/detail', (_req, _p, t) => {
      if (!admin(t)) throw new ApiError(403, "Policy doesn't allow os_compute_api:os-hypervisors:list-detail to be performed.");
      return json(200, {
        hypervisors: this.hosts.map((h, n) => {
          const used = this.#usage(h.name);
          return {
            id: n + 1,
            hypervisor_hostname: h.name,
            state: 'up',
            status: 'enabled',
            hypervisor_type: 'fake',
            vcpus: h.vcpus,
            vcpus_used: used.vcpus,
            memory_mb: h.memoryMb,
            memory_mb_used: used.ram,
            local_gb: h.diskGb,
            local_gb_used: used.disk,
            running_vms: [...this.servers.values()].filter((s) => s.host === h.name).length,
            host_ip: '127.0.0.1',
            service: { host: h.name, id: n + 1, disabled_reason: null },
          };
        }),
      });
    });
    const quotaSet = (project: string) => ({
      id: project,
      instances: this.quota.instances,
      cores: this.quota.cores,
      ram: this.quota.ram,
      key_pairs: 100,
      metadata_items: 128,
      server_groups: 10,
      server_group_members: 10,
    });
    r.on('GET', '/v2.1/os-quota-sets/:project', (_req, { project = '' }) => json(200, { quota_set: quotaSet(project) }));
    r.on('GET', '/v2.1/os-quota-sets/:project/detail', (_req, { project = '' }) => {
      const mine = [...this.servers.values()].filter((s) => s.projectId === project);
      const used = { instances: mine.length, cores: mine.reduce((n, s) => n + s.flavor.vcpus, 0), ram: mine.reduce((n, s) => n + s.flavor.ram, 0) };
      const q = quotaSet(project);
      return json(200, {
        quota_set: Object.fromEntries(
          Object.entries(q).map(([k, v]) => [k, k === 'id' ? v : { limit: v, in_use: used[k as keyof typeof used] ?? 0, reserved: 0 }]),
        ),
      });
    });
    r.on('GET', '/v2.1/limits', (_req, _p, t) => {
      const mine = [...this.servers.values()].filter((s) => s.projectId === t.project?.id);
      return json(200, {
        limits: {
          rate: [],
          absolute: {
            maxTotalInstances: this.quota.instances,
            maxTotalCores: this.quota.cores,
            maxTotalRAMSize: this.quota.ram,
            maxServerMeta: 128,
            maxTotalKeypairs: 100,
            maxServerGroups: 10,
            maxServerGroupMembers: 10,
            totalInstancesUsed: mine.length,
            totalCoresUsed: mine.reduce((n, s) => n + s.flavor.vcpus, 0),
            totalRAMUsed: mine.reduce((n, s) => n + s.flavor.ram, 0),
            totalServerGroupsUsed: [...this.groups.values()].filter((g) => g.projectId === t.project?.id).length,
          },
        },
      });
    });
  }
}

function lastSegment(ref: unknown): string | undefined {
  if (typeof ref !== 'string' || ref === '') return undefined;
  const parts = ref.split('/');
  return parts[parts.length - 1] || undefined;
}

/** Nova's hostId: sha224 of project id and host, so tenants cannot learn host names. */
function hostId(projectId: string, host: string): string {
  return createHash('sha224')
    .update(projectId + host)
    .digest('hex');
}

function fingerprint(publicKey: string): string {
  return (createHash('md5').update(publicKey).digest('hex').match(/../g) ?? []).join(':');
}

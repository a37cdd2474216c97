// Neutron v2.0: networks, IPv4 subnets with allocation pools and fixed-IP allocation, ports with
// MAC addresses and device binding (status DOWN until a server using them is ACTIVE), default
// security groups, Neutron's list filters and `fields`, its conflict rules (network/subnet in use,
// IP exhausted or taken), a port quota, and devstack's preloaded external "public" network.
import { empty, json, Router, type SimReply, type SimRequest } from './http.ts';
import type { Token } from './keystone.ts';
import { ApiError, isoSeconds, isRecord, macAddress, uuid, type Cloud } from './state.ts';

export interface Network {
  id: string;
  name: string;
  projectId: string;
  description: string;
  adminStateUp: boolean;
  shared: boolean;
  external: boolean;
  mtu: number;
  portSecurity: boolean;
  segmentationId: number;
  tags: string[];
  createdAt: number;
  updatedAt: number;
  revision: number;
  preloaded: boolean;
}

export interface Subnet {
  id: string;
  name: string;
  networkId: string;
  projectId: string;
  description: string;
  cidr: string;
  gatewayIp: string | null;
  pools: Array<{ start: string; end: string }>;
  enableDhcp: boolean;
  dnsNameservers: string[];
  hostRoutes: Array<{ destination: string; nexthop: string }>;
  tags: string[];
  createdAt: number;
  updatedAt: number;
  revision: number;
  preloaded: boolean;
}

export interface FixedIp {
  subnetId: string;
  ipAddress: string;
}

export interface Port {
  id: string;
  name: string;
  networkId: string;
  projectId: string;
  description: string;
  macAddress: string;
  fixedIps: FixedIp[];
  deviceId: string;
  deviceOwner: string;
  status: 'ACTIVE' | 'DOWN' | 'BUILD';
  adminStateUp: boolean;
  securityGroups: string[];
  portSecurity: boolean;
  bindingHost: string;
  vnicType: string;
  allowedAddressPairs: Array<{ ip_address: string; mac_address: string }>;
  tags: string[];
  createdAt: number;
  updatedAt: number;
  revision: number;
}

export interface SecurityGroup {
  id: string;
  name: string;
  projectId: string;
  createdAt: number;
}

const TYPES: Record<number, string> = {
  400: 'HTTPBadRequest',
  403: 'HTTPForbidden',
  404: 'HTTPNotFound',
  405: 'HTTPMethodNotAllowed',
  409: 'Conflict',
  413: 'HTTPRequestEntityTooLarge',
  500: 'HTTPInternalServerError',
};

export function neutronError(err: ApiError): SimReply {
  return json(err.status, { NeutronError: { type: err.type ?? TYPES[err.status] ?? 'NeutronException', message: err.message, detail: '' } });
}

// ---------------------------------------------------------------------------------------------
// IPv4 arithmetic.

export function ipToInt(ip: string): number | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return undefined;
    const v = Number(part);
    if (v > 255) return undefined;
    n = n * 256 + v;
  }
  return n;
}

export function intToIp(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}

export function parseCidr(cidr: string): { base: number; prefix: number; size: number } | undefined {
  const [ip, bits] = cidr.split('/');
  if (ip === undefined || bits === undefined || !/^\d{1,2}$/.test(bits)) return undefined;
  const base = ipToInt(ip);
  const prefix = Number(bits);
  if (base === undefined || prefix > 32) return undefined;
  const size = 2 ** (32 - prefix);
  return { base, prefix, size };
}

const invalid = (message: string) => new ApiError(400, `Invalid input for operation: ${message}`, 'InvalidInput');

export class Neutron {
  readonly networks = new Map<string, Network>();
  readonly subnets = new Map<string, Subnet>();
  readonly ports = new Map<string, Port>();
  readonly securityGroups = new Map<string, SecurityGroup>();
  /** Ports per project (-1 unlimited); Neutron's default is 500. */
  portQuota = 500;
  readonly router = new Router<Token>();
  #segment = 1000;

  constructor(private readonly cloud: Cloud) {
    this.#preload();
    this.#routes();
  }

  #preload(): void {
    const admin = this.cloud.keystone.adminProject.id;
    const net = this.createNetwork(admin, { name: 'public', 'router:external': true, shared: false }, true);
    net.preloaded = true;
    const subnet = this.createSubnet(
      admin,
      { name: 'public-subnet', network_id: net.id, cidr: '172.24.4.0/22', ip_version: 4, gateway_ip: '172.24.4.1', enable_dhcp: false },
      true,
    );
    subnet.preloaded = true;
  }

  #changed(): void {
    this.cloud.sched.changed();
  }

  // -------------------------------------------------------------------------------------------
  // Lookups (Heat and Nova resolve names and ids through these).

  visibleNetwork(net: Network, projectId: string, admin: boolean): boolean {
    return admin || net.projectId === projectId || net.shared || net.external;
  }

  requireNetwork(id: string): Network {
    const net = this.networks.get(id);
    if (!net) throw new ApiError(404, `Network ${id} could not be found.`, 'NetworkNotFound');
    return net;
  }

  requireSubnet(id: string): Subnet {
    const subnet = this.subnets.get(id);
    if (!subnet) throw new ApiError(404, `Subnet ${id} could not be found.`, 'SubnetNotFound');
    return subnet;
  }

  requirePort(id: string): Port {
    const port = this.ports.get(id);
    if (!port) throw new ApiError(404, `Port ${id} could not be found.`, 'PortNotFound');
    return port;
  }

  /** Heat's name-or-id lookup: an id, else a unique name among visible ones. */
  findNetwork(ref: string, projectId: string): Network {
    const byId = this.networks.get(ref);
    if (byId) return byId;
    const matches = [...this.networks.values()].filter((n) => n.name === ref && this.visibleNetwork(n, projectId, false));
    if (matches.length > 1)
      throw new ApiError(409, `Multiple network matches found for name '${ref}', use an ID to be more specific.`, 'NeutronClientNoUniqueMatch');
    const found = matches[0];
    if (!found) throw new ApiError(404, `Unable to find network with name or id '${ref}'`, 'NotFound');
    return found;
  }

  findSubnet(ref: string, projectId: string): Subnet {
    const byId = this.subnets.get(ref);
    if (byId) return byId;
    const matches = [...this.subnets.values()].filter(
      (s) =>
        s.name === ref && (s.projectId === projectId || this.networks.get(s.networkId)?.shared === true || this.networks.get(s.networkId)?.external === true),
    );
    if (matches.length > 1)
      throw new ApiError(409, `Multiple subnet matches found for name '${ref}', use an ID to be more specific.`, 'NeutronClientNoUniqueMatch');
    const found = matches[0];
    if (!found) throw new ApiError(404, `Unable to find subnet with name or id '${ref}'`, 'NotFound');
    return found;
  }

  subnetsOf(networkId: string): Subnet[] {
    return [...this.subnets.values()].filter((s) => s.networkId === networkId);
  }

  defaultSecurityGroup(projectId: string): SecurityGroup {
    for (const sg of this.securityGroups.values()) if (sg.projectId === projectId && sg.name === 'default') return sg;
    const sg: SecurityGroup = { id: uuid(), name: 'default', projectId, createdAt: Date.now() };
    this.securityGroups.set(sg.id, sg);
    return sg;
  }

  // -------------------------------------------------------------------------------------------
  // Create / update / delete.

  createNetwork(projectId: string, input: Record<string, unknown>, admin: boolean): Network {
    const now = Date.now();
    const external = input['router:external'] === true;
    if ((external || input.shared === true) && !admin)
      throw new ApiError(
        403,
        `(rule:create_network and (rule:create_network:${external ? 'router:external' : 'shared'})) is disallowed by policy`,
        'PolicyNotAuthorized',
      );
    const net: Network = {
      id: uuid(),
      name: str(input.name, 'name') ?? '',
      projectId: str(input.project_id ?? input.tenant_id, 'project_id') ?? projectId,
      description: str(input.description, 'description') ?? '',
      adminStateUp: bool(input.admin_state_up, 'admin_state_up') ?? true,
      shared: bool(input.shared, 'shared') ?? false,
      external,
      mtu: typeof input.mtu === 'number' ? input.mtu : 1442,
      portSecurity: bool(input.port_security_enabled, 'port_security_enabled') ?? true,
      segmentationId: this.#segment++,
      tags: [],
      createdAt: now,
      updatedAt: now,
      revision: 1,
      preloaded: false,
    };
    this.networks.set(net.id, net);
    this.#changed();
    return net;
  }

  createSubnet(projectId: string, input: Record<string, unknown>, admin: boolean): Subnet {
    const networkId = str(input.network_id, 'network_id');
    if (!networkId) throw new ApiError(400, "Failed to parse request. Required attribute 'network_id' not specified", 'HTTPBadRequest');
    const net = this.requireNetwork(networkId);
    if (!admin && net.projectId !== projectId) throw new ApiError(404, `Network ${networkId} could not be found.`, 'NetworkNotFound');
    if (input.ip_version === undefined) throw new ApiError(400, "Failed to parse request. Required attribute 'ip_version' not specified", 'HTTPBadRequest');
    const ipVersion = Number(input.ip_version);
    if (ipVersion === 6) throw invalid('the simulator supports IPv4 subnets only.');
    if (ipVersion !== 4) throw invalid(`${String(input.ip_version)} is not in [4, 6].`);
    const cidrText = str(input.cidr, 'cidr');
    if (!cidrText) throw new ApiError(400, 'Bad subnets request: a cidr must be specified in the absence of a subnet pool.', 'BadRequest');
    const cidr = parseCidr(cidrText);
    if (!cidr) throw new ApiError(400, `Invalid input for cidr. Reason: '${cidrText}' is not a valid IP subnet.`, 'HTTPBadRequest');
    if (cidr.base % cidr.size !== 0) {
      const fixed = `${intToIp(cidr.base - (cidr.base % cidr.size))}/${cidr.prefix}`;
      throw invalid(`'${cidrText}' isn't a recommended CIDR, use '${fixed}' instead.`);
    }
    if (cidr.prefix > 30) throw invalid(`Invalid CIDR ${cidrText} for IPv4 address mode: prefix must be 30 or shorter for a usable subnet.`);
    for (const other of this.subnetsOf(net.id)) {
      const o = parseCidr(other.cidr);
      if (o && cidr.base < o.base + o.size && o.base < cidr.base + cidr.size) {
        throw invalid(`Requested subnet with cidr: ${cidrText} for network: ${net.id} overlaps with another subnet.`);
      }
    }
    const first = cidr.base + 1;
    const last = cidr.base + cidr.size - 2;
    let gatewayIp: string | null = intToIp(first);
    if (input.gateway_ip === null) gatewayIp = null;
    else if (input.gateway_ip !== undefined) {
      const gw = ipToInt(String(input.gateway_ip));
      if (gw === undefined || gw < cidr.base || gw >= cidr.base + cidr.size)
        throw invalid(`Gateway IP ${String(input.gateway_ip)} is not in subnet ${cidrText}.`);
      gatewayIp = intToIp(gw);
    }
    let pools: Array<{ start: string; end: string }>;
    if (Array.isArray(input.allocation_pools) && input.allocation_pools.length > 0) {
      pools = input.allocation_pools.map((p: unknown) => {
        if (!isRecord(p) || typeof p.start !== 'string' || typeof p.end !== 'string') throw invalid('allocation_pools need start and end');
        const s = ipToInt(p.start);
        const e = ipToInt(p.end);
        if (s === undefined || e === undefined || s > e || s < cidr.base || e >= cidr.base + cidr.size)
          throw invalid(`The allocation pool ${p.start}-${p.end} spans beyond the subnet cidr ${cidrText}.`);
        return { start: p.start, end: p.end };
      });
    } else {
      const gw = gatewayIp === null ? undefined : ipToInt(gatewayIp);
      const start = gw === first ? first + 1 : first;
      const end = gw === last ? last - 1 : last;
      pools =
        gw !== undefined && gw > start && gw < end
          ? [
              { start: intToIp(start), end: intToIp(gw - 1) },
              { start: intToIp(gw + 1), end: intToIp(end) },
            ]
          : [{ start: intToIp(start), end: intToIp(end) }];
    }
    const now = Date.now();
    const subnet: Subnet = {
      id: uuid(),
      name: str(input.name, 'name') ?? '',
      networkId: net.id,
      projectId: str(input.project_id ?? input.tenant_id, 'project_id') ?? projectId,
      description: str(input.description, 'description') ?? '',
      cidr: cidrText,
      gatewayIp,
      pools,
      enableDhcp: bool(input.enable_dhcp, 'enable_dhcp') ?? true,
      dnsNameservers: Array.isArray(input.dns_nameservers) ? input.dns_nameservers.map(String) : [],
      hostRoutes: Array.isArray(input.host_routes)
        ? input.host_routes.filter(isRecord).map((h) => ({ destination: String(h.destination), nexthop: String(h.nexthop) }))
        : [],
      tags: [],
      createdAt: now,
      updatedAt: now,
      revision: 0,
      preloaded: false,
    };
    this.subnets.set(subnet.id, subnet);
    net.revision++;
    this.#changed();
    return subnet;
  }

  #inUse(subnetId: string): Set<number> {
    const used = new Set<number>();
    for (const port of this.ports.values()) for (const ip of port.fixedIps) if (ip.subnetId === subnetId) used.add(ipToInt(ip.ipAddress) ?? -1);
    return used;
  }

  #allocate(subnet: Subnet): string | undefined {
    const used = this.#inUse(subnet.id);
    const gw = subnet.gatewayIp === null ? undefined : ipToInt(subnet.gatewayIp);
    for (const pool of subnet.pools) {
      const start = ipToInt(pool.start) ?? 0;
      const end = ipToInt(pool.end) ?? -1;
      for (let ip = start; ip <= end; ip++) if (!used.has(ip) && ip !== gw) return intToIp(ip);
    }
    return undefined;
  }

  #fixedIps(net: Network, requested: unknown, projectId: string): FixedIp[] {
    if (requested === undefined || requested === null) {
      const subnets = this.subnetsOf(net.id);
      if (subnets.length === 0) return [];
      for (const subnet of subnets) {
        const ip = this.#allocate(subnet);
        if (ip) return [{ subnetId: subnet.id, ipAddress: ip }];
      }
      throw new ApiError(409, `No more IP addresses available on network ${net.id}.`, 'IpAddressGenerationFailure');
    }
    if (!Array.isArray(requested)) throw invalid(`Invalid data format for fixed IP: '${JSON.stringify(requested)}'`);
    const out: FixedIp[] = [];
    for (const item of requested) {
      if (!isRecord(item)) throw invalid(`Invalid data format for fixed IP: '${JSON.stringify(item)}'`);
      const subnetRef = item.subnet_id ?? item.subnet;
      const address = item.ip_address;
      let subnet: Subnet | undefined;
      if (typeof subnetRef === 'string') {
        subnet = this.findSubnet(subnetRef, projectId);
        if (subnet.networkId !== net.id) throw invalid(`Failed to create port on network ${net.id}, because fixed_ips included invalid subnet ${subnet.id}.`);
      }
      if (typeof address === 'string') {
        const n = ipToInt(address);
        if (n === undefined) throw invalid(`'${address}' is not a valid IP address.`);
        subnet ??= this.subnetsOf(net.id).find((s) => {
          const c = parseCidr(s.cidr);
          return c !== undefined && n >= c.base && n < c.base + c.size;
        });
        const c = subnet ? parseCidr(subnet.cidr) : undefined;
        if (!subnet || !c || n < c.base || n >= c.base + c.size) throw invalid(`IP address ${address} is not a valid IP for the specified subnet.`);
        if (this.#inUse(subnet.id).has(n) || out.some((o) => o.ipAddress === address))
          throw new ApiError(409, `IP address ${address} already allocated in subnet ${subnet.id}`, 'IpAddressAlreadyAllocated');
        out.push({ subnetId: subnet.id, ipAddress: intToIp(n) });
      } else if (subnet) {
        const ip = this.#allocate(subnet);
        if (!ip) throw new ApiError(409, `No more IP addresses available on network ${net.id}.`, 'IpAddressGenerationFailure');
        out.push({ subnetId: subnet.id, ipAddress: ip });
      } else throw invalid(`Invalid data format for fixed IP: '${JSON.stringify(item)}'`);
    }
    return out;
  }

  createPort(projectId: string, input: Record<string, unknown>, admin: boolean): Port {
    const networkId = str(input.network_id, 'network_id');
    if (!networkId) throw new ApiError(400, "Failed to parse request. Required attribute 'network_id' not specified", 'HTTPBadRequest');
    const net = this.requireNetwork(networkId);
    if (!this.visibleNetwork(net, projectId, admin)) throw new ApiError(404, `Network ${networkId} could not be found.`, 'NetworkNotFound');
    if (!admin && !net.shared && net.projectId !== projectId)
      throw new ApiError(403, `Tenant ${projectId} not allowed to create port on this network`, 'HTTPForbidden');
    const owner = str(input.project_id ?? input.tenant_id, 'project_id') ?? projectId;
    if (this.portQuota >= 0 && [...this.ports.values()].filter((p) => p.projectId === owner).length >= this.portQuota) {
      throw new ApiError(409, "Quota exceeded for resources: ['port'].", 'OverQuota');
    }
    let mac = str(input.mac_address, 'mac_address');
    if (mac !== undefined) {
      if (!/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/i.test(mac)) throw invalid(`'${mac}' is not a valid MAC address`);
      mac = mac.toLowerCase();
      if ([...this.ports.values()].some((p) => p.networkId === net.id && p.macAddress === mac)) {
        throw new ApiError(409, `Unable to complete operation for network ${net.id}. The mac address ${mac} is in use.`, 'MacAddressInUse');
      }
    }
    const portSecurity = bool(input.port_security_enabled, 'port_security_enabled') ?? net.portSecurity;
    const fixedIps = input.no_fixed_ips === true ? [] : this.#fixedIps(net, input.fixed_ips, projectId);
    const now = Date.now();
    const port: Port = {
      id: uuid(),
      name: str(input.name, 'name') ?? '',
      networkId: net.id,
      projectId: owner,
      description: str(input.description, 'description') ?? '',
      macAddress: mac ?? macAddress(),
      fixedIps,
      deviceId: str(input.device_id, 'device_id') ?? '',
      deviceOwner: str(input.device_owner, 'device_owner') ?? '',
      status: 'DOWN',
      adminStateUp: bool(input.admin_state_up, 'admin_state_up') ?? true,
      securityGroups: Array.isArray(input.security_groups) ? input.security_groups.map(String) : portSecurity ? [this.defaultSecurityGroup(owner).id] : [],
      portSecurity,
      bindingHost: str(input['binding:host_id'], 'binding:host_id') ?? '',
      vnicType: str(input['binding:vnic_type'], 'binding:vnic_type') ?? 'normal',
      allowedAddressPairs: Array.isArray(input.allowed_address_pairs)
        ? input.allowed_address_pairs.filter(isRecord).map((p) => ({ ip_address: String(p.ip_address), mac_address: String(p.mac_address ?? mac ?? '') }))
        : [],
      tags: [],
      createdAt: now,
      updatedAt: now,
      revision: 1,
    };
    this.ports.set(port.id, port);
    this.#changed();
    return port;
  }

  updatePort(port: Port, input: Record<string, unknown>): Port {
    if ('network_id' in input || ('mac_address' in input && input.mac_address !== port.macAddress))
      throw new ApiError(400, 'Cannot update read-only attribute network_id', 'HTTPBadRequest');
    if ('name' in input) port.name = str(input.name, 'name') ?? '';
    if ('description' in input) port.description = str(input.description, 'description') ?? '';
    if ('device_id' in input) port.deviceId = str(input.device_id, 'device_id') ?? '';
    if ('device_owner' in input) port.deviceOwner = str(input.device_owner, 'device_owner') ?? '';
    if ('admin_state_up' in input) port.adminStateUp = bool(input.admin_state_up, 'admin_state_up') ?? true;
    if ('security_groups' in input) port.securityGroups = Array.isArray(input.security_groups) ? input.security_groups.map(String) : [];
    if ('binding:host_id' in input) port.bindingHost = str(input['binding:host_id'], 'binding:host_id') ?? '';
    if ('fixed_ips' in input) {
      const net = this.requireNetwork(port.networkId);
      const old = port.fixedIps;
      port.fixedIps = [];
      try {
        port.fixedIps = this.#fixedIps(net, input.fixed_ips, port.projectId);
      } catch (err) {
        port.fixedIps = old;
        throw err;
      }
    }
    port.updatedAt = Date.now();
    port.revision++;
    this.#changed();
    return port;
  }

  /** Nova plugging a port into a server (status follows the server: ACTIVE when it runs). */
  bindPort(port: Port, serverId: string, host: string): void {
    port.deviceId = serverId;
    port.deviceOwner = 'compute:nova';
    port.bindingHost = host;
    port.updatedAt = Date.now();
    port.revision++;
    this.#changed();
  }

  setPortStatus(port: Port, status: Port['status']): void {
    if (port.status === status) return;
    port.status = status;
    port.updatedAt = Date.now();
    port.revision++;
    this.#changed();
  }

  unbindPort(port: Port): void {
    port.deviceId = '';
    port.deviceOwner = '';
    port.bindingHost = '';
    port.status = 'DOWN';
    port.updatedAt = Date.now();
    port.revision++;
    this.#changed();
  }

  deletePort(id: string): void {
    const port = this.requirePort(id);
    this.ports.delete(id);
    if (port.deviceOwner.startsWith('compute:') && port.deviceId) this.cloud.nova.portDeleted(port.deviceId, port.id);
    this.#changed();
  }

  deleteSubnet(id: string): void {
    const subnet = this.requireSubnet(id);
    for (const port of this.ports.values()) {
      if (port.fixedIps.some((ip) => ip.subnetId === id))
        throw new ApiError(409, `Unable to complete operation on subnet ${id}: One or more ports have an IP allocation from this subnet.`, 'SubnetInUse');
    }
    this.subnets.delete(subnet.id);
    const net = this.networks.get(subnet.networkId);
    if (net) net.revision++;
    this.#changed();
  }

  deleteNetwork(id: string): void {
    const net = this.requireNetwork(id);
    const inUse = [...this.ports.values()].filter((p) => p.networkId === id && !p.deviceOwner.startsWith('network:dhcp'));
    if (inUse.length > 0)
      throw new ApiError(409, `Unable to complete operation on network ${id}. There are one or more ports still in use on the network.`, 'NetworkInUse');
    for (const subnet of this.subnetsOf(id)) this.subnets.delete(subnet.id);
    this.networks.delete(net.id);
    this.#changed();
  }

  // -------------------------------------------------------------------------------------------
  // Wire shapes.

  networkBody(net: Network): Record<string, unknown> {
    return {
      id: net.id,
      name: net.name,
      tenant_id: net.projectId,
      project_id: net.projectId,
      description: net.description,
      admin_state_up: net.adminStateUp,
      status: 'ACTIVE',
      shared: net.shared,
      'router:external': net.external,
      subnets: this.subnetsOf(net.id).map((s) => s.id),
      mtu: net.mtu,
      port_security_enabled: net.portSecurity,
      availability_zone_hints: [],
      availability_zones: ['nova'],
      ipv4_address_scope: null,
      ipv6_address_scope: null,
      l2_adjacency: true,
      qos_policy_id: null,
      is_default: false,
      tags: [...net.tags],
      'provider:network_type': net.external ? 'flat' : 'geneve',
      'provider:physical_network': net.external ? 'public' : null,
      'provider:segmentation_id': net.external ? null : net.segmentationId,
      created_at: isoSeconds(net.createdAt),
      updated_at: isoSeconds(net.updatedAt),
      revision_number: net.revision,
    };
  }

  subnetBody(s: Subnet): Record<string, unknown> {
    return {
      id: s.id,
      name: s.name,
      network_id: s.networkId,
      tenant_id: s.projectId,
      project_id: s.projectId,
      description: s.description,
      ip_version: 4,
      cidr: s.cidr,
      gateway_ip: s.gatewayIp,
      allocation_pools: s.pools.map((p) => ({ ...p })),
      enable_dhcp: s.enableDhcp,
      dns_nameservers: [...s.dnsNameservers],
      host_routes: s.hostRoutes.map((h) => ({ ...h })),
      ipv6_address_mode: null,
      ipv6_ra_mode: null,
      segment_id: null,
      subnetpool_id: null,
      service_types: [],
      dns_publish_fixed_ip: false,
      tags: [...s.tags],
      created_at: isoSeconds(s.createdAt),
      updated_at: isoSeconds(s.updatedAt),
      revision_number: s.revision,
    };
  }

  portBody(p: Port): Record<string, unknown> {
    const bound = p.bindingHost !== '';
    return {
      id: p.id,
      name: p.name,
      network_id: p.networkId,
      tenant_id: p.projectId,
      project_id: p.projectId,
      description: p.description,
      mac_address: p.macAddress,
      fixed_ips: p.fixedIps.map((ip) => ({ subnet_id: ip.subnetId, ip_address: ip.ipAddress })),
      device_id: p.deviceId,
      device_owner: p.deviceOwner,
      status: p.status,
      admin_state_up: p.adminStateUp,
      security_groups: [...p.securityGroups],
      port_security_enabled: p.portSecurity,
      allowed_address_pairs: p.allowedAddressPairs.map((a) => ({ ...a })),
      extra_dhcp_opts: [],
      'binding:host_id': p.bindingHost,
      'binding:vnic_type': p.vnicType,
      'binding:profile': {},
      'binding:vif_type': bound ? 'ovs' : 'unbound',
      'binding:vif_details': bound ? { port_filter: true, connectivity: 'l2' } : {},
      ip_allocation: 'immediate',
      propagate_uplink_status: false,
      qos_policy_id: null,
      qos_network_policy_id: null,
      tags: [...p.tags],
      created_at: isoSeconds(p.createdAt),
      updated_at: isoSeconds(p.updatedAt),
      revision_number: p.revision,
    };
  }

  sgBody(sg: SecurityGroup): Record<string, unknown> {
    return {
      id: sg.id,
      name: sg.name,
      tenant_id: sg.projectId,
      project_id: sg.projectId,
      description: 'Default security group',
      stateful: true,
      tags: [],
      security_group_rules: ['IPv4', 'IPv6'].map((ethertype) => ({
        id: `${sg.id.slice(0, 24)}${ethertype === 'IPv4' ? '00000004' : '00000006'}`.slice(0, 36),
        direction: 'egress',
        ethertype,
        protocol: null,
        port_range_min: null,
        port_range_max: null,
        remote_ip_prefix: null,
        remote_group_id: null,
        security_group_id: sg.id,
      })),
      created_at: isoSeconds(sg.createdAt),
      updated_at: isoSeconds(sg.createdAt),
      revision_number: 1,
    };
  }

  // -------------------------------------------------------------------------------------------
  // HTTP.

  /** Neutron's list semantics: every attribute is a filter (repeated = any of), `fields` selects. */
  #list(req: SimRequest, key: string, items: Array<Record<string, unknown>>): SimReply {
    const reserved = new Set(['fields', 'limit', 'marker', 'sort_key', 'sort_dir', 'page_reverse', 'fixed_ips']);
    let out = items;
    for (const name of new Set(req.query.keys())) {
      if (reserved.has(name)) continue;
      const wanted = req.query.getAll(name).map((v) => v.toLowerCase());
      out = out.filter((item) => {
        const value = item[name];
        if (value === undefined) return false;
        if (Array.isArray(value)) return value.some((v) => wanted.includes(String(v).toLowerCase()));
        return wanted.includes(String(value).toLowerCase());
      });
    }
    for (const spec of req.query.getAll('fixed_ips')) {
      const [k, v] = spec.split('=');
      out = out.filter((item) => Array.isArray(item.fixed_ips) && item.fixed_ips.some((ip: unknown) => isRecord(ip) && k !== undefined && ip[k] === v));
    }
    const marker = req.query.get('marker');
    if (marker) {
      const at = out.findIndex((item) => item.id === marker);
      out = at < 0 ? [] : out.slice(at + 1);
    }
    const limit = Number(req.query.get('limit') ?? 0);
    const page = limit > 0 ? out.slice(0, limit) : out;
    const fields = req.query.getAll('fields');
    const shaped = fields.length === 0 ? page : page.map((item) => Object.fromEntries(fields.filter((f) => f in item).map((f) => [f, item[f]])));
    const body: Record<string, unknown> = { [key]: shaped };
    if (limit > 0 && out.length > limit) {
      const next = new URLSearchParams(req.query);
      next.set('marker', String(page[page.length - 1]?.id));
      body[`${key}_links`] = [{ rel: 'next', href: `${req.origin}/networking/v2.0/${key.replace('_', '-')}?${next.toString()}` }];
    }
    return json(200, body);
  }

  #show(req: SimRequest, key: string, item: Record<string, unknown>): SimReply {
    const fields = req.query.getAll('fields');
    return json(200, { [key]: fields.length === 0 ? item : Object.fromEntries(fields.filter((f) => f in item).map((f) => [f, item[f]])) });
  }

  #owns(token: Token, projectId: string, what: string, id: string, type: string): void {
    if (!this.cloud.keystone.isAdmin(token) && token.project?.id !== projectId) throw new ApiError(404, `${what} ${id} could not be found.`, type);
  }

  #routes(): void {
    const r = this.router;
    const admin = (t: Token) => this.cloud.keystone.isAdmin(t);
    const project = (t: Token) => t.project?.id ?? '';
    const body = async (req: SimRequest, key: string) => {
      const b = await req.json();
      if (!isRecord(b) || !isRecord(b[key])) throw new ApiError(400, `Resource body required. Expecting '${key}'`, 'HTTPBadRequest');
      return b[key] as Record<string, unknown>;
    };
    r.on('GET', '/', (req) => json(200, { versions: [{ id: 'v2.0', status: 'CURRENT', links: [{ rel: 'self', href: `${req.origin}/networking/v2.0/` }] }] }));
    r.on('GET', '/v2.0', () =>
      json(200, { resources: ['networks', 'subnets', 'ports', 'security-groups'].map((name) => ({ name, collection: name, links: [] })) }),
    );
    r.on('GET', '/v2.0/extensions', () =>
      json(200, {
        extensions: [
          { alias: 'binding', name: 'Port Binding', description: '', updated: '2014-02-03T10:00:00-00:00', links: [] },
          { alias: 'external-net', name: 'Neutron external network', description: '', updated: '2013-01-14T10:00:00-00:00', links: [] },
        ],
      }),
    );

    r.on('GET', '/v2.0/networks', (req, _p, t) =>
      this.#list(
        req,
        'networks',
        [...this.networks.values()].filter((n) => this.visibleNetwork(n, project(t), admin(t))).map((n) => this.networkBody(n)),
      ),
    );
    r.on('POST', '/v2.0/networks', async (req, _p, t) =>
      json(201, { network: this.networkBody(this.createNetwork(project(t), await body(req, 'network'), admin(t))) }),
    );
    r.on('GET', '/v2.0/networks/:id', (req, { id = '' }, t) => {
      const net = this.requireNetwork(id);
      if (!this.visibleNetwork(net, project(t), admin(t))) throw new ApiError(404, `Network ${id} could not be found.`, 'NetworkNotFound');
      return this.#show(req, 'network', this.networkBody(net));
    });
    r.on('PUT', '/v2.0/networks/:id', async (req, { id = '' }, t) => {
      const net = this.requireNetwork(id);
      this.#owns(t, net.projectId, 'Network', id, 'NetworkNotFound');
      const input = await body(req, 'network');
      if ('name' in input) net.name = str(input.name, 'name') ?? '';
      if ('description' in input) net.description = str(input.description, 'description') ?? '';
      if ('admin_state_up' in input) net.adminStateUp = bool(input.admin_state_up, 'admin_state_up') ?? true;
      net.updatedAt = Date.now();
      net.revision++;
      this.#changed();
      return json(200, { network: this.networkBody(net) });
    });
    r.on('DELETE', '/v2.0/networks/:id', (_req, { id = '' }, t) => {
      const net = this.requireNetwork(id);
      this.#owns(t, net.projectId, 'Network', id, 'NetworkNotFound');
      this.deleteNetwork(id);
      return empty(204);
    });

    r.on('GET', '/v2.0/subnets', (req, _p, t) =>
      this.#list(
        req,
        'subnets',
        [...this.subnets.values()]
          .filter((s) => {
            const net = this.networks.get(s.networkId);
            return net !== undefined && this.visibleNetwork(net, project(t), admin(t));
          })
          .map((s) => this.subnetBody(s)),
      ),
    );
    r.on('POST', '/v2.0/subnets', async (req, _p, t) =>
      json(201, { subnet: this.subnetBody(this.createSubnet(project(t), await body(req, 'subnet'), admin(t))) }),
    );
    r.on('GET', '/v2.0/subnets/:id', (req, { id = '' }, t) => {
      const subnet = this.requireSubnet(id);
      const net = this.networks.get(subnet.networkId);
      if (!net || !this.visibleNetwork(net, project(t), admin(t))) throw new ApiError(404, `Subnet ${id} could not be found.`, 'SubnetNotFound');
      return this.#show(req, 'subnet', this.subnetBody(subnet));
    });
    r.on('PUT', '/v2.0/subnets/:id', async (req, { id = '' }, t) => {
      const subnet = this.requireSubnet(id);
      this.#owns(t, subnet.projectId, 'Subnet', id, 'SubnetNotFound');
      const input = await body(req, 'subnet');
      if ('cidr' in input || 'network_id' in input || 'ip_version' in input)
        throw new ApiError(400, 'Cannot update read-only attribute cidr', 'HTTPBadRequest');
      if ('name' in input) subnet.name = str(input.name, 'name') ?? '';
      if ('description' in input) subnet.description = str(input.description, 'description') ?? '';
      if ('enable_dhcp' in input) subnet.enableDhcp = bool(input.enable_dhcp, 'enable_dhcp') ?? true;
      if (Array.isArray(input.dns_nameservers)) subnet.dnsNameservers = input.dns_nameservers.map(String);
      subnet.updatedAt = Date.now();
      subnet.revision++;
      this.#changed();
      return json(200, { subnet: this.subnetBody(subnet) });
    });
    r.on('DELETE', '/v2.0/subnets/:id', (_req, { id = '' }, t) => {
      const subnet = this.requireSubnet(id);
      this.#owns(t, subnet.projectId, 'Subnet', id, 'SubnetNotFound');
      this.deleteSubnet(id);
      return empty(204);
    });

    r.on('GET', '/v2.0/ports', (req, _p, t) =>
      this.#list(
        req,
        'ports',
        [...this.ports.values()].filter((p) => admin(t) || p.projectId === project(t)).map((p) => this.portBody(p)),
      ),
    );
    r.on('POST', '/v2.0/ports', async (req, _p, t) => json(201, { port: this.portBody(this.createPort(project(t), await body(req, 'port'), admin(t))) }));
    r.on('GET', '/v2.0/ports/:id', (req, { id = '' }, t) => {
      const port = this.requirePort(id);
      this.#owns(t, port.projectId, 'Port', id, 'PortNotFound');
      return this.#show(req, 'port', this.portBody(port));
    });
    r.on('PUT', '/v2.0/ports/:id', async (req, { id = '' }, t) => {
      const port = this.requirePort(id);
      this.#owns(t, port.projectId, 'Port', id, 'PortNotFound');
      return json(200, { port: this.portBody(this.updatePort(port, await body(req, 'port'))) });
    });
    r.on('DELETE', '/v2.0/ports/:id', (_req, { id = '' }, t) => {
      const port = this.requirePort(id);
      this.#owns(t, port.projectId, 'Port', id, 'PortNotFound');
      this.deletePort(id);
      return empty(204);
    });

    r.on('GET', '/v2.0/security-groups', (req, _p, t) => {
      this.defaultSecurityGroup(project(t));
      return this.#list(
        req,
        'security_groups',
        [...this.securityGroups.values()].filter((sg) => admin(t) || sg.projectId === project(t)).map((sg) => this.sgBody(sg)),
      );
    });
    r.on('GET', '/v2.0/security-groups/:id', (req, { id = '' }, t) => {
      const sg = this.securityGroups.get(id);
      if (!sg || (!admin(t) && sg.projectId !== project(t))) throw new ApiError(404, `Security group ${id} does not exist`, 'SecurityGroupNotFound');
      return this.#show(req, 'security_group', this.sgBody(sg));
    });
    r.on('GET', '/v2.0/quotas/:project', (_req, { project: p = '' }) =>
      json(200, {
        quota: { network: 100, subnet: 100, port: this.portQuota, router: 10, floatingip: 50, security_group: 10, security_group_rule: 100, project_id: p },
      }),
    );
  }
}

function str(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string')
    throw new ApiError(400, `Invalid input for ${field}. Reason: '${JSON.stringify(value)}' is not a valid string.`, 'HTTPBadRequest');
  return value;
}

function bool(value: unknown, field: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'True') return true;
  if (value === 'false' || value === 'False') return false;
  throw new ApiError(400, `Invalid input for ${field}. Reason: '${String(value)}' cannot be converted to boolean.`, 'HTTPBadRequest');
}

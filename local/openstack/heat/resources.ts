// Heat's resource types, acting on the simulated services the way Heat's plugins act on the real
// ones: OS::Nova::Server (image/flavor by name or id, networks by port/network/subnet, BDM v2,
// waits for ACTIVE, rebuild/resize in place or replace by policy), OS::Neutron::Net/Subnet/Port,
// OS::Cinder::Volume, OS::Nova::ServerGroup, OS::Heat::AutoScalingGroup, ResourceGroup,
// ScalingPolicy, SoftwareConfig/SoftwareDeployment (waits for a signal), RandomString,
// TestResource, None, Value, and template files used as types (nested stacks).
import { randomBytes } from 'node:crypto';
import type { Image } from '../glance.ts';
import type { Server } from '../nova.ts';
import { ApiError, isRecord, requestId, shortId, uuid } from '../state.ts';
import { containsDeferred, DEFERRED, dig, invalidTemplate } from './functions.ts';
import type { Deployment } from './engine.ts';
import { PluginError, type PluginContext, type Resource, type ResourcePlugin, type Stack, type ValidateContext } from './model.ts';
import { checkConstraints, convertParam, paramSchemas, templateVersion, type Template } from './template.ts';

type Props = Record<string, unknown>;
type Service = 'nova' | 'neutron' | 'cinder' | 'glance';

// ---------------------------------------------------------------------------------------------
// Helpers.

const NOVA_NAMES: Record<number, string> = { 400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 409: 'Conflict', 413: 'OverLimit' };

/** A service refusal as the python client Heat uses would raise it (name and message). */
function clientError(service: Service, err: ApiError): PluginError {
  const rid = requestId();
  if (service === 'neutron') {
    const name = err.type && !err.type.startsWith('HTTP') ? `${err.type}Client` : (NOVA_NAMES[err.status] ?? 'NeutronClientException');
    return new PluginError(name, `${err.message}\nNeutron server returns request_ids: ['${rid}']`, err.status);
  }
  if (service === 'glance') return new PluginError(err.status === 404 ? 'HTTPNotFound' : 'HTTPException', `${err.status}: ${err.message}`, err.status);
  return new PluginError(NOVA_NAMES[err.status] ?? 'ClientException', `${err.message} (HTTP ${err.status}) (Request-ID: ${rid})`, err.status);
}

/** Calls a service; its ApiError becomes the client exception Heat would see. */
function call<T>(service: Service, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ApiError) throw clientError(service, err);
    throw err;
  }
}

function physicalName(ctx: PluginContext, res: Resource): string {
  const existing = res.data.physicalName;
  if (typeof existing === 'string') return existing;
  const name = `${ctx.stack.name}-${res.name}-${shortId()}`.slice(0, 255);
  res.data.physicalName = name;
  return name;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : undefined;
}

function int(value: unknown, what: string, name: string): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  if (!Number.isInteger(n)) throw invalidTemplate(`Property error: resources.${name}.properties.${what}: Value '${String(value)}' is not an integer`);
  return n;
}

const known = (value: unknown): boolean => value !== undefined && value !== null && !containsDeferred(value);

function propertyError(name: string, prop: string, message: string): ApiError {
  return invalidTemplate(`Property error: resources.${name}.properties.${prop}: ${message}`);
}

function findImage(ctx: { cloud: PluginContext['cloud'] }, ref: string, projectId: string): Image | undefined {
  const byId = ctx.cloud.glance.get(ref);
  if (byId) return byId;
  const matches = ctx.cloud.glance.byName(ref, projectId);
  if (matches.length > 1) throw new PluginError('PhysicalResourceNameAmbiguity', `Multiple physical resources were found with name (${ref}).`);
  return matches[0];
}

function attributeOf(value: unknown, path: unknown[]): unknown {
  return path.length === 0 ? (value ?? null) : dig(value, path);
}

/** Waits until `check` holds (re-checked whenever the simulated cloud changes), or the action is aborted. */
function until(ctx: PluginContext, check: () => boolean): Promise<void> {
  return ctx.cloud.sched.until(check, ctx.signal);
}

function nestedStack(ctx: PluginContext, res: Resource): Stack | undefined {
  return res.physicalId ? ctx.engine.stacks.get(res.physicalId) : undefined;
}

// ---------------------------------------------------------------------------------------------
// OS::Nova::Server

const SERVER_PROPS = [
  'name',
  'image',
  'block_device_mapping',
  'block_device_mapping_v2',
  'flavor',
  'flavor_update_policy',
  'image_update_policy',
  'key_name',
  'admin_user',
  'availability_zone',
  'security_groups',
  'networks',
  'scheduler_hints',
  'metadata',
  'user_data_format',
  'user_data',
  'reservation_id',
  'config_drive',
  'diskConfig',
  'personality',
  'admin_pass',
  'software_config_transport',
  'user_data_update_policy',
  'tags',
  'deployment_swift_data',
];

function serverNics(ctx: PluginContext, res: Resource, networks: unknown): { nics: Array<Record<string, string>>; internal: string[] } {
  const nics: Array<Record<string, string>> = [];
  const internal: string[] = [];
  if (!Array.isArray(networks)) return { nics, internal };
  const { neutron } = ctx.cloud;
  const projectId = ctx.stack.projectId;
  const admin = ctx.cloud.keystone.isAdmin(ctx.stack.owner);
  for (const item of networks) {
    if (!isRecord(item)) continue;
    const port = str(item.port);
    if (port) {
      nics.push({ port });
      continue;
    }
    const netRef = str(item.network) ?? str(item.uuid);
    const subnetRef = str(item.subnet);
    const fixedIp = str(item.fixed_ip);
    if (!netRef && !subnetRef) continue;
    const subnet = subnetRef ? call('neutron', () => neutron.findSubnet(subnetRef, projectId)) : undefined;
    const net = netRef ? call('neutron', () => neutron.findNetwork(netRef, projectId)) : call('neutron', () => neutron.requireNetwork(subnet?.networkId ?? ''));
    // Heat creates the server's ports itself ("internal ports") and deletes them with the server.
    const fixed = subnet || fixedIp ? [{ ...(subnet ? { subnet_id: subnet.id } : {}), ...(fixedIp ? { ip_address: fixedIp } : {}) }] : undefined;
    const created = call('neutron', () =>
      neutron.createPort(projectId, { network_id: net.id, name: `${physicalName(ctx, res)}-port`, ...(fixed ? { fixed_ips: fixed } : {}) }, admin),
    );
    internal.push(created.id);
    nics.push({ port: created.id });
  }
  return { nics, internal };
}

function bdmV2(props: Props): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  const list = Array.isArray(props.block_device_mapping_v2) ? props.block_device_mapping_v2 : [];
  for (const m of list) {
    if (!isRecord(m)) continue;
    const boot = m.boot_index === undefined || m.boot_index === null ? undefined : Number(m.boot_index);
    const del = m.delete_on_termination === true;
    if (str(m.volume_id)) out.push({ uuid: m.volume_id, source_type: 'volume', destination_type: 'volume', boot_index: boot ?? 0, delete_on_termination: del });
    else if (str(m.image) ?? str(m.image_id))
      out.push({
        uuid: m.image ?? m.image_id,
        source_type: 'image',
        destination_type: 'volume',
        volume_size: m.volume_size,
        boot_index: boot ?? 0,
        delete_on_termination: del,
      });
    else if (m.swap_size !== undefined || m.ephemeral_size !== undefined) out.push({ source_type: 'blank', destination_type: 'local', boot_index: -1 });
    else if (m.volume_size !== undefined)
      out.push({ source_type: 'blank', destination_type: 'volume', volume_size: m.volume_size, boot_index: boot ?? -1, delete_on_termination: del });
  }
  const legacy = Array.isArray(props.block_device_mapping) ? props.block_device_mapping : [];
  for (const m of legacy)
    if (isRecord(m) && str(m.volume_id))
      out.push({
        uuid: m.volume_id,
        source_type: 'volume',
        destination_type: 'volume',
        boot_index: m.device_name === 'vda' ? 0 : -1,
        delete_on_termination: m.delete_on_termination === true,
      });
  return out;
}

async function waitServer(ctx: PluginContext, id: string, settled: (s: Server) => boolean): Promise<Server> {
  const nova = ctx.cloud.nova;
  await until(ctx, () => {
    const s = nova.servers.get(id);
    return !s || settled(s);
  });
  const server = nova.servers.get(id);
  if (!server) throw new PluginError('Error', `Server ${id} disappeared while it was being built`);
  if (server.status === 'ERROR') {
    const fault = server.fault ?? { message: 'Unknown', code: 500 };
    throw new PluginError('ResourceInError', `Went to status ERROR due to "Message: ${fault.message}, Code: ${fault.code}"`);
  }
  return server;
}

const server: ResourcePlugin = {
  properties: SERVER_PROPS,
  required: ['flavor'],
  updateAllowed: [
    'name',
    'flavor',
    'flavor_update_policy',
    'image',
    'image_update_policy',
    'metadata',
    'networks',
    'admin_pass',
    'user_data',
    'user_data_update_policy',
    'tags',
    'security_groups',
    'deployment_swift_data',
    'software_config_transport',
  ],
  attributes: ['name', 'addresses', 'networks', 'first_address', 'instance_name', 'accessIPv4', 'accessIPv6', 'console_urls', 'tags', 'os_collect_config'],
  validate(ctx, name, props) {
    const image = props.image;
    if (known(image) && str(image)) {
      try {
        if (!findImage(ctx, str(image) as string, ctx.projectId))
          throw propertyError(name, 'image', `Error validating value '${String(image)}': No images matching {'name': '${String(image)}'}.`);
      } catch (err) {
        if (err instanceof PluginError) throw propertyError(name, 'image', `Error validating value '${String(image)}': ${err.message}`);
        throw err;
      }
    }
    const flavor = props.flavor;
    if (known(flavor) && !ctx.cloud.nova.findFlavor(String(flavor))) {
      throw propertyError(name, 'flavor', `Error validating value '${String(flavor)}': No Flavor matching {'name': '${String(flavor)}'}. (HTTP 404)`);
    }
    const hasBootVolume =
      bdmV2(props).some((m) => m.boot_index === 0) || (Array.isArray(props.block_device_mapping_v2) && props.block_device_mapping_v2.some(containsDeferred));
    if ((image === undefined || image === null || image === '') && !hasBootVolume && !Array.isArray(props.block_device_mapping)) {
      throw invalidTemplate(`Property error: resources.${name}.properties: Neither image nor bootable volume is specified for instance ${name}`);
    }
    if (Array.isArray(props.networks)) {
      for (const [i, item] of props.networks.entries()) {
        if (!isRecord(item)) continue;
        if (!['port', 'network', 'uuid', 'subnet', 'allocate_network'].some((k) => item[k] !== undefined && item[k] !== null && item[k] !== '')) {
          throw invalidTemplate(
            `Property error: resources.${name}.properties.networks[${i}]: One of the properties "network", "port", "allocate_network" or "subnet" should be set for the specified network of server "${name}".`,
          );
        }
      }
    }
  },
  async create(ctx, res, props) {
    const { nova } = ctx.cloud;
    const projectId = ctx.stack.projectId;
    const imageRef = str(props.image);
    let imageId: string | undefined;
    if (imageRef) {
      const image = findImage(ctx, imageRef, projectId);
      if (!image)
        throw new PluginError(
          'StackValidationFailed',
          `Property error: resources.${res.name}.properties.image: Error validating value '${imageRef}': No images matching {'name': '${imageRef}'}.`,
        );
      imageId = image.id;
    }
    const flavor = nova.findFlavor(String(props.flavor));
    if (!flavor)
      throw new PluginError(
        'StackValidationFailed',
        `Property error: resources.${res.name}.properties.flavor: Error validating value '${String(props.flavor)}': No Flavor matching {'name': '${String(props.flavor)}'}. (HTTP 404)`,
      );
    const { nics, internal } = serverNics(ctx, res, props.networks);
    res.data.internalPorts = internal;
    const hints = isRecord(props.scheduler_hints) ? props.scheduler_hints : undefined;
    const userData = typeof props.user_data === 'string' && props.user_data !== '' ? Buffer.from(props.user_data).toString('base64') : undefined;
    const body = {
      server: {
        name: str(props.name) ?? physicalName(ctx, res),
        ...(imageId ? { imageRef: imageId } : {}),
        flavorRef: flavor.id,
        ...(nics.length > 0 ? { networks: nics } : {}),
        ...(bdmV2(props).length > 0 ? { block_device_mapping_v2: bdmV2(props) } : {}),
        ...(str(props.availability_zone) ? { availability_zone: str(props.availability_zone) } : {}),
        ...(isRecord(props.metadata)
          ? { metadata: Object.fromEntries(Object.entries(props.metadata).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])) }
          : {}),
        ...(str(props.key_name) ? { key_name: str(props.key_name) } : {}),
        ...(userData ? { user_data: userData } : {}),
        ...(props.config_drive === true ? { config_drive: true } : {}),
        ...(Array.isArray(props.tags) ? { tags: props.tags.map(String) } : {}),
      },
      ...(hints ? { 'os:scheduler_hints': hints } : {}),
    };
    let created: Server;
    try {
      created = call('nova', () => nova.createServer(ctx.stack.owner, body, 2001));
    } catch (err) {
      for (const id of internal) if (ctx.cloud.neutron.ports.has(id)) ctx.cloud.neutron.deletePort(id);
      res.data.internalPorts = [];
      throw err;
    }
    res.physicalId = created.id;
    await waitServer(ctx, created.id, (s) => s.status !== 'BUILD');
  },
  async update(ctx, res, before, after) {
    const { nova } = ctx.cloud;
    const srv = nova.servers.get(res.physicalId);
    if (!srv) return 'replace';
    const changed = (k: string) => JSON.stringify(before[k]) !== JSON.stringify(after[k]);
    if (changed('flavor') && after.flavor_update_policy === 'REPLACE') return 'replace';
    if (changed('image') && (after.image_update_policy === 'REPLACE' || srv.imageId === null)) return 'replace';
    if (changed('user_data') && (after.user_data_update_policy ?? 'REPLACE') === 'REPLACE') return 'replace';
    if (changed('name')) srv.name = str(after.name) ?? physicalName(ctx, res);
    if (changed('metadata')) srv.metadata = isRecord(after.metadata) ? Object.fromEntries(Object.entries(after.metadata).map(([k, v]) => [k, String(v)])) : {};
    if (changed('flavor')) {
      const flavor = nova.findFlavor(String(after.flavor));
      if (!flavor)
        throw new PluginError(
          'StackValidationFailed',
          `Error validating value '${String(after.flavor)}': No Flavor matching {'name': '${String(after.flavor)}'}. (HTTP 404)`,
        );
      call('nova', () => nova.resize(srv, flavor));
      const resized = await waitServer(ctx, srv.id, (s) => s.status === 'VERIFY_RESIZE' || s.status === 'ACTIVE' || s.status === 'ERROR');
      if (resized.status === 'VERIFY_RESIZE') call('nova', () => nova.confirmResize(resized));
    }
    if (changed('image')) {
      const image = findImage(ctx, String(after.image), ctx.stack.projectId);
      if (!image)
        throw new PluginError(
          'StackValidationFailed',
          `Error validating value '${String(after.image)}': No images matching {'name': '${String(after.image)}'}.`,
        );
      call('nova', () => nova.rebuild(srv, image.id));
      await waitServer(ctx, srv.id, (s) => s.status !== 'REBUILD');
    }
    if (changed('networks')) {
      const internal = Array.isArray(res.data.internalPorts) ? (res.data.internalPorts as string[]) : [];
      for (const { portId } of [...srv.ports]) {
        nova.detachPort(srv, portId);
        if (internal.includes(portId) && ctx.cloud.neutron.ports.has(portId)) ctx.cloud.neutron.deletePort(portId);
      }
      const { nics, internal: fresh } = serverNics(ctx, res, after.networks);
      res.data.internalPorts = fresh;
      for (const nic of nics) call('nova', () => nova.attachPort(srv, ctx.cloud.neutron.requirePort(nic.port ?? '')));
    }
    ctx.cloud.sched.changed();
  },
  async prepareForReplace(ctx, res) {
    // Heat detaches the ports it was given from the old server so the replacement can use them.
    const srv = ctx.cloud.nova.servers.get(res.physicalId);
    if (!srv) return;
    const internal = Array.isArray(res.data.internalPorts) ? (res.data.internalPorts as string[]) : [];
    for (const { portId } of [...srv.ports]) if (!internal.includes(portId)) ctx.cloud.nova.detachPort(srv, portId);
  },
  async delete(ctx, res) {
    const { nova, neutron } = ctx.cloud;
    const srv = res.physicalId ? nova.servers.get(res.physicalId) : undefined;
    if (srv) {
      nova.deleteServer(srv);
      await until(ctx, () => !nova.servers.has(srv.id));
    }
    const internal = Array.isArray(res.data.internalPorts) ? (res.data.internalPorts as string[]) : [];
    for (const id of internal) if (neutron.ports.has(id)) neutron.deletePort(id);
    res.data.internalPorts = [];
  },
  attribute(ctx, res, name, path) {
    const { nova, neutron } = ctx.cloud;
    const srv = nova.servers.get(res.physicalId);
    if (!srv) return null;
    switch (name) {
      case 'show':
        return attributeOf(nova.serverBody(srv, ctx.cloud.publicBase, 2001, true), path);
      case 'name':
        return attributeOf(srv.name, path);
      case 'instance_name':
        return attributeOf(srv.instanceName, path);
      case 'accessIPv4':
      case 'accessIPv6':
      case 'first_address':
        return attributeOf('', path);
      case 'console_urls':
      case 'os_collect_config':
        return attributeOf({}, path);
      case 'tags':
        return attributeOf(srv.tags, path);
      case 'addresses': {
        const out: Record<string, unknown[]> = {};
        for (const { portId } of srv.ports) {
          const port = neutron.ports.get(portId);
          if (!port) continue;
          const net = neutron.networks.get(port.networkId);
          const key = net?.name || port.networkId;
          const list = out[key] ?? (out[key] = []);
          for (const ip of port.fixedIps) {
            const sub = neutron.subnets.get(ip.subnetId);
            list.push({
              addr: ip.ipAddress,
              version: 4,
              'OS-EXT-IPS:type': 'fixed',
              'OS-EXT-IPS-MAC:mac_addr': port.macAddress,
              port: port.id,
              subnets: sub ? [neutron.subnetBody(sub)] : [],
            });
          }
        }
        return attributeOf(out, path);
      }
      case 'networks': {
        const out: Record<string, string[]> = {};
        for (const { portId } of srv.ports) {
          const port = neutron.ports.get(portId);
          if (!port) continue;
          const net = neutron.networks.get(port.networkId);
          for (const key of [net?.name || port.networkId, port.networkId]) {
            const list = out[key] ?? (out[key] = []);
            for (const ip of port.fixedIps) if (!list.includes(ip.ipAddress)) list.push(ip.ipAddress);
          }
        }
        return attributeOf(out, path);
      }
      default:
        return null;
    }
  },
};

// ---------------------------------------------------------------------------------------------
// OS::Neutron::Net / Subnet / Port

const net: ResourcePlugin = {
  properties: [
    'name',
    'value_specs',
    'admin_state_up',
    'tenant_id',
    'shared',
    'dhcp_agent_ids',
    'port_security_enabled',
    'qos_policy',
    'dns_domain',
    'availability_zone_hints',
    'tags',
  ],
  updateAllowed: ['name', 'value_specs', 'admin_state_up', 'shared', 'dhcp_agent_ids', 'port_security_enabled', 'qos_policy', 'dns_domain', 'tags'],
  attributes: ['status', 'name', 'subnets', 'admin_state_up', 'tenant_id', 'port_security_enabled', 'mtu', 'qos_policy_id', 'l2_adjacency', 'segments'],
  async create(ctx, res, props) {
    const admin = ctx.cloud.keystone.isAdmin(ctx.stack.owner);
    const input: Props = { ...(isRecord(props.value_specs) ? props.value_specs : {}), name: str(props.name) ?? physicalName(ctx, res) };
    for (const key of ['admin_state_up', 'shared', 'port_security_enabled', 'tenant_id'])
      if (props[key] !== undefined && props[key] !== null) input[key] = props[key];
    const created = call('neutron', () => ctx.cloud.neutron.createNetwork(ctx.stack.projectId, input, admin));
    res.physicalId = created.id;
  },
  async update(ctx, res, _before, after) {
    const n = ctx.cloud.neutron.networks.get(res.physicalId);
    if (!n) return 'replace';
    n.name = str(after.name) ?? physicalName(ctx, res);
    if (typeof after.admin_state_up === 'boolean') n.adminStateUp = after.admin_state_up;
    n.updatedAt = Date.now();
    n.revision++;
    ctx.cloud.sched.changed();
  },
  async delete(ctx, res) {
    if (res.physicalId && ctx.cloud.neutron.networks.has(res.physicalId)) call('neutron', () => ctx.cloud.neutron.deleteNetwork(res.physicalId));
  },
  attribute(ctx, res, name, path) {
    const n = ctx.cloud.neutron.networks.get(res.physicalId);
    if (!n) return null;
    const body = ctx.cloud.neutron.networkBody(n);
    if (name === 'show') return attributeOf(body, path);
    if (name === 'segments')
      return attributeOf(
        [
          {
            network_type: body['provider:network_type'],
            physical_network: body['provider:physical_network'],
            segmentation_id: body['provider:segmentation_id'],
          },
        ],
        path,
      );
    return attributeOf(name === 'tenant_id' ? body.tenant_id : body[name], path);
  },
};

const subnet: ResourcePlugin = {
  properties: [
    'network_id',
    'network',
    'subnetpool',
    'prefixlen',
    'cidr',
    'value_specs',
    'name',
    'ip_version',
    'dns_nameservers',
    'gateway_ip',
    'enable_dhcp',
    'allocation_pools',
    'tenant_id',
    'host_routes',
    'ipv6_ra_mode',
    'ipv6_address_mode',
    'segment',
    'tags',
  ],
  updateAllowed: ['name', 'value_specs', 'allocation_pools', 'gateway_ip', 'enable_dhcp', 'dns_nameservers', 'host_routes', 'tags'],
  attributes: ['name', 'network_id', 'tenant_id', 'allocation_pools', 'gateway_ip', 'host_routes', 'ip_version', 'cidr', 'dns_nameservers', 'enable_dhcp'],
  validate(_ctx, name, props) {
    if ((props.network === undefined || props.network === null) && (props.network_id === undefined || props.network_id === null)) {
      throw invalidTemplate(`Property error: resources.${name}.properties: At least one of the following properties must be specified: network`);
    }
  },
  async create(ctx, res, props) {
    const { neutron } = ctx.cloud;
    const projectId = ctx.stack.projectId;
    const network = call('neutron', () => neutron.findNetwork(String(props.network ?? props.network_id), projectId));
    const input: Props = {
      ...(isRecord(props.value_specs) ? props.value_specs : {}),
      network_id: network.id,
      name: str(props.name) ?? physicalName(ctx, res),
      ip_version: props.ip_version ?? 4,
    };
    for (const key of ['cidr', 'enable_dhcp', 'allocation_pools', 'dns_nameservers', 'host_routes', 'tenant_id'])
      if (props[key] !== undefined && props[key] !== null) input[key] = props[key];
    if (props.gateway_ip !== undefined) input.gateway_ip = props.gateway_ip === '' ? null : props.gateway_ip;
    const created = call('neutron', () => neutron.createSubnet(projectId, input, ctx.cloud.keystone.isAdmin(ctx.stack.owner)));
    res.physicalId = created.id;
  },
  async update(ctx, res, _before, after) {
    const s = ctx.cloud.neutron.subnets.get(res.physicalId);
    if (!s) return 'replace';
    s.name = str(after.name) ?? physicalName(ctx, res);
    if (typeof after.enable_dhcp === 'boolean') s.enableDhcp = after.enable_dhcp;
    if (Array.isArray(after.dns_nameservers)) s.dnsNameservers = after.dns_nameservers.map(String);
    s.updatedAt = Date.now();
    s.revision++;
    ctx.cloud.sched.changed();
  },
  async delete(ctx, res) {
    if (res.physicalId && ctx.cloud.neutron.subnets.has(res.physicalId)) call('neutron', () => ctx.cloud.neutron.deleteSubnet(res.physicalId));
  },
  attribute(ctx, res, name, path) {
    const s = ctx.cloud.neutron.subnets.get(res.physicalId);
    if (!s) return null;
    const body = ctx.cloud.neutron.subnetBody(s);
    return attributeOf(name === 'show' ? body : body[name], path);
  },
};

const PORT_PROPS = [
  'name',
  'network_id',
  'network',
  'fixed_ips',
  'security_groups',
  'replacement_policy',
  'device_id',
  'device_owner',
  'dns_name',
  'tags',
  'value_specs',
  'admin_state_up',
  'mac_address',
  'allowed_address_pairs',
  'binding:vnic_type',
  'qos_policy',
  'port_security_enabled',
  'propagate_uplink_status',
  'no_fixed_ips',
];

function portInput(ctx: PluginContext, props: Props): Props {
  const { neutron } = ctx.cloud;
  const projectId = ctx.stack.projectId;
  const input: Props = { ...(isRecord(props.value_specs) ? props.value_specs : {}) };
  if (Array.isArray(props.fixed_ips)) {
    input.fixed_ips = props.fixed_ips.filter(isRecord).map((ip) => {
      const subnetRef = str(ip.subnet) ?? str(ip.subnet_id);
      return {
        ...(subnetRef ? { subnet_id: call('neutron', () => neutron.findSubnet(subnetRef, projectId)).id } : {}),
        ...(str(ip.ip_address) ? { ip_address: ip.ip_address } : {}),
      };
    });
  }
  if (Array.isArray(props.security_groups)) {
    input.security_groups = props.security_groups.map((sg) => {
      const ref = String(sg);
      if (neutron.securityGroups.has(ref)) return ref;
      if (ref === 'default') return neutron.defaultSecurityGroup(projectId).id;
      const found = [...neutron.securityGroups.values()].find((g) => g.name === ref && g.projectId === projectId);
      if (!found) throw new PluginError('NotFound', `Unable to find security_group with name or id '${ref}'`, 404);
      return found.id;
    });
  }
  for (const key of [
    'mac_address',
    'device_id',
    'device_owner',
    'admin_state_up',
    'port_security_enabled',
    'binding:vnic_type',
    'allowed_address_pairs',
    'no_fixed_ips',
  ]) {
    if (props[key] !== undefined && props[key] !== null) input[key] = props[key];
  }
  return input;
}

const port: ResourcePlugin = {
  properties: PORT_PROPS,
  updateAllowed: [
    'name',
    'fixed_ips',
    'security_groups',
    'device_id',
    'device_owner',
    'admin_state_up',
    'value_specs',
    'allowed_address_pairs',
    'binding:vnic_type',
    'qos_policy',
    'port_security_enabled',
    'tags',
    'dns_name',
    'propagate_uplink_status',
    'replacement_policy',
    'no_fixed_ips',
  ],
  attributes: [
    'admin_state_up',
    'device_id',
    'device_owner',
    'fixed_ips',
    'mac_address',
    'name',
    'network_id',
    'port_security_enabled',
    'security_groups',
    'status',
    'subnets',
    'tenant_id',
    'allowed_address_pairs',
    'qos_policy_id',
    'dns_assignment',
    'network',
  ],
  validate(ctx, name, props) {
    const ref = props.network ?? props.network_id;
    if (ref === undefined || ref === null)
      throw invalidTemplate(`Property error: resources.${name}.properties: At least one of the following properties must be specified: network`);
    if (known(ref) && typeof ref === 'string') {
      try {
        ctx.cloud.neutron.findNetwork(ref, ctx.projectId);
      } catch (err) {
        if (err instanceof ApiError) throw propertyError(name, 'network', `Error validating value '${ref}': ${err.message}`);
        throw err;
      }
    }
  },
  async create(ctx, res, props) {
    const { neutron } = ctx.cloud;
    const network = call('neutron', () => neutron.findNetwork(String(props.network ?? props.network_id), ctx.stack.projectId));
    const input = { ...portInput(ctx, props), network_id: network.id, name: str(props.name) ?? physicalName(ctx, res) };
    const created = call('neutron', () => neutron.createPort(ctx.stack.projectId, input, ctx.cloud.keystone.isAdmin(ctx.stack.owner)));
    res.physicalId = created.id;
  },
  async update(ctx, res, before, after) {
    const p = ctx.cloud.neutron.ports.get(res.physicalId);
    if (!p) return 'replace';
    const input = portInput(ctx, after);
    const changes: Props = { name: str(after.name) ?? physicalName(ctx, res) };
    for (const [key, value] of Object.entries(input))
      if (JSON.stringify(before[key === 'fixed_ips' ? 'fixed_ips' : key]) !== JSON.stringify(after[key])) changes[key] = value;
    call('neutron', () => ctx.cloud.neutron.updatePort(p, changes));
  },
  async delete(ctx, res) {
    if (res.physicalId && ctx.cloud.neutron.ports.has(res.physicalId)) call('neutron', () => ctx.cloud.neutron.deletePort(res.physicalId));
  },
  attribute(ctx, res, name, path) {
    const { neutron } = ctx.cloud;
    const p = neutron.ports.get(res.physicalId);
    if (!p) return null;
    const body = neutron.portBody(p);
    switch (name) {
      case 'show':
        return attributeOf(body, path);
      case 'subnets':
        return attributeOf(
          p.fixedIps
            .map((ip) => neutron.subnets.get(ip.subnetId))
            .filter((s) => s !== undefined)
            .map((s) => neutron.subnetBody(s)),
          path,
        );
      case 'network': {
        const n = neutron.networks.get(p.networkId);
        return attributeOf(n ? neutron.networkBody(n) : null, path);
      }
      case 'dns_assignment':
        return attributeOf(
          p.fixedIps.map((ip) => ({
            hostname: `host-${ip.ipAddress.replaceAll('.', '-')}`,
            ip_address: ip.ipAddress,
            fqdn: `host-${ip.ipAddress.replaceAll('.', '-')}.openstacklocal.`,
          })),
          path,
        );
      default:
        return attributeOf(body[name], path);
    }
  },
};

// ---------------------------------------------------------------------------------------------
// OS::Cinder::Volume

const volume: ResourcePlugin = {
  properties: [
    'availability_zone',
    'size',
    'snapshot_id',
    'backup_id',
    'name',
    'description',
    'volume_type',
    'metadata',
    'imageRef',
    'image',
    'source_volid',
    'scheduler_hints',
    'read_only',
    'multiattach',
  ],
  updateAllowed: ['name', 'description', 'metadata', 'size', 'read_only', 'volume_type', 'multiattach'],
  attributes: [
    'availability_zone',
    'size',
    'snapshot_id',
    'display_name',
    'display_description',
    'volume_type',
    'metadata',
    'metadata_values',
    'source_volid',
    'status',
    'created_at',
    'bootable',
    'encrypted',
    'attachments',
    'attachments_list',
    'multiattach',
  ],
  validate(ctx, name, props) {
    const image = props.image ?? props.imageRef;
    if (known(image) && str(image)) {
      try {
        if (!findImage(ctx, String(image), ctx.projectId))
          throw propertyError(name, 'image', `Error validating value '${String(image)}': No images matching {'name': '${String(image)}'}.`);
      } catch (err) {
        if (err instanceof PluginError) throw propertyError(name, 'image', err.message);
        throw err;
      }
    }
    if ((props.size === undefined || props.size === null) && !image && !props.source_volid && !props.snapshot_id && !props.backup_id) {
      throw invalidTemplate(`Property error: resources.${name}.properties: size must be specified when creating a volume from nothing`);
    }
  },
  async create(ctx, res, props) {
    const { cinder } = ctx.cloud;
    const imageRef = str(props.image) ?? str(props.imageRef);
    const image = imageRef ? findImage(ctx, imageRef, ctx.stack.projectId) : undefined;
    if (imageRef && !image) throw new PluginError('NotFound', `Image ${imageRef} could not be found.`, 404);
    const snapshot = str(props.snapshot_id) ? cinder.snapshots.get(String(props.snapshot_id)) : undefined;
    if (str(props.snapshot_id) && !snapshot) throw new PluginError('NotFound', `Snapshot ${String(props.snapshot_id)} could not be found.`, 404);
    const size =
      props.size === undefined || props.size === null
        ? Math.max(1, Math.ceil((image?.size ?? 0) / 2 ** 30), image?.minDisk ?? 0, snapshot?.size ?? 0)
        : Number(props.size);
    const v = call('cinder', () =>
      cinder.create(
        { projectId: ctx.stack.projectId, userId: ctx.stack.owner.user.id },
        {
          size,
          name: str(props.name) ?? physicalName(ctx, res),
          ...(str(props.description) ? { description: props.description } : {}),
          ...(image ? { imageRef: image.id } : {}),
          ...(str(props.availability_zone) ? { availability_zone: props.availability_zone } : {}),
          ...(isRecord(props.metadata) ? { metadata: props.metadata } : {}),
          ...(str(props.source_volid) ? { source_volid: props.source_volid } : {}),
          ...(snapshot ? { snapshot_id: snapshot.id } : {}),
          multiattach: props.multiattach === true,
        },
      ),
    );
    res.physicalId = v.id;
    await until(ctx, () => !cinder.volumes.has(v.id) || !['creating', 'downloading'].includes(v.status));
    if (v.status !== 'available') throw new PluginError('ResourceInError', `Went to status ${v.status} due to "Unknown"`);
  },
  async update(ctx, res, before, after) {
    const v = ctx.cloud.cinder.volumes.get(res.physicalId);
    if (!v) return 'replace';
    if (JSON.stringify(before.size) !== JSON.stringify(after.size)) {
      const size = Number(after.size);
      if (size < v.size)
        throw new PluginError('NotSupported', `The new size(${size}) must be greater than or equal to the current size(${v.size}) of volume ${v.id}.`);
      v.size = size;
    }
    v.name = str(after.name) ?? v.name;
    v.description = str(after.description) ?? null;
    if (isRecord(after.metadata)) v.metadata = Object.fromEntries(Object.entries(after.metadata).map(([k, val]) => [k, String(val)]));
    v.updatedAt = Date.now();
    ctx.cloud.sched.changed();
  },
  async delete(ctx, res) {
    const { cinder } = ctx.cloud;
    const v = res.physicalId ? cinder.volumes.get(res.physicalId) : undefined;
    if (!v) return;
    await until(ctx, () => !cinder.volumes.has(v.id) || !['creating', 'downloading', 'attaching', 'detaching'].includes(v.status));
    if (!cinder.volumes.has(v.id)) return;
    call('cinder', () => cinder.delete(v));
    await until(ctx, () => !cinder.volumes.has(v.id));
  },
  attribute(ctx, res, name, path) {
    const v = ctx.cloud.cinder.volumes.get(res.physicalId);
    if (!v) return null;
    const body = ctx.cloud.cinder.body(v, ctx.cloud.publicBase);
    const map: Record<string, unknown> = {
      display_name: v.name,
      display_description: v.description,
      metadata: JSON.stringify(v.metadata),
      metadata_values: v.metadata,
      attachments: JSON.stringify(body.attachments),
      attachments_list: body.attachments,
      show: body,
    };
    return attributeOf(name in map ? map[name] : body[name], path);
  },
};

// ---------------------------------------------------------------------------------------------
// OS::Nova::ServerGroup

const serverGroup: ResourcePlugin = {
  properties: ['name', 'policies', 'rules'],
  updateAllowed: [],
  attributes: [],
  async create(ctx, res, props) {
    const policies = Array.isArray(props.policies) && props.policies.length > 0 ? props.policies.map(String) : ['anti-affinity'];
    const group = call('nova', () =>
      ctx.cloud.nova.createGroup(
        ctx.stack.owner,
        { name: str(props.name) ?? physicalName(ctx, res), policies, ...(isRecord(props.rules) ? { rules: props.rules } : {}) },
        2001,
      ),
    );
    res.physicalId = group.id;
  },
  async delete(ctx, res) {
    const { nova } = ctx.cloud;
    if (res.physicalId && nova.groups.delete(res.physicalId)) ctx.cloud.sched.changed();
  },
  attribute(ctx, res, name, path) {
    const g = ctx.cloud.nova.groups.get(res.physicalId);
    return g && name === 'show' ? attributeOf(ctx.cloud.nova.groupBody(g, 2001), path) : null;
  },
};

// ---------------------------------------------------------------------------------------------
// Nested stacks: template resources and scaling groups.

/** Parameters for a nested stack from resolved properties (unset ones fall back to defaults). */
function nestedParams(props: Props): Props {
  return Object.fromEntries(Object.entries(props).filter(([, v]) => v !== undefined && v !== null));
}

/** Validates a template used as a resource type, with the properties it is given. */
function validateTemplateResource(ctx: ValidateContext, name: string, template: Template, props: Props): void {
  const schemas = paramSchemas(template);
  const params = new Map<string, unknown>();
  for (const [key, schema] of schemas) {
    const given = props[key];
    if (given === DEFERRED || containsDeferred(given)) {
      params.set(key, DEFERRED);
      continue;
    }
    let value: unknown = given;
    if (value === undefined || value === null) {
      if (key in ctx.env.parameter_defaults) value = ctx.env.parameter_defaults[key];
      else if ('default' in schema) value = schema.default;
      else throw invalidTemplate(`Property error: resources.${name}.properties: Property ${key} not assigned`);
    }
    try {
      const converted = convertParam(key, schema, value);
      checkConstraints(key, schema, converted, () => undefined);
      params.set(key, converted);
    } catch (err) {
      if (err instanceof ApiError)
        throw invalidTemplate(`Property error: resources.${name}.properties.${key}: ${err.message.replace(/^Parameter '[^']*' is invalid: /, '')}`);
      throw err;
    }
  }
  ctx.engine.validate(
    { name: `${ctx.stackName}-${name}`, projectId: ctx.projectId, template, version: templateVersion(template), files: ctx.files, env: ctx.env, params },
    ctx.depth + 1,
  );
}

/** A template file used as a type: the resource is a nested stack; properties are its parameters. */
export function templateResourcePlugin(template: Template): ResourcePlugin {
  const schemas = paramSchemas(template);
  const outputs = isRecord(template.outputs) ? Object.keys(template.outputs) : [];
  return {
    properties: [...schemas.keys()],
    required: [...schemas.entries()].filter(([, s]) => !('default' in s)).map(([k]) => k),
    updateAllowed: 'all',
    attributes: [...outputs, 'OS::stack_id'],
    nested: true,
    validate(ctx, name, props) {
      validateTemplateResource(ctx, name, template, props);
    },
    async create(ctx, res, props) {
      await ctx.engine.createNested(ctx.stack, res, template, nestedParams(props), ctx.signal, (s) => {
        res.physicalId = s.id;
      });
    },
    async update(ctx, res, _before, after) {
      const nested = nestedStack(ctx, res);
      if (!nested || nested.deleted) return 'replace';
      await ctx.engine.updateNested(nested, template, nestedParams(after), ctx.signal);
    },
    async delete(ctx, res) {
      const nested = nestedStack(ctx, res);
      if (nested) await ctx.engine.deleteNested(nested, ctx.signal);
    },
    attribute(ctx, res, name, path) {
      const nested = nestedStack(ctx, res);
      if (!nested) return null;
      if (name === 'OS::stack_id') return nested.id;
      const out = ctx.engine.outputs(nested).find((o) => o.output_key === name);
      return out ? attributeOf(out.output_value, path) : null;
    },
    nestedStackId: (res) => res.physicalId || undefined,
  };
}

/** Checks a group's member definition as Heat validates it (type, properties, nested template). */
function validateMember(ctx: ValidateContext, name: string, def: unknown, what: string): void {
  if (!isRecord(def) || typeof def.type !== 'string') {
    if (isRecord(def) && def.type === DEFERRED) return;
    throw invalidTemplate(`Property error: resources.${name}.properties.${what}: "type" is required`);
  }
  const plugin = ctx.engine.plugin(def.type, ctx.files, ctx.env);
  const props = isRecord(def.properties) ? def.properties : {};
  if (plugin.properties !== 'any') {
    for (const key of Object.keys(props))
      if (!plugin.properties.includes(key)) throw invalidTemplate(`Property error: resources.${name}.properties.${what}.properties: Unknown Property ${key}`);
  }
  for (const key of plugin.required ?? []) {
    if (props[key] === undefined || props[key] === null)
      throw invalidTemplate(`Property error: resources.${name}.properties.${what}.properties: Property ${key} not assigned`);
  }
  plugin.validate?.({ ...ctx, depth: ctx.depth + 1 }, name, props);
}

function memberTemplate(members: Array<[string, unknown]>): Template {
  return { heat_template_version: '2015-04-30', resources: Object.fromEntries(members) };
}

/** Members of a group's nested stack, oldest first, failed ones first (so they go first on scale-in). */
function members(nested: Stack | undefined): Resource[] {
  if (!nested) return [];
  const failed = (r: Resource) => (r.status === 'FAILED' ? 0 : 1);
  return [...nested.resources.values()]
    .filter((r) => !(r.action === 'DELETE' && r.status === 'COMPLETE'))
    .sort((a, b) => failed(a) - failed(b) || a.createdAt - b.createdAt || a.name.localeCompare(b.name));
}

function memberRef(res: Resource): string {
  return res.plugin.refId ? res.plugin.refId(res) : res.physicalId;
}

function groupAttribute(ctx: PluginContext, res: Resource, name: string, path: unknown[], list: Resource[]): unknown {
  const nested = nestedStack(ctx, res);
  if (!nested) return null;
  const attr = (m: Resource, a: string, p: unknown[]) => ctx.engine.attribute(nested, m, a, p);
  switch (name) {
    case 'refs':
      return attributeOf(list.map(memberRef), path);
    case 'refs_map':
      return attributeOf(Object.fromEntries(list.map((m) => [m.name, memberRef(m)])), path);
    case 'current_size':
      return list.length;
    case 'outputs': {
      const [output, ...rest] = path;
      return Object.fromEntries(list.map((m) => [m.name, attr(m, String(output), rest)]));
    }
    case 'outputs_list': {
      const [output, ...rest] = path;
      return list.map((m) => attr(m, String(output), rest));
    }
    default:
      return undefined;
  }
}

const ASG_PROPS = ['resource', 'max_size', 'min_size', 'cooldown', 'desired_capacity', 'rolling_updates'];

function asgBounds(props: Props, name: string): { min: number; max: number; desired: number | undefined } {
  const min = int(props.min_size, 'min_size', name);
  const max = int(props.max_size, 'max_size', name);
  const desired = props.desired_capacity === undefined || props.desired_capacity === null ? undefined : int(props.desired_capacity, 'desired_capacity', name);
  return { min, max, desired };
}

/** A member's definition in the group's nested stack as it stands (it may have been updated on its own). */
function memberDefinition(nested: Stack, name: string): unknown {
  const resources = isRecord(nested.template.resources) ? nested.template.resources : {};
  return Object.hasOwn(resources, name) ? resources[name] : undefined;
}

/**
 * Resizes the group. As Heat's member_definitions do, the members it keeps keep the definition they
 * have in the nested stack (an update of that stack alone, as Tacker's rolling update makes, is not
 * undone); only new members get the group's `definition`.
 */
async function resizeGroup(ctx: PluginContext, res: Resource, capacity: number, definition: unknown): Promise<void> {
  const nested = nestedStack(ctx, res);
  if (!nested) throw new PluginError('Error', `The nested stack of ${res.name} is missing`);
  const current = members(nested);
  const keep = current.slice(Math.max(0, current.length - capacity));
  const names = keep.map((m) => m.name);
  while (names.length < capacity) names.push(shortId());
  res.data.capacity = capacity;
  await ctx.engine.updateNested(nested, memberTemplate(names.map((n) => [n, memberDefinition(nested, n) ?? definition])), {}, ctx.signal);
}

const autoScalingGroup: ResourcePlugin = {
  properties: ASG_PROPS,
  required: ['resource', 'max_size', 'min_size'],
  updateAllowed: 'all',
  attributes: ['outputs', 'outputs_list', 'current_size', 'refs', 'refs_map'],
  nested: true,
  validate(ctx, name, props) {
    if (known(props.min_size) && known(props.max_size)) {
      const { min, max, desired } =
        known(props.desired_capacity) || props.desired_capacity === undefined
          ? asgBounds(props, name)
          : { ...asgBounds({ ...props, desired_capacity: undefined }, name) };
      if (min < 0) throw invalidTemplate(`Property error: resources.${name}.properties.min_size: ${min} is out of range (min: 0, max: None)`);
      if (min > max) throw invalidTemplate('min_size can not be greater than max_size');
      if (desired !== undefined && (desired < min || desired > max)) throw invalidTemplate(`desired_capacity must be between ${min} and ${max}`);
    }
    if (isRecord(props.resource)) validateMember(ctx, name, props.resource, 'resource');
  },
  async create(ctx, res, props) {
    const { min, max, desired } = asgBounds(props, res.name);
    const capacity = Math.min(max, Math.max(min, desired ?? min));
    const names = Array.from({ length: capacity }, () => shortId());
    res.data.capacity = capacity;
    await ctx.engine.createNested(ctx.stack, res, memberTemplate(names.map((n) => [n, props.resource])), {}, ctx.signal, (s) => {
      res.physicalId = s.id;
    });
  },
  async update(ctx, res, before, after) {
    const nested = nestedStack(ctx, res);
    if (!nested || nested.deleted) return 'replace';
    if (JSON.stringify(before.resource) !== JSON.stringify(after.resource)) {
      // Heat replaces the existing members first, in batches (rolling_updates: max_batch_size 1,
      // pause_time 0 by default), the rest keeping their old definition until their turn.
      const rolling = isRecord(after.rolling_updates) ? after.rolling_updates : {};
      const batch = Math.max(1, Number(rolling.max_batch_size ?? 1) || 1);
      const pause = Math.max(0, Number(rolling.pause_time ?? 0) || 0);
      const current = members(nested).sort((a, b) => a.createdAt - b.createdAt || a.name.localeCompare(b.name));
      const done = new Set<string>();
      for (let i = 0; i < current.length; i += batch) {
        for (const m of current.slice(i, i + batch)) done.add(m.name);
        await ctx.engine.updateNested(
          nested,
          memberTemplate(current.map((m) => [m.name, done.has(m.name) ? after.resource : (memberDefinition(nested, m.name) ?? before.resource)])),
          {},
          ctx.signal,
        );
        if (pause > 0 && i + batch < current.length) await ctx.cloud.sched.sleep(pause * 1000, ctx.signal);
      }
    }
    const { min, max, desired } = asgBounds(after, res.name);
    let capacity = typeof res.data.capacity === 'number' ? res.data.capacity : members(nested).length;
    // A changed desired_capacity wins; otherwise the size the group has (signals may have changed it) stays.
    if (desired !== undefined && JSON.stringify(before.desired_capacity) !== JSON.stringify(after.desired_capacity)) capacity = desired;
    capacity = Math.min(max, Math.max(min, capacity));
    await resizeGroup(ctx, res, capacity, after.resource);
  },
  async delete(ctx, res) {
    const nested = nestedStack(ctx, res);
    if (nested) await ctx.engine.deleteNested(nested, ctx.signal);
  },
  attribute(ctx, res, name, path) {
    return (
      groupAttribute(
        ctx,
        res,
        name,
        path,
        members(nestedStack(ctx, res)).sort((a, b) => a.createdAt - b.createdAt || a.name.localeCompare(b.name)),
      ) ?? null
    );
  },
  nestedStackId: (res) => res.physicalId || undefined,
};

/** The scaling policy's adjustment, as Heat's ASG applies it. */
export async function adjustGroup(ctx: PluginContext, group: Resource, type: string, adjustment: number, minStep: number): Promise<void> {
  const props = group.props;
  const { min, max } = asgBounds(props, group.name);
  const current = typeof group.data.capacity === 'number' ? group.data.capacity : members(nestedStack(ctx, group)).length;
  let next: number;
  if (type === 'exact_capacity') next = adjustment;
  else if (type === 'percent_change_in_capacity') {
    const delta = (current * adjustment) / 100;
    let step = delta < 0 ? Math.ceil(delta) : Math.floor(delta);
    if (step === 0) step = adjustment < 0 ? -1 : 1;
    if (Math.abs(step) < minStep) step = step < 0 ? -minStep : minStep;
    next = current + step;
  } else next = current + adjustment;
  next = Math.min(max, Math.max(min, next));
  if (next === current) return;
  await resizeGroup(ctx, group, next, props.resource);
}

const resourceGroup: ResourcePlugin = {
  properties: ['count', 'index_var', 'resource_def', 'removal_policies', 'removal_policies_mode'],
  required: ['resource_def'],
  updateAllowed: 'all',
  attributes: 'any',
  nested: true,
  validate(ctx, name, props) {
    if (known(props.count) && int(props.count, 'count', name) < 0)
      throw invalidTemplate(`Property error: resources.${name}.properties.count: ${String(props.count)} is out of range (min: 0, max: None)`);
    if (isRecord(props.resource_def)) validateMember(ctx, name, props.resource_def, 'resource_def');
  },
  async create(ctx, res, props) {
    const count = props.count === undefined || props.count === null ? 1 : int(props.count, 'count', res.name);
    const names = Array.from({ length: count }, (_, i) => String(i));
    await ctx.engine.createNested(ctx.stack, res, memberTemplate(names.map((n) => [n, indexed(props, n)])), {}, ctx.signal, (s) => {
      res.physicalId = s.id;
    });
  },
  async update(ctx, res, _before, after) {
    const nested = nestedStack(ctx, res);
    if (!nested || nested.deleted) return 'replace';
    const count = after.count === undefined || after.count === null ? 1 : int(after.count, 'count', res.name);
    const removalList = new Set<string>();
    if (Array.isArray(after.removal_policies))
      for (const p of after.removal_policies) if (isRecord(p) && Array.isArray(p.resource_list)) for (const r of p.resource_list) removalList.add(String(r));
    const blacklist = new Set([...(Array.isArray(res.data.blacklist) ? (res.data.blacklist as string[]) : []), ...removalList]);
    let names = [...nested.resources.keys()].filter((n) => !blacklist.has(n) && !removalList.has(n)).sort((a, b) => Number(a) - Number(b));
    for (const r of nested.resources.values()) if (removalList.has(r.name) || removalList.has(r.physicalId)) blacklist.add(r.name);
    names = names.filter((n) => !blacklist.has(n));
    if (names.length > count) names = names.slice(0, count);
    for (let i = 0; names.length < count; i++) if (!names.includes(String(i)) && !blacklist.has(String(i))) names.push(String(i));
    res.data.blacklist = [...blacklist];
    await ctx.engine.updateNested(nested, memberTemplate(names.map((n) => [n, indexed(after, n)])), {}, ctx.signal);
  },
  async delete(ctx, res) {
    const nested = nestedStack(ctx, res);
    if (nested) await ctx.engine.deleteNested(nested, ctx.signal);
  },
  attribute(ctx, res, name, path) {
    const nested = nestedStack(ctx, res);
    if (!nested) return null;
    const list = [...nested.resources.values()]
      .filter((r) => r.action !== 'INIT' && !(r.action === 'DELETE' && r.status === 'COMPLETE'))
      .sort((a, b) => Number(a.name) - Number(b.name));
    const common = groupAttribute(ctx, res, name, path, list);
    if (common !== undefined && name !== 'current_size') return common;
    if (name === 'removed_rsrc_list') return attributeOf(Array.isArray(res.data.blacklist) ? res.data.blacklist : [], path);
    if (name === 'attributes') {
      const [attr, ...rest] = path;
      return Object.fromEntries(list.map((m) => [m.name, ctx.engine.attribute(nested, m, String(attr), rest)]));
    }
    const single = /^resource\.([^.]+)(?:\.(.+))?$/.exec(name);
    if (single) {
      const member = nested.resources.get(single[1] as string);
      if (!member) throw new PluginError('InvalidTemplateAttribute', `Member '${single[1]}' not found in group resource '${res.name}'.`);
      const parts = single[2] ? single[2].split('.') : [];
      const [attr, ...rest] = [...parts, ...path];
      if (attr === undefined) return memberRef(member);
      return ctx.engine.attribute(nested, member, String(attr), rest);
    }
    return list.map((m) => ctx.engine.attribute(nested, m, name, path));
  },
  nestedStackId: (res) => res.physicalId || undefined,
};

function indexed(props: Props, index: string): unknown {
  const variable = typeof props.index_var === 'string' ? props.index_var : '%index%';
  const replace = (node: unknown): unknown => {
    if (typeof node === 'string') return node.split(variable).join(index);
    if (Array.isArray(node)) return node.map(replace);
    if (isRecord(node)) return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, replace(v)]));
    return node;
  };
  return replace(props.resource_def);
}

const scalingPolicy: ResourcePlugin = {
  properties: ['auto_scaling_group_id', 'scaling_adjustment', 'adjustment_type', 'cooldown', 'min_adjustment_step'],
  required: ['auto_scaling_group_id', 'scaling_adjustment', 'adjustment_type'],
  updateAllowed: ['scaling_adjustment', 'adjustment_type', 'cooldown', 'min_adjustment_step'],
  attributes: ['alarm_url', 'signal_url'],
  validate(_ctx, name, props) {
    const type = props.adjustment_type;
    if (known(type) && !['change_in_capacity', 'exact_capacity', 'percent_change_in_capacity'].includes(String(type))) {
      throw propertyError(
        name,
        'adjustment_type',
        `"${String(type)}" is not an allowed value [change_in_capacity, exact_capacity, percent_change_in_capacity]`,
      );
    }
  },
  async create(_ctx, res) {
    res.physicalId = uuid();
  },
  async update() {},
  async delete() {},
  attribute(ctx, res, name) {
    const base = `${ctx.cloud.publicBase}/heat-api/v1/${ctx.stack.projectId}/stacks/${ctx.stack.name}/${ctx.stack.id}/resources/${res.name}`;
    if (name === 'signal_url') return `${base}/signal`;
    if (name === 'alarm_url')
      return `${ctx.cloud.publicBase}/heat-api-cfn/v1/signal/arn%3Aopenstack%3Aheat%3A%3A${ctx.stack.projectId}%3Astacks/${ctx.stack.name}/${ctx.stack.id}/resources/${res.name}`;
    return null;
  },
  async signal(ctx, res) {
    const groupId = String(res.props.auto_scaling_group_id ?? '');
    const group = [...ctx.stack.resources.values()].find((r) => r.physicalId === groupId || r.name === groupId);
    if (!group) throw new ApiError(400, `Alarm ${res.name} could not find scaling group named "${groupId}"`);
    res.action = 'SIGNAL';
    res.status = 'IN_PROGRESS';
    ctx.cloud.sched.changed();
    try {
      await adjustGroup(ctx, group, String(res.props.adjustment_type), Number(res.props.scaling_adjustment), Number(res.props.min_adjustment_step ?? 0));
      res.status = 'COMPLETE';
      res.reason = `Signal: adjusted group ${group.name}`;
    } catch (err) {
      res.status = 'FAILED';
      res.reason = err instanceof Error ? err.message : String(err);
    }
    res.updatedAt = Date.now();
    ctx.cloud.sched.changed();
  },
};

// ---------------------------------------------------------------------------------------------
// Software configuration.

const softwareConfig: ResourcePlugin = {
  properties: ['group', 'config', 'options', 'inputs', 'outputs'],
  updateAllowed: [],
  attributes: ['config'],
  async create(_ctx, res) {
    res.physicalId = uuid();
  },
  async delete() {},
  attribute(_ctx, res, name, path) {
    return name === 'config' ? attributeOf(res.props.config ?? '', path) : null;
  },
};

/** Waits for the deployment's signal (untracked: only the outside world can send it). */
async function awaitSignal(ctx: PluginContext, dep: Deployment): Promise<Record<string, unknown>> {
  dep.state = 'waiting';
  ctx.cloud.sched.changed();
  if (!dep.pending) {
    await ctx.cloud.sched.external(
      new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          dep.wake = undefined;
          reject(ctx.signal.reason);
        };
        if (ctx.signal.aborted) {
          onAbort();
          return;
        }
        dep.wake = () => {
          ctx.signal.removeEventListener('abort', onAbort);
          dep.wake = undefined;
          resolve();
        };
        ctx.signal.addEventListener('abort', onAbort, { once: true });
      }),
    );
  }
  const body = dep.pending ?? {};
  dep.pending = undefined;
  const code = body.deploy_status_code === undefined ? 0 : Number(body.deploy_status_code);
  if (code !== 0) {
    dep.state = 'failed';
    ctx.cloud.sched.changed();
    throw new PluginError('Error', `Deployment to server failed: deploy_status_code : Deployment exited with non-zero status code: ${code}`);
  }
  dep.state = 'complete';
  ctx.cloud.sched.changed();
  return body;
}

function deploymentActions(props: Props): string[] {
  return Array.isArray(props.actions) ? props.actions.map(String) : ['CREATE', 'UPDATE'];
}

const softwareDeployment: ResourcePlugin = {
  properties: ['config', 'server', 'input_values', 'actions', 'name', 'signal_transport'],
  required: ['server'],
  updateAllowed: ['config', 'input_values', 'actions', 'name', 'signal_transport'],
  attributes: 'any',
  async create(ctx, res, props) {
    res.physicalId = uuid();
    const dep: Deployment = { id: res.physicalId, stack: ctx.stack, resourceName: res.name, state: 'idle', pending: undefined, wake: undefined };
    ctx.engine.deployments.set(dep.id, dep);
    if (props.signal_transport === 'NO_SIGNAL' || !deploymentActions(props).includes('CREATE')) {
      dep.state = 'complete';
      return;
    }
    res.data.outputs = await awaitSignal(ctx, dep);
  },
  async update(ctx, res, _before, after) {
    const dep = ctx.engine.deployments.get(res.physicalId);
    if (!dep || after.signal_transport === 'NO_SIGNAL' || !deploymentActions(after).includes('UPDATE')) return;
    res.data.outputs = await awaitSignal(ctx, dep);
  },
  async delete(ctx, res) {
    const dep = ctx.engine.deployments.get(res.physicalId);
    if (dep && deploymentActions(res.props).includes('DELETE') && res.props.signal_transport !== 'NO_SIGNAL') await awaitSignal(ctx, dep);
    ctx.engine.deployments.delete(res.physicalId);
  },
  attribute(_ctx, res, name, path) {
    const outputs = isRecord(res.data.outputs) ? res.data.outputs : {};
    const defaults: Record<string, unknown> = { deploy_stdout: null, deploy_stderr: null, deploy_status_code: null };
    return attributeOf(name in outputs ? outputs[name] : (defaults[name] ?? null), path);
  },
  async signal(ctx, res, body) {
    ctx.engine.signalDeployment(res.physicalId, isRecord(body) ? body : {});
  },
};

// ---------------------------------------------------------------------------------------------
// Utility resources.

const randomString: ResourcePlugin = {
  properties: ['length', 'sequence', 'character_classes', 'character_sequences', 'salt'],
  updateAllowed: [],
  attributes: ['value'],
  async create(ctx, res, props) {
    const length = props.length === undefined ? 32 : Number(props.length);
    const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
    res.data.value = [...randomBytes(length)].map((b) => alphabet[b % alphabet.length]).join('');
    res.physicalId = physicalName(ctx, res);
  },
  async delete() {},
  attribute(_ctx, res, name, path) {
    return name === 'value' ? attributeOf(res.data.value, path) : null;
  },
};

const testResource: ResourcePlugin = {
  properties: [
    'value',
    'update_replace',
    'fail',
    'client_name',
    'entity_name',
    'wait_secs',
    'action_wait_secs',
    'attr_wait_secs',
    'constraint_prop_secs',
    'update_replace_value',
  ],
  updateAllowed: ['value', 'update_replace', 'fail', 'wait_secs', 'action_wait_secs', 'update_replace_value'],
  attributes: ['output'],
  async create(ctx, res, props) {
    const waits = isRecord(props.action_wait_secs) ? props.action_wait_secs : {};
    await ctx.cloud.sched.sleep(Number(waits.create ?? props.wait_secs ?? 0) * 1000, ctx.signal);
    if (props.fail === true) throw new PluginError('ValueError', `Test Resource failed ${res.name}`);
    res.physicalId = physicalName(ctx, res);
  },
  async update(ctx, res, _before, after) {
    if (after.update_replace === true) return 'replace';
    const waits = isRecord(after.action_wait_secs) ? after.action_wait_secs : {};
    await ctx.cloud.sched.sleep(Number(waits.update ?? after.wait_secs ?? 0) * 1000, ctx.signal);
    if (after.fail === true) throw new PluginError('ValueError', `Test Resource failed ${res.name}`);
  },
  async delete(ctx, res) {
    const waits = isRecord(res.props.action_wait_secs) ? res.props.action_wait_secs : {};
    await ctx.cloud.sched.sleep(Number(waits.delete ?? 0) * 1000, ctx.signal);
  },
  attribute(_ctx, res, name, path) {
    return name === 'output' ? attributeOf(res.props.value ?? '', path) : null;
  },
};

const noneResource: ResourcePlugin = {
  properties: 'any',
  updateAllowed: 'all',
  attributes: 'any',
  async create(ctx, res) {
    res.physicalId = physicalName(ctx, res);
  },
  async update() {},
  async delete() {},
  attribute: () => null,
};

const value: ResourcePlugin = {
  properties: ['value', 'type'],
  updateAllowed: ['value', 'type'],
  attributes: ['value'],
  async create(ctx, res) {
    res.physicalId = physicalName(ctx, res);
  },
  async update() {},
  async delete() {},
  attribute(_ctx, res, name, path) {
    return name === 'value' ? attributeOf(res.props.value, path) : null;
  },
};

export const BUILTIN: Record<string, ResourcePlugin> = {
  'OS::Nova::Server': server,
  'OS::Nova::ServerGroup': serverGroup,
  'OS::Neutron::Net': net,
  'OS::Neutron::Subnet': subnet,
  'OS::Neutron::Port': port,
  'OS::Cinder::Volume': volume,
  'OS::Heat::AutoScalingGroup': autoScalingGroup,
  'OS::Heat::ResourceGroup': resourceGroup,
  'OS::Heat::ScalingPolicy': scalingPolicy,
  'OS::Heat::SoftwareConfig': softwareConfig,
  'OS::Heat::SoftwareDeployment': softwareDeployment,
  'OS::Heat::RandomString': randomString,
  'OS::Heat::TestResource': testResource,
  'OS::Heat::None': noneResource,
  'OS::Heat::Value': value,
};

// Heat resources (with nested stacks) turned into SOL003 instantiatedVnfInfo parts, the way Tacker's
// v2 driver does it: every id is a VIM id (or derived from one), so re-reading the stack after any
// later operation gives the same ids. Which VDU, storage, CP or VL a resource is comes from its Heat
// resource name; inside an AutoScalingGroup member the group's name says the VDU. Resources are
// paired (server with its ports and volumes) only within one stack, which is what a nested template
// or a scaling group member is.
import type { FlavourInfo } from '#lib/packages/vnfd/model.ts';
import type { CollectedResources } from '#lib/vim/driver.ts';
import { resourceStackId, type HeatResource } from './heat.ts';
import type { CpProtocolData, ExtVirtualLinkData } from './hot.ts';

export const SERVER = 'OS::Nova::Server';
export const VOLUME = 'OS::Cinder::Volume';
export const NETWORK = 'OS::Neutron::Net';
export const PORT = 'OS::Neutron::Port';
const SCALING_GROUPS = new Set(['OS::Heat::AutoScalingGroup']);

/** The prefix Tacker gives VnfExtCpInfo ids made from a port id. */
const EXT_CP_PREFIX = 'cp-';

type Info = Record<string, unknown>;

export interface CollectInputs {
  resources: HeatResource[];
  flavour: FlavourInfo;
  extVirtualLinks: ExtVirtualLinkData[];
  vimConnectionId?: string;
}

/** The uuid part of a resource's stack, which is the physical id of the resource that nests it. */
function stackUuid(resource: HeatResource): string | undefined {
  return resourceStackId(resource)?.split('/')[1];
}

/** SOL003 CpProtocolInfo from the request's CpProtocolData (the addresses the VNFM asked for). */
function protocolInfo(data: CpProtocolData): Info {
  const ip = data.ipOverEthernet;
  if (!ip) return { layerProtocol: data.layerProtocol };
  return {
    layerProtocol: data.layerProtocol,
    ipOverEthernet: {
      ...(ip.macAddress !== undefined ? { macAddress: ip.macAddress } : {}),
      ...(ip.segmentationId !== undefined ? { segmentationId: ip.segmentationId } : {}),
      ...(ip.ipAddresses
        ? {
            ipAddresses: ip.ipAddresses.map((address) => ({
              ...(address.type !== undefined ? { type: address.type } : {}),
              ...(address.fixedAddresses ? { addresses: address.fixedAddresses } : {}),
              ...(address.numDynamicAddresses !== undefined ? { isDynamic: true } : {}),
              ...(address.addressRange ? { addressRange: { minAddress: address.addressRange.minAddress, maxAddress: address.addressRange.maxAddress } } : {}),
              ...(address.subnetId !== undefined ? { subnetId: address.subnetId } : {}),
            })),
          }
        : {}),
    },
  };
}

/** What withPortAddresses reads of a Neutron port. */
export interface PortAddresses {
  id: string;
  mac_address?: string | null;
  fixed_ips?: Array<{ subnet_id?: string | null; ip_address: string }> | null;
}

/**
 * The external CPs with what Neutron allocated to their ports (SOL003 CpProtocolInfo): the MAC, and
 * the fixed IPs per subnet; an address the request fixed is not dynamic, any other is. A CP whose
 * port Neutron no longer has keeps what the request asked for, less entries that name no address
 * (an ipAddresses entry needs addresses or addressRange).
 */
export function withPortAddresses(extCpInfo: Info[], ports: readonly PortAddresses[]): Info[] {
  const byId = new Map(ports.map((port) => [port.id, port]));
  return extCpInfo.map((cp) => {
    const requested = (Array.isArray(cp.cpProtocolInfo) ? cp.cpProtocolInfo : []) as Array<{
      ipOverEthernet?: { segmentationId?: string; ipAddresses?: Array<{ addresses?: string[]; addressRange?: unknown }> };
    }>;
    const port = typeof cp.extLinkPortId === 'string' ? byId.get(cp.extLinkPortId) : undefined;
    const segmentationId = requested.map((info) => info.ipOverEthernet?.segmentationId).find((id) => id !== undefined);
    if (!port || (!port.mac_address && !port.fixed_ips?.length)) {
      const kept = requested
        .map((info) => {
          const ipAddresses = info.ipOverEthernet?.ipAddresses?.filter((address) => address.addresses?.length || address.addressRange);
          const { ipAddresses: _dropped, ...rest } = info.ipOverEthernet ?? {};
          return { ...info, ...(info.ipOverEthernet ? { ipOverEthernet: { ...rest, ...(ipAddresses?.length ? { ipAddresses } : {}) } } : {}) };
        })
        .filter((info) => info.ipOverEthernet && Object.keys(info.ipOverEthernet).length);
      return kept.length ? { ...cp, cpProtocolInfo: kept } : cp;
    }
    const fixed = new Set(requested.flatMap((info) => info.ipOverEthernet?.ipAddresses?.flatMap((address) => address.addresses ?? []) ?? []));
    const bySubnet = new Map<string, { type: 'IPV4' | 'IPV6'; addresses: string[]; subnetId?: string }>();
    for (const ip of port.fixed_ips ?? []) {
      const type = ip.ip_address.includes(':') ? 'IPV6' : 'IPV4';
      const key = `${ip.subnet_id ?? ''}\0${type}`;
      const group = bySubnet.get(key) ?? { type, addresses: [], ...(ip.subnet_id ? { subnetId: ip.subnet_id } : {}) };
      group.addresses.push(ip.ip_address);
      bySubnet.set(key, group);
    }
    const ipAddresses = [...bySubnet.values()].map((group) => ({ ...group, isDynamic: !group.addresses.every((address) => fixed.has(address)) }));
    return {
      ...cp,
      cpProtocolInfo: [
        {
          layerProtocol: 'IP_OVER_ETHERNET',
          ipOverEthernet: {
            ...(port.mac_address ? { macAddress: port.mac_address } : {}),
            ...(segmentationId !== undefined ? { segmentationId } : {}),
            ...(ipAddresses.length ? { ipAddresses } : {}),
          },
        },
      ],
    };
  });
}

export function collectResources(inputs: CollectInputs): CollectedResources {
  const { flavour } = inputs;
  // Sorted by VIM id so that the answer does not depend on the order Heat lists resources in.
  const live = inputs.resources
    .filter((resource): resource is HeatResource & { physical_resource_id: string } => Boolean(resource.physical_resource_id))
    .sort((a, b) => (a.physical_resource_id < b.physical_resource_id ? -1 : a.physical_resource_id > b.physical_resource_id ? 1 : 0));
  const byPhysicalId = new Map(live.map((resource) => [resource.physical_resource_id, resource]));
  const parentOf = (resource: HeatResource): HeatResource | undefined => {
    const uuid = stackUuid(resource);
    return uuid ? byPhysicalId.get(uuid) : undefined;
  };
  const handle = (resource: HeatResource & { physical_resource_id: string }): Info => ({
    ...(inputs.vimConnectionId !== undefined ? { vimConnectionId: inputs.vimConnectionId } : {}),
    resourceId: resource.physical_resource_id,
    vimLevelResourceType: resource.resource_type,
  });

  const vduIds = new Set(flavour.vdus.map((vdu) => vdu.id));
  const storageIds = new Set(flavour.storages.map((storage) => storage.id));
  const vlIds = new Set(flavour.virtualLinks.map((vl) => vl.id));
  const cps = new Map(flavour.cps.map((cp) => [cp.id, cp]));

  // Servers and their VDU.
  const servers: Array<{ resource: HeatResource & { physical_resource_id: string }; vduId: string; stack?: string }> = [];
  for (const resource of live.filter((candidate) => candidate.resource_type === SERVER)) {
    let vduId = vduIds.has(resource.resource_name) ? resource.resource_name : undefined;
    if (!vduId) {
      const group = parentOf(parentOf(resource) ?? resource);
      if (group && SCALING_GROUPS.has(group.resource_type) && vduIds.has(group.resource_name)) vduId = group.resource_name;
    }
    if (vduId) servers.push({ resource, vduId, stack: resourceStackId(resource) });
  }

  const volumes = live.filter((resource) => resource.resource_type === VOLUME && storageIds.has(resource.resource_name));
  const virtualStorageResourceInfo: Info[] = volumes.map((volume) => ({
    id: volume.physical_resource_id,
    virtualStorageDescId: volume.resource_name,
    storageResource: handle(volume),
    metadata: { stack_id: resourceStackId(volume) },
  }));

  const networks = live.filter((resource) => resource.resource_type === NETWORK && vlIds.has(resource.resource_name));
  const vnfVirtualLinkResourceInfo: Array<Info & { vnfLinkPorts: Info[] }> = networks.map((network) => ({
    id: network.physical_resource_id,
    vnfVirtualLinkDescId: network.resource_name,
    networkResource: handle(network),
    vnfLinkPorts: [],
  }));

  const vnfcResourceInfo = servers.map(({ resource, vduId, stack }) => {
    const vdu = flavour.vdus.find((candidate) => candidate.id === vduId);
    const metadata: Info = { creation_time: resource.creation_time ?? null, stack_id: stack ?? null };
    const member = parentOf(resource);
    if (member) {
      const group = parentOf(member);
      if (group && SCALING_GROUPS.has(group.resource_type)) {
        metadata.parent_stack_id = resourceStackId(member) ?? null;
        metadata.parent_resource_name = member.resource_name;
      } else {
        const index = /-(\d+)$/.exec(member.resource_name);
        if (index) metadata.vdu_idx = Number(index[1]);
      }
    }
    const storageResourceIds = volumes
      .filter((volume) => vdu?.storages.includes(volume.resource_name) && resourceStackId(volume) === stack)
      .map((volume) => volume.physical_resource_id);
    return {
      info: {
        id: resource.physical_resource_id,
        vduId,
        computeResource: handle(resource),
        ...(storageResourceIds.length ? { storageResourceIds } : {}),
        vnfcCpInfo: [] as Info[],
        metadata,
      },
      resource,
      stack,
    };
  });

  // Ports: each belongs to the server of its CP's VDU in the same stack (the one that requires it,
  // if the stack somehow has several).
  const extCpInfo: Info[] = [];
  const extLinkPorts = new Map<string, Info[]>();
  const ports = live.filter((resource) => resource.resource_type === PORT && cps.has(resource.resource_name));
  for (const port of ports) {
    const cp = cps.get(port.resource_name)!;
    const portStack = resourceStackId(port);
    const candidates = vnfcResourceInfo.filter((vnfc) => vnfc.info.vduId === cp.vdu && vnfc.stack === portStack);
    const owner = candidates.find((vnfc) => port.required_by?.includes(vnfc.resource.resource_name)) ?? candidates[0];
    const vnfcCp: Info | undefined = owner ? { id: `${cp.id}-${owner.info.id}`, cpdId: cp.id } : undefined;
    if (vnfcCp && owner) owner.info.vnfcCpInfo.push(vnfcCp);

    if (cp.virtualLink) {
      const network = vnfVirtualLinkResourceInfo.find((vl) => vl.vnfVirtualLinkDescId === cp.virtualLink);
      if (!network) continue; // a VL this stack does not own (e.g. externally managed)
      network.vnfLinkPorts.push({
        id: port.physical_resource_id,
        resourceHandle: handle(port),
        ...(vnfcCp ? { cpInstanceId: vnfcCp.id, cpInstanceType: 'VNFC_CP' } : {}),
      });
      if (vnfcCp) vnfcCp.vnfLinkPortId = port.physical_resource_id;
      continue;
    }

    // No internal VL: the CP connects to the external VL of the request that names it, if any.
    const link = inputs.extVirtualLinks.find((candidate) => candidate.extCps.some((ext) => ext.cpdId === cp.id));
    if (!link) continue;
    const extCpId = `${EXT_CP_PREFIX}${port.physical_resource_id}`;
    const data = link.extCps.find((ext) => ext.cpdId === cp.id);
    const config = Object.entries(data?.cpConfig ?? {}).find(([, value]) => value.cpProtocolData?.length) ?? Object.entries(data?.cpConfig ?? {})[0];
    extCpInfo.push({
      id: extCpId,
      cpdId: cp.id,
      // Required by SOL003 (VnfExtCpInfo); the request's cpConfig key, else the CP's own id.
      cpConfigId: config?.[0] ?? extCpId,
      ...(config?.[1].cpProtocolData?.length ? { cpProtocolInfo: config[1].cpProtocolData.map(protocolInfo) } : {}),
      extLinkPortId: port.physical_resource_id,
      ...(vnfcCp ? { associatedVnfcCpId: vnfcCp.id } : {}),
    });
    if (vnfcCp) vnfcCp.vnfExtCpId = extCpId;
    const list = extLinkPorts.get(link.id) ?? [];
    list.push({ id: port.physical_resource_id, resourceHandle: handle(port), cpInstanceId: extCpId });
    extLinkPorts.set(link.id, list);
  }

  const extVirtualLinkInfo = inputs.extVirtualLinks.map((link) => ({
    id: link.id,
    resourceHandle: {
      ...(link.vimConnectionId !== undefined
        ? { vimConnectionId: link.vimConnectionId }
        : inputs.vimConnectionId !== undefined
          ? { vimConnectionId: inputs.vimConnectionId }
          : {}),
      ...(link.resourceProviderId !== undefined ? { resourceProviderId: link.resourceProviderId } : {}),
      resourceId: link.resourceId,
    },
    extLinkPorts: extLinkPorts.get(link.id) ?? [],
    currentVnfExtCpData: link.extCps,
  }));

  // Newest first, as Tacker orders them: scale-in takes VNFCs from the head.
  const ordered = vnfcResourceInfo
    .map((vnfc) => vnfc.info)
    .sort((a, b) => {
      const at = (info: Info): string => String((info.metadata as Info).creation_time ?? '');
      return at(b).localeCompare(at(a)) || String(a.id).localeCompare(String(b.id));
    });
  return {
    vnfcResourceInfo: ordered,
    vnfVirtualLinkResourceInfo: vnfVirtualLinkResourceInfo.map(({ vnfLinkPorts, ...vl }) => (vnfLinkPorts.length ? { ...vl, vnfLinkPorts } : vl)),
    virtualStorageResourceInfo,
    extCpInfo,
    extVirtualLinkInfo,
    vnfcInfo: ordered.map((info) => ({ id: `${String(info.vduId)}-${String(info.id)}`, vduId: info.vduId, vnfcResourceInfoId: info.id, vnfcState: 'STARTED' })),
  };
}

/** Where a server is in the stack tree ("<stack name>/<stack id>" and resource name), and, for a scaling group member, the member resource. */
export interface ServerPlacement {
  stack: string;
  resourceName: string;
  member?: { stack: string; resourceName: string };
}

/** The placement of the server with this Nova id among the listed resources (nested stacks included), if it is one. */
export function serverPlacement(resources: HeatResource[], serverId: string): ServerPlacement | undefined {
  const server = resources.find((resource) => resource.resource_type === SERVER && resource.physical_resource_id === serverId);
  const stack = server ? resourceStackId(server) : undefined;
  if (!server || !stack) return undefined;
  const nesting = (resource: HeatResource): HeatResource | undefined => {
    const uuid = stackUuid(resource);
    return uuid ? resources.find((candidate) => candidate.physical_resource_id === uuid) : undefined;
  };
  const member = nesting(server);
  const memberStack = member ? resourceStackId(member) : undefined;
  const group = member ? nesting(member) : undefined;
  return {
    stack,
    resourceName: server.resource_name,
    ...(member && memberStack && group && SCALING_GROUPS.has(group.resource_type)
      ? { member: { stack: memberStack, resourceName: member.resource_name } }
      : {}),
  };
}

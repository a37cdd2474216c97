// What performance management asks a VIM driver to read, taken from a SOL003 VnfInstance: its
// VNFCs (vnfcResourceInfo) with their VIM resources and connection points, and, for each CP, the
// VIM's port when the instance records one (the link ports of its internal, externally managed and
// external VLs), so a driver can tell which of a server's NICs is which CP.
import type { DriverState, MeasureTarget } from './driver.ts';

type Info = Record<string, unknown>;

const records = (value: unknown): Info[] => (Array.isArray(value) ? value.filter((item): item is Info => !!item && typeof item === 'object') : []);
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** Link port id -> the VIM resource behind it, from every list of link ports instantiatedVnfInfo keeps. */
function portResources(info: Info): Map<string, string> {
  const ports = [
    ...records(info.vnfVirtualLinkResourceInfo).flatMap((vl) => records(vl.vnfLinkPorts)),
    ...records(info.extManagedVirtualLinkInfo).flatMap((vl) => records(vl.vnfLinkPorts)),
    ...records(info.extVirtualLinkInfo).flatMap((vl) => records(vl.extLinkPorts)),
  ];
  const resources = new Map<string, string>();
  for (const port of ports) {
    const id = text(port.id);
    const resourceId = text((port.resourceHandle as Info | undefined)?.resourceId);
    if (id && resourceId) resources.set(id, resourceId);
  }
  return resources;
}

/**
 * The MeasureTarget of one instance from its instantiatedVnfInfo (SOL003 5.5.2.3) and the driver
 * state its last operation left. A VNFC's resourceId is its computeResource's (else its own id, as
 * the health sweep takes it); an external CP's port is found through its VnfExtCpInfo.extLinkPortId.
 */
export function measureTargetsOf(vnfInstanceId: string, state: DriverState, instantiatedVnfInfo: unknown): MeasureTarget {
  const info = (instantiatedVnfInfo && typeof instantiatedVnfInfo === 'object' ? instantiatedVnfInfo : {}) as Info;
  const ports = portResources(info);
  const extLinkPorts = new Map(records(info.extCpInfo).map((cp) => [text(cp.id), text(cp.extLinkPortId)]));
  const vnfcs = records(info.vnfcResourceInfo).map((vnfc) => {
    const id = String(vnfc.id);
    return {
      vnfcResourceInfoId: id,
      vduId: String(vnfc.vduId),
      resourceId: text((vnfc.computeResource as Info | undefined)?.resourceId) ?? id,
      cps: records(vnfc.vnfcCpInfo).map((cp) => {
        const vnfExtCpId = text(cp.vnfExtCpId);
        const vnfLinkPortId = text(cp.vnfLinkPortId);
        const linkPort = vnfLinkPortId ?? (vnfExtCpId ? extLinkPorts.get(vnfExtCpId) : undefined);
        const portResourceId = linkPort ? ports.get(linkPort) : undefined;
        return {
          cpInstanceId: String(cp.id),
          cpdId: String(cp.cpdId),
          external: vnfExtCpId !== undefined,
          ...(vnfExtCpId ? { vnfExtCpId } : {}),
          ...(vnfLinkPortId ? { vnfLinkPortId } : {}),
          ...(portResourceId ? { portResourceId } : {}),
        };
      }),
    };
  });
  return { vnfInstanceId, state, vnfcs };
}

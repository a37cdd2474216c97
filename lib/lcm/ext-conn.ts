// CHANGE_EXT_CONN (SOL003 5.4.11) worked out from the VNFD, the instance and the request, without
// touching anything: which CPDs may be named (the flavour's external CPs), the external VLs the VNF
// has afterwards (the request's merged into the instance's), which CPDs and links that changes, and
// what the op occ reports of it (the grant's updateResources, resourceChanges, changedExtConnectivity).
import { BadRequestError, UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { FlavourInfo } from '#lib/packages/vnfd/model.ts';
import type { CollectedResources } from '#lib/vim/driver.ts';
import { resourceDiff } from './scale-heal.ts';

type Info = Record<string, unknown>;

/** An external VL as InstantiateVnfRequest and ChangeExtVnfConnectivityRequest give it (SOL003 ExtVirtualLinkData). */
export interface ExtVirtualLink {
  id: string;
  resourceId: string;
  extCps: Array<{ cpdId: string } & Info>;
  [attribute: string]: unknown;
}

/** What the op occ records at the request, for its steps: the external VLs afterwards and before, and what changes. */
export interface ExtConnPlan {
  kind: 'CHANGE_EXT_CONN';
  /** Every external VL the VNF has once the change is done. */
  extVirtualLinks: ExtVirtualLink[];
  /** The external VLs it had (what a rollback goes back to). */
  previous: ExtVirtualLink[];
  /** CPDs whose connectivity changes. */
  cpdIds: string[];
  /** External VLs that are new or changed. */
  linkIds: string[];
}

/**
 * The CPDs of a flavour an external VL may connect: those its substitution_mappings expose, its
 * VnfExtCps, and VduCps bound to no internal virtual link.
 */
export function externalCpdIds(flavour: FlavourInfo): string[] {
  const ids = new Set([...flavour.externalCps, ...flavour.extCps.map((cp) => cp.id), ...flavour.cps.filter((cp) => !cp.virtualLink).map((cp) => cp.id)]);
  return [...ids];
}

/** The request's external VLs checked against each other (400) and against the instance's flavour (422). */
export function checkExtVirtualLinks(flavour: FlavourInfo, links: readonly ExtVirtualLink[]): void {
  const linkIds = new Set<string>();
  const named = new Map<string, string>();
  for (const link of links) {
    if (linkIds.has(link.id)) throw new BadRequestError(`extVirtualLinks names the external virtual link "${link.id}" twice`);
    linkIds.add(link.id);
    if (link.extCps.length === 0) throw new BadRequestError(`extVirtualLinks.${link.id}: extCps names no external CP to connect to it`);
    // The VNFM creates the ports of external CPs; a port made by the NFVO would be left unused.
    const given = Array.isArray(link.extLinkPorts) && link.extLinkPorts.length > 0;
    const linked = link.extCps.some((cp) => Object.values((cp.cpConfig ?? {}) as Record<string, Info>).some((config) => config?.linkPortId !== undefined));
    if (given || linked)
      throw new UnprocessableEntityError(
        `extVirtualLinks.${link.id}: externally created link ports (extLinkPorts, cpConfig linkPortId) are not supported; give cpProtocolData and the VNFM creates the port`,
      );
    for (const cp of link.extCps) {
      const other = named.get(cp.cpdId);
      if (other !== undefined)
        throw new BadRequestError(
          `external CP ${cp.cpdId} is named twice (in ${other === link.id ? `external virtual link "${link.id}"` : `"${other}" and "${link.id}"`}); a CP connects to one external virtual link`,
        );
      named.set(cp.cpdId, link.id);
    }
  }
  const external = externalCpdIds(flavour);
  const unknown = [...named.keys()].filter((cpdId) => !external.includes(cpdId));
  if (unknown.length) {
    throw new UnprocessableEntityError(
      `extVirtualLinks names ${unknown.map((cpdId) => `"${cpdId}"`).join(', ')}, which ${unknown.length === 1 ? 'is not an external CP' : 'are not external CPs'} of deployment flavour ${flavour.flavourId}; its external CPs are ${external.length ? external.join(', ') : '(none)'}`,
    );
  }
}

/**
 * The VIM connection an external VL names (vimConnectionId) must be one the instance or the request
 * has (422), and on the VIM the VNF is on: its ports are made there (an external VL on another VIM is
 * refused with 422).
 */
export function checkLinkConnections(
  links: readonly ExtVirtualLink[],
  connections: Readonly<Record<string, { vimId?: string } | undefined>>,
  vnfVim: { connectionId: string; vimId: string },
): void {
  for (const link of links) {
    const connectionId = link.vimConnectionId;
    if (connectionId === undefined || connectionId === vnfVim.connectionId) continue;
    const connection = connections[String(connectionId)];
    if (!connection)
      throw new UnprocessableEntityError(
        `extVirtualLinks.${link.id}.vimConnectionId names VIM connection "${String(connectionId)}", which neither the VNF instance nor the request has`,
      );
    if (connection.vimId !== undefined && connection.vimId !== vnfVim.vimId)
      throw new UnprocessableEntityError(
        `extVirtualLinks.${link.id} is on VIM ${connection.vimId}, but the VNF's ports are on VIM ${vnfVim.vimId}: external virtual links on another VIM are not supported`,
      );
  }
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** What a CP is connected by: its link (less the other CPs) and its own data. */
function connectionsOf(links: readonly ExtVirtualLink[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const { extCps, ...link } of links) for (const cp of extCps) out.set(cp.cpdId, { link, cp });
  return out;
}

/**
 * The external VLs after the change. A VL the request names is replaced by the request's (its
 * position kept), with the CPs the instance had on it that the request names nowhere else, so they
 * stay on it; a CP the request moves to another VL leaves its old one, and a VL left with no CP goes.
 * VLs the request does not name stay as they are (SOL003: unchanged ones need not be supplied).
 */
export function mergeExtVirtualLinks(current: readonly ExtVirtualLink[], requested: readonly ExtVirtualLink[]): ExtVirtualLink[] {
  const named = new Set(requested.flatMap((link) => link.extCps.map((cp) => cp.cpdId)));
  const byId = new Map(requested.map((link) => [link.id, link]));
  const merged: ExtVirtualLink[] = [];
  for (const link of current) {
    const kept = link.extCps.filter((cp) => !named.has(cp.cpdId));
    const replacement = byId.get(link.id);
    if (replacement) {
      merged.push({ ...replacement, extCps: [...replacement.extCps, ...kept] });
      byId.delete(link.id);
    } else if (kept.length) {
      merged.push({ ...link, extCps: kept });
    }
  }
  merged.push(...byId.values());
  return merged;
}

/** The plan of a change from `current` external VLs by the `requested` ones. */
export function extConnPlan(current: readonly ExtVirtualLink[], requested: readonly ExtVirtualLink[]): ExtConnPlan {
  const extVirtualLinks = mergeExtVirtualLinks(current, requested);
  const before = connectionsOf(current);
  const after = connectionsOf(extVirtualLinks);
  const cpdIds = [...after.keys()].filter((cpdId) => !same(before.get(cpdId), after.get(cpdId)));
  const old = new Map(current.map((link) => [link.id, link]));
  const linkIds = extVirtualLinks.filter((link) => !same(old.get(link.id), link)).map((link) => link.id);
  return { kind: 'CHANGE_EXT_CONN', extVirtualLinks, previous: [...current], cpdIds, linkIds };
}

const list = (info: Info | undefined, key: string): Info[] => (Array.isArray(info?.[key]) ? (info[key] as Info[]) : []);
const cpsOf = (vnfc: Info): Info[] => (Array.isArray(vnfc.vnfcCpInfo) ? (vnfc.vnfcCpInfo as Info[]) : []);

/** SOL003 clause 9 GrantRequest.updateResources of the change: the VNFCs one of whose CPs it reconnects. */
export function grantUpdateResources(info: Info | undefined, cpdIds: readonly string[], vimConnectionId?: string): Info[] {
  return list(info, 'vnfcResourceInfo')
    .filter((vnfc) => cpsOf(vnfc).some((cp) => cpdIds.includes(String(cp.cpdId))))
    .map((vnfc) => ({
      id: `${String(vnfc.vduId)}-${String(vnfc.id)}`,
      type: 'COMPUTE',
      vduId: vnfc.vduId,
      resourceTemplateId: vnfc.vduId,
      resource: { ...(vimConnectionId ? { vimConnectionId } : {}), ...((vnfc.computeResource as Info | undefined) ?? {}) },
    }));
}

/**
 * SOL003 resourceChanges of the change: the VNFCs whose CPs it reconnected as MODIFIED (naming just
 * those CPs), anything the VIM added or removed besides, and the external link ports it added,
 * removed or reconfigured.
 */
export function extConnResourceChanges(before: Info | undefined, after: Info, collected: CollectedResources, plan: Pick<ExtConnPlan, 'cpdIds'>): Info {
  const vdus = new Set(
    list(after, 'vnfcResourceInfo')
      .filter((vnfc) => cpsOf(vnfc).some((cp) => plan.cpdIds.includes(String(cp.cpdId))))
      .map((vnfc) => String(vnfc.vduId)),
  );
  const oldCollected: CollectedResources = {
    vnfcResourceInfo: list(before, 'vnfcResourceInfo'),
    vnfVirtualLinkResourceInfo: list(before, 'vnfVirtualLinkResourceInfo'),
    virtualStorageResourceInfo: list(before, 'virtualStorageResourceInfo'),
    extCpInfo: list(before, 'extCpInfo'),
  };
  const diff = resourceDiff(oldCollected, collected, vdus);
  const vnfcs = new Map(collected.vnfcResourceInfo.map((vnfc) => [String(vnfc.id), vnfc]));
  const affectedVnfcs = (diff.affectedVnfcs as Info[]).map((change) => {
    if (change.changeType !== 'MODIFIED') return change;
    const { affectedVnfcCpIds: _all, ...rest } = change;
    const ids = cpsOf(vnfcs.get(String(change.id)) ?? {})
      .filter((cp) => plan.cpdIds.includes(String(cp.cpdId)))
      .map((cp) => cp.id);
    return ids.length ? { ...rest, affectedVnfcCpIds: ids } : rest;
  });
  const ports = (info: Info | undefined) =>
    new Map(list(info, 'extVirtualLinkInfo').flatMap((link) => list(link, 'extLinkPorts').map((port) => [String(port.id), port] as const)));
  const oldPorts = ports(before);
  const newPorts = ports(after);
  const cpdOf = new Map(list(after, 'extCpInfo').map((cp) => [String(cp.id), String(cp.cpdId)]));
  const render = (port: Info, changeType: string): Info => ({
    id: port.id,
    changeType,
    extCpInstanceId: port.cpInstanceId,
    resourceHandle: port.resourceHandle,
  });
  const affectedExtLinkPorts: Info[] = [];
  for (const [id, port] of newPorts) {
    // A port kept (its addresses changed in place) is MODIFIED when its CP was reconnected.
    if (!oldPorts.has(id)) affectedExtLinkPorts.push(render(port, 'ADDED'));
    else if (plan.cpdIds.includes(cpdOf.get(String(port.cpInstanceId)) ?? '')) affectedExtLinkPorts.push(render(port, 'MODIFIED'));
  }
  for (const [id, port] of oldPorts) if (!newPorts.has(id)) affectedExtLinkPorts.push(render(port, 'REMOVED'));
  // Every AffectedExtLinkPort needs its external CP instance.
  return { ...diff, affectedVnfcs, affectedExtLinkPorts: affectedExtLinkPorts.filter((port) => port.extCpInstanceId !== undefined) };
}

/** SOL003 VnfLcmOpOcc.changedExtConnectivity: the ExtVirtualLinkInfo, as the VIM now reports it, of the external VLs the change made or changed. */
export function changedExtConnectivity(after: Info, plan: Pick<ExtConnPlan, 'linkIds'>): Info[] {
  return list(after, 'extVirtualLinkInfo').filter((link) => plan.linkIds.includes(String(link.id)));
}

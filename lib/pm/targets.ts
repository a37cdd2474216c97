// What of a VNF instance performance management measures, read from its record: the VIM it is on,
// the VNFCs with their VIM resources and connection points as a driver's MeasureTarget, the names the
// API gives them (a VNFC: its vnfcInfo id; an internal CP: its vnfcCpInfo id; an external CP: the
// external CP it exposes), and which sub-objects of each kind an instance has.
import type { VimReference, VnfInstanceRecord } from '#lib/sol/model.ts';
import type { MeasureTarget } from '#lib/vim/driver.ts';
import { measureTargetsOf } from '#lib/vim/measure.ts';

type Info = Record<string, unknown>;
const list = (value: unknown): Info[] => (Array.isArray(value) ? (value as Info[]) : []);

/**
 * The VIM the instance is measured on, with the credentials and endpoint its own connection has
 * now: a MODIFY_INFO may have replaced them (and removed the old secret) since its last operation
 * recorded vimResources. A registered VIM's connection has no secret of the instance's.
 */
export function currentVim(instance: VnfInstanceRecord): VimReference | undefined {
  const vim = instance.vimResources?.vim;
  const secret = vim ? instance.vimAccessSecrets?.[vim.connectionId] : undefined;
  if (!vim || !secret) return vim;
  const interfaceInfo = instance.vimConnectionInfo?.[vim.connectionId]?.interfaceInfo;
  return { ...vim, accessSecret: secret, interfaceInfo: interfaceInfo ?? vim.interfaceInfo };
}

/** The instance's VNFCs and their CPs, as a driver measures them. */
export function measureTargetOf(instance: VnfInstanceRecord): MeasureTarget {
  return measureTargetsOf(instance.id, instance.vimResources?.driverState ?? {}, instance.instantiatedVnfInfo);
}

/** A VNFC's name in reports and sub-object lists: its vnfcInfo id (SOL003's VNFC instance id), else its vnfcResourceInfo id. */
export function vnfcNameOf(instance: VnfInstanceRecord, vnfcResourceInfoId: string): string {
  const info = list((instance.instantiatedVnfInfo as Info | undefined)?.vnfcInfo).find((entry) => entry.vnfcResourceInfoId === vnfcResourceInfoId);
  return typeof info?.id === 'string' ? info.id : vnfcResourceInfoId;
}

/** The sub-objects of one kind the instance has, by the names reports give them. */
export function subObjectsOf(instance: VnfInstanceRecord, kind: 'vnfc' | 'intCp' | 'extCp'): Set<string> {
  const target = measureTargetOf(instance);
  if (kind === 'vnfc') return new Set(target.vnfcs.map((vnfc) => vnfcNameOf(instance, vnfc.vnfcResourceInfoId)));
  const cps = target.vnfcs.flatMap((vnfc) => vnfc.cps).filter((cp) => cp.external === (kind === 'extCp'));
  return new Set(cps.map((cp) => (kind === 'extCp' ? (cp.vnfExtCpId ?? cp.cpInstanceId) : cp.cpInstanceId)));
}

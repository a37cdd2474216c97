// The Heat stack a VNF becomes, made the way Tacker's v2 default user data makes it: the flavour's
// BaseHOT (top template plus nested templates by base name) and one json parameter, `nfv`, holding
// per-VDU flavours, images and capacities and per-CP networks. Every `get_param [nfv, ...]` path the
// top template uses exists in `nfv` (null when nothing decides it), so a template never trips over a
// missing key, and the request's additionalParams.nfv is merged last, as in Tacker.
import { posix } from 'node:path';
import * as z from 'zod';
import { mergePatch } from '#lib/sol/merge-patch.ts';
import type { FlavourInfo } from '#lib/packages/vnfd/model.ts';
import { parseSafeYaml } from '#lib/yaml.ts';
import { UnprocessableEntityError } from '#lib/sol/errors.ts';
import type { GrantDecision, PackageFiles } from '#lib/vim/driver.ts';
import { desiredCapacity, flavourOf } from '#lib/vim/flavour.ts';

// The flavour helpers live with the other drivers' and the engine's; the OpenStack modules import them from here.
export { desiredCapacity, flavourOf };

export interface BaseHot {
  /** Package path of the top template. */
  templatePath: string;
  template: string;
  /** Heat `files`: nested templates and other files, keyed by base name. */
  files: Record<string, string>;
}

const HOT_EXTENSIONS = /\.ya?ml$/i;

/** Reads BaseHOT/<flavourId>/: exactly one top template there, and everything under nested/. */
export async function loadBaseHot(files: PackageFiles, flavourId: string): Promise<BaseHot> {
  const dir = `BaseHOT/${flavourId}/`;
  const all = (await files.list()).filter((path) => path.startsWith(dir) && !path.endsWith('/'));
  const tops = all.filter((path) => !path.slice(dir.length).includes('/') && HOT_EXTENSIONS.test(path));
  if (tops.length !== 1) {
    throw new UnprocessableEntityError(
      tops.length
        ? `the VNF package has ${tops.length} top-level templates in ${dir} (${tops.join(', ')}); the BaseHOT of a flavour has exactly one`
        : `the VNF package has no BaseHOT for flavour ${flavourId}: no ${dir}*.yaml`,
    );
  }
  const templatePath = tops[0] as string;
  const nested: Record<string, string> = {};
  const from = new Map<string, string>();
  for (const path of all.filter((candidate) => candidate.startsWith(`${dir}nested/`))) {
    const name = posix.basename(path);
    const other = from.get(name);
    if (other)
      throw new UnprocessableEntityError(`the VNF package has two files named ${name} under ${dir}nested/ (${other}, ${path}); Heat knows them by base name`);
    from.set(name, path);
    nested[name] = (await files.read(path)).toString('utf8');
  }
  return { templatePath, template: (await files.read(templatePath)).toString('utf8'), files: nested };
}

type PathItem = string | number;

/** Every `get_param: [nfv, a, b, ...]` (at least three items below nfv) in the template's resources. */
export function nfvParamPaths(template: unknown): PathItem[][] {
  const paths: PathItem[][] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
    } else if (value && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        if (key === 'get_param' && Array.isArray(item)) {
          if (item.length >= 4 && item[0] === 'nfv' && item.every((part) => typeof part === 'string' || typeof part === 'number'))
            paths.push(item.slice(1) as PathItem[]);
        } else {
          visit(item);
        }
      }
    }
  };
  const resources = template && typeof template === 'object' ? (template as Record<string, unknown>).resources : undefined;
  if (resources && typeof resources === 'object') {
    for (const resource of Object.values(resources))
      visit(resource && typeof resource === 'object' ? (resource as Record<string, unknown>).properties : undefined);
  }
  return paths;
}

// ---------------------------------------------------------------------------------------------
// The parts of an InstantiateVnfRequest the stack depends on

const ipAddress = z
  .object({
    type: z.string().optional(),
    fixedAddresses: z.array(z.string()).optional(),
    numDynamicAddresses: z.number().optional(),
    addressRange: z.object({ minAddress: z.string(), maxAddress: z.string() }).passthrough().optional(),
    subnetId: z.string().optional(),
  })
  .passthrough();
const cpProtocolData = z
  .object({
    layerProtocol: z.string(),
    ipOverEthernet: z
      .object({
        macAddress: z.string().optional(),
        segmentationId: z.string().optional(),
        ipAddresses: z.array(ipAddress).optional(),
      })
      .passthrough()
      .optional(),
  })
  .passthrough();
const extCp = z
  .object({
    cpdId: z.string(),
    cpConfig: z
      .record(
        z.string(),
        z
          .object({
            parentCpConfigId: z.string().optional(),
            linkPortId: z.string().optional(),
            cpProtocolData: z.array(cpProtocolData).optional(),
          })
          .passthrough(),
      )
      .optional(),
  })
  .passthrough();
const extVirtualLink = z
  .object({
    id: z.string(),
    vimConnectionId: z.string().optional(),
    resourceProviderId: z.string().optional(),
    resourceId: z.string(),
    extCps: z.array(extCp).default([]),
  })
  .passthrough();
const stackRequest = z
  .object({
    extVirtualLinks: z.array(extVirtualLink).optional(),
    additionalParams: z.record(z.string(), z.unknown()).optional(),
  })
  .passthrough();

export type ExtVirtualLinkData = z.infer<typeof extVirtualLink>;
export type ExtCpData = z.infer<typeof extCp>;
export type CpProtocolData = z.infer<typeof cpProtocolData>;

export function requestOf(request: Record<string, unknown>): z.infer<typeof stackRequest> {
  const parsed = stackRequest.safeParse(request ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UnprocessableEntityError(
      `the instantiate request cannot be turned into a Heat stack: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

/** `fixed_ips` of a Heat port from an ext CP's cpConfig, as Tacker derives them (one address per entry). */
export function fixedIpsOf(cp: ExtCpData): Array<{ ip_address?: string; subnet?: string }> {
  const ips: Array<{ ip_address?: string; subnet?: string }> = [];
  for (const config of Object.values(cp.cpConfig ?? {})) {
    for (const protocol of config.cpProtocolData ?? []) {
      for (const address of protocol.ipOverEthernet?.ipAddresses ?? []) {
        const entry: { ip_address?: string; subnet?: string } = {};
        if (address.fixedAddresses?.[0] !== undefined) entry.ip_address = address.fixedAddresses[0];
        if (address.subnetId !== undefined) entry.subnet = address.subnetId;
        if (Object.keys(entry).length) ips.push(entry);
      }
    }
  }
  return ips;
}

// ---------------------------------------------------------------------------------------------
// nfv

export interface NfvInputs {
  flavour: FlavourInfo;
  instantiationLevelId?: string;
  request: Record<string, unknown>;
  grant: GrantDecision;
  /** VNFD image owner (VDU or storage id) -> Glance image id. */
  images: Record<string, string>;
  /** The parsed top template, for the paths it reads. */
  template: unknown;
  /** Availability zone when the grant names none (Nova's own default zone is "nova"). */
  defaultZone?: string;
  /** desired_capacity per VDU once the VNF has been scaled; wins over the level and over additionalParams.nfv. */
  capacities?: Record<string, number>;
}

/** Nova's default_availability_zone, and the zone Tacker's local NFVO grants by default. */
export const DEFAULT_ZONE = 'nova';

type Json = Record<string, unknown>;

function child(parent: Json, key: string): Json {
  const existing = Object.hasOwn(parent, key) ? parent[key] : undefined;
  if (existing && typeof existing === 'object' && !Array.isArray(existing)) return existing as Json;
  const made: Json = {};
  Object.defineProperty(parent, key, { value: made, enumerable: true, writable: true, configurable: true });
  return made;
}

function set(parent: Json, key: string, value: unknown): void {
  Object.defineProperty(parent, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * The availability zone of a VDU's servers (Tacker's per-VDU `locationConstraints`): the zone the
 * grant's addResources name for it, else the grant's first zone, else the VIM's default. A zone must
 * always be given: a nested template's zone parameter rarely has a default, and Heat refuses a null
 * for it ("Property zone not assigned").
 */
export function vduZone(grant: Pick<GrantDecision, 'zones' | 'vduZones'>, vduId: string, defaultZone?: string): string {
  return (
    (grant.vduZones && Object.hasOwn(grant.vduZones, vduId) ? grant.vduZones[vduId] : undefined) ?? grant.zones?.[0]?.zoneId ?? defaultZone ?? DEFAULT_ZONE
  );
}

export function buildNfv(inputs: NfvInputs): Json {
  const { flavour } = inputs;
  if (inputs.instantiationLevelId !== undefined && !Object.hasOwn(flavour.instantiationLevels.levels, inputs.instantiationLevelId)) {
    throw new UnprocessableEntityError(`instantiation level ${inputs.instantiationLevelId} is not defined by flavour ${flavour.flavourId}`);
  }
  const nfv: Json = {};
  const referenced = nfvParamPaths(inputs.template);
  for (const path of referenced) {
    let parent = nfv;
    for (const item of path.slice(0, -1)) parent = child(parent, String(item));
    const last = String(path[path.length - 1]);
    if (!Object.hasOwn(parent, last)) set(parent, last, null);
  }
  const vdus = child(nfv, 'VDU');
  for (const vdu of flavour.vdus) {
    const entry = child(vdus, vdu.id);
    const compute = inputs.grant.flavours?.[vdu.id] ?? vdu.virtualCompute?.requestedAdditionalCapabilityName;
    set(entry, 'computeFlavourId', compute ?? null);
    if (Object.hasOwn(inputs.images, vdu.id)) set(entry, 'vcImageId', inputs.images[vdu.id]);
    set(entry, 'desired_capacity', desiredCapacity(flavour, vdu.id, inputs.instantiationLevelId));
    set(entry, 'locationConstraints', vduZone(inputs.grant, vdu.id, inputs.defaultZone));
  }
  for (const storage of flavour.storages) {
    if (Object.hasOwn(inputs.images, storage.id)) set(child(vdus, storage.id), 'vcImageId', inputs.images[storage.id]);
  }

  const request = requestOf(inputs.request);
  const cps = child(nfv, 'CP');
  const fixedIpsReferenced = new Set(referenced.filter((path) => path[0] === 'CP' && path[2] === 'fixed_ips').map((path) => String(path[1])));
  for (const link of request.extVirtualLinks ?? []) {
    for (const cp of link.extCps) {
      const entry = child(cps, cp.cpdId);
      set(entry, 'network', link.resourceId);
      const ips = fixedIpsOf(cp);
      if (ips.length || fixedIpsReferenced.has(cp.cpdId)) set(entry, 'fixed_ips', ips);
    }
  }
  // A template that reads fixed_ips of a CP no ext VL names gets an empty list, as in Tacker.
  for (const cpId of fixedIpsReferenced) {
    const entry = child(cps, cpId);
    if (!Array.isArray(entry.fixed_ips)) set(entry, 'fixed_ips', []);
  }
  if (!Object.keys(cps).length) delete nfv.CP;

  const extra = request.additionalParams?.nfv;
  const merged = extra && typeof extra === 'object' && !Array.isArray(extra) ? (mergePatch(nfv, extra) as Json) : nfv;
  // After the merge: a scaled VNF keeps the size it was scaled to, whatever the request said at first.
  for (const vdu of flavour.vdus) {
    if (inputs.capacities && Object.hasOwn(inputs.capacities, vdu.id)) set(child(child(merged, 'VDU'), vdu.id), 'desired_capacity', inputs.capacities[vdu.id]);
  }
  return merged;
}

/** desired_capacity per VDU in an nfv parameter (an object, or the JSON text Heat shows parameters as). */
export function capacitiesOf(nfv: unknown): Record<string, number> {
  let value = nfv;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return {};
    }
  }
  const vdus = value && typeof value === 'object' ? (value as Json).VDU : undefined;
  const capacities: Record<string, number> = {};
  if (!vdus || typeof vdus !== 'object') return capacities;
  for (const [vduId, entry] of Object.entries(vdus)) {
    const capacity = entry && typeof entry === 'object' ? (entry as Json).desired_capacity : undefined;
    if (typeof capacity === 'number' && Number.isInteger(capacity)) set(capacities, vduId, capacity);
  }
  return capacities;
}

/** The parsed top template (safely: it is package content). */
export function parseTemplate(hot: BaseHot): unknown {
  try {
    return parseSafeYaml(hot.template, hot.templatePath);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const where =
      error && typeof error === 'object' && typeof (error as { where?: unknown }).where === 'string' ? (error as { where: string }).where : hot.templatePath;
    throw new UnprocessableEntityError(`${where}: ${message}`);
  }
}

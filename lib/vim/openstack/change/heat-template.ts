// Editing a BaseHOT's values for a package change without asking Heat: the member definition a
// scaling group gets from an nfv parameter, and one VDU's entries of nfv taken from another
// package's. Pure functions, so a rolling update and its rollback compute the same edits.
import { isRecord } from '#lib/json.ts';
import type { FlavourInfo } from '#lib/packages/vnfd/model.ts';
import { UnprocessableEntityError } from '#lib/sol/errors.ts';
import { parseTemplate, type BaseHot } from '../hot.ts';
import type { Json } from './common.ts';

const clone = <T>(value: T): T => structuredClone(value);

type PathItem = string | number;

export function dig(value: unknown, path: PathItem[]): unknown {
  let current = value;
  for (const key of path) {
    if (Array.isArray(current)) current = current[Number(key)];
    else if (isRecord(current)) current = current[String(key)];
    else return null;
    if (current === undefined) return null;
  }
  return current;
}

const INTRINSIC = /^(get_|str_|list_|map_|repeat$|digest$|if$|equals$|not$|and$|or$|contains$|yaql$|filter$|make_url$|resource_facade$|Fn::|Ref$)/;

/** A member property's value when the top template makes it from nfv (or a literal); undefined when it needs Heat (get_resource...). */
function nfvValueOf(value: unknown, nfv: Json): { value: unknown } | undefined {
  if (value === null || typeof value !== 'object') return { value };
  if (Array.isArray(value)) {
    const items = value.map((item) => nfvValueOf(item, nfv));
    return items.every((item) => item !== undefined) ? { value: items.map((item) => item?.value) } : undefined;
  }
  const keys = Object.keys(value);
  if (keys.length === 1 && INTRINSIC.test(keys[0] as string)) {
    const path = (value as Json).get_param;
    if (path === 'nfv') return { value: nfv };
    if (Array.isArray(path) && path[0] === 'nfv' && path.every((item) => typeof item === 'string' || typeof item === 'number'))
      return { value: dig(nfv, path.slice(1) as PathItem[]) };
    return undefined;
  }
  const out: Json = {};
  for (const [key, item] of Object.entries(value)) {
    const resolved = nfvValueOf(item, nfv);
    if (!resolved) return undefined;
    out[key] = resolved.value;
  }
  return { value: out };
}

/** The member definition a BaseHOT gives a scaling group with this nfv: its type and the properties nfv decides. */
export function memberDefinitionOf(hot: BaseHot, group: string, nfv: Json): { type?: string; properties: Json } {
  const template = parseTemplate(hot);
  const resources = isRecord(template) && isRecord(template.resources) ? template.resources : {};
  const definition = resources[group];
  const member =
    isRecord(definition) && definition.type === 'OS::Heat::AutoScalingGroup' && isRecord(definition.properties) ? definition.properties.resource : undefined;
  if (!isRecord(member))
    throw new UnprocessableEntityError(
      `the BaseHOT ${hot.templatePath} has no OS::Heat::AutoScalingGroup ${group} with a member resource, which the VNF's stack has`,
    );
  const properties: Json = {};
  for (const [key, value] of Object.entries(isRecord(member.properties) ? member.properties : {})) {
    const resolved = nfvValueOf(value, nfv);
    if (resolved && resolved.value !== null && resolved.value !== undefined) properties[key] = resolved.value;
  }
  return { ...(typeof member.type === 'string' ? { type: member.type } : {}), properties };
}

/** The nfv keys of a VDU: its own entry and its storages' under VDU, its CPs under CP (in either package). */
export function vduKeys(flavours: FlavourInfo[], vduId: string): { vdus: string[]; cps: string[] } {
  const vdus = new Set([vduId]);
  const cps = new Set<string>();
  for (const flavour of flavours) {
    for (const storage of flavour.vdus.find((vdu) => vdu.id === vduId)?.storages ?? []) vdus.add(storage);
    for (const cp of flavour.cps.filter((candidate) => candidate.vdu === vduId)) cps.add(cp.id);
  }
  return { vdus: [...vdus], cps: [...cps] };
}

/** `current` with the entries of one VDU taken from `source`. */
export function withVduEntries(current: Json, source: Json, keys: { vdus: string[]; cps: string[] }): Json {
  const nfv = clone(current);
  for (const [section, names] of [
    ['VDU', keys.vdus],
    ['CP', keys.cps],
  ] as const) {
    const from = source[section];
    if (!isRecord(from)) continue;
    const to = isRecord(nfv[section]) ? (nfv[section] as Json) : {};
    for (const name of names) if (Object.hasOwn(from, name)) to[name] = clone(from[name]);
    nfv[section] = to;
  }
  return nfv;
}

// SOL013 clause 5.3 attribute selectors: validates all_fields / fields / exclude_fields /
// exclude_default and trims a resource representation accordingly. Pure; knows nothing about HTTP.
import { BadRequestError } from '#lib/sol/errors.ts';
import { isRecord as isObject } from '#lib/json.ts';

/** Attribute names from the top of the resource, e.g. ["instantiatedVnfInfo", "vnfcResourceInfo"]. */
export type AttributePath = readonly string[];

/**
 * What the client asked for. `fields` alone, `exclude_default` with or without `fields`, and no
 * selector at all share one meaning (Tacker's reading of SOL013 table 5.3.2-2): the default
 * exclusions apply except to what `fields` names.
 */
export type Selectors =
  | { readonly kind: 'all_fields' }
  | { readonly kind: 'exclude_default'; readonly fields: readonly AttributePath[] }
  | { readonly kind: 'exclude_fields'; readonly excludeFields: readonly AttributePath[] };

/** Decoded query parameters; a bare key such as `?all_fields` is present with the value "". */
export type QueryParameters = URLSearchParams | ReadonlyMap<string, string>;

export interface ParseSelectorsOptions {
  /** Top-level attributes that fields / exclude_fields may name; anything else is a 400. Unrestricted if absent. */
  readonly attributes?: readonly string[];
}

function fail(detail: string): never {
  throw new BadRequestError(detail);
}

/** Every value of the parameter, or undefined if it is absent. */
function valuesOf(params: QueryParameters, name: string): string[] | undefined {
  if (params instanceof URLSearchParams) return params.has(name) ? params.getAll(name) : undefined;
  const value = params.get(name);
  return value === undefined ? undefined : [value];
}

function parsePathList(parameter: string, values: readonly string[], attributes: readonly string[] | undefined): AttributePath[] {
  const paths: AttributePath[] = [];
  for (const value of values) {
    if (value.length === 0) fail(`Invalid ${parameter}: it must list at least one attribute`);
    for (const entry of value.split(',')) {
      if (entry.length === 0) fail(`Invalid ${parameter}: empty entry in "${value}"`);
      const path = entry.split('/');
      if (path.some((name) => name.length === 0)) fail(`Invalid ${parameter}: empty attribute name in "${entry}"`);
      const top = path[0] as string;
      if (attributes !== undefined && !attributes.includes(top)) {
        fail(`Invalid ${parameter}: unknown attribute "${top}"; supported: ${attributes.join(', ')}`);
      }
      paths.push(path);
    }
  }
  return paths;
}

/**
 * Reads the attribute selector parameters. `exclude-fields` (sent by the Tacker CLI) is an alias of
 * `exclude_fields`; `all_fields` and `exclude_default` are flags whose value is ignored; repeated
 * `fields` / `exclude_fields` parameters are merged.
 */
export function parseSelectors(params: QueryParameters, options: ParseSelectorsOptions = {}): Selectors {
  const allFields = valuesOf(params, 'all_fields') !== undefined;
  const excludeDefault = valuesOf(params, 'exclude_default') !== undefined;
  const fields = valuesOf(params, 'fields');
  const underscore = valuesOf(params, 'exclude_fields');
  const hyphen = valuesOf(params, 'exclude-fields');
  const excludeFields = underscore === undefined && hyphen === undefined ? undefined : [...(underscore ?? []), ...(hyphen ?? [])];
  const excludeName = underscore === undefined ? 'exclude-fields' : 'exclude_fields';

  if (allFields) {
    const others: string[] = [];
    if (fields !== undefined) others.push('fields');
    if (excludeFields !== undefined) others.push(excludeName);
    if (excludeDefault) others.push('exclude_default');
    if (others.length > 0) fail(`all_fields cannot be combined with ${others.join(', ')}`);
    return { kind: 'all_fields' };
  }
  if (excludeFields !== undefined) {
    if (fields !== undefined) fail(`fields cannot be combined with ${excludeName}`);
    if (excludeDefault) fail(`exclude_default cannot be combined with ${excludeName}`);
    return { kind: 'exclude_fields', excludeFields: parsePathList(excludeName, excludeFields, options.attributes) };
  }
  return { kind: 'exclude_default', fields: fields === undefined ? [] : parsePathList('fields', fields, options.attributes) };
}

// Returned by an update or projection to mean "drop this attribute".
const REMOVED: unique symbol = Symbol('removed');

function isPrefix(prefix: AttributePath, path: AttributePath): boolean {
  return prefix.length <= path.length && prefix.every((name, i) => name === path[i]);
}

/**
 * Copy-on-write update of whatever `path` reaches (through arrays, element by element); `update`
 * may return REMOVED to delete the attribute. Returns `value` itself when nothing changed.
 */
function updateAt(value: unknown, path: AttributePath, i: number, update: (reached: unknown) => unknown): unknown {
  if (i === path.length) return update(value);
  if (Array.isArray(value)) {
    let changed = false;
    const next = value.map((element: unknown) => {
      const result = updateAt(element, path, i, update);
      if (result !== element) changed = true;
      return result;
    });
    return changed ? next : value;
  }
  const name = path[i] as string;
  if (!isObject(value) || !Object.hasOwn(value, name)) return value;
  const result = updateAt(value[name], path, i + 1, update);
  if (result === value[name]) return value;
  const copy = { ...value };
  if (result === REMOVED) delete copy[name];
  else copy[name] = result;
  return copy;
}

/**
 * Only the given sub-paths of `value`. Arrays keep their length (each element is projected);
 * a scalar has no sub-attributes and so is dropped.
 */
function project(value: unknown, paths: readonly AttributePath[]): unknown {
  if (paths.some((path) => path.length === 0)) return value;
  if (Array.isArray(value)) return value.map((element: unknown) => project(element, paths)).filter((element) => element !== REMOVED);
  if (!isObject(value)) return REMOVED;
  const out: Record<string, unknown> = {};
  for (const name of new Set(paths.map((path) => path[0] as string))) {
    if (!Object.hasOwn(value, name)) continue;
    const projected = project(
      value[name],
      paths.filter((path) => path[0] === name).map((path) => path.slice(1)),
    );
    if (projected !== REMOVED) out[name] = projected;
  }
  return out;
}

/** Removes each path in `drop`, except what `keep` names: kept whole, or projected down to the kept parts. */
function exclude(resource: Record<string, unknown>, drop: readonly AttributePath[], keep: readonly AttributePath[]): Record<string, unknown> {
  let result: unknown = resource;
  for (const path of drop) {
    if (keep.some((kept) => isPrefix(kept, path))) continue;
    const inside = keep.filter((kept) => kept.length > path.length && isPrefix(path, kept)).map((kept) => kept.slice(path.length));
    result = updateAt(result, path, 0, (reached) => (inside.length === 0 ? REMOVED : project(reached, inside)));
  }
  // A zero-length path never occurs here, so the top level is never REMOVED and stays an object.
  const out = result as Record<string, unknown>;
  return out === resource ? { ...resource } : out;
}

const toPath = (attribute: string): AttributePath => attribute.split('/');

/**
 * The representation the selectors ask for, as a new object; the input is not mutated (unchanged
 * nested values are shared with it). `defaultExcluded` and `alwaysIncluded` are attribute paths
 * such as "instantiatedVnfInfo" or "instantiatedVnfInfo/vnfcResourceInfo"; `alwaysIncluded` ones
 * survive every selector (excluding them is silently ignored).
 */
export function applySelectors(
  resource: Record<string, unknown>,
  selectors: Selectors,
  defaultExcluded: readonly string[],
  alwaysIncluded: readonly string[] = [],
): Record<string, unknown> {
  const protectedPaths = alwaysIncluded.map(toPath);
  switch (selectors.kind) {
    case 'all_fields':
      return { ...resource };
    case 'exclude_default':
      return exclude(resource, defaultExcluded.map(toPath), [...selectors.fields, ...protectedPaths]);
    case 'exclude_fields':
      return exclude(resource, selectors.excludeFields, protectedPaths);
  }
}

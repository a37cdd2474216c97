// Lists a collection the way SOL013 asks: attribute-based filter (5.2), attribute selectors
// (5.3) and paging with an opaque marker that carries the whole query state (5.4). Filters run on
// the API representation, never on the stored record, so internal attributes and credentials
// cannot be probed through a filter.
import { BadRequestError } from '#lib/sol/errors.ts';
import { matchesFilter, parseFilter, type Filter } from '#lib/sol/filter.ts';
import { applySelectors, parseSelectors, type Selectors } from '#lib/sol/selectors.ts';
import { decodeMarker, encodeMarker, MARKER_PARAMETER } from '#lib/sol/paging.ts';
import { pagingKey } from '#lib/secrets/paging-key.ts';
import { ALL_TENANTS, type Page, type TenantScope } from '#lib/sol/paging.ts';
import { planIndex, planListing, type ListIndexes, type ListPlan } from '#lib/sol/plan.ts';

export interface CollectionSpec<R> {
  /** Marker scope, e.g. "vnf_instances". */
  resource: string;
  attributes: readonly string[];
  defaultExcluded: readonly string[];
  alwaysIncluded: readonly string[];
  /** Whose records are listed (lib/lcm/vnf-instances.ts listScope); markers are valid only in the scope that issued them. */
  scope: TenantScope;
  /** Attributes (as the API shows them) the store can read through an index; a filter pinning one to some values reads just those records. */
  indexes?: ListIndexes;
  /**
   * The stored attributes (or dotted paths in them) `render` and `keyOf` read besides the
   * representation's own attributes: the list keys, and what its links follow from. Given, a page
   * reads only the attributes it shows or filters on, and these (`fetch`'s `read`); absent, whole records.
   */
  readAlways?: readonly string[];
  /**
   * A page in list order; `plan` says whether to read the whole scope or one index key (always a
   * scan without `indexes`); `read`, when given, the only attributes the page needs of each record.
   */
  fetch(
    scope: TenantScope,
    limit: number,
    after: Record<string, string | number> | undefined,
    plan: ListPlan,
    read: readonly string[] | undefined,
  ): Promise<Page<R>>;
  render(record: R): Record<string, unknown>;
  keyOf(record: R): Record<string, string>;
}

export interface ListResult {
  items: Record<string, unknown>[];
  /** Present when there is a next page. */
  marker?: string;
}

const SELECTOR_PARAMETERS = new Set(['filter', 'all_fields', 'fields', 'exclude_fields', 'exclude-fields', 'exclude_default']);
const FILTERED_CHUNK = 500;

/**
 * The stored attributes a page needs (CollectionSpec readAlways): the representation's attributes
 * but those the selectors leave out whole (SOL003's default exclusions not asked for by `fields`,
 * or `exclude_fields` of a whole attribute), unless the filter looks at them; undefined when that
 * is every attribute (whole records are read).
 */
function attributesRead<R>(spec: CollectionSpec<R>, selectors: Selectors, filter: Filter | undefined): string[] | undefined {
  if (spec.readAlways === undefined) return undefined;
  const left = new Set<string>();
  if (selectors.kind === 'exclude_default') {
    const asked = new Set(selectors.fields.map((path) => path[0]));
    for (const path of spec.defaultExcluded) if (!path.includes('/') && !asked.has(path)) left.add(path);
  } else if (selectors.kind === 'exclude_fields') {
    for (const path of selectors.excludeFields) if (path.length === 1) left.add(path[0] as string);
  }
  for (const attribute of spec.alwaysIncluded) left.delete(attribute);
  for (const expression of filter?.expressions ?? []) left.delete(expression.path[0] as string);
  if (left.size === 0) return undefined;
  // _links is rendered from the record, never stored: no read asks for it.
  return [...new Set([...spec.attributes.filter((attribute) => !left.has(attribute) && attribute !== '_links'), ...spec.readAlways])];
}

/**
 * The marker's signing key, bound to the scope of the list: a marker issued to one tenant (or to an
 * admin's all-tenant list) fails its signature check (400) in any other scope, so it can neither
 * resume a list it was not issued for nor hand a tenant's index a start key of another tenant.
 */
async function markerKey(resource: string, scope: TenantScope): Promise<string> {
  return `${await pagingKey()}\n${resource}\n${scope === ALL_TENANTS ? '*all tenants*' : `tenant:${scope}`}`;
}

function parseQuery(rawQuery: string): URLSearchParams {
  try {
    return new URLSearchParams(rawQuery);
  } catch {
    throw new BadRequestError('Malformed query string');
  }
}

export async function listCollection<R>(spec: CollectionSpec<R>, rawQuery: string, pageSize: number): Promise<ListResult> {
  let params = parseQuery(rawQuery);
  let after: Record<string, string | number> | undefined;
  let markerIndex: string | undefined;
  const rawMarker = params.get(MARKER_PARAMETER);
  if (rawMarker !== null) {
    const state = decodeMarker(rawMarker, await markerKey(spec.resource, spec.scope), spec.resource);
    const fromMarker = parseQuery(state.query);
    // The marker carries the query; a request that also changes filter or selectors is ambiguous.
    for (const name of SELECTOR_PARAMETERS) {
      if (params.has(name) && params.getAll(name).join('\u0000') !== fromMarker.getAll(name).join('\u0000')) {
        throw new BadRequestError(`"${name}" differs from the query that ${MARKER_PARAMETER} was issued for; send the marker alone`);
      }
    }
    params = fromMarker;
    after = state.after;
    markerIndex = state.index;
  }
  for (const name of params.keys()) {
    if (!SELECTOR_PARAMETERS.has(name) && name !== MARKER_PARAMETER) throw new BadRequestError(`Unknown query parameter "${name}"`);
  }
  const filters = params.getAll('filter');
  if (filters.length > 1) throw new BadRequestError('Only one "filter" parameter is allowed; combine expressions with ";"');
  const filter: Filter | undefined = filters[0] === undefined ? undefined : parseFilter(filters[0], { attributes: spec.attributes });
  const selectors = parseSelectors(params, { attributes: spec.attributes });
  const query = new URLSearchParams([...params].filter(([name]) => name !== MARKER_PARAMETER)).toString();
  const plan = planListing(filter, spec.indexes ?? {}, { allTenants: spec.scope === ALL_TENANTS });
  const read = attributesRead(spec, selectors, filter);
  const index = planIndex(plan);
  // The plan follows from the query the marker carries, so this differs only for a marker issued
  // before the resource's indexes changed: its start key belongs to another index.
  if (rawMarker !== null && markerIndex !== index) {
    throw new BadRequestError(
      `Invalid ${MARKER_PARAMETER}: it was issued for a list read ${markerIndex ? `through index "${markerIndex}"` : 'without an index'}; repeat the query without the marker`,
    );
  }

  const items: Record<string, unknown>[] = [];
  let last: R | undefined;
  // An index read finds only candidates for its key, most often matches: its first read asks for a page's worth.
  let chunk = filter && plan.kind === 'scan' ? FILTERED_CHUNK : pageSize + 1;
  for (;;) {
    const page = await spec.fetch(spec.scope, chunk, after, plan, read);
    for (const record of page.items) {
      const representation = spec.render(record);
      if (filter && !matchesFilter(filter, representation)) continue;
      if (items.length === pageSize) {
        // One more match exists beyond this page: the next page starts after the last one shown.
        const marker = encodeMarker(
          { v: 1, resource: spec.resource, query, after: spec.keyOf(last as R), ...(index && { index }) },
          await markerKey(spec.resource, spec.scope),
        );
        return { items, marker };
      }
      items.push(applySelectors(representation, selectors, spec.defaultExcluded, spec.alwaysIncluded));
      last = record;
    }
    if (!page.after) return { items };
    after = page.after;
    chunk = FILTERED_CHUNK;
  }
}

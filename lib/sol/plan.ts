// Chooses how a filtered list reads its records: through a secondary index when the SOL013 filter
// pins an indexed attribute to one value, otherwise by reading the whole collection in scope. Pure.
// The filter is always applied in full to what is read (re-applying the indexed condition is
// harmless), so an index only narrows the read and never changes the result.
import type { Filter } from '#lib/sol/filter.ts';

/** Read the scope's whole collection in its list order and filter it. */
export interface ScanPlan {
  readonly kind: 'scan';
  readonly residual?: Filter;
}

/** Read only the records whose `attribute` is one of `keyValues`, through `index`, in the same list order. */
export interface IndexPlan {
  readonly kind: 'index';
  readonly index: string;
  readonly attribute: string;
  /** One value for `eq`; the distinct values of an `in` (their partitions are read together and merged). */
  readonly keyValues: readonly string[];
  /** What is applied to every record read: the whole filter. */
  readonly residual: Filter;
}

export type ListPlan = ScanPlan | IndexPlan;

// A DynamoDB partition key value is at most 2,048 bytes; no stored record has a longer one. A
// tenant-scoped index's key holds the tenant and a shard besides the value, so its values are
// shorter (lib/store/dynamo.ts MAX_SHARDED_VALUE_BYTES: a longer one is in no such index).
const MAX_KEY_BYTES = 2048;
const MAX_SCOPED_VALUE_BYTES = 1024;
/** An `in` with more values than this reads the whole scope: each value is a partition (or LIST_SHARDS of them) to query. */
export const MAX_INDEX_VALUES = 8;

/** An index keyed by the attribute itself (any scope), or one scoped to a tenant (not for an all-tenant list). */
export type ListIndexEntry = string | { readonly index: string; readonly tenantScoped: true };

/**
 * Attribute (as the API shows it; a nested one by its filter path, `a/b/c`) -> the index keyed by
 * it, most selective first. An eq on an array attribute holds when any element equals the value;
 * an index of one must list each record under every value it holds, or read too the partitions of
 * the records it cannot (ListIndex alsoRead).
 */
export type ListIndexes = Readonly<Record<string, ListIndexEntry>>;

/** The plan's index name, or undefined for a scan: what a paging marker is bound to. */
export const planIndex = (plan: ListPlan): string | undefined => (plan.kind === 'index' ? plan.index : undefined);

/**
 * A conjunct `(eq,attr,v)` or `(in,attr,v1,...)` on an indexed attribute decides an index
 * read; among several, the attribute whose index comes first in `indexes` (the most selective), then
 * the first conjunct. Everything else is scanned: neq, cont, ranges, unindexed attributes and
 * paths, a value no key can hold, too many values, and a tenant-scoped index for a list of
 * every tenant's records.
 */
export function planListing(filter: Filter | undefined, indexes: ListIndexes, options: { allTenants?: boolean } = {}): ListPlan {
  if (filter === undefined) return { kind: 'scan' };
  const order = Object.keys(indexes);
  let best: { rank: number; plan: IndexPlan } | undefined;
  for (const expression of filter.expressions) {
    if (expression.op !== 'eq' && expression.op !== 'in') continue;
    // A nested attribute is named by its path (`filter/vnfInstanceSubscriptionFilter/vnfInstanceIds`).
    const attribute = expression.path.join('/');
    if (!Object.hasOwn(indexes, attribute)) continue;
    const entry = indexes[attribute] as ListIndexEntry;
    const scoped = typeof entry !== 'string';
    if (scoped && options.allTenants) continue;
    const values = [...new Set(expression.values as string[])];
    if (values.length === 0 || values.length > MAX_INDEX_VALUES) continue;
    // DynamoDB refuses an empty string, or one longer than a key can be, as a key value in a query.
    const limit = scoped ? MAX_SCOPED_VALUE_BYTES : MAX_KEY_BYTES;
    if (values.some((value) => value === '' || Buffer.byteLength(value) > limit)) continue;
    const rank = order.indexOf(attribute);
    if (best !== undefined && best.rank <= rank) continue;
    const index = typeof entry === 'string' ? entry : entry.index;
    best = { rank, plan: { kind: 'index', index, attribute, keyValues: values, residual: filter } };
  }
  return best?.plan ?? { kind: 'scan', residual: filter };
}

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

/** Read only the records whose `attribute` equals `keyValue`, through `index`, in the same list order. */
export interface IndexPlan {
  readonly kind: 'index';
  readonly index: string;
  readonly attribute: string;
  readonly keyValue: string;
  /** What is applied to every record read: the whole filter. */
  readonly residual: Filter;
}

export type ListPlan = ScanPlan | IndexPlan;

// A DynamoDB partition key value is at most 2,048 bytes; no stored record has a longer one.
const MAX_KEY_BYTES = 2048;

/** Top-level attribute (as the API shows it) -> the index keyed by it. */
export type ListIndexes = Readonly<Record<string, string>>;

/** The plan's index name, or undefined for a scan: what a paging marker is bound to. */
export const planIndex = (plan: ListPlan): string | undefined => (plan.kind === 'index' ? plan.index : undefined);

/**
 * The first conjunct `(eq,attr,v)` (or `(in,attr,v)`) with a single value on a top-level indexed
 * attribute decides an index read. Several values would need one read per value merged in list
 * order, which paging cannot resume cheaply, so they are scanned like everything else (neq, cont,
 * ranges, nested paths, unindexed attributes, a value no key can hold).
 */
export function planListing(filter: Filter | undefined, indexes: ListIndexes): ListPlan {
  if (filter === undefined) return { kind: 'scan' };
  for (const expression of filter.expressions) {
    if (expression.op !== 'eq' && expression.op !== 'in') continue;
    if (expression.path.length !== 1 || expression.values.length !== 1) continue;
    // DynamoDB refuses an empty string, or one longer than a partition key can be, as a key value in a query.
    const value = expression.values[0] as string;
    if (value === '' || Buffer.byteLength(value) > MAX_KEY_BYTES) continue;
    const attribute = expression.path[0] as string;
    if (!Object.hasOwn(indexes, attribute)) continue;
    return { kind: 'index', index: indexes[attribute] as string, attribute, keyValue: value, residual: filter };
  }
  return { kind: 'scan', residual: filter };
}

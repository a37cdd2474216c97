// SOL013 clause 5.2 attribute-based filtering: parses the `filter` URI query parameter into an
// AST and evaluates it against JSON resource representations. Pure; knows nothing about HTTP.
import { BadRequestError } from '#lib/sol/errors.ts';
import { isRecord as isObject } from '#lib/json.ts';

export const FILTER_OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'cont', 'ncont', 'in', 'nin'] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

export interface FilterExpression {
  readonly op: FilterOperator;
  /** Attribute names from the top of the resource; "@key" stands for the keys of a map. */
  readonly path: readonly string[];
  /** Literal values, unquoted and unescaped; always at least one. */
  readonly values: readonly string[];
}

/** All expressions must match (the ";" in a filter is a logical AND). */
export interface Filter {
  readonly expressions: readonly FilterExpression[];
}

export interface ParseFilterOptions {
  /** Top-level attributes that may be filtered on; anything else is a 400. Unrestricted if absent. */
  readonly attributes?: readonly string[];
}

const OPERATORS: ReadonlySet<string> = new Set(FILTER_OPERATORS);
const SINGLE_VALUE_OPERATORS: ReadonlySet<FilterOperator> = new Set<FilterOperator>(['gt', 'gte', 'lt', 'lte']);
// The spec's map-key pseudo attribute (SOL013 5.2.2).
const MAP_KEY = '@key';
// Error details echo client input; keep them bounded.
const MAX_SNIPPET = 200;

function fail(detail: string): never {
  throw new BadRequestError(`Invalid filter: ${detail}`);
}

function isOperator(op: string): op is FilterOperator {
  return OPERATORS.has(op);
}

/** The expression starting at `start` as the client wrote it, for error messages. */
function expressionText(raw: string, start: number): string {
  let quoted = false;
  let end = raw.length;
  for (let i = start + 1; i < raw.length; i++) {
    const ch = raw[i];
    if (ch === "'") quoted = !quoted;
    else if (ch === ')' && !quoted) {
      end = i + 1;
      break;
    }
  }
  const text = raw.slice(start, end);
  return text.length > MAX_SNIPPET ? `${text.slice(0, MAX_SNIPPET)}...` : text;
}

/** Index of the first of `stops` at or after `from`, or raw.length. */
function scanTo(raw: string, from: number, stops: string): number {
  let i = from;
  while (i < raw.length && !stops.includes(raw[i] as string)) i++;
  return i;
}

/**
 * Parses the value of the `filter` query parameter (already percent-decoded once).
 * Grammar: `(op,attr[/attr]*,value[,value]*)[;(...)]*`. A value in single quotes may contain
 * `,` `(` `)` `;` literally, with `''` standing for one quote; unquoted values may not contain
 * `,` `)` or `'`. gt/gte/lt/lte take exactly one value, every other operator a list.
 */
export function parseFilter(raw: string, options: ParseFilterOptions = {}): Filter {
  if (raw.length === 0) fail('the filter is empty');
  const expressions: FilterExpression[] = [];
  let pos = 0;
  for (;;) {
    const start = pos;
    if (pos >= raw.length) fail(`expected an expression after ";" at the end of "${raw.slice(-MAX_SNIPPET)}"`);
    if (raw[pos] !== '(') fail(`expected "(" at position ${pos} but found "${raw[pos]}"`);
    const text = expressionText(raw, start);
    const missingParen = (): never => fail(`missing ")" in "${text}"`);

    const opEnd = scanTo(raw, pos + 1, ',)');
    const op = raw.slice(pos + 1, opEnd);
    if (op.includes('(')) fail(`unbalanced parentheses in "${text}"`);
    if (opEnd === raw.length) missingParen();
    if (op.length === 0) fail(`missing operator in "${text}"`);
    if (!isOperator(op)) fail(`unknown operator "${op}" in "${text}"`);
    if (raw[opEnd] === ')') fail(`missing attribute and value in "${text}"`);

    const pathEnd = scanTo(raw, opEnd + 1, ',)');
    const pathText = raw.slice(opEnd + 1, pathEnd);
    if (pathEnd === raw.length) missingParen();
    if (pathText.length === 0) fail(`missing attribute in "${text}"`);
    const path = pathText.split('/');
    for (const name of path) {
      if (name.length === 0) fail(`empty attribute name in "${pathText}" in "${text}"`);
      if (/[\s'(;]/.test(name)) fail(`invalid attribute name "${name}" in "${text}"`);
    }
    if (raw[pathEnd] === ')') fail(`missing value in "${text}"`);
    const top = path[0] as string;
    if (options.attributes !== undefined && !options.attributes.includes(top)) {
      fail(`attribute "${top}" is not supported for filtering (in "${text}"); supported: ${options.attributes.join(', ')}`);
    }

    const values: string[] = [];
    pos = pathEnd; // at the "," before the first value
    while (raw[pos] === ',') {
      pos++;
      if (raw[pos] === "'") {
        let value = '';
        let i = pos + 1;
        for (;;) {
          const close = raw.indexOf("'", i);
          if (close === -1) fail(`unterminated quoted value in "${text}"`);
          value += raw.slice(i, close);
          if (raw[close + 1] === "'") {
            value += "'";
            i = close + 2;
            continue;
          }
          pos = close + 1;
          break;
        }
        if (pos === raw.length) missingParen();
        if (raw[pos] !== ',' && raw[pos] !== ')') fail(`unexpected "${raw[pos]}" after quoted value in "${text}"`);
        values.push(value);
      } else {
        const end = scanTo(raw, pos, ',)');
        const value = raw.slice(pos, end);
        if (end === raw.length) missingParen();
        if (value.length === 0) fail(`empty value in "${text}" (write '' for an empty string)`);
        if (value.includes("'")) fail(`value "${value}" contains a single quote and must be enclosed in single quotes, with the quote doubled, in "${text}"`);
        values.push(value);
        pos = end;
      }
    }
    // Every branch above leaves pos on "," (consumed by the loop) or ")".
    pos++;
    if (SINGLE_VALUE_OPERATORS.has(op) && values.length !== 1) {
      fail(`operator "${op}" takes exactly one value but got ${values.length} in "${text}"`);
    }
    expressions.push({ op, path, values });

    if (pos === raw.length) return { expressions };
    if (raw[pos] === ';') {
      pos++;
      continue;
    }
    if (raw[pos] === ')') fail(`unbalanced parentheses: unexpected ")" at position ${pos} after "${text}"`);
    fail(`unexpected "${raw[pos]}" at position ${pos} after "${text}" (expressions are separated by ";")`);
  }
}

/**
 * Every scalar (or object) the path reaches. Arrays are flattened at every level. An object that
 * lacks the next attribute is treated as a map (SOL003 v2 keys vimConnectionInfo by id), so the
 * attribute is looked up in each of its object values instead; one level only, so a missing
 * attribute cannot match something unrelated deeper down.
 */
function reach(value: unknown, path: readonly string[], i: number, out: unknown[]): void {
  if (value === undefined || value === null) return;
  if (Array.isArray(value)) {
    for (const element of value) reach(element, path, i, out);
    return;
  }
  if (i === path.length) {
    out.push(value);
    return;
  }
  if (!isObject(value)) return;
  const name = path[i] as string;
  if (name === MAP_KEY) {
    for (const key of Object.keys(value)) reach(key, path, i + 1, out);
  } else if (Object.hasOwn(value, name)) {
    reach(value[name], path, i + 1, out);
  } else {
    for (const entry of Object.values(value)) {
      if (isObject(entry) && Object.hasOwn(entry, name)) reach(entry[name], path, i + 1, out);
    }
  }
}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function asNumber(text: string): number | undefined {
  if (!NUMBER.test(text)) return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

function equals(actual: unknown, literal: string): boolean {
  switch (typeof actual) {
    case 'number':
      return asNumber(literal) === actual;
    case 'boolean':
      return literal === String(actual);
    case 'string':
      return actual === literal;
    default:
      return false;
  }
}

/** Sign of actual - literal, or undefined when the two cannot be ordered. */
function compare(actual: unknown, literal: string): number | undefined {
  if (typeof actual === 'number') {
    const n = asNumber(literal);
    return n === undefined ? undefined : Math.sign(actual - n);
  }
  // Code-unit order, so ISO 8601 timestamps compare chronologically and results are locale-free.
  if (typeof actual === 'string') return actual < literal ? -1 : actual > literal ? 1 : 0;
  return undefined;
}

function satisfies(op: FilterOperator, actual: unknown, literal: string): boolean {
  switch (op) {
    case 'eq':
    case 'neq':
    case 'in':
    case 'nin':
      return equals(actual, literal);
    case 'cont':
    case 'ncont':
      return typeof actual === 'string' && actual.includes(literal);
    case 'gt': {
      const c = compare(actual, literal);
      return c !== undefined && c > 0;
    }
    case 'gte': {
      const c = compare(actual, literal);
      return c !== undefined && c >= 0;
    }
    case 'lt': {
      const c = compare(actual, literal);
      return c !== undefined && c < 0;
    }
    case 'lte': {
      const c = compare(actual, literal);
      return c !== undefined && c <= 0;
    }
  }
}

const NEGATIVE: ReadonlySet<FilterOperator> = new Set<FilterOperator>(['neq', 'nin', 'ncont']);

function matchesExpression(expression: FilterExpression, resource: unknown): boolean {
  const reached: unknown[] = [];
  reach(resource, expression.path, 0, reached);
  const any = reached.some((actual) => expression.values.some((literal) => satisfies(expression.op, actual, literal)));
  // A negative operator holds when its positive counterpart holds for no reached value, which
  // includes the attribute being absent.
  return NEGATIVE.has(expression.op) ? !any : any;
}

/** Whether the resource matches every expression of the filter. */
export function matchesFilter(filter: Filter, resource: unknown): boolean {
  return filter.expressions.every((expression) => matchesExpression(expression, resource));
}

// HOT intrinsic functions: get_param (with list paths into json parameters), get_resource,
// get_attr (with nested paths), get_file, str_replace, list_join, str_split, repeat, map_merge,
// map_replace, list_concat, contains, digest, and the condition functions if/equals/not/and/or,
// each available from the template version Heat introduced it in. Resolution is pure: the caller
// supplies parameters, resource references and attributes. At validation time references are
// not known yet and resolve to DEFERRED, which taints whatever contains it.
import { createHash } from 'node:crypto';
import { ApiError, isRecord } from '../state.ts';

export const DEFERRED: unique symbol = Symbol('deferred');
export type Deferred = typeof DEFERRED;

export interface ResolveContext {
  /** HOT version as yyyymmdd, e.g. 20130523. */
  version: number;
  param(name: string): unknown;
  /** get_resource: the resource's reference id (DEFERRED while validating). */
  resource(name: string): unknown;
  /** get_attr: the attribute value with `path` applied (DEFERRED while validating). */
  attribute(name: string, attribute: string, path: unknown[]): unknown;
  file(key: string): string;
  condition(name: string): boolean;
}

/** Heat's errors for templates are 400 StackValidationFailed unless said otherwise. */
export function invalidTemplate(message: string, type = 'StackValidationFailed'): ApiError {
  return new ApiError(400, message, type);
}

const SINCE: Record<string, number> = {
  get_param: 20130523,
  get_resource: 20130523,
  get_attr: 20130523,
  get_file: 20130523,
  str_replace: 20130523,
  list_join: 20130523,
  repeat: 20141016,
  digest: 20150430,
  str_split: 20151015,
  map_merge: 20160408,
  if: 20161014,
  equals: 20161014,
  not: 20161014,
  and: 20161014,
  or: 20161014,
  map_replace: 20161014,
  list_concat: 20170901,
  contains: 20170901,
  list_concat_unique: 20170901,
  str_replace_strict: 20170901,
};

/** The function name when `node` is a call available in `version`. */
export function functionName(node: unknown, version: number): string | undefined {
  if (!isRecord(node)) return undefined;
  const keys = Object.keys(node);
  if (keys.length !== 1) return undefined;
  const name = keys[0] as string;
  const since = SINCE[name];
  return since !== undefined && version >= since ? name : undefined;
}

export function containsDeferred(value: unknown): boolean {
  if (value === DEFERRED) return true;
  if (Array.isArray(value)) return value.some(containsDeferred);
  if (isRecord(value)) return Object.values(value).some(containsDeferred);
  return false;
}

/** Resource names referenced by get_resource / get_attr anywhere in `node` (implicit dependencies). */
export function references(node: unknown, version: number, out = new Set<string>()): Set<string> {
  const fn = functionName(node, version);
  if (fn === 'get_resource') {
    const arg = (node as Record<string, unknown>)[fn];
    if (typeof arg === 'string') out.add(arg);
    else references(arg, version, out);
    return out;
  }
  if (fn === 'get_attr') {
    const arg = (node as Record<string, unknown>)[fn];
    if (Array.isArray(arg) && typeof arg[0] === 'string') {
      out.add(arg[0]);
      for (const item of arg.slice(1)) references(item, version, out);
    }
    return out;
  }
  if (Array.isArray(node)) for (const item of node) references(item, version, out);
  else if (isRecord(node)) for (const value of Object.values(node)) references(value, version, out);
  return out;
}

/** Heat's get_param path walk: a missing key or index yields '' rather than an error. */
function walk(value: unknown, path: unknown[], fn: string): unknown {
  let current = value;
  for (const key of path) {
    if (current === DEFERRED) return DEFERRED;
    if (typeof key !== 'string' && typeof key !== 'number') throw invalidTemplate(`Path components in "${fn}" must be strings`);
    if (Array.isArray(current)) {
      const index = typeof key === 'number' ? key : Number(key);
      if (!Number.isInteger(index)) return '';
      current = current[index];
    } else if (isRecord(current)) {
      current = current[String(key)];
    } else return '';
    if (current === undefined) return '';
  }
  return current;
}

/** The attribute path walk of get_attr: missing keys give null, as Heat's attribute resolution does. */
export function dig(value: unknown, path: unknown[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === DEFERRED) return DEFERRED;
    if (Array.isArray(current)) {
      const index = typeof key === 'number' ? key : Number(key);
      current = Number.isInteger(index) ? current[index] : undefined;
    } else if (isRecord(current)) current = current[String(key)];
    else return null;
    if (current === undefined) return null;
  }
  return current;
}

function asText(value: unknown, fn: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null || value === undefined) return '';
  if (isRecord(value) || Array.isArray(value)) return JSON.stringify(value);
  throw invalidTemplate(`"${fn}" params must be strings or numbers`);
}

export function resolve(node: unknown, ctx: ResolveContext): unknown {
  const fn = functionName(node, ctx.version);
  if (fn) return call(fn, (node as Record<string, unknown>)[fn], ctx);
  if (Array.isArray(node)) return node.map((item) => resolve(item, ctx));
  if (isRecord(node)) {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) out[key] = resolve(value, ctx);
    return out;
  }
  return node;
}

/** Evaluates a condition expression (a name, a boolean, or equals/not/and/or). */
export function evaluateCondition(node: unknown, ctx: ResolveContext): boolean {
  if (typeof node === 'boolean') return node;
  if (typeof node === 'string') {
    if (node === 'true' || node === 'True') return true;
    if (node === 'false' || node === 'False') return false;
    return ctx.condition(node);
  }
  const value = resolve(node, ctx);
  if (typeof value !== 'boolean') throw invalidTemplate(`Invalid condition: ${JSON.stringify(node)}`);
  return value;
}

function call(fn: string, rawArgs: unknown, ctx: ResolveContext): unknown {
  switch (fn) {
    case 'get_param': {
      const args = resolve(rawArgs, ctx);
      if (args === DEFERRED) return DEFERRED;
      const [name, ...path] = Array.isArray(args) ? args : [args];
      if (typeof name !== 'string') throw invalidTemplate('Function "get_param" must operate on a parameter name');
      const value = ctx.param(name);
      return path.length === 0 ? value : walk(value, path, fn);
    }
    case 'get_resource': {
      const name = resolve(rawArgs, ctx);
      if (typeof name !== 'string') throw invalidTemplate('Function "get_resource" must operate on a resource name');
      return ctx.resource(name);
    }
    case 'get_attr': {
      if (!Array.isArray(rawArgs) || rawArgs.length < 2)
        throw invalidTemplate('Arguments to "get_attr" must be of the form [resource_name, attribute, (path), ...]');
      const [name, ...rest] = rawArgs;
      if (typeof name !== 'string') throw invalidTemplate('Arguments to "get_attr" must be of the form [resource_name, attribute, (path), ...]');
      const resolved = rest.map((item) => resolve(item, ctx));
      if (resolved.some((item) => item === DEFERRED)) return DEFERRED;
      const [attribute, ...path] = resolved;
      if (typeof attribute !== 'string') throw invalidTemplate('Arguments to "get_attr" must be of the form [resource_name, attribute, (path), ...]');
      return ctx.attribute(name, attribute, path);
    }
    case 'get_file': {
      const key = resolve(rawArgs, ctx);
      if (typeof key !== 'string') throw invalidTemplate('Argument to "get_file" must be a string');
      return ctx.file(key);
    }
    case 'str_replace':
    case 'str_replace_strict': {
      const args = resolve(rawArgs, ctx);
      if (!isRecord(args) || !('template' in args) || !('params' in args))
        throw invalidTemplate(`"${fn}" syntax should be ${fn}:\\n  template: <template string>\\n  params: <parameter mappings>`);
      if (containsDeferred(args)) return DEFERRED;
      if (typeof args.template !== 'string') throw invalidTemplate(`"${fn}" template must be a string`);
      if (!isRecord(args.params)) throw invalidTemplate(`"${fn}" params must be a map`);
      let text = args.template;
      // Longest keys first, as Heat does, so "$var_long" is not clobbered by "$var".
      const keys = Object.keys(args.params).sort((a, b) => b.length - a.length);
      for (const key of keys) {
        if (fn === 'str_replace_strict' && !text.includes(key)) throw invalidTemplate(`The following params were not found in the template: ${key}`);
        text = text.split(key).join(asText(args.params[key], fn));
      }
      return text;
    }
    case 'list_join': {
      const args = resolve(rawArgs, ctx);
      if (!Array.isArray(args) || args.length < 2) throw invalidTemplate('Incorrect arguments to "list_join" should be: list_join:\n- <delim>\n- <list>');
      if (containsDeferred(args)) return DEFERRED;
      const [delim, ...lists] = args;
      if (typeof delim !== 'string') throw invalidTemplate('Incorrect arguments to "list_join": delimiter must be a string');
      const items: string[] = [];
      for (const list of lists) {
        if (list === null || list === '') continue;
        if (!Array.isArray(list)) throw invalidTemplate('Incorrect arguments to "list_join" should be: list_join:\n- <delim>\n- <list>');
        for (const item of list) items.push(asText(item, fn));
      }
      return items.join(delim);
    }
    case 'str_split': {
      const args = resolve(rawArgs, ctx);
      if (!Array.isArray(args) || args.length < 2)
        throw invalidTemplate('Incorrect arguments to "str_split" should be: str_split:\n- <delimiter>\n- <string>\n- <index> (optional)');
      if (containsDeferred(args)) return DEFERRED;
      const [delim, text, index] = args;
      if (typeof delim !== 'string' || typeof text !== 'string')
        throw invalidTemplate('Incorrect arguments to "str_split": delimiter and string must be strings');
      const parts = text.split(delim);
      if (index === undefined) return parts;
      const i = Number(index);
      if (!Number.isInteger(i) || i < 0 || i >= parts.length)
        throw invalidTemplate(`Incorrect index to "str_split" should be between 0 and ${parts.length - 1}`);
      return parts[i];
    }
    case 'repeat': {
      if (!isRecord(rawArgs) || !isRecord(rawArgs.for_each) || !('template' in rawArgs))
        throw invalidTemplate('The syntax of "repeat" is incorrect: for_each and template are required');
      const forEach = resolve(rawArgs.for_each, ctx);
      if (containsDeferred(forEach)) return DEFERRED;
      if (!isRecord(forEach)) throw invalidTemplate('The "for_each" argument to "repeat" must contain a map');
      const vars = Object.entries(forEach);
      for (const [, list] of vars) if (!Array.isArray(list)) throw invalidTemplate('The values of the "for_each" argument to "repeat" must be lists');
      const combos: Array<Record<string, unknown>> = [{}];
      for (const [key, list] of vars) {
        const next: Array<Record<string, unknown>> = [];
        for (const combo of combos) for (const item of list as unknown[]) next.push({ ...combo, [key]: item });
        combos.splice(0, combos.length, ...next);
      }
      const substitute = (node: unknown, combo: Record<string, unknown>): unknown => {
        if (typeof node === 'string') {
          let out = node;
          for (const [key, value] of Object.entries(combo)) out = out.split(key).join(asText(value, fn));
          return out;
        }
        if (Array.isArray(node)) return node.map((n) => substitute(n, combo));
        if (isRecord(node)) return Object.fromEntries(Object.entries(node).map(([k, v]) => [substitute(k, combo) as string, substitute(v, combo)]));
        return node;
      };
      return combos.map((combo) => resolve(substitute(rawArgs.template, combo), ctx));
    }
    case 'map_merge': {
      const args = resolve(rawArgs, ctx);
      if (!Array.isArray(args)) throw invalidTemplate('Incorrect arguments to "map_merge" should be: map_merge:\n- <map>');
      if (containsDeferred(args)) return DEFERRED;
      const out: Record<string, unknown> = {};
      for (const map of args) {
        if (map === null) continue;
        if (!isRecord(map)) throw invalidTemplate('Incorrect arguments: Items to merge must be maps.');
        Object.assign(out, map);
      }
      return out;
    }
    case 'map_replace': {
      const args = resolve(rawArgs, ctx);
      if (containsDeferred(args)) return DEFERRED;
      if (!isRecord(args) || !isRecord(args.map))
        throw invalidTemplate(
          'Incorrect arguments to "map_replace" should be: map_replace:\n  map: <map>\n  keys: <map> (optional)\n  values: <map> (optional)',
        );
      const keys = isRecord(args.keys) ? args.keys : {};
      const values = isRecord(args.values) ? args.values : {};
      return Object.fromEntries(Object.entries(args.map).map(([k, v]) => [String(keys[k] ?? k), typeof v === 'string' && v in values ? values[v] : v]));
    }
    case 'list_concat':
    case 'list_concat_unique': {
      const args = resolve(rawArgs, ctx);
      if (!Array.isArray(args)) throw invalidTemplate(`Incorrect arguments to "${fn}" should be: ${fn}:\n- <list>`);
      if (containsDeferred(args)) return DEFERRED;
      const out: unknown[] = [];
      for (const list of args) {
        if (list === null) continue;
        if (!Array.isArray(list)) throw invalidTemplate(`Incorrect arguments: Items to concat must be lists.`);
        for (const item of list) if (fn === 'list_concat' || !out.some((o) => deepEqual(o, item))) out.push(item);
      }
      return out;
    }
    case 'contains': {
      const args = resolve(rawArgs, ctx);
      if (!Array.isArray(args) || args.length !== 2 || !Array.isArray(args[1]))
        throw invalidTemplate('Arguments to "contains" must be of the form [value1, [value1, value2]]');
      if (containsDeferred(args)) return DEFERRED;
      return (args[1] as unknown[]).some((item) => deepEqual(item, args[0]));
    }
    case 'digest': {
      const args = resolve(rawArgs, ctx);
      if (!Array.isArray(args) || args.length !== 2 || typeof args[0] !== 'string')
        throw invalidTemplate('Argument to function "digest" was not a list of 2 items');
      if (containsDeferred(args)) return DEFERRED;
      try {
        return createHash(args[0]).update(asText(args[1], fn)).digest('hex');
      } catch {
        throw invalidTemplate(`Algorithm ${args[0]} is not supported`);
      }
    }
    case 'if': {
      if (!Array.isArray(rawArgs) || rawArgs.length !== 3)
        throw invalidTemplate('Arguments to "if" must be of the form: [condition_name, value_if_true, value_if_false]');
      return evaluateCondition(rawArgs[0], ctx) ? resolve(rawArgs[1], ctx) : resolve(rawArgs[2], ctx);
    }
    case 'equals': {
      const args = resolve(rawArgs, ctx);
      if (!Array.isArray(args) || args.length !== 2) throw invalidTemplate('Arguments to "equals" must be of the form: [value_1, value_2]');
      return deepEqual(args[0], args[1]);
    }
    case 'not': {
      return !evaluateCondition(rawArgs, ctx);
    }
    case 'and':
    case 'or': {
      if (!Array.isArray(rawArgs) || rawArgs.length < 2) throw invalidTemplate(`Arguments to "${fn}" must be of the form: [condition_1, condition_2, ...]`);
      const values = rawArgs.map((c) => evaluateCondition(c, ctx));
      return fn === 'and' ? values.every(Boolean) : values.some(Boolean);
    }
    default:
      throw invalidTemplate(`Unknown function ${fn}`);
  }
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isRecord(a) && isRecord(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

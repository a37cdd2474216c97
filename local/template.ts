// Reads the AWS SAM template (the single source of truth for wiring): YAML with CloudFormation short-form tags
// turned into their long forms, deep resolution of intrinsic functions, and SAM's Globals merge for functions.

import { readFileSync } from 'node:fs';
import { Pair, parseDocument, Scalar, YAMLMap, type CollectionTag, type ScalarTag, type YAMLSeq } from 'yaml';
import { isRecord } from '#lib/json.ts';

// ---------------------------------------------------------------------------------------------------------------
// Template shape
// ---------------------------------------------------------------------------------------------------------------

export interface SamParameter {
  Type: string;
  Default?: string | number | boolean | Array<string | number>;
  AllowedValues?: Array<string | number | boolean>;
  AllowedPattern?: string;
  Description?: string;
  NoEcho?: boolean;
  MinLength?: number;
  MaxLength?: number;
  MinValue?: number;
  MaxValue?: number;
  ConstraintDescription?: string;
}

export interface SamResource {
  Type: string;
  Properties?: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
  Condition?: string;
  DependsOn?: string | string[];
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  /** SAM resource attribute: "*" or the Globals property names not to apply to this resource. */
  IgnoreGlobals?: string | string[];
  Connectors?: Record<string, unknown>;
}

export interface SamOutput {
  Value: unknown;
  Description?: unknown;
  Export?: { Name: unknown };
  Condition?: string;
}

export interface SamGlobals {
  Function?: Record<string, unknown>;
  Api?: Record<string, unknown>;
  HttpApi?: Record<string, unknown>;
  WebSocketApi?: Record<string, unknown>;
  SimpleTable?: Record<string, unknown>;
  StateMachine?: Record<string, unknown>;
  LayerVersion?: Record<string, unknown>;
  CapacityProvider?: Record<string, unknown>;
}

export type SamMappings = Record<string, Record<string, Record<string, unknown>>>;

export interface SamTemplate {
  AWSTemplateFormatVersion?: string;
  Transform?: string | string[];
  Description?: string;
  Metadata?: Record<string, unknown>;
  Parameters?: Record<string, SamParameter>;
  Rules?: Record<string, unknown>;
  Mappings?: SamMappings;
  Conditions?: Record<string, unknown>;
  Globals?: SamGlobals;
  Resources: Record<string, SamResource>;
  Outputs?: Record<string, SamOutput>;
}

// ---------------------------------------------------------------------------------------------------------------
// Loading: CloudFormation short-form tags -> long form
// ---------------------------------------------------------------------------------------------------------------

/** Short-form function tags whose long form is `{"Fn::<Name>": value}` (scalar, sequence or mapping value). */
const FN_TAGS = [
  'Base64',
  'Cidr',
  'FindInMap',
  'GetAZs',
  'ImportValue',
  'Join',
  'Select',
  'Split',
  'Sub',
  'Transform',
  'And',
  'Equals',
  'If',
  'Not',
  'Or',
] as const;

function longForm(key: string, value: YAMLMap.Parsed | YAMLSeq.Parsed): YAMLMap {
  // Returning a node (not a plain object) keeps anchors/aliases and nested tags working in toJS().
  const map = new YAMLMap();
  map.items.push(new Pair(new Scalar(key), value));
  return map;
}

function splitGetAtt(value: string): [string, string] {
  const dot = value.indexOf('.');
  if (dot <= 0 || dot === value.length - 1) throw new Error(`!GetAtt "${value}" must be "LogicalId.Attribute"`);
  return [value.slice(0, dot), value.slice(dot + 1)];
}

function buildTags(): Array<ScalarTag | CollectionTag> {
  const tags: Array<ScalarTag | CollectionTag> = [
    { tag: '!Ref', resolve: (value: string) => ({ Ref: value }) },
    { tag: '!Condition', resolve: (value: string) => ({ Condition: value }) },
    { tag: '!GetAtt', resolve: (value: string) => ({ 'Fn::GetAtt': splitGetAtt(value) }) },
    { tag: '!GetAtt', collection: 'seq', resolve: (value) => longForm('Fn::GetAtt', value) },
  ];
  for (const name of FN_TAGS) {
    const key = `Fn::${name}`;
    tags.push(
      { tag: `!${name}`, resolve: (value: string) => ({ [key]: value }) },
      { tag: `!${name}`, collection: 'seq', resolve: (value) => longForm(key, value) },
      { tag: `!${name}`, collection: 'map', resolve: (value) => longForm(key, value) },
    );
  }
  return tags;
}

const CFN_TAGS = buildTags();

/** Parses template YAML (or JSON) text; `source` only names the input in error messages. */
export function parseTemplate(text: string, source = 'template'): SamTemplate {
  const doc = parseDocument(text, { customTags: CFN_TAGS, prettyErrors: true });
  // yaml reports an unknown tag (e.g. a misspelt `!GetAtt`) only as a warning; CloudFormation would reject it.
  const problems = [...doc.errors, ...doc.warnings.filter((w) => w.code === 'TAG_RESOLVE_FAILED')];
  if (problems.length > 0) {
    throw new Error(`${source}: invalid template YAML:\n${problems.map((e) => e.message).join('\n')}`);
  }
  const data: unknown = doc.toJS({ maxAliasCount: -1 });
  if (!isRecord(data)) throw new Error(`${source}: a template must be a mapping`);
  if (!isRecord(data.Resources)) throw new Error(`${source}: the template has no Resources mapping`);
  for (const [id, resource] of Object.entries(data.Resources)) {
    if (!isRecord(resource) || typeof resource.Type !== 'string') {
      throw new Error(`${source}: resource ${id} must be a mapping with a string Type`);
    }
  }
  return data as unknown as SamTemplate;
}

/** Reads a SAM/CloudFormation template file with every short-form tag turned into its long form. */
export function loadTemplate(path: string): SamTemplate {
  return parseTemplate(readFileSync(path, 'utf8'), path);
}

// ---------------------------------------------------------------------------------------------------------------
// Intrinsic functions
// ---------------------------------------------------------------------------------------------------------------

export interface IntrinsicContext {
  /** Parameter values by name (see `parameterValues` for defaults). */
  parameters: Record<string, string>;
  /** Pseudo parameters: AWS::Region, AWS::AccountId, AWS::StackName, AWS::Partition, AWS::URLSuffix (see `pseudoParameters`). */
  pseudo: Record<string, string>;
  /** `Ref` of a resource (called only for names that are neither parameters nor pseudo parameters). */
  ref(logicalId: string): string;
  /** `Fn::GetAtt` of a resource. */
  getAtt(logicalId: string, attribute: string): string;
  /** The template's Conditions: each a condition expression (evaluated lazily, once) or an already known boolean. */
  conditions?: Record<string, unknown>;
  /** The template's Mappings, for Fn::FindInMap. */
  mappings?: SamMappings;
  /** Parameter types by name; `CommaDelimitedList` and `List<...>` parameters Ref to a list. Names listed here
   *  but missing from `parameters` are reported as parameters without a value. */
  parameterTypes?: Record<string, string>;
}

/** Thrown for anything that cannot be resolved; the message names the reference and where it was used. */
export class IntrinsicError extends Error {
  constructor(
    message: string,
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(`${message} (at ${path || '<root>'})`, options);
    this.name = 'IntrinsicError';
  }
}

const NO_VALUE: unique symbol = Symbol('AWS::NoValue');

export function isIntrinsic(value: unknown): value is Record<string, unknown> {
  if (!isRecord(value)) return false;
  const keys = Object.keys(value);
  if (keys.length !== 1) return false;
  const key = keys[0]!;
  return key === 'Ref' || key.startsWith('Fn::') || (key === 'Condition' && typeof value.Condition === 'string');
}

// Memoized condition results and the conditions being evaluated (cycle detection), per context object.
const conditionCache = new WeakMap<IntrinsicContext, Map<string, boolean>>();
const conditionsInProgress = new WeakMap<IntrinsicContext, Set<string>>();

/** Evaluates the named condition from `ctx.conditions` (memoized per context). */
export function evaluateCondition(name: string, ctx: IntrinsicContext, path = `Conditions.${name}`): boolean {
  const conditions = ctx.conditions;
  if (!conditions || !Object.hasOwn(conditions, name)) throw new IntrinsicError(`Unknown condition "${name}"`, path);
  const expression = conditions[name];
  if (typeof expression === 'boolean') return expression;
  let cache = conditionCache.get(ctx);
  if (!cache) conditionCache.set(ctx, (cache = new Map()));
  const known = cache.get(name);
  if (known !== undefined) return known;
  let inProgress = conditionsInProgress.get(ctx);
  if (!inProgress) conditionsInProgress.set(ctx, (inProgress = new Set()));
  if (inProgress.has(name)) throw new IntrinsicError(`Condition "${name}" refers to itself`, path);
  inProgress.add(name);
  try {
    const result = resolve(expression, ctx, `Conditions.${name}`);
    if (typeof result !== 'boolean') throw new IntrinsicError(`Condition "${name}" does not evaluate to a boolean`, path);
    cache.set(name, result);
    return result;
  } finally {
    inProgress.delete(name);
  }
}

/** Deep-resolves Ref, Fn::GetAtt, Fn::Sub, Fn::Join, Fn::Select, Fn::Split, Fn::If/Condition (with Fn::Equals,
 *  Fn::Not, Fn::And, Fn::Or), Fn::FindInMap, Fn::Base64 and Fn::GetAZs. `Ref: AWS::NoValue` removes the property or
 *  list element (at the top level the result is `undefined`). Throws IntrinsicError naming anything unresolvable. */
export function resolveIntrinsics(value: unknown, ctx: IntrinsicContext): unknown {
  const result = resolve(value, ctx, '');
  return result === NO_VALUE ? undefined : result;
}

function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path ? `${path}.${key}` : key;
}

function resolve(value: unknown, ctx: IntrinsicContext, path: string): unknown {
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    value.forEach((item, i) => {
      const resolved = resolve(item, ctx, join(path, i));
      if (resolved !== NO_VALUE) out.push(resolved);
    });
    return out;
  }
  if (!isRecord(value)) return value;
  if (isIntrinsic(value)) {
    const [name, arg] = Object.entries(value)[0]!;
    return resolveFunction(name, arg, ctx, join(path, name));
  }
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const resolved = resolve(item, ctx, join(path, key));
    if (resolved !== NO_VALUE) out[key] = resolved;
  }
  return out;
}

function args(name: string, arg: unknown, count: number | [number, number], path: string): unknown[] {
  const [min, max] = typeof count === 'number' ? [count, count] : count;
  if (!Array.isArray(arg) || arg.length < min || arg.length > max) {
    const expected = min === max ? `${min}` : `${min} to ${max}`;
    throw new IntrinsicError(`${name} takes a list of ${expected} arguments`, path);
  }
  return arg;
}

function asString(value: unknown, what: string, path: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new IntrinsicError(`${what} must resolve to a string, got ${JSON.stringify(value)}`, path);
}

function asList(value: unknown, what: string, path: string): unknown[] {
  if (Array.isArray(value)) return value;
  throw new IntrinsicError(`${what} must resolve to a list, got ${JSON.stringify(value)}`, path);
}

function asBoolean(value: unknown, what: string, path: string): boolean {
  if (typeof value === 'boolean') return value;
  throw new IntrinsicError(`${what} must be a condition, got ${JSON.stringify(value)}`, path);
}

function callback<T>(what: string, path: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof IntrinsicError) throw error;
    const detail = error instanceof Error ? error.message : String(error);
    throw new IntrinsicError(`Unresolvable reference ${what}: ${detail}`, path, { cause: error });
  }
}

function resolveRef(name: string, ctx: IntrinsicContext, path: string): unknown {
  if (name === 'AWS::NoValue') return NO_VALUE;
  if (Object.hasOwn(ctx.parameters, name)) {
    const value = ctx.parameters[name]!;
    const type = ctx.parameterTypes?.[name];
    if (type === 'CommaDelimitedList' || type?.startsWith('List<')) return value === '' ? [] : value.split(',').map((s) => s.trim());
    return value;
  }
  if (ctx.parameterTypes && Object.hasOwn(ctx.parameterTypes, name)) {
    throw new IntrinsicError(`Unresolvable reference Ref "${name}": parameter has no value (no Default and none given)`, path);
  }
  if (name.startsWith('AWS::')) {
    if (Object.hasOwn(ctx.pseudo, name)) return ctx.pseudo[name];
    throw new IntrinsicError(`Unresolvable reference Ref "${name}": unknown pseudo parameter`, path);
  }
  return callback(`Ref "${name}"`, path, () => ctx.ref(name));
}

function resolveGetAtt(arg: unknown, ctx: IntrinsicContext, path: string): string {
  let pair: unknown[];
  if (typeof arg === 'string') pair = splitGetAttOrThrow(arg, path);
  else pair = args('Fn::GetAtt', arg, 2, path);
  const logicalId = asString(resolve(pair[0], ctx, join(path, 0)), 'Fn::GetAtt logical ID', path);
  const attribute = asString(resolve(pair[1], ctx, join(path, 1)), 'Fn::GetAtt attribute', path);
  return callback(`Fn::GetAtt "${logicalId}.${attribute}"`, path, () => ctx.getAtt(logicalId, attribute));
}

function splitGetAttOrThrow(value: string, path: string): [string, string] {
  try {
    return splitGetAtt(value);
  } catch (error) {
    throw new IntrinsicError((error as Error).message, path);
  }
}

function resolveSub(arg: unknown, ctx: IntrinsicContext, path: string): string {
  let template: string;
  let variables: Record<string, unknown> = {};
  if (typeof arg === 'string') {
    template = arg;
  } else {
    const [text, vars] = args('Fn::Sub', arg, 2, path);
    if (typeof text !== 'string') throw new IntrinsicError('Fn::Sub template must be a string', path);
    if (!isRecord(vars)) throw new IntrinsicError('Fn::Sub variables must be a mapping', path);
    template = text;
    variables = vars;
  }
  const resolvedVars = new Map<string, string>();
  const lookup = (name: string): string => {
    if (Object.hasOwn(variables, name)) {
      let known = resolvedVars.get(name);
      if (known === undefined) {
        known = asString(resolve(variables[name], ctx, join(join(path, 1), name)), `Fn::Sub variable "${name}"`, path);
        resolvedVars.set(name, known);
      }
      return known;
    }
    const dot = name.indexOf('.');
    if (dot > 0 && !name.startsWith('AWS::')) {
      const logicalId = name.slice(0, dot);
      const attribute = name.slice(dot + 1);
      return callback(`Fn::GetAtt "${name}"`, path, () => ctx.getAtt(logicalId, attribute));
    }
    const value = resolveRef(name, ctx, path);
    if (value === NO_VALUE) throw new IntrinsicError('Fn::Sub cannot use AWS::NoValue', path);
    return asString(value, `\${${name}}`, path);
  };
  return template.replace(/\$\{([^}]*)\}/g, (_match, name: string) => (name.startsWith('!') ? `\${${name.slice(1)}}` : lookup(name)));
}

function resolveFindInMap(arg: unknown, ctx: IntrinsicContext, path: string): unknown {
  const [mapArg, topArg, secondArg] = args('Fn::FindInMap', arg, 3, path);
  const mapName = asString(resolve(mapArg, ctx, join(path, 0)), 'Fn::FindInMap map name', path);
  const top = asString(resolve(topArg, ctx, join(path, 1)), 'Fn::FindInMap top-level key', path);
  const second = asString(resolve(secondArg, ctx, join(path, 2)), 'Fn::FindInMap second-level key', path);
  const map = ctx.mappings?.[mapName];
  if (!map) throw new IntrinsicError(`Unresolvable reference Fn::FindInMap: no mapping "${mapName}"`, path);
  const level = map[top];
  if (!isRecord(level) || !Object.hasOwn(level, second)) {
    throw new IntrinsicError(`Unresolvable reference Fn::FindInMap: "${mapName}.${top}.${second}" does not exist`, path);
  }
  return level[second];
}

function equalValues(a: unknown, b: unknown): boolean {
  const primitive = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
  if (primitive(a) && primitive(b)) return String(a) === String(b);
  return JSON.stringify(a) === JSON.stringify(b);
}

function resolveFunction(name: string, arg: unknown, ctx: IntrinsicContext, path: string): unknown {
  switch (name) {
    case 'Ref':
      return resolveRef(asString(arg, 'Ref', path), ctx, path);
    case 'Condition':
      return evaluateCondition(asString(arg, 'Condition', path), ctx, path);
    case 'Fn::GetAtt':
      return resolveGetAtt(arg, ctx, path);
    case 'Fn::Sub':
      return resolveSub(arg, ctx, path);
    case 'Fn::Join': {
      const [delimiter, list] = args(name, arg, 2, path);
      const sep = asString(delimiter, 'Fn::Join delimiter', path);
      const items = asList(resolve(list, ctx, join(path, 1)), 'Fn::Join list', path);
      return items.map((item) => asString(item, 'Fn::Join element', path)).join(sep);
    }
    case 'Fn::Select': {
      const [indexArg, listArg] = args(name, arg, 2, path);
      const rawIndex = resolve(indexArg, ctx, join(path, 0));
      const index = Number(rawIndex);
      const list = asList(resolve(listArg, ctx, join(path, 1)), 'Fn::Select list', path);
      if (!Number.isInteger(index) || index < 0 || index >= list.length) {
        throw new IntrinsicError(`Fn::Select index ${JSON.stringify(rawIndex)} is out of range for a list of ${list.length}`, path);
      }
      return list[index];
    }
    case 'Fn::Split': {
      const [delimiter, source] = args(name, arg, 2, path);
      const sep = asString(delimiter, 'Fn::Split delimiter', path);
      return asString(resolve(source, ctx, join(path, 1)), 'Fn::Split source', path).split(sep);
    }
    case 'Fn::If': {
      const [condition, whenTrue, whenFalse] = args(name, arg, 3, path);
      const chosen = evaluateCondition(asString(condition, 'Fn::If condition name', path), ctx, path);
      return chosen ? resolve(whenTrue, ctx, join(path, 1)) : resolve(whenFalse, ctx, join(path, 2));
    }
    case 'Fn::Equals': {
      const [a, b] = args(name, arg, 2, path);
      return equalValues(resolve(a, ctx, join(path, 0)), resolve(b, ctx, join(path, 1)));
    }
    case 'Fn::Not': {
      const [condition] = args(name, arg, 1, path);
      return !asBoolean(resolve(condition, ctx, join(path, 0)), 'Fn::Not argument', path);
    }
    case 'Fn::And':
    case 'Fn::Or': {
      const conditions = args(name, arg, [2, 10], path);
      const values = conditions.map((c, i) => asBoolean(resolve(c, ctx, join(path, i)), `${name} argument`, path));
      return name === 'Fn::And' ? values.every(Boolean) : values.some(Boolean);
    }
    case 'Fn::FindInMap':
      return resolveFindInMap(arg, ctx, path);
    case 'Fn::Base64':
      return Buffer.from(asString(resolve(arg, ctx, path), 'Fn::Base64 argument', path), 'utf8').toString('base64');
    case 'Fn::GetAZs': {
      const region = asString(resolve(arg, ctx, path), 'Fn::GetAZs region', path) || ctx.pseudo['AWS::Region'];
      if (!region) throw new IntrinsicError('Unresolvable reference Fn::GetAZs: no region', path);
      return ['a', 'b', 'c'].map((zone) => `${region}${zone}`);
    }
    default:
      throw new IntrinsicError(`Unsupported intrinsic function ${name}`, path);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Parameters, pseudo parameters and a context built from a template
// ---------------------------------------------------------------------------------------------------------------

/** Parameter values: each parameter's Default, overridden by `given`. Throws for a given name the template does not
 *  declare or a value outside AllowedValues. Parameters with neither are left out (a Ref to them then throws). */
export function parameterValues(template: SamTemplate, given: Record<string, string> = {}): Record<string, string> {
  const declared = template.Parameters ?? {};
  const values: Record<string, string> = {};
  for (const name of Object.keys(given)) {
    if (!Object.hasOwn(declared, name)) throw new Error(`Parameter "${name}" is not declared in the template`);
  }
  for (const [name, parameter] of Object.entries(declared)) {
    let value: string | undefined;
    if (Object.hasOwn(given, name)) value = given[name];
    else if (Array.isArray(parameter.Default)) value = parameter.Default.join(',');
    else if (parameter.Default !== undefined && parameter.Default !== null) value = String(parameter.Default);
    if (value === undefined) continue;
    if (parameter.AllowedValues && !parameter.AllowedValues.map(String).includes(value)) {
      throw new Error(`Parameter "${name}" value "${value}" is not one of ${parameter.AllowedValues.map(String).join(', ')}`);
    }
    values[name] = value;
  }
  return values;
}

/** Pseudo parameters for a local stack (override any of them). */
export function pseudoParameters(overrides: Record<string, string> = {}): Record<string, string> {
  const region = overrides['AWS::Region'] ?? 'us-east-1';
  const accountId = overrides['AWS::AccountId'] ?? '123456789012';
  const stackName = overrides['AWS::StackName'] ?? 'local';
  const partition = overrides['AWS::Partition'] ?? 'aws';
  return {
    'AWS::Region': region,
    'AWS::AccountId': accountId,
    'AWS::StackName': stackName,
    'AWS::Partition': partition,
    'AWS::URLSuffix': partition === 'aws-cn' ? 'amazonaws.com.cn' : 'amazonaws.com',
    'AWS::StackId': `arn:${partition}:cloudformation:${region}:${accountId}:stack/${stackName}/00000000-0000-0000-0000-000000000000`,
    ...overrides,
  };
}

export interface ContextOptions {
  /** Parameter overrides (defaults come from the template). */
  parameters?: Record<string, string>;
  /** Pseudo parameter overrides (see `pseudoParameters`). */
  pseudo?: Record<string, string>;
  ref(logicalId: string): string;
  getAtt(logicalId: string, attribute: string): string;
}

/** An IntrinsicContext for a template: parameter defaults, conditions, mappings and parameter types filled in;
 *  Ref/GetAtt of a logical ID that is not a resource of the template throws without calling the callbacks. */
export function intrinsicContext(template: SamTemplate, options: ContextOptions): IntrinsicContext {
  const resources = template.Resources;
  const requireResource = (logicalId: string, what: string): void => {
    if (!Object.hasOwn(resources, logicalId)) throw new Error(`${what}: "${logicalId}" is not a parameter or resource of the template`);
  };
  return {
    parameters: parameterValues(template, options.parameters),
    pseudo: pseudoParameters(options.pseudo),
    ref(logicalId) {
      requireResource(logicalId, 'Ref');
      return options.ref(logicalId);
    },
    getAtt(logicalId, attribute) {
      requireResource(logicalId, 'Fn::GetAtt');
      return options.getAtt(logicalId, attribute);
    },
    conditions: template.Conditions ?? {},
    mappings: template.Mappings ?? {},
    parameterTypes: Object.fromEntries(Object.entries(template.Parameters ?? {}).map(([name, p]) => [name, p.Type])),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Globals
// ---------------------------------------------------------------------------------------------------------------

/** Properties SAM refuses in Globals.Function. */
const NOT_GLOBAL_FUNCTION_PROPERTIES = ['Role', 'Policies', 'FunctionName', 'Events'];

/** SAM's merge rule: maps merge recursively (local wins), lists concatenate (global first), anything else
 *  (including intrinsic functions and type mismatches) takes the local value. */
export function mergeGlobal(globalValue: unknown, localValue: unknown): unknown {
  const token = (v: unknown) => (Array.isArray(v) ? 'list' : isRecord(v) && !isIntrinsic(v) ? 'map' : 'primitive');
  const g = token(globalValue);
  if (g !== token(localValue) || g === 'primitive') return localValue;
  if (g === 'list') return [...(globalValue as unknown[]), ...(localValue as unknown[])];
  const merged: Record<string, unknown> = { ...(globalValue as Record<string, unknown>) };
  for (const [key, value] of Object.entries(localValue as Record<string, unknown>)) {
    merged[key] = Object.hasOwn(merged, key) ? mergeGlobal(merged[key], value) : value;
  }
  return merged;
}

/** Each AWS::Serverless::Function's effective properties (by logical ID) with Globals.Function merged in,
 *  honouring the IgnoreGlobals resource attribute. */
export function applyGlobals(template: SamTemplate): Record<string, Record<string, unknown>> {
  const globals = template.Globals?.Function ?? {};
  for (const name of NOT_GLOBAL_FUNCTION_PROPERTIES) {
    if (Object.hasOwn(globals, name)) throw new Error(`Globals.Function.${name} is not supported by SAM`);
  }
  const result: Record<string, Record<string, unknown>> = {};
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::Serverless::Function') continue;
    let applicable: Record<string, unknown> = globals;
    const ignore = resource.IgnoreGlobals;
    if (ignore === '*') {
      applicable = {};
    } else if (Array.isArray(ignore)) {
      applicable = { ...globals };
      for (const key of ignore) {
        if (!Object.hasOwn(applicable, key)) throw new Error(`${logicalId}: IgnoreGlobals names "${key}", which is not in Globals.Function`);
        delete applicable[key];
      }
    } else if (ignore !== undefined) {
      throw new Error(`${logicalId}: IgnoreGlobals must be "*" or a list of property names`);
    }
    result[logicalId] = mergeGlobal(applicable, resource.Properties ?? {}) as Record<string, unknown>;
  }
  return result;
}

// HOT templates and environments as Heat reads them: JSON or YAML 1.1 text (timestamps stay
// strings, as Heat's loader makes them), version and section checks, and parameters with their
// types, defaults, parameter_defaults and constraints, converted and validated with Heat's errors.
import { parse as parseYaml } from 'yaml';
import { ApiError, isRecord } from '../state.ts';
import { invalidTemplate } from './functions.ts';

export type Template = Record<string, unknown>;

export interface Environment {
  parameters: Record<string, unknown>;
  parameter_defaults: Record<string, unknown>;
  resource_registry: Record<string, unknown>;
}

export interface ParamSchema {
  type: 'string' | 'number' | 'json' | 'comma_delimited_list' | 'boolean';
  default?: unknown;
  hidden: boolean;
  description?: string;
  label?: string;
  constraints: unknown[];
}

const MAX_TEMPLATE_BYTES = 524288;

const VERSIONS: Record<string, number> = {
  '2013-05-23': 20130523,
  '2014-10-16': 20141016,
  '2015-04-30': 20150430,
  '2015-10-15': 20151015,
  '2016-04-08': 20160408,
  '2016-10-14': 20161014,
  newton: 20161014,
  '2017-02-24': 20170224,
  ocata: 20170224,
  '2017-09-01': 20170901,
  pike: 20170901,
  '2018-03-02': 20180302,
  queens: 20180302,
  '2018-08-31': 20180831,
  rocky: 20180831,
  '2021-04-16': 20210416,
  wallaby: 20210416,
};

const SECTIONS = ['heat_template_version', 'description', 'parameter_groups', 'parameters', 'resources', 'outputs', 'conditions'];

/** Text (JSON or YAML) or an object, as the API accepts a template, environment or file. */
export function parseDocument(input: unknown, what: string): Record<string, unknown> {
  if (isRecord(input)) return input;
  if (typeof input !== 'string') throw invalidTemplate(`The ${what} is not a JSON object or YAML mapping.`, 'HTTPBadRequest');
  if (Buffer.byteLength(input) > MAX_TEMPLATE_BYTES)
    throw new ApiError(
      400,
      `Request limit exceeded: Template size (${Buffer.byteLength(input)} bytes) exceeds maximum allowed size (${MAX_TEMPLATE_BYTES} bytes).`,
      'RequestLimitExceeded',
    );
  let doc: unknown;
  try {
    doc = input.trimStart().startsWith('{')
      ? JSON.parse(input)
      : parseYaml(input, { version: '1.1', customTags: (tags) => tags.filter((t) => typeof t === 'object' && t.tag !== 'tag:yaml.org,2002:timestamp') });
  } catch (err) {
    throw invalidTemplate(`Error parsing template: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`, 'HTTPBadRequest');
  }
  if (doc === null || doc === undefined) return {};
  if (!isRecord(doc)) throw invalidTemplate(`The ${what} is not a JSON object or YAML mapping.`, 'HTTPBadRequest');
  return doc;
}

/** The HOT version number of a template, with Heat's complaints about anything else. */
export function templateVersion(t: Template): number {
  if ('HeatTemplateFormatVersion' in t || 'AWSTemplateFormatVersion' in t) {
    throw invalidTemplate('The template version is invalid: the simulator supports HOT templates (heat_template_version) only', 'InvalidTemplateVersion');
  }
  const raw = t.heat_template_version;
  if (raw === undefined) throw invalidTemplate('Template format version not found.', 'InvalidTemplateVersion');
  const key = raw instanceof Date ? raw.toISOString().slice(0, 10) : String(raw);
  const version = VERSIONS[key];
  if (version === undefined) {
    throw invalidTemplate(
      `The template version is invalid: "heat_template_version: ${key}". "heat_template_version" should be one of: ${Object.keys(VERSIONS).join(', ')}`,
      'InvalidTemplateVersion',
    );
  }
  for (const section of Object.keys(t)) {
    if (!SECTIONS.includes(section) || (section === 'conditions' && version < 20161014))
      throw invalidTemplate(`The template section is invalid: ${section}`, 'InvalidTemplateSection');
  }
  for (const section of ['parameters', 'resources', 'outputs', 'conditions']) {
    const value = t[section];
    if (value !== undefined && value !== null && !isRecord(value)) throw invalidTemplate(`Each ${section.replace(/s$/, '')} must be a map`);
  }
  return version;
}

export function parseEnvironment(input: unknown): Environment {
  const doc = input === undefined || input === null ? {} : parseDocument(input, 'environment');
  for (const key of Object.keys(doc)) {
    if (!['parameters', 'parameter_defaults', 'resource_registry', 'encrypted_param_names', 'event_sinks', 'parameter_merge_strategies'].includes(key)) {
      throw invalidTemplate(`environment has wrong section "${key}"`, 'InvalidEnvironment');
    }
  }
  const map = (v: unknown) => (isRecord(v) ? { ...v } : {});
  return { parameters: map(doc.parameters), parameter_defaults: map(doc.parameter_defaults), resource_registry: map(doc.resource_registry) };
}

export function mergeEnvironments(base: Environment, overlay: Environment): Environment {
  return {
    parameters: { ...base.parameters, ...overlay.parameters },
    parameter_defaults: { ...base.parameter_defaults, ...overlay.parameter_defaults },
    resource_registry: { ...base.resource_registry, ...overlay.resource_registry },
  };
}

export function paramSchemas(t: Template): Map<string, ParamSchema> {
  const out = new Map<string, ParamSchema>();
  const params = isRecord(t.parameters) ? t.parameters : {};
  for (const [name, raw] of Object.entries(params)) {
    if (!isRecord(raw)) throw invalidTemplate(`Invalid parameter schema for ${name}: must be a map`, 'InvalidSchemaError');
    if (raw.type === undefined) throw invalidTemplate(`Missing parameter type for parameter: ${name}`, 'InvalidSchemaError');
    const type = String(raw.type);
    const canonical = ({ string: 'string', number: 'number', json: 'json', comma_delimited_list: 'comma_delimited_list', boolean: 'boolean' } as const)[
      type as 'string'
    ];
    if (!canonical) throw invalidTemplate(`Invalid type (${type})`, 'InvalidSchemaError');
    for (const key of Object.keys(raw)) {
      if (!['type', 'default', 'hidden', 'description', 'label', 'constraints', 'immutable', 'tags'].includes(key))
        throw invalidTemplate(`Invalid key '${key}' for parameter (${name})`, 'InvalidSchemaError');
    }
    out.set(name, {
      type: canonical,
      ...('default' in raw ? { default: raw.default } : {}),
      hidden: raw.hidden === true,
      ...(typeof raw.description === 'string' ? { description: raw.description } : {}),
      ...(typeof raw.label === 'string' ? { label: raw.label } : {}),
      constraints: Array.isArray(raw.constraints) ? raw.constraints : [],
    });
  }
  return out;
}

const TRUE = ['1', 't', 'true', 'on', 'y', 'yes'];
const FALSE = ['0', 'f', 'false', 'off', 'n', 'no'];

/** Converts a value to a parameter's type, as Heat does for user input and defaults. */
export function convertParam(name: string, schema: ParamSchema, value: unknown): unknown {
  const bad = (why: string) => invalidTemplate(`Parameter '${name}' is invalid: ${why}`);
  switch (schema.type) {
    case 'string':
      if (typeof value === 'string') return value;
      if (typeof value === 'number' || typeof value === 'boolean') return String(value);
      if (value === null) return '';
      throw bad(`Value must be a string; got ${JSON.stringify(value)}`);
    case 'number': {
      if (typeof value === 'number') return value;
      if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
      throw bad(`could not convert string to float: '${String(value)}'`);
    }
    case 'boolean': {
      if (typeof value === 'boolean') return value;
      const text = String(value).toLowerCase();
      if (TRUE.includes(text)) return true;
      if (FALSE.includes(text)) return false;
      throw bad(`Unrecognized value "${String(value)}", acceptable values are: true, false.`);
    }
    case 'json': {
      if (isRecord(value) || Array.isArray(value)) return value;
      if (typeof value === 'string') {
        if (value === '') return {};
        try {
          const parsed: unknown = JSON.parse(value);
          if (isRecord(parsed) || Array.isArray(parsed)) return parsed;
        } catch {
          // fall through
        }
        throw bad(`Value must be valid JSON: ${value}`);
      }
      throw bad(`Value must be valid JSON: ${JSON.stringify(value)}`);
    }
    case 'comma_delimited_list': {
      if (Array.isArray(value)) return value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
      if (typeof value === 'string') return value === '' ? [] : value.split(',').map((v) => v.trim());
      throw bad(`Value must be a comma-delimited list string: ${JSON.stringify(value)}`);
    }
  }
}

/** The string Heat shows for a parameter value in a stack body. */
export function showParam(schema: ParamSchema | undefined, value: unknown): string {
  if (schema?.hidden) return '******';
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (Array.isArray(value) && schema?.type === 'comma_delimited_list') return value.join(',');
  if (typeof value === 'number') return String(value);
  return pythonJson(value);
}

/** json.dumps with Python's default separators, which is how Heat shows json parameters. */
function pythonJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  if (isRecord(value))
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pythonJson(v)}`)
      .join(', ')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** Checks Heat's parameter constraints; `custom` answers custom_constraint lookups (glance.image...). */
export function checkConstraints(name: string, schema: ParamSchema, value: unknown, custom: (constraint: string, value: unknown) => string | undefined): void {
  for (const c of schema.constraints) {
    if (!isRecord(c)) continue;
    const description = typeof c.description === 'string' ? c.description : undefined;
    const fail = (why: string) => invalidTemplate(`Parameter '${name}' is invalid: ${description ?? why}`);
    if (Array.isArray(c.allowed_values) && !c.allowed_values.some((v) => String(v) === String(value))) {
      throw fail(`"${String(value)}" is not an allowed value [${c.allowed_values.map(String).join(', ')}]`);
    }
    if (isRecord(c.range) && typeof value === 'number') {
      const min = typeof c.range.min === 'number' ? c.range.min : undefined;
      const max = typeof c.range.max === 'number' ? c.range.max : undefined;
      if ((min !== undefined && value < min) || (max !== undefined && value > max))
        throw fail(`${value} is out of range (min: ${min ?? 'None'}, max: ${max ?? 'None'})`);
    }
    if (isRecord(c.length)) {
      const len = typeof value === 'string' || Array.isArray(value) ? value.length : isRecord(value) ? Object.keys(value).length : 0;
      const min = typeof c.length.min === 'number' ? c.length.min : undefined;
      const max = typeof c.length.max === 'number' ? c.length.max : undefined;
      if ((min !== undefined && len < min) || (max !== undefined && len > max))
        throw fail(`length (${len}) is out of range (min: ${min ?? 'None'}, max: ${max ?? 'None'})`);
    }
    if (typeof c.allowed_pattern === 'string' && typeof value === 'string') {
      if (!new RegExp(`^(?:${c.allowed_pattern})$`).test(value)) throw fail(`"${value}" does not match pattern "${c.allowed_pattern}"`);
    }
    if (typeof c.custom_constraint === 'string') {
      const problem = custom(c.custom_constraint, value);
      if (problem) throw fail(`Error validating value '${String(value)}': ${problem}`);
    }
  }
}

/**
 * The typed parameter values of a stack: user values (environment parameters, then the API's),
 * else parameter_defaults, else the template default; missing -> UserParameterMissing,
 * undeclared -> UnknownUserParameter.
 */
export function resolveParams(
  t: Template,
  user: Record<string, unknown>,
  env: Environment,
  custom: (constraint: string, value: unknown) => string | undefined,
  strictUnknown = true,
): Map<string, unknown> {
  const schemas = paramSchemas(t);
  const given = { ...env.parameters, ...user };
  if (strictUnknown) {
    for (const name of Object.keys(given)) {
      if (!schemas.has(name)) throw invalidTemplate(`The Parameter (${name}) was not defined in template.`, 'UnknownUserParameter');
    }
  }
  const out = new Map<string, unknown>();
  for (const [name, schema] of schemas) {
    let value: unknown;
    if (name in given) value = given[name];
    else if (name in env.parameter_defaults) value = env.parameter_defaults[name];
    else if ('default' in schema) value = schema.default;
    else throw invalidTemplate(`The Parameter (${name}) was not provided.`, 'UserParameterMissing');
    const converted = convertParam(name, schema, value);
    checkConstraints(name, schema, converted, custom);
    out.set(name, converted);
  }
  return out;
}

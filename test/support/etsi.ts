// Test support: validates response bodies against the official ETSI NFV SOL002/SOL003/SOL005 V3.7.1 OpenAPI files
// in spec/etsi (dereferenced with json-schema-ref-parser, compiled with Ajv; both cached for the whole test run),
// with in-memory corrections where the YAML contradicts the normative NOTEs it carries (ETSI_SCHEMA_CORRECTIONS).

import { AssertionError } from 'node:assert';
import { isIP } from 'node:net';
import { fileURLToPath } from 'node:url';
import { dereference } from '@apidevtools/json-schema-ref-parser';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';

export type EtsiApi =
  | 'vnflcm'
  | 'vnflcm-notification'
  | 'vnfpkgm'
  | 'vnfpkgm-notification'
  | 'vnfpkgm-sol003'
  | 'grant'
  | 'lcm-coordination'
  | 'vnffm'
  | 'vnffm-notification'
  | 'vnfpm'
  | 'vnfpm-notification';

const SOL003 = 'nfv-sol002-sol003/SOL003';
const SOL002 = 'nfv-sol002-sol003/SOL002';
const SOL005 = 'nfv-sol005/SOL005';

/** Per API: its OpenAPI file, then the definition files searched (in order) by `assertEtsiSchema`. */
export const ETSI_API_FILES: Record<EtsiApi, { openapi: string; definitions: string[] }> = {
  vnflcm: {
    openapi: `${SOL003}/VNFLifecycleManagement/VNFLifecycleManagement.yaml`,
    definitions: [`${SOL003}/VNFLifecycleManagement/definitions/SOL003VNFLifecycleManagement_def.yaml`, `${SOL003}/General_Definitions/SOL003_def.yaml`],
  },
  'vnflcm-notification': {
    openapi: `${SOL003}/VNFLifecycleManagementNotification/VNFLifecycleManagementNotification.yaml`,
    definitions: [
      `${SOL003}/VNFLifecycleManagementNotification/definitions/SOL003VNFLifecycleManagementNotification_def.yaml`,
      `${SOL003}/General_Definitions/SOL003_def.yaml`,
    ],
  },
  vnfpkgm: {
    openapi: `${SOL005}/VNFPackageManagement/VNFPackageManagement.yaml`,
    definitions: [`${SOL005}/VNFPackageManagement/definitions/SOL005VNFPackageManagement_def.yaml`, `${SOL005}/definitions/SOL005_def.yaml`],
  },
  // SOL005 publishes no file for its package notifications (9.5.2.8-9); the SOL003 one defines the same
  // VnfPackageOnboardingNotification / VnfPackageChangeNotification / PkgmLinks (and also requires vnfmInfo).
  'vnfpkgm-notification': {
    openapi: `${SOL003}/VNFPackageManagementNotification/VNFPackageManagementNotification.yaml`,
    definitions: [
      `${SOL003}/VNFPackageManagementNotification/definitions/SOL003VNFPackageManagementNotification_def.yaml`,
      `${SOL003}/General_Definitions/SOL003_def.yaml`,
    ],
  },
  'vnfpkgm-sol003': {
    openapi: `${SOL003}/VNFPackageManagement/VNFPackageManagement.yaml`,
    definitions: [`${SOL003}/VNFPackageManagement/definitions/SOL003VNFPackageManagement_def.yaml`, `${SOL003}/General_Definitions/SOL003_def.yaml`],
  },
  grant: {
    openapi: `${SOL003}/VNFLifecycleOperationGranting/VNFLifecycleOperationGranting.yaml`,
    definitions: [
      `${SOL003}/VNFLifecycleOperationGranting/definitions/SOL003VNFLifecycleOperationGranting_def.yaml`,
      `${SOL003}/General_Definitions/SOL003_def.yaml`,
    ],
  },
  vnffm: {
    openapi: `${SOL003}/VNFFaultManagement/VNFFaultManagement.yaml`,
    definitions: [`${SOL003}/VNFFaultManagement/definitions/SOL003VNFFaultManagement_def.yaml`, `${SOL003}/General_Definitions/SOL003_def.yaml`],
  },
  'vnffm-notification': {
    openapi: `${SOL003}/VNFFaultManagementNotification/VNFFaultManagementNotification.yaml`,
    definitions: [
      `${SOL003}/VNFFaultManagementNotification/definitions/SOL003VNFFaultManagementNotification_def.yaml`,
      `${SOL003}/General_Definitions/SOL003_def.yaml`,
    ],
  },
  vnfpm: {
    openapi: `${SOL003}/VNFPerformanceManagement/VNFPerformanceManagement.yaml`,
    definitions: [`${SOL003}/VNFPerformanceManagement/definitions/SOL003VNFPerformanceManagement_def.yaml`, `${SOL003}/General_Definitions/SOL003_def.yaml`],
  },
  'vnfpm-notification': {
    openapi: `${SOL003}/VNFPerformanceManagementNotification/VNFPerformanceManagementNotification.yaml`,
    definitions: [
      `${SOL003}/VNFPerformanceManagementNotification/definitions/SOL003VNFPerformanceManagementNotification_def.yaml`,
      `${SOL003}/General_Definitions/SOL003_def.yaml`,
    ],
  },
  'lcm-coordination': {
    openapi: `${SOL002}/VNFLCMCoordination/VNFLCMCoordination.yaml`,
    definitions: [`${SOL002}/VNFLCMCoordination/definitions/SOL002VNFLCMCoordination_def.yaml`, `${SOL002}/General_Definitions/SOL002_def.yaml`],
  },
};

type JsonSchema = Record<string, unknown>;

interface OpenApiResponse {
  description?: string;
  content?: Record<string, { schema?: JsonSchema }>;
}

interface OpenApiDocument {
  servers?: Array<{ url: string }>;
  paths: Record<string, Record<string, { responses?: Record<string, OpenApiResponse> } | unknown>>;
}

// ---------------------------------------------------------------------------------------------------------------
// Caches: dereferenced documents (by file), compiled validators (by schema object), one Ajv instance
// ---------------------------------------------------------------------------------------------------------------

const documents = new Map<string, Promise<Record<string, unknown>>>();
const compiled = new WeakMap<object, ValidateFunction>();
let ajvInstance: Ajv | undefined;

function load(file: string): Promise<Record<string, unknown>> {
  let document = documents.get(file);
  if (!document) {
    const path = fileURLToPath(new URL(`../../spec/etsi/${file}`, import.meta.url));
    // No circular $refs exist in these files today; "ignore" keeps any future one as a $ref instead of an
    // object cycle that Ajv could not compile.
    document = (dereference(path, { dereference: { circular: 'ignore' } }) as Promise<Record<string, unknown>>).then((doc) => {
      correctSchemas(doc);
      return doc;
    });
    documents.set(file, document);
    document.catch(() => documents.delete(file));
  }
  return document;
}

// ---------------------------------------------------------------------------------------------------------------
// Corrections: the YAML encodes some NOTEs wrongly, so that bodies that follow the NOTE (and the Tacker reference
// VNFM) fail. Each correction is applied wherever the (dereferenced, possibly copied) schema appears.
// ---------------------------------------------------------------------------------------------------------------

/** What is corrected in memory (the files under spec/etsi stay as published). */
export const ETSI_SCHEMA_CORRECTIONS: readonly string[] = [
  'VnfLcmOpOcc: `oneOf` [changedInfo, modificationsTriggeredByVnfPkgChange] made every occurrence without either ' +
    '(STARTING, PROCESSING, most operations) invalid; NOTE 2 says "not more than one" -> `not` both.',
  'IpOverEthernetAddressInfo / IpOverEthernetAddressData: the "exactly one of addresses|addressRange" ' +
    '(fixedAddresses|numDynamicAddresses|addressRange) `oneOf` sits on the object instead of on ipAddresses items ' +
    '(and names "ipAddressRange" for the property "addressRange") -> moved onto the items.',
  'VnfInstanceSubscriptionFilter / PkgmNotificationsFilter: alternatives that "should not be used both" were ' +
    'encoded as required (`oneOf`, and "vnfdId" for the property "vnfdIds"), refusing e.g. a filter with only ' +
    'notificationTypes or vnfdIds -> at most one of each group.',
  'List/single mix-ups in response schemas (the clauses say otherwise): vnflcm GET /vnf_lcm_op_occs 200 and ' +
    'GET /subscriptions 200, vnffm GET /alarms 200 and GET /subscriptions 200 are lists (the YAML has one item); vnflcm GET /vnf_snapshots/{vnfSnapshotInfoId} 200 ' +
    'and vnfpkgm-sol003 POST /subscriptions 201 are single items (the YAML has arrays).',
  'Responses whose description says "The response body shall be empty." but that declare content (e.g. vnflcm ' +
    'PATCH /vnf_instances/{vnfInstanceId} 202, SOL003 5.4.3.3.4) -> no body.',
  'PkgmNotificationsFilter (SOL005): notificationTypes is a single string, but SOL005 9.5.3.4 gives it ' +
    'cardinality 0..N (as the SOL003 copy of the type has it) -> an array of those strings; the alternatives are ' +
    'corrected as above also in the copies inside PkgmSubscription, whose own description hides the NOTE.',
  'Checksum (SOL003 General_Definitions): a placeholder string ("#no definition found"), where SOL003 10.5.3.3 ' +
    'defines the structure {algorithm, hash}, both required (as SOL005 9.5.3.5 does) -> that object.',
  'PkgmSubscription (SOL005): id refers to Uri (format uri), but SOL005 9.5.2.7 makes it an Identifier -> a string.',
  'VnfPackageSoftwareImageInfo: imagePath is listed as required, but its own description (SOL005 9.5.3.2) says it ' +
    'shall be absent for an external image the NFVO has not downloaded -> not required.',
  'VnfSnapshot / VnfcSnapshotInfo (SOL003 5.5.2.21, 5.5.3.19): required names older drafts used that the properties ' +
    'no longer have (triggeredAt, vnfInfo, vnfcResourceId) -> the V3.7.1 names (creationStartedAt, vnfInstance, ' +
    'vnfcResourceInfoId); vnfInstance and vnfcSnapshots not required, as lists of VNF snapshots leave them out by default ' +
    '(exclude_default_vnf_snapshots, SOL003 5.4.23.3.2).',
  'PmJob (SOL003 6.5.2.7): reports is one object, but the clause gives it cardinality 0..N -> an array of those objects.',
  'PerformanceReport (SOL003 6.5.2.10): entries require "performanceValue", a name the properties do not have -> ' +
    'performanceValues, as the clause names it.',
  'Measured values (PerformanceReport performanceValues[].value, ThresholdCrossedNotification.performanceValue): ' +
    '"type: object", where the description says the type is the measurement unit\'s (IFA027 7.2: a number) -> any type.',
  'Unsigned integers written as "minimum 0, maximum 1024" (the YAML\'s own TODO: PmJobCriteria collectionPeriod and ' +
    'reportingPeriod, PmJob reports fileSize, ThresholdCriteria hysteresis) -> no maximum.',
  'PmJobModifications / ThresholdModifications: "at least one of" (NOTE: in request bodies) is a oneOf, which also ' +
    'refuses a response to a PATCH of authentication only (authentication is never in responses) -> not in responses.',
];

/** Responses whose YAML schema is an item where the API returns a list ('list') or the reverse ('item'). */
const RESPONSE_SHAPE_CORRECTIONS: Record<string, 'list' | 'item'> = {
  'vnflcm GET /vnf_lcm_op_occs 200': 'list',
  'vnflcm GET /subscriptions 200': 'list',
  'vnffm GET /alarms 200': 'list',
  'vnffm GET /subscriptions 200': 'list',
  'vnflcm GET /vnf_snapshots/{vnfSnapshotInfoId} 200': 'item',
  'vnfpkgm-sol003 POST /subscriptions 201': 'item',
};

const reshaped = new WeakMap<object, JsonSchema>();

function correctShape(key: string, schema: JsonSchema): JsonSchema {
  const shape = RESPONSE_SHAPE_CORRECTIONS[key];
  if (!shape) return schema;
  if (shape === 'list' && schema.type === 'array') return schema;
  if (shape === 'item' && (schema.type !== 'array' || !isRecord(schema.items))) return schema;
  let corrected = reshaped.get(schema);
  if (!corrected) {
    corrected = shape === 'list' ? { type: 'array', items: schema } : (schema.items as JsonSchema);
    reshaped.set(schema, corrected);
  }
  return corrected;
}

type Schema = Record<string, unknown>;

function requiredOnly(branch: unknown): string[] | undefined {
  if (!isRecord(branch) || Object.keys(branch).length !== 1 || !Array.isArray(branch.required)) return undefined;
  return branch.required.every((n): n is string => typeof n === 'string') ? branch.required : undefined;
}

/** Names of required-only branches ([{required:[a]}, {required:[b]}] -> [a, b]), or undefined. */
function requiredGroup(branches: unknown): string[] | undefined {
  if (!Array.isArray(branches) || branches.length < 2) return undefined;
  const names = branches.map(requiredOnly);
  return names.every((n) => n?.length === 1) ? names.map((n) => n![0]!) : undefined;
}

function propertyName(schema: Schema, name: string): string {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  if (name in properties) return name;
  if (`${name}s` in properties) return `${name}s`;
  if (name.startsWith('ip') && name.slice(2, 3).toUpperCase() === name.slice(2, 3)) {
    const unprefixed = name.slice(2, 3).toLowerCase() + name.slice(3);
    if (unprefixed in properties) return unprefixed;
  }
  return name;
}

function atMostOne(names: string[]): Schema {
  const pairs: Schema[] = [];
  for (let i = 0; i < names.length; i++) for (let j = i + 1; j < names.length; j++) pairs.push({ required: [names[i], names[j]] });
  return { not: pairs.length === 1 ? pairs[0] : { anyOf: pairs } };
}

const CHECKSUM = { type: 'object', required: ['algorithm', 'hash'], properties: { algorithm: { type: 'string' }, hash: { type: 'string' } } };

function correctSchema(schema: Schema): void {
  const description = typeof schema.description === 'string' ? schema.description.replace(/\s+/g, ' ') : '';
  const properties = isRecord(schema.properties) ? schema.properties : undefined;

  // SOL003 6.5: PM's measured values, unsigned integers, report lists and modification responses.
  if (correctPmSchema(schema, description)) return;

  // SOL003's Checksum: a placeholder string in the YAML, the structure of 10.5.3.3 in the clause; also
  // where a $ref with its own description made a copy of it (a "checksum" property).
  const checksum = properties?.checksum;
  const placeholder = (candidate: Schema) => candidate.type === 'string' && /^Che(c)?ksum\b/.test(String(candidate.description ?? '').trim());
  if (properties && isRecord(checksum) && placeholder(checksum)) properties.checksum = { description: checksum.description, ...CHECKSUM };
  if (placeholder(schema) && description.trim() === 'Cheksum description') {
    Object.assign(schema, CHECKSUM);
    return;
  }

  // A software image's imagePath is absent for an image outside the package (SOL005 9.5.3.2).
  if (properties && 'imagePath' in properties && 'imageUri' in properties && Array.isArray(schema.required) && schema.required.includes('imagePath')) {
    schema.required = schema.required.filter((name) => name !== 'imagePath');
    return;
  }

  // PkgmNotificationsFilter (SOL005 9.5.3.4), also where a $ref with its own description copied it (so
  // the NOTE's text is gone): notificationTypes is 0..N, one string in the YAML; the alternatives at most one.
  const types = properties?.notificationTypes;
  if (properties && isRecord(types) && types.type === 'string' && Array.isArray(types.enum) && types.enum.includes('VnfPackageOnboardingNotification')) {
    const { description: typesDescription, ...item } = types;
    properties.notificationTypes = { description: typesDescription, type: 'array', items: item };
    const alternatives = requiredGroup(schema.oneOf);
    if (alternatives) {
      delete schema.oneOf;
      schema.allOf = [...(Array.isArray(schema.allOf) ? schema.allOf : []), atMostOne(alternatives)];
    }
    return;
  }

  // VnfSnapshot and VnfcSnapshotInfo require attributes under names their properties no longer have.
  if (properties && Array.isArray(schema.required) && schema.required.includes('triggeredAt') && !('triggeredAt' in properties)) {
    const renamed: Record<string, string> = { triggeredAt: 'creationStartedAt', vnfInfo: 'vnfInstance', vnfcResourceId: 'vnfcResourceInfoId' };
    schema.required = schema.required
      .map((name) => (typeof name === 'string' && renamed[name] && !(name in properties) ? renamed[name] : name))
      .filter((name) => name !== 'vnfInstance' && name !== 'vnfcSnapshots');
    return;
  }

  // PkgmSubscription.id: an Identifier in SOL005 9.5.2.7, a Uri in the YAML.
  const id = properties?.id;
  if (properties && isRecord(id) && id.format === 'uri' && /Identifier of this "Individual subscription" resource/.test(String(id.description))) {
    properties.id = { description: id.description, type: 'string' };
  }

  // A oneOf over properties that only ipAddresses items have: it belongs on the items.
  const oneOfNames = requiredGroup(schema.oneOf);
  const ipItems =
    properties && isRecord(properties.ipAddresses) && isRecord(properties.ipAddresses.items) ? (properties.ipAddresses.items as Schema) : undefined;
  if (oneOfNames && ipItems && properties && oneOfNames.every((n) => !(n in properties))) {
    delete schema.oneOf;
    ipItems.oneOf = oneOfNames.map((n) => ({ required: [propertyName(ipItems, n)] }));
    return;
  }

  // Optional alternatives ("not more than one", "are alternatives ... should not be used both"): at most one.
  // The anyOf-of-oneOfs shape is corrected even where a $ref's sibling description replaced the NOTE
  // text in a dereferenced copy (LccnSubscription.filter.vnfInstanceSubscriptionFilter).
  if (!properties) return;
  const anyOfOneOfs = Array.isArray(schema.anyOf) && schema.anyOf.every((b) => isRecord(b) && Object.keys(b).length === 1 && requiredGroup(b.oneOf));
  const noted = /not more than one of|are alternatives/i.test(description);
  if (!noted && !anyOfOneOfs) return;
  const groups: string[][] = [];
  if (oneOfNames && noted) groups.push(oneOfNames);
  else if (anyOfOneOfs) {
    for (const branch of schema.anyOf as Schema[]) groups.push(requiredGroup(branch.oneOf)!);
  } else return;
  const mapped = groups.map((g) => g.map((n) => propertyName(schema, n)));
  if (!mapped.every((g) => g.every((n) => n in properties && (!noted || description.includes(n))))) return;
  if (oneOfNames) delete schema.oneOf;
  else delete schema.anyOf;
  schema.allOf = [...(Array.isArray(schema.allOf) ? schema.allOf : []), ...mapped.map(atMostOne)];
}

/** The PM corrections (ETSI_SCHEMA_CORRECTIONS); true when `schema` was one of the corrected. */
function correctPmSchema(schema: Schema, description: string): boolean {
  const properties = isRecord(schema.properties) ? schema.properties : undefined;
  // Unsigned integers (and the hysteresis) with the YAML's makeshift maximum of 1024.
  if (schema.maximum === 1024 && schema.minimum === 0) delete schema.maximum;
  // A measured value: the measurement unit's type, not an object.
  if (schema.type === 'object' && /shall correspond to the related\s+"?Measurement Unit"?/i.test(description) && !properties) {
    delete schema.type;
    return true;
  }
  if (!properties) return false;
  // PmJob.reports: 0..N.
  const reports = properties.reports;
  if (isRecord(reports) && reports.type === 'object' && isRecord(reports.properties) && 'readyTime' in reports.properties) {
    const { description: reportsDescription, ...item } = reports;
    properties.reports = { description: reportsDescription, type: 'array', items: item };
    return true;
  }
  // PerformanceReport entries: performanceValues.
  if (Array.isArray(schema.required) && schema.required.includes('performanceValue') && 'performanceValues' in properties) {
    schema.required = schema.required.map((name) => (name === 'performanceValue' ? 'performanceValues' : name));
    return true;
  }
  // PmJobModifications / ThresholdModifications: the NOTE is about request bodies.
  if (/at least one of the attributes defined in this type shall be present in request bodies/i.test(description) && requiredGroup(schema.oneOf)) {
    delete schema.oneOf;
    return true;
  }
  return false;
}

function correctSchemas(document: unknown): void {
  const seen = new WeakSet<object>();
  const visit = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    if (Array.isArray(value)) {
      value.forEach(visit);
      return;
    }
    const schema = value as Schema;
    correctSchema(schema);
    Object.values(schema).forEach(visit);
  };
  visit(document);
}

const MAC = /^(?:[0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$|^(?:[0-9A-Fa-f]{2}[:-]){7}[0-9A-Fa-f]{2}$/;

function ajv(): Ajv {
  if (ajvInstance) return ajvInstance;
  // strict off: OpenAPI annotations (example, readOnly, ...) are not JSON Schema keywords. validateSchema off: the
  // schemas are OpenAPI 3.0 flavoured, not meta-schema valid draft-07. OpenAPI's `nullable: true` is understood
  // by Ajv natively (with `type`), so it needs no extra handling.
  // verbose: errors carry their schema, to say what a failing `not` forbids.
  const instance = new Ajv({ strict: false, allErrors: true, validateSchema: false, logger: false, verbose: true });
  ajvFormats.default(instance);
  // ETSI's own formats, unknown to ajv-formats.
  instance.addFormat('IP', (value: string) => isIP(value) !== 0);
  instance.addFormat('MAC', MAC);
  // ProblemDetails.type/instance use "URI" (upper case): a URI reference per RFC 3986.
  instance.addFormat('URI', ajvFormats.default.get('uri-reference'));
  // ajv-formats' "url" refuses http://localhost, private addresses (127.0.0.1, 10.x, 192.168.x) and relative URIs;
  // SOL005 Link.href is "url" and explicitly may be relative, and a local VNFM lives on localhost.
  instance.addFormat('url', (value: string) => URL.canParse(value) || /^\/(?!\/)\S*$/.test(value));
  ajvInstance = instance;
  return instance;
}

function validatorFor(schema: JsonSchema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv().compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

// ---------------------------------------------------------------------------------------------------------------
// Lookup
// ---------------------------------------------------------------------------------------------------------------

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The OpenAPI path key for `path`: the key itself, a concrete path matching a templated key
 *  (e.g. /vnf_instances/123 -> /vnf_instances/{vnfInstanceId}), optionally prefixed with the API root
 *  (e.g. /vnflcm/v2/vnf_instances). */
function findPathKey(document: OpenApiDocument, path: string): string | undefined {
  const keys = Object.keys(document.paths);
  const candidates = [path];
  const base = document.servers?.[0]?.url ? new URL(document.servers[0].url).pathname.replace(/\/$/, '') : '';
  if (base && path.startsWith(`${base}/`)) candidates.push(path.slice(base.length));
  const apiRoot = /^\/[^/]+\/v\d+(\/.*)$/.exec(path);
  if (apiRoot) candidates.push(apiRoot[1]!);
  // SOL003 VNFPerformanceManagement names the resource /api-versions (every other file /api_versions).
  if (candidates.some((candidate) => candidate.endsWith('/api_versions'))) candidates.push('/api-versions');
  for (const candidate of candidates) {
    if (keys.includes(candidate)) return candidate;
    const match = keys.find((key) =>
      new RegExp(
        `^${key
          .split(/\{[^}]+\}/)
          .map(escapeRegExp)
          .join('[^/]+')}$`,
      ).test(candidate),
    );
    if (match) return match;
  }
  return undefined;
}

const JSON_MEDIA_TYPES = ['application/json', 'application/problem+json'];

function jsonSchemaOf(response: OpenApiResponse): JsonSchema | undefined {
  const content = response.content ?? {};
  for (const type of JSON_MEDIA_TYPES) if (content[type]?.schema) return content[type].schema;
  const other = Object.keys(content).find((type) => (type.endsWith('+json') || type === 'application/*') && content[type]?.schema);
  return other ? content[other]!.schema : undefined;
}

function describeErrors(errors: ErrorObject[] | null | undefined): string {
  const lines = (errors ?? []).map((error) => {
    const params = error.params as Record<string, unknown>;
    let detail = error.message ?? error.keyword;
    if (error.keyword === 'additionalProperties') detail += ` ("${String(params.additionalProperty)}")`;
    if (error.keyword === 'enum') detail += ` (${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')})`;
    if (error.keyword === 'not') detail = `must NOT match ${JSON.stringify(error.schema)}`;
    return `  ${error.instancePath || '/'}: ${detail}`;
  });
  const unique = [...new Set(lines)];
  return unique.length > 40 ? [...unique.slice(0, 40), `  ... and ${unique.length - 40} more`].join('\n') : unique.join('\n');
}

function preview(body: unknown): string {
  const text = JSON.stringify(body) ?? String(body);
  return text.length > 600 ? `${text.slice(0, 600)}...` : text;
}

function check(schema: JsonSchema, body: unknown, what: string): void {
  const validate = validatorFor(schema);
  if (validate(body)) return;
  throw new AssertionError({
    message: `${what}: the body does not match the ETSI schema:\n${describeErrors(validate.errors)}\nbody: ${preview(body)}`,
    actual: body,
    operator: 'etsiSchema',
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------------------------

/** Asserts that `body` is what the ETSI OpenAPI file of `api` documents for `status` of `method path`
 *  (`path` as in the OpenAPI paths, e.g. "/vnf_instances/{vnfInstanceId}"; a concrete path also matches).
 *  A response documented without content requires an empty body (undefined, null or ""). Throws an AssertionError
 *  listing the Ajv errors (instance path + message) when the body does not validate. */
export async function assertEtsiResponse(api: EtsiApi, path: string, method: string, status: number, body: unknown): Promise<void> {
  const files = ETSI_API_FILES[api];
  if (!files) throw new Error(`Unknown ETSI API "${String(api)}"`);
  const document = (await load(files.openapi)) as unknown as OpenApiDocument;
  const key = findPathKey(document, path);
  const what = `${api} ${method.toUpperCase()} ${path} ${status}`;
  if (!key) throw new AssertionError({ message: `${what}: no such path in ${files.openapi}`, operator: 'etsiSchema' });
  const operation = document.paths[key]?.[method.toLowerCase()];
  const responses = isRecord(operation) && isRecord(operation.responses) ? (operation.responses as Record<string, OpenApiResponse>) : undefined;
  if (!responses) throw new AssertionError({ message: `${what}: ${method.toUpperCase()} is not documented for ${key}`, operator: 'etsiSchema' });
  const response = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
  if (!response) {
    throw new AssertionError({
      message: `${what}: status ${status} is not documented (documented: ${Object.keys(responses).join(', ')})`,
      operator: 'etsiSchema',
    });
  }
  const declaredEmpty = /the response body shall be empty/i.test((response.description ?? '').replace(/\s+/g, ' '));
  if (!response.content || Object.keys(response.content).length === 0 || declaredEmpty) {
    if (body === undefined || body === null || body === '') return;
    throw new AssertionError({ message: `${what}: the response has no body in the ETSI API, got ${preview(body)}`, actual: body, operator: 'etsiSchema' });
  }
  const schema = jsonSchemaOf(response);
  if (!schema) {
    throw new AssertionError({
      message: `${what}: no JSON content is documented (content types: ${Object.keys(response.content).join(', ')})`,
      operator: 'etsiSchema',
    });
  }
  check(correctShape(`${api} ${method.toUpperCase()} ${key} ${status}`, schema), body, what);
}

/** Asserts that `body` validates against a named ETSI data type of `api` (e.g. "VnfInstance", "VnfLcmOpOcc",
 *  "ProblemDetails", "ApiVersionInformation"), looked up in the API's definitions, then its general definitions. */
export async function assertEtsiSchema(api: EtsiApi, definitionName: string, body: unknown): Promise<void> {
  const files = ETSI_API_FILES[api];
  if (!files) throw new Error(`Unknown ETSI API "${String(api)}"`);
  for (const file of files.definitions) {
    const document = await load(file);
    const definitions = isRecord(document.definitions) ? document.definitions : {};
    const schema = definitions[definitionName];
    if (isRecord(schema)) {
      check(schema, body, `${api} ${definitionName}`);
      return;
    }
  }
  throw new Error(`ETSI API "${api}" has no definition "${definitionName}" (searched ${files.definitions.join(', ')})`);
}

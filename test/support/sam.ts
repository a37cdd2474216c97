// Test support for template.yaml: validation against the official SAM JSON Schema (spec/sam/sam.schema.json) and
// the project's own template rules (esbuild builds on nodejs22.x, valid ASL state machines, least-privilege IAM).
// Every check returns a list of human-readable problems; an empty list means the template passes.

import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { applyGlobals, isIntrinsic, resolveIntrinsics, pseudoParameters, parameterValues, type IntrinsicContext, type SamTemplate } from '#local/template.ts';

const SAM_SCHEMA_PATH = fileURLToPath(new URL('../../spec/sam/sam.schema.json', import.meta.url));
const SAM_SCHEMA_ID = 'sam.schema.json';

// ---------------------------------------------------------------------------------------------------------------
// SAM JSON Schema
// ---------------------------------------------------------------------------------------------------------------

interface SamSchemaValidators {
  template: ValidateFunction;
  /** Resource validators by resource Type (AWS::Serverless::*), for focused error messages. */
  byType: Map<string, ValidateFunction>;
  /** The validator for any non-SAM (CloudFormation) resource. */
  other: ValidateFunction;
}

let validators: SamSchemaValidators | undefined;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function samValidators(): SamSchemaValidators {
  if (validators) return validators;
  const schema = JSON.parse(readFileSync(SAM_SCHEMA_PATH, 'utf8')) as Record<string, unknown>;
  // The schema declares draft-04, which Ajv 8 does not bundle (it would fail with `no schema with key or ref
  // "http://json-schema.org/draft-04/schema#"`). It only uses keywords whose meaning is the same in draft-07
  // (type, properties, additionalProperties, required, enum, pattern, items, allOf, anyOf, $ref without siblings),
  // so it is compiled as draft-07 without the meta-schema check. strict is off for its annotations
  // (markdownDescription, __samPassThrough, ...). It uses no `format`, so ajv-formats is not needed.
  delete schema.$schema;
  schema.$id = SAM_SCHEMA_ID;
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false, logger: false });
  ajv.addSchema(schema);
  const template = ajv.getSchema(SAM_SCHEMA_ID);
  if (!template) throw new Error('SAM schema did not compile');

  const byType = new Map<string, ValidateFunction>();
  let other: ValidateFunction | undefined;
  const definitions = schema.definitions as Record<string, { properties?: { Type?: { enum?: string[] } } }>;
  const resources = (schema.properties as { Resources: { additionalProperties: { anyOf: Array<{ $ref: string }> } } }).Resources;
  for (const { $ref } of resources.additionalProperties.anyOf) {
    const name = $ref.replace('#/definitions/', '');
    const validate = ajv.getSchema(`${SAM_SCHEMA_ID}${$ref}`);
    if (!validate) throw new Error(`SAM schema has no ${$ref}`);
    const type = definitions[name]?.properties?.Type?.enum?.[0];
    if (type) byType.set(type, validate);
    else other = validate;
  }
  if (!other) throw new Error('SAM schema has no generic resource definition');
  validators = { template, byType, other };
  return validators;
}

function describeError(prefix: string, error: ErrorObject): string {
  const where = `${prefix}${error.instancePath}` || '/';
  const params = error.params as Record<string, unknown>;
  let detail = error.message ?? error.keyword;
  if (error.keyword === 'additionalProperties') detail += ` ("${String(params.additionalProperty)}")`;
  if (error.keyword === 'enum') detail += ` (${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')})`;
  return `${where}: ${detail}`;
}

/** CloudFormation's top-level template sections (the SAM schema does not close the top level). */
const TEMPLATE_SECTIONS = new Set([
  'AWSTemplateFormatVersion',
  'Description',
  'Metadata',
  'Parameters',
  'Rules',
  'Mappings',
  'Conditions',
  'Transform',
  'Globals',
  'Resources',
  'Outputs',
]);

/** Validates a template in long form (as `loadTemplate` returns it) against the SAM JSON Schema, plus the
 *  top-level checks the schema leaves open (unknown sections, the SAM Transform). Returns [] when valid. */
export function validateSamTemplate(template: unknown): string[] {
  const { template: validate, byType, other } = samValidators();
  if (!isRecord(template)) return ['/: a template must be an object'];
  const problems: string[] = [];
  for (const key of Object.keys(template)) {
    if (!TEMPLATE_SECTIONS.has(key)) problems.push(`/${key}: unknown top-level template section`);
  }
  const resources = isRecord(template.Resources) ? template.Resources : {};
  const usesSam = Object.values(resources).some((r) => isRecord(r) && typeof r.Type === 'string' && r.Type.startsWith('AWS::Serverless::'));
  const transforms = Array.isArray(template.Transform) ? template.Transform : [template.Transform];
  if ((usesSam || template.Globals !== undefined) && !transforms.includes('AWS::Serverless-2016-10-31')) {
    problems.push('/Transform: must include AWS::Serverless-2016-10-31 for AWS::Serverless::* resources and Globals');
  }
  if (validate(template)) return problems;

  // Errors under a resource come from every branch of the schema's anyOf over resource types; re-validate each
  // failing resource against the definition for its own Type so the messages are about that type only.
  const failing = new Set<string>();
  for (const error of validate.errors ?? []) {
    const match = /^\/Resources\/([^/]+)/.exec(error.instancePath);
    if (match) failing.add(match[1]!.replace(/~1/g, '/').replace(/~0/g, '~'));
    else if (error.keyword !== 'anyOf') problems.push(describeError('', error));
  }
  for (const id of failing) {
    const resource = resources[id];
    const type = isRecord(resource) ? resource.Type : undefined;
    const prefix = `/Resources/${id}`;
    if (typeof type === 'string' && type.startsWith('AWS::Serverless::') && !byType.has(type)) {
      problems.push(`${prefix}/Type: unknown SAM resource type "${type}"`);
      continue;
    }
    const resourceValidate = typeof type === 'string' ? (byType.get(type) ?? other) : other;
    if (resourceValidate(resource)) continue;
    for (const error of resourceValidate.errors ?? []) problems.push(describeError(prefix, error));
  }
  return [...new Set(problems)];
}

// ---------------------------------------------------------------------------------------------------------------
// Plausible values for Ref / Fn::GetAtt (to resolve DefinitionSubstitutions without deploying)
// ---------------------------------------------------------------------------------------------------------------

/** An IntrinsicContext that answers Ref/GetAtt with plausible names, URLs and ARNs for each resource's Type. */
export function plausibleContext(template: SamTemplate): IntrinsicContext {
  const pseudo = pseudoParameters();
  const region = pseudo['AWS::Region']!;
  const account = pseudo['AWS::AccountId']!;
  const stack = pseudo['AWS::StackName']!;
  const typeOf = (id: string): string => {
    const resource = template.Resources[id];
    if (!resource) throw new Error(`"${id}" is not a resource of the template`);
    return resource.Type;
  };
  const arn = (id: string): string => {
    const type = typeOf(id);
    switch (type) {
      case 'AWS::Serverless::Function':
      case 'AWS::Lambda::Function':
        return `arn:aws:lambda:${region}:${account}:function:${stack}-${id}`;
      case 'AWS::Serverless::StateMachine':
      case 'AWS::StepFunctions::StateMachine':
        return `arn:aws:states:${region}:${account}:stateMachine:${id}`;
      case 'AWS::SQS::Queue':
        return `arn:aws:sqs:${region}:${account}:${stack}-${id}`;
      case 'AWS::SNS::Topic':
        return `arn:aws:sns:${region}:${account}:${stack}-${id}`;
      case 'AWS::DynamoDB::Table':
      case 'AWS::Serverless::SimpleTable':
        return `arn:aws:dynamodb:${region}:${account}:table/${stack}-${id}`;
      case 'AWS::S3::Bucket':
        return `arn:aws:s3:::${stack}-${id}`.toLowerCase();
      case 'AWS::SecretsManager::Secret':
        return `arn:aws:secretsmanager:${region}:${account}:secret:${stack}-${id}-AbCdEf`;
      case 'AWS::Events::EventBus':
        return `arn:aws:events:${region}:${account}:event-bus/${stack}-${id}`;
      case 'AWS::IAM::Role':
        return `arn:aws:iam::${account}:role/${stack}-${id}`;
      default: {
        const service = (type.split('::')[1] ?? 'unknown').toLowerCase();
        return `arn:aws:${service}:${region}:${account}:${id}`;
      }
    }
  };
  return {
    parameters: parameterValues(template),
    pseudo,
    conditions: template.Conditions ?? {},
    mappings: template.Mappings ?? {},
    parameterTypes: Object.fromEntries(Object.entries(template.Parameters ?? {}).map(([name, p]) => [name, p.Type])),
    ref(id) {
      const type = typeOf(id);
      if (type === 'AWS::SQS::Queue') return `https://sqs.${region}.amazonaws.com/${account}/${stack}-${id}`;
      if (/StateMachine$|::SNS::Topic$|::SecretsManager::Secret$|::IAM::ManagedPolicy$/.test(type)) return arn(id);
      if (type === 'AWS::S3::Bucket') return `${stack}-${id}`.toLowerCase();
      return `${stack}-${id}`;
    },
    getAtt(id, attribute) {
      typeOf(id);
      if (attribute === 'Arn') return arn(id);
      if (attribute === 'QueueUrl') return `https://sqs.${region}.amazonaws.com/${account}/${stack}-${id}`;
      if (attribute === 'StreamArn') return `${arn(id)}/stream/2026-01-01T00:00:00.000`;
      if (attribute === 'Name' || attribute === 'QueueName' || attribute === 'TopicName') return `${stack}-${id}`;
      return `${stack}-${id}-${attribute}`;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Functions: esbuild, nodejs22.x, entry points and handlers
// ---------------------------------------------------------------------------------------------------------------

function resourcesOfType(template: SamTemplate, type: string): Array<[string, SamTemplate['Resources'][string]]> {
  return Object.entries(template.Resources).filter(([, r]) => r.Type === type);
}

function stripExtension(path: string): string {
  const ext = extname(path);
  return ext ? path.slice(0, -ext.length) : path;
}

function commonDirectory(paths: string[]): string {
  const parts = paths.map((p) => dirname(p).split(sep));
  const first = parts[0] ?? [];
  let length = first.length;
  for (const other of parts.slice(1)) {
    let i = 0;
    while (i < length && i < other.length && other[i] === first[i]) i++;
    length = i;
  }
  return first.slice(0, length).join(sep);
}

function exportsName(source: string, name: string): boolean {
  if (name === 'default') return /export\s+default\b|export\s*\{[^}]*\bas\s+default\b/.test(source);
  const n = name.replace(/[$]/g, '\\$');
  return (
    new RegExp(`export\\s+(?:async\\s+)?function\\s*\\*?\\s*${n}\\b`).test(source) ||
    new RegExp(`export\\s+(?:const|let|var)\\s+${n}\\b`).test(source) ||
    new RegExp(`export\\s*\\{[^}]*\\b(?:as\\s+)?${n}\\b[^}]*\\}`).test(source) ||
    /export\s*\*\s*from/.test(source)
  );
}

/** Every AWS::Serverless::Function: Metadata.BuildMethod esbuild; Runtime nodejs22.x (directly or via Globals);
 *  a local CodeUri; Metadata.BuildProperties.EntryPoints naming files that exist under CodeUri; and a Handler
 *  `<module>.<export>` whose module is one of those entry points (as esbuild names its output) and exports it.
 *  Paths are relative to `templateDir`. */
export function functionProblems(template: SamTemplate, templateDir: string): string[] {
  const problems: string[] = [];
  const effective = applyGlobals(template);
  for (const [id, resource] of resourcesOfType(template, 'AWS::Serverless::Function')) {
    const props = effective[id] ?? {};
    const metadata = resource.Metadata ?? {};
    if (metadata.BuildMethod !== 'esbuild') problems.push(`${id}: Metadata.BuildMethod must be esbuild (is ${JSON.stringify(metadata.BuildMethod)})`);
    if (props.Runtime !== 'nodejs22.x') problems.push(`${id}: Runtime must be nodejs22.x (is ${JSON.stringify(props.Runtime)})`);
    const codeUri = props.CodeUri;
    if (typeof codeUri !== 'string') {
      problems.push(`${id}: CodeUri must be a local path (is ${JSON.stringify(codeUri)})`);
      continue;
    }
    const codeDir = resolve(templateDir, codeUri);
    if (!existsSync(codeDir) || !statSync(codeDir).isDirectory()) problems.push(`${id}: CodeUri ${codeUri} is not a directory`);
    const buildProperties = isRecord(metadata.BuildProperties) ? metadata.BuildProperties : {};
    const entryPoints = buildProperties.EntryPoints;
    if (!Array.isArray(entryPoints) || entryPoints.length === 0 || !entryPoints.every((e): e is string => typeof e === 'string')) {
      problems.push(`${id}: Metadata.BuildProperties.EntryPoints must list the entry file(s) relative to CodeUri`);
      continue;
    }
    const present: string[] = [];
    for (const entry of entryPoints) {
      const file = resolve(codeDir, entry);
      if (existsSync(file) && statSync(file).isFile()) present.push(entry);
      else problems.push(`${id}: entry point ${join(codeUri, entry)} does not exist`);
    }
    const handler = props.Handler;
    const dot = typeof handler === 'string' ? handler.lastIndexOf('.') : -1;
    if (typeof handler !== 'string' || dot <= 0 || dot === handler.length - 1) {
      problems.push(`${id}: Handler must be "<module>.<export>" (is ${JSON.stringify(handler)})`);
      continue;
    }
    const module = handler.slice(0, dot);
    const exportName = handler.slice(dot + 1);
    // esbuild names each output after its entry file: the base name for a single entry point, the path relative to
    // the entry points' lowest common directory (esbuild's default outbase) for several.
    const normalized = entryPoints.map((e) => relative('.', e));
    const outbase = normalized.length === 1 ? dirname(normalized[0]!) : commonDirectory(normalized);
    const outputName = (e: string) =>
      stripExtension(relative(outbase, relative('.', e)))
        .split(sep)
        .join('/');
    const entry = present.find((e) => outputName(e) === module);
    if (!entry) {
      if (present.length === entryPoints.length) {
        const outputs = entryPoints.map(outputName).join(', ');
        problems.push(`${id}: Handler ${handler} does not name an esbuild output of the entry points (${outputs})`);
      }
      continue;
    }
    if (!exportsName(readFileSync(resolve(codeDir, entry), 'utf8'), exportName)) {
      problems.push(`${id}: ${join(codeUri, entry)} does not export "${exportName}" (Handler ${handler})`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------------------------
// State machines: DefinitionUri + DefinitionSubstitutions -> asl-validator
// ---------------------------------------------------------------------------------------------------------------

interface AslValidationResult {
  isValid: boolean;
  errorsText(separator?: string): string;
}
type AslValidator = (definition: unknown, options?: { checkPaths?: boolean; checkArn?: boolean }) => AslValidationResult;
// asl-validator is CommonJS without type declarations.
const aslValidator = createRequire(import.meta.url)('asl-validator') as AslValidator;

function substitute(value: unknown, substitutions: Map<string, string>, missing: Set<string>): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([^}]+)\}/g, (match, name: string) => {
      const replacement = substitutions.get(name);
      if (replacement === undefined) missing.add(name);
      return replacement ?? match;
    });
  }
  if (Array.isArray(value)) return value.map((item) => substitute(item, substitutions, missing));
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, substitutions, missing)]));
  return value;
}

/** Every AWS::Serverless::StateMachine: its DefinitionUri file (or inline Definition) exists and parses, every
 *  `${Name}` in it has a DefinitionSubstitutions entry, and after substituting plausible values it passes
 *  asl-validator. Paths are relative to `templateDir`. */
export function stateMachineProblems(template: SamTemplate, templateDir: string): string[] {
  const problems: string[] = [];
  const ctx = plausibleContext(template);
  for (const [id, resource] of resourcesOfType(template, 'AWS::Serverless::StateMachine')) {
    const props = resource.Properties ?? {};
    let definition: unknown;
    if (typeof props.DefinitionUri === 'string') {
      const file = resolve(templateDir, props.DefinitionUri);
      if (!existsSync(file)) {
        problems.push(`${id}: DefinitionUri ${props.DefinitionUri} does not exist`);
        continue;
      }
      try {
        const text = readFileSync(file, 'utf8');
        definition = extname(file) === '.json' ? JSON.parse(text) : parseYaml(text);
      } catch (error) {
        problems.push(`${id}: DefinitionUri ${props.DefinitionUri} does not parse: ${(error as Error).message}`);
        continue;
      }
    } else if (isRecord(props.Definition)) {
      definition = props.Definition;
    } else {
      problems.push(`${id}: DefinitionUri must name a local ASL file`);
      continue;
    }
    const substitutions = new Map<string, string>();
    for (const [name, value] of Object.entries(isRecord(props.DefinitionSubstitutions) ? props.DefinitionSubstitutions : {})) {
      try {
        const resolved = resolveIntrinsics(value, ctx);
        substitutions.set(name, typeof resolved === 'string' ? resolved : JSON.stringify(resolved));
      } catch (error) {
        problems.push(`${id}: DefinitionSubstitutions.${name}: ${(error as Error).message}`);
      }
    }
    const missing = new Set<string>();
    const substituted = substitute(definition, substitutions, missing);
    for (const name of missing) problems.push(`${id}: \${${name}} in the definition has no DefinitionSubstitutions entry`);
    const result = aslValidator(substituted, { checkPaths: true, checkArn: true });
    if (!result.isValid) problems.push(`${id}: invalid ASL: ${result.errorsText('; ')}`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------------------------
// IAM: no "*" actions or resources, no broad managed policies
// ---------------------------------------------------------------------------------------------------------------

/** The SAM policy templates (samtranslator/policy_templates_data/policy_templates.json, May 2026). */
export const SAM_POLICY_TEMPLATES: ReadonlySet<string> = new Set([
  'AMIDescribePolicy',
  'AWSSecretsManagerGetSecretValuePolicy',
  'AWSSecretsManagerRotationPolicy',
  'AcmGetCertificatePolicy',
  'AthenaQueryPolicy',
  'CloudFormationDescribeStacksPolicy',
  'CloudWatchDashboardPolicy',
  'CloudWatchDescribeAlarmHistoryPolicy',
  'CloudWatchPutMetricPolicy',
  'CodeCommitCrudPolicy',
  'CodeCommitReadPolicy',
  'CodePipelineLambdaExecutionPolicy',
  'CodePipelineReadOnlyPolicy',
  'ComprehendBasicAccessPolicy',
  'CostExplorerReadOnlyPolicy',
  'DynamoDBBackupFullAccessPolicy',
  'DynamoDBCrudPolicy',
  'DynamoDBReadPolicy',
  'DynamoDBReconfigurePolicy',
  'DynamoDBRestoreFromBackupPolicy',
  'DynamoDBStreamReadPolicy',
  'DynamoDBWritePolicy',
  'EC2CopyImagePolicy',
  'EC2DescribePolicy',
  'EFSWriteAccessPolicy',
  'EKSDescribePolicy',
  'EcsRunTaskPolicy',
  'ElasticMapReduceAddJobFlowStepsPolicy',
  'ElasticMapReduceCancelStepsPolicy',
  'ElasticMapReduceModifyInstanceFleetPolicy',
  'ElasticMapReduceModifyInstanceGroupsPolicy',
  'ElasticMapReduceSetTerminationProtectionPolicy',
  'ElasticMapReduceTerminateJobFlowsPolicy',
  'ElasticsearchHttpPostPolicy',
  'EventBridgePutEventsPolicy',
  'FilterLogEventsPolicy',
  'FirehoseCrudPolicy',
  'FirehoseWritePolicy',
  'KMSDecryptPolicy',
  'KMSEncryptPolicy',
  'KMSEncryptPolicy_v2',
  'KinesisCrudPolicy',
  'KinesisStreamReadPolicy',
  'LambdaInvokePolicy',
  'MobileAnalyticsWriteOnlyAccessPolicy',
  'OrganizationsListAccountsPolicy',
  'PinpointEndpointAccessPolicy',
  'PollyFullAccessPolicy',
  'RekognitionDetectOnlyPolicy',
  'RekognitionFacesManagementPolicy',
  'RekognitionFacesPolicy',
  'RekognitionLabelsPolicy',
  'RekognitionNoDataAccessPolicy',
  'RekognitionReadPolicy',
  'RekognitionWriteOnlyAccessPolicy',
  'Route53ChangeResourceRecordSetsPolicy',
  'S3CrudPolicy',
  'S3FullAccessPolicy',
  'S3ReadPolicy',
  'S3WritePolicy',
  'SESBulkTemplatedCrudPolicy',
  'SESBulkTemplatedCrudPolicy_v2',
  'SESCrudPolicy',
  'SESEmailTemplateCrudPolicy',
  'SESSendBouncePolicy',
  'SNSCrudPolicy',
  'SNSPublishMessagePolicy',
  'SQSPollerPolicy',
  'SQSSendMessagePolicy',
  'SSMParameterReadPolicy',
  'SSMParameterWithSlashPrefixReadPolicy',
  'SageMakerCreateEndpointConfigPolicy',
  'SageMakerCreateEndpointPolicy',
  'ServerlessRepoReadWriteAccessPolicy',
  'StepFunctionsCallbackPolicy',
  'StepFunctionsExecutionPolicy',
  'StepFunctionsExecutionPolicy_v2',
  'TextractDetectAnalyzePolicy',
  'TextractGetResultPolicy',
  'TextractPolicy',
  'VPCAccessPolicy',
]);

/** SAM policy templates whose expansion contains a statement with Action or Resource "*". */
export const WILDCARD_POLICY_TEMPLATES: ReadonlySet<string> = new Set([
  'AMIDescribePolicy',
  'AWSSecretsManagerRotationPolicy',
  'AthenaQueryPolicy',
  'CloudWatchDashboardPolicy',
  'CloudWatchDescribeAlarmHistoryPolicy',
  'CloudWatchPutMetricPolicy',
  'CodePipelineLambdaExecutionPolicy',
  'ComprehendBasicAccessPolicy',
  'CostExplorerReadOnlyPolicy',
  'EC2DescribePolicy',
  'EKSDescribePolicy',
  'MobileAnalyticsWriteOnlyAccessPolicy',
  'OrganizationsListAccountsPolicy',
  'RekognitionDetectOnlyPolicy',
  'RekognitionFacesPolicy',
  'RekognitionLabelsPolicy',
  'SESBulkTemplatedCrudPolicy_v2',
  'SESEmailTemplateCrudPolicy',
  'SSMParameterReadPolicy',
  'SSMParameterWithSlashPrefixReadPolicy',
  'TextractDetectAnalyzePolicy',
  'TextractGetResultPolicy',
  'TextractPolicy',
  'VPCAccessPolicy',
]);

/** True when an IAM Action/Resource value is or may be (through Fn::If) "*" or "*:*". */
function hasWildcard(value: unknown): boolean {
  if (value === '*' || value === '*:*') return true;
  if (Array.isArray(value)) return value.some(hasWildcard);
  if (isRecord(value) && Array.isArray(value['Fn::If'])) return value['Fn::If'].slice(1).some(hasWildcard);
  return false;
}

function policyEntries(policies: unknown): unknown[] {
  if (policies === undefined) return [];
  return Array.isArray(policies) ? policies : [policies];
}

/** No IAM statement anywhere in the template (inline policies, roles, managed policies, resource policies) has
 *  Action/NotAction "*" or Resource "*", and no Policies entry uses a SAM policy template that expands to one. */
export function iamWildcardProblems(template: SamTemplate): string[] {
  const problems: string[] = [];
  const visit = (value: unknown, path: string): void => {
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        visit(item, `${path}[${i}]`);
      });
      return;
    }
    if (!isRecord(value)) return;
    if ('Effect' in value && ('Action' in value || 'NotAction' in value || 'Resource' in value || 'NotResource' in value)) {
      for (const key of ['Action', 'NotAction', 'Resource']) {
        if (hasWildcard(value[key])) problems.push(`${path}: IAM statement has ${key} "*"`);
      }
    }
    for (const [key, item] of Object.entries(value)) {
      // A KMS key policy's Resource is always "*": it means the key itself, there is nothing narrower.
      if (key === 'KeyPolicy' && template.Resources[path.split('.')[1] ?? '']?.Type === 'AWS::KMS::Key') continue;
      visit(item, path ? `${path}.${key}` : key);
    }
  };
  visit(template.Resources, 'Resources');
  for (const [id, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::Serverless::Function' && resource.Type !== 'AWS::Serverless::StateMachine') continue;
    for (const entry of policyEntries(resource.Properties?.Policies)) {
      if (!isRecord(entry)) continue;
      for (const name of Object.keys(entry)) {
        if (WILDCARD_POLICY_TEMPLATES.has(name)) problems.push(`${id}: SAM policy template ${name} grants Resource "*"; use an explicit statement`);
      }
    }
  }
  return problems;
}

/** Every Policies entry of a function or state machine is a SAM policy template (`{TemplateName: {...}}`), an
 *  explicit policy document (`{Statement: [...]}`) or a Ref to an AWS::IAM::ManagedPolicy of the template;
 *  AWS managed policies (by name or ARN, in particular *FullAccess / AdministratorAccess) are refused. */
export function policyProblems(template: SamTemplate): string[] {
  const problems: string[] = [];
  for (const [id, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::Serverless::Function' && resource.Type !== 'AWS::Serverless::StateMachine') continue;
    policyEntries(resource.Properties?.Policies).forEach((entry, i) => {
      const where = `${id}.Policies[${i}]`;
      if (typeof entry === 'string') {
        const broad = /FullAccess|AdministratorAccess|PowerUserAccess/.test(entry) ? ' (grants full access)' : '';
        problems.push(`${where}: managed policy "${entry}"${broad}; use a SAM policy template or an explicit statement`);
      } else if (isIntrinsic(entry)) {
        // A condition may choose a managed policy of the template or none (SAM accepts Fn::If here).
        const choice = entry['Fn::If'];
        const refs = Array.isArray(choice) ? choice.slice(1).filter((branch) => !(isRecord(branch) && branch.Ref === 'AWS::NoValue')) : [entry];
        const targets = refs.map((ref) => (isRecord(ref) && typeof ref.Ref === 'string' ? template.Resources[ref.Ref] : undefined));
        if (!targets.length || targets.some((target) => target?.Type !== 'AWS::IAM::ManagedPolicy'))
          problems.push(`${where}: ${JSON.stringify(entry)} is not a Ref to an AWS::IAM::ManagedPolicy of this template`);
      } else if (isRecord(entry) && 'Statement' in entry) {
        if (!Array.isArray(entry.Statement) && !isRecord(entry.Statement)) problems.push(`${where}: Statement must be a list of statements`);
      } else if (isRecord(entry) && Object.keys(entry).length === 1) {
        const name = Object.keys(entry)[0]!;
        if (!SAM_POLICY_TEMPLATES.has(name)) problems.push(`${where}: "${name}" is not a SAM policy template`);
        else if (!isRecord(entry[name])) problems.push(`${where}: ${name} parameters must be a mapping ({} when it has none)`);
      } else {
        problems.push(`${where}: not a SAM policy template or a policy document`);
      }
    });
  }
  return problems;
}

// template.yaml is valid SAM and follows the project's rules (esbuild on nodejs22.x, handlers that exist, valid ASL,
// least-privilege IAM). Inline templates first prove the checks accept what they should and catch what they should.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadTemplate, parseTemplate, type SamTemplate } from '#local/template.ts';
import { functionProblems, iamWildcardProblems, policyProblems, stateMachineProblems, validateSamTemplate } from '../support/sam.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TEMPLATE_PATH = join(REPO_ROOT, 'template.yaml');

const TINY = `
AWSTemplateFormatVersion: '2010-09-09'
Transform: AWS::Serverless-2016-10-31
Description: tiny valid SAM template
Parameters:
  Stage: {Type: String, Default: dev}
Globals:
  Function:
    Runtime: nodejs22.x
    Timeout: 10
    Environment:
      Variables:
        TABLE_NAME: !Ref Table
Resources:
  Table:
    Type: AWS::DynamoDB::Table
    Properties:
      BillingMode: PAY_PER_REQUEST
      AttributeDefinitions: [{AttributeName: pk, AttributeType: S}]
      KeySchema: [{AttributeName: pk, KeyType: HASH}]
  ApiFunction:
    Type: AWS::Serverless::Function
    Metadata:
      BuildMethod: esbuild
      BuildProperties:
        EntryPoints: [functions/api/instances.ts]
    Properties:
      CodeUri: .
      Handler: instances.handler
      Policies:
        - DynamoDBCrudPolicy: {TableName: !Ref Table}
        - Statement:
            - Effect: Allow
              Action: [states:StartExecution]
              Resource: !Ref Workflow
      Events:
        Create:
          Type: HttpApi
          Properties: {Path: /vnflcm/v2/vnf_instances, Method: post}
  StepFunction:
    Type: AWS::Serverless::Function
    Metadata:
      BuildMethod: esbuild
      BuildProperties:
        EntryPoints: [steps/a.ts, steps/nested/b.ts]
    Properties:
      CodeUri: functions/
      Handler: nested/b.main
  Workflow:
    Type: AWS::Serverless::StateMachine
    Properties:
      DefinitionUri: statemachines/workflow.asl.json
      DefinitionSubstitutions:
        StepFunctionArn: !GetAtt StepFunction.Arn
        TableName: !Ref Table
        Stage: !Sub '\${Stage}-x'
      Policies:
        - LambdaInvokePolicy: {FunctionName: !Ref StepFunction}
Outputs:
  ApiUrl:
    Value: !Sub 'https://\${ServerlessHttpApi}.execute-api.\${AWS::Region}.amazonaws.com'
`;

const WORKFLOW = {
  Comment: 'tiny',
  StartAt: 'Step',
  States: {
    Step: {
      Type: 'Task',
      Resource: 'arn:aws:states:::lambda:invoke',
      Parameters: { FunctionName: '${StepFunctionArn}', 'Payload.$': '$' },
      Next: 'Save',
    },
    Save: {
      Type: 'Task',
      Resource: 'arn:aws:states:::dynamodb:putItem',
      Parameters: { TableName: '${TableName}', Item: { pk: { S: '${Stage}' } } },
      End: true,
    },
  },
};

function tiny(): SamTemplate {
  return parseTemplate(TINY);
}

/** Returns a copy of the tiny template changed by `edit` (which may use the long form freely). */
function edited(edit: (t: Record<string, any>) => void): SamTemplate {
  const copy = structuredClone(tiny()) as unknown as Record<string, any>;
  edit(copy);
  return copy as unknown as SamTemplate;
}

let fixture: string;

before(() => {
  fixture = mkdtempSync(join(tmpdir(), 'sam-template-test-'));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(fixture, path)), { recursive: true });
    writeFileSync(join(fixture, path), text);
  };
  write('functions/api/instances.ts', 'export const handler = async () => ({ statusCode: 201 });\n');
  write('functions/steps/a.ts', 'export async function main() {}\n');
  write('functions/steps/nested/b.ts', 'async function run() {}\nexport { run as main };\n');
  write('statemachines/workflow.asl.json', JSON.stringify(WORKFLOW, null, 2));
});

after(() => rmSync(fixture, { recursive: true, force: true }));

describe('validateSamTemplate', () => {
  it('accepts a tiny valid SAM template (long form, as loadTemplate returns it)', () => {
    assert.deepEqual(validateSamTemplate(tiny()), []);
  });

  it('rejects a misspelt resource attribute, naming the resource and the property', () => {
    const problems = validateSamTemplate(
      edited((t) => {
        t.Resources.ApiFunction.Propertes = t.Resources.ApiFunction.Properties;
        delete t.Resources.ApiFunction.Properties;
      }),
    );
    assert.deepEqual(problems, ['/Resources/ApiFunction: must NOT have additional properties ("Propertes")']);
  });

  it('rejects a wrong property type on a SAM resource and unknown SAM resource types', () => {
    const problems = validateSamTemplate(
      edited((t) => {
        t.Resources.ApiFunction.Properties.Events.Create.Properties = 'not-an-object';
        t.Resources.Ghost = { Type: 'AWS::Serverless::Ghost', Properties: {} };
      }),
    );
    assert.ok(
      problems.some((p) => p.startsWith('/Resources/ApiFunction/Properties/Events/Create')),
      problems.join('\n'),
    );
    assert.ok(problems.includes('/Resources/Ghost/Type: unknown SAM resource type "AWS::Serverless::Ghost"'), problems.join('\n'));
  });

  it('rejects unknown Globals properties, resources without Type, unknown sections and a missing Transform', () => {
    const problems = validateSamTemplate(
      edited((t) => {
        t.Globals.Function.Policies = [];
        t.Resources.Bad = { Properties: {} };
        t.Resource = {};
        delete t.Transform;
      }),
    );
    assert.deepEqual(problems.sort(), [
      '/Globals/Function: must NOT have additional properties ("Policies")',
      '/Resource: unknown top-level template section',
      "/Resources/Bad: must have required property 'Type'",
      '/Transform: must include AWS::Serverless-2016-10-31 for AWS::Serverless::* resources and Globals',
    ]);
  });

  it('rejects a template without Resources and non-objects', () => {
    assert.ok(validateSamTemplate({ Transform: 'AWS::Serverless-2016-10-31' }).some((p) => p.includes("'Resources'")));
    assert.deepEqual(validateSamTemplate('nope'), ['/: a template must be an object']);
  });
});

describe('project rules on the tiny template', () => {
  it('accept the tiny template', () => {
    assert.deepEqual(functionProblems(tiny(), fixture), []);
    assert.deepEqual(stateMachineProblems(tiny(), fixture), []);
    assert.deepEqual(iamWildcardProblems(tiny()), []);
    assert.deepEqual(policyProblems(tiny()), []);
  });

  it('functions: esbuild, nodejs22.x directly or through Globals, entry points and handlers', () => {
    const t = edited((t) => {
      delete t.Resources.ApiFunction.Metadata.BuildMethod;
      t.Resources.StepFunction.Properties.Runtime = 'nodejs20.x';
    });
    assert.deepEqual(functionProblems(t, fixture), [
      'ApiFunction: Metadata.BuildMethod must be esbuild (is undefined)',
      'StepFunction: Runtime must be nodejs22.x (is "nodejs20.x")',
    ]);
    const noGlobal = edited((t) => delete t.Globals.Function.Runtime);
    assert.equal(functionProblems(noGlobal, fixture).filter((p) => p.includes('Runtime must be nodejs22.x')).length, 2);

    const paths = edited((t) => {
      t.Resources.ApiFunction.Metadata.BuildProperties.EntryPoints = ['functions/api/missing.ts'];
      t.Resources.StepFunction.Properties.Handler = 'b.main';
    });
    assert.deepEqual(functionProblems(paths, fixture), [
      'ApiFunction: entry point functions/api/missing.ts does not exist',
      'StepFunction: Handler b.main does not name an esbuild output of the entry points (a, nested/b)',
    ]);

    const exports = edited((t) => {
      t.Resources.ApiFunction.Properties.Handler = 'instances.lambdaHandler';
      delete t.Resources.StepFunction.Metadata.BuildProperties;
    });
    assert.deepEqual(functionProblems(exports, fixture), [
      'ApiFunction: functions/api/instances.ts does not export "lambdaHandler" (Handler instances.lambdaHandler)',
      'StepFunction: Metadata.BuildProperties.EntryPoints must list the entry file(s) relative to CodeUri',
    ]);
  });

  it('state machines: the definition file exists, substitutions are complete and the ASL is valid', () => {
    assert.deepEqual(
      stateMachineProblems(
        edited((t) => (t.Resources.Workflow.Properties.DefinitionUri = 'statemachines/nope.asl.json')),
        fixture,
      ),
      ['Workflow: DefinitionUri statemachines/nope.asl.json does not exist'],
    );
    assert.deepEqual(
      stateMachineProblems(
        edited((t) => delete t.Resources.Workflow.Properties.DefinitionSubstitutions.TableName),
        fixture,
      ),
      ['Workflow: ${TableName} in the definition has no DefinitionSubstitutions entry'],
    );
    assert.deepEqual(
      stateMachineProblems(
        edited((t) => (t.Resources.Workflow.Properties.DefinitionSubstitutions.TableName = { Ref: 'Nope' })),
        fixture,
      ).length,
      2,
    );

    const broken = structuredClone(WORKFLOW) as Record<string, any>;
    broken.States.Step.Next = 'Nowhere';
    writeFileSync(join(fixture, 'statemachines/broken.asl.json'), JSON.stringify(broken));
    const problems = stateMachineProblems(
      edited((t) => (t.Resources.Workflow.Properties.DefinitionUri = 'statemachines/broken.asl.json')),
      fixture,
    );
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /^Workflow: invalid ASL: .*Nowhere/);
  });

  it('IAM: no "*" action or resource anywhere, including roles, Fn::If branches and wildcard policy templates', () => {
    const t = edited((t) => {
      t.Resources.ApiFunction.Properties.Policies[1].Statement.push({ Effect: 'Allow', Action: '*', Resource: ['arn:aws:s3:::b', '*'] });
      t.Resources.StepFunction.Properties.Policies = [{ CloudWatchPutMetricPolicy: {} }];
      t.Resources.Role = {
        Type: 'AWS::IAM::Role',
        Properties: {
          AssumeRolePolicyDocument: { Statement: [{ Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' }] },
          Policies: [
            {
              PolicyName: 'p',
              PolicyDocument: { Statement: [{ Effect: 'Allow', Action: 's3:GetObject', Resource: { 'Fn::If': ['C', 'arn:aws:s3:::b/*', '*'] } }] },
            },
          ],
        },
      };
    });
    assert.deepEqual(iamWildcardProblems(t), [
      'Resources.ApiFunction.Properties.Policies[1].Statement[1]: IAM statement has Action "*"',
      'Resources.ApiFunction.Properties.Policies[1].Statement[1]: IAM statement has Resource "*"',
      'Resources.Role.Properties.Policies[0].PolicyDocument.Statement[0]: IAM statement has Resource "*"',
      'StepFunction: SAM policy template CloudWatchPutMetricPolicy grants Resource "*"; use an explicit statement',
    ]);
  });

  it('policies: SAM policy templates, statements or Refs to managed policies of the template only', () => {
    const t = edited((t) => {
      t.Resources.ApiFunction.Properties.Policies.push(
        'AmazonDynamoDBFullAccess',
        'arn:aws:iam::aws:policy/AWSLambdaExecute',
        { DynamoDBCrudPolicyy: { TableName: 'x' } },
        { Ref: 'Table' },
        { Ref: 'Managed' },
      );
      t.Resources.Managed = { Type: 'AWS::IAM::ManagedPolicy', Properties: { PolicyDocument: { Statement: [] } } };
    });
    assert.deepEqual(policyProblems(t), [
      'ApiFunction.Policies[2]: managed policy "AmazonDynamoDBFullAccess" (grants full access); use a SAM policy template or an explicit statement',
      'ApiFunction.Policies[3]: managed policy "arn:aws:iam::aws:policy/AWSLambdaExecute"; use a SAM policy template or an explicit statement',
      'ApiFunction.Policies[4]: "DynamoDBCrudPolicyy" is not a SAM policy template',
      'ApiFunction.Policies[5]: {"Ref":"Table"} is not a Ref to an AWS::IAM::ManagedPolicy of this template',
    ]);
  });
});

describe('template.yaml', () => {
  let template: SamTemplate | undefined;
  const real = (): SamTemplate => {
    assert.ok(existsSync(TEMPLATE_PATH), `${TEMPLATE_PATH} does not exist`);
    template ??= loadTemplate(TEMPLATE_PATH);
    return template;
  };

  it('is a valid SAM template', () => {
    assert.deepEqual(validateSamTemplate(real()), []);
  });

  it('builds every function with esbuild on nodejs22.x from entry points that exist, matching its Handler', () => {
    assert.deepEqual(functionProblems(real(), REPO_ROOT), []);
  });

  it('has state machines whose definitions exist and are valid ASL after DefinitionSubstitutions', () => {
    assert.deepEqual(stateMachineProblems(real(), REPO_ROOT), []);
  });

  it("runs the LCM poll steps on a smaller function with the step function's code, environment and permissions", () => {
    const step = real().Resources.LcmStepFunction?.Properties ?? {};
    const poll = real().Resources.LcmPollFunction?.Properties ?? {};
    assert.equal(poll.Handler, step.Handler);
    assert.deepEqual(poll.Environment, step.Environment);
    assert.deepEqual(poll.Policies, step.Policies);
    assert.ok(Number(poll.MemorySize) < Number(step.MemorySize), 'waiting needs less memory than a start step');
    assert.deepEqual(real().Resources.LcmPollFunction?.Metadata, real().Resources.LcmStepFunction?.Metadata);
  });

  it('has no IAM statement with Action or Resource "*"', () => {
    assert.deepEqual(iamWildcardProblems(real()), []);
  });

  it('gives functions and state machines only SAM policy templates or explicit statements', () => {
    assert.deepEqual(policyProblems(real()), []);
  });

  describe('hardening', () => {
    type Props = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    const ofType = (type: string): Array<[string, Props]> =>
      Object.entries(real().Resources)
        .filter(([, r]) => r.Type === type)
        .map(([id, r]) => [id, (r.Properties ?? {}) as Props]);
    const refTo = (value: unknown, logicalId: string): boolean => JSON.stringify(value).includes(`"${logicalId}"`);
    /** The two branches of a DataEncryption choice: with the customer managed key, and without. */
    const keyChoice = (value: unknown, what: string): [Props, Props] => {
      const choice = (value as Props | undefined)?.['Fn::If'] as [string, Props, Props] | undefined;
      assert.equal(choice?.[0], 'UseDataKey', `${what} depends on DataEncryption`);
      return [choice?.[1], choice?.[2]] as [Props, Props];
    };

    it('keeps the packages bucket private, versioned, encrypted (SSE-KMS with the customer managed key, else SSE-S3) and TLS-only', () => {
      for (const [id, props] of ofType('AWS::S3::Bucket')) {
        assert.deepEqual(
          props.PublicAccessBlockConfiguration,
          { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
          id,
        );
        assert.equal(props.VersioningConfiguration?.Status, 'Enabled', id);
        const sse = props.BucketEncryption?.ServerSideEncryptionConfiguration?.[0];
        const [withKey, without] = keyChoice(sse?.ServerSideEncryptionByDefault, id);
        assert.equal(withKey?.SSEAlgorithm, 'aws:kms', id);
        assert.ok(refTo(withKey?.KMSMasterKeyID, 'DataKey'), id);
        assert.deepEqual(without, { SSEAlgorithm: 'AES256' }, id);
        const policy = ofType('AWS::S3::BucketPolicy').find(([, p]) => refTo(p.Bucket, id));
        assert.ok(policy, `${id} has a bucket policy`);
        const statements = policy[1].PolicyDocument.Statement as Props[];
        assert.ok(
          statements.some((st) => st.Effect === 'Deny' && st.Condition?.Bool?.['aws:SecureTransport'] === 'false'),
          `${id} denies plain HTTP`,
        );
      }
    });

    it('encrypts every table with the customer managed key when chosen (else the one DynamoDB owns) and keeps point-in-time recovery', () => {
      const tables = ofType('AWS::DynamoDB::Table');
      assert.ok(tables.length >= 5);
      for (const [id, props] of tables) {
        assert.equal(props.PointInTimeRecoverySpecification?.PointInTimeRecoveryEnabled, true, id);
        const [withKey, without] = keyChoice(props.SSESpecification, id);
        assert.equal(withKey?.SSEEnabled, true, id);
        assert.equal(withKey?.SSEType, 'KMS', id);
        assert.ok(refTo(withKey?.KMSMasterKeyId, 'DataKey'), id);
        assert.deepEqual(without, { Ref: 'AWS::NoValue' }, id);
      }
      const [, key] = ofType('AWS::KMS::Key').find(([id]) => id === 'DataKey') ?? [];
      assert.equal(key?.EnableKeyRotation, true);
    });

    it('makes the customer managed key a choice, off by default: an idle deployment pays for no key', () => {
      const template = real();
      assert.equal((template.Parameters as Props).DataEncryption.Default, 'aws-managed');
      assert.deepEqual((template.Conditions as Props).UseDataKey, { 'Fn::Equals': [{ Ref: 'DataEncryption' }, 'customer-managed'] });
      for (const id of ['DataKey', 'DataKeyUsePolicy']) assert.equal((template.Resources[id] as Props).Condition, 'UseDataKey', id);
    });

    it('puts secrets under the customer managed key, and lets only functions that need it use the key, through the data services', () => {
      const env = (real().Globals as Props | undefined)?.Function?.Environment?.Variables as Props;
      const [secretsKey, noKey] = keyChoice(env.SECRETS_KMS_KEY_ID, 'SECRETS_KMS_KEY_ID');
      assert.ok(refTo(secretsKey, 'DataKey'));
      assert.equal(noKey, '', 'without the key, Secrets Manager uses its own');
      const [, usePolicy] = ofType('AWS::IAM::ManagedPolicy').find(([id]) => id === 'DataKeyUsePolicy') ?? [];
      const statement = usePolicy?.PolicyDocument.Statement[0] as Props;
      assert.ok(statement.Condition.StringEquals['kms:ViaService'].length >= 3);
      for (const [id, props] of ofType('AWS::Serverless::Function')) {
        const policies = JSON.stringify(props.Policies ?? []);
        if (!/DynamoDB|S3|s3:|PackageFiles|secretsmanager/.test(policies)) continue;
        const use = (props.Policies as unknown[]).find((policy) => refTo(policy, 'DataKeyUsePolicy'));
        assert.ok(use, `${id} reads encrypted data but cannot use DataKey`);
        assert.deepEqual(keyChoice(use, id), [{ Ref: 'DataKeyUsePolicy' }, { Ref: 'AWS::NoValue' }], `${id}: the policy exists only with the key`);
      }
    });

    it('gives the script runner nothing: no policies, no product environment, no tracing role', () => {
      const runner = real().Resources.ScriptRunnerFunction as Props;
      assert.deepEqual(runner.Properties.Policies, []);
      assert.ok(runner.IgnoreGlobals.includes('Environment') && runner.IgnoreGlobals.includes('Tracing'));
      assert.equal(runner.Properties.Role, undefined);
    });

    it('throttles the API and writes structured access logs without headers or credentials', () => {
      for (const [id, props] of ofType('AWS::Serverless::HttpApi')) {
        assert.ok(Number(props.DefaultRouteSettings?.ThrottlingBurstLimit) > 0 && Number(props.DefaultRouteSettings?.ThrottlingRateLimit) > 0, id);
        const format = String(props.AccessLogSettings?.Format ?? '');
        assert.ok(JSON.parse(format.replace(/\$context\.[A-Za-z.]+/g, 'x')), `${id} logs JSON`);
        assert.doesNotMatch(format, /header|authorization|authorizer\.|token|secret/i, id);
        assert.ok(props.AccessLogSettings?.DestinationArn, id);
      }
    });

    it('bounds every Task state by a TimeoutSeconds a little above the Lambda timeout of the function it invokes', () => {
      const globalTimeout = Number((real().Globals as Props | undefined)?.Function?.Timeout ?? 3);
      const tasks = (states: Props): Props[] =>
        Object.values(states).flatMap((state: Props) => [
          ...(state.Type === 'Task' ? [state] : []),
          ...((state.Branches ?? []) as Props[]).flatMap((branch) => tasks(branch.States)),
          ...((state.ItemProcessor ?? state.Iterator) ? tasks((state.ItemProcessor ?? state.Iterator).States) : []),
        ]);
      const checked: string[] = [];
      for (const [machine, props] of ofType('AWS::Serverless::StateMachine')) {
        const definition = JSON.parse(readFileSync(join(REPO_ROOT, props.DefinitionUri), 'utf8')) as Props;
        for (const task of tasks(definition.States)) {
          const substitution = /^\$\{(\w+)\}$/.exec(String(task.Resource))?.[1];
          const functionId = props.DefinitionSubstitutions?.[substitution ?? '']?.['Fn::GetAtt']?.[0] as string | undefined;
          const fn = functionId ? real().Resources[functionId] : undefined;
          assert.equal(fn?.Type, 'AWS::Serverless::Function', `${machine}: Task ${task.Resource} invokes no function of the template`);
          const timeout = Number(fn?.Properties?.Timeout ?? globalTimeout);
          const where = `${machine}: Task ${task.Resource} (${functionId}, Timeout ${timeout})`;
          assert.equal(typeof task.TimeoutSeconds, 'number', `${where} has no TimeoutSeconds`);
          assert.ok(task.TimeoutSeconds > timeout && task.TimeoutSeconds <= timeout + 120, `${where}: TimeoutSeconds ${task.TimeoutSeconds}`);
          assert.equal(task.HeartbeatSeconds, undefined, `${where}: a heartbeat means nothing to a synchronous invocation`);
          checked.push(where);
        }
      }
      assert.ok(checked.length >= 30, `${checked.length} Task states checked`);
    });

    /** The keys of the packages bucket a function may act on, per S3 action (as globs of the key, '*' for any). */
    const s3Grants = (template: SamTemplate, functionId: string): Array<{ action: string; key: string }> => {
      const samTemplates: Record<string, string[]> = {
        S3ReadPolicy: ['s3:GetObject'],
        S3WritePolicy: ['s3:PutObject'],
        S3CrudPolicy: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'],
        S3FullAccessPolicy: ['s3:*'],
      };
      const keyOf = (resource: unknown): string | undefined => {
        const text = JSON.stringify(resource);
        return /(?:packages-\$\{AWS::AccountId\}-\$\{AWS::Region\}|\$\{PackagesBucket\.Arn\})\/([^"]*)"/.exec(text)?.[1];
      };
      const statements = ((template.Resources[functionId]?.Properties as Props | undefined)?.Policies ?? []).flatMap((policy: Props) => {
        if (policy.Ref) return (template.Resources[policy.Ref]?.Properties as Props | undefined)?.PolicyDocument?.Statement ?? [];
        if (policy.Statement) return policy.Statement;
        const [name] = Object.keys(policy);
        return samTemplates[name!] && /packages/.test(JSON.stringify(policy)) ? [{ Effect: 'Allow', Action: samTemplates[name!], Resource: '/*' }] : [];
      }) as Props[];
      return statements
        .filter((statement) => statement.Effect === 'Allow')
        .flatMap((statement) =>
          [statement.Action].flat().flatMap((action: string) =>
            [statement.Resource]
              .flat()
              .map((resource) => (resource === '/*' ? '*' : keyOf(resource)))
              .filter((key): key is string => action.startsWith('s3:') && key !== undefined)
              .map((key) => ({ action, key })),
          ),
        );
    };
    const globMatches = (glob: string, key: string) => new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`).test(key);
    const writes = (action: string) => /^s3:(\*|Put|Delete|Abort|Restore|Replicate)/.test(action);
    const trustStoreWriters = (template: SamTemplate) =>
      ofType('AWS::Serverless::Function')
        .filter(([id]) => s3Grants(template, id).some((grant) => writes(grant.action) && globMatches(grant.key, 'trust-store/ca-bundle.pem')))
        .map(([id]) => id);

    it("lets no function write the packages bucket's signature trust store, and the onboarding function read it", async () => {
      const { TRUST_STORE_KEY } = await import('#lib/packages/storage.ts');
      assert.equal(TRUST_STORE_KEY, 'trust-store/ca-bundle.pem');
      assert.deepEqual(trustStoreWriters(real()), []);
      const whole = structuredClone(real());
      (whole.Resources.VnfPackagesFunction!.Properties as Props).Policies.push({ S3CrudPolicy: { BucketName: { 'Fn::Sub': 'vnfm-${Stage}-packages' } } });
      assert.deepEqual(trustStoreWriters(whole), ['VnfPackagesFunction'], 'a whole-bucket grant is caught');
      assert.ok(s3Grants(real(), 'PackageOnboardingFunction').some((grant) => grant.action === 's3:GetObject' && globMatches(grant.key, TRUST_STORE_KEY)));
    });

    it('lets whoever uploads package files abort the multipart uploads it starts, and the fetch function write only content keys', async () => {
      const { contentKey } = await import('#lib/packages/storage.ts');
      const key = contentKey('6a3c1e2b-0d4f-4c8a-9b1e-2f3a4b5c6d7e');
      const uploaders = ofType('AWS::Serverless::Function').filter(([id]) =>
        s3Grants(real(), id).some((grant) => grant.action === 's3:PutObject' && globMatches(grant.key, key)),
      );
      assert.deepEqual(uploaders.map(([id]) => id).sort(), [
        'PackageFetchFunction',
        'PackageOnboardingFunction',
        'VnfInstancesFunction',
        // change_vnfpkg fetches a package only the NFVO has, as a create does.
        'VnfLcmOperationsFunction',
        'VnfPackagesFunction',
      ]);
      for (const [id] of uploaders)
        assert.ok(
          s3Grants(real(), id).some((grant) => grant.action === 's3:AbortMultipartUpload' && globMatches(grant.key, key)),
          `${id} leaves the parts of a failed multipart upload behind`,
        );
      const fetchWrites = s3Grants(real(), 'PackageFetchFunction').filter((grant) => writes(grant.action));
      assert.ok(fetchWrites.length > 0 && fetchWrites.every((grant) => !globMatches(grant.key, 'packages/x/onboarded/vnfd.json')));
    });

    it('grants secrets by purpose, the first folder of the names the code gives them, and leaves registered VIM credentials to the VIM functions', () => {
      const sources = (dir: string): string[] =>
        readdirSync(join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
          entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
        );
      const purposes = new Set(
        sources('lib').flatMap((file) =>
          [...readFileSync(join(REPO_ROOT, file), 'utf8').matchAll(/secrets\s*\.(?:create|put)\(\s*`([a-z-]+)\//g)].map((m) => m[1]!),
        ),
      );
      assert.deepEqual([...purposes].sort(), ['nfvo', 'subscriptions', 'vims', 'vnf-instances', 'vnf-packages']);
      // Being reworked by its own change, which narrows its read to vims/ and vnf-instances/.
      const pending = new Set(['VnfHealthMonitorFunction']);
      const vimWriters: string[] = [];
      for (const [id, props] of ofType('AWS::Serverless::Function').filter(([id]) => !pending.has(id))) {
        for (const statement of ((props.Policies ?? []) as Props[]).flatMap((policy) => (policy.Statement ?? []) as Props[])) {
          const actions = [statement.Action].flat() as string[];
          if (!actions.some((action) => action.startsWith('secretsmanager:'))) continue;
          for (const resource of [statement.Resource].flat()) {
            const purpose = /:secret:vnfm\/\$\{Stage\}\/([^/]*)/.exec(resource['Fn::Sub'] ?? '')?.[1];
            assert.ok(purpose !== undefined && purposes.has(purpose) && resource['Fn::Sub'].endsWith(`/${purpose}/*`), `${id}: ${JSON.stringify(resource)}`);
            if (purpose === 'vims' && actions.some((action) => !action.endsWith(':GetSecretValue'))) vimWriters.push(id);
          }
        }
      }
      assert.deepEqual(vimWriters, ['VimsFunction']);
    });

    it('alarms, only when AlarmTopicArn is set, on every dead-letter queue, every state machine, the functions and the API, in few alarms', () => {
      const parameter = (real().Parameters as Props | undefined)?.AlarmTopicArn as Props | undefined;
      assert.equal(parameter?.Default, '');
      assert.deepEqual((real().Conditions as Props | undefined)?.HasAlarmTopic, { 'Fn::Not': [{ 'Fn::Equals': [{ Ref: 'AlarmTopicArn' }, ''] }] });
      const alarms = Object.entries(real().Resources).filter(([, r]) => r.Type === 'AWS::CloudWatch::Alarm');
      assert.ok(alarms.length > 0 && alarms.length <= 6, `${alarms.length} alarms at $0.10 a month each`);
      const watched: Array<{ metric: string; dimension: unknown }> = [];
      for (const [id, alarm] of alarms) {
        const props = alarm.Properties as Props;
        assert.equal((alarm as Props).Condition, 'HasAlarmTopic', `${id} exists without a topic`);
        assert.deepEqual(props.AlarmActions, [{ Ref: 'AlarmTopicArn' }], id);
        assert.deepEqual(props.OKActions, [{ Ref: 'AlarmTopicArn' }], id);
        assert.equal(props.ComparisonOperator, 'GreaterThanThreshold', id);
        assert.equal(props.Threshold, 0, id);
        const queries = (props.Metrics ?? []) as Props[];
        if (queries.length === 0) {
          watched.push({ metric: props.MetricName, dimension: props.Dimensions });
          continue;
        }
        // One expression, the sum of all the alarm's metrics, of which CloudWatch allows 10.
        assert.deepEqual(
          queries.filter((query) => query.ReturnData !== false).map((query) => query.Expression),
          ['SUM(METRICS())'],
          id,
        );
        const stats = queries.filter((query) => query.MetricStat);
        assert.ok(stats.length <= 10, `${id}: ${stats.length} metrics`);
        for (const query of stats) watched.push({ metric: query.MetricStat.Metric.MetricName, dimension: query.MetricStat.Metric.Dimensions[0].Value });
      }
      const watches = (metric: string, dimension: unknown) =>
        watched.some((w) => w.metric === metric && JSON.stringify(w.dimension) === JSON.stringify(dimension));
      const deadLetterQueues = Object.entries(real().Resources)
        .filter(([id, r]) => r.Type === 'AWS::SQS::Queue' && /DeadLetterQueue$/.test(id))
        .map(([id]) => id);
      assert.ok(deadLetterQueues.length >= 3);
      for (const queue of deadLetterQueues)
        assert.ok(watches('ApproximateNumberOfMessagesVisible', { 'Fn::GetAtt': [queue, 'QueueName'] }), `${queue} is not watched`);
      for (const [machine] of ofType('AWS::Serverless::StateMachine')) assert.ok(watches('ExecutionsFailed', { Ref: machine }), `${machine} is not watched`);
      // The LCM step functions fail on purpose when an operation fails: their failed executions are watched instead.
      for (const [fn] of ofType('AWS::Serverless::Function').filter(
        ([, props]) => !Object.values((props.Events ?? {}) as Props).some((e) => e.Type === 'HttpApi'),
      ))
        if (fn !== 'LcmStepFunction' && fn !== 'LcmPollFunction') assert.ok(watches('Errors', { Ref: fn }), `${fn}'s errors are not watched`);
      assert.ok(watches('5xx', { Ref: 'VnfmApi' }), "the API's 5xx answers (its functions' errors) are not watched");
      assert.ok(watches('Throttles', undefined), 'throttles are not watched');
    });

    it('keeps every log for LogRetentionDays (30 by default): each function logs to a log group of the template that the parameter sets', () => {
      const parameter = (real().Parameters as Props | undefined)?.LogRetentionDays as Props | undefined;
      assert.equal(parameter?.Default, 30);
      const allowed = (parameter?.AllowedValues ?? []) as number[];
      assert.ok(allowed.includes(30) && allowed.includes(3653));
      const groups = ofType('AWS::Logs::LogGroup');
      assert.ok(groups.length >= 2);
      for (const [id, props] of groups) assert.deepEqual(props.RetentionInDays, { Ref: 'LogRetentionDays' }, id);
      const globalConfig = (real().Globals as Props | undefined)?.Function?.LoggingConfig as Props | undefined;
      for (const [id, props] of ofType('AWS::Serverless::Function')) {
        const ignored = (real().Resources[id] as Props).IgnoreGlobals as string[] | undefined;
        const config = props.LoggingConfig ?? (ignored?.includes('LoggingConfig') ? undefined : globalConfig);
        const group = groups.find(([groupId]) => config?.LogGroup?.Ref === groupId);
        assert.ok(group, `${id} logs to /aws/lambda/<name>, which Lambda creates with no retention`);
      }
    });

    const scheduledFunctions = () =>
      ofType('AWS::Serverless::Function').filter(([, props]) =>
        Object.values((props.Events ?? {}) as Props).some((event) => /^Schedule(V2)?$/.test(event.Type)),
      );

    it('records no X-Ray trace of a scheduled sweep (PassThrough): an idle deployment pays for no traces', () => {
      const scheduled = scheduledFunctions();
      assert.ok(scheduled.length >= 3, `${scheduled.length} scheduled functions`);
      for (const [id] of scheduled) assert.equal((real().Resources[id] as Props).Properties?.Tracing, 'PassThrough', id);
    });

    it('runs a failed scheduled invocation again neither in the scheduler nor in Lambda: the next run is the retry', () => {
      const scheduled = scheduledFunctions();
      assert.ok(scheduled.length >= 3, `${scheduled.length} scheduled functions`);
      const invokeConfigs = ofType('AWS::Lambda::EventInvokeConfig');
      for (const [id, props] of scheduled) {
        for (const event of Object.values(props.Events as Props).filter((event) => event.Type === 'ScheduleV2'))
          assert.equal(event.Properties?.RetryPolicy?.MaximumRetryAttempts, 0, `${id}: the schedule retries`);
        const own = props.EventInvokeConfig?.MaximumRetryAttempts;
        const standalone = invokeConfigs.filter(([, config]) => config.FunctionName?.Ref === id).map(([, config]) => config.MaximumRetryAttempts);
        assert.deepEqual(
          [own, ...standalone].filter((retries) => retries !== undefined),
          [0],
          `${id}: Lambda's asynchronous retries`,
        );
      }
    });

    it("issues tokens itself: the token function's open routes, no managed identity service, and an external issuer only by parameter", () => {
      assert.deepEqual(
        Object.values(real().Resources).filter((r) => String((r as Props).Type).startsWith('AWS::Cognito::')),
        [],
        'no Cognito resources (an app client costs $6 a month, used or not)',
      );
      const [, token] = ofType('AWS::Serverless::Function').find(([id]) => id === 'OAuth2Function') ?? [];
      assert.ok(token, 'OAuth2Function');
      const routes = Object.values(token.Events as Props).map((event) => event.Properties?.Path);
      assert.deepEqual(routes.sort(), ['/.well-known/jwks.json', '/oauth2/token']);
      for (const event of Object.values(token.Events as Props)) assert.equal(event.Properties?.Auth, undefined, 'open routes: the grant authenticates');
      // It reads clients and publishes its public key; it writes no other table and reads no other secret.
      const statements = JSON.stringify(token.Policies);
      assert.match(statements, /dynamodb:GetItem/);
      assert.match(statements, /PagingKeyReadPolicy/);
      assert.doesNotMatch(statements, /DynamoDBCrudPolicy|dynamodb:\*|secretsmanager:\*/);
      const env = (real().Globals as Props | undefined)?.Function?.Environment?.Variables as Props;
      assert.match(JSON.stringify(env.AUTH_ISSUER), /HasExternalIssuer.*urn:vnfm:/);
      assert.deepEqual(env.AUTH_JWKS_URL, { Ref: 'ExternalJwksUrl' });
      assert.deepEqual(env.AUTH_TOKEN_URL, { Ref: 'ExternalTokenUrl' });
      assert.ok(!JSON.stringify(real()).includes('VNFM_AUTH'), 'authentication cannot be switched off on AWS');
    });
  });
});

describe('cfn-lint', () => {
  // cfn-lint (with the SAM translator) is AWS's own linter; the informational checks include I3011,
  // which wants every stateful resource to say what a stack deletion or a replacement does to it.
  const cfnLint = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' });
  it('finds nothing in template.yaml, informational checks included', {
    skip: cfnLint.status === 0 ? false : 'cfn-lint is not installed (pip install cfn-lint)',
  }, () => {
    const run = spawnSync('cfn-lint', [TEMPLATE_PATH, '--include-checks', 'I'], { encoding: 'utf8' });
    assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
  });

  it('every stateful resource is retained on stack deletion and replacement', async () => {
    const template = await loadTemplate(TEMPLATE_PATH);
    const stateful = new Set(['AWS::DynamoDB::Table', 'AWS::S3::Bucket', 'AWS::KMS::Key', 'AWS::Cognito::UserPool', 'AWS::SQS::Queue', 'AWS::Logs::LogGroup']);
    const unretained = Object.entries(template.Resources)
      .filter(
        ([, resource]) =>
          stateful.has(resource.Type) &&
          (resource.DeletionPolicy !== 'Retain' || (resource as { UpdateReplacePolicy?: string }).UpdateReplacePolicy !== 'Retain'),
      )
      .map(([name]) => name);
    assert.deepEqual(unretained, []);
  });
});

// Unit tests for local/template.ts: short-form tags, intrinsic resolution, conditions, parameters and Globals.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  applyGlobals,
  evaluateCondition,
  intrinsicContext,
  IntrinsicError,
  loadTemplate,
  parameterValues,
  parseTemplate,
  pseudoParameters,
  resolveIntrinsics,
  type IntrinsicContext,
  type SamTemplate,
} from '#local/template.ts';

function props(yamlText: string): Record<string, unknown> {
  const template = parseTemplate(`Resources:\n  R:\n    Type: Test::Thing\n    Properties:\n${yamlText.replace(/^/gm, '      ')}`);
  return template.Resources.R!.Properties!;
}

const TEMPLATE = parseTemplate(`
AWSTemplateFormatVersion: '2010-09-09'
Transform: AWS::Serverless-2016-10-31
Parameters:
  Stage:
    Type: String
    Default: dev
    AllowedValues: [dev, prod]
  Memory:
    Type: Number
    Default: 256
  Subnets:
    Type: CommaDelimitedList
    Default: subnet-a, subnet-b
  Secret:
    Type: String
Mappings:
  StageConfig:
    dev: { LogLevel: debug }
    prod: { LogLevel: warn }
Conditions:
  IsProd: !Equals [!Ref Stage, prod]
  IsDev: !Not [!Condition IsProd]
  DevInUsEast: !And [!Condition IsDev, !Equals [!Ref AWS::Region, us-east-1]]
  ProdOrBig: !Or [!Condition IsProd, !Equals [!Ref Memory, 1024]]
Resources:
  Table:
    Type: AWS::DynamoDB::Table
  Queue:
    Type: AWS::SQS::Queue
`);

function ctxFor(template: SamTemplate = TEMPLATE, parameters: Record<string, string> = {}): IntrinsicContext {
  return intrinsicContext(template, {
    parameters,
    ref: (id) => `ref:${id}`,
    getAtt: (id, attribute) => `att:${id}.${attribute}`,
  });
}

describe('parseTemplate / loadTemplate: short-form tags', () => {
  it('turns !Ref and !Condition into their long forms', () => {
    assert.deepEqual(props('a: !Ref Table\nb: !Condition IsProd'), { a: { Ref: 'Table' }, b: { Condition: 'IsProd' } });
  });

  it('turns scalar and sequence !GetAtt into Fn::GetAtt, splitting on the first dot', () => {
    assert.deepEqual(props('a: !GetAtt Fn.Arn\nb: !GetAtt [Fn, Arn]\nc: !GetAtt Stack.Outputs.Url'), {
      a: { 'Fn::GetAtt': ['Fn', 'Arn'] },
      b: { 'Fn::GetAtt': ['Fn', 'Arn'] },
      c: { 'Fn::GetAtt': ['Stack', 'Outputs.Url'] },
    });
  });

  it('turns scalar and sequence !Sub into Fn::Sub', () => {
    assert.deepEqual(props('a: !Sub "${AWS::Region}-x"\nb: !Sub ["${v}", {v: !Ref Table}]'), {
      a: { 'Fn::Sub': '${AWS::Region}-x' },
      b: { 'Fn::Sub': ['${v}', { v: { Ref: 'Table' } }] },
    });
  });

  it('turns every other function tag into its Fn:: long form', () => {
    const out = props(
      [
        'join: !Join [",", [a, !Ref Table]]',
        'select: !Select [0, !GetAZs ""]',
        'split: !Split [",", "a,b"]',
        'if: !If [IsProd, 1, !Ref AWS::NoValue]',
        'equals: !Equals [a, b]',
        'not: !Not [!Condition IsProd]',
        'and: !And [!Condition A, !Condition B]',
        'or: !Or [!Condition A, !Condition B]',
        'find: !FindInMap [M, k1, k2]',
        'azs: !GetAZs us-east-1',
        'import: !ImportValue shared-vpc',
        'base64: !Base64 hello',
        'base64Map: !Base64 {"Fn::Sub": "x"}',
        'cidr: !Cidr ["10.0.0.0/16", 4, 8]',
      ].join('\n'),
    );
    assert.deepEqual(out, {
      join: { 'Fn::Join': [',', ['a', { Ref: 'Table' }]] },
      select: { 'Fn::Select': [0, { 'Fn::GetAZs': '' }] },
      split: { 'Fn::Split': [',', 'a,b'] },
      if: { 'Fn::If': ['IsProd', 1, { Ref: 'AWS::NoValue' }] },
      equals: { 'Fn::Equals': ['a', 'b'] },
      not: { 'Fn::Not': [{ Condition: 'IsProd' }] },
      and: { 'Fn::And': [{ Condition: 'A' }, { Condition: 'B' }] },
      or: { 'Fn::Or': [{ Condition: 'A' }, { Condition: 'B' }] },
      find: { 'Fn::FindInMap': ['M', 'k1', 'k2'] },
      azs: { 'Fn::GetAZs': 'us-east-1' },
      import: { 'Fn::ImportValue': 'shared-vpc' },
      base64: { 'Fn::Base64': 'hello' },
      base64Map: { 'Fn::Base64': { 'Fn::Sub': 'x' } },
      cidr: { 'Fn::Cidr': ['10.0.0.0/16', 4, 8] },
    });
  });

  it('keeps tagged nodes working through anchors and aliases', () => {
    assert.deepEqual(props('a: &env {T: !Ref Table}\nb: *env'), { a: { T: { Ref: 'Table' } }, b: { T: { Ref: 'Table' } } });
  });

  it('parses the JSON form unchanged', () => {
    const t = parseTemplate('{"Resources": {"R": {"Type": "X", "Properties": {"a": {"Fn::GetAtt": ["B", "Arn"]}}}}}');
    assert.deepEqual(t.Resources.R!.Properties, { a: { 'Fn::GetAtt': ['B', 'Arn'] } });
  });

  it('reads a file and names it in errors', () => {
    const dir = mkdtempSync(join(tmpdir(), 'template-test-'));
    try {
      const good = join(dir, 'good.yaml');
      writeFileSync(good, 'Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties:\n      QueueName: !Sub "${AWS::StackName}-q"\n');
      assert.deepEqual(loadTemplate(good).Resources.Q, {
        Type: 'AWS::SQS::Queue',
        Properties: { QueueName: { 'Fn::Sub': '${AWS::StackName}-q' } },
      });
      const bad = join(dir, 'bad.yaml');
      writeFileSync(bad, 'Resources:\n  Q:\n    Type: X\n    Properties: {a: !Bogus x}\n');
      assert.throws(
        () => loadTemplate(bad),
        (e: Error) => e.message.includes(bad) && e.message.includes('!Bogus'),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects a malformed !GetAtt, a template without Resources and a resource without Type', () => {
    assert.throws(() => parseTemplate('Resources:\n  R:\n    Type: X\n    Properties: {a: !GetAtt NoDot}\n'), /LogicalId\.Attribute/);
    assert.throws(() => parseTemplate('Parameters: {}\n'), /no Resources/);
    assert.throws(() => parseTemplate('Resources:\n  R:\n    Properties: {}\n'), /resource R/);
    assert.throws(() => parseTemplate('- a\n- b\n'), /must be a mapping/);
  });
});

describe('resolveIntrinsics', () => {
  const ctx = ctxFor();

  it('resolves Ref to parameters (with defaults), pseudo parameters, resources and list parameters', () => {
    assert.deepEqual(
      resolveIntrinsics(
        {
          stage: { Ref: 'Stage' },
          memory: { Ref: 'Memory' },
          region: { Ref: 'AWS::Region' },
          account: { Ref: 'AWS::AccountId' },
          stack: { Ref: 'AWS::StackName' },
          partition: { Ref: 'AWS::Partition' },
          suffix: { Ref: 'AWS::URLSuffix' },
          table: { Ref: 'Table' },
          subnets: { Ref: 'Subnets' },
        },
        ctx,
      ),
      {
        stage: 'dev',
        memory: '256',
        region: 'us-east-1',
        account: '123456789012',
        stack: 'local',
        partition: 'aws',
        suffix: 'amazonaws.com',
        table: 'ref:Table',
        subnets: ['subnet-a', 'subnet-b'],
      },
    );
    assert.equal(resolveIntrinsics({ Ref: 'Stage' }, ctxFor(TEMPLATE, { Stage: 'prod' })), 'prod');
  });

  it('removes properties and list elements that are Ref AWS::NoValue', () => {
    assert.deepEqual(resolveIntrinsics({ a: { Ref: 'AWS::NoValue' }, b: [1, { Ref: 'AWS::NoValue' }, 2] }, ctx), { b: [1, 2] });
    assert.equal(resolveIntrinsics({ Ref: 'AWS::NoValue' }, ctx), undefined);
  });

  it('resolves Fn::GetAtt in list and dotted-string forms, including a Ref attribute', () => {
    assert.equal(resolveIntrinsics({ 'Fn::GetAtt': ['Queue', 'Arn'] }, ctx), 'att:Queue.Arn');
    assert.equal(resolveIntrinsics({ 'Fn::GetAtt': 'Queue.Arn' }, ctx), 'att:Queue.Arn');
    assert.equal(resolveIntrinsics({ 'Fn::GetAtt': ['Queue', { Ref: 'Stage' }] }, ctx), 'att:Queue.dev');
  });

  it('resolves Fn::Sub: pseudo parameters, parameters, resources, Res.Attr, variables and ${!Literal}', () => {
    assert.equal(
      resolveIntrinsics({ 'Fn::Sub': 'arn:${AWS::Partition}:x:${AWS::Region}:${AWS::AccountId}:${Stage}/${Table}/${Queue.Arn}' }, ctx),
      'arn:aws:x:us-east-1:123456789012:dev/ref:Table/att:Queue.Arn',
    );
    assert.equal(resolveIntrinsics({ 'Fn::Sub': ['${Name}-${Stage}', { Name: { Ref: 'Table' } }] }, ctx), 'ref:Table-dev');
    assert.equal(resolveIntrinsics({ 'Fn::Sub': ['${Stage}', { Stage: 'shadowed' }] }, ctx), 'shadowed');
    assert.equal(resolveIntrinsics({ 'Fn::Sub': '${!Literal} and ${!AWS::Region}' }, ctx), '${Literal} and ${AWS::Region}');
  });

  it('resolves Fn::Join, Fn::Select, Fn::Split and Fn::GetAZs', () => {
    assert.equal(resolveIntrinsics({ 'Fn::Join': ['-', ['a', { Ref: 'Stage' }, 3]] }, ctx), 'a-dev-3');
    assert.equal(resolveIntrinsics({ 'Fn::Join': [',', { Ref: 'Subnets' }] }, ctx), 'subnet-a,subnet-b');
    assert.equal(resolveIntrinsics({ 'Fn::Select': ['1', ['a', 'b', 'c']] }, ctx), 'b');
    assert.equal(resolveIntrinsics({ 'Fn::Select': [0, { 'Fn::Split': ['/', 'x/y'] }] }, ctx), 'x');
    assert.deepEqual(resolveIntrinsics({ 'Fn::Split': [',', { 'Fn::Sub': 'a,${Stage}' }] }, ctx), ['a', 'dev']);
    assert.equal(resolveIntrinsics({ 'Fn::Select': [1, { 'Fn::GetAZs': '' }] }, ctx), 'us-east-1b');
  });

  it('resolves Fn::FindInMap and Fn::Base64', () => {
    assert.equal(resolveIntrinsics({ 'Fn::FindInMap': ['StageConfig', { Ref: 'Stage' }, 'LogLevel'] }, ctx), 'debug');
    assert.equal(resolveIntrinsics({ 'Fn::Base64': { 'Fn::Sub': 'stage=${Stage}' } }, ctx), Buffer.from('stage=dev').toString('base64'));
  });

  it('evaluates conditions with Fn::Equals, Fn::Not, Fn::And, Fn::Or and Condition for Fn::If', () => {
    const dev = ctxFor();
    assert.equal(evaluateCondition('IsProd', dev), false);
    assert.equal(evaluateCondition('IsDev', dev), true);
    assert.equal(evaluateCondition('DevInUsEast', dev), true);
    assert.equal(evaluateCondition('ProdOrBig', dev), false);
    assert.equal(resolveIntrinsics({ 'Fn::If': ['IsProd', 'big', 'small'] }, dev), 'small');
    assert.deepEqual(resolveIntrinsics({ a: { 'Fn::If': ['IsDev', { Ref: 'AWS::NoValue' }, 1] }, b: 2 }, dev), { b: 2 });
    assert.equal(resolveIntrinsics({ Condition: 'IsDev' }, dev), true);

    const prod = ctxFor(TEMPLATE, { Stage: 'prod' });
    assert.equal(evaluateCondition('ProdOrBig', prod), true);
    assert.equal(evaluateCondition('DevInUsEast', prod), false);
    assert.equal(resolveIntrinsics({ 'Fn::If': ['IsProd', 'big', 'small'] }, prod), 'big');
    assert.equal(evaluateCondition('ProdOrBig', ctxFor(TEMPLATE, { Memory: '1024' })), true);
  });

  it('does not resolve the branch of Fn::If that is not taken', () => {
    assert.equal(resolveIntrinsics({ 'Fn::If': ['IsProd', { Ref: 'Missing' }, 'ok'] }, ctx), 'ok');
  });

  it('accepts a hand-built context with pre-evaluated conditions and calls ref/getAtt', () => {
    const calls: string[] = [];
    const manual: IntrinsicContext = {
      parameters: { Env: 'test' },
      pseudo: pseudoParameters({ 'AWS::Region': 'eu-west-1' }),
      ref: (id) => {
        calls.push(`ref ${id}`);
        return `${id}-name`;
      },
      getAtt: (id, attribute) => {
        calls.push(`getAtt ${id} ${attribute}`);
        return `${id}-${attribute}`;
      },
      conditions: { Local: true },
    };
    assert.equal(
      resolveIntrinsics({ 'Fn::If': ['Local', { 'Fn::Sub': '${Env}-${Fn}-${Fn.Arn}-${AWS::Region}' }, 'x'] }, manual),
      'test-Fn-name-Fn-Arn-eu-west-1',
    );
    assert.deepEqual(calls, ['ref Fn', 'getAtt Fn Arn']);
  });

  it('leaves plain values, numbers, booleans and nested structures alone', () => {
    const value = { a: 1, b: true, c: null, d: ['x', { e: 'y' }], Condition: { StringEquals: { k: 'v' } } };
    assert.deepEqual(resolveIntrinsics(value, ctx), value);
  });
});

describe('resolveIntrinsics errors name what cannot be resolved', () => {
  const ctx = ctxFor();
  const fails = (value: unknown, pattern: RegExp, c: IntrinsicContext = ctx) =>
    assert.throws(
      () => resolveIntrinsics(value, c),
      (e: unknown) => e instanceof IntrinsicError && pattern.test(e.message),
    );

  it('unknown Ref and GetAtt targets', () => {
    fails({ a: { Ref: 'Nope' } }, /Ref "Nope".*not a parameter or resource.*at a\.Ref/);
    fails({ 'Fn::GetAtt': ['Nope', 'Arn'] }, /Fn::GetAtt "Nope\.Arn"/);
    fails({ 'Fn::Sub': '${Nope}' }, /Ref "Nope"/);
    fails({ 'Fn::Sub': '${Nope.Arn}' }, /Fn::GetAtt "Nope\.Arn"/);
    fails({ Ref: 'AWS::Bogus' }, /AWS::Bogus.*unknown pseudo parameter/);
  });

  it('a parameter with no default and no value', () => {
    fails({ Ref: 'Secret' }, /Ref "Secret".*no Default/);
    assert.equal(resolveIntrinsics({ Ref: 'Secret' }, ctxFor(TEMPLATE, { Secret: 's3cr3t' })), 's3cr3t');
  });

  it('wraps errors thrown by the ref/getAtt callbacks', () => {
    const throwing: IntrinsicContext = {
      parameters: {},
      pseudo: {},
      ref: () => {
        throw new Error('not deployed');
      },
      getAtt: () => {
        throw new Error('no such attribute');
      },
    };
    fails({ Ref: 'Fn' }, /Ref "Fn": not deployed/, throwing);
    fails({ 'Fn::GetAtt': ['Fn', 'Arn'] }, /Fn::GetAtt "Fn\.Arn": no such attribute/, throwing);
  });

  it('unknown conditions, mappings and unsupported functions', () => {
    fails({ 'Fn::If': ['NoSuchCondition', 1, 2] }, /Unknown condition "NoSuchCondition"/);
    fails({ 'Fn::FindInMap': ['StageConfig', 'qa', 'LogLevel'] }, /StageConfig\.qa\.LogLevel/);
    fails({ 'Fn::FindInMap': ['Nope', 'a', 'b'] }, /no mapping "Nope"/);
    fails({ 'Fn::ImportValue': 'shared' }, /Unsupported intrinsic function Fn::ImportValue/);
    fails({ 'Fn::Select': [5, ['a']] }, /out of range/);
    fails({ 'Fn::Join': [','] }, /Fn::Join takes a list of 2 arguments/);
  });

  it('self-referencing conditions', () => {
    const c: IntrinsicContext = { ...ctx, conditions: { Loop: { 'Fn::Not': [{ Condition: 'Loop' }] } } };
    fails({ Condition: 'Loop' }, /refers to itself/, c);
  });
});

describe('parameterValues', () => {
  it('takes defaults, stringified, and lets given values win', () => {
    assert.deepEqual(parameterValues(TEMPLATE), { Stage: 'dev', Memory: '256', Subnets: 'subnet-a, subnet-b' });
    assert.equal(parameterValues(TEMPLATE, { Memory: '512' }).Memory, '512');
  });

  it('rejects undeclared parameters and values outside AllowedValues', () => {
    assert.throws(() => parameterValues(TEMPLATE, { Stag: 'dev' }), /"Stag" is not declared/);
    assert.throws(() => parameterValues(TEMPLATE, { Stage: 'qa' }), /"Stage" value "qa" is not one of dev, prod/);
  });
});

describe('applyGlobals', () => {
  const template = parseTemplate(`
Globals:
  Function:
    Runtime: nodejs22.x
    Timeout: 10
    MemorySize: !Ref Memory
    Layers: [!Ref SharedLayer]
    Environment:
      Variables:
        TABLE: global-table
        LOG_LEVEL: info
    Tags: {team: vnfm}
Parameters:
  Memory: {Type: Number, Default: 256}
Resources:
  SharedLayer:
    Type: AWS::Serverless::LayerVersion
    Properties: {ContentUri: layer/}
  Api:
    Type: AWS::Serverless::Function
    Properties:
      Handler: api.handler
      Timeout: 29
      MemorySize: 1024
      Layers: [arn:aws:lambda:us-east-1:123456789012:layer:extra:1]
      Environment:
        Variables:
          LOG_LEVEL: debug
          QUEUE: q
  Bare:
    Type: AWS::Serverless::Function
  Isolated:
    Type: AWS::Serverless::Function
    IgnoreGlobals: '*'
    Properties: {Handler: x.handler, Runtime: nodejs20.x}
  Partial:
    Type: AWS::Serverless::Function
    IgnoreGlobals: [Layers, Environment]
    Properties: {Handler: y.handler}
  Queue:
    Type: AWS::SQS::Queue
`);
  const effective = applyGlobals(template);

  it('returns only AWS::Serverless::Function resources', () => {
    assert.deepEqual(Object.keys(effective).sort(), ['Api', 'Bare', 'Isolated', 'Partial']);
  });

  it('merges maps (function wins), concatenates lists (globals first) and overrides scalars', () => {
    assert.deepEqual(effective.Api, {
      Runtime: 'nodejs22.x',
      Timeout: 29,
      MemorySize: 1024,
      Layers: [{ Ref: 'SharedLayer' }, 'arn:aws:lambda:us-east-1:123456789012:layer:extra:1'],
      Environment: { Variables: { TABLE: 'global-table', LOG_LEVEL: 'debug', QUEUE: 'q' } },
      Tags: { team: 'vnfm' },
      Handler: 'api.handler',
    });
  });

  it('gives a function without Properties all the globals', () => {
    assert.equal(effective.Bare!.Runtime, 'nodejs22.x');
    assert.deepEqual(effective.Bare!.MemorySize, { Ref: 'Memory' });
  });

  it('honours IgnoreGlobals "*" and lists', () => {
    assert.deepEqual(effective.Isolated, { Handler: 'x.handler', Runtime: 'nodejs20.x' });
    assert.equal(effective.Partial!.Runtime, 'nodejs22.x');
    assert.equal(effective.Partial!.Layers, undefined);
    assert.equal(effective.Partial!.Environment, undefined);
  });

  it('treats intrinsic functions as scalars and does not mutate the template', () => {
    const t = parseTemplate(`
Globals:
  Function:
    Environment: {Variables: {A: '1'}}
Resources:
  F:
    Type: AWS::Serverless::Function
    Properties:
      Environment: !If [C, {Variables: {B: '2'}}, !Ref AWS::NoValue]
`);
    assert.deepEqual(applyGlobals(t).F!.Environment, { 'Fn::If': ['C', { Variables: { B: '2' } }, { Ref: 'AWS::NoValue' }] });
    assert.deepEqual(t.Globals!.Function, { Environment: { Variables: { A: '1' } } });
  });

  it('rejects properties SAM does not allow in Globals and bad IgnoreGlobals', () => {
    assert.throws(() => applyGlobals(parseTemplate('Globals: {Function: {Policies: []}}\nResources: {}\n')), /Globals\.Function\.Policies/);
    assert.throws(
      () => applyGlobals(parseTemplate('Globals: {Function: {Timeout: 3}}\nResources: {F: {Type: AWS::Serverless::Function, IgnoreGlobals: [Runtime]}}\n')),
      /IgnoreGlobals names "Runtime"/,
    );
  });
});

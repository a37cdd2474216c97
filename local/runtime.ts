// The embedded local runtime: reads template.yaml and runs its functions, routes, tables,
// buckets, queues and state machines on one machine, on wire-compatible stand-ins (dynalite,
// s3rver, and our SQS, Step Functions and Secrets Manager servers). Handlers reach them
// through the real AWS SDK v3 clients, configured only by the standard AWS_ENDPOINT_URL_* variables
// and credentials made afresh at each start, which every stand-in demands (local/sigv4.ts).
import type http from 'node:http';
import { randomInt, randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, type CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { ensureTable, type PrepareItem } from './table-indexes.ts';
import { opOccListKeys } from '#lib/store/op-occs.ts';
import { vnfInstanceListKeys } from '#lib/store/vnf-instances.ts';
import { vnfPackageListKeys } from '#lib/store/packages.ts';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { CreateSecretCommand, DescribeSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import S3rver from 's3rver';
import { authConfig, ForbiddenError, UnauthorizedError, verifyAccessToken } from '#lib/auth/tokens.ts';
import { grants, normalizeScopes } from '#lib/auth/scopes.ts';
import { ProblemError } from '#lib/sol/errors.ts';
import { applyGlobals, intrinsicContext, loadTemplate, resolveIntrinsics, type SamTemplate } from './template.ts';
import { startLocalStepFunctions, type LocalStepFunctions } from './stepfunctions.ts';
import { startLocalSecretsManager } from './secretsmanager.ts';
import { type StandinsThread, startStandinsThread } from './standins-thread.ts';
import { startQueuePoller, type QueuePoller } from './sqs.ts';
import { toApiGatewayEvent, writeApiGatewayResult, type Route, matchRoute, compileRoute } from './http-api.ts';
import { lambdaContext, type LocalFunction } from './lambda.ts';
import { startLocalLambdaApi } from './lambda-api.ts';
import { followLocalClients } from './oauth2.ts';
import { isRecord } from '#lib/json.ts';
import { awsClient } from '#lib/aws-client.ts';
import { TOKEN_PATH } from '#lib/auth/issuer.ts';
import { startLocalSchedules } from './schedules.ts';
import { containRequestErrors, createGuardedServer, readRequestBody, requestUrl, sendProblem } from './http-guard.ts';
import { type IndexShape, usage } from './metering.ts';
import { buildConsole } from './console-build.ts';
import { admitSigned, newAwsCredentials, refuseAsS3, writeLocalAwsCredentials } from './sigv4.ts';
import { atomicObjectWrites } from './s3-objects.ts';
import { closeServer } from './aws-json.ts';

export interface RuntimeOptions {
  dataDir: string;
  port?: number;
  host?: string;
  templatePath?: string;
  /** Template parameter values (like `sam deploy --parameter-overrides`). */
  parameters?: Record<string, string>;
  /** Multiplies Wait state durations and Retry intervals of state machines (default 1). */
  waitScale?: number;
  log?: (line: string) => void;
  /** Leave interrupted executions and the start-up sweep for resume() (the caller first brings up what they need, e.g. the local VIMs). */
  deferResume?: boolean;
  /** Runs once the stand-ins hold the tables and buckets, before the API listens; what it throws ends the start. */
  checkRecords?: () => Promise<void>;
}

export interface Runtime {
  url: string;
  stepFunctions: LocalStepFunctions;
  /**
   * Picks up where the last run on this data folder stopped: invokes the functions the template marks
   * `Metadata.LocalRuntime.InvokeAtStart` (the reconciliation sweep), then resumes the state machine
   * executions that were running. startRuntime does it unless deferResume.
   */
  resume(): Promise<void>;
  close(): Promise<void>;
}

/** The list index keys a table's records get when a rebuild puts them back (records from before those indexes). */
const LIST_KEYS: Record<string, PrepareItem> = {
  VnfInstancesTable: vnfInstanceListKeys,
  VnfLcmOpOccsTable: opOccListKeys,
  VnfPackagesTable: vnfPackageListKeys,
};

const REGION = 'us-east-1';
const ACCOUNT = '000000000000';
const MAX_API_BODY = 10 * 1024 * 1024; // API Gateway's payload limit
const MAX_DYNAMODB_BODY = 16 * 1024 * 1024; // dynalite's own limit

type Properties = Record<string, unknown>;

function listen(server: http.Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolveListen(server.address() as AddressInfo));
  });
}

/** Physical names and attributes of template resources, as the local stand-ins know them. */
class LocalNames {
  readonly queueUrls = new Map<string, string>();
  readonly secretArns = new Map<string, string>();
  /** Buckets with an explicit BucketName (resolved once the intrinsic context exists). */
  readonly bucketNames = new Map<string, string>();
  constructor(private readonly template: SamTemplate) {}

  type(logicalId: string): string {
    return this.template.Resources[logicalId]?.Type ?? '';
  }

  bucketName(logicalId: string): string {
    return this.bucketNames.get(logicalId) ?? `local-${logicalId.toLowerCase()}`;
  }

  ref = (logicalId: string): string => {
    switch (this.type(logicalId)) {
      case 'AWS::Serverless::StateMachine':
        return `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:${logicalId}`;
      case 'AWS::S3::Bucket':
        return this.bucketName(logicalId);
      case 'AWS::SQS::Queue': {
        const url = this.queueUrls.get(logicalId);
        if (!url) throw new Error(`Queue ${logicalId} is not created yet`);
        return url;
      }
      case 'AWS::Serverless::HttpApi':
        return 'local';
      case 'AWS::SecretsManager::Secret': {
        const arn = this.secretArns.get(logicalId);
        if (!arn) throw new Error(`Secret ${logicalId} is not created yet`);
        return arn;
      }
      default:
        return logicalId;
    }
  };

  getAtt = (logicalId: string, attribute: string): string => {
    const type = this.type(logicalId);
    if (attribute === 'Arn') {
      switch (type) {
        case 'AWS::Serverless::Function':
          return `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${logicalId}`;
        case 'AWS::DynamoDB::Table':
          return `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${logicalId}`;
        case 'AWS::S3::Bucket':
          return `arn:aws:s3:::${this.bucketName(logicalId)}`;
        case 'AWS::SQS::Queue':
          return `arn:aws:sqs:${REGION}:${ACCOUNT}:${logicalId}${this.isFifo(logicalId) ? '.fifo' : ''}`;
        case 'AWS::Serverless::StateMachine':
          return this.ref(logicalId);
      }
    }
    if (attribute === 'Name' || attribute === 'QueueName')
      return type === 'AWS::SQS::Queue' ? `${logicalId}${this.isFifo(logicalId) ? '.fifo' : ''}` : logicalId;
    if (attribute === 'QueueUrl') return this.ref(logicalId);
    throw new Error(`Fn::GetAtt ${logicalId}.${attribute} is not supported by the local runtime`);
  };

  isFifo(logicalId: string): boolean {
    return this.template.Resources[logicalId]?.Properties?.FifoQueue === true || this.template.Resources[logicalId]?.Properties?.FifoQueue === 'true';
  }
}

export async function startRuntime(options: RuntimeOptions): Promise<Runtime> {
  /** Everything the start-up reconciliation may take for interrupted entered its state before this. */
  const startedAt = new Date().toISOString();
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const templatePath = resolve(options.templatePath ?? 'template.yaml');
  const root = dirname(templatePath);
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // Vendor scripts run as other uids (lib/scripts/sandbox.ts): the data folder is the runtime user's alone, however it was made.
  chmodSync(dataDir, 0o700);
  const template = loadTemplate(templatePath);
  const names = new LocalNames(template);
  const ctx = intrinsicContext(template, {
    parameters: options.parameters,
    ref: names.ref,
    getAtt: names.getAtt,
    pseudo: { 'AWS::Region': REGION, 'AWS::AccountId': ACCOUNT, 'AWS::StackName': 'vnfm-local' },
  });
  const resolveValue = <T>(value: unknown): T => resolveIntrinsics(value, ctx) as T;
  const resources = Object.entries(template.Resources);
  for (const [logicalId, resource] of resources) {
    const name = resource.Type === 'AWS::S3::Bucket' ? resource.Properties?.BucketName : undefined;
    if (name !== undefined) names.bucketNames.set(logicalId, resolveValue<string>(name));
  }
  const closers: Array<() => Promise<void>> = [];

  try {
    // --- AWS stand-ins ----------------------------------------------------------------------
    // One key pair per start: the handlers find it where the SDK looks (AWS_ACCESS_KEY_ID and
    // AWS_SECRET_ACCESS_KEY), and no stand-in serves a request it did not sign.
    const credentials = newAwsCredentials();
    writeLocalAwsCredentials(dataDir, credentials, REGION);
    delete process.env.AWS_SESSION_TOKEN;
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: credentials.accessKeyId, AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey });
    mkdirSync(join(dataDir, 'dynamodb'), { recursive: true });
    const standins = await startStandinsThread({
      dynamoDir: join(dataDir, 'dynamodb'),
      sqsDir: join(dataDir, 'sqs'),
      credentials,
      maxDynamoBodyBytes: MAX_DYNAMODB_BODY,
      log,
      onLost: (error) => {
        // Every record and queued message is in them: a runtime without them can only fail, so it stops and says why.
        log(`The local DynamoDB and SQS stopped: ${error.message}`);
        process.exit(1);
      },
    });
    closers.push(() => standins.close());

    mkdirSync(join(dataDir, 's3'), { recursive: true });
    atomicObjectWrites(); // an object is read whole or not at all, and its event comes once it is (local/s3-objects.ts)
    const s3 = new S3rver({ address: '127.0.0.1', port: 0, directory: join(dataDir, 's3'), silent: true });
    const s3Address = (await s3.run()) as AddressInfo;
    // s3rver checks only that a key is one it knows (it does not verify SigV4): it knows this run's alone.
    const s3Accounts = createRequire(import.meta.url)('s3rver/lib/models/account') as {
      DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void; revokeAccessKey(id: string): void };
    };
    s3Accounts.DUMMY_ACCOUNT.revokeAccessKey('S3RVER');
    s3Accounts.DUMMY_ACCOUNT.createKeyPair(credentials.accessKeyId, credentials.secretAccessKey);
    containRequestErrors(
      s3.httpServer,
      'S3',
      log,
      admitSigned({
        credentials,
        service: 's3',
        refuse: refuseAsS3,
        inspect: (body, req) => {
          usage.call('s3', req.method ?? 'GET');
          return body;
        },
      }),
    );
    closers.push(() => s3.close());

    const secrets = await startLocalSecretsManager({ dataDir: join(dataDir, 'secrets'), credentials });
    closers.push(() => secrets.close());

    Object.assign(process.env, {
      AWS_REGION: REGION,
      AWS_DEFAULT_REGION: REGION,
      AWS_ENDPOINT_URL_DYNAMODB: standins.dynamodb,
      AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${s3Address.port}`,
      AWS_ENDPOINT_URL_SQS: standins.sqs,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.endpoint,
      // No X-Ray here: the Tracer (lib/trace.ts) stays off even where AWS_EXECUTION_ENV is set around
      // the runtime (CloudShell, ECS), which would otherwise make it look for a Lambda segment.
      POWERTOOLS_TRACE_ENABLED: 'false',
    });
    const clientConfig = { region: REGION, credentials };

    // --- Storage and messaging resources ---------------------------------------------------
    const dynamoClient = new DynamoDBClient({ ...clientConfig, endpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB });
    const s3Client = new S3Client({ ...clientConfig, endpoint: process.env.AWS_ENDPOINT_URL_S3, forcePathStyle: true });
    // The queue poller's client (Lambda's event source mapping) receives and deletes every batch.
    const sqsClient = awsClient(new SQSClient({ ...clientConfig, endpoint: standins.sqs }));
    const markingNote = join(dataDir, 'mark-unmonitored');
    for (const [logicalId, resource] of resources) {
      const props = (resource.Properties ?? {}) as Properties;
      if (resource.Type === 'AWS::DynamoDB::Table') {
        const input = resolveValue<Properties>({
          TableName: logicalId,
          AttributeDefinitions: props.AttributeDefinitions,
          KeySchema: props.KeySchema,
          GlobalSecondaryIndexes: props.GlobalSecondaryIndexes,
          LocalSecondaryIndexes: props.LocalSecondaryIndexes,
          BillingMode: props.BillingMode ?? 'PAY_PER_REQUEST',
        });
        type KeyElement = { AttributeName: string };
        const tableKeys = ((input.KeySchema ?? []) as KeyElement[]).map((k) => k.AttributeName);
        const shapes: IndexShape[] = (
          (input.GlobalSecondaryIndexes ?? []) as Array<{
            IndexName: string;
            KeySchema: KeyElement[];
            Projection?: { ProjectionType?: string; NonKeyAttributes?: string[] };
          }>
        ).map((index) => ({
          name: index.IndexName,
          keys: index.KeySchema.map((k) => k.AttributeName),
          tableKeys,
          projection: (index.Projection?.ProjectionType ?? 'ALL') as 'ALL' | 'KEYS_ONLY' | 'INCLUDE',
          include: index.Projection?.NonKeyAttributes ?? [],
        }));
        usage.indexes.set(logicalId, shapes);
        standins.describeIndexes(logicalId, shapes);
        // Instances instantiated before the health sweep's index existed are marked for it after the
        // rebuild; the note of it outlives a start killed in between.
        const noteMarking = logicalId === 'VnfInstancesTable' ? () => writeFileSync(markingNote, '') : undefined;
        if (await ensureTable(dynamoClient, input as unknown as CreateTableCommandInput, dataDir, noteMarking, LIST_KEYS[logicalId])) {
          log(`Rebuilt table ${logicalId} with the template's indexes; its records are kept`);
        }
      } else if (resource.Type === 'AWS::S3::Bucket') {
        await s3Client.send(new CreateBucketCommand({ Bucket: names.bucketName(logicalId) })).catch((error: Error) => {
          if (error.name !== 'BucketAlreadyOwnedByYou' && error.name !== 'BucketAlreadyExists') throw error;
        });
      }
    }
    // Dead-letter queues first, so a RedrivePolicy can name them.
    const queues = resources.filter(([, r]) => r.Type === 'AWS::SQS::Queue');
    const pending = new Set(queues.map(([id]) => id));
    while (pending.size) {
      const before = pending.size;
      for (const [logicalId, resource] of queues) {
        if (!pending.has(logicalId)) continue;
        let attributes: Record<string, string>;
        try {
          const props = resolveValue<Properties>(resource.Properties ?? {});
          attributes = Object.fromEntries(
            Object.entries(props)
              .filter(([key]) => !['QueueName', 'Tags'].includes(key))
              .map(([key, value]) => [key, typeof value === 'object' ? JSON.stringify(value) : String(value)]),
          );
        } catch {
          continue; // refers to a queue not created yet
        }
        const deadLetterTarget = attributes.RedrivePolicy
          ? (JSON.parse(attributes.RedrivePolicy) as { deadLetterTargetArn?: string }).deadLetterTargetArn
          : undefined;
        if ([...pending].some((id) => names.getAtt(id, 'Arn') === deadLetterTarget)) continue; // its DLQ comes first
        const out = await sqsClient.send(new CreateQueueCommand({ QueueName: names.getAtt(logicalId, 'QueueName'), Attributes: attributes }));
        names.queueUrls.set(logicalId, out.QueueUrl as string);
        pending.delete(logicalId);
      }
      if (pending.size === before) throw new Error(`Queues with unresolvable properties: ${[...pending].join(', ')}`);
    }

    // Secrets the template generates (GenerateSecretString), made once and kept with the data.
    const secretsClient = new SecretsManagerClient({ ...clientConfig, endpoint: secrets.endpoint });
    for (const [logicalId, resource] of resources) {
      if (resource.Type !== 'AWS::SecretsManager::Secret') continue;
      names.secretArns.set(logicalId, await templateSecret(secretsClient, logicalId, resolveValue<Properties>(resource.Properties ?? {})));
    }

    // --- Functions ------------------------------------------------------------------------
    const effective = applyGlobals(template);
    const functions = new Map<string, LocalFunction>();
    const environment: Record<string, { value: string; from: string }> = {};
    for (const [logicalId, props] of Object.entries(effective)) {
      const variables = resolveValue<Record<string, unknown>>((props.Environment as Properties | undefined)?.Variables ?? {});
      for (const [name, value] of Object.entries(variables)) {
        const text = String(value);
        const seen = environment[name];
        // All functions share one process locally, so one variable must mean one thing.
        if (seen && seen.value !== text) throw new Error(`Environment variable ${name} differs between ${seen.from} and ${logicalId}; give it distinct names`);
        environment[name] = { value: text, from: logicalId };
      }
      const metadata = (template.Resources[logicalId]?.Metadata ?? {}) as { BuildProperties?: { EntryPoints?: string[] } };
      const entry = metadata.BuildProperties?.EntryPoints?.[0];
      const handlerName =
        String(props.Handler ?? '')
          .split('.')
          .pop() ?? 'handler';
      if (!entry) throw new Error(`Function ${logicalId} has no Metadata.BuildProperties.EntryPoints`);
      functions.set(logicalId, {
        logicalId,
        arn: names.getAtt(logicalId, 'Arn'),
        file: resolve(root, String(props.CodeUri ?? '.'), entry),
        exportName: handlerName,
        timeoutSeconds: Number(props.Timeout ?? 3),
        memorySize: Number(props.MemorySize ?? 128),
        properties: props,
      });
    }
    for (const [name, { value }] of Object.entries(environment)) process.env[name] = value;
    // The console function serves the console's files from a module built from console/.
    // (From this checkout's console/, when the function runs from its source rather than a bundle.)
    if (functions.get('ConsoleFunction')?.file.endsWith(join('functions', 'api', 'console.ts'))) await buildConsole();
    for (const fn of functions.values()) {
      const module = (await import(pathToFileURL(fn.file).href)) as Record<string, unknown>;
      const exported = module[fn.exportName];
      if (typeof exported !== 'function') throw new Error(`${fn.file} does not export a function "${fn.exportName}"`);
      fn.handler = exported as LocalFunction['handler'];
    }
    const invoke = async (fn: LocalFunction, event: unknown): Promise<unknown> => {
      if (!fn.handler) throw new Error(`Function ${fn.logicalId} is not loaded`);
      const started = performance.now();
      try {
        return await fn.handler(event, lambdaContext(fn));
      } finally {
        usage.lambda(fn.logicalId, performance.now() - started, fn.memorySize);
      }
    };
    // Instances instantiated before the health sweep's index existed are marked for it once, as the
    // README's upgrade step does on AWS (the sweep function invoked with {"markUnmonitored": true}).
    const sweepFunction = functions.get('VnfHealthMonitorFunction');
    if (existsSync(markingNote) && sweepFunction) {
      const marked = (await invoke(sweepFunction, { markUnmonitored: true })) as { marked: number };
      log(`Marked ${marked.marked} instantiated VNF instances for the health sweep`);
      rmSync(markingNote);
    }
    const byArn = new Map([...functions.values()].map((fn) => [fn.arn, fn]));
    // Functions that invoke functions (the LCM engine -> the script runner) do it through the Lambda API.
    const lambdaApi = await startLocalLambdaApi({ functions: functions.values(), invoke, credentials, log });
    closers.push(() => lambdaApi.close());
    process.env.AWS_ENDPOINT_URL_LAMBDA = lambdaApi.endpoint;

    /** Asynchronous invocations still running (S3 and EventBridge events), so tests can wait for them. */
    const inFlight = new Set<Promise<unknown>>();

    // --- State machines -------------------------------------------------------------------
    const stateMachines = resources
      .filter(([, r]) => r.Type === 'AWS::Serverless::StateMachine')
      .map(([logicalId, resource]) => {
        const props = (resource.Properties ?? {}) as Properties;
        const substitutions = resolveValue<Record<string, string>>(props.DefinitionSubstitutions ?? {});
        let text = props.DefinitionUri ? readFileSync(resolve(root, String(props.DefinitionUri)), 'utf8') : JSON.stringify(resolveValue(props.Definition));
        text = text.replace(/\$\{([A-Za-z0-9_]+)\}/g, (match, key: string) => substitutions[key] ?? match);
        return { arn: names.ref(logicalId), name: logicalId, definition: JSON.parse(text) as Record<string, unknown> };
      });
    const ruleTargets: Array<{ fn: LocalFunction; pattern: Record<string, unknown> }> = [];
    const stepFunctions = await startLocalStepFunctions({
      stateMachines,
      credentials,
      dataDir: join(dataDir, 'stepfunctions'),
      // Resumed executions may fire EventBridge rules: they resume once the rules are wired.
      deferResume: true,
      onExecutionEnd: (detail) => {
        // EventBridge delivers "Step Functions Execution Status Change" to the rules that match.
        const event = {
          version: '0',
          id: randomUUID(),
          'detail-type': 'Step Functions Execution Status Change',
          source: 'aws.states',
          account: ACCOUNT,
          time: new Date(detail.stopDate).toISOString(),
          region: REGION,
          resources: [detail.executionArn],
          detail,
        };
        for (const target of ruleTargets) {
          if (!matchesEventPattern(target.pattern, event)) continue;
          const run = invoke(target.fn, event).catch((error: unknown) =>
            log(`EventBridge target ${target.fn.logicalId} failed: ${error instanceof Error ? error.stack : String(error)}`),
          );
          inFlight.add(run);
          void run.finally(() => inFlight.delete(run));
        }
      },
      waitScale: options.waitScale,
      // The runtime prints one line of its own when it listens; the stand-in's own is noise.
      log: (line) => {
        if (!line.includes('] listening on')) log(line);
      },
      invoke: async (functionArn, input) => {
        // arn:aws:lambda:region:account:function:name[:qualifier]
        const fn = byArn.get(functionArn.split(':').slice(0, 7).join(':'));
        if (!fn) throw Object.assign(new Error(`No local function ${functionArn}`), { name: 'Lambda.ResourceNotFoundException' });
        try {
          return await invoke(fn, input);
        } catch (error) {
          // Lambda reports a thrown error to Step Functions as Error = errorType, Cause = JSON.
          const err = error instanceof Error ? error : new Error(String(error));
          const reported = new Error(JSON.stringify({ errorType: err.name, errorMessage: err.message }));
          reported.name = err.name;
          throw reported;
        }
      },
    });
    closers.push(() => stepFunctions.close());
    process.env.AWS_ENDPOINT_URL_SFN = stepFunctions.endpoint;

    // --- Event sources --------------------------------------------------------------------
    const routes: Route[] = [];
    const schedules = startLocalSchedules({ invoke, log });
    closers.push(() => schedules.close());
    const pollers: QueuePoller[] = [];
    for (const fn of functions.values()) {
      const events = (fn.properties.Events ?? {}) as Record<string, { Type: string; Properties?: Properties }>;
      for (const [eventName, event] of Object.entries(events)) {
        const props = event.Properties ?? {};
        if (event.Type === 'HttpApi') {
          routes.push(compileRoute(props.Path === undefined ? '$default' : String(props.Path), String(props.Method ?? 'ANY'), fn));
        } else if (event.Type === 'SQS') {
          const queueArn = resolveValue<string>(props.Queue);
          const queueId = [...names.queueUrls.keys()].find((id) => names.getAtt(id, 'Arn') === queueArn);
          if (!queueId) throw new Error(`${fn.logicalId}.${eventName}: queue ${queueArn} is not in the template`);
          const redrive = resolveValue<{ deadLetterTargetArn?: string } | undefined>(
            (template.Resources[queueId]?.Properties as Properties | undefined)?.RedrivePolicy,
          );
          // Lambda runs up to ScalingConfig.MaximumConcurrency batches at once: one poller each. A
          // FIFO queue gets one poller: the stand-in's group lock (local/sqs-server.ts) keeps a group's
          // order across retries, but concurrent receivers could still take two of a group's
          // messages apart, which SQS never does.
          const fifo = String((template.Resources[queueId]?.Properties as Properties | undefined)?.FifoQueue ?? '') === 'true';
          const concurrency = fifo
            ? 1
            : Math.max(1, Number(resolveValue<{ MaximumConcurrency?: number } | undefined>(props.ScalingConfig)?.MaximumConcurrency ?? 1));
          for (let i = 0; i < concurrency; i++) {
            const poller = startQueuePoller({
              client: sqsClient,
              queueUrl: names.ref(queueId),
              queueArn,
              batchSize: Number(props.BatchSize ?? 10),
              reportBatchItemFailures: ((props.FunctionResponseTypes ?? []) as string[]).includes('ReportBatchItemFailures'),
              handler: (sqsEvent) => invoke(fn, sqsEvent) as Promise<void>,
              deadLetterQueueArn: redrive?.deadLetterTargetArn,
              log,
            });
            pollers.push(poller);
            closers.push(() => poller.stop());
          }
        } else if (event.Type === 'Schedule' || event.Type === 'ScheduleV2') {
          schedules.add(fn, eventName, resolveValue<Properties>(props));
        } else if (event.Type === 'EventBridgeRule' || event.Type === 'CloudWatchEvent') {
          if (props.Pattern) ruleTargets.push({ fn, pattern: resolveValue<Record<string, unknown>>(props.Pattern) });
        } else if (event.Type === 'S3') {
          const bucket = resolveValue<string>(props.Bucket);
          const wanted = ([] as string[])
            .concat(props.Events as string | string[])
            .map((pattern) => new RegExp(`^${pattern.replace(/^s3:/, '').replace('*', '.*')}$`));
          const rules = (((props.Filter as Properties | undefined)?.S3Key as Properties | undefined)?.Rules ?? []) as Array<{ Name: string; Value: string }>;
          const keyMatches = (key: string) =>
            rules.every((rule) => (rule.Name.toLowerCase() === 'prefix' ? key.startsWith(rule.Value) : key.endsWith(rule.Value)));
          s3.on('event', (s3Event: { Records: Array<{ eventName: string; s3: { bucket: { name: string }; object: { key: string } } }> }) => {
            // s3rver reports keys unencoded; S3 URL-encodes them in events, so the handler decodes.
            const records = s3Event.Records.filter(
              (r) => r.s3.bucket.name === bucket && wanted.some((w) => w.test(r.eventName)) && keyMatches(r.s3.object.key),
            ).map((r) => ({
              ...r,
              s3: { ...r.s3, object: { ...r.s3.object, key: encodeURIComponent(r.s3.object.key).replace(/%2F/g, '/').replace(/%20/g, '+') } },
            }));
            if (!records.length) return;
            // Asynchronous invocation, as S3 does it: the uploader does not wait for the function.
            const run = invoke(fn, { Records: records }).catch((error: unknown) =>
              log(`S3 event handler ${fn.logicalId} failed: ${error instanceof Error ? error.stack : String(error)}`),
            );
            inFlight.add(run);
            void run.finally(() => inFlight.delete(run));
          });
        }
      }
    }

    // --- API --------------------------------------------------------------------------------
    // The deployment's issuer is a template function like any other; the runtime keeps the clients
    // table it reads in step with the local client store (local/oauth2.ts).
    await options.checkRecords?.();
    const clientStore = await followLocalClients(dataDir, log);
    closers.push(async () => clientStore.close());
    // Hostile or broken requests (bad targets, bodies cut off, failing handlers) end as an answer, never the process.
    const api = createGuardedServer(
      'API',
      async (req, res, requestId) => {
        const url = requestUrl(req);
        const body = await readRequestBody(req, MAX_API_BODY);
        if (url.pathname === TOKEN_PATH || /^\s*basic(\s|$)/i.test(req.headers.authorization ?? '')) {
          const damaged = await clientStore.current();
          if (damaged && url.pathname === TOKEN_PATH) {
            log(`OAuth 2.0 token endpoint cannot authenticate clients: ${damaged.message}`);
            sendProblem(res, 503, "The client store cannot be read, so no client can be authenticated; the VNFM's log names the problem", {
              'Cache-Control': 'no-store',
            });
            return;
          }
        }
        if (url.pathname.startsWith('/_local/')) {
          const refused = await controlRefusal(req);
          if (refused) {
            sendProblem(res, refused.status, refused.message, refused.headers);
            return;
          }
          if (await schedules.serve(req.method ?? 'GET', url.pathname, res)) return;
          await serveControl(url.pathname, req.method ?? 'GET', res, stepFunctions, inFlight, pollers, standins);
          return;
        }
        const match = matchRoute(routes, req.method ?? 'GET', url.pathname);
        if (!match) {
          res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ message: 'Not Found' }));
          return;
        }
        usage.apiRequest();
        try {
          const event = toApiGatewayEvent(req, body, match, requestId);
          const result = await invoke(match.route.fn, event);
          writeApiGatewayResult(res, result);
        } catch (error) {
          log(`API function ${match.route.fn.logicalId} failed: ${error instanceof Error ? error.stack : String(error)}`);
          if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' }).end(JSON.stringify({ message: 'Internal Server Error' }));
        }
      },
      log,
    );
    const apiAddress = await listen(api, options.port ?? 9890, options.host ?? '127.0.0.1');
    schedules.start();
    closers.push(() => closeServer(api));

    const url = `http://${apiAddress.address}:${apiAddress.port}`;
    const auth = clientStore.listening(url);
    // The API's own address, among the endpoints no vendor script may reach (lib/scripts/network.ts).
    process.env.VNFM_API_URL = url;
    if (process.env.VNFM_AUTH === 'off') {
      log('WARNING: VNFM_AUTH=off: authentication is OFF; every request is served as an admin of tenant "default". For throwaway experiments only.');
    } else {
      log(
        `Authentication is on: ${auth.created ? 'created an admin client; its' : "the admin client's"} id and secret are in ${auth.credentialsPath} (token endpoint ${auth.tokenUrl})`,
      );
    }
    // Where each stand-in listens, for operators' tools (aws --endpoint-url ...) and tests.
    writeFileSync(
      join(dataDir, 'endpoints.json'),
      `${JSON.stringify(
        {
          api: url,
          dynamodb: process.env.AWS_ENDPOINT_URL_DYNAMODB,
          s3: process.env.AWS_ENDPOINT_URL_S3,
          sqs: process.env.AWS_ENDPOINT_URL_SQS,
          stepfunctions: process.env.AWS_ENDPOINT_URL_SFN,
          secretsmanager: process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER,
          lambda: process.env.AWS_ENDPOINT_URL_LAMBDA,
          region: REGION,
          tables: Object.fromEntries(resources.filter(([, r]) => r.Type === 'AWS::DynamoDB::Table').map(([id]) => [id, id])),
          buckets: Object.fromEntries(resources.filter(([, r]) => r.Type === 'AWS::S3::Bucket').map(([id]) => [id, names.bucketName(id)])),
          queues: Object.fromEntries([...names.queueUrls].map(([id, queueUrl]) => [id, { url: queueUrl, arn: names.getAtt(id, 'Arn') }])),
        },
        null,
        2,
      )}\n`,
      { mode: 0o600 },
    );

    let resumed: Promise<void> | undefined;
    const resume = () => {
      resumed ??= (async () => {
        // The sweep first, while nothing has moved on yet (interrupted executions already count as
        // RUNNING): what it republishes or recovers is as the crash left it.
        for (const fn of functions.values()) {
          const atStart = (template.Resources[fn.logicalId]?.Metadata as { LocalRuntime?: { InvokeAtStart?: unknown } } | undefined)?.LocalRuntime
            ?.InvokeAtStart;
          if (atStart === undefined) continue;
          // What it finds it logs itself; a failure leaves the sweep to its schedule. A reconciliation
          // looks only at what the crash left: nothing that entered its state since this start.
          const event = resolveValue(atStart) as Record<string, unknown>;
          if (isRecord(event.reconcile)) event.reconcile = { ...event.reconcile, startedBefore: startedAt };
          await invoke(fn, event).catch((error: unknown) =>
            log(`Start-up invocation of ${fn.logicalId} failed: ${error instanceof Error ? error.stack : String(error)}`),
          );
        }
        const { resumed: count, failed } = stepFunctions.resume();
        if (count || failed) log(`Resumed ${count} interrupted state machine execution(s)${failed ? `; ${failed} could not be resumed and ended FAILED` : ''}`);
      })();
      return resumed;
    };
    if (!options.deferResume) await resume();

    return {
      url,
      stepFunctions,
      resume,
      close: async () => {
        for (const close of closers.reverse()) await close().catch(() => undefined);
      },
    };
  } catch (error) {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    throw error;
  }
}

/** EventBridge pattern matching: arrays list accepted values, objects match nested fields. */
export function matchesEventPattern(pattern: Record<string, unknown>, event: Record<string, unknown>): boolean {
  return Object.entries(pattern).every(([key, expected]) => {
    const actual = event[key];
    if (Array.isArray(expected)) return expected.some((value) => value === actual);
    if (expected && typeof expected === 'object') {
      return actual !== null && typeof actual === 'object' && matchesEventPattern(expected as Record<string, unknown>, actual as Record<string, unknown>);
    }
    return expected === actual;
  });
}

/**
 * Why a /_local control request is refused (401 without a valid access token, 403 without the
 * admin scope), or undefined when its caller may use them: they stop and start every execution,
 * so they are an operator's, like the API's admin routes. With VNFM_AUTH=off everyone is admin.
 */
async function controlRefusal(req: http.IncomingMessage): Promise<ProblemError | undefined> {
  const config = authConfig();
  if (config === null) return undefined;
  const bearer = /^Bearer\s+(\S+)$/i.exec(String(req.headers.authorization ?? '').trim())?.[1];
  const xAuthToken = req.headers['x-auth-token'];
  const token = bearer ?? (typeof xAuthToken === 'string' && xAuthToken.trim() ? xAuthToken.trim() : undefined);
  if (!token) return new UnauthorizedError('The local controls need an access token with the admin scope (Authorization: Bearer or X-Auth-Token)');
  try {
    const verified = await verifyAccessToken(config, token);
    return grants(normalizeScopes(verified.scopes), 'admin') ? undefined : new ForbiddenError('The local controls need the admin scope', 'admin');
  } catch (error) {
    if (error instanceof ProblemError) return error;
    throw error;
  }
}

/** Local-only controls for tests and benchmarks: hold and release new state machine executions, wait for idle, memory use, metered usage. */
async function serveControl(
  path: string,
  method: string,
  res: http.ServerResponse,
  stepFunctions: LocalStepFunctions,
  inFlight: Set<Promise<unknown>>,
  pollers: QueuePoller[],
  standins: StandinsThread,
): Promise<void> {
  const actions: Record<string, () => Promise<void> | void> = {
    'POST /_local/stepfunctions/hold': () => stepFunctions.hold(),
    'POST /_local/stepfunctions/release': () => stepFunctions.release(),
    'POST /_local/stepfunctions/idle': () => stepFunctions.idle(),
    'POST /_local/idle': async () => {
      // Everything asynchronous settles: event-triggered functions, the executions they start, and
      // the queues their changes feed (notification deliveries, with their retries and redrives).
      let queued: boolean[];
      do {
        await Promise.all([...inFlight]);
        await stepFunctions.idle();
        queued = await Promise.all(pollers.map((poller) => poller.idle()));
      } while (inFlight.size || queued.some(Boolean));
    },
  };
  if (method === 'GET' && path === '/_local/memory') {
    // The process's memory, and the stand-ins thread's JS heap (memoryUsage's heap is this thread's alone; a thread ending has none to give).
    const standinsHeap = await standins.heapStatistics().catch(() => undefined);
    res
      .writeHead(200, { 'Content-Type': 'application/json' })
      .end(JSON.stringify({ ...process.memoryUsage(), standinsHeapTotal: standinsHeap?.total_heap_size, standinsHeapUsed: standinsHeap?.used_heap_size }));
    return;
  }
  // What AWS would bill for since the last reset (local/metering.ts; counted when started with VNFM_METER=1).
  if (method === 'GET' && path === '/_local/usage') {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ enabled: usage.enabled, ...usage.snapshot() }));
    return;
  }
  actions['POST /_local/usage/reset'] = () => usage.reset();
  const action = actions[`${method} ${path}`];
  if (!action) {
    res.writeHead(404, { 'Content-Type': 'application/problem+json' }).end(JSON.stringify({ status: 404, detail: `No local control ${method} ${path}` }));
    return;
  }
  await action();
  res.writeHead(204).end();
}

/**
 * A template secret as CloudFormation makes it: GenerateSecretString's random string (letters and
 * digits, of PasswordLength) under a name of the stack's, created on the first start only, so the
 * value survives restarts as it survives stack updates on AWS.
 */
async function templateSecret(client: SecretsManagerClient, logicalId: string, props: Properties): Promise<string> {
  const name = typeof props.Name === 'string' ? props.Name : `vnfm-local-${logicalId}`;
  const existing = await client.send(new DescribeSecretCommand({ SecretId: name })).catch((error: Error) => {
    if (error.name === 'ResourceNotFoundException') return undefined;
    throw error;
  });
  if (existing?.ARN) return existing.ARN;
  const spec = (props.GenerateSecretString ?? {}) as { PasswordLength?: number };
  const length = Number(spec.PasswordLength ?? 32);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const value = Array.from({ length }, () => alphabet[randomInt(alphabet.length)]).join('');
  const created = await client.send(new CreateSecretCommand({ Name: name, SecretString: value, Description: String(props.Description ?? '') }));
  return created.ARN as string;
}

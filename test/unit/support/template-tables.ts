// A local DynamoDB (the runtime's dynalite) with some of template.yaml's tables, keys and indexes
// as declared, for tests that run the real stores. The stores' shared client reads the SDK's
// standard configuration, so this points the process at it.
import { mkdtemp } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DynamoDBClient, type CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { startLocalDynamo } from '#local/dynamodb.ts';
import { loadTemplate } from '#local/template.ts';

const template = loadTemplate(join(import.meta.dirname, '..', '..', '..', 'template.yaml'));

/** A table as the template declares it, named by its logical id. */
export function templateTable(logicalId: string): CreateTableCommandInput {
  const props = template.Resources[logicalId]?.Properties as Record<string, unknown>;
  return {
    TableName: logicalId,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: props.AttributeDefinitions,
    KeySchema: props.KeySchema,
    GlobalSecondaryIndexes: props.GlobalSecondaryIndexes,
  } as CreateTableCommandInput;
}

/** Starts the local DynamoDB with the named template tables; resolves to its stop function. */
export async function startTemplateTables(logicalIds: readonly string[]): Promise<() => Promise<void>> {
  const dynamo = startLocalDynamo(await mkdtemp(join(tmpdir(), 'template-tables-')));
  await new Promise<void>((resolve) => dynamo.server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(dynamo.server.address() as AddressInfo).port}`;
  Object.assign(process.env, { AWS_ENDPOINT_URL_DYNAMODB: endpoint, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' });
  const client = new DynamoDBClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  for (const logicalId of logicalIds) await client.send(new CreateTableCommand(templateTable(logicalId)));
  client.destroy();
  return () => new Promise<void>((resolve) => dynamo.server.close(() => resolve()));
}

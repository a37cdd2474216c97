// The OAuth 2.0 clients the deployment's own issuer (lib/auth/issuer.ts) authenticates: one item
// per client in the clients table (CLIENTS_TABLE), holding the scrypt hash of its secret (never the
// secret), its tenant and scopes, and the revocation state lib/auth/client-state.ts reads (a
// rotation's notBefore, a deletion). The `clients` command creates, rotates and deletes them on
// AWS; the local runtime keeps the table in step with its client store file.
import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, requiredEnv } from '#lib/store/dynamo.ts';
import { ALL_SCOPES } from './scopes.ts';
import { nextSecond, rotatedNotBefore, updateClient } from './client-state.ts';
import { hashSecret } from './secret-hash.ts';

export interface ClientRecord {
  clientId: string;
  /** scrypt$<salt b64url>$<hash b64url>; absent for a deleted client and for clients another issuer keeps. */
  secretHash?: string;
  tenantId?: string;
  /** Scopes without the resource server prefix, the tenant scope excluded. */
  scopes?: string[];
  createdAt?: string;
  notBefore?: number;
  deleted?: boolean;
}

/** Client ids and tenant ids: what a scope string and a table key can hold without escaping. */
export const CLIENT_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const TENANT_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export function validateScopes(scopes: string[]): string[] {
  const unknown = scopes.filter((scope) => !ALL_SCOPES.includes(scope));
  if (unknown.length) throw new Error(`Unknown scopes: ${unknown.join(', ')} (known: ${ALL_SCOPES.join(', ')})`);
  return scopes;
}

function recordOf(item: Record<string, unknown>): ClientRecord {
  return {
    clientId: String(item.clientId),
    secretHash: typeof item.secretHash === 'string' ? item.secretHash : undefined,
    tenantId: typeof item.tenantId === 'string' ? item.tenantId : undefined,
    scopes: Array.isArray(item.scopes) ? item.scopes.filter((s): s is string => typeof s === 'string') : undefined,
    createdAt: typeof item.createdAt === 'string' ? item.createdAt : undefined,
    notBefore: typeof item.notBefore === 'number' ? item.notBefore : undefined,
    deleted: item.deleted === true,
  };
}

/** The client as the table holds it now (a strongly consistent read: a rotation takes effect at the next request). */
export async function findClient(clientId: string): Promise<ClientRecord | undefined> {
  if (!CLIENT_ID_PATTERN.test(clientId)) return undefined;
  const { Item } = await documentClient().send(new GetCommand({ TableName: requiredEnv('CLIENTS_TABLE'), Key: { clientId }, ConsistentRead: true }));
  return Item ? recordOf(Item) : undefined;
}

/** Every client the table holds (the clients command's list; deleted ones included, marked). */
export async function listClients(): Promise<ClientRecord[]> {
  const records: ClientRecord[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await documentClient().send(new ScanCommand({ TableName: requiredEnv('CLIENTS_TABLE'), ExclusiveStartKey }));
    for (const item of page.Items ?? []) if (CLIENT_ID_PATTERN.test(String(item.clientId))) records.push(recordOf(item));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return records;
}

/** Writes a client's authentication record (its hash, tenant and scopes); a recorded notBefore never goes back. */
export async function putClientRecord(record: ClientRecord): Promise<void> {
  await updateClient(
    record.clientId,
    'secretHash = :h, tenantId = :t, scopes = :s, createdAt = :c, deleted = :d, updatedAt = :u',
    {
      ':h': record.secretHash,
      ':t': record.tenantId,
      ':s': record.scopes ?? [],
      ':c': record.createdAt ?? new Date().toISOString(),
      ':d': false,
      ':u': new Date().toISOString(),
    },
    record.notBefore,
  );
}

/** Creates a client in the table; its secret is returned once, only its hash is kept. Refuses an id in use (a deleted one included). */
export async function createClient(options: { tenantId: string; scopes: string[]; clientId?: string }): Promise<{ clientId: string; clientSecret: string }> {
  if (!TENANT_ID_PATTERN.test(options.tenantId)) throw new Error(`Tenant id "${options.tenantId}" must be 1-64 letters, digits, - or _`);
  const clientId = options.clientId ?? randomBytes(13).toString('hex');
  if (!CLIENT_ID_PATTERN.test(clientId)) throw new Error(`Client id "${clientId}" must be 1-64 letters, digits, - or _`);
  const clientSecret = randomBytes(32).toString('base64url');
  const previous = await findClient(clientId);
  if (previous && !previous.deleted) throw new Error(`Client ${clientId} exists already`);
  try {
    await documentClient().send(
      new PutCommand({
        TableName: requiredEnv('CLIENTS_TABLE'),
        Item: {
          clientId,
          secretHash: hashSecret(clientSecret),
          tenantId: options.tenantId,
          scopes: validateScopes(options.scopes),
          createdAt: new Date().toISOString(),
          // A client re-created under a deleted one's id does not revive the old one's tokens.
          notBefore: rotatedNotBefore(previous?.notBefore, Date.now()),
          deleted: false,
        },
        ConditionExpression: 'attribute_not_exists(clientId) OR deleted = :true',
        ExpressionAttributeValues: { ':true': true },
      }),
    );
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') throw new Error(`Client ${clientId} exists already`);
    throw error;
  }
  return { clientId, clientSecret };
}

/** A new secret for a client: the old one, and every token issued to it, stops working at once. */
export async function rotateClient(clientId: string): Promise<string> {
  const client = await findClient(clientId);
  if (!client || client.deleted || !client.secretHash) throw new Error(`No client ${clientId}`);
  const clientSecret = randomBytes(32).toString('base64url');
  await documentClient().send(
    new UpdateCommand({
      TableName: requiredEnv('CLIENTS_TABLE'),
      Key: { clientId },
      UpdateExpression: 'SET secretHash = :h, notBefore = :nb, updatedAt = :u',
      ConditionExpression: 'attribute_exists(clientId) AND deleted = :false',
      ExpressionAttributeValues: { ':h': hashSecret(clientSecret), ':nb': rotatedNotBefore(client.notBefore), ':u': new Date().toISOString(), ':false': false },
    }),
  );
  return clientSecret;
}

/** Deletes a client: its hash goes, a tombstone stays so that its tokens are refused until they expire. */
export async function deleteClient(clientId: string): Promise<void> {
  const client = await findClient(clientId);
  if (!client || client.deleted) throw new Error(`No client ${clientId}`);
  await documentClient().send(
    new UpdateCommand({
      TableName: requiredEnv('CLIENTS_TABLE'),
      Key: { clientId },
      UpdateExpression: 'SET deleted = :true, notBefore = :nb, updatedAt = :u REMOVE secretHash',
      ExpressionAttributeValues: { ':true': true, ':nb': Math.max(nextSecond(), (client.notBefore ?? 0) + 1), ':u': new Date().toISOString() },
    }),
  );
}

// The public keys of the deployment's own OAuth 2.0 issuer, as its token function publishes them in
// the clients table (lib/auth/token-keys.ts): what the API functions verify access tokens with,
// without holding the secret the signing key comes from.
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { JWK } from 'jose';
import { documentClient, requiredEnv } from '#lib/store/dynamo.ts';

/** The clients table item holding the keys; `#` is outside every client id (CLIENT_ID_PATTERN). */
export const TOKEN_KEYS_ITEM = '#token-keys';
export const TOKEN_ALGORITHM = 'EdDSA';

/** The public keys tokens may be signed with, newest first, as the token function published them. */
export async function publishedKeys(): Promise<JWK[]> {
  const { Item } = await documentClient().send(
    new GetCommand({ TableName: requiredEnv('CLIENTS_TABLE'), Key: { clientId: TOKEN_KEYS_ITEM }, ConsistentRead: true }),
  );
  return Array.isArray(Item?.keys) ? (Item.keys as JWK[]).filter((k) => k && typeof k === 'object' && typeof k.kid === 'string') : [];
}

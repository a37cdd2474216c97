// The keys of the deployment's own OAuth 2.0 issuer. The signing key is an Ed25519 key derived
// (HKDF-SHA256, its own label) from the deployment's generated key secret, the one that also signs
// paging markers, so it costs no key of its own (a KMS key or a second secret would be most of an
// idle deployment's bill) and every instance of the token function signs with the same key. The
// functions that verify tokens never need that secret: the token function publishes the public
// key in the clients table (one item, `#token-keys`, with the previous key kept beside it after a
// change of the secret), which they read as they would read a JWKS, and at
// /.well-known/jwks.json for anyone else.
import { createHash, createPrivateKey, createPublicKey, hkdfSync, type KeyObject } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { JWK } from 'jose';
import { documentClient, requiredEnv } from '#lib/store/dynamo.ts';
import { pagingKey as deploymentKeySecret } from '#lib/secrets/paging-key.ts';
import { TOKEN_ALGORITHM, TOKEN_KEYS_ITEM } from './published-keys.ts';

/** PKCS #8 wrapping of a raw 32-byte Ed25519 private key (RFC 8410 7). */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  publicJwk: JWK;
}

/** The signing key derived from a key secret's value (pure: the same secret gives the same key). */
export function signingKeyFrom(secret: string): SigningKey {
  const seed = Buffer.from(hkdfSync('sha256', secret, 'vnfm', 'oauth2 access token signing key (Ed25519)', 32));
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const exported = createPublicKey(privateKey).export({ format: 'jwk' }) as JWK;
  const kid = createHash('sha256').update(String(exported.x)).digest('base64url').slice(0, 16);
  return { kid, privateKey, publicJwk: { kty: exported.kty, crv: exported.crv, x: exported.x, kid, alg: TOKEN_ALGORITHM, use: 'sig' } };
}

let signing: Promise<SigningKey> | undefined;

/** The deployment's signing key (read once per process; a failed read is tried again at the next call). */
export function signingKey(): Promise<SigningKey> {
  if (!signing) {
    signing = deploymentKeySecret().then(signingKeyFrom);
    signing.catch(() => {
      signing = undefined;
    });
  }
  return signing;
}

const published = new Set<string>();

/**
 * Makes sure the clients table names this key as the current one (the previous current key kept
 * as the one before, so tokens it signed verify until they expire). Once per key per process.
 */
export async function publishKey(key: SigningKey): Promise<void> {
  if (published.has(key.kid)) return;
  const TableName = requiredEnv('CLIENTS_TABLE');
  const Key = { clientId: TOKEN_KEYS_ITEM };
  const { Item } = await documentClient().send(new GetCommand({ TableName, Key, ConsistentRead: true }));
  const keys = Array.isArray(Item?.keys) ? (Item.keys as JWK[]) : [];
  if (keys[0]?.kid !== key.kid) {
    const kept = keys.filter((k) => k.kid !== key.kid).slice(0, 1);
    await documentClient().send(
      new UpdateCommand({
        TableName,
        Key,
        UpdateExpression: 'SET #keys = :keys, updatedAt = :u',
        ExpressionAttributeNames: { '#keys': 'keys' },
        ExpressionAttributeValues: { ':keys': [key.publicJwk, ...kept], ':u': new Date().toISOString() },
      }),
    );
  }
  published.add(key.kid);
}

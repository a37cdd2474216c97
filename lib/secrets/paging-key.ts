// The key that signs paging markers (SOL013 5.4.2.1: the marker is opaque to the client). It is a
// secret the template generates (PagingKeySecret) and names in PAGING_KEY_SECRET, read once per
// process: a marker issued by one function instance verifies in every other, and no one outside
// the deployment can forge one. Without PAGING_KEY_SECRET (a unit test calling the lister
// directly) the process makes a random key of its own, so no deployment ever signs with a key
// that is in the source.
import { randomBytes } from 'node:crypto';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { awsClient } from '#lib/aws-client.ts';

let pending: Promise<string> | undefined;

async function readKey(secretId: string): Promise<string> {
  const out = await awsClient(new SecretsManagerClient({})).send(new GetSecretValueCommand({ SecretId: secretId }));
  if (!out.SecretString) throw new Error(`The paging key secret ${secretId} has no value`);
  return out.SecretString;
}

/** The paging marker key; a failed read is tried again at the next call rather than remembered. */
export function pagingKey(): Promise<string> {
  if (!pending) {
    const secretId = process.env.PAGING_KEY_SECRET;
    pending = secretId ? readKey(secretId) : Promise.resolve(randomBytes(32).toString('base64url'));
    pending.catch(() => {
      pending = undefined;
    });
  }
  return pending;
}

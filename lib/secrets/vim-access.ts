// VIM credentials (vimConnectionInfo.accessInfo) live in AWS Secrets Manager, never in a
// DynamoDB record, an API response, a Step Functions input or a log line. Records keep only the
// secret's id.
import { CreateSecretCommand, DeleteSecretCommand, GetSecretValueCommand, PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { requiredEnv } from '#lib/store/dynamo.ts';
import { awsClient } from '#lib/aws-client.ts';

export interface SecretStore {
  create(name: string, value: Record<string, unknown>): Promise<string>;
  /** Creates the secret or stores a new version of it; returns its id. */
  put(name: string, value: Record<string, unknown>): Promise<string>;
  /** `maxAgeMs`: a value this process read that recently will do (a poll loop's credentials); otherwise read afresh. */
  read(id: string, options?: { maxAgeMs?: number }): Promise<Record<string, unknown>>;
  remove(id: string): Promise<void>;
}

let client: SecretsManagerClient | undefined;

/**
 * How long a warm sweep function (VNFC health, VIM reachability) reuses the VIM credentials it
 * read: a few sweeps, instead of a Secrets Manager read and a KMS decrypt per VIM every minute.
 */
export const SWEEP_CREDENTIALS_MAX_AGE_MS = 5 * 60_000;

/**
 * Secrets this process read, by id, for readers that accept a recent value (`maxAgeMs`): a warm
 * function polling a VIM reads its credentials once a minute rather than at every poll (each read
 * is also a KMS Decrypt). A write or removal here forgets the entry; a change made elsewhere is
 * seen once the reader's maxAgeMs has passed. Read-modify-write callers never use it.
 */
const cache = new Map<string, { value: string; readAt: number }>();

/** Forgets every cached secret (tests). */
export function clearSecretCache(): void {
  cache.clear();
}

export class SecretsManagerStore implements SecretStore {
  constructor(private readonly prefix = requiredEnv('SECRETS_PREFIX')) {}

  private client(): SecretsManagerClient {
    client ??= awsClient(new SecretsManagerClient({}));
    return client;
  }

  async create(name: string, value: Record<string, unknown>): Promise<string> {
    const out = await this.client().send(
      new CreateSecretCommand({
        Name: `${this.prefix}${name}`,
        SecretString: JSON.stringify(value),
        Description: 'VIM access information of a VNF instance',
        // The product's customer managed key (template.yaml DataKey); Secrets Manager's own key otherwise.
        ...(process.env.SECRETS_KMS_KEY_ID ? { KmsKeyId: process.env.SECRETS_KMS_KEY_ID } : {}),
      }),
    );
    return out.ARN ?? `${this.prefix}${name}`;
  }

  async put(name: string, value: Record<string, unknown>): Promise<string> {
    try {
      return await this.create(name, value);
    } catch (error) {
      if (!(error instanceof Error && error.name === 'ResourceExistsException')) throw error;
      const out = await this.client().send(new PutSecretValueCommand({ SecretId: `${this.prefix}${name}`, SecretString: JSON.stringify(value) }));
      this.forget(name, out.ARN);
      return out.ARN ?? `${this.prefix}${name}`;
    }
  }

  async read(id: string, options: { maxAgeMs?: number } = {}): Promise<Record<string, unknown>> {
    const cached = cache.get(id);
    if (cached && options.maxAgeMs !== undefined && Date.now() - cached.readAt <= options.maxAgeMs) return JSON.parse(cached.value) as Record<string, unknown>;
    const out = await this.client().send(new GetSecretValueCommand({ SecretId: id }));
    const value = out.SecretString ?? '{}';
    cache.set(id, { value, readAt: Date.now() });
    return JSON.parse(value) as Record<string, unknown>;
  }

  private forget(name: string, arn?: string): void {
    for (const key of [name, `${this.prefix}${name}`, arn]) if (key) cache.delete(key);
  }

  async remove(id: string): Promise<void> {
    cache.delete(id);
    try {
      await this.client().send(new DeleteSecretCommand({ SecretId: id, ForceDeleteWithoutRecovery: true }));
    } catch (error) {
      if (!(error instanceof Error && error.name === 'ResourceNotFoundException')) throw error;
    }
  }
}

// VIM credentials (vimConnectionInfo.accessInfo) live in AWS Secrets Manager, never in a
// DynamoDB record, an API response, a Step Functions input or a log line. Records keep only the
// secret's id.
import { CreateSecretCommand, DeleteSecretCommand, GetSecretValueCommand, PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { requiredEnv } from '#lib/store/dynamo.ts';

export interface SecretStore {
  create(name: string, value: Record<string, unknown>): Promise<string>;
  /** Creates the secret or stores a new version of it; returns its id. */
  put(name: string, value: Record<string, unknown>): Promise<string>;
  read(id: string): Promise<Record<string, unknown>>;
  remove(id: string): Promise<void>;
}

let client: SecretsManagerClient | undefined;

export class SecretsManagerStore implements SecretStore {
  constructor(private readonly prefix = requiredEnv('SECRETS_PREFIX')) {}

  private client(): SecretsManagerClient {
    client ??= new SecretsManagerClient({});
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
      return out.ARN ?? `${this.prefix}${name}`;
    }
  }

  async read(id: string): Promise<Record<string, unknown>> {
    const out = await this.client().send(new GetSecretValueCommand({ SecretId: id }));
    return JSON.parse(out.SecretString ?? '{}') as Record<string, unknown>;
  }

  async remove(id: string): Promise<void> {
    try {
      await this.client().send(new DeleteSecretCommand({ SecretId: id, ForceDeleteWithoutRecovery: true }));
    } catch (error) {
      if (!(error instanceof Error && error.name === 'ResourceNotFoundException')) throw error;
    }
  }
}

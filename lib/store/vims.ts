// VIM records: where a VIM is and which secret holds its credentials. The VIM registry API and
// reachability monitoring build on this; LCM operations resolve a vimId, or the default VIM of a
// type, through it.
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, getById, requiredEnv } from './dynamo.ts';

export interface VimRecord {
  id: string;
  tenantId: string;
  name: string;
  vimType: string;
  interfaceInfo: Record<string, unknown>;
  /** Secrets Manager id of the accessInfo. */
  accessSecret: string;
  isDefault: boolean;
  createdAt: string;
  extra?: Record<string, unknown>;
}

export interface VimStore {
  put(record: VimRecord): Promise<void>;
  get(id: string): Promise<VimRecord | undefined>;
  listForTenant(tenantId: string): Promise<VimRecord[]>;
}

export class DynamoVimStore implements VimStore {
  constructor(private readonly table = requiredEnv('VIMS_TABLE')) {}

  async put(record: VimRecord): Promise<void> {
    await documentClient().send(new PutCommand({ TableName: this.table, Item: record }));
  }

  get(id: string): Promise<VimRecord | undefined> {
    return getById<VimRecord>(this.table, id);
  }

  async listForTenant(tenantId: string): Promise<VimRecord[]> {
    const items: VimRecord[] = [];
    let after: Record<string, unknown> | undefined;
    do {
      const out = await documentClient().send(new QueryCommand({
        TableName: this.table, IndexName: 'byTenant', KeyConditionExpression: 'tenantId = :t', ExpressionAttributeValues: { ':t': tenantId }, ExclusiveStartKey: after,
      }));
      items.push(...((out.Items ?? []) as VimRecord[]));
      after = out.LastEvaluatedKey;
    } while (after);
    return items;
  }
}

// VNF LCM subscriptions in DynamoDB. The record never holds the subscriber's credentials: only
// the id of the secret that does.
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import type { SubscriptionRecord } from '#lib/notify/model.ts';
import { documentClient, getById, putNew, requiredEnv, tenantPage, type Page } from './dynamo.ts';

export interface SubscriptionStore {
  create(record: SubscriptionRecord): Promise<void>;
  get(id: string): Promise<SubscriptionRecord | undefined>;
  listPage(tenantId: string, limit: number, after?: Record<string, string | number>): Promise<Page<SubscriptionRecord>>;
  /** Every subscription of a tenant (the notifier matches each change against all of them). */
  listAll(tenantId: string): Promise<SubscriptionRecord[]>;
  /** Deletes the record; returns it, or undefined when it did not exist. */
  delete(id: string): Promise<SubscriptionRecord | undefined>;
}

export const subscriptionListKey = (r: SubscriptionRecord): Record<string, string> => ({ id: r.id, tenantId: r.tenantId, createdSeq: r.createdSeq });

export class DynamoSubscriptionStore implements SubscriptionStore {
  constructor(private readonly table = requiredEnv('SUBSCRIPTIONS_TABLE')) {}

  async create(record: SubscriptionRecord): Promise<void> {
    await putNew(this.table, record);
  }

  get(id: string): Promise<SubscriptionRecord | undefined> {
    return getById<SubscriptionRecord>(this.table, id);
  }

  listPage(tenantId: string, limit: number, after?: Record<string, string | number>): Promise<Page<SubscriptionRecord>> {
    return tenantPage<SubscriptionRecord>(this.table, tenantId, limit, after);
  }

  async listAll(tenantId: string): Promise<SubscriptionRecord[]> {
    const all: SubscriptionRecord[] = [];
    let after: Page<SubscriptionRecord>['after'];
    do {
      const page = await this.listPage(tenantId, 1000, after);
      all.push(...page.items);
      after = page.after;
    } while (after);
    return all;
  }

  async delete(id: string): Promise<SubscriptionRecord | undefined> {
    const out = await documentClient().send(new DeleteCommand({ TableName: this.table, Key: { id }, ReturnValues: 'ALL_OLD' }));
    return out.Attributes as SubscriptionRecord | undefined;
  }
}

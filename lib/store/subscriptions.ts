// Subscriptions of every API family in DynamoDB, one table per family; the family's module owns
// the record type. The record never holds the subscriber's credentials: only the id of the secret
// that does.
import { requiredEnv, tenantItems, type Page, type TenantScope } from './dynamo.ts';
import { TenantRecordRepository } from './repository.ts';

/** Subscriptions of any API family (VNF LCM, VNF FM, VNF packages): the same store over each family's table. */
export interface SubscriptionStore<R extends StoredSubscription> {
  create(record: R): Promise<void>;
  get(id: string): Promise<R | undefined>;
  listPage(scope: TenantScope, limit: number, after?: Record<string, string | number>): Promise<Page<R>>;
  /** Every subscription of a tenant (the notifier matches each change against all of them). */
  listAll(tenantId: string): Promise<R[]>;
  /** Deletes the record; returns it, or undefined when it did not exist. */
  delete(id: string): Promise<R | undefined>;
}

export interface StoredSubscription {
  id: string;
  tenantId: string;
  createdSeq: string;
}

export const subscriptionListKey = <R extends StoredSubscription>(r: R): Record<string, string> => ({
  id: r.id,
  tenantId: r.tenantId,
  createdSeq: r.createdSeq,
});

export class DynamoSubscriptionStore<R extends StoredSubscription> extends TenantRecordRepository<R> implements SubscriptionStore<R> {
  constructor(table = requiredEnv('SUBSCRIPTIONS_TABLE')) {
    super(table);
  }

  listAll(tenantId: string): Promise<R[]> {
    return tenantItems<R>(this.table, tenantId);
  }

  async delete(id: string): Promise<R | undefined> {
    const out = await this.deleteItem({ Key: { id }, ReturnValues: 'ALL_OLD' });
    return out.Attributes as R | undefined;
  }
}

// The shape the DynamoDB stores of tenant records share: one table keyed by `id`, a record created
// with a conditional put (RecordExistsError when the id is taken), read strongly consistent, listed
// a page at a time per tenant, and changed with conditional writes whose failed condition is an
// answer ("not in that state") rather than a fault. Each store adds its own state changes.
import {
  DeleteCommand,
  UpdateCommand,
  type DeleteCommandInput,
  type DeleteCommandOutput,
  type UpdateCommandInput,
  type UpdateCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import type { ListPlan } from '#lib/sol/plan.ts';
import { documentClient, getById, ifConditionHeld, indexPage, putNew, tenantPage, type ListIndex, type Page, type TenantScope } from './dynamo.ts';

/** A command's input without the table, which the repository fills in. */
type OnTable<Input> = Omit<Input, 'TableName'>;

export class TenantRecordRepository<T extends { id: string }> {
  constructor(
    protected readonly table: string,
    /** The secondary indexes a filtered list can read through instead of the whole scope (lib/sol/plan.ts). */
    private readonly listIndexes: readonly ListIndex[] = [],
  ) {}

  async create(record: T): Promise<void> {
    await putNew(this.table, record);
  }

  get(id: string): Promise<T | undefined> {
    return getById<T>(this.table, id);
  }

  /** A page of the scope's records in list order, or of those `plan` pins through one of the list indexes. */
  listPage(scope: TenantScope, limit: number, after?: Record<string, string | number>, plan?: ListPlan): Promise<Page<T>> {
    if (plan?.kind !== 'index') return tenantPage<T>(this.table, scope, limit, after);
    const index = this.listIndexes.find((candidate) => candidate.name === plan.index);
    if (index === undefined) throw new Error(`${this.table} has no list index "${plan.index}"`);
    return indexPage<T>(this.table, index, plan.keyValue, scope, limit, after);
  }

  protected updateItem(input: OnTable<UpdateCommandInput>): Promise<UpdateCommandOutput> {
    return documentClient().send(new UpdateCommand({ TableName: this.table, ...input }));
  }

  protected deleteItem(input: OnTable<DeleteCommandInput>): Promise<DeleteCommandOutput> {
    return documentClient().send(new DeleteCommand({ TableName: this.table, ...input }));
  }

  /** Applies a conditional update and returns the record as it is now, or undefined when the condition did not hold. */
  protected updatedRecord(input: OnTable<UpdateCommandInput>): Promise<T | undefined> {
    return ifConditionHeld(async () => (await this.updateItem({ ...input, ReturnValues: 'ALL_NEW' })).Attributes as T);
  }
}

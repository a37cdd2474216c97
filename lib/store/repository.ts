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
import { documentClient, getById, ifConditionHeld, putNew, tenantPage, type Page, type TenantScope } from './dynamo.ts';

/** A command's input without the table, which the repository fills in. */
type OnTable<Input> = Omit<Input, 'TableName'>;

export class TenantRecordRepository<T extends { id: string }> {
  constructor(protected readonly table: string) {}

  async create(record: T): Promise<void> {
    await putNew(this.table, record);
  }

  get(id: string): Promise<T | undefined> {
    return getById<T>(this.table, id);
  }

  listPage(scope: TenantScope, limit: number, after?: Record<string, string | number>): Promise<Page<T>> {
    return tenantPage<T>(this.table, scope, limit, after);
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

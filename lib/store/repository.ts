// The shape the DynamoDB stores of tenant records share: one table keyed by `id`, a record created
// with a conditional put (RecordExistsError when the id is taken), read strongly consistent, listed
// a page at a time per tenant, and changed with conditional writes whose failed condition is an
// answer ("not in that state") rather than a fault. Each store adds its own state changes.
import {
  DeleteCommand,
  GetCommand,
  UpdateCommand,
  type DeleteCommandInput,
  type DeleteCommandOutput,
  type UpdateCommandInput,
  type UpdateCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import type { ListPlan } from '#lib/sol/plan.ts';
import {
  ALL_TENANTS,
  documentClient,
  getById,
  ifConditionHeld,
  indexPage,
  putNew,
  shardedKeyChanges,
  tenantPage,
  withShardedKeys,
  type ListIndex,
  type ListSummary,
  type Page,
  type TenantScope,
} from './dynamo.ts';

/** Record -> tenant, for the records written last (tenantOf), across the stores of a process. */
const tenants = new Map<string, string>();
const REMEMBERED_TENANTS = 500;

/** A command's input without the table, which the repository fills in. */
type OnTable<Input> = Omit<Input, 'TableName'>;

export class TenantRecordRepository<T extends { id: string }> {
  constructor(
    protected readonly table: string,
    /** The secondary indexes a filtered list can read through instead of the whole scope (lib/sol/plan.ts). */
    protected readonly listIndexes: readonly ListIndex[] = [],
    /** An index in byTenant's order holding some attributes only: a page that reads no other is read there. */
    protected readonly listSummary?: ListSummary,
  ) {}

  /** Writes a new record with its tenant-scoped list index keys. */
  async create(record: T): Promise<void> {
    const { tenantId } = record as { tenantId?: string };
    await putNew(this.table, tenantId === undefined ? record : withShardedKeys(this.listIndexes, { ...record, tenantId }));
    if (tenantId !== undefined) this.rememberTenant(record.id, tenantId);
  }

  /**
   * The tenant of a record, which never changes: what a write that moves a record in a tenant-scoped
   * list index needs to name its new key. Remembered for the few hundred records written last (a
   * record's writes come in runs); read otherwise, strongly consistent (1 read unit): a record
   * created a moment ago by another process must be found, or its key would not move.
   */
  protected async tenantOf(id: string): Promise<string | undefined> {
    const known = tenants.get(`${this.table}\u0000${id}`);
    if (known !== undefined) return known;
    const out = await documentClient().send(new GetCommand({ TableName: this.table, Key: { id }, ProjectionExpression: 'tenantId', ConsistentRead: true }));
    const tenantId = out.Item?.tenantId as string | undefined;
    if (tenantId !== undefined) this.rememberTenant(id, tenantId);
    return tenantId;
  }

  protected rememberTenant(id: string, tenantId: string): void {
    const key = `${this.table}\u0000${id}`;
    tenants.delete(key);
    tenants.set(key, tenantId);
    if (tenants.size > REMEMBERED_TENANTS) tenants.delete(tenants.keys().next().value as string);
  }

  /** The sharded list index keys a write of `set`/`remove` moves the record to (none when it touches no indexed attribute). */
  protected async shardedKeysOf(
    id: string,
    set: Record<string, unknown>,
    remove: readonly string[],
  ): Promise<{ set: Record<string, string>; remove: string[] }> {
    const touched = this.listIndexes.some(
      (index) =>
        index.sharded &&
        [set, remove].some((part) =>
          Array.isArray(part) ? part.includes(index.attribute ?? index.partitionKey) : Object.hasOwn(part, index.attribute ?? index.partitionKey),
        ),
    );
    if (!touched) return { set: {}, remove: [] };
    const tenantId = await this.tenantOf(id);
    // No tenant: no such record (the write's own condition fails on it).
    if (tenantId === undefined) return { set: {}, remove: [] };
    return shardedKeyChanges(this.listIndexes, { id, tenantId }, set, remove);
  }

  get(id: string): Promise<T | undefined> {
    return getById<T>(this.table, id);
  }

  /**
   * A page of the scope's records in list order, or of those `plan` pins through one of the list
   * indexes; `read`: only these attributes of each (and its keys), as a list page that shows no more
   * asks (lib/sol/listing.ts).
   */
  listPage(scope: TenantScope, limit: number, after?: Record<string, string | number>, plan?: ListPlan, read?: readonly string[]): Promise<Page<T>> {
    if (plan?.kind !== 'index') {
      const summary = this.listSummary;
      const covered = summary !== undefined && scope !== ALL_TENANTS && read?.every((path) => summary.attributes.includes(path.split('.')[0] as string));
      if (!covered) return tenantPage<T>(this.table, scope, limit, after, read);
      // Just after a stack update adds it, DynamoDB fills the index from the table ("Cannot read from
      // backfilling global secondary index"): until then the page comes from the whole records, with
      // the same items and markers.
      return tenantPage<T>(this.table, scope, limit, after, read, summary.index).catch((error: unknown) => {
        if (!(error instanceof Error && error.name === 'ValidationException' && error.message.includes(summary.index))) throw error;
        return tenantPage<T>(this.table, scope, limit, after, read);
      });
    }
    const index = this.listIndexes.find((candidate) => candidate.name === plan.index);
    if (index === undefined) throw new Error(`${this.table} has no list index "${plan.index}"`);
    return indexPage<T>(this.table, index, plan.keyValues, scope, limit, after, read);
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

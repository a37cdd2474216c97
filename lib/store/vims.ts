// VIM records: where a VIM is and which secret holds its credentials. The VIM registry API and
// reachability monitoring build on this; LCM operations resolve a vimId, or the default VIM of a
// type, through it. Uniqueness (a name per tenant, the default per tenant and VIM type) is kept by
// small marker items in the same table, claimed with conditional writes (no transactions needed;
// dynalite has none). Markers have no tenantId, so the byTenant index never shows them.
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ALL_TENANTS, conditionHeld, documentClient, getById, putNew, requiredEnv, tenantItems, updateExpression, type TenantScope } from './dynamo.ts';

/** Tacker's VIM statuses: PENDING -> REGISTERING while being registered, then REACHABLE or UNREACHABLE. */
export type VimStatus = 'PENDING' | 'REGISTERING' | 'REACHABLE' | 'UNREACHABLE';

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
  description?: string;
  /** Non-secret parts of the registration (Tacker's vim_project, placement). */
  vimProject?: Record<string, unknown>;
  /** accessInfo with every credential replaced by "***" (what representations show). */
  maskedAccessInfo?: Record<string, unknown>;
  status?: VimStatus;
  /** When status last changed. */
  statusChangedAt?: string;
  lastCheckedAt?: string;
  /** Why the last check failed (cleared when it succeeds). */
  lastError?: string;
  updatedAt?: string;
}

export interface VimStore {
  put(record: VimRecord): Promise<void>;
  get(id: string): Promise<VimRecord | undefined>;
  /** A tenant's VIMs, or every tenant's (ALL_TENANTS, an admin's list). */
  listForTenant(scope: TenantScope): Promise<VimRecord[]>;
}

/** What the registry needs beyond lookups. */
export interface VimRegistryStore extends VimStore {
  /** false when the id exists. */
  create(record: VimRecord): Promise<boolean>;
  /** Sets attributes of an existing record; false when it is gone. */
  update(id: string, set: Partial<VimRecord>, remove?: Array<keyof VimRecord>): Promise<boolean>;
  remove(id: string): Promise<void>;
  /** Every VIM of every tenant (the reachability sweep). */
  listAll(): Promise<VimRecord[]>;
  /** Claims a unique key (a name, a default) for vimId; false when another VIM holds it. */
  claim(key: string, vimId: string): Promise<boolean>;
  /** Moves a key from one holder to another (or takes it if free); false when someone else moved it first. */
  move(key: string, from: string | undefined, to: string): Promise<boolean>;
  release(key: string, vimId: string): Promise<void>;
  holder(key: string): Promise<string | undefined>;
}

const MARKER = 'vim-key:';

export class DynamoVimStore implements VimRegistryStore {
  constructor(private readonly table = requiredEnv('VIMS_TABLE')) {}

  async put(record: VimRecord): Promise<void> {
    await documentClient().send(new PutCommand({ TableName: this.table, Item: record }));
  }

  get(id: string): Promise<VimRecord | undefined> {
    if (id.startsWith(MARKER)) return Promise.resolve(undefined);
    return getById<VimRecord>(this.table, id);
  }

  listForTenant(scope: TenantScope): Promise<VimRecord[]> {
    return tenantItems<VimRecord>(this.table, scope);
  }

  create(record: VimRecord): Promise<boolean> {
    return conditionHeld(() => putNew(this.table, record));
  }

  update(id: string, set: Partial<VimRecord>, remove: Array<keyof VimRecord> = []): Promise<boolean> {
    const defined = Object.fromEntries(Object.entries(set).filter(([, value]) => value !== undefined));
    if (!Object.keys(defined).length && !remove.length) return Promise.resolve(true);
    const parts = updateExpression({ sets: [], names: { '#id': 'id' }, values: {} }, defined, remove);
    return conditionHeld(() =>
      documentClient().send(
        new UpdateCommand({
          TableName: this.table,
          Key: { id },
          UpdateExpression: parts.expression,
          ConditionExpression: 'attribute_exists(#id)',
          ExpressionAttributeNames: parts.names,
          ...(Object.keys(parts.values).length ? { ExpressionAttributeValues: parts.values } : {}),
        }),
      ),
    );
  }

  async remove(id: string): Promise<void> {
    await documentClient().send(new DeleteCommand({ TableName: this.table, Key: { id } }));
  }

  listAll(): Promise<VimRecord[]> {
    return tenantItems<VimRecord>(this.table, ALL_TENANTS);
  }

  claim(key: string, vimId: string): Promise<boolean> {
    return conditionHeld(() =>
      documentClient().send(
        new PutCommand({
          TableName: this.table,
          Item: { id: `${MARKER}${key}`, vimId },
          ConditionExpression: 'attribute_not_exists(id) OR vimId = :v',
          ExpressionAttributeValues: { ':v': vimId },
        }),
      ),
    );
  }

  move(key: string, from: string | undefined, to: string): Promise<boolean> {
    return conditionHeld(() =>
      documentClient().send(
        new PutCommand({
          TableName: this.table,
          Item: { id: `${MARKER}${key}`, vimId: to },
          ...(from === undefined
            ? { ConditionExpression: 'attribute_not_exists(id)' }
            : { ConditionExpression: 'vimId = :f', ExpressionAttributeValues: { ':f': from } }),
        }),
      ),
    );
  }

  async release(key: string, vimId: string): Promise<void> {
    // A failed condition: another VIM holds the key now, and it stays theirs.
    await conditionHeld(() =>
      documentClient().send(
        new DeleteCommand({
          TableName: this.table,
          Key: { id: `${MARKER}${key}` },
          ConditionExpression: 'vimId = :v',
          ExpressionAttributeValues: { ':v': vimId },
        }),
      ),
    );
  }

  async holder(key: string): Promise<string | undefined> {
    const out = await documentClient().send(new GetCommand({ TableName: this.table, Key: { id: `${MARKER}${key}` }, ConsistentRead: true }));
    return (out.Item as { vimId?: string } | undefined)?.vimId;
  }
}

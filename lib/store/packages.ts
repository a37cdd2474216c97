// VNF package records (SOL005 VnfPkgInfo plus what onboarding extracted). State changes are
// conditional writes, so an upload, an onboarding run, a PATCH and a DELETE racing on one package
// cannot leave it half-changed; usage by VNF instances is a counter guarded by the package state.
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { ProblemDetailsRecord } from '#lib/sol/model.ts';
import type { ListPlan } from '#lib/sol/plan.ts';
import {
  allItems,
  conditionHeld,
  documentClient,
  ifConditionHeld,
  listIndexesByAttribute,
  requiredEnv,
  shardedKeysOf,
  backfillShardedKeys,
  tenantPage,
  updateExpression,
  type ListIndex,
  type Page,
  type TenantScope,
} from './dynamo.ts';
import { TenantRecordRepository } from './repository.ts';

export type OnboardingState = 'CREATED' | 'UPLOADING' | 'PROCESSING' | 'ONBOARDED' | 'ERROR';
export type OperationalState = 'ENABLED' | 'DISABLED';
export type UsageState = 'IN_USE' | 'NOT_IN_USE';

export interface Checksum {
  algorithm: string;
  hash: string;
}

export interface VnfPackageRecord {
  id: string;
  tenantId: string;
  createdAt: string;
  onboardingState: OnboardingState;
  operationalState: OperationalState;
  usageState: UsageState;
  userDefinedData?: Record<string, unknown>;
  vnfdId?: string;
  vnfProvider?: string;
  vnfProductName?: string;
  vnfSoftwareVersion?: string;
  vnfdVersion?: string;
  /** The VNFD's vnfm_info: which VNFMs the VNF is compatible with. */
  vnfmInfo?: string[];
  compatibleSpecificationVersions?: string[];
  checksum?: Checksum;
  packageSecurityOption?: 'OPTION_1' | 'OPTION_2';
  signingCertificate?: string;
  softwareImages?: Array<Record<string, unknown>>;
  additionalArtifacts?: Array<Record<string, unknown>>;
  onboardingFailureDetails?: ProblemDetailsRecord;
  /** Internal: VNF instances created from this package. */
  instanceCount?: number;
  /** Internal: when the package was last taken into use (the reconciliation's bound on a take still to be followed by its instance's write). */
  takenAt?: string;
  /** Internal: when the current upload or onboarding began (stale ones may be restarted). */
  stateSince?: string;
  /** Internal: size in bytes of the onboarded CSAR. */
  contentSize?: number;
  /** Internal: the sum of the CSAR's entries' sizes, uncompressed (what it expands to). */
  expandedSize?: number;
  /** Internal: the VNFD's YAML files inside the package, for GET .../vnfd. */
  vnfdFiles?: string[];
  /** Internal: artifact path -> its signature and certificate files inside the package (SOL004). */
  artifactSignatures?: Record<string, string[]>;
  revision: number;
  [attribute: string]: unknown;
}

export interface PackageChange {
  from: { onboardingState?: readonly OnboardingState[]; operationalState?: OperationalState; usageState?: UsageState };
  set?: Record<string, unknown>;
  remove?: string[];
}

export interface VnfPackageStore {
  put(record: VnfPackageRecord): Promise<void>;
  get(id: string): Promise<VnfPackageRecord | undefined>;
  findByVnfdId(vnfdId: string): Promise<VnfPackageRecord[]>;
  /** A page in creation order of the scope's packages, or of those `plan` pins through one of VNF_PACKAGE_LIST_INDEXES. */
  listPage(scope: TenantScope, limit: number, after?: Record<string, string | number>, plan?: ListPlan): Promise<Page<VnfPackageRecord>>;
  /** Applies the change if the package is in the given states; returns the new record or undefined. */
  change(id: string, change: PackageChange): Promise<VnfPackageRecord | undefined>;
  /** Deletes the package if it is DISABLED and NOT_IN_USE; false when the condition failed. */
  deleteUnused(id: string): Promise<boolean>;
  /** Counts one more instance on an ONBOARDED, ENABLED package (IN_USE) and returns it as it is now; undefined if not usable. */
  acquireUse(id: string): Promise<VnfPackageRecord | undefined>;
  /**
   * acquireUse on the condition that the package's `expected` attributes are still as given (an
   * empty string: absent), answering only whether it was taken: nothing is read back.
   */
  acquireUseIf(id: string, expected: Readonly<Record<string, string>>): Promise<boolean>;
  /** Counts one instance less; the package becomes NOT_IN_USE with its last one. */
  releaseUse(id: string): Promise<void>;
  /** Every package of every tenant being uploaded or onboarded (UPLOADING, PROCESSING); packages are few, so a Scan. */
  listOnboarding(): Promise<VnfPackageRecord[]>;
}

/** A package's place in the list order of its tenant's indexes: creation time, then id (unique, unlike the time alone). */
const createdSeqOf = (record: { id: string; createdAt?: unknown }): string | undefined =>
  typeof record.createdAt === 'string' ? `${record.createdAt}#${record.id}` : undefined;

/** A one-shard tenant-scoped index of `attribute`, keyed by `<attribute>Key`, in `createdSeq` order. */
const listIndex = (name: string, attribute: string): ListIndex => ({
  name,
  attribute,
  partitionKey: `${attribute}Key`,
  sortKey: 'createdSeq',
  sharded: true,
  shards: 1,
  sortKeyOf: createdSeqOf,
});

/**
 * The indexes a package list can read through (lib/sol/plan.ts), by the attribute they pin:
 * tenant-scoped, KEYS_ONLY, keyed by derived attributes `<tenant>#<value>#<shard>` (lib/store/dynamo.ts
 * ListIndex) that `put` writes and `change` moves, in creation order (`createdSeq`, derived from
 * the creation time and id). One shard each: packages are onboarded a few at a time, so one
 * tenant's packages of one VNFD or state are no hot partition, and a filtered list is one query.
 * Most selective first: the planner reads through the first one a filter pins.
 */
const LIST_INDEXES: readonly ListIndex[] = [
  listIndex('byVnfdKey', 'vnfdId'),
  listIndex('byOnboardingState', 'onboardingState'),
  listIndex('byOperationalState', 'operationalState'),
];
export const VNF_PACKAGE_LIST_INDEXES = /* @__PURE__ */ listIndexesByAttribute(LIST_INDEXES);

/** Records with their list index keys (a local rebuild), and the back-fill of those from before the indexes (lib/store/dynamo.ts). */
export const vnfPackageListKeys = /* @__PURE__ */ shardedKeysOf(LIST_INDEXES);
export const backfillVnfPackageListKeys = (table = requiredEnv('VNF_PACKAGES_TABLE')): Promise<number> => backfillShardedKeys(table, LIST_INDEXES);

/** A list marker's key: the tenant index's (id, tenantId, createdAt), and the list indexes' sort key. */
export const packageListKey = (r: VnfPackageRecord): Record<string, string> => ({
  id: r.id,
  tenantId: r.tenantId,
  createdAt: r.createdAt,
  createdSeq: createdSeqOf(r) as string,
});

/**
 * The write that counts one more instance on an ONBOARDED, ENABLED package (IN_USE), on the
 * condition too that its `expected` attributes are as given (an empty string: absent).
 */
function takingIntoUse(id: string, expected: Readonly<Record<string, string>> = {}) {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {
    ':one': 1,
    ':inUse': 'IN_USE',
    ':onboarded': 'ONBOARDED',
    ':enabled': 'ENABLED',
    ':takenAt': new Date().toISOString(),
  };
  const conditions = ['onboardingState = :onboarded', 'operationalState = :enabled'];
  Object.entries(expected).forEach(([attribute, value], i) => {
    names[`#e${i}`] = attribute;
    if (value === '') conditions.push(`attribute_not_exists(#e${i})`);
    else {
      values[`:e${i}`] = value;
      conditions.push(`#e${i} = :e${i}`);
    }
  });
  return {
    Key: { id },
    UpdateExpression: 'ADD instanceCount :one SET usageState = :inUse, takenAt = :takenAt',
    ConditionExpression: conditions.join(' AND '),
    ExpressionAttributeNames: Object.keys(names).length ? names : undefined,
    ExpressionAttributeValues: values,
  };
}

export class DynamoVnfPackageStore extends TenantRecordRepository<VnfPackageRecord> implements VnfPackageStore {
  constructor(table = requiredEnv('VNF_PACKAGES_TABLE')) {
    super(table, LIST_INDEXES);
  }

  put(record: VnfPackageRecord): Promise<void> {
    return this.create(record);
  }

  override listPage(scope: TenantScope, limit: number, after?: Record<string, string | number>, plan?: ListPlan): Promise<Page<VnfPackageRecord>> {
    if (plan?.kind === 'index') return super.listPage(scope, limit, after, plan);
    // The tenant index's start key is exactly its key attributes (a marker carries the list indexes' sort key too).
    const start = after && { id: after.id as string, tenantId: after.tenantId as string, createdAt: after.createdAt as string };
    return tenantPage<VnfPackageRecord>(this.table, scope, limit, start);
  }

  listOnboarding(): Promise<VnfPackageRecord[]> {
    return allItems<VnfPackageRecord>({
      TableName: this.table,
      FilterExpression: 'onboardingState IN (:u, :p)',
      ExpressionAttributeValues: { ':u': 'UPLOADING', ':p': 'PROCESSING' },
    });
  }

  async findByVnfdId(vnfdId: string): Promise<VnfPackageRecord[]> {
    const out = await documentClient().send(
      new QueryCommand({
        TableName: this.table,
        IndexName: 'byVnfdId',
        KeyConditionExpression: 'vnfdId = :v',
        ExpressionAttributeValues: { ':v': vnfdId },
      }),
    );
    return (out.Items ?? []) as VnfPackageRecord[];
  }

  async change(id: string, change: PackageChange): Promise<VnfPackageRecord | undefined> {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':one': 1, ':zero': 0 };
    const conditions = ['attribute_exists(id)'];
    const states = change.from.onboardingState ?? [];
    if (states.length) {
      names['#ob'] = 'onboardingState';
      conditions.push(
        `#ob IN (${states
          .map((state, i) => {
            values[`:ob${i}`] = state;
            return `:ob${i}`;
          })
          .join(', ')})`,
      );
    }
    if (change.from.operationalState) {
      names['#op'] = 'operationalState';
      values[':op'] = change.from.operationalState;
      conditions.push('#op = :op');
    }
    if (change.from.usageState) {
      names['#us'] = 'usageState';
      values[':us'] = change.from.usageState;
      conditions.push('#us = :us');
    }
    // A change of state or VNFD moves the package's list index keys in the same write.
    const keys = await this.shardedKeysOf(id, change.set ?? {}, change.remove ?? []);
    const parts = updateExpression({ sets: ['revision = if_not_exists(revision, :zero) + :one'], names, values }, { ...change.set, ...keys.set }, [
      ...(change.remove ?? []),
      ...keys.remove,
    ]);
    return this.updatedRecord({
      Key: { id },
      UpdateExpression: parts.expression,
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeNames: Object.keys(parts.names).length ? parts.names : undefined,
      ExpressionAttributeValues: parts.values,
    });
  }

  deleteUnused(id: string): Promise<boolean> {
    return conditionHeld(() =>
      this.deleteItem({
        Key: { id },
        ConditionExpression:
          'attribute_exists(id) AND operationalState = :d AND usageState = :n AND (attribute_not_exists(instanceCount) OR instanceCount = :zero)',
        ExpressionAttributeValues: { ':d': 'DISABLED', ':n': 'NOT_IN_USE', ':zero': 0 },
      }),
    );
  }

  acquireUse(id: string): Promise<VnfPackageRecord | undefined> {
    return this.updatedRecord(takingIntoUse(id));
  }

  acquireUseIf(id: string, expected: Readonly<Record<string, string>>): Promise<boolean> {
    return conditionHeld(() => this.updateItem(takingIntoUse(id, expected)));
  }

  async releaseUse(id: string): Promise<void> {
    // A failed condition: already at zero (a package created before counting, or a repeated release).
    const out = await ifConditionHeld(() =>
      this.updateItem({
        Key: { id },
        UpdateExpression: 'ADD instanceCount :minus',
        ConditionExpression: 'instanceCount > :zero',
        ExpressionAttributeValues: { ':minus': -1, ':zero': 0 },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    if (out?.Attributes?.instanceCount === 0) {
      // A failed condition: a new instance took it into use again in between, and it stays IN_USE.
      await conditionHeld(() =>
        this.updateItem({
          Key: { id },
          UpdateExpression: 'SET usageState = :notInUse',
          ConditionExpression: 'instanceCount = :zero',
          ExpressionAttributeValues: { ':notInUse': 'NOT_IN_USE', ':zero': 0 },
        }),
      );
    }
  }
}

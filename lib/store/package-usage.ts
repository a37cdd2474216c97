// What the reconciliation sweep reads and writes to correct a package's instance count that no
// instance backs (lib/lcm/recovery.ts): functions of their own, wired only into the sweep's ports
// (lib/deps.ts recoveryDeps), so the LCM steps' bundles, which use the package and instance stores,
// do not carry them.
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { VnfPackageRecord } from './packages.ts';
import { allItems, conditionHeld, documentClient, requiredEnv } from './dynamo.ts';

/** Every package of every tenant that counts instances (instanceCount above zero); packages are few, so a Scan. */
export function countedPackages(table = requiredEnv('VNF_PACKAGES_TABLE')): Promise<VnfPackageRecord[]> {
  return allItems<VnfPackageRecord>({
    TableName: table,
    FilterExpression: 'instanceCount > :zero',
    ExpressionAttributeValues: { ':zero': 0 },
  });
}

/**
 * Sets a package's instance count to zero (NOT_IN_USE) if it is still as `seen` (the count and the
 * last take, as the sweep read them). False when it changed meanwhile (taken or released again) or
 * is gone.
 */
export function clearUnbackedCount(id: string, seen: { instanceCount: number; takenAt?: string }, table = requiredEnv('VNF_PACKAGES_TABLE')): Promise<boolean> {
  const values: Record<string, unknown> = { ':zero': 0, ':notInUse': 'NOT_IN_USE', ':seen': seen.instanceCount };
  let taken = 'attribute_not_exists(takenAt)';
  if (seen.takenAt !== undefined) {
    values[':takenAt'] = seen.takenAt;
    taken = 'takenAt = :takenAt';
  }
  return conditionHeld(() =>
    documentClient().send(
      new UpdateCommand({
        TableName: table,
        Key: { id },
        UpdateExpression: 'SET instanceCount = :zero, usageState = :notInUse',
        ConditionExpression: `instanceCount = :seen AND ${taken}`,
        ExpressionAttributeValues: values,
      }),
    ),
  );
}

/**
 * Whether any VNF instance (of any tenant) has package `vnfPkgId` of VNFD `vnfdId`: the VNFD's
 * instances, read until the first of it. DynamoDB reads (and bills) a page's Limit of items before
 * the filter, whole (the index projects all of an instance, up to ~8 KB): the first page is one
 * item, usually the answer (a VNFD's oldest instance is of its package), and the pages grow after it.
 */
export async function anyInstanceOfPackage(vnfdId: string, vnfPkgId: string, table = requiredEnv('VNF_INSTANCES_TABLE')): Promise<boolean> {
  let after: Record<string, unknown> | undefined;
  let limit = 1;
  do {
    const out = await documentClient().send(
      new QueryCommand({
        TableName: table,
        IndexName: 'byVnfd',
        KeyConditionExpression: 'vnfdId = :v',
        FilterExpression: 'vnfPkgId = :p',
        ExpressionAttributeValues: { ':v': vnfdId, ':p': vnfPkgId },
        ProjectionExpression: 'id',
        Limit: limit,
        ExclusiveStartKey: after,
      }),
    );
    if ((out.Items ?? []).length > 0) return true;
    after = out.LastEvaluatedKey;
    limit = Math.min(limit * 10, 100);
  } while (after);
  return false;
}

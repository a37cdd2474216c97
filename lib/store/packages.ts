// VNF package records (SOL005 VnfPkgInfo). The LCM side only needs to find the onboarded, enabled
// package that holds a VNFD; onboarding writes these records.
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, requiredEnv } from './dynamo.ts';

export interface VnfPackageRecord {
  id: string;
  tenantId: string;
  vnfdId?: string;
  vnfProvider?: string;
  vnfProductName?: string;
  vnfSoftwareVersion?: string;
  vnfdVersion?: string;
  onboardingState: 'CREATED' | 'UPLOADING' | 'PROCESSING' | 'ONBOARDED' | 'ERROR';
  operationalState: 'ENABLED' | 'DISABLED';
  usageState: 'IN_USE' | 'NOT_IN_USE';
  createdAt: string;
  [attribute: string]: unknown;
}

export interface VnfPackageStore {
  put(record: VnfPackageRecord): Promise<void>;
  get(id: string): Promise<VnfPackageRecord | undefined>;
  findByVnfdId(vnfdId: string): Promise<VnfPackageRecord[]>;
}

export class DynamoVnfPackageStore implements VnfPackageStore {
  constructor(private readonly table = requiredEnv('VNF_PACKAGES_TABLE')) {}

  async put(record: VnfPackageRecord): Promise<void> {
    await documentClient().send(new PutCommand({ TableName: this.table, Item: record }));
  }

  async get(id: string): Promise<VnfPackageRecord | undefined> {
    const out = await documentClient().send(new GetCommand({ TableName: this.table, Key: { id } }));
    return out.Item as VnfPackageRecord | undefined;
  }

  async findByVnfdId(vnfdId: string): Promise<VnfPackageRecord[]> {
    const out = await documentClient().send(new QueryCommand({
      TableName: this.table,
      IndexName: 'byVnfdId',
      KeyConditionExpression: 'vnfdId = :v',
      ExpressionAttributeValues: { ':v': vnfdId },
    }));
    return (out.Items ?? []) as VnfPackageRecord[];
  }
}

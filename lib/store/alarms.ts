// Alarms (SOL003 7.5.2.4) in DynamoDB, and the alarm record this store keeps (lib/fm reads it from
// here, so the store imports nothing above it). Active alarms carry `active`/`activeKey`, the keys of a
// sparse index, so a health sweep reads every active alarm in one paged query however many cleared
// ones history holds; clearing removes them in the same conditional write that sets the clear time.
import type { InstanceSnapshot } from '#lib/sol/subscription-filter.ts';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { allItems, documentClient, listIndexesByAttribute, requiredEnv, updateExpression, type ListIndex, type Page, type TenantScope } from './dynamo.ts';
import type { ListPlan } from '#lib/sol/plan.ts';
import { TenantRecordRepository } from './repository.ts';

/** SOL003 7.5.4.3 PerceivedSeverityType */
export const PERCEIVED_SEVERITIES = ['CRITICAL', 'MAJOR', 'MINOR', 'WARNING', 'INDETERMINATE', 'CLEARED'] as const;
export type PerceivedSeverity = (typeof PERCEIVED_SEVERITIES)[number];
/** SOL003 7.5.4.5 EventType */
export const EVENT_TYPES = ['COMMUNICATIONS_ALARM', 'PROCESSING_ERROR_ALARM', 'ENVIRONMENTAL_ALARM', 'QOS_ALARM', 'EQUIPMENT_ALARM'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
/** SOL003 7.5.4.4 FaultyResourceType */
export const FAULTY_RESOURCE_TYPES = ['COMPUTE', 'STORAGE', 'NETWORK'] as const;
export type FaultyResourceType = (typeof FAULTY_RESOURCE_TYPES)[number];
/** SOL003 7.5.2.4 ackState */
export const ACK_STATES = ['UNACKNOWLEDGED', 'ACKNOWLEDGED'] as const;
export type AckState = (typeof ACK_STATES)[number];

/** An automatic HEAL the VNFM started for this alarm's VNFC. */
export interface AutoHealAttempt {
  opOccId: string;
  at: string;
}

export interface AlarmRecord {
  id: string;
  tenantId: string;
  /** The VNF instance. */
  managedObjectId: string;
  /** vnfcInfo ids of the faulty VNFC. */
  vnfcInstanceIds: string[];
  rootCauseFaultyResource: {
    faultyResource: { vimConnectionId?: string; resourceProviderId?: string; resourceId: string; vimLevelResourceType?: string };
    faultyResourceType: FaultyResourceType;
  };
  alarmRaisedTime: string;
  alarmChangedTime?: string;
  alarmClearedTime?: string;
  alarmAcknowledgedTime?: string;
  ackState: AckState;
  perceivedSeverity: PerceivedSeverity;
  eventTime: string;
  eventType: EventType;
  faultType?: string;
  probableCause: string;
  isRootCause: boolean;
  correlatedAlarmIds?: string[];
  faultDetails?: string[];
  /** GSI sort key (byTenant, byVnfInstance): alarmRaisedTime#id. */
  raisedSeq: string;
  /** Sparse GSI `active` (hash: active = "Y", range: activeKey): present only while the alarm is not cleared. */
  active?: 'Y';
  /** `<vnfInstanceId>#<resourceId>`: one active alarm per faulty VNFC. */
  activeKey?: string;
  /** Internal: the VNFC's VDU and VIM resource (the heal-storm window counts heals per VDU). */
  vduId: string;
  resourceId: string;
  /** Internal: the severity it was raised with (filters match a cleared alarm by it). */
  raisedSeverity: PerceivedSeverity;
  /** Internal: what raised it (the health sweep, an Alertmanager alert, a server notification). */
  source: 'health-check' | 'alertmanager' | 'server-notification';
  /** Internal: automatic HEALs started for it. */
  autoHeals?: AutoHealAttempt[];
  /** Internal: the instance's attributes that FM subscription filters look at. */
  instance: InstanceSnapshot;
  revision: number;
}

export interface AlarmStore {
  create(record: AlarmRecord): Promise<void>;
  get(id: string): Promise<AlarmRecord | undefined>;
  /** A page in raise order of the scope's alarms, or of those `plan` pins through one of ALARM_LIST_INDEXES. */
  listPage(scope: TenantScope, limit: number, after?: Record<string, string | number>, plan?: ListPlan): Promise<Page<AlarmRecord>>;
  /** Every alarm not cleared yet, of every tenant. */
  listActive(): Promise<AlarmRecord[]>;
  /** Whether any alarm is active (one item read from the index, at most). */
  anyActive(): Promise<boolean>;
  /** A VNF instance's alarms raised since `since` (ISO time), cleared ones included. */
  listOfInstanceSince(vnfInstanceId: string, since: string): Promise<AlarmRecord[]>;
  /** Clears an active alarm; undefined when it was cleared already. */
  clear(id: string, at: string, detail: string): Promise<AlarmRecord | undefined>;
  /** Sets ackState; undefined when the alarm already has it (or does not exist). */
  acknowledge(id: string, ackState: AckState, at: string): Promise<AlarmRecord | undefined>;
  /** Records attributes of an alarm (auto-heal attempts, fault details). */
  update(id: string, set: Partial<AlarmRecord>): Promise<AlarmRecord | undefined>;
}

export const alarmListKey = (r: AlarmRecord): Record<string, string> => ({ id: r.id, tenantId: r.tenantId, raisedSeq: r.raisedSeq });

/**
 * The index an alarm list can read through (lib/sol/plan.ts): an instance's alarms (`byVnfInstance`,
 * keyed by managedObjectId, in raise order like the tenant list), the read keeping the scope's tenant.
 */
const LIST_INDEXES: readonly ListIndex[] = [{ name: 'byVnfInstance', partitionKey: 'managedObjectId', sortKey: 'raisedSeq' }];
export const ALARM_LIST_INDEXES = /* @__PURE__ */ listIndexesByAttribute(LIST_INDEXES);

export class DynamoAlarmStore extends TenantRecordRepository<AlarmRecord> implements AlarmStore {
  constructor(table = requiredEnv('ALARMS_TABLE')) {
    super(table, LIST_INDEXES);
  }

  listActive(): Promise<AlarmRecord[]> {
    return allItems<AlarmRecord>({
      TableName: this.table,
      IndexName: 'active',
      KeyConditionExpression: 'active = :y',
      ExpressionAttributeValues: { ':y': 'Y' },
    });
  }

  async anyActive(): Promise<boolean> {
    const { Items = [] } = await documentClient().send(
      new QueryCommand({
        TableName: this.table,
        IndexName: 'active',
        KeyConditionExpression: 'active = :y',
        ExpressionAttributeValues: { ':y': 'Y' },
        Limit: 1,
      }),
    );
    return Items.length > 0;
  }

  listOfInstanceSince(vnfInstanceId: string, since: string): Promise<AlarmRecord[]> {
    return allItems<AlarmRecord>({
      TableName: this.table,
      IndexName: 'byVnfInstance',
      KeyConditionExpression: 'managedObjectId = :i AND raisedSeq >= :s',
      ExpressionAttributeValues: { ':i': vnfInstanceId, ':s': since },
    });
  }

  clear(id: string, at: string, detail: string): Promise<AlarmRecord | undefined> {
    return this.updatedRecord({
      Key: { id },
      UpdateExpression:
        'SET alarmClearedTime = :t, alarmChangedTime = :t, perceivedSeverity = :c, faultDetails = list_append(if_not_exists(faultDetails, :empty), :d), revision = revision + :one REMOVE active, activeKey',
      ConditionExpression: 'attribute_exists(active)',
      ExpressionAttributeValues: { ':t': at, ':c': 'CLEARED', ':d': [detail], ':empty': [], ':one': 1 },
    });
  }

  acknowledge(id: string, ackState: AckState, at: string): Promise<AlarmRecord | undefined> {
    const set: Record<string, unknown> = { ackState, alarmChangedTime: at };
    if (ackState === 'ACKNOWLEDGED') set.alarmAcknowledgedTime = at;
    const parts = updateExpression(
      { sets: ['revision = revision + :one'], values: { ':one': 1, ':want': ackState } },
      set,
      ackState === 'ACKNOWLEDGED' ? [] : ['alarmAcknowledgedTime'],
    );
    return this.updatedRecord({
      Key: { id },
      UpdateExpression: parts.expression,
      ConditionExpression: 'attribute_exists(id) AND ackState <> :want',
      ExpressionAttributeNames: parts.names,
      ExpressionAttributeValues: parts.values,
    });
  }

  update(id: string, set: Partial<AlarmRecord>): Promise<AlarmRecord | undefined> {
    const parts = updateExpression({ sets: ['revision = revision + :one'], values: { ':one': 1 } }, set);
    return this.updatedRecord({
      Key: { id },
      UpdateExpression: parts.expression,
      ConditionExpression: 'attribute_exists(id)',
      ExpressionAttributeNames: parts.names,
      ExpressionAttributeValues: parts.values,
    });
  }
}

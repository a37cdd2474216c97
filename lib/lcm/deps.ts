// The ports the LCM rules depend on, wired once per process to their AWS implementations.
// Tests and the benchmark can hand in other implementations.
import { DescribeExecutionCommand, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { LcmOperationType } from '#lib/sol/model.ts';
import { DynamoVnfInstanceStore, type VnfInstanceStore } from '#lib/store/vnf-instances.ts';
import { DynamoVnfLcmOpOccStore, type VnfLcmOpOccStore } from '#lib/store/op-occs.ts';
import { DynamoVnfPackageStore, type VnfPackageStore } from '#lib/store/packages.ts';
import { SecretsManagerStore, type SecretStore } from '#lib/secrets/vim-access.ts';
import { DynamoVimStore, type VimStore } from '#lib/store/vims.ts';
import { requiredEnv } from '#lib/store/dynamo.ts';
import { notifyingInstanceStore, notifyingOpOccStore, republishUnsent } from '#lib/notify/publisher.ts';
import { DynamoNotificationOutbox } from '#lib/store/outbox.ts';
import { DynamoAlarmStore } from '#lib/store/alarms.ts';
import { SqsNotificationQueue } from '#lib/notify/queue.ts';
import { notifyingPackageStore } from '#lib/packages/notifications.ts';

/**
 * Starts state machines. An LCM operation's execution is named after its op occ id, so a retried
 * start is idempotent; the machine's ARN comes from `<OPERATION>_STATE_MACHINE_ARN`.
 */
export interface OperationExecutor {
  start(operation: LcmOperationType | 'PACKAGE_UPLOAD' | 'ROLLBACK', executionName: string, input: Record<string, unknown>): Promise<void>;
  /** The execution's status (RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED), or undefined when there is none of that name. */
  status(operation: LcmOperationType | 'PACKAGE_UPLOAD' | 'ROLLBACK', executionName: string): Promise<string | undefined>;
}

export class StepFunctionsExecutor implements OperationExecutor {
  private readonly client = new SFNClient({});

  async start(operation: LcmOperationType | 'PACKAGE_UPLOAD' | 'ROLLBACK', executionName: string, input: Record<string, unknown>): Promise<void> {
    await this.client.send(new StartExecutionCommand({
      stateMachineArn: requiredEnv(`${operation}_STATE_MACHINE_ARN`),
      name: executionName,
      input: JSON.stringify(input),
    }));
  }

  async status(operation: LcmOperationType | 'PACKAGE_UPLOAD' | 'ROLLBACK', executionName: string): Promise<string | undefined> {
    // arn:aws:states:<region>:<account>:stateMachine:<name> -> ...:execution:<name>:<execution>
    const executionArn = `${requiredEnv(`${operation}_STATE_MACHINE_ARN`).replace(':stateMachine:', ':execution:')}:${executionName}`;
    try {
      return (await this.client.send(new DescribeExecutionCommand({ executionArn }))).status;
    } catch (error) {
      if (error instanceof Error && error.name === 'ExecutionDoesNotExist') return undefined;
      throw error;
    }
  }
}

export interface LcmDeps {
  instances: VnfInstanceStore;
  opOccs: VnfLcmOpOccStore;
  packages: VnfPackageStore;
  vims: VimStore;
  secrets: SecretStore;
  executor: OperationExecutor;
  now(): string;
  newId(): string;
  /** With notifications: queues what a dead process left in the outbox before `olderThan`; returns the ids queued. */
  republishUnsent?(olderThan: string): Promise<string[]>;
}

let deps: LcmDeps | undefined;

export function defaultDeps(): LcmDeps {
  deps ??= withNotifications({
    instances: new DynamoVnfInstanceStore(),
    opOccs: new DynamoVnfLcmOpOccStore(),
    packages: new DynamoVnfPackageStore(),
    vims: new DynamoVimStore(),
    secrets: new SecretsManagerStore(),
    executor: new StepFunctionsExecutor(),
    now: () => new Date().toISOString(),
    newId: () => crypto.randomUUID(),
  });
  return deps;
}

/** Every op occ, instance and package change written through these deps is queued for notification (SOL003 5.6.2, SOL005 9.6.2). */
function withNotifications(base: LcmDeps): LcmDeps {
  if (!process.env.NOTIFICATION_QUEUE_URL) return base;
  const queue = new SqsNotificationQueue();
  const outbox = new DynamoNotificationOutbox();
  return {
    ...base,
    instances: notifyingInstanceStore(base.instances, queue, base.now, outbox),
    opOccs: notifyingOpOccStore(base.opOccs, base.instances, queue, outbox),
    packages: notifyingPackageStore(base.packages, queue, base.now, outbox),
    republishUnsent: (olderThan) => republishUnsent(outbox, { opOccs: base.opOccs, instances: base.instances, alarms: new DynamoAlarmStore(), packages: base.packages }, queue, olderThan),
  };
}

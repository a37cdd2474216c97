// Starts, stops and looks up the executions of the LCM and package state machines: the OperationExecutor
// port, and its Step Functions implementation.
import { DescribeExecutionCommand, SFNClient, StartExecutionCommand, StopExecutionCommand } from '@aws-sdk/client-sfn';
import type { LcmOperationType } from '#lib/sol/model.ts';
import { requiredEnv } from './dynamo.ts';
import { awsClient } from '#lib/aws-client.ts';

/**
 * Starts state machines. An LCM operation's execution is named after its op occ id, so a retried
 * start is idempotent; the machine's ARN comes from `<OPERATION>_STATE_MACHINE_ARN`.
 */
export interface OperationExecutor {
  start(operation: LcmOperationType | 'PACKAGE_UPLOAD' | 'ROLLBACK', executionName: string, input: Record<string, unknown>): Promise<void>;
  /** The execution's status (RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED), or undefined when there is none of that name. */
  status(operation: LcmOperationType | 'PACKAGE_UPLOAD' | 'ROLLBACK', executionName: string): Promise<string | undefined>;
  /**
   * Stops a running execution now (ABORTED; a task in flight runs to its end, but the machine takes
   * no further step). Nothing happens for an execution that has ended or does not exist.
   */
  stop(operation: LcmOperationType | 'ROLLBACK', executionName: string): Promise<void>;
}

export class StepFunctionsExecutor implements OperationExecutor {
  private readonly client = awsClient(new SFNClient({}));

  async start(operation: LcmOperationType | 'PACKAGE_UPLOAD' | 'ROLLBACK', executionName: string, input: Record<string, unknown>): Promise<void> {
    await this.client.send(
      new StartExecutionCommand({
        stateMachineArn: requiredEnv(`${operation}_STATE_MACHINE_ARN`),
        name: executionName,
        input: JSON.stringify(input),
      }),
    );
  }

  async status(operation: LcmOperationType | 'PACKAGE_UPLOAD' | 'ROLLBACK', executionName: string): Promise<string | undefined> {
    try {
      return (await this.client.send(new DescribeExecutionCommand({ executionArn: executionArn(operation, executionName) }))).status;
    } catch (error) {
      if (error instanceof Error && error.name === 'ExecutionDoesNotExist') return undefined;
      throw error;
    }
  }

  async stop(operation: LcmOperationType | 'ROLLBACK', executionName: string): Promise<void> {
    try {
      // Without error and cause: the op occ records why, and an execution encrypted with a customer
      // key can then be stopped without any KMS permission.
      await this.client.send(new StopExecutionCommand({ executionArn: executionArn(operation, executionName) }));
    } catch (error) {
      if (error instanceof Error && error.name === 'ExecutionDoesNotExist') return;
      throw error;
    }
  }
}

/** arn:aws:states:<region>:<account>:stateMachine:<name> -> ...:execution:<name>:<execution> */
function executionArn(operation: LcmOperationType | 'PACKAGE_UPLOAD' | 'ROLLBACK', executionName: string): string {
  return `${requiredEnv(`${operation}_STATE_MACHINE_ARN`).replace(':stateMachine:', ':execution:')}:${executionName}`;
}

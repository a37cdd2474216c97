// Starts and looks up the executions of the LCM and package state machines: the OperationExecutor
// port, and its Step Functions implementation.
import { DescribeExecutionCommand, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { LcmOperationType } from '#lib/sol/model.ts';
import { requiredEnv } from './dynamo.ts';

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
    await this.client.send(
      new StartExecutionCommand({
        stateMachineArn: requiredEnv(`${operation}_STATE_MACHINE_ARN`),
        name: executionName,
        input: JSON.stringify(input),
      }),
    );
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

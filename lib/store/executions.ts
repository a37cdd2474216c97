// Starts and looks up Step Functions executions: the OperationExecutor port on AWS.
import { DescribeExecutionCommand, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import type { LcmOperationType } from '#lib/sol/model.ts';
import type { OperationExecutor } from '#lib/ports.ts';
import { requiredEnv } from './dynamo.ts';

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

// SQS target of the notification queue (FIFO, ReportBatchItemFailures): fans recorded LCM changes
// out to the matching subscriptions and delivers each notification to its subscriber's callback.
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { notifyDeps } from '#lib/notify/deps.ts';
import { processNotificationBatch } from '#lib/notify/notifier.ts';

export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  const result = await processNotificationBatch(notifyDeps(), event.Records.map((record) => ({
    messageId: record.messageId,
    receiptHandle: record.receiptHandle,
    body: record.body,
    groupId: record.attributes.MessageGroupId ?? record.messageId,
    sentAt: Number(record.attributes.SentTimestamp),
  })), { remainingMs: () => context.getRemainingTimeInMillis() });
  return { batchItemFailures: result.failedMessageIds.map((itemIdentifier) => ({ itemIdentifier })) };
};

// SQS target of the notification queue (FIFO, ReportBatchItemFailures): fans recorded LCM changes,
// alarms and VNF package changes out to the matching subscriptions and delivers each notification
// to its subscriber's callback.
// X-Ray subsegments for its invocations and AWS SDK calls (lib/trace.ts; not every function has room for it).
import '#lib/trace.ts';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { notificationFamilies, notifierDeps } from '#lib/deps.ts';
import type { NotifierDeps } from '#lib/notify/ports.ts';
import { processNotificationBatch } from '#lib/notify/notifier.ts';
import { instrumented } from '#lib/metrics.ts';

let deps: NotifierDeps | undefined;

const handle = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
  // The families it delivers (VNF LCM, VNF FM, VNF packages); the notifier knows no other.
  deps ??= notifierDeps(notificationFamilies());
  const result = await processNotificationBatch(
    deps,
    event.Records.map((record) => ({
      messageId: record.messageId,
      receiptHandle: record.receiptHandle,
      body: record.body,
      groupId: record.attributes.MessageGroupId ?? record.messageId,
      sentAt: Number(record.attributes.SentTimestamp),
    })),
    { remainingMs: () => context.getRemainingTimeInMillis() },
  );
  return { batchItemFailures: result.failedMessageIds.map((itemIdentifier) => ({ itemIdentifier })) };
};

export const handler = instrumented(handle);

// The notification queue (SQS FIFO) as the API families and the notifier use it: change events
// grouped by what changed (a VNF instance, a VNF package), deliveries grouped by subscription and
// that group (so one instance's notifications reach each NFVO in order, and one slow NFVO holds up
// nobody else), visibility
// changes for backoff, and the dead-letter queue an operator inspects and redrives.
import { randomUUID } from 'node:crypto';
import {
  ChangeMessageVisibilityBatchCommand,
  SendMessageBatchCommand,
  SQSClient,
  type MessageAttributeValue,
  type SendMessageBatchRequestEntry,
} from '@aws-sdk/client-sqs';
import { requiredEnv } from '#lib/store/dynamo.ts';
import { stableId, type FamilyEvent, type NotificationDelivery } from './model.ts';
import { awsClient } from '#lib/aws-client.ts';

export interface OutgoingMessage {
  body: string;
  groupId: string;
  deduplicationId: string;
  attributes?: Record<string, string>;
}

/** What goes on the queue to be fanned out: a change of any family (LCM changes, alarms raised and cleared, package changes). */
export type QueuedEvent = FamilyEvent;

export interface NotificationQueue {
  /** State-change events, in the order given (FIFO per group: a VNF instance, a VNF package). */
  publish(events: QueuedEvent[]): Promise<void>;
  /** Deliveries for matching subscriptions, grouped by subscription and `group` (the event's group). */
  enqueueDeliveries(deliveries: NotificationDelivery[], group: string): Promise<void>;
  /** Keeps received messages invisible (in flight) for the given seconds; 0 makes them visible again. */
  changeVisibility(entries: Array<{ receiptHandle: string; seconds: number }>): Promise<void>;
  /** Moves a message's body to the dead-letter queue, with why it is there. */
  deadLetter(messages: Array<{ body: string; groupId: string; reason: Record<string, string> }>): Promise<void>;
}

/** SQS allows 256 KiB per message; a FULL event keeps its change details only while it fits. */
export const MAX_EVENT_BYTES = 200 * 1024;
const MAX_BATCH_BYTES = 250 * 1024;

const deliveryGroup = (subscriptionId: string, group: string) => `${subscriptionId}:${group}`;

let client: SQSClient | undefined;
function sqs(): SQSClient {
  // More attempts than the default 3: an event not sent is a notification lost.
  client ??= awsClient(new SQSClient({ maxAttempts: 6 }));
  return client;
}

/** SendMessageBatch takes 10 messages and 256 KiB in all: chunks within both, in order. */
function chunks(messages: OutgoingMessage[]): OutgoingMessage[][] {
  const out: OutgoingMessage[][] = [];
  let current: OutgoingMessage[] = [];
  let bytes = 0;
  for (const message of messages) {
    const size = Buffer.byteLength(message.body) + 1024; // attributes and ids, generously
    if (current.length === 10 || (current.length > 0 && bytes + size > MAX_BATCH_BYTES)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(message);
    bytes += size;
  }
  if (current.length) out.push(current);
  return out;
}

async function sendBatch(queueUrl: string, messages: OutgoingMessage[]): Promise<void> {
  for (const chunk of chunks(messages)) {
    const entries: SendMessageBatchRequestEntry[] = chunk.map((message, j) => ({
      Id: String(j),
      MessageBody: message.body,
      MessageGroupId: message.groupId,
      MessageDeduplicationId: message.deduplicationId,
      MessageAttributes: message.attributes
        ? Object.fromEntries(
            Object.entries(message.attributes).map(([name, value]): [string, MessageAttributeValue] => [name, { DataType: 'String', StringValue: value }]),
          )
        : undefined,
    }));
    const out = await sqs().send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
    const failed = out.Failed ?? [];
    if (failed.length) throw new Error(`SQS refused ${failed.length} message(s): ${failed.map((f) => `${f.Code ?? ''} ${f.Message ?? ''}`).join('; ')}`);
  }
}

export class SqsNotificationQueue implements NotificationQueue {
  constructor(
    private readonly queueUrl = requiredEnv('NOTIFICATION_QUEUE_URL'),
    private readonly deadLetterUrl = process.env.NOTIFICATION_DLQ_URL,
  ) {}

  async publish(events: QueuedEvent[]): Promise<void> {
    await sendBatch(
      this.queueUrl,
      events.map((event) => ({
        body: JSON.stringify(event),
        groupId: event.groupId,
        // The same change published twice (a retried step) is dropped by SQS within its 5-minute window.
        deduplicationId: event.notificationId,
      })),
    );
  }

  async enqueueDeliveries(deliveries: NotificationDelivery[], group: string): Promise<void> {
    await sendBatch(
      this.queueUrl,
      deliveries.map((delivery) => ({
        body: JSON.stringify(delivery),
        groupId: deliveryGroup(delivery.subscriptionId, group),
        deduplicationId: stableId(`${delivery.notificationId}/${delivery.subscriptionId}`),
      })),
    );
  }

  async changeVisibility(entries: Array<{ receiptHandle: string; seconds: number }>): Promise<void> {
    for (let i = 0; i < entries.length; i += 10) {
      await sqs().send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: this.queueUrl,
          Entries: entries.slice(i, i + 10).map((entry, j) => ({ Id: String(j), ReceiptHandle: entry.receiptHandle, VisibilityTimeout: entry.seconds })),
        }),
      );
    }
  }

  async deadLetter(messages: Array<{ body: string; groupId: string; reason: Record<string, string> }>): Promise<void> {
    if (!this.deadLetterUrl) throw new Error('Environment variable NOTIFICATION_DLQ_URL is not set');
    // A fresh deduplication id: the same delivery may land here again after a redrive.
    await sendBatch(
      this.deadLetterUrl,
      messages.map((message) => ({ body: message.body, groupId: message.groupId, deduplicationId: randomUUID(), attributes: message.reason })),
    );
  }
}

// PM notifications through the notifier: each goes to its one recipient, the PM job's or the
// threshold's callback (never to every subscription of the tenant), with Version 2.2.0; a recipient
// deleted meanwhile gets nothing; the recovery sweep queues the event an outbox entry kept.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { processNotificationBatch } from '#lib/notify/notifier.ts';
import type { PmJobRecord, ThresholdRecord } from '#lib/pm/model.ts';
import { pmNotificationFamily, pmOutboxEntry, pmOutboxReplay, reportAvailableEvent, thresholdCrossedEvent } from '#lib/pm/notifications.ts';
import { notifierHarness, recordingCallback } from '../notify/support.ts';

const callback = recordingCallback();

const job = (id: string, path: string): PmJobRecord =>
  ({
    id,
    tenantId: 't',
    createdAt: '2026-12-01T10:00:00Z',
    createdSeq: '',
    objectType: 'Vnf',
    objectInstanceIds: ['vnf-1'],
    criteria: { performanceMetric: ['VCpuUsageMeanVnf'], collectionPeriod: 60, reportingPeriod: 60 },
    callbackUri: `${callback.base()}/${path}`,
    apiRoot: 'http://vnfm',
    reports: [],
    period: { collections: 0, usage: {}, growth: {} },
    counters: {},
    revision: 1,
  }) as PmJobRecord;

const threshold = (id: string, path: string): ThresholdRecord => ({
  id,
  tenantId: 't',
  createdAt: '2026-12-01T10:00:00Z',
  createdSeq: '',
  objectType: 'Vnf',
  objectInstanceId: 'vnf-1',
  criteria: { performanceMetric: 'VCpuUsageMeanVnf', thresholdType: 'SIMPLE', simpleThresholdDetails: { thresholdValue: 50, hysteresis: 5 } },
  callbackUri: `${callback.base()}/${path}`,
  apiRoot: 'http://vnfm',
  crossings: {},
  revision: 1,
});

let serial = 0;
const message = (body: unknown) => {
  serial++;
  return { messageId: `m${serial}`, receiptHandle: `r${serial}`, body: JSON.stringify(body), groupId: 'g', sentAt: 1_000_000 };
};
const forever = { remainingMs: () => 60_000 };

describe('PM notifications', () => {
  it('go to their job or threshold alone, with Version 2.2.0; nothing goes to one deleted meanwhile', async () => {
    callback.received.length = 0;
    const jobs = [job('job-1', 'job-1'), job('job-2', 'job-2')];
    const thresholds = [threshold('threshold-1', 'threshold-1')];
    const family = pmNotificationFamily({ get: async (id) => jobs.find((j) => j.id === id) }, { get: async (id) => thresholds.find((t) => t.id === id) });
    const h = notifierHarness([family]);
    const events = [
      reportAvailableEvent(jobs[0] as PmJobRecord, 'report-1', 'vnf-1', '2026-12-01T10:01:00Z'),
      thresholdCrossedEvent(thresholds[0] as ThresholdRecord, { direction: 'UP', subObjectInstanceId: 'vnfc-1', value: 91 }, '2026-12-01T10:01:00Z'),
      reportAvailableEvent(job('job-gone', 'gone'), 'report-2', 'vnf-1', '2026-12-01T10:01:00Z'),
    ];
    await processNotificationBatch(h.deps, events.map(message), forever);
    assert.deepEqual(
      h.queued.map((q) => [q.delivery.family, q.delivery.subscriptionId]),
      [
        ['vnfpm', 'job-1'],
        ['vnfpm', 'threshold-1'],
      ],
    );
    const result = await processNotificationBatch(
      h.deps,
      h.queued.map((q) => message(q.delivery)),
      forever,
    );
    assert.equal(result.delivered, 2);
    assert.deepEqual(callback.received.map((r) => [r.path, r.version, r.body.notificationType]).sort(), [
      ['/job-1', '2.2.0', 'PerformanceInformationAvailableNotification'],
      ['/threshold-1', '2.2.0', 'ThresholdCrossedNotification'],
    ]);
    const report = callback.received.find((r) => r.path === '/job-1')?.body as { _links: { performanceReport: { href: string } } };
    assert.equal(report._links.performanceReport.href, 'http://vnfm/vnfpm/v2/pm_jobs/job-1/reports/report-1');
  });

  it('the same report or crossing always has the same notification id; the recovery sweep queues what the outbox kept', async () => {
    const j = job('job-1', 'x');
    assert.equal(reportAvailableEvent(j, 'r', 'vnf-1', 'a').notificationId, reportAvailableEvent(j, 'r', 'vnf-1', 'b').notificationId);
    const event = thresholdCrossedEvent(threshold('t', 'x'), { direction: 'DOWN', subObjectInstanceId: 'c', value: 1 }, '2026-12-01T10:00:00Z');
    const replay = pmOutboxReplay().pm;
    assert.ok(replay);
    assert.deepEqual(await replay(pmOutboxEntry(event)), event);
  });
});

// Alertmanager webhooks as Tacker's prometheus plugin has them sent to /pm_event and /pm_threshold:
// the events they carry, the alerts set aside with a reason, and the bodies refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePmWebhook } from '#lib/pm/alertmanager.ts';
import { BadRequestError } from '#lib/sol/errors.ts';

const NOW = new Date('2026-03-01T10:00:30.000Z');
const INSTANCE = '507280d8-bfc5-4b88-904b-9280ba6bc3ea';

/** An alert as Tacker's rules label it, as Alertmanager 0.25 sends it. */
function alert(labels: Record<string, string>, value: string | number | undefined, status: 'firing' | 'resolved' = 'firing', fingerprint = 'a1b2c3d4e5f60718') {
  return {
    status,
    labels: { alertname: 'f3c1a2b0-0d1e-4b7a-9c55-6b1d1f0e2a9c', receiver_type: 'tacker', object_instance_id: INSTANCE, ...labels },
    annotations: value === undefined ? {} : { value },
    startsAt: '2026-03-01T09:58:00.123Z',
    endsAt: status === 'resolved' ? '2026-03-01T10:00:00.000Z' : '0001-01-01T00:00:00Z',
    generatorURL: 'http://prometheus:9090/graph?g0.expr=...',
    fingerprint,
  };
}

function webhook(...alerts: unknown[]) {
  return {
    version: '4',
    groupKey: '{}/{function_type="vnfpm"}:{}',
    truncatedAlerts: 0,
    status: 'firing',
    receiver: 'vnfpm',
    groupLabels: {},
    commonLabels: { receiver_type: 'tacker' },
    commonAnnotations: {},
    externalURL: 'http://alertmanager:9093',
    alerts,
  };
}

describe('parsePmWebhook', () => {
  it("reads a PM job's events: job, object, sub-object, metric and value, stamped when received", () => {
    const body = webhook(
      alert({ function_type: 'vnfpm', job_id: 'job-1', metric: `VCpuUsageMeanVnf.${INSTANCE}` }, '12.5'),
      alert(
        { function_type: 'vnfpm', job_id: 'job-1', sub_object_instance_id: 'VDU1-vnfc', metric: 'ByteIncomingVnfIntCp' },
        1e6,
        'firing',
        '0f0f0f0f0f0f0f0f',
      ),
    );
    assert.deepEqual(parsePmWebhook(body, 'pm_event', NOW), {
      events: [
        {
          kind: 'pm_event',
          jobId: 'job-1',
          objectInstanceId: INSTANCE,
          metric: `VCpuUsageMeanVnf.${INSTANCE}`,
          value: 12.5,
          at: NOW.toISOString(),
          status: 'firing',
          fingerprint: 'a1b2c3d4e5f60718',
        },
        {
          kind: 'pm_event',
          jobId: 'job-1',
          objectInstanceId: INSTANCE,
          subObjectInstanceId: 'VDU1-vnfc',
          metric: 'ByteIncomingVnfIntCp',
          value: 1e6,
          at: NOW.toISOString(),
          status: 'firing',
          fingerprint: '0f0f0f0f0f0f0f0f',
        },
      ],
      ignored: [],
    });
  });

  it("reads a threshold's events; a resolved alert is stamped when it ended", () => {
    const body = webhook(
      alert({ function_type: 'vnfpm_threshold', threshold_id: 'th-1', metric: `VMemoryUsageMeanVnf.${INSTANCE}` }, '1e+02'),
      alert({ function_type: 'vnfpm_threshold', threshold_id: 'th-1', metric: `VMemoryUsageMeanVnf.${INSTANCE}` }, '40', 'resolved', 'ffff0000ffff0000'),
    );
    const { events, ignored } = parsePmWebhook(body, 'pm_threshold', NOW);
    assert.deepEqual(ignored, []);
    assert.deepEqual(
      events.map((event) => [event.kind, event.thresholdId, event.jobId, event.value, event.status, event.at]),
      [
        ['pm_threshold', 'th-1', undefined, 100, 'firing', NOW.toISOString()],
        ['pm_threshold', 'th-1', undefined, 40, 'resolved', '2026-03-01T10:00:00.000Z'],
      ],
    );
  });

  it('sets aside, with a reason, alerts of another receiver or route and alerts lacking what an event needs', () => {
    const body = webhook(
      alert({ function_type: 'vnfpm_threshold', threshold_id: 'th-1', metric: 'm' }, '1', 'firing', 'f1'),
      alert({ function_type: 'vnffm', vnf_instance_id: INSTANCE }, undefined, 'firing', 'f2'),
      alert({ receiver_type: 'other', function_type: 'vnfpm', job_id: 'job-1', metric: 'm' }, '1', 'firing', 'f3'),
      alert({ function_type: 'vnfpm', metric: 'm' }, '1', 'firing', 'f4'),
      alert({ function_type: 'vnfpm', job_id: 'job-1' }, '1', 'firing', 'f5'),
      alert({ function_type: 'vnfpm', job_id: 'job-1', metric: 'm', object_instance_id: '' }, '1', 'firing', 'f6'),
      alert({ function_type: 'vnfpm', job_id: 'job-1', metric: 'm' }, 'NaN', 'firing', 'f7'),
      alert({ function_type: 'vnfpm', job_id: 'job-1', metric: 'm' }, undefined, 'firing', 'f8'),
      alert({ function_type: 'vnfpm', job_id: 'job-1', metric: 'm' }, '7', 'firing', 'f9'),
    );
    const { events, ignored } = parsePmWebhook(body, 'pm_event', NOW);
    assert.deepEqual(
      events.map((event) => event.fingerprint),
      ['f9'],
    );
    assert.deepEqual(ignored, [
      { reason: 'alert f1: function_type is "vnfpm_threshold", not "vnfpm" (this route is /pm_event)' },
      { reason: 'alert f2: function_type is "vnffm", not "vnfpm" (this route is /pm_event)' },
      { reason: 'alert f3: receiver_type is "other", not "tacker"' },
      { reason: 'alert f4: no job_id label' },
      { reason: 'alert f5: no metric label' },
      { reason: 'alert f6: no object_instance_id label' },
      { reason: 'alert f7: annotations.value is "NaN", not a number' },
      { reason: 'alert f8: annotations.value is missing' },
    ]);
  });

  it('takes an empty batch', () => {
    assert.deepEqual(parsePmWebhook(webhook(), 'pm_threshold', NOW), { events: [], ignored: [] });
  });

  it('refuses, as a 400, a body that is not an Alertmanager webhook, saying where', () => {
    const refused = (body: unknown, pattern: RegExp) =>
      assert.throws(
        () => parsePmWebhook(body, 'pm_event', NOW),
        (error: Error) => error instanceof BadRequestError && error.status === 400 && pattern.test(error.message),
      );
    refused(undefined, /^not an Alertmanager webhook: the body:/);
    refused('alerts', /^not an Alertmanager webhook: the body:/);
    refused({ version: '4' }, /alerts:/);
    refused({ alerts: {} }, /alerts:/);
    refused({ alerts: [{ labels: {}, annotations: {}, startsAt: 'x', fingerprint: 'f' }] }, /alerts\.0\.status:/);
    refused(webhook({ ...alert({ function_type: 'vnfpm' }, '1'), status: 'pending' }), /alerts\.0\.status:/);
    refused(webhook({ ...alert({ function_type: 'vnfpm' }, '1'), labels: { job_id: 5 } }), /alerts\.0\.labels\.job_id:/);
    refused(webhook({ ...alert({ function_type: 'vnfpm' }, '1'), fingerprint: undefined }), /alerts\.0\.fingerprint:/);
  });
});

// The PM collector's idle path: with no job due and no threshold a sweep reads the two empty
// results and stops, taking no lease and writing nothing; with work it reads again under its lease.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { collect } from '#lib/pm/collector.ts';
import type { PmDeps } from '#lib/pm/ports.ts';

const refuse = (what: string) => () => {
  throw new Error(`an idle sweep must not ${what}`);
};

function deps(overrides: Partial<PmDeps> = {}): PmDeps & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    jobs: {
      listDue: async (until: string) => {
        reads.push(`due<=${until}`);
        return [];
      },
      create: refuse('create a job'),
      get: refuse('read a job'),
      listPage: refuse('list jobs'),
      delete: refuse('delete a job'),
      modify: refuse('modify a job'),
      recordCollection: refuse('record a collection'),
      putReport: refuse('store a report'),
      getReport: refuse('read a report'),
    },
    thresholds: {
      listAll: async () => {
        reads.push('thresholds');
        return [];
      },
      create: refuse('create a threshold'),
      get: refuse('read a threshold'),
      listPage: refuse('list thresholds'),
      delete: refuse('delete a threshold'),
      modify: refuse('modify a threshold'),
      recordCrossings: refuse('record crossings'),
    },
    instances: { get: refuse('read an instance') },
    notify: {
      secrets: { create: refuse('create'), put: refuse('put'), read: refuse('read'), remove: refuse('remove') },
      egress: {} as PmDeps['notify']['egress'],
      now: () => '2026-12-01T10:00:00.000Z',
      newId: () => 'id',
    },
    leases: { acquire: refuse('take the lease'), release: refuse('release the lease') },
    sweepRateSeconds: 60,
    reportRetentionSeconds: 86_400,
    vimTimeoutMs: 1000,
    vimConcurrency: 1,
    ...overrides,
  } as PmDeps & { reads: string[] };
}

describe('PM collector', () => {
  it('with nothing due and no threshold, reads two empty results and writes nothing', async () => {
    const idle = deps();
    const report = await collect(idle, 60_000);
    assert.equal(report.jobs, 0);
    assert.equal(report.skipped, undefined);
    // Jobs due before the sweep after this one (half the rate ahead) count as due now.
    assert.deepEqual(idle.reads, ['due<=2026-12-01T10:00:30.000Z', 'thresholds']);
  });

  it('with work, skips when another sweep holds the lease', async () => {
    const busy = deps({ leases: { acquire: async () => false, release: refuse('release a lease it does not hold') } });
    busy.thresholds.listAll = async () => [{ id: 't' } as never];
    assert.equal((await collect(busy, 60_000)).skipped, 'another sweep holds the lease');
  });
});

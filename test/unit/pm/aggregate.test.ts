// Performance management's arithmetic: a VIM's measurements as a sample, a reporting period's
// collections folded into running aggregates and reported (means, peaks, counter growth with
// restarts), metric names and groups, a simple threshold's crossings with hysteresis, and when a
// job collects next.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { crossing, emptyPeriod, fold, metricsOf, reportEntries, sampleOf } from '#lib/pm/aggregate.ts';
import { nextCollectionAt } from '#lib/pm/collector.ts';
import { groupMetrics, parseMetric, type CrossingState, type PmPeriod, type PmSample } from '#lib/pm/model.ts';
import type { VnfcMeasurement } from '#lib/vim/driver.ts';

const measurement = (at: string, cpu: number, bytesIn: number, extBytesIn = 0): VnfcMeasurement => ({
  vnfInstanceId: 'vnf-1',
  vnfcResourceInfoId: 'res-1',
  vduId: 'VDU1',
  resourceId: 'server-1',
  at,
  cpuUsagePercent: cpu,
  memoryUsagePercent: 50,
  cps: [
    { cpInstanceId: 'cp-int', cpdId: 'VDU1_CP2', external: false, bytesIn, bytesOut: 10, packetsIn: 1 },
    { cpInstanceId: 'cp-ext', cpdId: 'VDU1_CP1', external: true, vnfExtCpId: 'ext-1', bytesIn: extBytesIn },
  ],
});

const sample = (at: string, cpu: number, bytesIn: number, extBytesIn = 0): PmSample =>
  sampleOf(at, [measurement(at, cpu, bytesIn, extBytesIn)], (_instance, resourceInfoId) => `vnfc-of-${resourceInfoId}`);

/** A period of these collections, its counters starting from the readings of `previous` (the last collection before it). */
function periodOf(samples: PmSample[], previous?: PmSample): PmPeriod {
  let state = { period: emptyPeriod(), counters: previous ? fold(emptyPeriod(), {}, previous).counters : {} };
  for (const s of samples) state = fold(state.period, state.counters, s);
  return state.period;
}

const metrics = (...names: string[]) => names.map((name) => parseMetric(name)).filter((m) => m !== undefined);

describe('samples and reports', () => {
  it('a sample names VNFCs by the naming given, internal CPs by their id, external CPs by the external CP', () => {
    const s = sample('2026-01-01T00:00:00.000Z', 40, 100, 7);
    assert.deepEqual(
      s.values.map((v) => [v.kind, v.subObjectInstanceId]),
      [
        ['vnfc', 'vnfc-of-res-1'],
        ['intCp', 'cp-int'],
        ['extCp', 'ext-1'],
      ],
    );
    assert.deepEqual(s.values[0]?.figures, { cpuUsagePercent: 40, memoryUsagePercent: 50 });
    assert.deepEqual(s.values[1]?.figures, { bytesIn: 100, bytesOut: 10, packetsIn: 1 });
  });

  it('usage metrics are the mean or the peak of the period’s samples, stamped with the last one', () => {
    const samples = [sample('2026-01-01T00:00:00.000Z', 40, 0), sample('2026-01-01T00:00:10.000Z', 80, 0)];
    const entries = reportEntries(
      { objectType: 'Vnf', objectInstanceIds: ['vnf-1'], metrics: metrics('VCpuUsageMeanVnf', 'VCpuUsagePeakVnf') },
      periodOf(samples),
    );
    assert.deepEqual(
      entries.map((e) => [e.performanceMetric, e.subObjectInstanceId, e.performanceValues]),
      [
        ['VCpuUsageMeanVnf', 'vnfc-of-res-1', [{ timeStamp: '2026-01-01T00:00:10.000Z', value: 60 }]],
        ['VCpuUsagePeakVnf', 'vnfc-of-res-1', [{ timeStamp: '2026-01-01T00:00:10.000Z', value: 80 }]],
      ],
    );
    assert.equal(entries[0]?.objectType, 'Vnf');
    assert.equal(entries[0]?.objectInstanceId, 'vnf-1');
  });

  it('traffic metrics are the counters’ growth since the last reading before the period; one reading alone reports nothing', () => {
    const previous = sample('2026-01-01T00:00:00.000Z', 1, 1000);
    const samples = [sample('2026-01-01T00:00:10.000Z', 1, 1500), sample('2026-01-01T00:00:20.000Z', 1, 4000)];
    const scope = { objectType: 'VnfIntCp' as const, objectInstanceIds: ['vnf-1'], metrics: metrics('ByteIncomingVnfIntCp') };
    assert.deepEqual(
      reportEntries(scope, periodOf(samples, previous)).map((e) => [e.subObjectInstanceId, e.performanceValues[0]?.value]),
      [['cp-int', 3000]],
    );
    assert.deepEqual(reportEntries(scope, periodOf([samples[0] as PmSample])), []);
    // Only the object type's own sub-objects: no VNFC, no external CP.
    assert.deepEqual(
      reportEntries({ ...scope, objectType: 'VnfExtCp', metrics: metrics('ByteIncomingVnfExtCp') }, periodOf(samples, previous))[0]?.subObjectInstanceId,
      'ext-1',
    );
  });

  it('a counter that went down restarted: its step is left out, the growth before and after it counts', () => {
    const scope = { objectType: 'VnfIntCp' as const, objectInstanceIds: ['vnf-1'], metrics: metrics('ByteIncomingVnfIntCp') };
    const readings = [100, 300, 50, 80].map((bytes, i) => sample(`2026-01-01T00:00:0${i}.000Z`, 1, bytes));
    assert.equal(reportEntries(scope, periodOf(readings))[0]?.performanceValues[0]?.value, 230);
  });

  it('the period keeps running aggregates, not its collections: its size does not grow with them', () => {
    const many = periodOf(Array.from({ length: 500 }, (_, i) => sample(new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), i % 100, i * 10)));
    const few = periodOf([sample('2026-01-01T00:00:00.000Z', 1, 0), sample('2026-01-01T00:00:01.000Z', 2, 10)]);
    assert.equal(many.collections, 500);
    assert.ok(JSON.stringify(many).length < JSON.stringify(few).length + 100);
    const scope = { objectType: 'Vnf' as const, objectInstanceIds: ['vnf-1'], metrics: metrics('VCpuUsageMeanVnf', 'VCpuUsagePeakVnf') };
    assert.deepEqual(
      reportEntries(scope, many).map((e) => e.performanceValues[0]?.value),
      [49.5, 99],
    );
  });

  it('keeps to the sub-objects named, and a metric named for one VNF instance to that instance', () => {
    const samples = [sample('2026-01-01T00:00:00.000Z', 10, 0)];
    assert.deepEqual(
      reportEntries(
        { objectType: 'Vnfc', objectInstanceIds: ['vnf-1'], subObjectInstanceIds: ['other'], metrics: metrics('VCpuUsageMeanVnf') },
        periodOf(samples),
      ),
      [],
    );
    assert.equal(reportEntries({ objectType: 'Vnf', objectInstanceIds: ['vnf-1'], metrics: metrics('VCpuUsageMeanVnf.vnf-2') }, periodOf(samples)).length, 0);
    const named = reportEntries({ objectType: 'Vnf', objectInstanceIds: ['vnf-1'], metrics: metrics('VCpuUsageMeanVnf.vnf-1') }, periodOf(samples));
    assert.equal(named[0]?.performanceMetric, 'VCpuUsageMeanVnf.vnf-1');
  });
});

describe('metric names', () => {
  it('knows SOL003 7.4 names bare or suffixed with a VNF instance id, and nothing else', () => {
    assert.equal(parseMetric('VMemoryUsagePeakVnf')?.name, 'VMemoryUsagePeakVnf');
    assert.equal(parseMetric('PacketOutgoingVnfExtCp.abc')?.vnfInstanceId, 'abc');
    assert.equal(parseMetric('VCpuUsage'), undefined);
    assert.equal(parseMetric('VCpuUsageMeanVnf.'), undefined);
    assert.equal(parseMetric('toString'), undefined);
  });

  it('expands groups to their metrics, each metric once', () => {
    assert.deepEqual(groupMetrics('VnfExternalCp'), ['ByteIncomingVnfExtCp', 'ByteOutgoingVnfExtCp', 'PacketIncomingVnfExtCp', 'PacketOutgoingVnfExtCp']);
    assert.equal(groupMetrics('VirtualisedComputeResource')?.length, 6);
    assert.equal(groupMetrics('Nope'), undefined);
    const names = metricsOf({ performanceMetric: ['VCpuUsageMeanVnf'], performanceMetricGroup: ['VirtualisedComputeResource'] }, (g) => groupMetrics(g) ?? []);
    assert.equal(names.length, 6);
  });
});

describe('threshold crossing', () => {
  const details = { thresholdValue: 50, hysteresis: 5 };
  const run = (values: number[]) => {
    let state: CrossingState | undefined;
    const crossed: string[] = [];
    for (const value of values) {
      const result = crossing(state, value, details);
      state = result.state;
      if (result.crossed) crossed.push(`${result.crossed}@${value}`);
    }
    return crossed;
  };

  it('crosses UP beyond value + hysteresis and DOWN below value - hysteresis, once each', () => {
    assert.deepEqual(run([10, 40, 56, 70, 54, 50, 46, 44, 30, 20]), ['UP@56', 'DOWN@44']);
  });

  it('values inside the hysteresis band around the threshold notify nothing, however often they cross it', () => {
    assert.deepEqual(run([10, 49, 51, 49, 55, 45, 51]), []);
  });

  it('a value already beyond the threshold at the first measurement is a crossing UP; one below it is no crossing', () => {
    assert.deepEqual(run([90]), ['UP@90']);
    assert.deepEqual(run([1]), []);
  });

  it('with no hysteresis a value sitting on the threshold does not flap', () => {
    let state: CrossingState | undefined = 'UP';
    for (let i = 0; i < 3; i++) {
      const result = crossing(state, 50, { thresholdValue: 50, hysteresis: 0 });
      assert.equal(result.crossed, undefined);
      state = result.state;
    }
  });
});

describe('collection times', () => {
  it('one period after the last slot, or one period from now when the sweeps fell behind', () => {
    const now = Date.parse('2026-01-01T00:10:00.000Z');
    assert.equal(nextCollectionAt('2026-01-01T00:09:30.000Z', 60, now), '2026-01-01T00:10:30.000Z');
    assert.equal(nextCollectionAt('2026-01-01T00:00:00.000Z', 60, now), '2026-01-01T00:11:00.000Z');
  });
});

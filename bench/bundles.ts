// Lambda bundles: each function of template.yaml bundled as `sam build` does (its BuildProperties),
// its JavaScript size, and its module init time (the median of BENCH_BUNDLE_RUNS fresh `node`
// processes each timing `import()` of the bundle), beside the figures measured before the bundles
// were slimmed (issue "AWS economy") and the targets: <= 1 MB and <= 150 ms.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { samBuild, samFunctions } from '../test/support/sam-build.ts';
import { median } from './stats.ts';

const RUNS = Number(process.env.BENCH_BUNDLE_RUNS ?? 5);
/** 1 MB as Lambda counts its package limits: 1 MiB. */
const TARGET_BYTES = 1_048_576;
const TARGET_INIT_MS = 150;

/** Size (MB) and init time (ms) before: the anchors of the issue. */
const BEFORE: Record<string, [number, number?]> = {
  ApiVersionsFunction: [1.05, 85],
  VnfInstancesFunction: [1.22, 110],
  VnfSnapshotsFunction: [2.94, 301],
  VnfLcmOpOccsFunction: [1.21],
  VnfPackagesFunction: [1.46, 257],
  VnfLcmOperationsFunction: [3.22, 239],
  SubscriptionsFunction: [1.11],
  VimsFunction: [2.83, 144],
  VnfFmFunction: [1.22, 136],
  VnfAlertsFunction: [3.19, 226],
  OpOccTransitionFunction: [1.16],
  ModifyInfoFunction: [1.17],
  PackageFetchFunction: [1.37],
  LcmStepFunction: [3.31, 188],
  LcmPollFunction: [3.31, 212],
  ScriptRunnerFunction: [0.48],
  PackageOnboardingFunction: [2.07],
  LcmRecoveryFunction: [1.16],
  NotificationDeliveryFunction: [1.1],
  VimMonitorFunction: [2.77],
  VnfHealthMonitorFunction: [3.15, 181],
};

/**
 * One fresh Node process importing the bundle: the milliseconds its module graph takes to load and
 * run, on the clock and in CPU time (which other work on a loaded machine disturbs less).
 */
function init(file: string): { wall: number; cpu: number } {
  const script = `const cpu = process.cpuUsage(); const started = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); const used = process.cpuUsage(cpu); console.log(JSON.stringify({ wall: performance.now() - started, cpu: (used.user + used.system) / 1000 }));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, AWS_REGION: process.env.AWS_REGION ?? 'us-east-1' },
  });
  return JSON.parse(out.trim().split('\n').pop() ?? '{}') as { wall: number; cpu: number };
}

export async function benchBundles(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-bundles-'));
  try {
    console.log(`Lambda bundles as sam build makes them: JavaScript size and module init (median of ${RUNS} fresh node processes)`);
    console.log(
      `${'function'.padEnd(30)} ${'size'.padStart(9)} ${'before'.padStart(8)}  ${'init'.padStart(8)} ${'before'.padStart(8)} ${'CPU'.padStart(9)}   (sizes in MiB, the before column in MB as first measured; targets: <= 1 MiB, <= ${TARGET_INIT_MS} ms; init is wall-clock, CPU the process's CPU time during the import)`,
    );
    const over: string[] = [];
    for (const fn of samFunctions()) {
      const { js, files } = await samBuild(fn);
      const file = join(dir, `${fn.logicalId}.mjs`);
      writeFileSync(file, js.contents);
      const samples = Array.from({ length: RUNS }, () => init(file));
      const wall = median(samples.map((sample) => sample.wall));
      const cpu = median(samples.map((sample) => sample.cpu));
      const [sizeBefore, initBefore] = BEFORE[fn.logicalId] ?? [];
      const bytes = js.contents.byteLength;
      const maps = files.filter((f) => f.path.endsWith('.map')).length;
      if (bytes > TARGET_BYTES || wall > TARGET_INIT_MS) over.push(fn.logicalId);
      console.log(
        `${fn.logicalId.padEnd(30)} ${(bytes / TARGET_BYTES).toFixed(2).padStart(5)} MiB ${sizeBefore === undefined ? '       -' : `${sizeBefore.toFixed(2)} MB`.padStart(8)}  ${wall.toFixed(0).padStart(5)} ms ${initBefore === undefined ? '       -' : `${initBefore} ms`.padStart(8)} ${cpu.toFixed(0).padStart(6)} ms   ${bytes <= TARGET_BYTES ? 'size ok' : 'SIZE OVER'}, ${wall <= TARGET_INIT_MS ? 'init ok' : 'INIT OVER'}${maps ? `, ${maps} source map(s)` : ''}`,
      );
    }
    console.log(over.length ? `over a target: ${over.join(', ')}` : 'every function within 1 MiB and 150 ms of module init');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// `npm run demo`, the five-minute tour, against the local runtime: every command it runs is shown,
// every step of the summary ends as it should (each LCM operation COMPLETED), and a second tour on
// the same VNFM reuses the packages the first onboarded; an unreachable VNFM stops it non-zero.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { ROOT, startVnfm, type LocalVnfm } from '../support/runtime.ts';

let vnfm: LocalVnfm;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function demo(args: string[] = [], endpoint = vnfm.url): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, VNFM_ENDPOINT: endpoint, VNFM_DATA_DIR: vnfm.dataDir, VNFM_PROFILE: '', VNFM_POLL_INTERVAL_MS: '200' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolveRun) => child.once('close', (code) => resolveRun({ code, stdout, stderr })));
}

/** The summary's rows: step name -> [result, op occ id]. */
function summary(stdout: string): Map<string, [string, string]> {
  const rows = stdout.split('\n== Summary\n')[1]?.split('\n') ?? [];
  const steps = new Map<string, [string, string]>();
  for (const row of rows) {
    const found = /^(.+?)\s{2,}(\S+)\s+(\S+)\s+[\d.]+s$/.exec(row);
    if (found) steps.set(found[1] as string, [found[2] as string, found[3] as string]);
  }
  return steps;
}

const LCM_STEPS = [
  'instantiate demo-vnf',
  'instantiate demo-cnf',
  'scale out demo-vnf',
  'scale in demo-vnf',
  'change-package demo-cnf (blue-green)',
  'terminate demo-vnf',
  'terminate demo-cnf',
];

before(async () => {
  vnfm = await startVnfm();
});
after(async () => {
  await vnfm?.stop();
});

describe('npm run demo', () => {
  it('onboards, instantiates, scales, upgrades blue-green, terminates and deletes through the CLI, each LCM step COMPLETED', async () => {
    const run = await demo();
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    for (const command of ['$ vnfm package upload ', '$ vnfm vnf instantiate ', '$ vnfm vnf scale ', '$ vnfm vnf change-package ', '$ vnfm vnf terminate ']) {
      assert.ok(run.stdout.includes(command), `the tour shows "${command}"`);
    }
    assert.match(run.stdout, /--upgrade-type BlueGreen/);
    const steps = summary(run.stdout);
    for (const name of LCM_STEPS) {
      const [result, opOccId] = steps.get(name) ?? [];
      assert.equal(result, 'COMPLETED', `${name} in\n${run.stdout}`);
      assert.match(opOccId ?? '', /^[0-9a-f-]{36}$/, name);
    }
    for (const name of ['upload openstack-vnf-v1', 'upload k8s-cnf-v1', 'upload k8s-cnf-v2']) assert.equal(steps.get(name)?.[0], 'ONBOARDED', name);
    for (const name of ['delete demo-vnf', 'delete demo-cnf']) assert.equal(steps.get(name)?.[0], 'DELETED', name);
  });

  it('runs again on the same VNFM with the packages already onboarded, and --keep leaves both VNFs instantiated', async () => {
    const run = await demo(['--keep']);
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    assert.ok(!run.stdout.includes('$ vnfm package upload '), 'no package is uploaded twice');
    const steps = summary(run.stdout);
    assert.equal(steps.get('change-package demo-cnf (blue-green)')?.[0], 'COMPLETED');
    assert.ok(!steps.has('terminate demo-vnf') && !steps.has('delete demo-cnf'));
    assert.match(run.stdout, /--keep: demo-vnf \S+ and demo-cnf \S+ stay instantiated/);
  });

  it("stops with the CLI's error and a non-zero exit when the VNFM cannot be reached", async () => {
    const run = await demo([], 'http://127.0.0.1:9');
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /The tour stopped at "find openstack-vnf-v1"/);
  });
});

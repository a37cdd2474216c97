// `npm run demo [-- --endpoint URL] [--keep]`: the five-minute tour. With `npm start` running, it
// drives the VNFM through the `vnfm` CLI, printing each command and its output: onboards the
// sample OpenStack VNF and Kubernetes CNF packages (v1, and the CNF's v2), instantiates one VNF of
// each on the local simulators, scales the VNF out and in, moves the CNF to v2 blue-green, then
// terminates and deletes both (not with --keep) and sums up each step with its op occ and time.
// The first failing command stops the tour with the CLI's error and its exit code.
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { buildCsarFile, SAMPLE_PACKAGES, type SamplePackageName } from '../test/support/csar-builder.ts';

const ROOT = resolve(import.meta.dirname, '..');
const USAGE = 'usage: npm run demo -- [--endpoint URL] [--keep]   (with `npm start` running; --keep leaves both VNFs instantiated)';
const options = (() => {
  try {
    return parseArgs({
      options: { endpoint: { type: 'string' }, keep: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } },
    }).values;
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
})();
if (options.help) {
  console.log(USAGE);
  process.exit(0);
}
const endpoint = options.endpoint ?? process.env.VNFM_ENDPOINT ?? 'http://127.0.0.1:9890';
const samplesDir = join(process.env.VNFM_DATA_DIR ?? '.vnfm', 'samples');
const env = { ...process.env, VNFM_ENDPOINT: endpoint, VNFM_POLL_INTERVAL_MS: process.env.VNFM_POLL_INTERVAL_MS ?? '250' };

/** VDU1_CP1 is the sample VNF's external CP: it goes on the OpenStack simulator's "public" network. */
const EXT_VL = [
  {
    id: 'ext-public',
    resourceId: 'public',
    extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { VDU1_CP1_1: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }],
  },
];
const CNF_FILES = ['Files/kubernetes/deployment.yaml', 'Files/kubernetes/service.yaml'];

interface Step {
  name: string;
  result: string;
  opOccId?: string;
  ms: number;
}
const steps: Step[] = [];
const tourStart = Date.now();

/** A command-line argument as a shell needs it written. */
const quoted = (arg: string): string => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`);

/**
 * Runs `vnfm <args>` as the newcomer would type it, echoing it and its output; the tour ends with
 * its exit code if it fails. A step with `resultOf` goes into the summary (a mere look does not).
 */
async function vnfm(name: string, args: string[], resultOf?: (stdout: string) => string): Promise<string> {
  console.log(`\n$ vnfm ${args.map(quoted).join(' ')}`);
  const startedAt = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'cli/main.ts'), ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    process.stdout.write(chunk);
  });
  const code = await new Promise<number | null>((resolveExit) => child.once('close', resolveExit));
  if (code !== 0) {
    console.error(`\nThe tour stopped at "${name}" (vnfm exited ${code}).`);
    process.exit(code || 1);
  }
  const opOccId = /Operation occurrence (\S+) accepted/.exec(stdout)?.[1];
  if (resultOf) steps.push({ name, result: resultOf(stdout), ms: Date.now() - startedAt, ...(opOccId ? { opOccId } : {}) });
  return stdout;
}

function must(found: string | undefined, what: string, stdout: string): string {
  if (found) return found;
  console.error(`\nThe tour could not read ${what} from the output above:\n${stdout}`);
  process.exit(1);
}

/** An LCM task: the op occ's final state, as the CLI printed it ("[2.1s] SCALE COMPLETED"). */
async function lcm(name: string, args: string[]): Promise<void> {
  await vnfm(name, args, (stdout) => /\] [A-Z_]+ (COMPLETED|FAILED_TEMP|FAILED|ROLLED_BACK)\s*$/m.exec(stdout)?.[1] ?? 'COMPLETED');
}

/** The sample package onboarded: the one already there with its VNFD, else its CSAR uploaded. */
async function onboard(name: SamplePackageName): Promise<void> {
  const { vnfdId } = SAMPLE_PACKAGES[name];
  const listed = await vnfm(`find ${name}`, ['package', 'list', '--filter', `(eq,vnfdId,${vnfdId})`, '-o', 'json']);
  const existing = (JSON.parse(listed) as Array<{ id: string; onboardingState: string }>).find((pkg) => pkg.onboardingState === 'ONBOARDED');
  if (existing) {
    console.log(`(${name} is onboarded already as package ${existing.id}: a VNFD is onboarded once)`);
    return;
  }
  const { path } = await buildCsarFile(name, join(samplesDir, `${name}.zip`));
  await vnfm(`upload ${name}`, ['package', 'upload', path], (stdout) => (/is (ONBOARDED)/.exec(stdout)?.[1] ? 'ONBOARDED' : 'UPLOADED'));
}

async function create(name: string, sample: SamplePackageName): Promise<string> {
  const stdout = await vnfm(`create ${name}`, ['vnf', 'create', '--vnfd-id', SAMPLE_PACKAGES[sample].vnfdId, '--name', name], () => 'CREATED');
  return must(/VNF instance (\S+) created/.exec(stdout)?.[1], 'the VNF instance id', stdout);
}

console.log(`The five-minute tour of the VNFM at ${endpoint}, through its CLI (vnfm = node --import tsx cli/main.ts).`);
console.log(`The sample CSARs are built into ${samplesDir} (as "npm run build-samples" does) when the VNFM does not have them yet.`);

console.log('\n== 1. Onboard the sample packages: an OpenStack VNF, a Kubernetes CNF and its v2');
for (const name of ['openstack-vnf-v1', 'k8s-cnf-v1', 'k8s-cnf-v2'] as const) await onboard(name);

console.log('\n== 2. Instantiate the VNF on the OpenStack simulator (its external CP on the "public" network)');
const vnf = await create('demo-vnf', 'openstack-vnf-v1');
await lcm('instantiate demo-vnf', ['vnf', 'instantiate', vnf, '--flavour', 'simple', '--ext-vl', JSON.stringify(EXT_VL)]);

console.log('\n== 3. Instantiate the CNF on the Kubernetes simulator (its manifests from the package)');
const cnf = await create('demo-cnf', 'k8s-cnf-v1');
const namespace = `demo-${cnf.slice(0, 8)}`;
await lcm('instantiate demo-cnf', [
  'vnf',
  'instantiate',
  cnf,
  '--flavour',
  'simple',
  '--params',
  JSON.stringify({ 'lcm-kubernetes-def-files': CNF_FILES, namespace }),
]);

console.log('\n== 4. Scale the VNF out by one VDU1 server, and back in');
await lcm('scale out demo-vnf', ['vnf', 'scale', vnf, '--aspect', 'VDU1_scale', '--type', 'out']);
await lcm('scale in demo-vnf', ['vnf', 'scale', vnf, '--aspect', 'VDU1_scale', '--type', 'in']);

console.log("\n== 5. Upgrade the CNF to v2 blue-green: the new pods beside the old, the Service switched by the package's coordinate script");
const coordinate = './Scripts/coordinate_cnf.js';
await lcm('change-package demo-cnf (blue-green)', [
  'vnf',
  'change-package',
  cnf,
  '--vnfd-id',
  SAMPLE_PACKAGES['k8s-cnf-v2'].vnfdId,
  '--upgrade-type',
  'BlueGreen',
  '--params',
  JSON.stringify({ 'lcm-operation-coordinate-new-vnf': coordinate, 'lcm-operation-coordinate-old-vnf': coordinate, 'lcm-kubernetes-def-files': CNF_FILES }),
]);
await vnfm('list', ['vnf', 'list']);

if (options.keep) {
  console.log(`\n(--keep: demo-vnf ${vnf} and demo-cnf ${cnf} stay instantiated; "vnfm vnf terminate <id>" then "vnfm vnf delete <id>" remove them)`);
} else {
  console.log('\n== 6. Terminate and delete both');
  for (const [name, id] of [
    ['demo-vnf', vnf],
    ['demo-cnf', cnf],
  ] as const) {
    await lcm(`terminate ${name}`, ['vnf', 'terminate', id]);
    await vnfm(`delete ${name}`, ['vnf', 'delete', id], () => 'DELETED');
  }
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)}s`;
const width = Math.max(...steps.map((step) => step.name.length));
console.log('\n== Summary');
console.log(`${'Step'.padEnd(width)}  ${'Result'.padEnd(10)}  ${'Operation occurrence'.padEnd(36)}  Time`);
for (const step of steps) console.log(`${step.name.padEnd(width)}  ${step.result.padEnd(10)}  ${(step.opOccId ?? '-').padEnd(36)}  ${seconds(step.ms)}`);
console.log(`The tour took ${seconds(Date.now() - tourStart)}.`);

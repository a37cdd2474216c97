// `vnfm`, the operator's CLI, run as a child process against the local runtime: a package
// uploaded and onboarded (directly and through the presigned URL, and a broken one refused), a VNF
// created, instantiated, scaled into FAILED_TEMP and rolled back, terminated and deleted, with the
// outputs scripts rely on (json as the API represents it), the errors an operator sees, login
// profiles, --help on every command and the completion script.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Command } from 'commander';
import { buildProgram } from '../../cli/program.ts';
import { buildCsarFile, SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { assertEtsiResponse } from '../support/etsi.ts';
import { adminCredentials, localVims, ROOT, startVnfm, type LocalVnfm } from '../support/runtime.ts';

let vnfm: LocalVnfm;
let work: string;
const vnfdId = SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId;
const EXT_VL = JSON.stringify([
  {
    id: 'ext-public',
    resourceId: 'public',
    extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { VDU1_CP1_1: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }],
  },
]);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `vnfm <args>` as an operator would, against the test's VNFM (from its sources, or the given bundle). */
function vnfmCli(args: string[], options: { env?: Record<string, string>; input?: string; bundle?: string } = {}): Promise<Run> {
  const entry = options.bundle ? [options.bundle] : ['--import', 'tsx', 'cli/main.ts'];
  const child = spawn(process.execPath, [...entry, ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      VNFM_ENDPOINT: vnfm.url,
      VNFM_DATA_DIR: vnfm.dataDir,
      XDG_CONFIG_HOME: join(work, 'config'),
      VNFM_PROFILE: '',
      VNFM_POLL_INTERVAL_MS: '200',
      ...options.env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdin.end(options.input ?? '');
  return new Promise((resolveRun) => child.once('close', (code) => resolveRun({ code, stdout, stderr })));
}

function ok(run: Run): Run {
  assert.equal(run.code, 0, `exit ${run.code}\n${run.stdout}\n${run.stderr}`);
  return run;
}

function json<T>(run: Run): T {
  return JSON.parse(ok(run).stdout) as T;
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'vnfm-cli-'));
  vnfm = await startVnfm();
  await buildCsarFile('openstack-vnf-v1', join(work, 'openstack-vnf-v1.zip'));
});
after(async () => {
  await vnfm?.stop();
});

describe('vnfm package', () => {
  it('uploads a CSAR, waits until it is ONBOARDED and lists it', async () => {
    const run = ok(await vnfmCli(['package', 'upload', join(work, 'openstack-vnf-v1.zip')]));
    assert.match(run.stdout, /ONBOARDED/);
    assert.ok(run.stdout.includes(`vnfm vnf create --vnfd-id ${vnfdId}`), run.stdout);
    const packages = json<Array<{ id: string; vnfdId: string; onboardingState: string; operationalState: string }>>(
      await vnfmCli(['package', 'list', '-o', 'json']),
    );
    await assertEtsiResponse('vnfpkgm', '/vnf_packages', 'get', 200, packages);
    const onboarded = packages.find((pkg) => pkg.vnfdId === vnfdId);
    assert.equal(onboarded?.onboardingState, 'ONBOARDED');
    assert.equal(onboarded?.operationalState, 'ENABLED');
    assert.match(ok(await vnfmCli(['package', 'list'])).stdout, new RegExp(`${onboarded?.id}.*ONBOARDED`));
  });

  it('uploads through the presigned URL and can disable and delete the package', async () => {
    const file = join(work, 'openstack-vnf-v2.zip');
    await buildCsarFile('openstack-vnf-v2', file);
    const run = ok(await vnfmCli(['package', 'upload', file, '--presigned']));
    const id = /Package (\S+) is ONBOARDED/.exec(run.stdout)?.[1] ?? '';
    assert.ok(id, run.stdout);
    assert.equal(json<{ vnfdId: string }>(await vnfmCli(['package', 'show', id, '-o', 'json'])).vnfdId, SAMPLE_PACKAGES['openstack-vnf-v2'].vnfdId);
    const refused = await vnfmCli(['package', 'delete', id]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^Error 409: Conflict: /);
    ok(await vnfmCli(['package', 'disable', id]));
    ok(await vnfmCli(['package', 'delete', id]));
    assert.match((await vnfmCli(['package', 'show', id])).stderr, /^Error 404: /);
  });

  it('says plainly why onboarding refused a package', async () => {
    const file = join(work, 'broken.zip');
    await buildCsarFile('k8s-cnf-v1', file, { mutateAfterManifest: (files) => files.set('Files/kubernetes/deployment.yaml', Buffer.from('changed\n')) });
    const run = await vnfmCli(['package', 'upload', file]);
    assert.equal(run.code, 1, run.stdout);
    assert.match(run.stderr, /^Onboarding of package \S+ failed: .*Files\/kubernetes\/deployment\.yaml/);
    assert.match(run.stderr, /vnfm package upload FILE --package-id /);
  });
});

describe('vnfm vnf and op', () => {
  let id: string;

  it('creates a VNF instance', async () => {
    const created = json<{ id: string; instantiationState: string }>(await vnfmCli(['vnf', 'create', '--vnfd-id', vnfdId, '--name', 'cli', '-o', 'json']));
    await assertEtsiResponse('vnflcm', '/vnf_instances', 'post', 201, created);
    assert.equal(created.instantiationState, 'NOT_INSTANTIATED');
    id = created.id;
  });

  it("ends an instantiate the API refuses with exit 1 and the API's detail", async () => {
    const run = await vnfmCli(['vnf', 'instantiate', id, '--flavour', 'no-such-flavour', '--ext-vl', EXT_VL]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^Error 422: Unprocessable Entity: .*no deployment flavour "no-such-flavour"/);
  });

  it('instantiates, showing the progress, and exits 0 once COMPLETED', async () => {
    const run = ok(await vnfmCli(['vnf', 'instantiate', id, '--flavour', 'simple', '--ext-vl', EXT_VL]));
    assert.match(run.stdout, /\] INSTANTIATE PROCESSING/);
    assert.match(run.stdout, /\] INSTANTIATE COMPLETED/);
    assert.match(run.stdout, /\+ VNFC VDU1 \S+/);
  });

  it("lists instances as json that is the API's list, and as a table with VNFC counts", async () => {
    const list = json<Array<{ id: string; instantiationState: string; instantiatedVnfInfo?: unknown }>>(await vnfmCli(['vnf', 'list', '-o', 'json']));
    await assertEtsiResponse('vnflcm', '/vnf_instances', 'get', 200, list);
    const mine = list.find((instance) => instance.id === id);
    assert.equal(mine?.instantiationState, 'INSTANTIATED');
    assert.equal(mine?.instantiatedVnfInfo, undefined, 'the default list leaves instantiatedVnfInfo out');
    assert.match(ok(await vnfmCli(['vnf', 'list'])).stdout, new RegExp(`${id}.*INSTANTIATED.*simple\\s*│\\s*2\\s`));
    const shown = json<Record<string, unknown>>(await vnfmCli(['vnf', 'show', id, '-o', 'yaml', '-o', 'json']));
    await assertEtsiResponse('vnflcm', '/vnf_instances/{vnfInstanceId}', 'get', 200, shown);
  });

  it('ends an operation that fails with its error and the commands to run next, and rolls it back', async () => {
    const faults = await fetch(`${localVims(vnfm).openstack.control}faults`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ kind: 'stack-update-fail', reason: 'injected scale failure', count: 1 }),
    });
    assert.ok(faults.ok);
    const run = await vnfmCli(['vnf', 'scale', id, '--aspect', 'VDU1_scale', '--type', 'out']);
    assert.equal(run.code, 1, run.stdout);
    assert.match(run.stdout, /\] SCALE FAILED_TEMP/);
    const opId = /SCALE (\S+) ended FAILED_TEMP/.exec(run.stderr)?.[1] ?? '';
    assert.ok(opId, run.stderr);
    assert.match(run.stderr, /injected scale failure/);
    assert.ok(run.stderr.includes(`vnfm op retry ${opId}`) && run.stderr.includes(`vnfm op rollback ${opId}`), run.stderr);

    const waiting = json<Array<{ id: string; operationState: string }>>(await vnfmCli(['op', 'list', '--unfinished', '-o', 'json']));
    assert.deepEqual(
      waiting.map((occ) => [occ.id, occ.operationState]),
      [[opId, 'FAILED_TEMP']],
    );
    const rolledBack = ok(await vnfmCli(['op', 'rollback', opId]));
    assert.match(rolledBack.stdout, /SCALE ROLLED_BACK/);
  });

  it('lists op occs as the API does', async () => {
    const occs = json<Array<{ operation: string; operationState: string; vnfInstanceId: string }>>(await vnfmCli(['op', 'list', '--vnf', id, '-o', 'json']));
    await assertEtsiResponse('vnflcm', '/vnf_lcm_op_occs', 'get', 200, occs);
    assert.deepEqual(occs.map((occ) => `${occ.operation} ${occ.operationState}`).sort(), ['INSTANTIATE COMPLETED', 'SCALE ROLLED_BACK']);
    assert.match(ok(await vnfmCli(['op', 'list'])).stdout, /INSTANTIATE\s*│\s*COMPLETED/);
    assert.match(ok(await vnfmCli(['watch', '--once'])).stdout, new RegExp(`VNF instances \\(1\\)[\\s\\S]*${id}`));
  });

  it('terminates and deletes the instance', async () => {
    const run = ok(await vnfmCli(['vnf', 'terminate', id]));
    assert.match(run.stdout, /TERMINATE COMPLETED/);
    assert.match(run.stdout, /- VNFC VDU1 /);
    ok(await vnfmCli(['vnf', 'delete', id]));
    const gone = await vnfmCli(['vnf', 'show', id]);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /^Error 404: Not Found: /);
  });

  it('prints only the op occ id with --no-wait', async () => {
    const created = json<{ id: string }>(await vnfmCli(['vnf', 'create', '--vnfd-id', vnfdId, '-o', 'json']));
    const run = ok(await vnfmCli(['vnf', 'instantiate', created.id, '--flavour', 'simple', '--ext-vl', EXT_VL, '--no-wait']));
    const opId = run.stdout.trim();
    assert.match(opId, /^[0-9a-f-]{36}$/);
    // op retry on a running op occ is the API's 409, in one line.
    const refused = await vnfmCli(['op', 'retry', opId]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^Error 409: Conflict: /);
  });
});

describe('vnfm connection and credentials', () => {
  it('names the endpoint it could not reach', async () => {
    const run = await vnfmCli(['vnf', 'list', '--endpoint', 'http://127.0.0.1:1']);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^Could not reach the VNFM at http:\/\/127\.0\.0\.1:1 /);
  });

  it('logs in with a secret on stdin, keeps the profile private and uses it', async () => {
    const { clientId, clientSecret } = adminCredentials(vnfm);
    const elsewhere = { VNFM_DATA_DIR: join(work, 'no-data'), VNFM_ENDPOINT: '' };
    const wrong = await vnfmCli(['login', '--endpoint', vnfm.url, '--client-id', clientId, '--client-secret-stdin', '--profile', 'bad'], {
      env: elsewhere,
      input: 'not-the-secret\n',
    });
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /^Error 401: .*invalid_client/);
    ok(
      await vnfmCli(['login', '--endpoint', vnfm.url, '--client-id', clientId, '--client-secret-stdin', '--profile', 'lab'], {
        env: elsewhere,
        input: `${clientSecret}\n`,
      }),
    );
    const profiles = join(work, 'config', 'vnfm', 'profiles.json');
    assert.equal(statSync(profiles).mode & 0o777, 0o600);
    assert.deepEqual(Object.keys(JSON.parse(readFileSync(profiles, 'utf8'))), ['lab']);
    const listed = json<unknown[]>(await vnfmCli(['--profile', 'lab', 'vim', 'list', '-o', 'json'], { env: elsewhere }));
    assert.ok(listed.length >= 2);
    const anonymous = await vnfmCli(['vnf', 'list'], { env: { ...elsewhere, VNFM_ENDPOINT: vnfm.url } });
    assert.equal(anonymous.code, 1);
    assert.match(anonymous.stderr, /^Error 401: /);
  });
});

describe('vnfm help and completion', () => {
  it('answers --help on every command with exit 0', async () => {
    const program = buildProgram();
    const paths: string[][] = [];
    const visit = (command: Command, path: string[]) => {
      paths.push(path);
      for (const sub of command.commands) visit(sub, [...path, sub.name()]);
    };
    visit(program, []);
    assert.ok(paths.length > 40, `${paths.length} commands`);
    // In-process for every command (commander's own help path, stopped before it exits) ...
    for (const path of paths) {
      const fresh = buildProgram();
      let printed = '';
      const all: Command[] = [];
      const collect = (command: Command) => {
        all.push(command);
        command.commands.forEach(collect);
      };
      collect(fresh);
      for (const command of all) {
        command.exitOverride();
        command.configureOutput({ writeOut: (text) => (printed += text), writeErr: (text) => (printed += text) });
      }
      await assert.rejects(fresh.parseAsync(['node', 'vnfm', ...path, '--help']), (error: { exitCode?: number }) => error.exitCode === 0, path.join(' '));
      assert.match(printed, /^Usage: vnfm/, path.join(' '));
    }
    // ... and as a process for a few.
    for (const path of [[], ['vnf', 'instantiate'], ['package', 'upload']]) {
      const run = ok(await vnfmCli([...path, '--help']));
      assert.match(run.stdout, /^Usage: vnfm/);
    }
  });

  it('prints a bash completion script built from the commands', async () => {
    const script = ok(await vnfmCli(['completion', 'bash'])).stdout;
    for (const entry of [
      "['vnfm']='login package vnf op snapshot vim alarm watch completion",
      "['vnfm vnf instantiate']=",
      "['vnfm op']='list show retry rollback fail cancel",
    ]) {
      assert.ok(script.includes(entry), entry);
    }
    assert.match(script, /complete -o default -F _vnfm vnfm/);
    assert.match(ok(await vnfmCli(['completion', 'zsh'])).stdout, /compdef _vnfm vnfm/);
    assert.equal((await vnfmCli(['completion', 'fish'])).code, 1);
  });
});

describe('the standalone bundle', () => {
  it('runs on Node alone, from a folder without the repository', async () => {
    const bundle = join(work, 'bundle', 'vnfm.mjs');
    execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build-cli.ts', bundle], { cwd: ROOT });
    const packages = json<Array<{ vnfdId: string }>>(await vnfmCli(['package', 'list', '-o', 'json'], { bundle }));
    assert.ok(packages.some((pkg) => pkg.vnfdId === vnfdId));
    assert.match(ok(await vnfmCli(['vnf', 'list'], { bundle })).stdout, /│ ID/);
  });
});

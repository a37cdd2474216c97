// The script sandbox: a vendor script gets its input and nothing else (no environment, no files but
// its own, no processes), is killed with everything it started at its time or output limit, and its
// own error message becomes the ProblemDetails detail. JavaScript and Tacker-style Python, in both
// isolation modes this machine offers (plain: what Lambda allows; namespaces: where the kernel lets us).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ScriptRequest, ScriptResult } from '#lib/scripts/contract.ts';
import {
  DEFAULT_LIMITS,
  findPython,
  lastMeaningfulLine,
  namespacesAvailable,
  optionsFromEnv,
  packagePath,
  PYTHON_CANDIDATES,
  pythonHome,
  runScript,
  type Isolation,
  type SandboxOptions,
} from '#lib/scripts/sandbox.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const PYTHON = findPython();
const NAMESPACES = await namespacesAvailable();
const MODES: Isolation[] = NAMESPACES ? ['plain', 'namespaces'] : ['plain'];

/** How every Tacker sample script ends: main(), then os._exit with str(ex) on stderr for a failure. */
const TACKER_MAIN = `
if __name__ == "__main__":
    try:
        main()
        os._exit(0)
    except Exception as ex:
        sys.stderr.write(str(ex))
        sys.stderr.flush()
        os._exit(1)
`;

const HOOK_INPUT: ScriptRequest['input'] = {
  operation: 'instantiate_start',
  request: { flavourId: 'simple', additionalParams: { greeting: 'hello' } },
  vnfInstance: { id: 'inst-1', vnfdId: 'vnfd-1' },
  is_rollback: false,
};

function hook(files: Record<string, string>, script = Object.keys(files)[0] as string, extra: Partial<ScriptRequest> = {}): ScriptRequest {
  return { kind: 'lcm-hook', script, files: Object.fromEntries(Object.entries(files).map(([path, text]) => [path, b64(text)])), input: HOOK_INPUT, ...extra };
}

function failed(result: ScriptResult): Extract<ScriptResult, { ok: false }> {
  assert.equal(result.ok, false, `expected a failure, got ${JSON.stringify(result)}`);
  return result as Extract<ScriptResult, { ok: false }>;
}

function succeeded(result: ScriptResult): Extract<ScriptResult, { ok: true }> {
  assert.equal(result.ok, true, `expected success, got ${JSON.stringify(result)}`);
  return result as Extract<ScriptResult, { ok: true }>;
}

/** Whether a process with this (host) pid still runs (a killed one may linger as a zombie until init reaps it). */
function alive(pid: number): boolean {
  assert.ok(Number.isInteger(pid) && pid > 0, `not a pid: ${pid}`);
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

// Something of the product's a script must not reach: a file outside its directory and an env var.
let outside: string;
before(() => {
  outside = mkdtempSync(join(tmpdir(), 'vnfm-data-'));
  writeFileSync(join(outside, 'secret.txt'), 'the product data');
  process.env.SECRET_TOKEN = 'hunter2';
});
after(() => {
  rmSync(outside, { recursive: true, force: true });
  delete process.env.SECRET_TOKEN;
});

for (const isolation of MODES) {
  const options: SandboxOptions = { ...DEFAULT_LIMITS, isolation };

  describe(`JavaScript scripts (${isolation})`, () => {
    it('get the input as one JSON object on stdin and answer one on stdout, which becomes the output', async () => {
      const result = succeeded(
        await runScript(
          hook(
            {
              'Scripts/start.mjs': `import { readFileSync } from 'node:fs';
import { helper } from './helper.mjs';
let text = '';
for await (const chunk of process.stdin) text += chunk;
const input = JSON.parse(text);
console.error('log lines go to stderr');
console.log(JSON.stringify({ ok: true, kind: input.kind, operation: input.operation, greeting: input.request.additionalParams.greeting,
  instance: input.vnfInstance.id, rollback: input.is_rollback, helper: helper(), data: readFileSync(input.packageDir + '/Scripts/data.json', 'utf8').trim() }));`,
              'Scripts/helper.mjs': 'export const helper = () => "imported";',
              'Scripts/data.json': '{"beside":true}',
            },
            './Scripts/start.mjs',
          ),
          options,
        ),
      );
      assert.deepEqual(result.output, {
        ok: true,
        kind: 'lcm-hook',
        operation: 'instantiate_start',
        greeting: 'hello',
        instance: 'inst-1',
        rollback: false,
        helper: 'imported',
        data: '{"beside":true}',
      });
      assert.equal(result.stderr, 'log lines go to stderr\n');
    });

    it('succeed with no output when they print nothing and exit 0', async () => {
      const result = succeeded(await runScript(hook({ 'a.cjs': 'process.stdin.resume(); process.stdin.on("end", () => process.exit(0));' }), options));
      assert.equal(result.output, undefined);
    });

    it('fail with their own message: a throw (the last meaningful stderr line) or a stdout error', async () => {
      const thrown = failed(await runScript(hook({ 'Scripts/a.js': 'function f() { throw new Error("the load balancer refused VDU1"); }\nf();' }), options));
      assert.equal(thrown.reason, 'exit');
      assert.equal(thrown.error.status, 422);
      assert.equal(thrown.error.title, 'Mgmt driver execution failed');
      assert.equal(thrown.error.detail, 'instantiate_start script Scripts/a.js failed: Error: the load balancer refused VDU1');

      const reported = failed(
        await runScript(
          {
            ...hook({ 'c.mjs': 'console.log("working..."); console.log(JSON.stringify({ error: { detail: "VNFC 10.0.0.5 did not answer" } }));' }),
            kind: 'coordinate',
          },
          options,
        ),
      );
      assert.equal(reported.reason, 'error');
      assert.equal(reported.error.title, 'Coordinate VNF execution failed');
      assert.equal(reported.error.detail, 'CoordinateVNF script c.mjs failed: VNFC 10.0.0.5 did not answer');
      assert.deepEqual(reported.output, { error: { detail: 'VNFC 10.0.0.5 did not answer' } });

      const exited = failed(await runScript(hook({ 'e.js': 'console.error("config push failed: 503"); process.exit(4);' }), options));
      assert.equal(exited.error.detail, 'instantiate_start script e.js failed: config push failed: 503');

      const silent = failed(await runScript(hook({ 'e.js': 'process.exit(7);' }), options));
      assert.equal(silent.error.detail, 'instantiate_start script e.js failed: exited with code 7');
    });

    it('fail when stdout is not one JSON object', async () => {
      const result = failed(await runScript(hook({ 'a.js': 'console.log("done, all good");' }), options));
      assert.equal(result.reason, 'invalid-output');
      assert.match(result.error.detail, /not one JSON object on stdout.*done, all good/);
    });

    it('are killed at the time limit, which a request may only lower', async () => {
      const result = failed(
        await runScript(hook({ 'loop.js': 'console.error(process.pid); for (;;) {}' }, 'loop.js', { timeoutMs: 500 }), { ...options, timeoutMs: 60_000 }),
      );
      assert.equal(result.reason, 'timeout');
      assert.equal(result.error.detail, 'instantiate_start script loop.js timed out after 500 ms and was killed');
      if (isolation === 'plain') assert.equal(alive(Number(result.stderr.trim())), false, 'the script still runs');

      const capped = failed(await runScript(hook({ 'loop.js': 'for (;;) {}' }, 'loop.js', { timeoutMs: 3_600_000 }), { ...options, timeoutMs: 500 }));
      assert.match(capped.error.detail, /timed out after 500 ms/);
    });

    it('are killed when their output passes the limit, and the output is cut there', async () => {
      const result = failed(
        await runScript(hook({ 'big.js': 'const mb = "x".repeat(1 << 20); for (let i = 0; i < 64; i++) process.stdout.write(mb); console.log("{}");' }), {
          ...options,
          maxOutputBytes: 65_536,
        }),
      );
      assert.equal(result.reason, 'output-limit');
      assert.equal(result.error.detail, 'instantiate_start script big.js wrote more than 65536 bytes to stdout and stderr and was killed');
      assert.ok(result.stdout.length + result.stderr.length <= 65_536, `${result.stdout.length} bytes kept`);
      assert.ok(result.stdout.length > 0);
    });

    it('cannot read files outside their directory, see the environment, write files or start processes', async () => {
      const result = succeeded(
        await runScript(
          hook({
            'probe.mjs': `import fs from 'node:fs';
const attempt = (fn) => { try { fn(); return 'allowed'; } catch (error) { return error.code ?? error.message; } };
const child = await import('node:child_process');
const { Worker } = await import('node:worker_threads');
console.log(JSON.stringify({
  env: process.env,
  etc: attempt(() => fs.readFileSync('/etc/hostname')),
  data: attempt(() => fs.readFileSync(${JSON.stringify(join(outside, 'secret.txt'))})),
  list: attempt(() => fs.readdirSync('/')),
  write: attempt(() => fs.writeFileSync('out.txt', 'x')),
  spawn: attempt(() => child.execFileSync('/bin/true')),
  worker: attempt(() => new Worker('1', { eval: true })),
}));`,
          }),
          options,
        ),
      );
      const probe = result.output as Record<string, unknown>;
      assert.deepEqual(Object.keys(probe.env as object).sort(), ['HOME', 'LANG', 'PATH', 'TMPDIR']);
      assert.equal((probe.env as Record<string, string>).PATH, '/usr/bin:/bin');
      assert.equal(JSON.stringify(probe).includes('hunter2'), false);
      for (const key of ['etc', 'data', 'list', 'write', 'spawn', 'worker']) assert.equal(probe[key], 'ERR_ACCESS_DENIED', key);
    });

    it('leave nothing behind: their directory is removed', async () => {
      const result = succeeded(
        await runScript(
          hook({
            'a.js': 'let t = ""; process.stdin.on("data", (c) => t += c).on("end", () => console.log(JSON.stringify({ dir: JSON.parse(t).packageDir })));',
          }),
          { ...options, isolation: 'plain' },
        ),
      );
      const dir = (result.output as { dir: string }).dir;
      assert.match(dir, /vnfm-script-/);
      assert.equal(existsSync(dir), false);
    });
  });

  describe(`Python scripts in Tacker's style (${isolation})`, { skip: PYTHON ? false : 'python3 is not installed on this machine' }, () => {
    // As Tacker's samples (tacker/tests/functional/sol_v2_common/samples/.../Scripts/coordinate_*.py).
    const COORDINATE = `import os
import pickle
import sys


class SampleNewCoordinateVNFScript(object):

    def __init__(self, vnfc_param):
        self.vnfc_param = vnfc_param

    def coordinate_vnf(self):
        if self.vnfc_param['username'] != 'ubuntu':
            raise Exception('cannot log in to %s as %s' % (self.vnfc_param['ssh_ip'], self.vnfc_param['username']))
        sys.stderr.write(repr(sorted(self.vnfc_param.keys())))
        sys.stderr.flush()


def main():
    operation = "coordinate_vnf"
    vnfc_param = pickle.load(sys.stdin.buffer)
    script = SampleNewCoordinateVNFScript(vnfc_param)
    try:
        getattr(script, operation)()
    except Exception as ex:
        raise Exception(str(ex))

${TACKER_MAIN}`;
    const coordinate = (username: string): ScriptRequest => ({
      kind: 'coordinate',
      script: './Scripts/coordinate_new_vnf.py',
      className: 'SampleNewCoordinateVNFScript',
      files: { 'Scripts/coordinate_new_vnf.py': b64(COORDINATE) },
      input: {
        operation: 'change_current_package',
        request: { vnfdId: 'new' },
        vnfInstance: { id: 'inst-1' },
        is_rollback: false,
        vnfc: { id: 'vnfc-1', vduId: 'VDU1' },
        vnfcParam: { cp_name: 'VDU1_CP1', username, password: 'ubuntu' },
        sshIp: '10.10.0.21',
        vnfcInfoId: 'VDU1-vnfc-1',
      },
    });

    it('run a CoordinateVNF script with the pickled vnfc_param Tacker passes (ssh_ip, is_rollback, inst, ...)', async () => {
      const result = succeeded(await runScript(coordinate('ubuntu'), options));
      assert.equal(result.stderr, "['cp_name', 'inst', 'is_rollback', 'password', 'ssh_ip', 'username', 'vnfc_info_id']");
    });

    it("fail with the script's own message (Tacker's samples write str(ex) to stderr and exit 1)", async () => {
      const result = failed(await runScript(coordinate('root'), options));
      assert.equal(result.reason, 'exit');
      assert.equal(result.error.title, 'Coordinate VNF execution failed');
      assert.equal(result.error.detail, 'CoordinateVNF script Scripts/coordinate_new_vnf.py failed: cannot log in to 10.10.0.21 as root');
    });

    it("run an LCM hook with Tacker's script_dict and read the pickled dict it prints, on success and on failure", async () => {
      // As Tacker's tacker/sol_refactored/mgmt_drivers/sample_script.py.
      const script = `import os
import pickle
import sys


class SampleScript(object):

    def __init__(self, req, inst, grant_req, grant, csar_dir, user_script_err_handling_data):
        self.req = req
        self.inst = inst
        self.csar_dir = csar_dir
        self.data = user_script_err_handling_data

    def instantiate_start(self):
        with open(os.path.join(self.csar_dir, 'Scripts', 'motd.txt')) as f:
            self.inst['metadata'] = {'motd': f.read().strip(), 'flavour': self.req['flavourId']}
        self.data['step'] = 'configured'

    def instantiate_end(self):
        self.data['step'] = 'half done'
        raise Exception('instantiate_end: the VNF did not come up')


def main():
    script_dict = pickle.load(sys.stdin.buffer)
    operation = script_dict['operation']
    script = SampleScript(script_dict['request'], script_dict['vnf_instance'], script_dict['grant_request'],
                          script_dict['grant_response'], script_dict['tmp_csar_dir'], script_dict['user_script_err_handling_data'])
    try:
        getattr(script, operation)()
    finally:
        sys.stdout.buffer.write(pickle.dumps({'vnf_instance': script.inst, 'user_script_err_handling_data': script.data}))
        sys.stdout.flush()

${TACKER_MAIN}`;
      const request = hook({ 'Scripts/sample_script.py': script, 'Scripts/motd.txt': 'welcome\n' });
      const started = succeeded(await runScript(request, options));
      assert.deepEqual(started.output, {
        vnf_instance: { id: 'inst-1', vnfdId: 'vnfd-1', metadata: { motd: 'welcome', flavour: 'simple' } },
        user_script_err_handling_data: { step: 'configured' },
      });
      assert.equal(started.stdout, '');

      const ended = failed(await runScript({ ...request, input: { ...HOOK_INPUT, operation: 'instantiate_end' } }, options));
      assert.equal(ended.error.detail, 'instantiate_end script Scripts/sample_script.py failed: instantiate_end: the VNF did not come up');
      assert.deepEqual((ended.output as { user_script_err_handling_data: unknown }).user_script_err_handling_data, { step: 'half done' });
    });

    it('see no environment but PATH, LANG, HOME and TMPDIR, and an uncaught exception gives its last traceback line', async () => {
      const result = failed(await runScript(hook({ 'a.py': 'import os\nraise ValueError("env: " + ",".join(sorted(os.environ)))\n' }), options));
      assert.equal(result.error.detail, 'instantiate_start script a.py failed: ValueError: env: HOME,LANG,PATH,TMPDIR');
    });

    it('are killed with the processes they started at the time limit', async () => {
      const result = failed(
        await runScript(
          hook(
            {
              'a.py':
                'import subprocess, sys, time\nchild = subprocess.Popen(["/bin/sleep", "600"])\nprint(child.pid, file=sys.stderr, flush=True)\nwhile True:\n    time.sleep(0.01)\n',
            },
            'a.py',
            { timeoutMs: 1000 },
          ),
          options,
        ),
      );
      assert.equal(result.reason, 'timeout');
      if (isolation === 'plain') assert.equal(alive(Number(result.stderr.trim())), false, 'the child of the script still runs');
    });

    it('cannot read files outside their directory', {
      skip:
        isolation === 'plain'
          ? 'without namespaces a Python script reads what any unprivileged user may (see sandbox.ts; sandbox-hostile.test.ts tries the data folder)'
          : false,
    }, async () => {
      const result = succeeded(
        await runScript(
          hook({
            'probe.py': `import json, os
def attempt(path):
    try:
        open(path).read()
        return 'allowed'
    except OSError as e:
        return type(e).__name__
print(json.dumps({'etc': attempt('/etc/hostname'), 'data': attempt(${JSON.stringify(join(outside, 'secret.txt'))}), 'proc': os.path.exists('/proc/1/environ'), 'root': sorted(os.listdir('/'))}))
`,
          }),
          options,
        ),
      );
      // stdout is not a pickle, so it stays text.
      const probe = JSON.parse(result.stdout) as { etc: string; data: string; proc: boolean; root: string[] };
      assert.equal(probe.etc, 'FileNotFoundError');
      assert.equal(probe.data, 'FileNotFoundError');
      assert.equal(probe.proc, false);
      assert.ok(!probe.root.includes('home') && !probe.root.includes('root') && !probe.root.includes('proc'), probe.root.join(' '));
    });

    it('run with a python3 installed outside the system directories, as the Lambda layer puts it at /opt/python', async () => {
      // An installation of its own (<home>/bin/python3), readable by the script's uid as the layer's files are.
      const home = join(mkdtempSync(join(tmpdir(), 'vnfm-layer-')), 'python');
      mkdirSync(join(home, 'bin'), { recursive: true });
      symlinkSync(PYTHON as string, join(home, 'bin', 'python3'));
      chmodSync(dirname(home), 0o755);
      try {
        const result = succeeded(
          await runScript(
            hook({ 'a.py': 'import pickle, sys\nd = pickle.load(sys.stdin.buffer)\nsys.stdout.buffer.write(pickle.dumps({"op": d["operation"]}))\n' }),
            {
              ...options,
              python: join(home, 'bin', 'python3'),
            },
          ),
        );
        assert.deepEqual(result.output, { op: 'instantiate_start' });
      } finally {
        rmSync(dirname(home), { recursive: true, force: true });
      }
    });
  });
}

describe('requests the sandbox refuses', () => {
  it('refuses files whose paths leave the directory, and writes none of them', async () => {
    for (const path of ['../escape.js', '/etc/cron.d/escape.js', 'Scripts/../../escape.js', 'a\\..\\escape.js']) {
      const result = failed(await runScript(hook({ 'ok.js': '', [path]: 'console.log("{}")' }, 'ok.js'), DEFAULT_LIMITS));
      assert.equal(result.error.status, 400, path);
      assert.equal(result.reason, 'bad-request');
      assert.match(result.error.detail, /absolute|leaves the package|backslash/, path);
    }
    assert.equal(existsSync(join(tmpdir(), 'escape.js')), false);
    assert.throws(() => packagePath('..'), /leaves the package/);
    assert.equal(packagePath('./Scripts//a.py'), 'Scripts/a.py');
  });

  it('refuses a script that is not among the files, or of another language', async () => {
    assert.match(failed(await runScript(hook({ 'a.js': '' }, 'b.js'), DEFAULT_LIMITS)).error.detail, /script b.js is not among the files/);
    const shell = failed(await runScript(hook({ 'a.sh': 'cat /etc/passwd' }), DEFAULT_LIMITS));
    assert.equal(shell.error.status, 400);
    assert.match(shell.error.detail, /neither JavaScript .* nor Python/);
  });

  it("looks for the Python runtime layer's python3 first, and uses the system's where the layer is not attached", () => {
    assert.equal(PYTHON_CANDIDATES[0], '/opt/python/bin/python3');
    assert.ok(PYTHON_CANDIDATES.includes('/usr/bin/python3'));
    if (!existsSync('/opt/python/bin/python3')) assert.notEqual(findPython(), '/opt/python/bin/python3');
    assert.equal(pythonHome('/opt/python/bin/python3'), '/opt/python');
    assert.equal(pythonHome('/usr/bin/python3'), undefined);
    assert.equal(pythonHome('/usr/local/bin/python3'), undefined);
    assert.equal(pythonHome('/bin/python3'), undefined);
  });

  it('says so when python3 is not available', async () => {
    const result = failed(await runScript(hook({ 'a.py': 'print(1)' }), { ...DEFAULT_LIMITS, python: null }));
    assert.equal(result.reason, 'unavailable');
    assert.equal(result.error.status, 500);
    assert.match(result.error.detail, /python3 is not available/);
  });
});

describe('lastMeaningfulLine', () => {
  it("finds the error in Node's report of an uncaught throw, with error properties", () => {
    const stderr =
      "/work/a.js:3\n  throw err;\n  ^\n\nTypeError [ERR_X]: no route to 10.0.0.1\n    at f (/work/a.js:3:9)\n    at node:internal/main:1:1 {\n  code: 'ERR_X'\n}\n\nNode.js v22.23.3\n";
    assert.equal(lastMeaningfulLine(stderr), 'TypeError [ERR_X]: no route to 10.0.0.1');
  });

  it("finds the exception in Python's traceback, and takes a bare message as is", () => {
    const traceback = 'Traceback (most recent call last):\n  File "/work/a.py", line 3, in <module>\n    main()\nKeyError: \'ssh_ip\'\n';
    assert.equal(lastMeaningfulLine(traceback), "KeyError: 'ssh_ip'");
    assert.equal(lastMeaningfulLine('connecting\nssh to 10.0.0.1 failed'), 'ssh to 10.0.0.1 failed');
    assert.equal(lastMeaningfulLine('  \n'), undefined);
  });
});

describe('optionsFromEnv', () => {
  it('defaults to 30 s, 1 MiB, 256 MiB and 64 processes, reads SCRIPT_TIMEOUT_SECONDS, SCRIPT_MAX_OUTPUT_BYTES, SCRIPT_MEMORY_MB and SCRIPT_MAX_PROCESSES, and refuses nonsense', () => {
    assert.deepEqual(optionsFromEnv({}), { timeoutMs: 30_000, maxOutputBytes: 1_048_576, memoryMb: 256, maxProcesses: 64, isolation: 'auto' });
    assert.deepEqual(
      optionsFromEnv({
        SCRIPT_TIMEOUT_SECONDS: '2.5',
        SCRIPT_MAX_OUTPUT_BYTES: '4096',
        SCRIPT_MEMORY_MB: '512',
        SCRIPT_MAX_PROCESSES: '16',
        SCRIPT_ISOLATION: 'plain',
      }),
      {
        timeoutMs: 2500,
        maxOutputBytes: 4096,
        memoryMb: 512,
        maxProcesses: 16,
        isolation: 'plain',
      },
    );
    assert.throws(() => optionsFromEnv({ SCRIPT_MAX_PROCESSES: '-1' }), /SCRIPT_MAX_PROCESSES must be a positive number/);
    assert.equal(optionsFromEnv({ SCRIPT_MAX_OUTPUT_BYTES: String(100 * 1024 * 1024) }).maxOutputBytes, 2 * 1024 * 1024);
    assert.throws(() => optionsFromEnv({ SCRIPT_TIMEOUT_SECONDS: 'soon' }), /SCRIPT_TIMEOUT_SECONDS must be a positive number/);
    assert.throws(() => optionsFromEnv({ SCRIPT_ISOLATION: 'docker' }), /SCRIPT_ISOLATION/);
  });
});

// A hostile vendor script against the sandbox: every way out it tries fails (the product's files and
// /etc/shadow, remounting /usr and writing outside its folder, the host's loopback, the cloud metadata
// address, 200 processes, 1 GiB), its result is a clean failure with its own message, and nothing it
// started outlives it, nor the runner when the runner is killed with SIGKILL. Network access is
// only what the request allows, and never the VNFM's own endpoints.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ScriptRequest, ScriptResult } from '#lib/scripts/contract.ts';
import { DEFAULT_LIMITS, findPython, namespacesAvailable, runScript, sweepLeftoverScripts, type Isolation, type SandboxOptions } from '#lib/scripts/sandbox.ts';
import { waitFor } from '../../support/wait.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const PYTHON = findPython();
const NAMESPACES = await namespacesAvailable();
const ROOT = process.getuid?.() === 0;
const INPUT: ScriptRequest['input'] = { operation: 'change_current_package', request: {}, vnfInstance: { id: 'inst-1' }, is_rollback: false };

function request(script: string, text: string, extra: Partial<ScriptRequest> = {}): ScriptRequest {
  return { kind: 'coordinate', script, files: { [script]: b64(text) }, input: INPUT, ...extra };
}

function failed(result: ScriptResult): Extract<ScriptResult, { ok: false }> {
  assert.equal(result.ok, false, `expected a failure, got ${JSON.stringify(result)}`);
  return result as Extract<ScriptResult, { ok: false }>;
}

/** Live processes whose command line holds `marker` (each test's scripts start `sleep <marker>`). */
function processesWith(marker: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** A sleep no other process runs: `sleep 86400.<random>`. */
const newMarker = () => `86400.${randomInt(1e9)}`;

async function listener(host: string, answer = 'hello'): Promise<net.Server & { port: number }> {
  const server = net.createServer((socket) => socket.on('error', () => undefined).end(answer));
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return Object.assign(server, { port: (server.address() as net.AddressInfo).port });
}

// The runtime's data folder as local/runtime.ts leaves it: 0700, credentials.json and auth/ 0600/0700.
let dataDir: string;
let loopback: net.Server & { port: number };
before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'vnfm-data-'));
  writeFileSync(join(dataDir, 'credentials.json'), '{"clientSecret":"s3cret"}', { mode: 0o600 });
  mkdirSync(join(dataDir, 'auth'), { mode: 0o700 });
  writeFileSync(join(dataDir, 'auth', 'signing-key.json'), '{"d":"private"}', { mode: 0o600 });
  loopback = await listener('127.0.0.1');
});
after(() => {
  rmSync(dataDir, { recursive: true, force: true });
  loopback.close();
});

/** Tries every way out, prints what each attempt got as JSON, leaves a daemon behind and fails with its own message. */
const probe = (marker: string) => `import json, os, socket, subprocess, sys
def attempt(fn):
    try:
        fn()
        return 'allowed'
    except Exception as e:
        return type(e).__name__
def read(path):
    open(path).read()
def write(path):
    open(path, 'w').write('x')
def remount():
    done = subprocess.run(['mount', '-o', 'remount,bind,rw', '/usr'], capture_output=True)
    if done.returncode != 0:
        raise PermissionError(done.stderr.decode())
    write('/usr/local/hostile')
def connect(host, port):
    socket.create_connection((host, port), timeout=3).close()
def fork():
    children = []
    try:
        for i in range(200):
            children.append(subprocess.Popen(['/bin/sleep', '30']))
    finally:
        for child in children:
            child.kill()
            child.wait()
def allocate():
    memory = bytearray(1 << 30)
result = {
    'shadow': attempt(lambda: read('/etc/shadow')),
    'credentials': attempt(lambda: read(${JSON.stringify(join(dataDir, 'credentials.json'))})),
    'signingKey': attempt(lambda: read(${JSON.stringify(join(dataDir, 'auth', 'signing-key.json'))})),
    'remount': attempt(remount),
    'usr': attempt(lambda: write('/usr/local/hostile')),
    'tmp': attempt(lambda: write('/tmp/hostile-${marker}')),
    'root': attempt(lambda: write('/hostile')),
    'scratch': attempt(lambda: write('scratch.txt')),
    'loopback': attempt(lambda: connect('127.0.0.1', ${loopback.port})),
    'metadata': attempt(lambda: connect('169.254.169.254', 80)),
    'fork': attempt(fork),
    'allocate': attempt(allocate),
}
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv('/bin/sleep', ['/bin/sleep', '${marker}'])
    os._exit(0)
print(json.dumps(result))
sys.stderr.write('the hostile script found no way out')
sys.exit(1)
`;

const MODES: Isolation[] = NAMESPACES ? ['namespaces', 'plain'] : ['plain'];
for (const isolation of MODES) {
  const options: SandboxOptions = { ...DEFAULT_LIMITS, isolation };
  describe(`a hostile script (${isolation})`, {
    skip: PYTHON ? (ROOT ? false : 'the runner is not root: scripts run as its own uid') : 'python3 is not installed',
  }, () => {
    it('gets nowhere, fails with its own message and leaves no process behind', async () => {
      const marker = newMarker();
      const result = failed(await runScript(request('Scripts/hostile.py', probe(marker)), options));
      assert.equal(result.reason, 'exit');
      assert.equal(result.error.detail, 'CoordinateVNF script Scripts/hostile.py failed: the hostile script found no way out');
      const got = JSON.parse(result.stdout) as Record<string, string>;
      assert.equal(got.scratch, 'allowed', 'its own folder is writable');
      for (const attempt of ['shadow', 'credentials', 'signingKey', 'remount', 'usr', 'fork', 'allocate']) assert.notEqual(got[attempt], 'allowed', attempt);
      assert.equal(got.fork, 'BlockingIOError');
      assert.equal(got.allocate, 'MemoryError');
      // Without namespaces a plain script shares the runner's network and its world-writable /tmp (see sandbox.ts).
      if (isolation === 'namespaces') for (const attempt of ['loopback', 'metadata', 'tmp', 'root']) assert.notEqual(got[attempt], 'allowed', attempt);
      else assert.notEqual(got.root, 'allowed', 'root');
      assert.equal(existsSync('/usr/local/hostile'), false);
      assert.deepEqual(processesWith(marker), [], 'the daemon it left is killed with it');
      rmSync(`/tmp/hostile-${marker}`, { force: true });
    });

    it('cannot allocate 1 GiB in JavaScript either', async () => {
      const result = failed(
        await runScript(request('big.js', 'const b = Buffer.alloc(1 << 30, 1); console.log(JSON.stringify({ length: b.length }));'), options),
      );
      assert.equal(result.reason, 'exit');
      assert.match(result.error.detail, /Array buffer allocation failed|out of memory/i);
    });

    it('does not outlive a runner killed with SIGKILL', async () => {
      const marker = newMarker();
      const daemon = `import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv('/bin/sleep', ['/bin/sleep', '${marker}'])
    os._exit(0)
time.sleep(3600)
`;
      const runner = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          '--input-type=module',
          '-e',
          `
import { runScript, DEFAULT_LIMITS } from '#lib/scripts/sandbox.ts';
await runScript(${JSON.stringify(request('daemon.py', daemon))}, { ...DEFAULT_LIMITS, timeoutMs: 600000, isolation: '${isolation}' });
`,
        ],
        { stdio: 'ignore' },
      );
      try {
        await waitFor("the script's daemon to start", () => processesWith(marker).length > 0, 60_000);
        runner.kill('SIGKILL');
        await new Promise((resolve) => runner.once('exit', resolve));
        // The namespaces die with the runner; a plain script's daemon left its process group and
        // outlives it until the next runner's start-up sweep.
        if (isolation === 'plain') assert.ok((await sweepLeftoverScripts()) >= 1, "the sweep found the dead runner's script");
        await waitFor('no process of the script to remain', () => processesWith(marker).length === 0);
      } finally {
        runner.kill('SIGKILL');
      }
    });
  });
}

describe('a runner that cannot build the namespaces', { skip: ROOT ? false : 'the test drops to an unprivileged runner, which needs root' }, () => {
  it('refuses to run scripts unless the operator chose plain isolation', async () => {
    // An unprivileged runner: unshare cannot map the script's uid, so there are no namespaces.
    const runner = spawn(
      '/usr/bin/setpriv',
      [
        '--reuid=65534',
        '--regid=65534',
        '--clear-groups',
        process.execPath,
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `
import { runScript, DEFAULT_LIMITS } from '#lib/scripts/sandbox.ts';
const results = {};
for (const isolation of ['auto', 'plain']) results[isolation] = await runScript(${JSON.stringify(request('a.js', 'console.log(JSON.stringify({ ran: true }))'))}, { ...DEFAULT_LIMITS, isolation });
console.log(JSON.stringify(results));
`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let stdout = '';
    runner.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await new Promise((resolve) => runner.once('close', resolve));
    const results = JSON.parse(stdout) as Record<'auto' | 'plain', ScriptResult>;
    const refused = failed(results.auto);
    assert.equal(refused.error.status, 500);
    assert.equal(refused.reason, 'runner');
    assert.match(refused.error.detail, /Vendor scripts are not run: .*namespaces.*SCRIPT_ISOLATION=plain/);
    assert.deepEqual(results.plain.ok ? results.plain.output : results.plain, { ran: true });
  });
});

describe('network access (namespaces)', { skip: NAMESPACES ? false : 'this machine does not allow the namespace sandbox' }, () => {
  const options: SandboxOptions = { ...DEFAULT_LIMITS, isolation: 'namespaces', egress: { allowPrivateNetworks: true } };
  const connectAll = (targets: Array<[string, string, number]>) => `const net = require('node:net');
const probe = (host, port) => new Promise((resolve) => {
  let data = '';
  const socket = net.connect({ host, port, timeout: 5000 });
  socket.on('data', (chunk) => data += chunk).on('end', () => resolve(data || 'closed'));
  socket.on('timeout', () => { socket.destroy(); resolve('timeout'); }).on('error', (error) => resolve(error.code));
});
(async () => {
  const out = {};
  for (const [name, host, port] of ${JSON.stringify(targets)}) out[name] = await probe(host, port);
  console.log(JSON.stringify(out));
})();`;

  it('reaches an allowed host:port at the address it was given, and nothing else', async () => {
    const other = await listener('127.0.0.1', 'not for scripts');
    const everywhere = await listener('0.0.0.0', 'load balancer');
    const hostAddress = Object.values(networkInterfaces())
      .flat()
      .find((entry) => entry && !entry.internal && entry.family === 'IPv4')?.address;
    try {
      const targets: Array<[string, string, number]> = [
        ['allowed', '127.0.0.1', loopback.port],
        ['notListed', '127.0.0.1', other.port],
      ];
      const allow = [{ host: '127.0.0.1', port: loopback.port }];
      if (hostAddress) {
        // An address that is not loopback: the forwarder takes it on the namespace's lo.
        targets.push(['hostAddress', hostAddress, everywhere.port]);
        allow.push({ host: hostAddress, port: everywhere.port });
      }
      const result = await runScript(request('lb.cjs', connectAll(targets), { network: { allow } }), options);
      assert.equal(result.ok, true, JSON.stringify(result));
      const got = (result as { output: Record<string, string> }).output;
      assert.equal(got.allowed, 'hello');
      assert.notEqual(got.notListed, 'not for scripts');
      if (hostAddress) assert.equal(got.hostAddress, 'load balancer');

      const none = await runScript(request('lb.cjs', connectAll([['allowed', '127.0.0.1', loopback.port]])), options);
      assert.notEqual((none as { output: Record<string, string> }).output.allowed, 'hello', 'without an allowance there is no network');
    } finally {
      other.close();
      everywhere.close();
    }
  });

  it('reaches an allowed port below 1024, as load balancers listen on', async () => {
    const low = net.createServer((socket) => socket.on('error', () => undefined).end('https-ish'));
    const port = await new Promise<number>((resolve, reject) => {
      const attempt = (candidate: number) => {
        low.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' && candidate < 1023 ? attempt(candidate + 1) : reject(error)));
        low.listen(candidate, '127.0.0.1', () => resolve(candidate));
      };
      attempt(900);
    });
    try {
      const result = await runScript(
        request('lb.cjs', connectAll([['low', '127.0.0.1', port]]), { network: { allow: [{ host: '127.0.0.1', port }] } }),
        options,
      );
      assert.deepEqual((result as { output?: unknown }).output, { low: 'https-ish' }, JSON.stringify(result));
    } finally {
      low.close();
    }
  });

  it('fails a script that needs a network it was not given with its own message, and says where network comes from', async () => {
    const script = `require('node:net').connect(${loopback.port}, '127.0.0.1').on('connect', () => process.exit(0)).on('error', (error) => { console.error('cannot reach the load balancer: ' + error.code); process.exit(1); });`;
    const result = failed(await runScript(request('lb.cjs', script), options));
    assert.match(
      result.error.detail,
      /^CoordinateVNF script lb\.cjs failed: cannot reach the load balancer: ENETUNREACH \(the script has no network: list each host:port it must reach in additionalParams\.scriptNetworkAccess\)$/,
    );
  });

  it("refuses the VNFM's own endpoints and the metadata address even when listed", async () => {
    const standIn = await listener('127.0.0.1', 'secrets');
    process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER_TEST = `http://127.0.0.1:${standIn.port}`;
    try {
      const result = await runScript(
        request(
          'lb.cjs',
          connectAll([
            ['standIn', '127.0.0.1', standIn.port],
            ['metadata', '169.254.169.254', 80],
          ]),
          {
            network: {
              allow: [
                { host: '127.0.0.1', port: standIn.port },
                { host: '169.254.169.254', port: 80 },
              ],
            },
          },
        ),
        options,
      );
      assert.equal(result.ok, true, JSON.stringify(result));
      assert.deepEqual((result as { output: unknown }).output, { standIn: 'closed', metadata: 'closed' });
    } finally {
      delete process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER_TEST;
      standIn.close();
    }
  });
});

// Runs one vendor script of a VNF package (a VNFD Vnflcm hook or a CoordinateVNF script) in a child
// process that holds nothing of the product: a fresh private directory with only the files it was
// handed (its only writable place), an environment of PATH/LANG/HOME/TMPDIR only, and limits on time
// and output (both kill it with everything it started), memory (RLIMIT_DATA), processes (RLIMIT_NPROC)
// and CPU time. Run as root, the runtime gives each script a uid of its own, which it runs as with no
// capabilities and no_new_privs (setpriv), and kills every process of when the script ends.
//
// Isolation (SCRIPT_ISOLATION): `auto`/`namespaces` also put it in its own user, mount, PID and network
// namespaces (unshare): the root shows only the system's programs and libraries and that directory,
// read-only; the script is pid 1, so everything in there dies with it, and it dies with the runner
// (parent-death signals), kill -9 included. It has no network but the host:port pairs the request
// allows (network.ts). A runner that cannot build the namespaces runs no script. `plain` is the
// operator's choice of less: its own uid, limits and process group, but the runner's network; a daemon
// that leaves the process group survives a kill -9 of the runner until the next runner's start-up sweep.
// The script runner Lambda calls this; so do tests, directly.
//
// JavaScript (.js, .mjs, .cjs) runs on this Node (process.execPath) under Node's permission model:
// it may read only its directory, and cannot write files, start processes or workers, or load addons.
//   stdin:  one JSON object: the request's `input` plus `kind`, `className` (when given) and
//           `packageDir` (the directory holding the files), e.g.
//           {"kind":"coordinate","operation":"change_current_package","request":{...},"vnfInstance":{...},
//            "vnfc":{...},"vnfcParam":{...},"is_rollback":false,"packageDir":"/work"}
//   stdout: nothing, or one JSON object (the whole stdout, or its last line when logs come first):
//           success: any object without `error` -> the result's `output`;
//           failure: {"error": {"detail": "..."}} or {"error": "..."}.
//   exit:   0 = success unless stdout holds an `error`; non-zero = failure, whose detail is the
//           stdout `error`, else the last meaningful stderr line (an uncaught throw's "Error: ...").
//   Log to stderr. The network is what the request allows (CoordinateVNF scripts talk to VNFCs and LBs).
//
// Python (.py) runs as Tacker runs it, so Tacker packages work unchanged: `python3 <script>` with its
// directory on sys.path and a pickled dict on stdin (`pickle.load(sys.stdin.buffer)`):
//   lcm-hook (Tacker vnflcm_driver_v2._exec_mgmt_driver_script):
//     {'operation', 'request', 'vnf_instance', 'grant_request', 'grant_response', 'tmp_csar_dir',
//      'user_script_err_handling_data'}
//   coordinate (Tacker infra_drivers/openstack._execute_coordinate_vnf_script): the VNFC's
//     `vnfcParam` (cp_name, username, password, ...) plus 'ssh_ip', 'is_rollback', 'LcmCoordRequest',
//     'inst' (the VNF instance) and 'vnfc_info_id' (those the engine supplied).
//   Exit 0 = success; non-zero = failure with the last meaningful stderr line as detail (Tacker's
//   samples write str(ex)). A pickled dict on stdout (Tacker: 'vnf_instance',
//   'user_script_err_handling_data') becomes `output` (as JSON), on success and on failure alike.
//   `className` is not used: Tacker does not use `-class` either; the script's main picks its class.
import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, chown, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { basename, dirname, extname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { egressPolicyFromEnv, type EgressPolicy } from '#lib/egress.ts';
import { failure, scriptFailureTitle, type FailureReason, type ScriptFailure, type ScriptInput, type ScriptRequest, type ScriptResult } from './contract.ts';
import { FORWARDER_SOURCE, startRelays, type NetworkAllowance, type Relays } from './network.ts';
import { pickleJson } from './pickle.ts';

export interface SandboxLimits {
  timeoutMs: number;
  /** stdout and stderr together; more kills the script. */
  maxOutputBytes: number;
  /** Each process's writable memory (RLIMIT_DATA): heap, stacks of threads, anonymous mappings. */
  memoryMb: number;
  /** Processes and threads of the script together (RLIMIT_NPROC of its own uid). */
  maxProcesses: number;
}

export type Isolation = 'auto' | 'namespaces' | 'plain';

export interface SandboxOptions extends SandboxLimits {
  /** `auto` (default) and `namespaces`: namespaces, and no script runs where the machine does not allow them. `plain`: the weaker mode, by the operator's choice. */
  isolation?: Isolation;
  /** The python3 to run Python scripts with; `null`: none (default: the first of PYTHON_CANDIDATES that exists). */
  python?: string | null;
  /** What a network allowance may reach (default: EGRESS_ALLOW_PRIVATE_NETWORKS). */
  egress?: EgressPolicy;
}

export const DEFAULT_LIMITS: SandboxLimits = { timeoutMs: 30_000, maxOutputBytes: 1024 * 1024, memoryMb: 256, maxProcesses: 64 };
/** Output beyond this cannot be configured: a result carries stdout, stderr and the parsed output, and must fit Lambda's 6 MB response. */
export const MAX_OUTPUT_BYTES_CAP = 2 * 1024 * 1024;

/** The runner's limits: SCRIPT_TIMEOUT_SECONDS, SCRIPT_MAX_OUTPUT_BYTES, SCRIPT_MEMORY_MB, SCRIPT_MAX_PROCESSES and SCRIPT_ISOLATION, else the defaults. */
export function optionsFromEnv(env: NodeJS.ProcessEnv = process.env): SandboxOptions {
  const positive = (name: string, fallback: number): number => {
    const text = env[name];
    if (text === undefined || text.trim() === '') return fallback;
    const value = Number(text);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number (is "${text}")`);
    return value;
  };
  const isolation = env.SCRIPT_ISOLATION?.trim() || 'auto';
  if (!['auto', 'namespaces', 'plain'].includes(isolation)) throw new Error(`SCRIPT_ISOLATION must be auto, namespaces or plain (is "${isolation}")`);
  return {
    timeoutMs: Math.round(positive('SCRIPT_TIMEOUT_SECONDS', DEFAULT_LIMITS.timeoutMs / 1000) * 1000),
    maxOutputBytes: Math.min(Math.floor(positive('SCRIPT_MAX_OUTPUT_BYTES', DEFAULT_LIMITS.maxOutputBytes)), MAX_OUTPUT_BYTES_CAP),
    memoryMb: Math.floor(positive('SCRIPT_MEMORY_MB', DEFAULT_LIMITS.memoryMb)),
    maxProcesses: Math.floor(positive('SCRIPT_MAX_PROCESSES', DEFAULT_LIMITS.maxProcesses)),
    isolation: isolation as Isolation,
  };
}

const CHILD_PATH = '/usr/bin:/bin';
/** Where PythonRuntimeLayer (template.yaml, layers/python) puts CPython on Lambda, whose nodejs22.x runtime has no python3. */
export const LAYER_PYTHON = '/opt/python/bin/python3';
// The layer first: where it is attached it is the interpreter chosen for scripts; elsewhere (the local
// runtime, a container) /opt/python does not exist and the system's python3 is used as before.
export const PYTHON_CANDIDATES = [LAYER_PYTHON, '/usr/bin/python3', '/usr/local/bin/python3', '/bin/python3'];
const UNSHARE = ['/usr/bin/unshare', '/bin/unshare'].find((path) => existsSync(path));
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));
const PRLIMIT = ['/usr/bin/prlimit', '/bin/prlimit'].find((path) => existsSync(path));
const IP = ['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip'].find((path) => existsSync(path));
/** Inside the namespaces, the script's directory, this Node binary and the network relays' sockets are mounted here. */
const SANDBOX_WORK = '/work';
const SANDBOX_NODE = '/node';
const SANDBOX_NET = '/net';
/** The script's uid and gid inside the namespaces; outside it is a uid of its own (scriptUid). */
const SANDBOX_UID = 1000;

export function findPython(): string | undefined {
  return PYTHON_CANDIDATES.find((path) => existsSync(path));
}

/**
 * The installation a python3 outside the system directories belongs to (`<home>/bin/python3` ->
 * `<home>`: python-build-standalone finds its library from there), which the namespaces must show;
 * undefined for a system python3, which they show already.
 */
export function pythonHome(python: string): string | undefined {
  const top = python.split('/')[1] ?? '';
  if (!python.startsWith('/') || SYSTEM_DIRS.includes(top)) return undefined;
  const home = dirname(dirname(python));
  return home === '/' ? undefined : home;
}

/** Becomes `uid` with no capabilities, no supplementary groups and no_new_privs, then runs the rest of argv; the parent's death kills it. */
function dropTo(uid: number | undefined): string[] {
  const become = uid === undefined ? [] : [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all'];
  return [SETPRIV ?? 'setpriv', '--pdeathsig=KILL', ...become, '--no-new-privs', '--'];
}

/** Memory, processes and CPU time (the wall-clock limit, rounded up, plus a second), then argv. */
function limited(limits: SandboxLimits): string[] {
  return [
    PRLIMIT ?? 'prlimit',
    `--data=${limits.memoryMb * 1024 * 1024}`,
    `--nproc=${limits.maxProcesses}`,
    `--cpu=${Math.ceil(limits.timeoutMs / 1000) + 1}`,
    '--',
  ];
}

// Runs as root of a new user namespace (uid 0 and SANDBOX_UID mapped), in new mount, PID and network
// namespaces, on a root namespaceRoot laid out beforehand: one `mount -a` makes the bind mounts its
// fstab lists (the root onto itself, the system's program and library directories, the /etc
// directories TLS needs, four /dev nodes, this Node binary, the script's directory and the relays'
// sockets); then every one of them but /dev and the script's directory (its own, the only writable
// place) is remounted read-only, each with its own mount: a remount keeps the flags a user namespace
// may not change (nosuid, noexec, atime), which a one-step read-only bind mount does not. Then it
// enters the root as SANDBOX_UID ("$@" drops to it). $1 root, $2 fstab, $3 addresses for lo
// ("a/32 b/128"), $4 forwarder spec (JSON) or "", $5 how many read-only mounts follow, then those.
// No /proc: the script cannot look at any other process, and sees no process but its own. The network
// namespace has no interface but lo, which is up only when something is allowed: then the forwarder
// listens on the allowed addresses.
const NAMESPACE_SETUP = `set -e
R=$1; T=$2; A=$3; F=$4; n=$5; shift 5
mount -a -T "$T"
if [ -n "$F" ]; then
  ${IP ?? 'ip'} link set lo up
  echo 0 > /proc/sys/net/ipv4/ip_unprivileged_port_start
  for a in $A; do ${IP ?? 'ip'} addr add "$a" dev lo; done
  mkfifo -m 0600 "$R/tmp/forwarder"
fi
while [ "$n" -gt 0 ]; do mount -o remount,bind,ro "$1"; shift; n=$((n - 1)); done
if [ -n "$F" ]; then
  unshare --root="$R" --wd=/ -- ${dropTo(SANDBOX_UID).join(' ')} ${SANDBOX_NODE} -e "$FORWARDER" "$F" < /dev/null > "$R/tmp/forwarder" &
  read ready < "$R/tmp/forwarder"
fi
exec unshare --root="$R" --wd=${SANDBOX_WORK} -- "$@"
`;

/** The system's program and library directories, bound read-only (or, where they are links such as /bin -> usr/bin, the same links). */
const SYSTEM_DIRS = ['usr', 'bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];
/** What name resolution and TLS read in /etc: files are copied (with their mode), directories bound read-only. */
const ETC_ENTRIES = ['resolv.conf', 'hosts', 'nsswitch.conf', 'host.conf', 'gai.conf', 'localtime', 'ssl', 'ca-certificates', 'pki'];
const DEV_NODES = ['null', 'zero', 'random', 'urandom'];

interface NamespaceRoot {
  root: string;
  fstab: string;
  /** The mounts NAMESPACE_SETUP remounts read-only, the root last. */
  readOnly: string[];
}

/** A path as an fstab field: whitespace and backslashes as octal escapes (fstab(5)). */
const fstabField = (path: string): string => path.replace(/[\\\s]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);

/**
 * Lays out the root of one run in the namespaces (a directory of base, 0755 like the tmpfs root it
 * replaces, read-only once NAMESPACE_SETUP is done): the directories and links of the system's, copies
 * of the /etc files, /etc/passwd and /etc/group of the sandbox, empty mountpoints, and the fstab of the
 * bind mounts (outside the root).
 */
async function namespaceRoot(base: string, confinement: Pick<Confinement, 'node' | 'network' | 'installation'>): Promise<NamespaceRoot> {
  const root = await mkdtemp(join(base, 'root-'));
  await chmod(root, 0o755);
  const binds: Array<{ from: string; to: string; recursive?: boolean }> = [{ from: root, to: root }];
  const readOnly: string[] = [];
  const directory = async (path: string) => {
    await mkdir(path);
    await chmod(path, 0o755);
  };
  const mountpoint = (path: string) => writeFile(path, '', { mode: 0o644 });
  for (const name of SYSTEM_DIRS) {
    const found = await lstat(`/${name}`).catch(() => undefined);
    if (found?.isSymbolicLink()) await symlink(await readlink(`/${name}`), join(root, name));
    else if (found?.isDirectory()) {
      await directory(join(root, name));
      binds.push({ from: `/${name}`, to: join(root, name), recursive: true });
      readOnly.push(join(root, name));
    }
  }
  for (const name of ['etc', 'dev', 'tmp', SANDBOX_WORK.slice(1)]) await directory(join(root, name));
  for (const name of ETC_ENTRIES) {
    const source = `/etc/${name}`;
    const found = await stat(source).catch(() => undefined);
    if (found?.isDirectory()) {
      await directory(join(root, 'etc', name));
      binds.push({ from: source, to: join(root, 'etc', name), recursive: true });
      readOnly.push(join(root, 'etc', name));
    } else if (found?.isFile()) {
      await writeFile(join(root, 'etc', name), await readFile(source), { mode: found.mode & 0o777 });
      await chmod(join(root, 'etc', name), found.mode & 0o777);
    }
  }
  await writeFile(join(root, 'etc', 'passwd'), `root:x:0:0:root:/:/bin/sh\nsandbox:x:${SANDBOX_UID}:${SANDBOX_UID}:sandbox:${SANDBOX_WORK}:/bin/sh\n`, {
    mode: 0o644,
  });
  await writeFile(join(root, 'etc', 'group'), `root:x:0:\nsandbox:x:${SANDBOX_UID}:\n`, { mode: 0o644 });
  for (const name of DEV_NODES) {
    await mountpoint(join(root, 'dev', name));
    binds.push({ from: `/dev/${name}`, to: join(root, 'dev', name) });
  }
  if (confinement.node) {
    await mountpoint(join(root, SANDBOX_NODE));
    binds.push({ from: confinement.node, to: join(root, SANDBOX_NODE) });
    readOnly.push(join(root, SANDBOX_NODE));
  }
  binds.push({ from: join(base, 'work'), to: join(root, SANDBOX_WORK) });
  if (confinement.installation) {
    // An interpreter outside the system directories (PythonRuntimeLayer's /opt/python): shown read-only at its own path.
    await mkdir(join(root, confinement.installation), { recursive: true, mode: 0o755 });
    binds.push({ from: confinement.installation, to: join(root, confinement.installation), recursive: true });
    readOnly.push(join(root, confinement.installation));
  }
  if (confinement.network) {
    await directory(join(root, SANDBOX_NET));
    binds.push({ from: confinement.network.dir, to: join(root, SANDBOX_NET) });
    readOnly.push(join(root, SANDBOX_NET));
  }
  readOnly.push(root);
  const fstab = `${root}.fstab`;
  const lines = binds.map(({ from, to, recursive }) => `${fstabField(from)} ${fstabField(to)} none ${recursive ? 'rbind' : 'bind'} 0 0\n`);
  await writeFile(fstab, lines.join(''), { mode: 0o600 });
  return { root, fstab, readOnly };
}

// ---------------------------------------------------------------------------------------------
// Processes.

interface Exited {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
  timedOut: boolean;
  overLimit: boolean;
  spawnError?: Error;
}

interface ProcessSpec {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  stdin: Buffer;
  /** performance.now() value at which the process group is killed. */
  deadline: number;
  maxOutputBytes: number;
  /** The uid whose every process dies with this one (what left the process group: a daemon). */
  uid?: number;
}

/** Runs argv in its own process group; kills the whole group (and spec.uid) at the deadline, when stdout + stderr exceed the limit and when it exits. */
function runProcess(spec: ProcessSpec): Promise<Exited> {
  return new Promise((resolveRun) => {
    const [command, ...args] = spec.argv as [string, ...string[]];
    const child = spawn(command, args, { cwd: spec.cwd, env: spec.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let captured = 0;
    let timedOut = false;
    let overLimit = false;
    let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let settled = false;
    let killingUid: Promise<void> | undefined;

    const killGroup = () => {
      if (spec.uid !== undefined) killingUid ??= killProcessesOf(spec.uid);
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is gone already
      }
    };
    const finish = (spawnError?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdout.destroy();
      child.stderr.destroy();
      // What runs next as this uid must not meet the kill meant for this run.
      void Promise.resolve(killingUid).then(() =>
        resolveRun({
          code: exited?.code ?? null,
          signal: exited?.signal ?? null,
          stdout: Buffer.concat(out),
          stderr: Buffer.concat(err),
          timedOut,
          overLimit,
          ...(spawnError ? { spawnError } : {}),
        }),
      );
    };
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      if (overLimit) return;
      const room = spec.maxOutputBytes - captured;
      if (chunk.length > room) {
        into.push(chunk.subarray(0, room));
        captured = spec.maxOutputBytes;
        overLimit = true;
        killGroup();
        return;
      }
      into.push(chunk);
      captured += chunk.length;
    };
    // At the deadline: kill what still runs; if it ended but something it left behind holds the pipes open, stop waiting.
    const timer = setTimeout(
      () => {
        if (!exited) {
          timedOut = true;
          killGroup();
        } else finish();
      },
      Math.max(0, spec.deadline - performance.now()),
    );

    child.stdout.on('data', collect(out));
    child.stderr.on('data', collect(err));
    child.stdin.on('error', () => undefined); // a script that does not read its input
    child.once('error', (error) => {
      exited ??= { code: null, signal: null };
      finish(error);
    });
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      killGroup(); // whatever it started goes with it
    });
    child.once('close', () => finish());
    child.stdin.end(spec.stdin);
  });
}

/** A directory of ours under tmpdir: made 0700 if missing, refused if someone else made it (root runs what is in it). */
async function privateDir(name: string): Promise<string> {
  const dir = join(tmpdir(), name);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const found = await lstat(dir);
  const own = process.getuid?.();
  if (!found.isDirectory() || (own !== undefined && (found.uid !== own || (found.mode & 0o077) !== 0)))
    throw new Error(`${dir} is not a private directory of this user: refusing to use it`);
  return dir;
}

// unshare --map-users runs newuidmap/newgidmap (shadow's, setuid) to write the new namespace's map;
// root may write it itself, which these do, from a private directory put first on unshare's PATH.
const ID_MAP_HELPER = (file: string) => `#!/bin/sh
pid=$1; shift; map=""
while [ $# -ge 3 ]; do map="$map$1 $2 $3
"; shift 3; done
printf '%s' "$map" > /proc/$pid/${file}
`;
let idMapHelpers: Promise<string> | undefined;
function idMapHelperDir(): Promise<string> {
  idMapHelpers ??= (async () => {
    const dir = await privateDir('vnfm-sandbox-idmap');
    for (const kind of ['uid', 'gid']) {
      const temp = join(dir, `.new${kind}map.${process.pid}`);
      await writeFile(temp, ID_MAP_HELPER(`${kind}_map`), { mode: 0o700 });
      await rename(temp, join(dir, `new${kind}map`));
    }
    return dir;
  })();
  return idMapHelpers;
}

// ---------------------------------------------------------------------------------------------
// Each script's own uid. Run as root, the runtime gives every script a uid no other process has (from
// SCRIPT_UIDS, mapped to SANDBOX_UID inside the namespaces), recorded in a private folder while the
// script runs: its process count is its own (RLIMIT_NPROC counts per uid), everything it started is
// killed by uid when it ends, and what a runtime killed with kill -9 left behind (a daemon of a plain
// script) is killed by the next runtime's start-up sweep. Not root (Lambda): the runtime's own uid.

const SCRIPT_UIDS = { first: 1_500_000_000, count: 100_000_000 };
const UID_REGISTRY = 'vnfm-script-uids';
const runsAsRoot = process.getuid?.() === 0;

/** A uid for the script whose folder is `base`, recorded with this runtime's pid and that folder (for the sweep). */
async function claimScriptUid(base: string): Promise<number | undefined> {
  if (!runsAsRoot) return undefined;
  const dir = await privateDir(UID_REGISTRY);
  for (;;) {
    const uid = SCRIPT_UIDS.first + randomInt(SCRIPT_UIDS.count);
    try {
      await writeFile(join(dir, String(uid)), JSON.stringify({ pid: process.pid, base }), { flag: 'wx', mode: 0o600 });
      return uid;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

/** Pids of the processes whose real uid is `uid`, zombies left out. */
export function processesOf(uid: number): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = readFileSync(`/proc/${name}/status`, 'utf8');
      if (new RegExp(`^Uid:\\s+${uid}\\s`, 'm').test(status) && !/^State:\s+Z/m.test(status)) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Kills every process of `uid`: kill -1 as that uid reaches all of them at once, fork bombs included. */
async function killProcessesOf(uid: number): Promise<void> {
  for (let round = 0; round < 10 && processesOf(uid).length; round++) {
    await runProcess({
      argv: [SETPRIV ?? 'setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', '/bin/sh', '-c', 'kill -KILL -1 2>/dev/null; exit 0'],
      cwd: '/',
      env: outerEnv(),
      stdin: Buffer.alloc(0),
      deadline: performance.now() + 10_000,
      maxOutputBytes: 4096,
    });
  }
}

async function releaseScriptUid(uid: number): Promise<void> {
  await killProcessesOf(uid);
  await rm(join(tmpdir(), UID_REGISTRY, String(uid)), { force: true });
}

function runtimeAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Kills what scripts of runtimes that are gone left running, and removes their folders. Runs before this process's first script; returns how many uids it swept. */
export async function sweepLeftoverScripts(): Promise<number> {
  if (!runsAsRoot) return 0;
  const dir = await privateDir(UID_REGISTRY);
  let swept = 0;
  for (const name of await readdir(dir)) {
    const uid = Number(name);
    if (!/^\d+$/.test(name) || uid < SCRIPT_UIDS.first || uid >= SCRIPT_UIDS.first + SCRIPT_UIDS.count) continue;
    let entry: { pid?: unknown; base?: unknown } = {};
    try {
      entry = JSON.parse(await readFile(join(dir, name), 'utf8')) as typeof entry;
    } catch {
      // half written: its runtime died claiming it
    }
    const { pid, base } = entry;
    if (pid === process.pid || (typeof pid === 'number' && pid > 0 && runtimeAlive(pid))) continue;
    await releaseScriptUid(uid);
    if (typeof base === 'string' && dirname(base) === tmpdir() && basename(base).startsWith('vnfm-script-')) await rm(base, { recursive: true, force: true });
    swept++;
  }
  return swept;
}

let startupSweep: Promise<unknown> | undefined;

// ---------------------------------------------------------------------------------------------
// Namespaces.

interface NetworkPlan {
  /** The relays' socket directory outside. */
  dir: string;
  allow: NetworkAllowance[];
}

interface Confinement {
  /** The script's uid outside (undefined: not root, the runtime's own). */
  uid: number | undefined;
  limits: SandboxLimits;
  node?: string;
  network?: NetworkPlan;
  /** An installation outside the system directories the script's program needs (pythonHome). */
  installation?: string;
}

/** Wraps argv (paths as seen inside) to run in new user, mount, PID and network namespaces on the root namespaceRoot laid out. */
function inNamespaces(argv: string[], layout: NamespaceRoot, env: Record<string, string>, confinement: Confinement): string[] {
  const { uid, network } = confinement;
  const ids = uid === undefined ? [] : [`--map-users=${uid},${SANDBOX_UID},1`, `--map-groups=${uid},${SANDBOX_UID},1`];
  const addresses = (network?.allow ?? [])
    .filter(({ host }) => !/^127\./.test(host) && host !== '::1')
    .map(({ host }) => `${host}/${host.includes(':') ? 128 : 32}`);
  const forwards = network?.allow.map(({ host, port }, index) => ({ host, port, socket: `${SANDBOX_NET}/${index}.sock` }));
  return [
    ...dropTo(undefined),
    UNSHARE ?? 'unshare',
    '--user',
    '--map-root-user',
    ...ids,
    '--mount',
    '--pid',
    '--net',
    '--fork',
    '--kill-child',
    '--',
    '/bin/sh',
    '-c',
    NAMESPACE_SETUP,
    'vnfm-sandbox',
    layout.root,
    layout.fstab,
    [...new Set(addresses)].join(' '),
    forwards?.length ? JSON.stringify(forwards) : '',
    String(layout.readOnly.length),
    ...layout.readOnly,
    ...limited(confinement.limits),
    ...dropTo(SANDBOX_UID),
    '/usr/bin/env',
    '-i',
    ...Object.entries(env).map(([name, value]) => `${name}=${value}`),
    ...argv,
  ];
}

async function namespaceEnv(): Promise<Record<string, string>> {
  return { ...outerEnv(), PATH: `${await idMapHelperDir()}:${CHILD_PATH}`, FORWARDER: FORWARDER_SOURCE };
}

let namespaceProbe: Promise<boolean> | undefined;

/** Whether this machine lets us build the namespace sandbox (tried once: a tiny program run inside it as the script's uid). */
export function namespacesAvailable(): Promise<boolean> {
  namespaceProbe ??= (async () => {
    if (!UNSHARE || !SETPRIV || !PRLIMIT || !existsSync('/usr/bin/env') || !runsAsRoot) return false;
    const base = await newBase();
    const uid = await claimScriptUid(base);
    try {
      const run = await runProcess({
        argv: inNamespaces(['/bin/sh', '-c', `[ "$(id -u)" = ${SANDBOX_UID} ]`], await namespaceRoot(base, {}), childEnv(SANDBOX_WORK), {
          uid,
          limits: DEFAULT_LIMITS,
        }),
        cwd: base,
        env: await namespaceEnv(),
        stdin: Buffer.alloc(0),
        deadline: performance.now() + 10_000,
        maxOutputBytes: 64 * 1024,
      });
      return run.code === 0;
    } finally {
      if (uid !== undefined) await releaseScriptUid(uid);
      await rm(base, { recursive: true, force: true }).catch(() => undefined);
    }
  })();
  return namespaceProbe;
}

function childEnv(workDir: string): Record<string, string> {
  return { PATH: CHILD_PATH, LANG: 'C.UTF-8', HOME: workDir, TMPDIR: workDir };
}

function outerEnv(): Record<string, string> {
  return { PATH: CHILD_PATH, LANG: 'C.UTF-8' };
}

/** base (0711: the script's uid passes through to its own folder), base/work (the script's folder); with namespaces, base/root-* (each run's root, namespaceRoot). */
async function newBase(): Promise<string> {
  const base = await mkdtemp(join(tmpdir(), 'vnfm-script-'));
  await chmod(base, 0o711);
  await mkdir(join(base, 'work'), { mode: 0o700 });
  return base;
}

/** Gives the script's uid its folder and files (all of them: written by root, mode 0600/0700). */
async function handOver(dir: string, uid: number | undefined): Promise<void> {
  if (uid === undefined) return;
  await chown(dir, uid, uid);
  for (const entry of await readdir(dir, { recursive: true })) await chown(join(dir, entry), uid, uid);
}

// ---------------------------------------------------------------------------------------------
// Files.

class BadRequest extends Error {}

/** A package path made relative and normal (`./Scripts/a.py` -> `Scripts/a.py`); refuses absolute paths and `..`. */
export function packagePath(path: string): string {
  if (path.includes('\0') || path.includes('\\')) throw new BadRequest(`file path ${JSON.stringify(path)} has a NUL or a backslash`);
  if (path.startsWith('/')) throw new BadRequest(`file path ${JSON.stringify(path)} is absolute; paths are relative to the package root`);
  const segments = path.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) throw new BadRequest(`file path ${JSON.stringify(path)} leaves the package ("..")`);
  if (!segments.length) throw new BadRequest(`file path ${JSON.stringify(path)} names no file`);
  return segments.join('/');
}

async function writeFiles(work: string, files: Record<string, string>): Promise<Set<string>> {
  const written = new Set<string>();
  const normal = Object.entries(files).map(([path, content]) => [packagePath(path), content] as const);
  for (const [path, content] of normal) {
    if (written.has(path)) throw new BadRequest(`file path ${path} is given twice`);
    const target = join(work, path);
    try {
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
      await writeFile(target, Buffer.from(content, 'base64'), { flag: 'wx', mode: 0o600 });
    } catch (error) {
      throw new BadRequest(
        `file path ${path} cannot be written (${(error as NodeJS.ErrnoException).code ?? String(error)}): a file and a directory of the same name?`,
      );
    }
    written.add(path);
  }
  return written;
}

// ---------------------------------------------------------------------------------------------
// Results.

/** The line of stderr that says what went wrong: the last one that is not blank, indented (stack frames, Python's
 *  `File ...` lines, error properties), a caret, lone punctuation or Node's version banner. */
export function lastMeaningfulLine(stderr: string): string | undefined {
  const lines = stderr.split(/\r?\n/);
  const meaningful = lines.filter(
    (line) =>
      line.trim() !== '' &&
      !/^\s/.test(line) &&
      !/^[\^~\s]+$/.test(line) &&
      !/^[{}[\]()]+,?$/.test(line.trim()) &&
      !/^Node\.js v\d/.test(line) &&
      line !== 'Traceback (most recent call last):',
  );
  const line =
    meaningful.at(-1) ??
    lines
      .map((l) => l.trim())
      .filter(Boolean)
      .at(-1);
  return line === undefined ? undefined : cut(line, 2000);
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}...` : text;
}

type StdoutObject = { kind: 'none' } | { kind: 'object'; value: Record<string, unknown> } | { kind: 'invalid' };

/** The JavaScript contract's stdout: nothing, or one JSON object (all of stdout, or its last line). */
function stdoutObject(stdout: string): StdoutObject {
  const text = stdout.trim();
  if (text === '') return { kind: 'none' };
  for (const candidate of [text, text.split('\n').at(-1)?.trim() ?? '']) {
    try {
      const value: unknown = JSON.parse(candidate);
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) return { kind: 'object', value: value as Record<string, unknown> };
    } catch {
      // not this one
    }
  }
  return { kind: 'invalid' };
}

/** The message of a stdout `error`: a string, or an object's `detail` (or `message`). */
function errorMessage(error: unknown): string {
  if (typeof error === 'string') return error;
  if (error && typeof error === 'object') {
    const { detail, message } = error as { detail?: unknown; message?: unknown };
    if (typeof detail === 'string') return detail;
    if (typeof message === 'string') return message;
  }
  return JSON.stringify(error);
}

interface Context {
  request: ScriptRequest;
  script: string;
  limits: SandboxLimits;
  started: number;
}

function label(ctx: Context): string {
  return ctx.request.kind === 'coordinate' ? `CoordinateVNF script ${ctx.script}` : `${ctx.request.input.operation} script ${ctx.script}`;
}

function scriptFailure(ctx: Context, reason: FailureReason, detail: string, run: { stdout: string; stderr: string }, output?: unknown): ScriptFailure {
  return {
    ok: false,
    error: { title: scriptFailureTitle(ctx.request.kind), status: 422, detail: cut(detail, 4000) },
    reason,
    ...(output === undefined ? {} : { output }),
    stdout: run.stdout,
    stderr: run.stderr,
    durationMs: Math.round(performance.now() - ctx.started),
  };
}

/** The failure for a run we ended (time or output limit), or undefined. */
function limitFailure(ctx: Context, run: Exited, text: { stdout: string; stderr: string }): ScriptFailure | undefined {
  if (run.timedOut) return scriptFailure(ctx, 'timeout', `${label(ctx)} timed out after ${ctx.limits.timeoutMs} ms and was killed`, text);
  if (run.overLimit)
    return scriptFailure(ctx, 'output-limit', `${label(ctx)} wrote more than ${ctx.limits.maxOutputBytes} bytes to stdout and stderr and was killed`, text);
  return undefined;
}

function exitDescription(run: Exited): string {
  return run.signal ? `was killed by ${run.signal}` : `exited with code ${run.code ?? 'unknown'}`;
}

// ---------------------------------------------------------------------------------------------
// Runners.

interface Sandbox {
  /** The script's directory as the script sees it. */
  workDir: string;
  run(argv: string[], stdin: Buffer, options?: { node?: boolean; installation?: string }): Promise<Exited>;
}

interface SandboxSetup {
  base: string;
  namespaces: boolean;
  limits: SandboxLimits;
  deadline: number;
  uid: number | undefined;
  network?: NetworkPlan;
  /** Outer environment for the namespaces (namespaceEnv). */
  outer: Record<string, string>;
}

function sandbox(setup: SandboxSetup): Sandbox {
  const { base, namespaces, limits, deadline, uid } = setup;
  const work = join(base, 'work');
  const workDir = namespaces ? SANDBOX_WORK : work;
  const env = childEnv(workDir);
  return {
    workDir,
    run: async (argv, stdin, options = {}) => {
      if (!namespaces) {
        return runProcess({
          argv: [...limited(limits), ...dropTo(uid), ...argv],
          cwd: work,
          env,
          stdin,
          deadline,
          maxOutputBytes: limits.maxOutputBytes,
          ...(uid === undefined ? {} : { uid }),
        });
      }
      const confinement: Confinement = {
        uid,
        limits,
        ...(options.node ? { node: process.execPath } : {}),
        ...(options.installation ? { installation: options.installation } : {}),
        ...(setup.network ? { network: setup.network } : {}),
      };
      return runProcess({
        argv: inNamespaces(argv, await namespaceRoot(base, confinement), env, confinement),
        cwd: base,
        env: setup.outer,
        stdin,
        deadline,
        maxOutputBytes: limits.maxOutputBytes,
      });
    },
  };
}

async function runJavaScript(ctx: Context, box: Sandbox, namespaces: boolean): Promise<ScriptResult> {
  const { request } = ctx;
  const stdin = { ...request.input, kind: request.kind, ...(request.className ? { className: request.className } : {}), packageDir: box.workDir };
  const node = namespaces ? SANDBOX_NODE : process.execPath;
  const run = await box.run(
    [
      // V8's heap limit below the memory limit, so that a script that fills its heap fails as V8 says, not in a failed allocation elsewhere.
      node,
      '--permission',
      `--allow-fs-read=${box.workDir}`,
      `--max-old-space-size=${Math.max(16, Math.floor(ctx.limits.memoryMb * 0.75))}`,
      join(box.workDir, ctx.script),
    ],
    Buffer.from(JSON.stringify(stdin)),
    { node: true },
  );
  const text = { stdout: run.stdout.toString('utf8'), stderr: run.stderr.toString('utf8') };
  if (run.spawnError)
    return failure(500, `${label(ctx)} could not be started: ${run.spawnError.message}`, 'runner', Math.round(performance.now() - ctx.started));
  const limited = limitFailure(ctx, run, text);
  if (limited) return limited;

  const parsed = stdoutObject(text.stdout);
  const output = parsed.kind === 'object' ? parsed.value : undefined;
  if (output && 'error' in output) return scriptFailure(ctx, 'error', `${label(ctx)} failed: ${errorMessage(output.error)}`, text, output);
  if (run.code !== 0) {
    return scriptFailure(ctx, 'exit', `${label(ctx)} failed: ${lastMeaningfulLine(text.stderr) ?? exitDescription(run)}`, text, output);
  }
  if (parsed.kind === 'invalid') {
    return scriptFailure(
      ctx,
      'invalid-output',
      `${label(ctx)} printed something that is not one JSON object on stdout (log to stderr): ${cut(text.stdout.trim(), 200)}`,
      text,
    );
  }
  return { ok: true, ...(output === undefined ? {} : { output }), ...text, durationMs: Math.round(performance.now() - ctx.started) };
}

// Unpickling runs code, so it happens in the sandbox too. Exit 3: stdout is not a pickle.
const PICKLE_OUTPUT = `import json, pickle, sys
try:
    value = pickle.loads(sys.stdin.buffer.read())
except Exception:
    sys.exit(3)
json.dump(value, sys.stdout, default=repr)
`;

/** The dict Tacker pickles onto the script's stdin (see the header comment). */
export function tackerScriptDict(request: ScriptRequest, csarDir: string): Record<string, unknown> {
  const input: ScriptInput = request.input;
  if (request.kind === 'lcm-hook') {
    return {
      operation: input.operation,
      request: input.request,
      vnf_instance: input.vnfInstance,
      grant_request: input.grantRequest ?? null,
      grant_response: input.grant ?? null,
      tmp_csar_dir: csarDir,
      user_script_err_handling_data: input.userScriptErrHandlingData ?? {},
    };
  }
  return {
    ...input.vnfcParam,
    ...(input.sshIp === undefined ? {} : { ssh_ip: input.sshIp }),
    is_rollback: input.is_rollback,
    ...(input.lcmCoordRequest === undefined ? {} : { LcmCoordRequest: input.lcmCoordRequest }),
    inst: input.vnfInstance,
    ...(input.vnfcInfoId === undefined ? {} : { vnfc_info_id: input.vnfcInfoId }),
  };
}

async function runPython(ctx: Context, box: Sandbox, python: string | undefined): Promise<ScriptResult> {
  if (!python)
    return failure(500, `${label(ctx)} cannot run: python3 is not available on the script runner`, 'unavailable', Math.round(performance.now() - ctx.started));
  // Our own JSON -> pickle, on trusted data, written here (pickle.ts): data only, no code.
  const pickled = pickleJson(tackerScriptDict(ctx.request, box.workDir));

  const home = pythonHome(python);
  const installation = home ? { installation: home } : {};
  const run = await box.run([python, join(box.workDir, ctx.script)], pickled, installation);
  const text = { stdout: run.stdout.toString('utf8'), stderr: run.stderr.toString('utf8') };
  if (run.spawnError)
    return failure(500, `${label(ctx)} could not be started: ${run.spawnError.message}`, 'runner', Math.round(performance.now() - ctx.started));
  const limited = limitFailure(ctx, run, text);
  if (limited) return limited;

  // Tacker reads a pickled dict from stdout whether the script succeeded or not.
  let output: unknown;
  if (run.stdout.length) {
    const decoded = await box.run([python, '-I', '-c', PICKLE_OUTPUT], run.stdout, installation);
    const decodedLimit = limitFailure(ctx, decoded, text);
    if (decodedLimit) return decodedLimit;
    if (decoded.code === 0) {
      output = JSON.parse(decoded.stdout.toString('utf8')) as unknown;
      text.stdout = ''; // it was a pickle, not text
    } else if (decoded.code !== 3) {
      return scriptFailure(
        ctx,
        'invalid-output',
        `${label(ctx)} wrote a pickle on stdout that cannot be read: ${lastMeaningfulLine(decoded.stderr.toString('utf8')) ?? exitDescription(decoded)}`,
        text,
      );
    }
  }
  if (run.code !== 0) return scriptFailure(ctx, 'exit', `${label(ctx)} failed: ${lastMeaningfulLine(text.stderr) ?? exitDescription(run)}`, text, output);
  return { ok: true, ...(output === undefined ? {} : { output }), ...text, durationMs: Math.round(performance.now() - ctx.started) };
}

/** A script that failed on the network it does not have says so in its own words; this adds where network comes from. */
function withNetworkHint(result: ScriptResult, allow: NetworkAllowance[]): ScriptResult {
  if (result.ok || !['exit', 'error', 'timeout'].includes(result.reason)) return result;
  if (
    !/ENETUNREACH|ECONNREFUSED|EAI_AGAIN|ENOTFOUND|Network is unreachable|Connection refused|Name or service not known|Temporary failure in name resolution/i.test(
      `${result.error.detail}\n${result.stderr}`,
    )
  )
    return result;
  const hint = allow.length
    ? ` (the script may connect only to ${allow.map(({ host, port }) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`)).join(', ')}, as additionalParams.scriptNetworkAccess allows)`
    : ' (the script has no network: list each host:port it must reach in additionalParams.scriptNetworkAccess)';
  return { ...result, error: { ...result.error, detail: `${result.error.detail}${hint}` } };
}

const LANGUAGES: Record<string, 'javascript' | 'python'> = { '.js': 'javascript', '.mjs': 'javascript', '.cjs': 'javascript', '.py': 'python' };

/**
 * Scripts running at once in this process. A Lambda instance runs one invocation at a time, so on
 * AWS this never waits; a process serving many invocations (the local runtime) runs as many scripts
 * as it has cores for and queues the rest, so that a script's time limit measures the script and not
 * the queue in front of it (200 concurrent python3 starts on two cores took longer than 30 s).
 */
const MAX_CONCURRENT_SCRIPTS = Math.max(2, availableParallelism() * 2);
let runningScripts = 0;
const waitingScripts: Array<() => void> = [];

async function withScriptSlot<T>(run: () => Promise<T>): Promise<T> {
  if (runningScripts >= MAX_CONCURRENT_SCRIPTS) await new Promise<void>((resolve) => waitingScripts.push(resolve));
  else runningScripts++;
  try {
    return await run();
  } finally {
    const next = waitingScripts.shift();
    if (next)
      next(); // the slot passes on
    else runningScripts--;
  }
}

/** Runs the request's script under `options` (the request may only lower the limits). Never throws for a bad request or a failing script. */
export function runScript(request: ScriptRequest, options: SandboxOptions = DEFAULT_LIMITS): Promise<ScriptResult> {
  return withScriptSlot(() => runScriptNow(request, options));
}

async function runScriptNow(request: ScriptRequest, options: SandboxOptions): Promise<ScriptResult> {
  const started = performance.now();
  const limits: SandboxLimits = {
    timeoutMs: Math.min(options.timeoutMs, request.timeoutMs ?? Infinity),
    maxOutputBytes: Math.min(options.maxOutputBytes, request.maxOutputBytes ?? Infinity, MAX_OUTPUT_BYTES_CAP),
    memoryMb: options.memoryMb ?? DEFAULT_LIMITS.memoryMb,
    maxProcesses: options.maxProcesses ?? DEFAULT_LIMITS.maxProcesses,
  };
  const deadline = started + limits.timeoutMs;
  let script: string;
  try {
    script = packagePath(request.script);
  } catch (error) {
    return failure(400, (error as Error).message, 'bad-request');
  }
  const language = LANGUAGES[extname(script).toLowerCase()];
  if (!language) return failure(400, `script ${script} is neither JavaScript (.js, .mjs, .cjs) nor Python (.py)`, 'bad-request');

  const isolation = options.isolation ?? 'auto';
  const namespaces = isolation !== 'plain' && (await namespacesAvailable());
  if (isolation !== 'plain' && !namespaces) {
    return failure(
      500,
      "Vendor scripts are not run: this machine does not allow the sandbox's user, mount, PID and network namespaces (the runner must run as root with unshare, setpriv and prlimit). Set SCRIPT_ISOLATION=plain to run them with the weaker isolation instead",
      'runner',
    );
  }
  startupSweep ??= sweepLeftoverScripts().catch(() => 0);
  await startupSweep;

  const base = await newBase();
  let uid: number | undefined;
  let relays: Relays | undefined;
  try {
    let written: Set<string>;
    try {
      written = await writeFiles(join(base, 'work'), request.files);
    } catch (error) {
      if (error instanceof BadRequest) return failure(400, error.message, 'bad-request');
      throw error;
    }
    if (!written.has(script)) return failure(400, `script ${script} is not among the files given`, 'bad-request');
    uid = await claimScriptUid(base);
    await handOver(join(base, 'work'), uid);
    // Without namespaces the script shares the runner's network: an allowance has nothing to open.
    const allow = namespaces ? (request.network?.allow ?? []) : [];
    let network: NetworkPlan | undefined;
    if (allow.length) {
      network = { dir: join(base, 'net'), allow };
      relays = await startRelays(network.dir, allow, options.egress ?? egressPolicyFromEnv());
      if (uid !== undefined) for (const socket of relays.sockets) await chown(socket, uid, uid);
    }
    const ctx: Context = { request, script, limits, started };
    const box = sandbox({ base, namespaces, limits, deadline, uid, ...(network ? { network } : {}), outer: namespaces ? await namespaceEnv() : outerEnv() });
    const result =
      language === 'javascript'
        ? await runJavaScript(ctx, box, namespaces)
        : await runPython(ctx, box, options.python === undefined ? findPython() : (options.python ?? undefined));
    return namespaces ? withNetworkHint(result, allow) : result;
  } finally {
    await relays?.close();
    if (uid !== undefined) await releaseScriptUid(uid);
    await rm(base, { recursive: true, force: true }).catch(() => undefined);
  }
}

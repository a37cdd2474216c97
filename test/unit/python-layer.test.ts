// The Python runtime layer (PythonRuntimeLayer, layers/python/Makefile) that gives ScriptRunnerFunction a
// python3 on Lambda: wired in template.yaml, and built as `sam build` builds it (make with ARTIFACTS_DIR)
// from a small archive of the same layout, so the build is tested without the network. The real
// download is checked only when asked for (VNFM_TEST_PYTHON_LAYER_DOWNLOAD=1) and reachable.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { arch, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadTemplate } from '#local/template.ts';
import { LAYER_PYTHON } from '#lib/scripts/sandbox.ts';
import { ROOT } from '../support/runtime.ts';

const LAYER_DIR = join(ROOT, 'layers', 'python');
const MAKEFILE = readFileSync(join(LAYER_DIR, 'Makefile'), 'utf8');
const pinned = (name: string): string => {
  const value = new RegExp(`^${name} \\?= (\\S+)$`, 'm').exec(MAKEFILE)?.[1];
  assert.ok(value, `the Makefile pins ${name}`);
  return value;
};

const scratch = mkdtempSync(join(tmpdir(), 'vnfm-python-layer-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** `make build-PythonRuntimeLayer` as sam build runs it: in the layer's folder, ARTIFACTS_DIR given. */
function buildLayer(artifacts: string, variables: Record<string, string> = {}) {
  const env = { ...process.env };
  delete env.PYTHON_STANDALONE_URL;
  delete env.PYTHON_STANDALONE_SHA256;
  return spawnSync(
    'make',
    ['-C', LAYER_DIR, 'build-PythonRuntimeLayer', `ARTIFACTS_DIR=${artifacts}`, ...Object.entries(variables).map(([name, value]) => `${name}=${value}`)],
    { encoding: 'utf8', env, timeout: 600_000 },
  );
}

/** An archive laid out as python-build-standalone's install_only ones are: python/bin/python3, python/lib/... */
function standInArchive(): { url: string; sha256: string } {
  const source = join(scratch, 'source');
  mkdirSync(join(source, 'python', 'bin'), { recursive: true });
  mkdirSync(join(source, 'python', 'lib', 'python3.12'), { recursive: true });
  writeFileSync(join(source, 'python', 'bin', 'python3'), '#!/bin/sh\necho "Python 3.12.12"\n');
  chmodSync(join(source, 'python', 'bin', 'python3'), 0o755);
  writeFileSync(join(source, 'python', 'lib', 'python3.12', 'os.py'), '# stand-in\n');
  const archive = join(scratch, 'cpython.tar.gz');
  const tar = spawnSync('tar', ['-czf', archive, '-C', source, 'python'], { encoding: 'utf8' });
  assert.equal(tar.status, 0, tar.stderr);
  return { url: pathToFileURL(archive).href, sha256: createHash('sha256').update(readFileSync(archive)).digest('hex') };
}

describe('PythonRuntimeLayer in template.yaml', () => {
  const template = loadTemplate(join(ROOT, 'template.yaml'));
  const layer = template.Resources.PythonRuntimeLayer;

  it('is a layer for arm64 nodejs22.x built by layers/python/Makefile, deleted with the stack', () => {
    assert.equal(layer?.Type, 'AWS::Serverless::LayerVersion');
    const properties = layer.Properties as Record<string, unknown>;
    assert.equal(properties.ContentUri, 'layers/python/');
    assert.deepEqual(properties.CompatibleArchitectures, ['arm64']);
    assert.deepEqual(properties.CompatibleRuntimes, ['nodejs22.x']);
    assert.equal(properties.RetentionPolicy, 'Delete');
    assert.deepEqual(layer.Metadata, { BuildMethod: 'makefile' });
    assert.match(MAKEFILE, /^build-PythonRuntimeLayer:/m, 'the target SAM runs for this logical id');
    // The functions run on arm64 (Globals), which the layer's interpreter is built for.
    assert.deepEqual(template.Globals?.Function?.Architectures, ['arm64']);
    assert.match(
      pinned('PYTHON_STANDALONE_URL'),
      /^https:\/\/github\.com\/astral-sh\/python-build-standalone\/releases\/download\/\d+\/cpython-3\.12\.\d+%2B\d+-aarch64-unknown-linux-gnu-install_only_stripped\.tar\.gz$/,
    );
    assert.match(pinned('PYTHON_STANDALONE_SHA256'), /^[0-9a-f]{64}$/);
  });

  it('is attached to ScriptRunnerFunction, and to no other function', () => {
    const users = Object.entries(template.Resources)
      .filter(([, resource]) => JSON.stringify((resource.Properties as { Layers?: unknown } | undefined)?.Layers ?? []).includes('PythonRuntimeLayer'))
      .map(([logicalId]) => logicalId);
    assert.deepEqual(users, ['ScriptRunnerFunction']);
    assert.deepEqual((template.Resources.ScriptRunnerFunction?.Properties as { Layers?: unknown } | undefined)?.Layers, [{ Ref: 'PythonRuntimeLayer' }]);
  });

  it('puts python3 where the script runner looks first', () => {
    assert.equal(LAYER_PYTHON, '/opt/python/bin/python3');
  });
});

describe('make build-PythonRuntimeLayer (as sam build runs it)', () => {
  const archive = standInArchive();

  it('unpacks the archive whose SHA-256 matches into ARTIFACTS_DIR/python, which Lambda mounts at /opt/python', () => {
    const artifacts = join(scratch, 'artifacts');
    const build = buildLayer(artifacts, { PYTHON_STANDALONE_URL: archive.url, PYTHON_STANDALONE_SHA256: archive.sha256 });
    assert.equal(build.status, 0, build.stderr);
    assert.deepEqual(readdirSync(artifacts), ['python']);
    const python3 = join(artifacts, 'python', 'bin', 'python3');
    assert.ok(statSync(python3).mode & 0o111, 'python3 is executable');
    assert.ok(existsSync(join(artifacts, 'python', 'lib', 'python3.12', 'os.py')));
    assert.equal(spawnSync(python3, ['--version'], { encoding: 'utf8' }).stdout.trim(), 'Python 3.12.12');
  });

  it('fails on a checksum mismatch, saying so, and leaves no layer behind', () => {
    const artifacts = join(scratch, 'mismatch');
    const build = buildLayer(artifacts, { PYTHON_STANDALONE_URL: archive.url, PYTHON_STANDALONE_SHA256: '0'.repeat(64) });
    assert.notEqual(build.status, 0);
    assert.match(build.stderr, new RegExp(`SHA-256 mismatch .*expected 0{64}, got ${archive.sha256}; nothing was built`));
    assert.ok(!existsSync(join(artifacts, 'python')), 'nothing in ARTIFACTS_DIR');
  });

  it('fails when the download fails, and when ARTIFACTS_DIR is not given', () => {
    const artifacts = join(scratch, 'missing');
    const build = buildLayer(artifacts, {
      PYTHON_STANDALONE_URL: pathToFileURL(join(scratch, 'absent.tar.gz')).href,
      PYTHON_STANDALONE_SHA256: archive.sha256,
    });
    assert.notEqual(build.status, 0);
    assert.ok(!existsSync(join(artifacts, 'python')));
    const unset = buildLayer('');
    assert.notEqual(unset.status, 0);
    assert.match(unset.stderr, /ARTIFACTS_DIR is not set/);
  });
});

// The pinned release, downloaded: its checksum (the build fails otherwise), and on an arm64 machine the interpreter itself.
describe('the pinned python-build-standalone release', {
  skip: process.env.VNFM_TEST_PYTHON_LAYER_DOWNLOAD === '1' ? false : 'set VNFM_TEST_PYTHON_LAYER_DOWNLOAD=1 to download it (about 20 MB)',
}, () => {
  it('matches its pinned SHA-256, and runs as Python 3.12 on arm64', async (t) => {
    const url = pinned('PYTHON_STANDALONE_URL');
    const reachable = await fetch(url, { method: 'HEAD', redirect: 'follow', signal: AbortSignal.timeout(5000) }).then(
      (response) => response.ok,
      () => false,
    );
    if (!reachable) return t.skip(`${url} is not reachable from this machine`);
    const artifacts = join(scratch, 'real');
    const build = buildLayer(artifacts);
    assert.equal(build.status, 0, build.stderr);
    const python3 = join(artifacts, 'python', 'bin', 'python3');
    assert.ok(existsSync(python3));
    if (arch() !== 'arm64') return t.skip(`the interpreter is for aarch64; this machine is ${arch()}`);
    assert.match(spawnSync(python3, ['--version'], { encoding: 'utf8' }).stdout, /^Python 3\.12\.\d+/);
  });
});

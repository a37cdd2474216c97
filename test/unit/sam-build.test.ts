// `sam build` as it runs on a clean machine: SAM's esbuild workflow copies the project to a scratch
// folder, installs the production dependencies only (`npm install --omit=dev` from the lockfile),
// runs the esbuild found there, and bundles each function from its Metadata.BuildProperties. This
// reproduces that without the network: the production set is read from package-lock.json, and
// every function is bundled while any module of a package outside that set counts as missing.
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { samBuild, samFunctions } from '../support/sam-build.ts';
import { ROOT } from '../support/runtime.ts';

interface LockedPackage {
  dev?: boolean;
}

const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockedPackage> };
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

const installedForProduction = (key: string) => key in lock.packages && lock.packages[key]?.dev !== true;

it('installs esbuild with the production dependencies, so SAM finds it in its scratch copy', () => {
  assert.ok(manifest.dependencies.esbuild, 'esbuild is a dependency');
  assert.ok(installedForProduction('node_modules/esbuild'));
});

it('keeps the local stand-ins out of a production install', () => {
  for (const standIn of ['dynalite', 's3rver', 'aws-local-stepfunctions', 'tsx']) {
    assert.ok(manifest.devDependencies[standIn], `${standIn} is a devDependency`);
    assert.equal(installedForProduction(`node_modules/${standIn}`), false, `${standIn} is not installed for production`);
  }
});

/**
 * The scratch copy a production install leaves: the project's sources and manifests, and a
 * node_modules holding only the lockfile's production packages (links to the installed ones;
 * symlinks are kept as paths, so a module resolves its own imports inside this copy only).
 */
function productionCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-sam-build-'));
  for (const name of ['package.json', 'package-lock.json', 'tsconfig.json']) copyFileSync(join(ROOT, name), join(dir, name));
  for (const name of ['functions', 'lib']) symlinkSync(join(ROOT, name), join(dir, name));
  for (const key of Object.keys(lock.packages)) {
    if (!key.startsWith('node_modules/') || key.lastIndexOf('node_modules/') !== 0 || !installedForProduction(key)) continue;
    mkdirSync(dirname(join(dir, key)), { recursive: true });
    symlinkSync(join(ROOT, key), join(dir, key));
  }
  return dir;
}

const scratch = productionCopy();
after(() => rmSync(scratch, { recursive: true, force: true }));

for (const fn of samFunctions()) {
  it(`${fn.logicalId} builds from a production install`, async () => {
    const { result } = await samBuild(fn, scratch).catch((error: { errors?: Array<{ text: string }> }) => ({
      result: { errors: error.errors ?? [{ text: String(error) }] },
    }));
    assert.deepEqual(
      result.errors.map((error) => error.text),
      [],
    );
  });
}

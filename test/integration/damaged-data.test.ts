// Damaged data is named, not hidden: a data folder whose VNFM stopped cleanly is damaged one way
// at a time (bit flips in a LevelDB log or table, a deleted or truncated LevelDB, a deleted S3
// folder under an ONBOARDED package, garbage in the credential files, a missing client store);
// the next start must exit non-zero naming the damaged path, and `--repair` must then start and
// say what it did.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLocalClient } from '#local/oauth2.ts';
import { buildCsar } from '../support/csar-builder.ts';
import { accessToken, adminCredentials, client, newDataDir, settle, startVnfm, type LocalVnfm } from '../support/runtime.ts';

const ENV = { VNFM_SCHEDULE_SCALE: '0' };
let base: string;
let packageId: string;
const started: LocalVnfm[] = [];

before(async () => {
  base = newDataDir();
  const vnfm = await startVnfm({ dataDir: base, env: ENV });
  const call = client(vnfm);
  const created = await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} });
  packageId = (created.body as { id: string }).id;
  const upload = await call('PUT', `/vnfpkgm/v1/vnf_packages/${packageId}/package_content`, {
    raw: await buildCsar('openstack-vnf-v1'),
    headers: { 'Content-Type': 'application/zip' },
  });
  assert.equal(upload.status, 202, upload.text);
  await settle(vnfm);
  assert.equal(((await call('GET', `/vnfpkgm/v1/vnf_packages/${packageId}`)).body as { onboardingState: string }).onboardingState, 'ONBOARDED');
  assert.equal(await vnfm.stop(), 0, vnfm.output());
  // A second run: LevelDB turns the first run's log into a table file when it opens.
  const again = await startVnfm({ dataDir: base, env: ENV });
  assert.equal(await again.stop(), 0, again.output());
});
after(async () => {
  for (const vnfm of started) await vnfm.stop();
});

/** A copy of the cleanly stopped folder, to damage. */
function copyOfBase(): string {
  const dir = newDataDir();
  cpSync(base, dir, { recursive: true });
  return dir;
}

function levelDbFile(dir: string, extension: '.log' | '.ldb'): string {
  const files = readdirSync(join(dir, 'dynamodb'))
    .filter((name) => name.endsWith(extension))
    .map((name) => join(dir, 'dynamodb', name));
  const largest = files.sort((a, b) => statSync(b).size - statSync(a).size)[0];
  assert.ok(largest && statSync(largest).size > 0, `no ${extension} file with data in ${dir}/dynamodb`);
  return largest;
}

function flipBits(path: string): void {
  const bytes = readFileSync(path);
  const at = Math.floor(bytes.length / 2);
  bytes[at] = (bytes[at] as number) ^ 0x41;
  writeFileSync(path, bytes);
}

/** Starts the VNFM on `dir` expecting it to refuse; gives its output. */
async function refusedStart(dir: string): Promise<string> {
  const outcome = await startVnfm({ dataDir: dir, env: ENV }).then(
    (vnfm) => {
      started.push(vnfm);
      return undefined;
    },
    (error: Error) => error.message,
  );
  assert.ok(outcome !== undefined, `the VNFM started on a damaged folder (${dir})`);
  const code = /VNFM exited with (\S+) before listening/.exec(outcome)?.[1];
  assert.ok(code !== undefined && code !== '0' && code !== 'null', `exit code ${code}:\n${outcome}`);
  assert.match(outcome, /VNFM refuses to start|npm start -- --repair/, outcome);
  return outcome;
}

async function repairedStart(dir: string): Promise<LocalVnfm> {
  const vnfm = await startVnfm({ dataDir: dir, env: ENV, args: ['--repair'] });
  started.push(vnfm);
  return vnfm;
}

/** The admin client the folder's credentials.json names gets a token and lists packages. */
async function adminCanList(vnfm: LocalVnfm): Promise<unknown[]> {
  await accessToken(adminCredentials(vnfm));
  const list = await client(vnfm)('GET', '/vnfpkgm/v1/vnf_packages');
  assert.equal(list.status, 200, list.text);
  return list.body as unknown[];
}

describe('a damaged LevelDB', () => {
  it('is named when a write-ahead log has bit flips, and --repair moves the database aside and starts empty', async () => {
    const dir = copyOfBase();
    const log = levelDbFile(dir, '.log');
    flipBits(log);
    assert.match(await refusedStart(dir), new RegExp(`${log.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} has a record whose checksum does not match`));
    const vnfm = await repairedStart(dir);
    assert.match(vnfm.output(), /moved aside to .*dynamodb\.damaged-.*records are lost/);
    assert.ok(
      readdirSync(dir).some((name) => name.startsWith('dynamodb.damaged-')),
      'the damaged database is kept',
    );
    assert.deepEqual(await adminCanList(vnfm), []);
  });

  it('is named when a table file has bit flips', async () => {
    const dir = copyOfBase();
    const table = levelDbFile(dir, '.ldb');
    flipBits(table);
    assert.match(await refusedStart(dir), new RegExp(`${table.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} has a block`));
  });

  it('is named when a table file is cut to half its size', async () => {
    const dir = copyOfBase();
    const table = levelDbFile(dir, '.ldb');
    truncateSync(table, Math.floor(statSync(table).size / 2));
    assert.match(await refusedStart(dir), new RegExp(`${table.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is \\d+ bytes where the MANIFEST records`));
  });

  it('is named when the dynamodb folder is deleted, and --repair starts with empty tables, saying so', async () => {
    const dir = copyOfBase();
    rmSync(join(dir, 'dynamodb'), { recursive: true });
    assert.match(await refusedStart(dir), new RegExp(`${join(dir, 'dynamodb')} is missing, but .*manifest.json records \\d+ items`));
    const vnfm = await repairedStart(dir);
    assert.match(vnfm.output(), /the tables start empty/);
    assert.deepEqual(await adminCanList(vnfm), []);
  });
});

describe('a deleted S3 folder', () => {
  it('names the ONBOARDED package whose files are gone, and --repair sets it back to CREATED saying what was lost', async () => {
    const dir = copyOfBase();
    rmSync(join(dir, 's3'), { recursive: true });
    const output = await refusedStart(dir);
    assert.match(output, new RegExp(`s3/[^ ]+/packages/${packageId} lacks package\\.zip`));
    const vnfm = await repairedStart(dir);
    assert.match(vnfm.output(), new RegExp(`VNF package ${packageId} is back to CREATED`));
    const pkg = await client(vnfm)('GET', `/vnfpkgm/v1/vnf_packages/${packageId}`);
    const body = pkg.body as { onboardingState: string; onboardingFailureDetails?: { detail: string } };
    assert.equal(body.onboardingState, 'CREATED');
    assert.match(body.onboardingFailureDetails?.detail ?? '', /package\.zip.*upload the package content again/);
    // Its list index keys moved with its states: a tenant's filtered list (read through an index)
    // finds it where it now is, and not where it was.
    const tenant = client(vnfm, {
      ...createLocalClient(vnfm.dataDir, { tenantId: 'default', scopes: ['vnfpkgm:read'] }),
      tokenUrl: adminCredentials(vnfm).tokenUrl,
    });
    const listed = async (filter: string) =>
      ((await tenant('GET', `/vnfpkgm/v1/vnf_packages?filter=${encodeURIComponent(filter)}`)).body as Array<{ id: string }>).map((p) => p.id);
    assert.ok((await listed('(eq,onboardingState,CREATED);(eq,operationalState,DISABLED)')).includes(packageId));
    assert.ok(!(await listed('(eq,onboardingState,ONBOARDED)')).includes(packageId));
  });
});

describe('damaged credential files', () => {
  for (const [name, file] of [['garbage in credentials.json', 'credentials.json']] as const) {
    it(`names ${name}, and --repair starts with a new one`, async () => {
      const dir = copyOfBase();
      writeFileSync(join(dir, file), '{"kty": "EC", \u0000 garbage');
      const output = await refusedStart(dir);
      assert.match(output, new RegExp(`${join(dir, file).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not valid JSON`));
      assert.doesNotMatch(output, /^SyntaxError/m);
      const vnfm = await repairedStart(dir);
      assert.match(vnfm.output(), /repair: /);
      assert.equal((await adminCanList(vnfm)).length, 1);
    });
  }

  it('names a missing auth/clients.json, and --repair creates a new admin client', async () => {
    const dir = copyOfBase();
    rmSync(join(dir, 'auth', 'clients.json'));
    assert.match(await refusedStart(dir), new RegExp(`${join(dir, 'auth', 'clients.json').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is missing`));
    const vnfm = await repairedStart(dir);
    assert.match(vnfm.output(), /a new admin client/);
    assert.ok(existsSync(join(dir, 'auth', 'clients.json')));
    assert.equal((await adminCanList(vnfm)).length, 1);
  });
});

// The operator's console driven in a real browser (Debian's Chromium through playwright-core), as
// an operator would use it against the local runtime: sign in with the client's credentials, upload
// the sample OpenStack package and see it ONBOARDED with its flavours (and a damaged one refused
// with the reason), create an instance,
// instantiate it with the simulator's external network, follow the operation to COMPLETED on its
// timeline, scale out (once failed by the simulator and rolled back from the timeline), heal a
// VNFC, acknowledge the alarm a stopped server raises, delete a subscription, terminate. A screenshot of each page goes to test-artifacts/console/.
// Without Chromium the test is skipped, unless VNFM_REQUIRE_BROWSER=1 (CI) makes that a failure.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildCsarFile, SAMPLE_PACKAGES } from '../support/csar-builder.ts';
import { startNfvoSink, type NfvoSink } from '../support/nfvo-sink.ts';
import { adminCredentials, client, localControl, localVims, ROOT, startVnfm, type LocalVnfm } from '../support/runtime.ts';

/** Chromium: $CHROMIUM_PATH, Debian's /usr/bin/chromium, or whichever `chromium` is on the PATH. */
function findChromium(): string | undefined {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  if (existsSync('/usr/bin/chromium')) return '/usr/bin/chromium';
  try {
    return execFileSync('which', ['chromium'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

const executablePath = findChromium();
const skip =
  executablePath || process.env.VNFM_REQUIRE_BROWSER === '1'
    ? false
    : 'no Chromium found (set CHROMIUM_PATH, or apt-get install chromium); VNFM_REQUIRE_BROWSER=1 makes this a failure';
const SHOTS = join(ROOT, 'test-artifacts', 'console');
/** An LCM operation on the simulators takes seconds; a loaded machine may take much longer. */
const OPERATION_TIMEOUT = 240_000;
const EXT_VL = [
  {
    id: 'ext-public',
    resourceId: 'public',
    extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { VDU1_CP1_1: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }],
  },
];

let vnfm: LocalVnfm;
let browser: Browser;
let page: Page;
let csar: string;
let broken: string;
let sink: NfvoSink;
const problems: string[] = [];

before(async () => {
  if (skip) return;
  assert.ok(executablePath, 'VNFM_REQUIRE_BROWSER=1 and no Chromium found (CHROMIUM_PATH, /usr/bin/chromium, chromium on the PATH)');
  mkdirSync(SHOTS, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'vnfm-console-'));
  csar = (await buildCsarFile('openstack-vnf-v1', join(work, 'openstack-vnf-v1.zip'))).path;
  // A file changed after the manifest's digests were taken: onboarding refuses it.
  broken = (
    await buildCsarFile('k8s-cnf-v1', join(work, 'broken.zip'), {
      mutateAfterManifest: (files) => files.set('Files/kubernetes/deployment.yaml', Buffer.from('changed\n')),
    })
  ).path;
  vnfm = await startVnfm();
  sink = await startNfvoSink();
  browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  // Auto-waiting locators wait this long for the page (a busy two-core machine runs three test files at once).
  page.setDefaultTimeout(120_000);
  // What the page logs as an error (a CSP violation, an exception) fails the test at the end.
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
});

after(async () => {
  await browser?.close();
  await vnfm?.stop();
  await sink?.close();
});

const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`) });

/** Waits on the operation page until the operation's heading shows `state`. */
async function operationReaches(operation: string, state: string): Promise<void> {
  await page.getByRole('heading', { name: new RegExp(`^${operation} ${state}$`) }).waitFor({ timeout: OPERATION_TIMEOUT });
  await page.getByRole('list').filter({ hasText: state }).first().waitFor();
}

it('signs in, onboards a package, and instantiates, scales and terminates a VNF through the console', { skip, timeout: 900_000 }, async () => {
  try {
    await operatorSession();
  } catch (error) {
    // What the page showed when a step gave up, beside the others.
    await shot('failure').catch(() => {});
    throw error;
  }
});

async function operatorSession(): Promise<void> {
  const { clientId, clientSecret } = adminCredentials(vnfm);
  const vnfdId = SAMPLE_PACKAGES['openstack-vnf-v1'].vnfdId;

  // A wrong secret is refused plainly; the right one signs in (the client credentials grant).
  await page.goto(`${vnfm.url}/console/`);
  await page.getByLabel('Client ID').fill(clientId);
  await page.getByLabel('Client secret').fill('not-the-secret');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page
    .getByRole('alert')
    .filter({ hasText: /^Error 401: / })
    .waitFor();
  problems.length = 0; // the browser logs the 401 itself
  await page.getByLabel('Client secret').fill(clientSecret);
  await shot('00-sign-in');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  await page.getByRole('table', { name: 'VIMs' }).getByText('local-openstack').first().waitFor();

  // Upload the package and see it onboarded, with its VNFD's flavours.
  await page.getByRole('link', { name: 'Packages' }).click();
  await page.getByLabel('VNF package file', { exact: true }).setInputFiles(csar);
  const row = page.getByRole('row').filter({ hasText: vnfdId });
  await row.getByText('ONBOARDED').waitFor({ timeout: OPERATION_TIMEOUT });
  // A damaged package: its onboarding failure, with the file it names, is in the list.
  await page.getByLabel('VNF package file', { exact: true }).setInputFiles(broken);
  await page
    .getByRole('alert')
    .filter({ hasText: /^Onboarding of package \S+ failed: .*Files\/kubernetes\/deployment\.yaml/ })
    .waitFor();
  await page
    .getByRole('row')
    .filter({ hasText: 'CREATED' })
    .getByText(/Files\/kubernetes\/deployment\.yaml/)
    .waitFor();
  await shot('01-packages');
  await row.getByRole('link').click();
  const flavours = page.getByRole('table', { name: 'Deployment flavours (from the VNFD)' });
  await flavours.getByRole('row').filter({ hasText: 'simple' }).filter({ hasText: 'instantiation_level_1' }).waitFor();
  await shot('02-package');

  // Create an instance of it.
  await page.getByRole('button', { name: 'Create instance' }).click();
  const create = page.getByRole('dialog', { name: 'Create a VNF instance' });
  await create.getByLabel('Instance name').fill('console-vnf');
  await create.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('heading', { name: 'Instance console-vnf' }).waitFor();
  await page.getByText('NOT_INSTANTIATED', { exact: true }).waitFor();

  // Instantiate with the simulator's external network, and follow the operation.
  await page.getByRole('button', { name: 'Instantiate' }).click();
  const instantiate = page.getByRole('dialog', { name: 'Instantiate' });
  await instantiate.getByLabel('Deployment flavour').selectOption('simple');
  await instantiate.getByLabel('Instantiation level').selectOption('instantiation_level_1');
  await instantiate.getByLabel('External virtual links (JSON)').fill(JSON.stringify(EXT_VL));
  await shot('03-instantiate');
  await instantiate.getByRole('button', { name: 'Instantiate' }).click();
  await operationReaches('INSTANTIATE', 'COMPLETED');
  await shot('04-operation');

  // The instance now has its VNFCs, with the VIM's resource ids, and a scale status.
  await page.getByRole('link', { name: /^[0-9a-f-]{36}$/ }).click();
  await page.getByRole('heading', { name: 'Instance console-vnf' }).waitFor();
  await page.getByRole('table', { name: 'VNFCs of VDU1' }).waitFor();
  await page
    .getByRole('table', { name: 'Scale status' })
    .getByRole('row')
    .filter({ hasText: 'VDU1_scale' })
    .filter({ hasText: /^VDU1_scale0/ })
    .waitFor();
  await shot('05-instance');

  // A scale the VIM fails ends FAILED_TEMP, with its error, and is rolled back from the timeline.
  const fault = await fetch(`${localVims(vnfm).openstack.control}faults`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ kind: 'stack-update-fail', reason: 'injected scale failure', count: 1 }),
  });
  assert.ok(fault.ok);
  await page.getByRole('button', { name: 'Scale' }).click();
  await page.getByRole('dialog', { name: 'Scale' }).getByRole('button', { name: 'Scale' }).click();
  await operationReaches('SCALE', 'FAILED_TEMP');
  await page.getByRole('alert').filter({ hasText: 'injected scale failure' }).waitFor();
  await page.getByRole('button', { name: 'Retry' }).waitFor();
  await shot('06-failed-operation');
  await page.getByRole('button', { name: 'Roll back' }).click();
  await page.getByRole('dialog', { name: 'Roll back' }).getByRole('button', { name: 'Roll back' }).click();
  await operationReaches('SCALE', 'ROLLED_BACK');
  await page.getByRole('link', { name: /^[0-9a-f-]{36}$/ }).click();

  // Scale out one step.
  await page.getByRole('button', { name: 'Scale' }).click();
  const scale = page.getByRole('dialog', { name: 'Scale' });
  await scale.getByLabel('Aspect').selectOption('VDU1_scale');
  await scale.getByLabel('Direction').selectOption('SCALE_OUT');
  await scale.getByRole('button', { name: 'Scale' }).click();
  await operationReaches('SCALE', 'COMPLETED');
  await page.getByRole('link', { name: /^[0-9a-f-]{36}$/ }).click();
  await page
    .getByRole('table', { name: 'Scale status' })
    .getByRole('row')
    .filter({ hasText: /^VDU1_scale1/ })
    .waitFor();

  // Heal one VNFC of VDU1: the VIM gives it a new server.
  const vdu1 = page.getByRole('table', { name: 'VNFCs of VDU1' });
  const vnfcId = (await vdu1.getByRole('row').nth(1).getByRole('cell').first().textContent()) ?? '';
  await page.getByRole('button', { name: 'Heal' }).click();
  const heal = page.getByRole('dialog', { name: 'Heal' });
  await heal.getByLabel(new RegExp(`VDU1 ${vnfcId}`)).check();
  await heal.getByLabel('Cause').fill('console test');
  await heal.getByRole('button', { name: 'Heal' }).click();
  await operationReaches('HEAL', 'COMPLETED');
  await page.getByRole('link', { name: /^[0-9a-f-]{36}$/ }).click();
  await page.getByRole('table', { name: 'VNFCs of VDU1' }).waitFor();

  // A server the VIM reports SHUTOFF: the health sweep raises an alarm, which the overview counts and the operator acknowledges.
  const subscribed = await client(vnfm)('POST', '/vnffm/v1/subscriptions', { version: '1.5.0', body: { callbackUri: `${sink.url}/fm` } });
  assert.equal(subscribed.status, 201, subscribed.text);
  const server = (await vdu1.getByRole('row').nth(1).getByRole('cell').nth(1).textContent()) ?? '';
  const stopped = await fetch(`${localVims(vnfm).openstack.control}servers/${server}/status`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ status: 'SHUTOFF' }),
  });
  assert.ok(stopped.ok, await stopped.text());
  const sweep = await localControl(vnfm, 'POST', '/_local/schedules/VnfHealthMonitorFunction/run');
  assert.equal(sweep.status, 200, await sweep.text());
  await page.getByRole('link', { name: 'Overview' }).click();
  await page.getByRole('link', { name: /^1 active alarms$/ }).waitFor();
  await page.getByRole('table', { name: 'Active alarms' }).getByRole('row').filter({ hasText: 'MAJOR' }).waitFor();
  await shot('07-overview');
  await page.getByRole('navigation').getByRole('link', { name: 'Alarms' }).click();
  await page.getByRole('button', { name: /^Acknowledge alarm / }).click();
  await page.getByRole('table', { name: 'Alarms' }).getByText('ACKNOWLEDGED', { exact: true }).waitFor();
  await shot('08-alarms');

  // The FM subscription is listed, and deleted after a confirmation.
  await page.getByRole('navigation').getByRole('link', { name: 'Subscriptions' }).click();
  const fm = page.getByRole('table', { name: 'VNF faults notifications' });
  await fm
    .getByRole('row')
    .filter({ hasText: `${sink.url}/fm` })
    .getByRole('button', { name: /^Delete subscription / })
    .click();
  await page.getByRole('dialog', { name: 'Delete subscription' }).getByRole('button', { name: 'Delete' }).click();
  await fm.getByText('No subscription').waitFor();
  await page.getByRole('navigation').getByRole('link', { name: 'Instances' }).click();
  await page.getByRole('link', { name: 'console-vnf' }).click();

  // Terminate.
  await page.getByRole('button', { name: 'Terminate' }).click();
  await page.getByRole('dialog', { name: 'Terminate' }).getByRole('button', { name: 'Terminate' }).click();
  await operationReaches('TERMINATE', 'COMPLETED');

  // The operations list: each one as it ended; and the VIMs.
  await page.getByRole('link', { name: 'Operations' }).click();
  const operations = page.getByRole('table', { name: /LCM operation occurrences/ });
  await operations.getByRole('row').filter({ hasText: 'TERMINATE' }).getByText('COMPLETED').waitFor();
  await operations.getByRole('row').filter({ hasText: 'INSTANTIATE' }).getByText('COMPLETED').waitFor();
  await operations.getByRole('row').filter({ hasText: 'SCALE' }).getByText('ROLLED_BACK').waitFor();
  await operations.getByRole('row').filter({ hasText: 'SCALE' }).getByText('COMPLETED').waitFor();
  await shot('09-operations');
  await page.getByRole('navigation').getByRole('link', { name: 'VIMs' }).click();
  await page.getByRole('table', { name: 'VIMs' }).getByText('local-openstack').first().waitFor();
  await shot('10-vims');

  // Signing out forgets the token.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('Client ID').waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.length), 0);
  assert.deepEqual(problems, [], 'the page logged no error');
}

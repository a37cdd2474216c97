// The functions as they deploy: every function bundled the way `sam build` does it (its
// Metadata.BuildProperties: ES module builds of the packages, the SDK's other credential sources
// left out) and the local runtime run on those bundles instead of the TypeScript sources. A CNF and
// a VNF package onboard, instantiate and terminate through the API, so the bundled AWS SDK clients
// (DynamoDB, S3, SQS, Step Functions, Lambda, Secrets Manager) and both VIM drivers do real work.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRuntime, type Runtime } from '#local/runtime.ts';
import { startLocalVims, type LocalVims } from '#local/vims.ts';
import { buildCsar, SAMPLE_PACKAGES, type SamplePackageName } from '../support/csar-builder.ts';
import { client, newDataDir, ROOT, settle, type LocalVnfm } from '../support/runtime.ts';
import { samBuild, samFunctions } from '../support/sam-build.ts';

let bundles: string;
let dataDir: string;
let runtime: Runtime;
let vims: LocalVims;
let call: ReturnType<typeof client>;
let vnfm: LocalVnfm;

before(async () => {
  // The template beside the bundles: each function's code is its bundle, the state machines stay where they are.
  bundles = mkdtempSync(join(tmpdir(), 'vnfm-bundles-'));
  let template = readFileSync(join(ROOT, 'template.yaml'), 'utf8').replaceAll(
    'DefinitionUri: statemachines/',
    `DefinitionUri: ${join(ROOT, 'statemachines')}/`,
  );
  for (const fn of samFunctions()) {
    const { js } = await samBuild(fn);
    writeFileSync(join(bundles, `${fn.logicalId}.mjs`), js.contents);
    const entry = `          - ${fn.props.EntryPoints[0]}\n`;
    assert.ok(template.includes(entry), `${fn.logicalId}: its entry point is listed as ${entry.trim()}`);
    template = template.replace(entry, `          - ${fn.logicalId}.mjs\n`);
  }
  writeFileSync(join(bundles, 'template.yaml'), template);
  dataDir = newDataDir();
  runtime = await startRuntime({ dataDir, port: 0, templatePath: join(bundles, 'template.yaml'), waitScale: 0.01, deferResume: true, log: () => {} });
  vims = await startLocalVims(dataDir, { timeScale: 0.01, log: () => {} });
  await runtime.resume();
  vnfm = { url: runtime.url, dataDir } as LocalVnfm;
  call = client(vnfm);
});

after(async () => {
  await runtime?.close();
  await vims?.close();
  rmSync(bundles, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

async function lifecycle(sample: SamplePackageName, instantiate: Record<string, unknown>): Promise<void> {
  const pkg = ((await call('POST', '/vnfpkgm/v1/vnf_packages', { body: {} })).body as { id: string }).id;
  const upload = await call('PUT', `/vnfpkgm/v1/vnf_packages/${pkg}/package_content`, {
    raw: await buildCsar(sample),
    headers: { 'Content-Type': 'application/zip' },
  });
  assert.equal(upload.status, 202, upload.text);
  await settle(vnfm);
  const onboarded = (await call('GET', `/vnfpkgm/v1/vnf_packages/${pkg}`)).body as { onboardingState: string; vnfdId: string };
  assert.equal(onboarded.onboardingState, 'ONBOARDED');
  assert.equal(onboarded.vnfdId, SAMPLE_PACKAGES[sample].vnfdId);

  const created = await call('POST', '/vnflcm/v2/vnf_instances', { body: { vnfdId: onboarded.vnfdId, vnfInstanceName: sample } });
  assert.equal(created.status, 201, created.text);
  const id = (created.body as { id: string }).id;
  for (const [task, body] of [
    ['instantiate', instantiate],
    ['terminate', { terminationType: 'FORCEFUL' }],
  ] as const) {
    const started = await call('POST', `/vnflcm/v2/vnf_instances/${id}/${task}`, { body });
    assert.equal(started.status, 202, started.text);
    await settle(vnfm);
    const occ = (await call('GET', new URL(started.headers.get('location') ?? '').pathname)).body as { operationState: string; error?: unknown };
    assert.equal(occ.operationState, 'COMPLETED', JSON.stringify(occ.error));
    if (task === 'instantiate') {
      const shown = (await call('GET', `/vnflcm/v2/vnf_instances/${id}`)).body as { instantiatedVnfInfo?: { vnfcResourceInfo?: unknown[] } };
      assert.ok((shown.instantiatedVnfInfo?.vnfcResourceInfo?.length ?? 0) > 0, 'the instance has VNFCs');
    }
  }
  const terminated = (await call('GET', `/vnflcm/v2/vnf_instances/${id}`)).body as { instantiationState: string };
  assert.equal(terminated.instantiationState, 'NOT_INSTANTIATED');
}

it('the bundled functions onboard, instantiate and terminate a CNF on the Kubernetes simulator', async () => {
  await lifecycle('k8s-cnf-v1', {
    flavourId: 'simple',
    additionalParams: { 'lcm-kubernetes-def-files': ['Files/kubernetes/deployment.yaml', 'Files/kubernetes/service.yaml'], namespace: 'bundles' },
  });
});

it('the bundled functions onboard, instantiate (with its LCM scripts) and terminate a VNF on the OpenStack simulator', async () => {
  await lifecycle('openstack-vnf-v1', {
    flavourId: 'simple',
    extVirtualLinks: [
      { id: 'ext', resourceId: 'public', extCps: [{ cpdId: 'VDU1_CP1', cpConfig: { c: { cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET' }] } } }] },
    ],
  });
});

// Every function in template.yaml has a sample event in events/ (usable with `sam local invoke -e`),
// and its handler answers that event as expected when invoked directly on the local stand-ins.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { applyGlobals, loadTemplate } from '#local/template.ts';
import { startRuntime, type Runtime } from '#local/runtime.ts';
import { newDataDir, ROOT } from '../support/runtime.ts';

const template = loadTemplate(join(ROOT, 'template.yaml'));
const functions = Object.entries(applyGlobals(template)).map(([logicalId]) => {
  const entry = (template.Resources[logicalId]!.Metadata as { BuildProperties: { EntryPoints: string[] } }).BuildProperties.EntryPoints[0] as string;
  return { logicalId, entry, event: join(ROOT, 'events', `${basename(entry, '.ts')}.json`) };
});

let runtime: Runtime;
before(async () => {
  runtime = await startRuntime({ dataDir: newDataDir(), port: 0, templatePath: join(ROOT, 'template.yaml'), log: () => undefined });
});
after(async () => {
  await runtime.close();
});

const context = { functionName: 'test', awsRequestId: 'r', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

async function invoke(entry: string, event: unknown): Promise<unknown> {
  const module = (await import(pathToFileURL(join(ROOT, entry)).href)) as { handler: (event: unknown, context: Context) => Promise<unknown> };
  return module.handler(event, context);
}

const expectations: Record<string, (invocation: Promise<unknown>) => Promise<void>> = {
  ApiVersionsFunction: async (invocation) => {
    const result = (await invocation) as { statusCode: number; body: string };
    assert.equal(result.statusCode, 200);
    assert.equal(JSON.parse(result.body).uriPrefix, '/vnflcm/v2');
  },
  ConsoleFunction: async (invocation) => {
    const result = (await invocation) as { statusCode: number; body: string; headers: Record<string, string> };
    assert.equal(result.statusCode, 200);
    assert.equal(result.headers['Content-Type'], 'text/html; charset=utf-8');
    assert.match(result.body, /<div id="app">/);
  },
  OAuth2Function: async (invocation) => {
    // A client the clients table does not hold: refused as RFC 6749 5.2 says.
    const result = (await invocation) as { statusCode: number; body: string; headers: Record<string, string> };
    assert.equal(result.statusCode, 401);
    assert.equal(JSON.parse(result.body).error, 'invalid_client');
    assert.equal(result.headers['Cache-Control'], 'no-store');
  },
  VnfInstancesFunction: async (invocation) => {
    const result = (await invocation) as { statusCode: number; body: string };
    assert.equal(result.statusCode, 200);
    assert.ok(Array.isArray(JSON.parse(result.body)));
  },
  VnfLcmOpOccsFunction: async (invocation) => {
    const result = (await invocation) as { statusCode: number; body: string; headers: Record<string, string> };
    assert.equal(result.statusCode, 404);
    assert.equal(result.headers['Content-Type'], 'application/problem+json');
  },
  OpOccTransitionFunction: async (invocation) => {
    await assert.rejects(invocation, { name: 'NotFoundError' });
  },
  ModifyInfoFunction: async (invocation) => {
    await assert.rejects(invocation, { name: 'NotFoundError' });
  },
  VnfPackagesFunction: async (invocation) => {
    const result = (await invocation) as { statusCode: number; body: string };
    assert.equal(result.statusCode, 200);
    assert.deepEqual(JSON.parse(result.body), []);
  },
  // The package does not exist: the download is refused and recorded, nothing thrown.
  PackageFetchFunction: async (invocation) => {
    assert.deepEqual(await invocation, { packageId: '0f6b7c1e-6f0e-4d3b-9d59-2f1c2b3a4d5e', bytes: -1 });
  },
  VnfLcmOperationsFunction: async (invocation) => {
    const result = (await invocation) as { statusCode: number };
    assert.equal(result.statusCode, 404);
  },
  LcmStepFunction: async (invocation) => {
    await assert.rejects(invocation, { name: 'NotFoundError' });
  },
  // The poll steps run the same code on a smaller function.
  LcmPollFunction: async (invocation) => {
    await assert.rejects(invocation, { name: 'NotFoundError' });
  },
  VnfSnapshotsFunction: async (invocation) => {
    const result = (await invocation) as { statusCode: number; body: string };
    assert.equal(result.statusCode, 200, result.body);
    assert.deepEqual(JSON.parse(result.body), []);
  },
  // The sample hook reads its input on stdin and answers one JSON object on stdout.
  ScriptRunnerFunction: async (invocation) => {
    const result = (await invocation) as { ok: boolean; output?: unknown; stderr: string };
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.deepEqual(result.output, { ok: true, operation: 'instantiate_start', vnfInstanceId: '7b1e4b2c-3f1a-4c5d-9e8f-0a1b2c3d4e5f' });
    assert.match(result.stderr, /instantiate_start for 7b1e4b2c/);
  },
  LcmRecoveryFunction: async (invocation) => {
    assert.deepEqual(await invocation, { result: 'op occ gone' });
  },
  // No subscription in the (fresh) tenant: nothing to deliver for the change, and the delivery's subscription is gone.
  NotificationDeliveryFunction: async (invocation) => {
    assert.deepEqual(await invocation, { batchItemFailures: [] });
  },
  SubscriptionsFunction: async (invocation) => {
    const result = (await invocation) as { statusCode: number; body: string };
    assert.equal(result.statusCode, 200);
    assert.deepEqual(JSON.parse(result.body), []);
  },
  // A fresh runtime has no VIMs (the simulators are registered by npm start's entry point, not the runtime).
  VimsFunction: async (invocation) => {
    const result = (await invocation) as { statusCode: number; body: string };
    assert.equal(result.statusCode, 200);
    assert.deepEqual(JSON.parse(result.body), []);
  },
  VimMonitorFunction: async (invocation) => {
    assert.deepEqual(await invocation, { checked: 0, reachable: 0, unreachable: 0, changed: [] });
  },
  VnfFmFunction: async (invocation) => {
    const result = (await invocation) as { statusCode: number; body: string; headers: Record<string, string> };
    assert.equal(result.statusCode, 200, result.body);
    assert.equal(result.headers.Version, '1.5.0');
    assert.deepEqual(JSON.parse(result.body), []);
  },
  // The alert names an instance that does not exist: 404 ProblemDetails, nothing raised or healed.
  VnfAlertsFunction: async (invocation) => {
    const result = (await invocation) as { statusCode: number; body: string; headers: Record<string, string> };
    assert.equal(result.statusCode, 404, result.body);
    assert.equal(result.headers['Content-Type'], 'application/problem+json');
  },
  VnfHealthMonitorFunction: async (invocation) => {
    const report = (await invocation) as { instances: number; vims: number; raised: number; cleared: number; healsStarted: string[] };
    assert.deepEqual(
      { instances: report.instances, vims: report.vims, raised: report.raised, cleared: report.cleared, healsStarted: report.healsStarted },
      { instances: 0, vims: 0, raised: 0, cleared: 0, healsStarted: [] },
    );
  },
  VnfPmFunction: async (invocation) => {
    const result = (await invocation) as { statusCode: number; body: string; headers: Record<string, string> };
    assert.equal(result.statusCode, 200, result.body);
    assert.equal(result.headers.Version, '2.2.0');
    assert.deepEqual(JSON.parse(result.body), []);
  },
  // No PM job and no threshold: two empty reads, nothing collected.
  VnfPmCollectorFunction: async (invocation) => {
    const report = (await invocation) as { jobs: number; thresholds: number; collected: number; reports: string[] };
    assert.deepEqual(
      { jobs: report.jobs, thresholds: report.thresholds, collected: report.collected, reports: report.reports },
      { jobs: 0, thresholds: 0, collected: 0, reports: [] },
    );
  },
  PackageOnboardingFunction: async (invocation) => {
    assert.deepEqual(await invocation, { onboarded: { '0f6b7c1e-6f0e-4d3b-9d59-2f1c2b3a4d5e': 'IGNORED' } });
  },
};

it('has a sample event for every function', () => {
  for (const fn of functions) assert.ok(existsSync(fn.event), `${fn.logicalId}: ${fn.event} is missing`);
  assert.deepEqual(Object.keys(expectations).sort(), functions.map((fn) => fn.logicalId).sort());
});

for (const fn of functions) {
  it(`${fn.logicalId} handles events/${basename(fn.event)}`, async () => {
    const expectation = expectations[fn.logicalId];
    assert.ok(expectation, `no expectation for ${fn.logicalId}`);
    await expectation(invoke(fn.entry, JSON.parse(readFileSync(fn.event, 'utf8'))));
  });
}

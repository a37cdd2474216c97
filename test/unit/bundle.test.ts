// Every function in template.yaml bundles with esbuild the way `sam build` does it (its
// Metadata.BuildProperties), so what runs locally is what deploys; each stays within 1 MB (1 MiB,
// 1,048,576 bytes, the unit of Lambda's own package limits) of JavaScript and ships no source map (`BENCH_ONLY=bundles npm run bench` shows sizes and init times).
import { isBuiltin } from 'node:module';
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { samBuild, samFunctions } from '../support/sam-build.ts';

const MAX_BUNDLE_BYTES = 1_048_576;
/**
 * Functions allowed over 1 MB, each held to a ceiling just above its size so that it cannot grow,
 * and to be taken off once it fits. None today: PackageOnboarding, the last, came down from 1.30 MB
 * to 0.90 MB when its CMS signature check moved from pkijs and asn1js (390 kB) to node:crypto and
 * a small DER reader (lib/packages/cms.ts).
 */
const OVER_BUDGET: Record<string, number> = {};
/**
 * Functions without Powertools Tracer (lib/trace.ts, 124-126 kB with the X-Ray SDK): no room for it
 * under 1 MB, or (ScriptRunner) nothing of the product. README "Traces" lists them.
 */
const UNTRACED = new Set([
  'VnfLcmOperationsFunction',
  'VnfAlertsFunction',
  'LcmStepFunction',
  'LcmPollFunction',
  'VnfPmFunction',
  'VnfPmCollectorFunction',
  'ScriptRunnerFunction',
  'ConsoleFunction',
]);

for (const fn of samFunctions()) {
  it(`${fn.logicalId} bundles as sam build does, within 1 MB and without a source map`, async () => {
    const { result, files, js } = await samBuild(fn);
    assert.deepEqual(result.errors, []);
    const inputs = Object.keys(result.metafile.inputs);
    // No function drags in the local runtime or its stand-ins.
    assert.ok(
      !inputs.some((input) => input.startsWith('local/') || input.includes('node_modules/dynalite') || input.includes('node_modules/s3rver')),
      inputs.filter((i) => i.startsWith('local/')).join(','),
    );
    // What the bundle leaves out is Node's own, or (the SDK's other credential sources) imported
    // only when it runs: loading the function needs nothing beside it.
    const output = Object.values(result.metafile.outputs).find((entry) => entry.entryPoint !== undefined);
    for (const imported of output?.imports.filter((entry) => entry.external && !isBuiltin(entry.path)) ?? []) {
      assert.equal(imported.kind, 'dynamic-import', `${imported.path} is left out of the bundle but imported when the function loads`);
    }
    assert.equal(
      inputs.some((input) => input.endsWith('node_modules/@aws-lambda-powertools/tracer/lib/esm/Tracer.js')),
      !UNTRACED.has(fn.logicalId),
      `${fn.logicalId} ${UNTRACED.has(fn.logicalId) ? 'carries the Tracer, which README "Traces" says it has no room for' : 'is not traced (its entry point imports #lib/trace.ts)'}`,
    );
    const handler = fn.handler.split('.').pop();
    assert.match(js.text, new RegExp(`export\\s*\\{[^}]*\\b${handler}\\b`));
    assert.deepEqual(
      files.filter((file) => file.path.endsWith('.map')).map((file) => file.path),
      [],
      'no source map in the deployed zip',
    );
    assert.doesNotMatch(js.text, /sourceMappingURL/, 'no reference to a source map');
    const bytes = js.contents.byteLength;
    const limit = OVER_BUDGET[fn.logicalId] ?? MAX_BUNDLE_BYTES;
    assert.ok(bytes <= limit, `${fn.logicalId} is ${bytes} bytes of JavaScript (limit ${limit})`);
    if (OVER_BUDGET[fn.logicalId]) assert.ok(bytes > MAX_BUNDLE_BYTES, `${fn.logicalId} fits in 1 MB now (${bytes} bytes): take it off OVER_BUDGET`);
  });
}

// Every function in template.yaml bundles with esbuild the way `sam build` does it (its
// Metadata.BuildProperties), so what runs locally is what deploys.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { build } from 'esbuild';
import { loadTemplate } from '#local/template.ts';
import { ROOT } from '../support/runtime.ts';

const template = loadTemplate(join(ROOT, 'template.yaml'));

for (const [logicalId, resource] of Object.entries(template.Resources)) {
  if (resource.Type !== 'AWS::Serverless::Function') continue;
  it(`${logicalId} bundles as sam build does`, async () => {
    const props = (resource.Metadata as { BuildProperties: { EntryPoints: string[]; Target: string; Format: 'esm'; Banner: string[] } }).BuildProperties;
    const result = await build({
      absWorkingDir: ROOT,
      entryPoints: props.EntryPoints,
      bundle: true,
      platform: 'node',
      format: props.Format,
      target: props.Target,
      banner: { js: (props.Banner[0] ?? '').replace(/^js=/, '') },
      write: false,
      logLevel: 'silent',
      metafile: true,
    });
    assert.deepEqual(result.errors, []);
    const inputs = Object.keys(result.metafile.inputs);
    // No function drags in the local runtime or its stand-ins.
    assert.ok(
      !inputs.some((input) => input.startsWith('local/') || input.includes('node_modules/dynalite') || input.includes('node_modules/s3rver')),
      inputs.filter((i) => i.startsWith('local/')).join(','),
    );
    const handler = String((resource.Properties as { Handler: string }).Handler)
      .split('.')
      .pop();
    assert.match(result.outputFiles[0]?.text ?? '', new RegExp(`export\\s*\\{[^}]*\\b${handler}\\b`));
  });
}

// The SOL001 type definitions embedded in lib/packages/sol001/types.ts are exactly the vendored
// YAML files (regenerate with scripts/generate-sol001.ts after changing those).
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { generatedModule, SOL001_DIR, SOL001_FILES } from '../../../scripts/generate-sol001.ts';
import { SHIPPED_SOL001 } from '#lib/packages/sol001/types.ts';

it('embeds the vendored SOL001 files unchanged', () => {
  assert.equal(readFileSync(`${SOL001_DIR}types.ts`, 'utf8'), generatedModule());
  for (const name of SOL001_FILES) assert.equal(SHIPPED_SOL001[name], readFileSync(`${SOL001_DIR}${name}`, 'utf8'));
});

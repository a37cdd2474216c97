// The layering the README's architecture section draws, held by the import graph: no import loops
// in lib/, no shared service importing up into the LCM engine, no two lib/ areas importing each
// other, and only functions/ (and the benchmark) reaching the composition root.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { importGraph, importLoops, mutualAreas, upwardImports } from '../../scripts/import-graph.ts';

const graph = importGraph();
const lib = new Map([...graph].filter(([module]) => module.startsWith('lib/')));

describe('the import graph', () => {
  it("finds the product's modules and their imports", () => {
    assert.ok(lib.size > 50, `${lib.size} modules in lib/`);
    assert.ok(graph.get('lib/deps.ts')?.has('lib/ports.ts'), 'lib/deps.ts imports lib/ports.ts');
  });

  it('has no import loops in lib/', () => {
    assert.deepEqual(importLoops(lib), []);
  });

  it('has no imports from a shared service up into lib/lcm', () => {
    assert.deepEqual(upwardImports(graph), []);
  });

  it('has no two lib/ areas importing each other', () => {
    assert.deepEqual(mutualAreas(graph), []);
  });

  it('reaches the composition root only from functions/', () => {
    const importers = [...graph].filter(([, edges]) => edges.has('lib/deps.ts')).map(([module]) => module);
    assert.deepEqual(
      importers.filter((module) => !module.startsWith('functions/')),
      [],
    );
  });

  it('detects a loop and an upward import when there is one', () => {
    const looped = new Map([
      ['lib/a/x.ts', new Set(['lib/b/y.ts'])],
      ['lib/b/y.ts', new Set(['lib/a/x.ts'])],
    ]);
    assert.equal(importLoops(looped).length, 1);
    assert.deepEqual(
      upwardImports(
        new Map([
          ['lib/store/s.ts', new Set(['lib/lcm/e.ts'])],
          ['lib/lcm/e.ts', new Set<string>()],
        ]),
      ),
      ['lib/store/s.ts -> lib/lcm/e.ts'],
    );
  });
});

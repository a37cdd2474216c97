// The import graph of the product's own modules (lib/, functions/, local/): how many modules and
// edges, the import loops (strongly connected components of more than one module), and the
// imports that go against the layering (a module of a shared layer importing up into lib/lcm).
// `npm run graph` prints it; test/unit/architecture.test.ts holds the product to it.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ALIASES: Record<string, string> = { '#lib/': 'lib/', '#functions/': 'functions/', '#local/': 'local/' };
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return sources(path);
    return /\.ts$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Module (path from the repository root) -> the product modules it imports. */
export function importGraph(dirs: readonly string[] = ['lib', 'functions', 'local']): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of dirs.flatMap(sources)) {
    const edges = new Set<string>();
    for (const match of readFileSync(join(ROOT, file), 'utf8').matchAll(IMPORT)) {
      const spec = match[1] ?? match[2] ?? '';
      const alias = Object.keys(ALIASES).find((prefix) => spec.startsWith(prefix));
      const target = alias ? ALIASES[alias] + spec.slice(alias.length) : spec.startsWith('.') ? relative(ROOT, resolve(ROOT, dirname(file), spec)) : undefined;
      if (target) edges.add(target);
    }
    graph.set(file, edges);
  }
  for (const edges of graph.values()) for (const target of [...edges]) if (!graph.has(target)) edges.delete(target);
  return graph;
}

/** Strongly connected components of more than one module (Tarjan): each is an import loop. */
export function importLoops(graph: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(node, Math.min(low.get(node)!, index.get(target)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) loops.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return loops;
}

const areaOf = (module: string): string => module.split('/').slice(0, 2).join('/').replace(/\.ts$/, '');

/**
 * The lib/ areas allowed to import lib/lcm: the engine itself, fault management (auto-heal and
 * auto-scale start LCM operations, so it sits above the engine) and the composition root. Every
 * other area (packages, VIM drivers and connections, notify, store, auth, sol, scripts, secrets) is
 * a service the engine uses and must not depend on it.
 */
const ABOVE_LCM = new Set(['lib/lcm', 'lib/fm', 'lib/deps']);

/** Imports into lib/lcm from lib/ areas below it: shared services depending on the engine. */
export function upwardImports(graph: Map<string, Set<string>>): string[] {
  return [...graph].flatMap(([from, edges]) =>
    from.startsWith('lib/') && !ABOVE_LCM.has(areaOf(from)) ? [...edges].filter((to) => areaOf(to) === 'lib/lcm').map((to) => `${from} -> ${to}`) : [],
  );
}

/** Pairs of lib/ areas that import each other. */
export function mutualAreas(graph: Map<string, Set<string>>): string[] {
  const pairs = new Set<string>();
  for (const [from, edges] of graph) {
    for (const to of edges) {
      const [a, b] = [areaOf(from), areaOf(to)];
      if (a === b || !a.startsWith('lib/') || !b.startsWith('lib/')) continue;
      const back = [...graph].some(([other, targets]) => areaOf(other) === b && [...targets].some((target) => areaOf(target) === a));
      if (back) pairs.add([a, b].sort().join(' <-> '));
    }
  }
  return [...pairs].sort();
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const graph = importGraph();
  const lib = new Map([...graph].filter(([module]) => module.startsWith('lib/')));
  const loops = importLoops(lib);
  const upward = upwardImports(graph);
  const mutual = mutualAreas(graph);
  const edges = [...lib.values()].reduce((sum, targets) => sum + targets.size, 0);
  console.log(`lib/: ${lib.size} modules, ${edges} imports`);
  console.log(`import loops in lib/: ${loops.length}${loops.map((loop) => `\n  ${loop.join(' -> ')}`).join('')}`);
  console.log(`imports up into lib/lcm from other lib/ areas: ${upward.length}${upward.map((edge) => `\n  ${edge}`).join('')}`);
  console.log(`lib/ areas importing each other: ${mutual.length}${mutual.map((pair) => `\n  ${pair}`).join('')}`);
}

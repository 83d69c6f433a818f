#!/usr/bin/env node
// Lists the import cycles among the service's and packages' TypeScript files, and the imports that run back up
// the floors (a lower floor importing a higher one). Reads imports as text: `import … from '…'`, `export … from
// '…'` and `import('…')` with a literal; relative paths and the @flagops/* workspace packages are followed.
//
//   node scripts/import-cycles.mjs            cycles and arrows back up; exit 1 when there are arrows back up
//   node scripts/import-cycles.mjs --runtime  leave out `import type` / `export type` (what runs, not what types)
//   node scripts/import-cycles.mjs --json     the same as JSON
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SOURCES = ['src', 'packages/core/src', 'packages/sdk/src', 'packages/openfeature/src', 'packages/dashboard/src'];
const PACKAGES = {
  '@flagops/core': 'packages/core/src',
  '@flagops/sdk': 'packages/sdk/src',
  '@flagops/openfeature': 'packages/openfeature/src',
};

/**
 * The floors, top first: a file may import its own floor and any below it. A file's floor is that of the
 * longest prefix listed. Keep in step with docs/architecture.md's picture.
 */
const FLOORS = [
  { name: 'entry points', prefixes: ['src/main.ts', 'src/service.ts', 'src/service-health.ts', 'src/service-remote.ts', 'src/exports/'] },
  { name: 'apps', prefixes: ['src/apps/', 'packages/dashboard/'] },
  { name: 'features', prefixes: ['src/features/'] },
  { name: 'foundations', prefixes: ['src/foundations/'] },
  { name: 'packages', prefixes: ['packages/openfeature/', 'packages/sdk/', 'packages/core/'] },
];

const args = new Set(process.argv.slice(2));
if (args.has('--help') || args.has('-h')) {
  console.log(
    readFileSync(fileURLToPath(import.meta.url), 'utf8')
      .split('\n')
      .slice(1, 8)
      .join('\n')
      .replaceAll('// ', ''),
  );
  process.exit(0);
}
const runtimeOnly = args.has('--runtime');

function walk(dir) {
  const out = [];
  for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...walk(rel));
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

const files = SOURCES.filter((dir) => statSync(path.join(ROOT, dir), { throwIfNoEntry: false })?.isDirectory()).flatMap(walk);
const known = new Set(files);

function resolve(from, spec) {
  let target;
  if (spec.startsWith('.')) target = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  else {
    const pkg = Object.keys(PACKAGES).find((name) => spec === name || spec.startsWith(`${name}/`));
    if (!pkg) return null;
    const sub = spec.slice(pkg.length).replace(/^\//, '');
    target = `${PACKAGES[pkg]}/${sub || 'index'}`;
  }
  for (const candidate of [target.replace(/\.js$/, '.ts'), `${target}.ts`, `${target}/index.ts`, target])
    if (known.has(candidate)) return candidate;
  return null;
}

const IMPORT = /(?:^|\n)\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;
const edges = new Map(files.map((f) => [f, new Set()]));
for (const file of files) {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  for (const m of text.matchAll(IMPORT)) {
    const typeOnly = Boolean(m[2]);
    if (runtimeOnly && typeOnly) continue;
    const target = resolve(file, m[3] ?? m[4]);
    if (target && target !== file) edges.get(file).add(target);
  }
}

function floorOf(file) {
  let best = null;
  FLOORS.forEach((floor, rank) => {
    for (const prefix of floor.prefixes)
      if ((file === prefix || file.startsWith(prefix)) && (best === null || prefix.length > best.length))
        best = { rank, length: prefix.length, prefix };
  });
  return best;
}

// Tarjan's strongly connected components.
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const cycles = [];
let counter = 0;
function visit(v) {
  index.set(v, counter);
  low.set(v, counter++);
  stack.push(v);
  onStack.add(v);
  for (const w of edges.get(v)) {
    if (!index.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
  }
  if (low.get(v) === index.get(v)) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) cycles.push(component.sort());
  }
}
for (const file of files) if (!index.has(file)) visit(file);

const folderOf = (file) => path.posix.dirname(file);
const backUp = [];
const unplaced = [];
for (const [from, targets] of edges) {
  const a = floorOf(from);
  if (!a) {
    unplaced.push(from);
    continue;
  }
  for (const to of targets) {
    const b = floorOf(to);
    if (b && b.rank < a.rank) backUp.push({ from, to, fromFloor: FLOORS[a.rank].name, toFloor: FLOORS[b.rank].name });
  }
}

const result = {
  files: files.length,
  imports: [...edges.values()].reduce((n, s) => n + s.size, 0),
  cycles: cycles.map((members) => ({ folders: [...new Set(members.map(folderOf))], members })),
  backUp,
  unplaced,
};
if (args.has('--json')) console.log(JSON.stringify(result, null, 2));
else {
  console.log(`${result.files} files, ${result.imports} imports${runtimeOnly ? ' (runtime only)' : ''}`);
  console.log(`${cycles.length} cycle(s):`);
  for (const cycle of result.cycles)
    console.log(
      `  ${cycle.members.length} files in ${cycle.folders.join(', ')}${cycle.folders.length > 1 ? '  (spans folders)' : ''}\n    ${cycle.members.join('\n    ')}`,
    );
  console.log(`${backUp.length} import(s) back up:`);
  for (const arrow of backUp) console.log(`  ${arrow.from} (${arrow.fromFloor}) -> ${arrow.to} (${arrow.toFloor})`);
  if (unplaced.length > 0) console.log(`${unplaced.length} file(s) on no floor (add them to FLOORS):\n  ${unplaced.join('\n  ')}`);
}
process.exit(backUp.length > 0 || unplaced.length > 0 ? 1 : 0);

#!/usr/bin/env node
// Runs every benchmark under scripts/bench/ in turn (or those named on the command line), one process each,
// so one benchmark's heap and JIT state never colour another's figures.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
/** Scripts here that are not benchmarks: this runner, and the two that compare benchmarks between two checkouts. */
const TOOLS = new Set(['run.mjs', 'compare.mjs', 'compare-eval-server.mjs']);
const wanted = process.argv.slice(2);
if (wanted.includes('--help')) {
  console.log(
    'usage: npm run bench [-- name ...]\n\nRuns scripts/bench/*.mjs (all, or those whose name contains one of the given words).\nBuild first: npm run build.',
  );
  process.exit(0);
}
const benches = readdirSync(here)
  .filter((f) => f.endsWith('.mjs') && !TOOLS.has(f) && !f.startsWith('_'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort();
let failed = 0;
for (const file of benches) {
  console.log(`\n=== ${file}`);
  const res = spawnSync(process.execPath, ['--expose-gc', path.join(here, file)], { stdio: 'inherit' });
  if (res.status !== 0) {
    failed++;
    console.error(`${file} exited with ${res.status}`);
  }
}
process.exit(failed ? 1 : 0);

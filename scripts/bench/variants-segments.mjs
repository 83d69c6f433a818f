#!/usr/bin/env node
// Variants, segments and prerequisites in process, with @flagops/core as built (npm run build):
//  1. the SDK benchmark's rule flag (country in [DE, FR] AND appVersion semver_gt 2.0.0, else a 30% rollout),
//     evaluated by this core and by the core of a base commit in the same run, rounds interleaved: the ratio
//     must stay ≤ 1.05 (the new steps must not slow down flags that do not use them);
//  2. a flag with 3 variants whose rule targets a segment of 10,000 user ids (goal < 300 ns);
//  3. a prerequisite chain of 3 flags, evaluated from the top;
//  4. loading a 10,000-flag snapshot with 100 segments: JSON.parse and compile (goal < 1 s).
//
//   npm run build && node scripts/bench/variants-segments.mjs        (or npm run bench -- variants)
// The base core is bundled with esbuild from `git show <base>:packages/core/src/…`; BENCH_CORE_BASE names the
// base commit (default: the one before variants, segments and prerequisites were added).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compileEnvironment } from '@flagops/core';
import { build } from 'esbuild';
import { ruleFlagConfig, ruleFlagContexts } from './lib/seed.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const BASE = process.env.BENCH_CORE_BASE ?? 'bde130f1fb988b96963551d5bf2a0408653182aa';
const USERS = 100_000;
const ROUNDS = Number(process.env.ROUNDS ?? 31);

/** The base commit's core, bundled into one module in a temporary directory. */
async function baseCore() {
  const dir = mkdtempSync(path.join(tmpdir(), 'flagops-core-base-'));
  try {
    const files = execFileSync('git', ['-C', root, 'ls-tree', '--name-only', `${BASE}:packages/core/src`], { encoding: 'utf8' })
      .split('\n')
      .filter((f) => f.endsWith('.ts'));
    mkdirSync(path.join(dir, 'src'));
    for (const file of files)
      writeFileSync(path.join(dir, 'src', file), execFileSync('git', ['-C', root, 'show', `${BASE}:packages/core/src/${file}`]));
    await build({
      entryPoints: [path.join(dir, 'src', 'index.ts')],
      bundle: true,
      format: 'esm',
      outfile: path.join(dir, 'core.mjs'),
      logLevel: 'error',
    });
    return await import(pathToFileURL(path.join(dir, 'core.mjs')).href);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const contexts = ruleFlagContexts(USERS);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Median ns per evaluation of each entry, rounds interleaved so that load from other jobs falls on all alike. */
function nsPerOp(entries) {
  const rounds = entries.map(() => []);
  const sink = entries.map(() => 0);
  for (let w = 0; w < 3; w++)
    entries.forEach(([, f], e) => {
      for (let i = 0; i < USERS; i++) if (f(contexts[i]) !== undefined) sink[e]++;
    });
  for (let r = 0; r < ROUNDS; r++) {
    entries.forEach(([, f], e) => {
      globalThis.gc?.();
      const started = process.hrtime.bigint();
      for (let i = 0; i < USERS; i++) if (f(contexts[i]) !== undefined) sink[e]++;
      rounds[e].push(Number(process.hrtime.bigint() - started) / USERS);
    });
  }
  return entries.map(([name], e) => [name, median(rounds[e])]);
}

const entry = (config) => ({ killed: false, archived: false, defaultValue: null, ...config });

// ---- 1. The peer flag, this core against the base's ----
const old = await baseCore();
const peer = { 'new-checkout': entry(ruleFlagConfig) };
const now = compileEnvironment(peer);
const before = old.compileEnvironment(peer);
for (const c of contexts.slice(0, 1000))
  if (now.evaluate('new-checkout', c).variation !== before.evaluate('new-checkout', c).variation) throw new Error('the two cores disagree');
const peerRows = nsPerOp([
  [`base core (${BASE.slice(0, 7)})`, (c) => before.evaluate('new-checkout', c).value],
  ['this core', (c) => now.evaluate('new-checkout', c).value],
  [`base core again`, (c) => before.evaluate('new-checkout', c).value],
  ['this core again', (c) => now.evaluate('new-checkout', c).value],
]);

// ---- 2. Three variants, a segment of 10,000 user ids ----
const members = contexts
  .filter((_, i) => i % 10 === 0)
  .slice(0, 10_000)
  .map((c) => c.userId);
const segments = { 'beta-testers': { userIds: members, conditions: [] } };
const variants = [
  { name: 'control', value: 'a', weight: 33.33 },
  { name: 'blue', value: 'b', weight: 33.33 },
  { name: 'green', value: 'c', weight: 33.34 },
];
const abn = compileEnvironment(
  {
    experiment: entry({
      enabled: true,
      rolloutPct: 100,
      valueOn: 'on',
      valueOff: 'off',
      variants,
      rules: [{ id: 'beta', serve: 'green', conditions: [{ op: 'in_segment', value: 'beta-testers' }] }],
    }),
    'chain-1': entry({
      enabled: true,
      rolloutPct: 100,
      valueOn: true,
      valueOff: false,
      rules: [],
      prerequisites: [{ flag: 'chain-2', variation: 'on' }],
    }),
    'chain-2': entry({
      enabled: true,
      rolloutPct: 100,
      valueOn: true,
      valueOff: false,
      rules: [],
      prerequisites: [{ flag: 'chain-3', variation: 'on' }],
    }),
    'chain-3': entry({ ...ruleFlagConfig }),
  },
  segments,
);
const shares = { control: 0, blue: 0, green: 0 };
for (const c of contexts) shares[abn.evaluate('experiment', c).variation]++;
const newRows = nsPerOp([
  ['3 variants, rule on a segment of 10,000 user ids', (c) => abn.evaluate('experiment', c).value],
  ['prerequisite chain of 3 (the last is the peer flag)', (c) => abn.evaluate('chain-1', c).value],
]);

// ---- 3. Loading a 10,000-flag snapshot with 100 segments ----
const bigFlags = {};
for (let i = 0; i < 10_000; i++) {
  const config =
    i % 4 === 0
      ? {
          ...ruleFlagConfig,
          rules: [...ruleFlagConfig.rules, { id: 'seg', serve: 'on', conditions: [{ op: 'in_segment', value: `segment-${i % 100}` }] }],
        }
      : i % 4 === 1
        ? { enabled: true, rolloutPct: 100, valueOn: 'x', valueOff: 'y', rules: [], variants }
        : {
            enabled: true,
            rolloutPct: (i * 7) % 101,
            valueOn: true,
            valueOff: false,
            rules: [],
            ...(i % 4 === 2 ? { prerequisites: [{ flag: `team-${(i - 2) % 40}-feature-${i - 2}`, variation: 'on' }] } : {}),
          };
  bigFlags[`team-${i % 40}-feature-${i}`] = entry(config);
}
const bigSegments = {};
for (let s = 0; s < 100; s++)
  bigSegments[`segment-${s}`] = { userIds: Array.from({ length: 1000 }, (_, i) => `seg-${s}-user-${i}`), conditions: [] };
const text = JSON.stringify({ version: 1, environment: 'prod', flags: bigFlags, segments: bigSegments });
const loads = [];
for (let r = 0; r < 5; r++) {
  const started = process.hrtime.bigint();
  const snapshot = JSON.parse(text);
  compileEnvironment(snapshot.flags, snapshot.segments);
  loads.push(Number(process.hrtime.bigint() - started) / 1e6);
}

console.log(
  `\nVariants, segments and prerequisites, ${USERS.toLocaleString('en')} users, median of ${ROUNDS} rounds; ${cpus().length} cores, load ${loadavg()[0].toFixed(1)}\n`,
);
console.log('| evaluation | ns/op |\n|---|---:|');
for (const [name, ns] of [...peerRows, ...newRows]) console.log(`| ${name} | ${ns.toFixed(0)} |`);
const ratio = (peerRows[1][1] + peerRows[3][1]) / (peerRows[0][1] + peerRows[2][1]);
console.log(`\npeer flag, this core / base core: ${ratio.toFixed(3)} (goal ≤ 1.05)`);
console.log(
  `variant shares: ${Object.entries(shares)
    .map(([k, v]) => `${k} ${((100 * v) / USERS).toFixed(2)}%`)
    .join(', ')}`,
);
console.log(
  `10,000-flag snapshot with 100 segments (${(text.length / 1e6).toFixed(1)} MB): JSON.parse + compile, median ${median(loads).toFixed(0)} ms (goal < 1,000 ms)`,
);

#!/usr/bin/env node
import { readFileSync } from 'node:fs';
// SDK, local mode, in process: ns per evaluation of the targeting flag (country in [DE, FR] and appVersion
// semver_gt 2.0.0 → on, else a 30 % rollout), the heap a 10,000-flag snapshot takes in a client, and the size
// of the browser bundle. No network: the client is bootstrapped and its fetch answers 304 (snapshot) or 202
// (counts) without leaving the process.
//
//   npm run build && node --expose-gc scripts/bench/sdk.mjs     (or npm run bench -- sdk)
// It runs the built packages, @flagops/sdk and @flagops/core, as an application would.
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { compileEnvironment } from '@flagops/core';
import { createClient } from '@flagops/sdk';
import { buildSdkBundle } from '../build-packages.mjs';
import { ruleFlagConfig, ruleFlagContexts } from './lib/seed.mjs';

const USERS = 100_000;
const ROUNDS = 7;
const quiet = { warn: () => {}, error: () => {} };
/** Answers without a network: the snapshot has not changed, counts are taken. */
const offline = async (_url, init) => new Response(null, { status: init?.method === 'POST' ? 202 : 304 });

const entry = (config) => ({ killed: false, archived: false, defaultValue: null, ...config });
const snapshotOf = (flags) => ({ version: 1, environment: 'prod', flags });

// ---- Users: a fixed pseudo-random mix, parsed from JSON as a request body would be. ----
const contexts = ruleFlagContexts(USERS);

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/**
 * Median ns per call of each variant, over ROUNDS passes over every user after two warm-up passes. The
 * variants take turns within each round, so that load from other processes falls on all of them alike.
 */
function nsPerOp(variants) {
  const results = variants.map(() => ({ rounds: [], on: 0 }));
  for (let w = 0; w < 2; w++) for (const [, evaluate] of variants) for (let i = 0; i < USERS; i++) evaluate(contexts[i]);
  for (let r = 0; r < ROUNDS; r++) {
    variants.forEach(([, evaluate], v) => {
      let on = 0;
      const started = process.hrtime.bigint();
      for (let i = 0; i < USERS; i++) if (evaluate(contexts[i]) === true) on++;
      results[v].rounds.push(Number(process.hrtime.bigint() - started) / USERS);
      results[v].on = on;
    });
  }
  return variants.map(([name], v) => [name, { ns: median(results[v].rounds), onShare: results[v].on / USERS }]);
}

// ---- 1. Evaluation cost ----
const flags = { 'new-checkout': entry(ruleFlagConfig) };
const counting = createClient({
  evalUrl: 'http://bench.invalid',
  sdkKey: 'svc_sdk_bench',
  bootstrap: snapshotOf(flags),
  stream: false,
  fetch: offline,
  logger: quiet,
  countsIntervalMs: 3_600_000,
});
const notCounting = createClient({
  evalUrl: 'http://bench.invalid',
  sdkKey: 'svc_sdk_bench',
  bootstrap: snapshotOf(flags),
  stream: false,
  fetch: offline,
  logger: quiet,
  sendCounts: false,
});
const core = compileEnvironment(flags);
const rows = nsPerOp([
  ['core `compiled.evaluate(key, context)` (the server path, for reference)', (c) => core.evaluate('new-checkout', c).value],
  ['SDK `client.boolean(key, false, context)`, counting on (default)', (c) => counting.boolean('new-checkout', false, c)],
  ['SDK `client.boolean(…)`, `sendCounts: false`', (c) => notCounting.boolean('new-checkout', false, c)],
  ['SDK `client.details(key, false, context)`', (c) => counting.details('new-checkout', false, c).value],
]);
await counting.close();
await notCounting.close();

// ---- 2. Memory of a 10,000-flag snapshot ----
function bigSnapshot(n) {
  const out = {};
  for (let i = 0; i < n; i++) {
    // A quarter with the two-condition rule, the rest plain rollouts; string keys like real ones.
    out[`team-${i % 40}-feature-${i}`] = entry(
      i % 4 === 0 ? ruleFlagConfig : { enabled: true, rolloutPct: (i * 7) % 101, valueOn: true, valueOff: false, rules: [] },
    );
  }
  return snapshotOf(out);
}
const gc = globalThis.gc;
if (!gc) console.warn('run with --expose-gc for the memory figure');
const text = JSON.stringify(bigSnapshot(10_000));
const heap = () => {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
};
const before = heap();
const loadStarted = performance.now();
let big = createClient({
  evalUrl: 'http://bench.invalid',
  sdkKey: 'svc_sdk_bench',
  bootstrap: JSON.parse(text),
  stream: false,
  fetch: offline,
  logger: quiet,
  sendCounts: false,
});
const loadMs = performance.now() - loadStarted;
const retained = heap() - before;
const bigCheck = big.boolean('team-0-feature-0', false, contexts[0]);
await big.close();
big = null;

// ---- 3. The browser bundle ----
const bundleDir = await mkdtemp(path.join(tmpdir(), 'flagops-bench-'));
const { outfile, bytes } = await buildSdkBundle({ outfile: path.join(bundleDir, 'flagops-sdk.js') });
const gzipped = gzipSync(readFileSync(outfile)).length;
await rm(bundleDir, { recursive: true, force: true });

console.log(
  `\nSDK local evaluation, ${USERS.toLocaleString('en')} users, median of ${ROUNDS} passes; ${cpus().length} cores, load ${loadavg()[0].toFixed(1)}\n`,
);
console.log('| what | ns/op | share on |\n|---|---|---|');
for (const [name, r] of rows) console.log(`| ${name} | ${r.ns.toFixed(0)} | ${(r.onShare * 100).toFixed(1)} % |`);
console.log(
  `\n10,000-flag snapshot: ${(text.length / 1024 / 1024).toFixed(2)} MiB of JSON; client heap ${(retained / 1024 / 1024).toFixed(1)} MiB; parse+compile ${loadMs.toFixed(0)} ms (check: ${bigCheck})`,
);
console.log(`browser bundle: ${(bytes / 1024).toFixed(1)} KiB, ${(gzipped / 1024).toFixed(1)} KiB gzipped`);

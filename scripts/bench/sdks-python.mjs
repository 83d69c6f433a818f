#!/usr/bin/env node
// The Python SDK beside the JS SDK in the same run: µs per evaluation of the benchmark flag (country in [DE, FR]
// and appVersion semver_gt 2.0.0 → on, else a 30 % rollout) for the same 100,000 users, and the memory a
// 10,000-flag snapshot takes in each. The Python figures come from sdks/python/benchmarks/bench_sdk.py.
//
//   npm run build && npm run bench -- sdks-python
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@flagops/sdk';
import { ruleFlagConfig, ruleFlagContexts } from './lib/seed.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const USERS = 100_000;
const ROUNDS = 7;
const quiet = { warn: () => {}, error: () => {} };
const offline = async (_url, init) => new Response(null, { status: init?.method === 'POST' ? 202 : 304 });
const entry = (config) => ({ killed: false, archived: false, defaultValue: null, ...config });

const contexts = ruleFlagContexts(USERS);
const dir = await mkdtemp(path.join(tmpdir(), 'flagops-bench-'));
const file = path.join(dir, 'contexts.json');
writeFileSync(file, JSON.stringify(contexts));

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** The JS SDK's median µs per `client.boolean` over the same users (counting off, like the Python SDK). */
async function jsMicroseconds() {
  const client = createClient({
    evalUrl: 'http://bench.invalid',
    sdkKey: 'svc_sdk_bench',
    bootstrap: { version: 1, environment: 'prod', flags: { 'new-checkout': entry(ruleFlagConfig) } },
    stream: false,
    fetch: offline,
    logger: quiet,
    sendCounts: false,
  });
  for (let w = 0; w < 2; w++) for (const c of contexts) client.boolean('new-checkout', false, c);
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const started = process.hrtime.bigint();
    for (const c of contexts) client.boolean('new-checkout', false, c);
    rounds.push(Number(process.hrtime.bigint() - started) / USERS / 1000);
  }
  await client.close();
  return median(rounds);
}

const jsBefore = await jsMicroseconds();
const py = spawnSync('python3', [path.join(ROOT, 'sdks/python/benchmarks/bench_sdk.py'), file], {
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
});
await rm(dir, { recursive: true, force: true });
if (py.status !== 0) {
  console.error(py.stderr);
  process.exit(1);
}
const jsAfter = await jsMicroseconds();
const result = JSON.parse(py.stdout);

console.log(
  `\nPython ${result.python} SDK beside the JS SDK, ${USERS.toLocaleString('en')} users, median of ${ROUNDS} passes; ${cpus().length} cores, load ${loadavg()[0].toFixed(1)}\n`,
);
console.log('| what | µs/op | CPU µs/op | share on |\n|---|---|---|---|');
for (const [name, r] of Object.entries(result.rows))
  console.log(`| Python ${name} | ${r.us.toFixed(2)} | ${r.cpuUs.toFixed(2)} | ${(r.onShare * 100).toFixed(1)} % |`);
console.log(
  `| JS SDK \`client.boolean(…)\`, \`sendCounts: false\` (before / after the Python run) | ${jsBefore.toFixed(3)} / ${jsAfter.toFixed(3)} | | |`,
);
const s = result.snapshot;
console.log(
  `\nPython, 10,000-flag snapshot: ${s.jsonMiB.toFixed(2)} MiB of JSON; retained ${s.retainedMiB.toFixed(1)} MiB (parsed JSON and compiled flags, tracemalloc); parse+compile ${s.loadMs.toFixed(0)} ms (check: ${s.check})`,
);

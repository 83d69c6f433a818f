#!/usr/bin/env node
// The cost of sending exposures (`sendExposures: true`) in the JS SDK's local evaluation: ns per
// `client.boolean(...)` of the targeting flag with and without it, in the same run, for 100 users evaluated
// again and again (exposures deduplicated) and for 100,000 distinct users (every evaluation a new exposure).
// Goal: at most 10 % more for the repeated users.
//
// No network: the client is bootstrapped and its fetch answers 202 (events, counts) or 304 (snapshot) in
// process, so the batching, JSON and sending of the events are counted, the network is not. As in a server,
// evaluations come in requests of 10 with the event loop run between them (where full batches leave), and the
// two clients take turns every request (which goes first alternates), so that load from other processes falls
// on both alike. Each pass starts from a collected heap, and the cases alternate, pass by pass.
//
// On a busy machine another process takes the core for milliseconds at a time, landing on one client's request:
// a request where either client took over CUT_MS (default 1 ms; a batch of 500 exposures is sent in well under
// that) is left out for both. The overhead of every pass is printed, and the one over all requests for comparison.
//
//   npm run build && npm run bench -- sdk-exposures      (BENCH_ROUNDS passes per case, default 15)
import { cpus, loadavg } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createClient } from '@flagops/sdk';
import { ruleFlagConfig, ruleFlagContexts } from './lib/seed.mjs';

const USERS = 100_000;
const PER_REQUEST = 10;
const REQUESTS = USERS / PER_REQUEST;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const CUT_NS = Number(process.env.CUT_MS ?? 1) * 1e6;
// npm run bench gives node --expose-gc; run directly, the flag is set here.
if (typeof globalThis.gc !== 'function') setFlagsFromString('--expose-gc');
const gc = globalThis.gc ?? runInNewContext('gc');

const quiet = { warn: () => {}, error: () => {} };
let posted = 0;
const offline = async (_url, init) => {
  if (init?.method === 'POST') posted += init.body.length;
  return new Response(null, { status: init?.method === 'POST' ? 202 : 304 });
};
const snapshot = {
  version: 1,
  environment: 'prod',
  flags: { 'new-checkout': { killed: false, archived: false, defaultValue: null, ...ruleFlagConfig } },
};
const client = (options) =>
  createClient({
    evalUrl: 'http://bench.invalid',
    sdkKey: 'svc_sdk_bench',
    bootstrap: snapshot,
    stream: false,
    fetch: offline,
    logger: quiet,
    ...options,
  });

const distinct = ruleFlagContexts(USERS);
// The same 100 users over and over: after the first evaluation of each, exposures are deduplicated until the next send.
const repeated = Array.from({ length: USERS }, (_, i) => distinct[i % 100]);
const cases = [
  { label: '100 users, each evaluated again and again (exposures deduplicated)', contexts: repeated, passes: [] },
  { label: '100,000 distinct users (every evaluation a new exposure, sent)', contexts: distinct, passes: [] },
];
const clients = [client({}), client({ sendExposures: true })];
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** One pass over `contexts`: ns per evaluation of each client, over the requests kept and over all of them. */
async function pass(contexts) {
  gc();
  const took = clients.map(() => new Float64Array(REQUESTS));
  for (let q = 0; q < REQUESTS; q++) {
    for (let turn = 0; turn < 2; turn++) {
      const v = (q + turn) % 2;
      const c = clients[v];
      const started = process.hrtime.bigint();
      for (let j = q * PER_REQUEST; j < (q + 1) * PER_REQUEST; j++) c.boolean('new-checkout', false, contexts[j]);
      await settle();
      took[v][q] = Number(process.hrtime.bigint() - started);
    }
  }
  const kept = [0, 0];
  const all = [0, 0];
  let n = 0;
  for (let q = 0; q < REQUESTS; q++) {
    all[0] += took[0][q];
    all[1] += took[1][q];
    if (took[0][q] > CUT_NS || took[1][q] > CUT_NS) continue;
    kept[0] += took[0][q];
    kept[1] += took[1][q];
    n++;
  }
  return { off: kept[0] / (n * PER_REQUEST), on: kept[1] / (n * PER_REQUEST), kept: n / REQUESTS, overheadAll: all[1] / all[0] - 1 };
}

const loadBefore = loadavg()[0];
for (let r = -1; r < ROUNDS; r++) {
  for (const c of cases) {
    const result = await pass(c.contexts);
    if (r >= 0) c.passes.push(result); // the first round warms up
  }
}
for (const c of clients) await c.close();

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (x) => `${(x * 100).toFixed(1)} %`;
console.log(
  `\nSDK local evaluation with and without sendExposures: ${USERS.toLocaleString('en')} evaluations per pass, ${ROUNDS} passes per case; ${cpus().length} cores, load average ${loadBefore.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end\n`,
);
console.log(
  '| users | exposures off (default) | `sendExposures: true` | overhead, median | overhead, lowest–highest pass | requests kept | overhead, all requests |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const { label, passes } of cases) {
  const overheads = passes.map((p) => p.on / p.off - 1);
  console.log(
    `| ${label} | ${median(passes.map((p) => p.off)).toFixed(0)} ns | ${median(passes.map((p) => p.on)).toFixed(0)} ns | ${pct(median(overheads))} | ${pct(Math.min(...overheads))} – ${pct(Math.max(...overheads))} | ${pct(median(passes.map((p) => p.kept)))} | ${pct(median(passes.map((p) => p.overheadAll)))} |`,
  );
}
console.log(`\n(${(posted / 1024 / 1024).toFixed(1)} MiB of events and counts posted to the in-process fetch)`);

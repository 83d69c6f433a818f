#!/usr/bin/env node
// The cost of sending exposures (`sendExposures: true`) in the JS SDK's local evaluation: ns per
// `client.boolean(...)` of the targeting flag with and without it, in the same run. Goal: at most 10 % more.
// No network: the client is bootstrapped and its fetch answers 202 (events, counts) or 304 (snapshot) in
// process, so the batching, JSON encoding and sending of the events are counted, the network is not. As in a
// server, evaluations come in requests of 10 with the event loop free between them (where full batches leave),
// for both variants; each pass waits for what it queued to be sent before its clock stops.
//
//   npm run build && npm run bench -- sdk-exposures
import { cpus, loadavg } from 'node:os';
import { createClient } from '@flagops/sdk';
import { ruleFlagConfig, ruleFlagContexts } from './lib/seed.mjs';

const USERS = 100_000;
const PER_REQUEST = 10;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
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

const plain = client({});
const exposing = client({ sendExposures: true });
const settle = () => new Promise((resolve) => setImmediate(resolve));

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/**
 * ns per evaluation over every context, the sends it queued included. The variants take turns every request
 * (10 evaluations, then the event loop runs what they queued, timed with them), so that load from other
 * processes falls on both alike.
 */
async function nsPerOp(variants, contexts) {
  const rounds = variants.map(() => []);
  for (let r = -2; r < ROUNDS; r++) {
    const spent = variants.map(() => 0n);
    for (let i = 0; i < contexts.length; i += PER_REQUEST) {
      for (let v = 0; v < variants.length; v++) {
        const c = variants[v][1];
        const started = process.hrtime.bigint();
        for (let j = i; j < i + PER_REQUEST; j++) c.boolean('new-checkout', false, contexts[j]);
        await settle();
        spent[v] += process.hrtime.bigint() - started;
      }
    }
    if (r >= 0) for (let v = 0; v < variants.length; v++) rounds[v].push(Number(spent[v]) / contexts.length);
  }
  return variants.map(([name], v) => [name, median(rounds[v]), rounds[v]]);
}

const table = [];
for (const [label, contexts] of [
  ['100,000 distinct users (every evaluation a new exposure)', distinct],
  ['100 users repeated (exposures deduplicated)', repeated],
]) {
  const [[, base], [, withExposures, raw]] = await nsPerOp(
    [
      ['off', plain],
      ['on', exposing],
    ],
    contexts,
  );
  table.push({ label, base, withExposures, raw });
}
await plain.close();
await exposing.close();

console.log(
  `\nSDK local evaluation with and without sendExposures, ${USERS.toLocaleString('en')} evaluations per pass, median of ${ROUNDS} passes; ${cpus().length} cores, load ${loadavg()[0].toFixed(1)}\n`,
);
console.log('| users | ns/op, exposures off (default) | ns/op, `sendExposures: true` | overhead |\n|---|---|---|---|');
for (const { label, base, withExposures } of table) {
  console.log(`| ${label} | ${base.toFixed(0)} | ${withExposures.toFixed(0)} | ${(((withExposures - base) / base) * 100).toFixed(1)} % |`);
}
console.log(`\n(${(posted / 1024 / 1024).toFixed(1)} MiB of events and counts posted to the in-process fetch)`);

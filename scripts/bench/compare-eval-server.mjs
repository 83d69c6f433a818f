#!/usr/bin/env node
// The evaluation server of two checkouts in the same run: each one's scripts/bench/lib/eval-server-child.mjs
// (a service serving 20 flags) runs at once, both pinned to core 0, and autocannon on core 1 sends short
// slices of load to one, then the other (before, now, now, before, ...). Separate runs of a benchmark on a
// shared machine differ by ±25 % in requests/s even for the same code; slices a few seconds apart share the
// machine's state, so their ratio is the code's.
//   node scripts/bench/compare-eval-server.mjs --before <checkout> [--now <checkout>] [--slices 8] [--seconds 2]
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';

const USAGE = `usage: node scripts/bench/compare-eval-server.mjs --before <checkout> [--now <checkout>] [--slices N] [--seconds S]

Starts the benchmark evaluation server of both checkouts (built: npm ci && npm run build in each), then for
each endpoint sends N slices of S seconds of load to each (default 8 of 2 s), alternating, and prints the
requests/s of each side (median of its slices) and the ratio now/before of the totals, with the spread of the
slice pairs' ratios. --now defaults to this checkout.`;

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let options;
try {
  options = parseArgs({
    options: {
      before: { type: 'string' },
      now: { type: 'string', default: here },
      slices: { type: 'string', default: '8' },
      seconds: { type: 'string', default: '2' },
      help: { type: 'boolean', short: 'h' },
    },
  }).values;
} catch (err) {
  console.error(`${err.message}\n\n${USAGE}`);
  process.exit(2);
}
if (options.help) {
  console.log(USAGE);
  process.exit(0);
}
const slices = Number(options.slices);
const seconds = Number(options.seconds);
if (!options.before || !Number.isInteger(slices) || slices < 1 || !(seconds > 0)) {
  console.error(USAGE);
  process.exit(2);
}
const checkouts = { before: path.resolve(options.before), now: path.resolve(options.now) };
for (const dir of Object.values(checkouts)) {
  if (!existsSync(path.join(dir, 'scripts/bench/lib/eval-server-child.mjs')) || !existsSync(path.join(dir, 'dist'))) {
    console.error(`${dir} is not a built checkout (scripts/bench/lib/eval-server-child.mjs and dist/ are needed)`);
    process.exit(2);
  }
}

spawnSync('taskset', ['-cp', '1', String(process.pid)], { stdio: 'ignore' });

async function startServer(checkout) {
  const script = path.join(checkout, 'scripts/bench/lib/eval-server-child.mjs');
  const child = spawn('taskset', ['-c', '0', process.execPath, script], { cwd: checkout, stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return { child, ...JSON.parse(line) };
}

const servers = { before: await startServer(checkouts.before), now: await startServer(checkouts.now) };
const context = { userId: 'user-42', attributes: { country: 'DE', appVersion: '2.3.1' } };
const twentyKeys = Array.from({ length: 20 }, (_, i) => `flag-${i}`);

/** Each endpoint as a function of one server: the autocannon request and the status that counts as served. */
async function endpoints(server) {
  const authorization = `Bearer ${server.key}`;
  const first = await fetch(`${server.evalUrl}/v1/snapshot`, { headers: { authorization } });
  await first.arrayBuffer();
  const etag = first.headers.get('etag');
  const post = (body) => ({
    url: `${server.evalUrl}/v1/evaluate`,
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    status: 200,
  });
  return {
    'POST /v1/evaluate, 1 key': post({ key: 'flag-0', context }),
    'POST /v1/evaluate, 20 keys': post({ keys: twentyKeys, context }),
    'GET /v1/snapshot → 304': { url: `${server.evalUrl}/v1/snapshot`, headers: { authorization, 'if-none-match': etag }, status: 304 },
    'HEAD /v1/snapshot → 304': {
      url: `${server.evalUrl}/v1/snapshot`,
      method: 'HEAD',
      headers: { authorization, 'if-none-match': etag },
      status: 304,
    },
    'GET /v1/snapshot → 200 (20 flags)': { url: `${server.evalUrl}/v1/snapshot`, headers: { authorization }, status: 200 },
  };
}

/** One slice of load: the requests answered with the expected status per second, and how many were not. */
function slice({ status, ...request }, duration) {
  return new Promise((resolve, reject) =>
    autocannon({ ...request, connections: 50, pipelining: 1, duration }, (err, result) => {
      if (err) return reject(err);
      const served = result.statusCodeStats?.[String(status)]?.count ?? 0;
      resolve({ perSecond: served / duration, failed: result.requests.total - served + result.errors });
    }),
  );
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const requests = { before: await endpoints(servers.before), now: await endpoints(servers.now) };
const loadAtStart = loadavg()[0];
const rows = [];
let failures = 0;
for (const name of Object.keys(requests.now)) {
  if (!requests.before[name]) continue;
  for (const side of ['before', 'now']) await slice(requests[side][name], 1); // warm-up
  const rates = { before: [], now: [] };
  for (let i = 0; i < slices; i++) {
    // before, now, then now, before: neither side always goes first
    for (const side of i % 2 === 0 ? ['before', 'now'] : ['now', 'before']) {
      const result = await slice(requests[side][name], seconds);
      rates[side].push(result.perSecond);
      failures += result.failed;
    }
    process.stderr.write(`${name}: slice ${i + 1}/${slices}\n`);
  }
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);
  const pairs = rates.now.map((x, i) => x / rates.before[i]).sort((a, b) => a - b);
  const ratio = sum(rates.now) / sum(rates.before);
  rows.push(
    `| ${name} | ${Math.round(median(rates.before)).toLocaleString('en')} | ${Math.round(median(rates.now)).toLocaleString('en')} | ${ratio.toFixed(3)} | ${pairs[0].toFixed(2)}–${pairs[pairs.length - 1].toFixed(2)} (median ${median(pairs).toFixed(2)}) |`,
  );
}
for (const server of Object.values(servers)) server.child.kill('SIGTERM');

console.log(
  `\nThe evaluation server, before (${checkouts.before}) and now (${checkouts.now}), ${slices} alternating slices of ${seconds} s per side and endpoint, 50 connections; load average ${loadAtStart.toFixed(1)} → ${loadavg()[0].toFixed(1)}\n`,
);
console.log('| endpoint | before, requests/s | now, requests/s | ratio now/before | slice pairs |\n|---|---:|---:|---:|---|');
for (const row of rows) console.log(row);
if (failures > 0) {
  console.error(`${failures} requests were not answered with the expected status`);
  process.exit(1);
}

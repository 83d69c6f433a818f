#!/usr/bin/env node
// What SDK polling costs the evaluation server: GET /v1/snapshot with a matching If-None-Match (304, what a
// local-mode client sends every pollIntervalMs while nothing changes), HEAD with If-None-Match (remote mode),
// and for scale the full 200 of a 20-flag snapshot. Server pinned to core 0 (scripts/bench/lib/eval-server-child.mjs),
// autocannon on core 1, 50 keep-alive connections, BENCH_SECONDS (default 5) each.
//   npx tsc -p tsconfig.build.json && node scripts/bench/sdk-poll.mjs     (or npm run bench -- sdk-poll)
import { spawn, spawnSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const here = path.dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
spawnSync('taskset', ['-cp', '1', String(process.pid)], { stdio: 'ignore' });

const child = spawn('taskset', ['-c', '0', process.execPath, path.join(here, 'lib', 'eval-server-child.mjs')], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const { evalUrl, key } = JSON.parse(
  await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`eval-server-child exited with ${code}`)));
  }),
);

const url = `${evalUrl}/v1/snapshot`;
const auth = { authorization: `Bearer ${key}` };
const first = await fetch(url, { headers: auth });
const etag = first.headers.get('etag');
const bytes = (await first.arrayBuffer()).byteLength;

function load(opts, duration = seconds) {
  return new Promise((resolve, reject) =>
    autocannon({ url, connections: 50, duration, ...opts }, (err, r) => (err ? reject(err) : resolve(r))),
  );
}

const cases = [
  ['GET /v1/snapshot, If-None-Match matches → 304 (local-mode poll)', { headers: { ...auth, 'if-none-match': etag } }, 304],
  [
    'HEAD /v1/snapshot, If-None-Match matches → 304 (remote-mode poll)',
    { method: 'HEAD', headers: { ...auth, 'if-none-match': etag } },
    304,
  ],
  [`GET /v1/snapshot → 200, ${bytes} bytes (20 flags)`, { headers: auth }, 200],
];
const rows = [];
for (const [name, opts, status] of cases) {
  await load(opts, 1); // warm-up
  const r = await load(opts);
  const wrong =
    r.errors +
    (r.statusCodeStats
      ? Object.entries(r.statusCodeStats)
          .filter(([code]) => Number(code) !== status)
          .reduce((n, [, s]) => n + s.count, 0)
      : 0);
  rows.push(`| ${name} | ${Math.round(r.requests.average).toLocaleString('en')} | ${r.latency.p50} | ${r.latency.p99} | ${wrong} |`);
}
child.kill('SIGTERM');

console.log(
  `\nSnapshot polling cost on the evaluation server, ${seconds} s each, 50 connections; server on core 0, load on core 1; ${cpus().length} cores, load ${loadavg()[0].toFixed(1)}\n`,
);
console.log('| request | requests/s | p50 ms | p99 ms | other status or errors |\n|---|---|---|---|---|');
for (const row of rows) console.log(row);

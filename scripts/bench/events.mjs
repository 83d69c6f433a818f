// POST /v1/events against POST /v1/evaluate on the same server in the same run: requests per second on one
// core (server pinned to core 0, autocannon, 50 keep-alive connections, on core 1). Goal: events ≥ 0.8× evaluate
// for requests of one event; larger batches show events per second.
// Run: npm run build && npm run bench -- events
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const here = path.dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
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
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

function load(url, body, duration = seconds) {
  return new Promise((resolve, reject) => {
    autocannon({ url, method: 'POST', headers, body: JSON.stringify(body), connections: 50, pipelining: 1, duration }, (err, result) =>
      err ? reject(err) : resolve(result),
    );
  });
}

const context = { userId: 'user-42', attributes: { country: 'DE', appVersion: '2.3.1' } };
const at = () => new Date().toISOString();
const exposure = (i) => ({ type: 'exposure', flagKey: `flag-${i % 20}`, variation: i % 2 ? 'on' : 'off', userId: `user-${i}`, at: at() });
const track = (i) => ({ type: 'track', name: i % 2 ? 'purchase' : 'signup', userId: `user-${i}`, value: 10 + i, at: at() });
const cases = [
  { name: 'POST /v1/evaluate, 1 key', path: '/v1/evaluate', body: { key: 'flag-0', context }, events: 0 },
  { name: 'POST /v1/events, 1 exposure', path: '/v1/events', body: { events: [exposure(1)] }, events: 1 },
  { name: 'POST /v1/events, 1 track event', path: '/v1/events', body: { events: [track(1)] }, events: 1 },
  {
    name: 'POST /v1/events, 100 events (50 exposures, 50 track)',
    path: '/v1/events',
    body: { events: Array.from({ length: 100 }, (_, i) => (i % 2 ? exposure(i) : track(i))) },
    events: 100,
  },
];

for (const c of cases) {
  const res = await fetch(`${evalUrl}${c.path}`, { method: 'POST', headers, body: JSON.stringify(c.body) });
  if (res.status !== 200 && res.status !== 202) throw new Error(`${c.name}: ${res.status} ${await res.text()}`);
  await load(`${evalUrl}${c.path}`, c.body, 1); // warm-up
}
// Rounds alternate the cases, so drift in the machine's load falls on all of them alike.
const results = new Map(cases.map((c) => [c.name, []]));
for (let round = 0; round < rounds; round++) {
  for (const c of cases) {
    const r = await load(`${evalUrl}${c.path}`, c.body);
    if (r.non2xx + r.errors > 0) throw new Error(`${c.name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    results.get(c.name).push(r);
  }
}
child.kill('SIGTERM');

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const evaluate = median(results.get(cases[0].name).map((r) => r.requests.average));
console.log(
  `\nPOST /v1/events against POST /v1/evaluate, ${rounds} rounds × ${seconds} s, 50 connections, server on core 0, autocannon on core 1\n`,
);
console.log(
  '| request | requests/s (median) | events/s | × evaluate | p50 ms | p99 ms | rounds (requests/s) |\n|---|---|---|---|---|---|---|',
);
for (const c of cases) {
  const rs = results.get(c.name);
  const rps = median(rs.map((r) => r.requests.average));
  const last = rs.at(-1);
  console.log(
    `| ${c.name} | ${Math.round(rps).toLocaleString('en')} | ${c.events ? Math.round(rps * c.events).toLocaleString('en') : ''} | ${(rps / evaluate).toFixed(2)} | ${last.latency.p50} | ${last.latency.p99} | ${rs.map((r) => Math.round(r.requests.average)).join(', ')} |`,
  );
}

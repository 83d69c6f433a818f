// Evaluation server on loopback against a fixed-JSON Koa handler, and node:http alone.
// Server pinned to core 0, load generator (autocannon, 50 keep-alive connections) to core 1.
// Run: npm run build && npm run bench -- eval-server-http
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const here = path.dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.env.BENCH_SECONDS ?? 8);
spawnSync('taskset', ['-cp', '1', String(process.pid)], { stdio: 'ignore' });

async function startChild(script) {
  const child = spawn('taskset', ['-c', '0', process.execPath, path.join(here, 'lib', script)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return { child, ...JSON.parse(line) };
}

function load(url, opts) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: 50, pipelining: 1, duration: seconds, ...opts }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

function row(name, r) {
  const errors = r.non2xx + r.errors;
  return `| ${name} | ${Math.round(r.requests.average).toLocaleString('en')} | ${r.latency.p50} | ${r.latency.p99} | ${errors} |`;
}

const contexts = { userId: 'user-42', attributes: { country: 'DE', appVersion: '2.3.1' } };
const twentyKeys = Array.from({ length: 20 }, (_, i) => `flag-${i}`);
const rows = [];

const baseline = await startChild('koa-fixed-child.mjs');
await load(`${baseline.evalUrl}/v1/evaluate`, {
  method: 'POST',
  duration: 1,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ key: 'flag-0', context: contexts }),
});
rows.push(
  row(
    'Koa + router + bodyparser, fixed JSON (baseline)',
    await load(`${baseline.evalUrl}/v1/evaluate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'flag-0', context: contexts }),
    }),
  ),
);
baseline.child.kill('SIGTERM');

const floor = await startChild('node-fixed-child.mjs');
await load(`${floor.evalUrl}/v1/evaluate`, {
  method: 'POST',
  duration: 1,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ key: 'flag-0', context: contexts }),
});
rows.push(
  row(
    'node:http alone, fixed JSON (floor: no framework, no evaluation)',
    await load(`${floor.evalUrl}/v1/evaluate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'flag-0', context: contexts }),
    }),
  ),
);
floor.child.kill('SIGTERM');

const ours = await startChild('eval-server-child.mjs');
const auth = { authorization: `Bearer ${ours.key}`, 'content-type': 'application/json' };
await load(`${ours.evalUrl}/v1/evaluate`, {
  method: 'POST',
  duration: 1,
  headers: auth,
  body: JSON.stringify({ key: 'flag-0', context: contexts }),
});
rows.push(
  row(
    'flagops POST /v1/evaluate, 1 key',
    await load(`${ours.evalUrl}/v1/evaluate`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ key: 'flag-0', context: contexts }),
    }),
  ),
);
rows.push(
  row(
    'flagops POST /v1/evaluate, 20 keys',
    await load(`${ours.evalUrl}/v1/evaluate`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ keys: twentyKeys, context: contexts }),
    }),
  ),
);
const snap = await fetch(`${ours.evalUrl}/v1/snapshot`, { headers: auth });
const etag = snap.headers.get('etag');
await snap.arrayBuffer();
const r304 = await load(`${ours.evalUrl}/v1/snapshot`, {
  headers: { authorization: auth.authorization, 'if-none-match': etag },
  expectBody: undefined,
});
rows.push(
  row('flagops GET /v1/snapshot → 304', {
    ...r304,
    non2xx: r304.statusCodeStats?.['304'] ? r304.non2xx - r304.statusCodeStats['304'].count : r304.non2xx,
  }),
);
ours.child.kill('SIGTERM');

console.log(`\nEvaluation server over loopback, ${seconds} s each, 50 connections, server on core 0, autocannon on core 1\n`);
console.log('| endpoint | requests/s | p50 ms | p99 ms | errors |\n|---|---|---|---|---|');
for (const r of rows) console.log(r);

// What metrics cost on the evaluation hot path: POST /v1/evaluate (1 key and 20 keys) against a service with
// metrics on and one with FLAGOPS_METRICS=off, in the same run, alternating rounds so that drift of the machine
// weighs on both alike. Server pinned to core 0, autocannon (50 keep-alive connections) to core 1.
// Run: npm run build && npm run bench -- metrics-overhead
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const here = path.dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
spawnSync('taskset', ['-cp', '1', String(process.pid)], { stdio: 'ignore' });

async function startChild(metrics) {
  const child = spawn('taskset', ['-c', '0', process.execPath, path.join(here, 'lib', 'eval-server-child.mjs')], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, FLAGOPS_METRICS: metrics },
  });
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`eval-server-child exited with ${code}`)));
  });
  return { child, ...JSON.parse(line) };
}

function load(server, body, duration = seconds) {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `${server.evalUrl}/v1/evaluate`,
        method: 'POST',
        headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
        body,
        connections: 50,
        duration,
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
  });
}

const context = { userId: 'user-42', attributes: { country: 'DE', appVersion: '2.3.1' } };
const bodies = {
  '1 key': JSON.stringify({ key: 'flag-0', context }),
  '20 keys': JSON.stringify({ keys: Array.from({ length: 20 }, (_, i) => `flag-${i}`), context }),
};
const servers = { on: await startChild('on'), off: await startChild('off') };
const totals = {};
for (const [name, body] of Object.entries(bodies)) {
  for (const s of Object.values(servers)) await load(s, body, 1); // warm-up
  totals[name] = { on: [], off: [] };
  for (let round = 0; round < rounds; round++) {
    // Alternate which goes first, so neither always runs on a warmer (or hotter) machine.
    for (const mode of round % 2 === 0 ? ['on', 'off'] : ['off', 'on']) {
      const r = await load(servers[mode], body);
      if (r.non2xx + r.errors > 0) throw new Error(`${mode}: ${r.non2xx} non-2xx, ${r.errors} errors`);
      totals[name][mode].push(r.requests.average);
    }
  }
}
const scrape = await fetch(`${servers.on.evalUrl}/metrics`).then((r) => r.text());
const counted = scrape
  .split('\n')
  .filter((l) => l.startsWith('flagops_evaluations_total{'))
  .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
for (const s of Object.values(servers)) s.child.kill('SIGTERM');

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(`\nPOST /v1/evaluate, metrics on vs FLAGOPS_METRICS=off, ${rounds} alternating rounds of ${seconds} s, 50 connections\n`);
console.log('| request | metrics on, requests/s | metrics off, requests/s | on / off |\n|---|---|---|---|');
for (const [name, { on, off }] of Object.entries(totals)) {
  const ratio = mean(on) / mean(off);
  console.log(
    `| ${name} | ${Math.round(mean(on)).toLocaleString('en')} | ${Math.round(mean(off)).toLocaleString('en')} | ${(ratio * 100).toFixed(1)} % |`,
  );
}
console.log(`\nevaluations counted by the metrics-on server (flagops_evaluations_total): ${counted.toLocaleString('en')}`);

// Git over HTTP beside evaluation: POST /v1/evaluate latency at a steady rate, first alone, then while six
// clients clone a big flags repository (lib/git-service-child.mjs: 10,000 flags and 100 commits of loose
// objects by default) over /git/<org>.git at once. The clients run at the lowest priority (as they would on
// other machines), so what competes with the evaluation server is the service's own git processes.
//
//   npm run build && npm run bench -- git-clones
//
// BENCH_SECONDS (baseline load, default 8), BENCH_RATE (evaluations/s, default 1000), BENCH_CLONES (6),
// BENCH_GIT_FLAGS and BENCH_GIT_COMMITS (repository size), FLAGOPS_GIT_MAX_PROCESSES (the service's cap).
import { spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const rate = Number(process.env.BENCH_RATE ?? 1000);
const clones = Number(process.env.BENCH_CLONES ?? 6);

const child = spawn(process.execPath, [path.join(here, 'lib', 'git-service-child.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] });
const started = performance.now();
const info = JSON.parse(
  await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`git-service-child exited with ${code}`)));
  }),
);
console.log(`seeded a ${info.repoMiB} MiB repository in ${Math.round((performance.now() - started) / 1000)} s`);

const body = JSON.stringify({ key: 'flag-0', context: { userId: 'user-42', attributes: { country: 'DE', appVersion: '2.3.1' } } });
const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
const target = new URL(`${info.evalUrl}/v1/evaluate`);

function evaluate() {
  return new Promise((resolve) => {
    const req = http.request(
      { host: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent, headers: { authorization: `Bearer ${info.sdkKey}`, 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
      },
    );
    req.on('error', () => resolve(false));
    req.end(body);
  });
}

/**
 * Open-loop load at `rate`/s until stop(): requests go out on schedule whether or not earlier ones answered,
 * and each one's latency counts from when it was due, so a stalled server shows as the wait it causes.
 */
function evaluations() {
  const samples = [];
  let errors = 0;
  let stopped = false;
  const begin = performance.now();
  let sent = 0;
  const pending = [];
  const tick = () => {
    if (stopped) return;
    const due = Math.floor(((performance.now() - begin) * rate) / 1000);
    for (; sent < due; sent++) {
      const at = begin + (sent * 1000) / rate;
      pending.push(
        evaluate().then((ok) => {
          if (ok) samples.push({ at, ms: performance.now() - at });
          else errors++;
        }),
      );
    }
    setTimeout(tick, 1);
  };
  tick();
  return {
    /** Latencies of the requests due between `from` and `to` (performance.now() times). */
    window: (from, to) => ({ latencies: samples.filter((s) => s.at >= from && s.at < to).map((s) => s.ms), errors }),
    stop: async () => {
      stopped = true;
      await Promise.all(pending);
    },
  };
}

function summary(latencies) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  return { n: sorted.length, p50: at(50), p99: at(99), max: sorted[sorted.length - 1] };
}

/**
 * The clones, run by one shell started ahead of time: it starts them all when told to (a line on its
 * stdin), so that no process is forked from this process while latencies are measured (a fork stalls the
 * forking process for milliseconds, which would be counted against the server). It prints each clone's seconds.
 */
function clonesOnSignal(url, dir, count) {
  const script = `read go; for i in $(seq 1 ${count}); do ( s=$(date +%s.%N); nice -n 19 git clone --quiet --bare "$1" "$2/clone-$i.git" || exit 1; e=$(date +%s.%N); echo "$s $e" ) & done; wait`;
  const shell = spawn('sh', ['-c', script, 'clones', url, dir], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' },
  });
  let out = '';
  shell.stdout.on('data', (chunk) => {
    out += chunk;
  });
  const done = new Promise((resolve, reject) =>
    shell.once('close', (code) => {
      const lines = out.trim().split('\n').filter(Boolean);
      if (code !== 0 || lines.length !== count) reject(new Error(`the clones failed (exit ${code})`));
      else resolve(lines.map((line) => line.split(' ').map(Number)).map(([s, e]) => e - s));
    }),
  );
  return { start: () => shell.stdin.write('go\n'), done };
}


const ms = (value) => value.toFixed(1);
const row = (name, r, seconds, extra = '') => `| ${name} | ${Math.round(r.n / seconds).toLocaleString('en')} | ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.max)} | ${extra} |`;

const work = mkdtempSync(path.join(tmpdir(), 'flagops-bench-clones-'));
const run = clonesOnSignal(`${info.controlUrl.replace('://', `://bench:${info.adminKey}@`)}/git/bench.git`, work, clones);
const load = evaluations();
await new Promise((resolve) => setTimeout(resolve, 2000)); // warm-up: connections open, code compiled
const aloneFrom = performance.now();
await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
const aloneTo = performance.now();

const clonesFrom = performance.now();
run.start();
const durations = await run.done;
const clonesTo = performance.now();
await load.stop();
rmSync(work, { recursive: true, force: true });
child.kill('SIGTERM');

const alone = load.window(aloneFrom, aloneTo);
const during = load.window(clonesFrom, clonesTo);
const wall = (clonesTo - clonesFrom) / 1000;
const sorted = durations.sort((a, b) => a - b);
console.log(`\nPOST /v1/evaluate at ${rate}/s (open loop, 10 keep-alive connections); ${clones} bare clones of the ${info.repoMiB} MiB repository at once\n`);
console.log('| load | evaluations/s | p50 ms | p99 ms | max ms | clones |\n|---|---|---|---|---|---|');
console.log(row(`evaluations alone, ${seconds} s`, summary(alone.latencies), seconds));
console.log(row(`evaluations while ${clones} clones run`, summary(during.latencies), wall, `all done in ${wall.toFixed(1)} s (each ${sorted[0].toFixed(1)}–${sorted[sorted.length - 1].toFixed(1)} s)`));
if (during.errors > 0) console.log(`\n${during.errors} evaluations failed`);

// Git over HTTP beside evaluation: POST /v1/evaluate latency at a steady rate, first alone, then while six
// clients clone a big flags repository (lib/git-service-child.mjs: 10,000 flags and 100 commits of loose
// objects by default) over /git/<org>.git at once, then, as a control, while six clones of the same
// repository on disk run without the service. The clients run at the lowest priority (as they would on
// other machines), so what competes with the evaluation server is the service's own git processes; the
// control shows what the same git work costs the machine anyway. "service CPU" is the service process's own
// CPU time per second of each window (Linux: /proc), which the machine's other work hardly changes.
//
//   npm run build && npm run bench -- git-clones
//
// BENCH_SECONDS (baseline load, default 8), BENCH_RATE (evaluations/s, default 1000), BENCH_CLONES (6),
// BENCH_GIT_FLAGS and BENCH_GIT_COMMITS (repository size), FLAGOPS_GIT_MAX_PROCESSES (the service's cap).
// To compare with another version: BENCH_BEFORE_DIST (that version's built dist/ directory) and
// BENCH_ROUNDS (default 1): each round runs this version, then that one, each with its own service and
// repository, and prints each run's table with the machine's load average around it. BENCH_PROF=<dir>: the
// service process writes a CPU profile (node --cpu-prof) there.
//
//   git worktree add /tmp/before HEAD~1 && ln -s "$PWD/node_modules" /tmp/before/ && (cd /tmp/before && npm run build)
//   BENCH_BEFORE_DIST=/tmp/before/dist BENCH_ROUNDS=3 npm run bench -- git-clones
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const rate = Number(process.env.BENCH_RATE ?? 1000);
const clones = Number(process.env.BENCH_CLONES ?? 6);

const body = JSON.stringify({ key: 'flag-0', context: { userId: 'user-42', attributes: { country: 'DE', appVersion: '2.3.1' } } });

/** Starts a service with the big repository (lib/git-service-child.mjs) from `dist` (default: this version's). */
async function startBenchService(dist) {
  const env = dist ? { ...process.env, BENCH_DIST: dist } : process.env;
  const child = spawn(
    process.execPath,
    [
      '--expose-gc',
      ...(process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROF] : []),
      path.join(here, 'lib', 'git-service-child.mjs'),
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env,
    },
  );
  const started = performance.now();
  const info = JSON.parse(
    await new Promise((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`git-service-child exited with ${code}`)));
    }),
  );
  console.log(`seeded a ${info.repoMiB} MiB repository in ${Math.round((performance.now() - started) / 1000)} s`);
  const stopped = new Promise((resolve) => child.once('exit', resolve));
  return {
    info,
    pid: child.pid,
    stop: () => {
      child.kill('SIGTERM');
      return stopped;
    },
  };
}

function evaluate(info, agent, target) {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        agent,
        headers: { authorization: `Bearer ${info.sdkKey}`, 'content-type': 'application/json' },
      },
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
function evaluations(info) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
  const target = new URL(`${info.evalUrl}/v1/evaluate`);
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
        evaluate(info, agent, target).then((ok) => {
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
      agent.destroy();
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
  // --no-local: a clone of a path packs the objects as one over HTTP does, instead of hard-linking them.
  const script = `read go; for i in $(seq 1 ${count}); do ( s=$(date +%s.%N); nice -n 19 git clone --quiet --bare --no-local "$1" "$2/clone-$i.git" || exit 1; e=$(date +%s.%N); echo "$s $e" ) & done; wait`;
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

/**
 * CPU seconds a process has used (user and system, /proc/<pid>/stat; Linux). The service's CPU per second of
 * a window shows what the clones cost its own process, whatever else the machine runs meanwhile.
 */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

const ms = (value) => value.toFixed(1);
const row = (name, r, seconds, cpu, extra = '') =>
  `| ${name} | ${Math.round(r.n / seconds).toLocaleString('en')} | ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.max)} | ${Math.round((cpu / seconds) * 100)} % | ${extra} |`;

/** Runs the clones of `url` under the load and returns the latencies of that window, the service's CPU and the clone times. */
async function clonesUnderLoad(load, url, pid) {
  const work = mkdtempSync(path.join(tmpdir(), 'flagops-bench-clones-'));
  const run = clonesOnSignal(url, work, clones);
  await new Promise((resolve) => setTimeout(resolve, 1000)); // the shell is up before the window opens
  const from = performance.now();
  const cpuFrom = cpuSeconds(pid);
  run.start();
  const durations = (await run.done).sort((a, b) => a - b);
  const to = performance.now();
  const cpu = cpuSeconds(pid) - cpuFrom;
  rmSync(work, { recursive: true, force: true });
  return { window: load.window(from, to), seconds: (to - from) / 1000, cpu, durations };
}

const oneMinuteLoad = () => loadavg()[0].toFixed(1);

/** One run: evaluations alone, while the clones run over HTTP, while the control clones run; prints the table. */
async function measure(dist) {
  const service = await startBenchService(dist);
  const { info } = service;
  const load = evaluations(info);
  await new Promise((resolve) => setTimeout(resolve, 2000)); // warm-up: connections open, code compiled
  const loadAtStart = oneMinuteLoad();
  const aloneFrom = performance.now();
  const aloneCpuFrom = cpuSeconds(service.pid);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const alone = load.window(aloneFrom, performance.now());
  const aloneCpu = cpuSeconds(service.pid) - aloneCpuFrom;
  const gitUrl = `${info.controlUrl.replace('://', `://bench:${info.adminKey}@`)}/git/bench.git`;
  const served = await clonesUnderLoad(load, gitUrl, service.pid);
  // The same git work on the same machine, but not through the service: what the machine itself adds.
  const control = await clonesUnderLoad(load, info.gitdir, service.pid);
  await load.stop();
  await service.stop();

  const clonesCell = (run) =>
    `all done in ${run.seconds.toFixed(1)} s (each ${run.durations[0].toFixed(1)}–${run.durations[run.durations.length - 1].toFixed(1)} s)`;
  console.log(
    `\nPOST /v1/evaluate at ${rate}/s (open loop, 10 keep-alive connections); ${clones} bare clones of the ${info.repoMiB} MiB repository at once\n`,
  );
  console.log('| load | evaluations/s | p50 ms | p99 ms | max ms | service CPU | clones |\n|---|---|---|---|---|---|---|');
  console.log(row(`evaluations alone, ${seconds} s`, summary(alone.latencies), seconds, aloneCpu));
  console.log(
    row(
      `… while ${clones} clones run over /git/bench.git`,
      summary(served.window.latencies),
      served.seconds,
      served.cpu,
      clonesCell(served),
    ),
  );
  console.log(
    row(
      `… while ${clones} clones of the repository on disk run (control: not through the service)`,
      summary(control.window.latencies),
      control.seconds,
      control.cpu,
      clonesCell(control),
    ),
  );
  const { errors } = load.window(0, Number.POSITIVE_INFINITY);
  if (errors > 0) console.log(`\n${errors} evaluations failed`);
  console.log(`\nload average (1 min): ${loadAtStart} when the measurement began, ${oneMinuteLoad()} at its end`);
}

const beforeDist = process.env.BENCH_BEFORE_DIST;
const versions = [{ name: 'this version' }, ...(beforeDist ? [{ name: 'before', dist: beforeDist }] : [])];
const rounds = Number(process.env.BENCH_ROUNDS ?? 1);
for (let round = 1; round <= rounds; round++) {
  for (const { name, dist } of versions) {
    console.log(`\n--- round ${round} of ${rounds}: ${name}${dist ? ` (${dist})` : ''}`);
    await measure(dist);
  }
}

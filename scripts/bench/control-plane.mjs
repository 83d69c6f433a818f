// Control-plane benchmark, over real HTTP against the whole service started in this process:
//   - config updates per second (PUT .../config), one client in sequence and 8 concurrent clients;
//   - kill latency p50/p99 over 100 kills (POST .../kill answers only once evaluation serves valueOff).
// Every request is one durable commit (fsync) plus the evaluation server catching up, as in production.
//
//   npx tsc -p tsconfig.build.json && node scripts/bench/control-plane.mjs [--flags 100] [--seconds 3] [--kills 100] [--json]
//
// Runs against the compiled dist/ (FLAGOPS_DIST overrides where it is), on free loopback ports, in a temp
// data dir it removes after.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    flags: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '3' },
    kills: { type: 'string', default: '100' },
    json: { type: 'boolean', default: false },
  },
});
const FLAGS = Number(values.flags);
const SECONDS = Number(values.seconds);
const KILLS = Number(values.kills);
const CONCURRENCY = 8;

const dist = resolve(process.env.FLAGOPS_DIST ?? new URL('../../dist', import.meta.url).pathname);
const { startService } = await import(pathToFileURL(join(dist, 'service.js')).href);
const { silentLogger } = await import(pathToFileURL(join(dist, 'foundations/log/logger.js')).href);

const ADMIN = 'svc_adm_benchbenchbenchbenchbench0001';
const dataDir = mkdtempSync(join(os.tmpdir(), 'flagops-bench-cp-'));
const loadBefore = os.loadavg()[0];
const service = await startService(
  {
    dataDir,
    host: '127.0.0.1',
    controlPort: 0,
    evalPort: 0,
    bootstrapKeys: [{ org: 'bench', key: ADMIN }],
    planProjectLimit: 25,
    logLevel: 'error',
  },
  silentLogger,
);

async function call(method, path, body) {
  const res = await fetch(`${service.controlUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const round = (n) => Math.round(n * 10) / 10;
function summary(latencies, elapsedMs) {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    ops: latencies.length,
    perSecond: round((latencies.length / elapsedMs) * 1000),
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
  };
}

/** `clients` loops, each updating its own flags round-robin, for SECONDS. */
async function configUpdates(flags, clients) {
  const latencies = [];
  const deadline = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      const mine = flags.filter((_, i) => i % clients === c);
      for (let n = 0; performance.now() < deadline; n++) {
        const flag = mine[n % mine.length];
        const t = performance.now();
        await call('PUT', `/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: (n * 7 + c) % 101 });
        latencies.push(performance.now() - t);
      }
    }),
  );
  return summary(latencies, performance.now() - started);
}

try {
  const project = await call('POST', '/api/v1/projects', { name: 'Bench', slug: 'bench' });
  const flags = [];
  for (let i = 0; i < Math.max(FLAGS, KILLS); i++)
    flags.push(await call('POST', `/api/v1/projects/${project.id}/flags`, { key: `flag-${i}` }));
  // Warm-up: JIT and caches, not measured.
  for (let i = 0; i < 20; i++) await call('PUT', `/api/v1/flags/${flags[i % flags.length].id}/environments/dev/config`, { rolloutPct: i });

  const sequential = await configUpdates(flags.slice(0, FLAGS), 1);
  const concurrent = await configUpdates(flags.slice(0, FLAGS), CONCURRENCY);

  const killLatencies = [];
  const killStarted = performance.now();
  for (let i = 0; i < KILLS; i++) {
    const t = performance.now();
    const killed = await call('POST', `/api/v1/flags/${flags[i].id}/environments/staging/kill`);
    killLatencies.push(performance.now() - t);
    if (!killed.environments.staging.killed) throw new Error('kill did not kill');
  }
  const kills = summary(killLatencies, performance.now() - killStarted);

  const result = {
    flags: Math.max(FLAGS, KILLS),
    seconds: SECONDS,
    loadAverageBefore: round(loadBefore),
    loadAverageAfter: round(os.loadavg()[0]),
    cpus: os.cpus().length,
    configUpdatesSequential: sequential,
    [`configUpdates${CONCURRENCY}Clients`]: concurrent,
    kills,
  };
  if (values.json) console.log(JSON.stringify(result));
  else {
    console.log(
      `control plane: ${result.flags} flags in one project, ${result.cpus} cpus, load average ${result.loadAverageBefore} before / ${result.loadAverageAfter} after`,
    );
    console.log(
      `  config updates, 1 client:   ${sequential.perSecond}/s  p50 ${sequential.p50Ms} ms  p99 ${sequential.p99Ms} ms  (${sequential.ops} in ${SECONDS} s)`,
    );
    console.log(
      `  config updates, ${CONCURRENCY} clients:  ${concurrent.perSecond}/s  p50 ${concurrent.p50Ms} ms  p99 ${concurrent.p99Ms} ms  (${concurrent.ops} in ${SECONDS} s)`,
    );
    console.log(`  kills (sequential):         p50 ${kills.p50Ms} ms  p99 ${kills.p99Ms} ms  (${kills.ops} kills, ${kills.perSecond}/s)`);
  }
} finally {
  await service.stop();
  rmSync(dataDir, { recursive: true, force: true });
}

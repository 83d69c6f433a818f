// Guarded rollouts: time from a metric crossing its guard's bound to the kill being served.
// A real Prometheus (/usr/bin/prometheus, scraping every second) scrapes an exporter this script controls; the
// service (FLAGOPS_PROMETHEUS_URL) watches BENCH_RUNS guarded rollouts one after another, each guard checked
// every BENCH_GUARD_INTERVAL seconds. For each, the exporter's value is raised above the bound at a random
// moment and POST /v1/evaluate is polled every 5 ms until it answers `killed`. The goal: under interval + 1 s
// (a scrape of up to 1 s before Prometheus has the value, then up to one interval before the next check).
// Run: npm run build && npm run bench -- guard-stop
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { silentLogger } from '../../dist/foundations/log/logger.js';
import { startService } from '../../dist/service.js';
import { MetricsExporter, PROMETHEUS_MISSING, PrometheusServer } from '../../test/helpers/prometheus.mjs';
import { summarize } from './lib/seed.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const INTERVAL = Number(process.env.BENCH_GUARD_INTERVAL ?? 1);
const ADMIN = 'svc_adm_benchbenchbenchbench00000001';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

if (PROMETHEUS_MISSING) {
  console.log(PROMETHEUS_MISSING.replace('the guarded rollout tests were', 'this benchmark was'));
  process.exit(0);
}

const exporter = await MetricsExporter.start();
const prometheus = await PrometheusServer.start([`127.0.0.1:${exporter.port}`]);
const dataDir = await mkdtemp(path.join(tmpdir(), 'flagops-bench-guards-'));
const service = await startService(
  {
    dataDir,
    host: '127.0.0.1',
    controlPort: 0,
    evalPort: 0,
    bootstrapKeys: [{ org: 'bench', key: ADMIN }],
    planProjectLimit: 25,
    logLevel: 'error',
    prometheusUrl: prometheus.url,
  },
  silentLogger,
);

const api = async (method, url, body) => {
  const res = await fetch(`${service.controlUrl}/api/v1${url}`, {
    method,
    headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return res.json();
};

try {
  const project = await api('POST', '/projects', { name: 'Shop', slug: 'shop' });
  const sdk = await api('POST', '/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' });
  const evaluate = async (key) => {
    const res = await fetch(`${service.evalUrl}/v1/evaluate`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${sdk.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ key, context: { userId: 'u' } }),
    });
    return (await res.json())[key];
  };
  const samples = [];
  for (let i = 0; i < RUNS; i++) {
    const key = `guarded-${i}`;
    const series = `checkout_error_ratio{flag="${key}"}`;
    exporter.set(series, 0.01);
    await prometheus.waitFor(series, (v) => v === 0.01);
    const flag = await api('POST', `/projects/${project.id}/flags`, { key });
    const guard = { query: series, max: 0.05, intervalSeconds: INTERVAL };
    const at = new Date(Date.now() + 3_600_000).toISOString();
    await api('PUT', `/flags/${flag.id}/environments/prod/config`, {
      enabled: true,
      rolloutPct: 10,
      schedule: [{ at, set: { rolloutPct: 100 }, guard }],
    });
    // Watched and passing: then the crossing lands at a random point of the scrape and check cycles.
    for (;;) {
      const { check } = await api('GET', `/flags/${flag.id}/environments/prod/guard-check`);
      if (check?.result === 'pass') break;
      await sleep(50);
    }
    await sleep(Math.random() * 1000 * Math.max(1, INTERVAL));
    exporter.set(series, 0.5);
    const started = performance.now();
    for (;;) {
      if ((await evaluate(key)).reason === 'killed') break;
      if (performance.now() - started > 60_000) throw new Error(`${key} not killed within 60 s`);
      await sleep(5);
    }
    samples.push(performance.now() - started);
  }
  const s = summarize(samples);
  const sec = (ms) => `${(ms / 1000).toFixed(2)} s`;
  console.log(`\n${s.n} guarded rollouts, guard checked every ${INTERVAL} s, Prometheus scraping every 1 s:`);
  console.log(`  metric above its bound → evaluation answers killed: p50 ${sec(s.p50)}, p99 ${sec(s.p99)}, max ${sec(s.max)}`);
  console.log(`  goal: under interval + 1 s = ${INTERVAL + 1} s: ${s.max < (INTERVAL + 1) * 1000 ? 'met' : 'NOT met'} (max)`);
} finally {
  await service.stop();
  await prometheus.stop();
  await exporter.close();
  await rm(dataDir, { recursive: true, force: true });
}

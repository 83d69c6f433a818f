// Kill propagation to evaluation replicas: a control plane plus three replicas on loopback. Each of 50 kills
// (alternating with a clear, which is a new version too) is timed from sending POST .../kill until every
// replica's /v1/stream has announced the new version — the moment an SDK following that replica learns of it.
//
//   npm run build && node scripts/bench/replica.mjs
//   node node_modules/vite-node/vite-node.mjs scripts/bench/replica.mjs -- --src    (from source, no build)
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { followVersions, percentile } from './lib/stream-versions.mjs';

const fromSource = process.argv.includes('--src');
const root = new URL(fromSource ? '../../src' : '../../dist', import.meta.url).href;
const ext = fromSource ? 'ts' : 'js';
const { startService } = await import(`${root}/service.${ext}`);
const { startReplica } = await import(`${root}/apps/replica/start-replica.${ext}`);
const { generateKey } = await import(`${root}/foundations/auth/key-format.${ext}`);
const { silentLogger } = await import(`${root}/foundations/log/logger.${ext}`);

const KILLS = 50;
const REPLICAS = 3;
const dirs = [];
const tmp = async (name) => {
  const dir = await mkdtemp(join(tmpdir(), name));
  dirs.push(dir);
  return dir;
};

const admin = generateKey('admin');
const service = await startService(
  {
    dataDir: await tmp('flagops-bench-cp-'),
    host: '127.0.0.1',
    controlPort: 0,
    evalPort: 0,
    bootstrapKeys: [{ org: 'acme', key: admin }],
    planProjectLimit: 25,
    logLevel: 'error',
  },
  silentLogger,
);
const api = async (method, path, body) => {
  const res = await fetch(`${service.controlUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${admin}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return res.json();
};
const project = await api('POST', '/api/v1/projects', { name: 'Bench', slug: 'bench' });
const flag = await api('POST', `/api/v1/projects/${project.id}/flags`, { key: 'checkout' });
await api('PUT', `/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 });
const sdk = (await api('POST', '/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).key;

const replicas = [];
for (let i = 0; i < REPLICAS; i++) {
  replicas.push(
    await startReplica({
      upstreams: [service.controlUrl],
      token: admin,
      host: '127.0.0.1',
      port: 0,
      dataDir: await tmp('flagops-bench-replica-'),
      logger: silentLogger,
    }),
  );
}

const streams = await Promise.all(replicas.map((r) => followVersions(r.url, sdk)));
await new Promise((resolve) => setTimeout(resolve, 200));
const all = [];
const each = [];
for (let i = 0; i < KILLS; i++) {
  const version = Math.max(...streams.map((s) => s.current())) + 1;
  const started = performance.now();
  const arrivals = streams.map((s) => s.next(version));
  await api('POST', `/api/v1/flags/${flag.id}/environments/prod/kill`);
  const times = (await Promise.all(arrivals)).map((t) => t - started);
  all.push(Math.max(...times));
  each.push(...times);
  await api('PUT', `/api/v1/flags/${flag.id}/environments/prod/config`, { clearKill: true });
  const cleared = Math.max(...streams.map((s) => s.current())) + 1;
  await Promise.all(streams.map((s) => s.next(cleared)));
}

const pct = percentile;
const ms = (v) => `${v.toFixed(1)} ms`;
console.log(
  `kill → announced on every replica's /v1/stream (${KILLS} kills, ${REPLICAS} replicas, ${cpus().length} cores, load ${loadavg()[0].toFixed(2)})`,
);
console.log(`  all three: p50 ${ms(pct(all, 50))}  p99 ${ms(pct(all, 99))}  max ${ms(Math.max(...all))}`);
console.log(`  each one:  p50 ${ms(pct(each, 50))}  p99 ${ms(pct(each, 99))}`);

for (const s of streams) await s.close();
for (const r of replicas) await r.stop();
await service.stop();
await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));

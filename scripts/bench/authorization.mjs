// Authorization cost per request, over real HTTP against the whole service started in this process: 1,000
// agent keys limited to one project (and two environments) against 1,000 keys without limits, in the same run,
// in alternating slices (unlimited, limited, limited, unlimited, ...), so the machine's noise falls on both.
//   - control plane: GET /api/v1/projects/:id/flags and GET /api/v1/flags/:id, each request with the next key of
//     the pool (every key is used, so 1,000 principals and their filtered views are live), p50/p99;
//   - evaluation: POST /v1/evaluate with an sdk key, in the same slices, p50/p99 (the evaluation path reads no
//     scope; its figures should not move with the control plane's keys).
// Goal (docs/performance.md): control-plane p99 with limited keys within 10 % of unlimited keys; evaluation unchanged.
//
//   npm run build && node scripts/bench/authorization.mjs [--keys 1000] [--projects 20] [--slices 8] [--requests 400] [--concurrency 4] [--json]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    keys: { type: 'string', default: '1000' },
    projects: { type: 'string', default: '20' },
    slices: { type: 'string', default: '8' },
    requests: { type: 'string', default: '400' },
    concurrency: { type: 'string', default: '4' },
    json: { type: 'boolean', default: false },
  },
});
const KEYS = Number(values.keys);
const PROJECTS = Number(values.projects);
const SLICES = Number(values.slices);
const REQUESTS = Number(values.requests);
const CONCURRENCY = Number(values.concurrency);

const dist = resolve(process.env.FLAGOPS_DIST ?? new URL('../../dist', import.meta.url).pathname);
const { startService } = await import(pathToFileURL(join(dist, 'service.js')).href);
const { silentLogger } = await import(pathToFileURL(join(dist, 'foundations/log/logger.js')).href);

const ADMIN = 'svc_adm_benchbenchbenchbenchbench0001';
const dataDir = mkdtempSync(join(os.tmpdir(), 'flagops-bench-authz-'));
const loadBefore = os.loadavg()[0];
const service = await startService(
  {
    dataDir,
    host: '127.0.0.1',
    controlPort: 0,
    evalPort: 0,
    bootstrapKeys: [{ org: 'bench', key: ADMIN }],
    planProjectLimit: 100,
    logLevel: 'error',
  },
  silentLogger,
);

async function call(base, key, method, path, body) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}
const admin = (method, path, body) => call(service.controlUrl, ADMIN, method, path, body);

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const round = (n) => Math.round(n * 100) / 100;
const stats = (latencies) => {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { requests: sorted.length, p50Ms: round(percentile(sorted, 50)), p99Ms: round(percentile(sorted, 99)) };
};

// An organisation of PROJECTS projects of 10 flags each; the limited keys see the first project only.
const projects = [];
for (let p = 0; p < PROJECTS; p++) {
  const project = await admin('POST', '/api/v1/projects', { name: `P${p}`, slug: `p${p}` });
  const flags = [];
  for (let f = 0; f < 10; f++) flags.push(await admin('POST', `/api/v1/projects/${project.id}/flags`, { key: `flag-${f}` }));
  projects.push({ project, flags });
}
const target = projects[0];
const makeKeys = async (body) => {
  const keys = [];
  for (let i = 0; i < KEYS; i++) keys.push((await admin('POST', '/api/v1/keys', { kind: 'agent', name: `k${i}`, ...body })).key);
  return keys;
};
const pools = {
  unlimited: await makeKeys({}),
  limited: await makeKeys({
    projects: [target.project.id],
    environments: ['dev', 'staging'],
    expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
  }),
};
const sdk = (await admin('POST', '/api/v1/keys', { kind: 'sdk', projectId: target.project.id, environment: 'prod' })).key;

/** REQUESTS control-plane reads by keys of `pool`, round-robin, CONCURRENCY at a time; and as many evaluations. */
async function slice(pool, cursor) {
  const control = [];
  const evaluation = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        const i = next++;
        const key = pool[(cursor + i) % pool.length];
        const path =
          i % 2 === 0 ? `/api/v1/projects/${target.project.id}/flags` : `/api/v1/flags/${target.flags[i % target.flags.length].id}`;
        let t = performance.now();
        await call(service.controlUrl, key, 'GET', path);
        control.push(performance.now() - t);
        t = performance.now();
        await call(service.evalUrl, sdk, 'POST', '/v1/evaluate', { key: 'flag-1', context: { userId: `u${i}` } });
        evaluation.push(performance.now() - t);
      }
    }),
  );
  return { control, evaluation };
}

// Warm-up: every key authenticates once (its HMAC is computed once, then cached), and the JIT settles.
for (const name of ['unlimited', 'limited']) for (let c = 0; c < KEYS; c += REQUESTS) await slice(pools[name], c);

const results = { unlimited: { control: [], evaluation: [] }, limited: { control: [], evaluation: [] } };
const order = [];
for (let s = 0; s < SLICES; s++) order.push(...(s % 2 === 0 ? ['unlimited', 'limited'] : ['limited', 'unlimited']));
const sliceP99 = { unlimited: [], limited: [] };
for (const [i, name] of order.entries()) {
  const r = await slice(pools[name], (i * REQUESTS) % KEYS);
  results[name].control.push(...r.control);
  results[name].evaluation.push(...r.evaluation);
  sliceP99[name].push(stats(r.control).p99Ms);
}

await service.stop();
rmSync(dataDir, { recursive: true, force: true });

const figures = {
  keysPerPool: KEYS,
  projects: PROJECTS,
  controlPlane: { unlimited: stats(results.unlimited.control), limited: stats(results.limited.control) },
  evaluation: { withUnlimitedSlices: stats(results.unlimited.evaluation), withLimitedSlices: stats(results.limited.evaluation) },
  sliceP99Ms: sliceP99,
  loadAverage: { before: round(loadBefore), after: round(os.loadavg()[0]) },
};
const cp = figures.controlPlane;
figures.controlPlaneP99Ratio = round(cp.limited.p99Ms / cp.unlimited.p99Ms);
figures.controlPlaneP50Ratio = round(cp.limited.p50Ms / cp.unlimited.p50Ms);
if (values.json) console.log(JSON.stringify(figures, null, 2));
else {
  console.log(
    `${KEYS} keys per pool, ${PROJECTS} projects × 10 flags, ${SLICES} slices × ${REQUESTS} requests each side, ${CONCURRENCY} at a time`,
  );
  console.log(`control plane  unlimited keys: p50 ${cp.unlimited.p50Ms} ms, p99 ${cp.unlimited.p99Ms} ms`);
  console.log(
    `control plane  limited keys:   p50 ${cp.limited.p50Ms} ms, p99 ${cp.limited.p99Ms} ms  (p50 ×${figures.controlPlaneP50Ratio}, p99 ×${figures.controlPlaneP99Ratio})`,
  );
  const ev = figures.evaluation;
  console.log(`evaluation     beside unlimited: p50 ${ev.withUnlimitedSlices.p50Ms} ms, p99 ${ev.withUnlimitedSlices.p99Ms} ms`);
  console.log(`evaluation     beside limited:   p50 ${ev.withLimitedSlices.p50Ms} ms, p99 ${ev.withLimitedSlices.p99Ms} ms`);
  console.log(`slice p99s (ms): unlimited ${sliceP99.unlimited.join(', ')}; limited ${sliceP99.limited.join(', ')}`);
  console.log(`load average: ${figures.loadAverage.before} before, ${figures.loadAverage.after} after`);
}

// Budgets benchmark: what checking a budget adds to a config update, over real HTTP against the whole service
// started in this process.
//   - `history` agent config updates are made in prod first, with no budget set (nothing is checked or cached);
//     then a budget is set, and the first agent update into prod reads the whole last hour (every counted
//     change's impact, computed from its commit): "cold";
//   - then `rounds` agent updates into prod (budgeted, checked) and into staging (no budget), interleaved in the
//     same run, each moving 0.01 % of users: goal budgeted/unbudgeted ≤ 1.25 at the median.
//
//   npm run build && node scripts/bench/budgets.mjs [--flags 200] [--history 300] [--rounds 60] [--json]
//
// Runs against the compiled dist/ (FLAGOPS_DIST overrides where it is), in a temp dir it removes after.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { summarize } from './lib/seed.mjs';

const { values } = parseArgs({
  options: {
    flags: { type: 'string', default: '200' },
    history: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '60' },
    json: { type: 'boolean', default: false },
  },
});
const FLAGS = Number(values.flags);
const HISTORY = Number(values.history);
const ROUNDS = Number(values.rounds);
const dist = resolve(process.env.FLAGOPS_DIST ?? new URL('../../dist', import.meta.url).pathname);
const ms = (v) => Math.round(v * 10) / 10;

const { startService } = await import(pathToFileURL(join(dist, 'service.js')).href);
const { silentLogger } = await import(pathToFileURL(join(dist, 'foundations/log/logger.js')).href);
const ADMIN = 'svc_adm_benchbenchbenchbenchbench0001';
const AGENT = 'svc_agt_benchbenchbenchbenchbench0002';
const dataDir = mkdtempSync(join(os.tmpdir(), 'flagops-bench-budgets-'));
const service = await startService(
  {
    dataDir,
    host: '127.0.0.1',
    controlPort: 0,
    evalPort: 0,
    bootstrapKeys: [
      { org: 'bench', key: ADMIN },
      { org: 'bench', key: AGENT },
    ],
    planProjectLimit: 25,
    logLevel: 'error',
  },
  silentLogger,
);
const call = async (key, method, path, body) => {
  const res = await fetch(`${service.controlUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
  return data;
};
const results = {};
try {
  const project = await call(ADMIN, 'POST', '/api/v1/projects', { name: 'Bench', slug: 'bench' });
  const flags = [];
  for (let i = 0; i < FLAGS; i++) {
    const flag = await call(ADMIN, 'POST', `/api/v1/projects/${project.id}/flags`, { key: `f-${i}` });
    for (const env of ['prod', 'staging'])
      await call(ADMIN, 'PUT', `/api/v1/flags/${flag.id}/environments/${env}/config`, { enabled: true, rolloutPct: 10 });
    flags.push(flag);
  }
  // What the agent changed in prod this hour, before any budget: each a commit the ledger reads later.
  const pct = new Map(flags.map((f) => [f.id, 10]));
  const step = (flag) => {
    const next = Math.round((pct.get(flag.id) + 0.01) * 100) / 100;
    pct.set(flag.id, next);
    return next;
  };
  for (let i = 0; i < HISTORY; i++) {
    const flag = flags[i % FLAGS];
    await call(AGENT, 'PUT', `/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: step(flag) });
  }
  await call(ADMIN, 'PATCH', `/api/v1/projects/${project.id}`, { budgets: { prod: { movedPctPerHour: 100, actors: ['agent'] } } });
  let started = performance.now();
  await call(AGENT, 'PUT', `/api/v1/flags/${flags[0].id}/environments/prod/config`, { rolloutPct: step(flags[0]) });
  const cold = performance.now() - started;
  const budgeted = [];
  const unbudgeted = [];
  const stagingPct = new Map(flags.map((f) => [f.id, 10]));
  for (let i = 0; i < ROUNDS; i++) {
    const flag = flags[(i + 1) % FLAGS];
    started = performance.now();
    await call(AGENT, 'PUT', `/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: step(flag) });
    budgeted.push(performance.now() - started);
    const staging = Math.round((stagingPct.get(flag.id) + 0.01) * 100) / 100;
    stagingPct.set(flag.id, staging);
    started = performance.now();
    await call(AGENT, 'PUT', `/api/v1/flags/${flag.id}/environments/staging/config`, { rolloutPct: staging });
    unbudgeted.push(performance.now() - started);
  }
  const use = await call(ADMIN, 'GET', `/api/v1/projects/${project.id}/budgets`);
  const b = summarize(budgeted);
  const u = summarize(unbudgeted);
  const ratio = Math.round((b.p50 / u.p50) * 100) / 100;
  Object.assign(results, {
    flags: FLAGS,
    history: HISTORY,
    rounds: ROUNDS,
    countedInWindow: use.budgets[0].changes.length,
    coldCheckUpdateMs: ms(cold),
    budgetedP50Ms: ms(b.p50),
    budgetedP99Ms: ms(b.p99),
    unbudgetedP50Ms: ms(u.p50),
    unbudgetedP99Ms: ms(u.p99),
    ratio,
  });
  if (!values.json) {
    console.log(
      `first budgeted update after ${HISTORY} counted changes in the hour (cold ledger): ${ms(cold)} ms; ${use.budgets[0].changes.length} changes counted at the end`,
    );
    console.log(
      `agent config update, ${ROUNDS} each, interleaved: budgeted p50 ${ms(b.p50)} ms (p99 ${ms(b.p99)}), unbudgeted p50 ${ms(u.p50)} ms (p99 ${ms(u.p99)}); ratio ${ratio} (goal ≤ 1.25)`,
    );
  }
} finally {
  await service.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
if (values.json) console.log(JSON.stringify(results));

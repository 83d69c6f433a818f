// Scheduled steps and triggers, through the whole service:
// 1. 1,000 flags whose prod schedules have a step due at the same second: time from that second until the
//    evaluation server serves every step, and a check that each step is one commit, applied once.
// 2. A trigger's URL called over HTTP (an Alertmanager payload) → the evaluation API answers `killed`.
// Run: npm run build && npm run bench -- schedules-and-triggers
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { silentLogger } from '../../dist/foundations/log/logger.js';
import { serializeRepositoryFile } from '../../dist/foundations/repository/serialize-file.js';
import { parseCommitMessage, readFlagopsTrailers } from '../../dist/foundations/storage/index.js';
import { startService } from '../../dist/service.js';
import { benchActor, projectWithFlags, summarize } from './lib/seed.mjs';

const FLAGS = Number(process.env.BENCH_FLAGS ?? 1_000);
const TRIGGERS = Number(process.env.BENCH_TRIGGERS ?? 200);
const ADMIN = 'svc_adm_benchbenchbenchbench00000001';

async function withService(fn) {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'flagops-bench-schedules-'));
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
  try {
    return await fn(service);
  } finally {
    await service.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function scheduledSteps() {
  return withService(async (service) => {
    const repo = await service.repos.get('bench');
    const due = Math.ceil((Date.now() + 5_000) / 1000) * 1000;
    const at = new Date(due).toISOString();
    const files = projectWithFlags('shop', FLAGS).map((file) => {
      const where = /^projects\/shop\/environments\/prod\/(flag-\d+)\.yaml$/.exec(file.path);
      if (!where) return file;
      const value = {
        enabled: true,
        rolloutPct: 1,
        valueOn: true,
        valueOff: false,
        version: 1,
        rules: [],
        schedule: [{ at, set: { rolloutPct: 77 } }],
      };
      return { path: file.path, content: serializeRepositoryFile({ kind: 'config', value }) };
    });
    const seeded = await repo.update(() => ({
      changes: files,
      meta: { action: 'change', summary: 'seed', actor: benchActor },
      result: null,
    }));
    await service.holder.served('bench');
    if (Date.now() >= due) throw new Error('seeding took longer than the 5 s before the steps fall due; lower BENCH_FLAGS');
    await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
    const started = performance.now();
    for (;;) {
      const view = service.holder.view('bench', 'prj_shop', 'prod');
      let served = 0;
      for (let i = 0; i < FLAGS; i++) if (view.flags[`flag-${i}`].rolloutPct === 77) served++;
      if (served === FLAGS) break;
      if (performance.now() - started > 60_000) throw new Error(`only ${served} of ${FLAGS} steps served after 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const servedAfter = performance.now() - started;
    const log = await repo.firstParentLog({ from: await repo.head(), until: seeded.commit });
    const applied = new Map();
    for (const commit of log) {
      const trailers = readFlagopsTrailers(parseCommitMessage(commit.message).trailers);
      if (trailers?.action !== 'scheduled_change') throw new Error(`unexpected commit ${commit.oid}: ${commit.message}`);
      applied.set(trailers.flag, (applied.get(trailers.flag) ?? 0) + 1);
    }
    const once = [...applied.values()].every((n) => n === 1) && applied.size === FLAGS;
    return { servedAfter, commits: log.length, once };
  });
}

async function triggerCalls() {
  return withService(async (service) => {
    const repo = await service.repos.get('bench');
    await repo.update(() => ({
      changes: projectWithFlags('shop', 2 * TRIGGERS),
      meta: { action: 'change', summary: 'seed', actor: benchActor },
      result: null,
    }));
    await service.holder.served('bench');
    const api = `${service.controlUrl}/api/v1`;
    const headers = { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' };
    const sdk = await (
      await fetch(`${api}/keys`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ kind: 'sdk', projectId: 'prj_shop', environment: 'prod' }),
      })
    ).json();
    const evalHeaders = { Authorization: `Bearer ${sdk.key}`, 'Content-Type': 'application/json' };
    const hooks = [];
    for (let i = 0; i < TRIGGERS; i++) {
      const res = await fetch(`${api}/flags/flg_shop_${i}/environments/prod/triggers`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: `alert ${i}` }),
      });
      if (res.status !== 201) throw new Error(`creating a trigger: ${res.status} ${await res.text()}`);
      hooks.push((await res.json()).url);
    }
    /** Time from `fire` (which must answer `status`) until POST /v1/evaluate answers `killed` for flag-i. */
    const untilKilled = async (i, status, fire) => {
      const started = performance.now();
      const res = await fire();
      if (res.status !== status) throw new Error(`flag-${i}: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
      const body = JSON.stringify({ key: `flag-${i}`, context: { userId: 'u' } });
      const answer = await (await fetch(`${service.evalUrl}/v1/evaluate`, { method: 'POST', headers: evalHeaders, body })).json();
      if (answer[`flag-${i}`].reason !== 'killed') throw new Error(`flag-${i} not served killed: ${JSON.stringify(answer)}`);
      return performance.now() - started;
    };
    const samples = [];
    for (let i = 0; i < TRIGGERS; i++) {
      const payload = {
        version: '4',
        status: 'firing',
        receiver: 'flagops',
        commonAnnotations: { summary: `error rate of flag-${i}` },
        alerts: [],
      };
      const json = { 'Content-Type': 'application/json' };
      samples.push(await untilKilled(i, 202, () => fetch(hooks[i], { method: 'POST', headers: json, body: JSON.stringify(payload) })));
    }
    // The same on other flags through POST .../kill with an admin key: what a trigger adds to a kill.
    const kills = [];
    for (let i = TRIGGERS; i < 2 * TRIGGERS; i++) {
      kills.push(
        await untilKilled(i, 200, () =>
          fetch(`${api}/flags/flg_shop_${i}/environments/prod/kill`, { method: 'POST', headers, body: '{}' }),
        ),
      );
    }
    return { triggers: summarize(samples), kills: summarize(kills) };
  });
}

const steps = await scheduledSteps();
console.log(`\n${FLAGS.toLocaleString('en')} flags with a prod step due at the same second:`);
console.log(`  all served ${(steps.servedAfter / 1000).toFixed(2)} s after the second they fell due`);
console.log(`  ${steps.commits} commits since the seed, ${steps.once ? 'one per step, each step once' : 'NOT one per step'}`);
if (!steps.once) process.exitCode = 1;
const calls = await triggerCalls();
const ms = (x) => `p50 ${x.p50.toFixed(1)} ms, p99 ${x.p99.toFixed(1)} ms, max ${x.max.toFixed(1)} ms`;
console.log(`\n${calls.triggers.n} trigger calls over HTTP (Alertmanager payload), each followed by POST /v1/evaluate:`);
console.log(`  trigger call → evaluation answers killed: ${ms(calls.triggers)}`);
console.log(`  the same with POST .../kill (admin key), for comparison: ${ms(calls.kills)}`);

// Kill-to-effect latency in process, and push-to-served after an outside commit on a 10,000-flag repository.
// Run: npm run build && npm run bench -- eval-kill-and-reload
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KillSwitch } from '../../dist/features/kill/kill-switch.js';
import { silentLogger } from '../../dist/foundations/log/logger.js';
import { layout } from '../../dist/foundations/repository/layout.js';
import { serializeRepositoryFile } from '../../dist/foundations/repository/serialize-file.js';
import { FlagRepository } from '../../dist/foundations/storage/flag-repository.js';
import { startService } from '../../dist/service.js';
import { benchActor, benchServiceConfig, projectWithFlags, summarize } from './lib/seed.mjs';

const KILLS = Number(process.env.BENCH_KILLS ?? 100);
const FLAGS = Number(process.env.BENCH_FLAGS ?? 10_000);
const PUSHES = Number(process.env.BENCH_PUSHES ?? 20);

async function withService(fn) {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'flagops-bench-kill-'));
  const service = await startService(benchServiceConfig(dataDir), silentLogger);
  try {
    return await fn(service, dataDir);
  } finally {
    await service.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Kill written → the serving view evaluates off: the kill call (commit + in-process overlay swap) and the check. */
async function killLatency() {
  return withService(async (service) => {
    const repo = await service.repos.get('bench');
    await repo.update(() => ({
      changes: projectWithFlags('shop', KILLS),
      meta: { action: 'change', summary: 'seed', actor: benchActor },
      result: null,
    }));
    await service.holder.served('bench');
    const kills = new KillSwitch(service.holder);
    const calls = [];
    const effects = [];
    let written = 0;
    // Fires synchronously once the kill commit is on main: the kill is written.
    repo.onMainMoved(() => {
      written = performance.now();
    });
    for (let i = 0; i < KILLS; i++) {
      const flagKey = `flag-${i}`;
      const started = performance.now();
      await kills.kill({ org: 'bench', repo, projectSlug: 'shop', flagKey, environment: 'prod', actor: benchActor });
      const view = service.holder.view('bench', 'prj_shop', 'prod');
      const result = view.compiled.evaluate(flagKey, { userId: 'u' }, view.killed);
      const served = performance.now();
      if (result.reason !== 'killed') throw new Error(`kill of ${flagKey} not served: ${JSON.stringify(result)}`);
      calls.push(served - started);
      effects.push(served - written);
    }
    return { call: summarize(calls), effect: summarize(effects) };
  });
}

/** An outside writer (another process's view of the same repository) commits; the service notices the ref move. */
async function pushToServed() {
  return withService(async (service, dataDir) => {
    const repo = await service.repos.get('bench');
    const seedStarted = performance.now();
    await repo.update(() => ({
      changes: projectWithFlags('big', FLAGS),
      meta: { action: 'change', summary: 'seed', actor: benchActor },
      result: null,
    }));
    const loadStarted = performance.now();
    await service.holder.served('bench');
    const firstServe = performance.now() - loadStarted;
    const seedMs = loadStarted - seedStarted;
    const outside = await FlagRepository.open({ gitdir: path.join(dataDir, 'repos', 'bench.git') });
    const samples = [];
    for (let i = 0; i < PUSHES; i++) {
      const key = `flag-${1 + i}`;
      const rolloutPct = 100 - (i % 2);
      const content = serializeRepositoryFile({
        kind: 'config',
        value: { enabled: true, rolloutPct, valueOn: true, valueOff: false, version: 2 + i, rules: [] },
      });
      await outside.update(() => ({
        changes: [{ path: layout.configFile('big', 'prod', key), content }],
        meta: { action: 'config_update', summary: 'outside', actor: benchActor },
        result: null,
      }));
      const committed = performance.now();
      for (;;) {
        const view = service.holder.view('bench', 'prj_big', 'prod');
        if (view.flags[key].rolloutPct === rolloutPct) break;
        await new Promise((r) => setImmediate(r));
      }
      samples.push(performance.now() - committed);
    }
    await outside.close();
    return { seedMs, firstServe, ...summarize(samples) };
  });
}

const kill = await killLatency();
const ms = (x) => `p50 ${x.p50.toFixed(3)} ms, p99 ${x.p99.toFixed(3)} ms, max ${x.max.toFixed(3)} ms`;
console.log(`\n${kill.call.n} kills in process:`);
console.log(`  kill written (on main) → evaluation serves off: ${ms(kill.effect)}`);
console.log(`  whole kill call (durable commit + overlay swap): ${ms(kill.call)}`);
const push = await pushToServed();
console.log(`\nOutside commit → served, ${FLAGS.toLocaleString('en')} flags × 3 environments, ${push.n} commits:`);
console.log(`  seed commit ${Math.round(push.seedMs)} ms; first load + compile ${Math.round(push.firstServe)} ms`);
console.log(
  `  p50 ${push.p50.toFixed(1)} ms, p99 ${push.p99.toFixed(1)} ms, max ${push.max.toFixed(1)} ms (includes the watcher's debounce)`,
);

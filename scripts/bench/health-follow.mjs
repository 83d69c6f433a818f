#!/usr/bin/env node
// What following main costs the flag-health history at 10,000 flags in one environment (one project, a
// 10,001-entry directory per environment): after each commit (a config update, then a kill, in turns), the
// process's CPU time for the tracker to fold it in (its changed files, the new config or kills read and
// summed up), p50/p90 per kind. The tracker is driven directly (HistoryTracker, main's moves not announced to
// it) so that nothing else is counted. With --before <checkout> (built), the same runs alternate between it
// and this checkout, one process per run.
//   npm run build && node scripts/bench/health-follow.mjs [--before <checkout>] [--flags 10000] [--commits 60] [--rounds 1] [--json]
// The repository is written with `git fast-import` (needs the git CLI) in a temp dir removed afterwards.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    before: { type: 'string' },
    flags: { type: 'string', default: '10000' },
    commits: { type: 'string', default: '60' },
    rounds: { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
    child: { type: 'string' },
  },
});
const FLAGS = Number(values.flags);
const COMMITS = Number(values.commits);
const ms = (value) => Math.round(value * 1000) / 1000;

if (values.child) {
  console.log(JSON.stringify(await measure(values.child)));
} else {
  const builds = [...(values.before ? [['before', path.resolve(values.before, 'dist')]] : []), ['now', path.resolve(here, '../../dist')]];
  const loadBefore = loadavg()[0];
  const results = [];
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const [name, dist] of builds) {
      const res = spawnSync(
        process.execPath,
        [fileURLToPath(import.meta.url), '--child', dist, '--flags', String(FLAGS), '--commits', String(COMMITS)],
        {
          encoding: 'utf8',
          maxBuffer: 16 << 20,
        },
      );
      if (res.status !== 0) throw new Error(`run with ${dist} failed:\n${res.stdout}\n${res.stderr}`);
      results.push({ name, ...JSON.parse(res.stdout.trim().split('\n').at(-1)) });
    }
  }
  console.log(
    `\nFollowing main at ${FLAGS.toLocaleString('en')} flags in one environment (load average ${loadBefore.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after; ${COMMITS} commits a run):\n`,
  );
  console.log('| build | config update: CPU p50 / p90 (ms) | kill: CPU p50 / p90 (ms) |');
  console.log('|---|---|---|');
  for (const r of results) console.log(`| ${r.name} | ${r.config.p50} / ${r.config.p90} | ${r.kill.p50} / ${r.kill.p90} |`);
  if (values.json) console.log(JSON.stringify(results));
}

/** The process's CPU time in ms (GC helper threads included: the main thread's alone is kept to a few ms' resolution). */
function cpuMs() {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
}

/** One run against the build in `dist`. */
async function measure(dist) {
  const { HistoryTracker } = await import(pathToFileURL(path.join(dist, 'features/health/history-tracker.js')).href);
  const { FlagRepository } = await import(pathToFileURL(path.join(dist, 'foundations/storage/index.js')).href);
  const key = (i) => `flag-${String(i).padStart(5, '0')}`;
  const configYaml = (enabled, pct, version) =>
    `enabled: ${enabled}\nrolloutPct: ${pct}\nvalueOn: true\nvalueOff: false\nversion: ${version}\nrules: []\n`;
  const dir = mkdtempSync(path.join(tmpdir(), 'flagops-bench-follow-'));
  try {
    const gitdir = path.join(dir, 'repo.git');
    const env = { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1' };
    execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', gitdir], { env });
    const data = (text) => `data ${Buffer.byteLength(text)}\n${text}\n`;
    const out = [`commit refs/heads/main\ncommitter Bench <bench@example.com> 1700000000 +0000\n${data('import')}`];
    out.push(`M 100644 inline projects/p/project.yaml\n${data('id: prj_p\nname: P\nslug: p\n')}`);
    for (const e of ['dev', 'staging', 'prod']) out.push(`M 100644 inline projects/p/environments/${e}/kills.yaml\n${data('kills: {}\n')}`);
    for (let i = 0; i < FLAGS; i++) {
      const flag = `id: flg_${key(i)}\nkey: ${key(i)}\nkind: boolean\ndefaultValue: false\narchivedAt: null\n`;
      out.push(`M 100644 inline projects/p/flags/${key(i)}.yaml\n${data(flag)}`);
      for (const e of ['dev', 'staging', 'prod'])
        out.push(`M 100644 inline projects/p/environments/${e}/${key(i)}.yaml\n${data(configYaml(false, 0, 1))}`);
    }
    out.push('\n');
    execFileSync('git', ['fast-import', '--quiet'], { cwd: gitdir, input: out.join(''), env, maxBuffer: 1 << 30 });
    const repo = await FlagRepository.open({ gitdir, durable: false });
    await repo.readServed();
    // The repository without its announcements of moves: the tracker reads each commit when asked, and only then.
    const source = {
      head: () => repo.head(),
      firstParentLog: (options) => repo.firstParentLog(options),
      changedPaths: (oid) => repo.changedPaths(oid),
      readBlob: (oid) => repo.readBlob(oid),
      onMainMoved: () => () => {},
    };
    const tracker = await HistoryTracker.open({ repo: source });
    await tracker.current();
    const actor = { type: 'agent', name: 'bench', keyPrefix: 'svc_agt_benchbench' };
    const samples = { config: [], kill: [] };
    for (let i = 0; i < COMMITS; i++) {
      const flag = key((i * 167) % FLAGS);
      const kill = i % 2 === 1;
      const path = kill ? 'projects/p/environments/prod/kills.yaml' : `projects/p/environments/prod/${flag}.yaml`;
      const content = kill
        ? `kills:\n  ${flag}:\n    killedAt: "2026-01-02T00:00:00Z"\n    killedBy: bench\n`
        : configYaml(true, 100, 100 + i);
      await repo.update(() => ({
        changes: [{ path, content }],
        meta: { action: kill ? 'kill' : 'config_update', summary: 'bench', actor, project: 'p', flag, environment: 'prod' },
        result: undefined,
      }));
      // As in the service: the served state follows the commit too (its trees are then in the object cache).
      await repo.readServed();
      const started = cpuMs();
      await tracker.current();
      if (i >= 10) samples[kill ? 'kill' : 'config'].push(cpuMs() - started);
    }
    await tracker.close();
    await repo.close();
    const stats = (list) => {
      const sorted = [...list].sort((a, b) => a - b);
      return { p50: ms(sorted[Math.floor(sorted.length / 2)]), p90: ms(sorted[Math.floor(sorted.length * 0.9)]) };
    };
    return { config: stats(samples.config), kill: stats(samples.kill) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// A change pushed to a git remote (remote mode), from the service's own process over smart HTTP against by
// `git push`, in the same run: one commit (a config update) at a time onto the remote's main, timed through
// RemoteSync.publish as a control plane calls it, rounds alternating which push goes first. The host is the
// tests' git host (`git http-backend` behind a node server on loopback).
//
//   npm run build && npm run bench -- git-push          (BENCH_PUSHES: pushes each way, default 40)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadClusterHarness } from './lib/cluster-harness.mjs';

const PUSHES = Number(process.env.BENCH_PUSHES ?? 40);
const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist');
const load = async (file) => import(pathToFileURL(path.join(dist, file)).href);
const { RemoteSync } = await load('features/remote/remote-sync.js');
const { FlagRepository } = await load('foundations/storage/index.js');
const { layout } = await load('foundations/repository/layout.js');
const { silentLogger } = await load('foundations/log/logger.js');
const { startGitServer } = await loadClusterHarness();

const root = mkdtempSync(path.join(tmpdir(), 'flagops-bench-push-'));
const host = await startGitServer();
const repo = await FlagRepository.open({ gitdir: path.join(root, 'flags.git'), create: true });
try {
  const actor = { type: 'admin', name: 'bench' };
  const config = (pct) => `enabled: true\nrolloutPct: ${pct}\nvalueOn: true\nvalueOff: false\nversion: ${pct + 1}\nrules: []\n`;
  const flags = Array.from({ length: 50 }, (_, i) => `flag-${i}`);
  const seeded = await repo.update(() => ({
    changes: [
      { path: layout.projectFile('bench'), content: 'id: prj_bench\nname: Bench\nslug: bench\n' },
      ...flags.flatMap((key) => [
        {
          path: layout.flagFile('bench', key),
          content: `id: flg_${key}\nkey: ${key}\nkind: boolean\ndefaultValue: false\narchivedAt: null\n`,
        },
        ...['dev', 'staging', 'prod'].map((env) => ({ path: layout.configFile('bench', env, key), content: config(0) })),
      ]),
    ],
    meta: { action: 'project_create', summary: 'seed', actor, project: 'bench' },
    result: undefined,
  }));
  execFileSync('git', ['--git-dir', repo.gitdir, 'push', '--quiet', host.gitdir, `${seeded.commit}:refs/heads/main`]);

  const inProcess = new RemoteSync(repo.gitdir, host.url, silentLogger, undefined, undefined, {}, 10_000, (commit) =>
    repo.packAddedBy(commit, 8 * 1024 * 1024),
  );
  const byGit = new RemoteSync(repo.gitdir, host.url, silentLogger, undefined, undefined, {}, 10_000);
  let n = 0;
  /** One config update committed and pushed through `sync`: the ms its publish took. */
  const pushOne = async (sync) => {
    n++;
    const key = flags[n % flags.length];
    const { commit, parent } = await repo.update(() => ({
      changes: [{ path: layout.configFile('bench', 'prod', key), content: config(n % 100) }],
      meta: { action: 'config_update', summary: `bench ${n}`, actor, project: 'bench', flag: key, environment: 'prod' },
      result: undefined,
    }));
    const started = performance.now();
    if (!(await sync.publish(commit, parent, 'config_update'))) throw new Error('the push was refused: the host moved');
    return performance.now() - started;
  };
  for (let i = 0; i < 5; i++) await pushOne(i % 2 ? inProcess : byGit); // warm-up
  const times = { inProcess: [], byGit: [] };
  for (let i = 0; i < PUSHES; i++) {
    const order = i % 2 ? ['inProcess', 'byGit'] : ['byGit', 'inProcess'];
    for (const way of order) times[way].push(await pushOne(way === 'inProcess' ? inProcess : byGit));
  }
  const at = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  const line = (label, values) => {
    const sorted = [...values].sort((a, b) => a - b);
    return `  ${label}: p50 ${at(sorted, 0.5).toFixed(1)} ms  p99 ${at(sorted, 0.99).toFixed(1)} ms  max ${sorted.at(-1).toFixed(1)} ms`;
  };
  console.log(
    `one commit pushed to a git host on loopback, ${PUSHES} each way alternating (${cpus().length} cores, load ${loadavg()[0].toFixed(2)})`,
  );
  console.log(line('from the process (smart HTTP)', times.inProcess));
  console.log(line('by git push                  ', times.byGit));
  const sent = host.pushAgents.filter((request) => request.startsWith('POST'));
  console.log(`  updates sent from the process: ${sent.filter((r) => r.includes('flagops')).length} of ${sent.length}`);
  inProcess.close();
  byGit.close();
} finally {
  await repo.close();
  await host.stop();
  rmSync(root, { recursive: true, force: true });
}

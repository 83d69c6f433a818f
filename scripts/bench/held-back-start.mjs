// What reading history costs a start: what main serves (readServed, which walks back to a held-back flag's
// last valid state) and the snapshot versions (which walk back to each environment's last served change), on
// a fresh repository instance: a first start, which walks history, and a restart, which reads what the first
// learned from <gitdir>/flagops-cache/served-history.txt. With every file valid, and with one flag's dev
// config invalid since the seed. The history: one project of FLAGS flags, then COMMITS commits that each change
// one flag's dev config, so staging and prod have not changed since the seed and their versions are found at
// the very start of the log. Run: npm run build && npm run bench -- held-back
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { allVersionKeys, snapshotVersions } from '../../dist/apps/eval-server/snapshot-versions.js';
import { layout } from '../../dist/foundations/repository/layout.js';
import { serializeRepositoryFile } from '../../dist/foundations/repository/serialize-file.js';
import { FlagRepository } from '../../dist/foundations/storage/flag-repository.js';
import { benchActor, projectWithFlags } from './lib/seed.mjs';

const FLAGS = Number(process.env.BENCH_FLAGS ?? 10_000);
const COMMITS = Number(process.env.BENCH_COMMITS ?? 500);

const git = (gitdir, args, env = {}) =>
  execFileSync('git', args, { cwd: gitdir, encoding: 'utf8', env: { ...process.env, ...env } }).trim();

/** Puts an invalid dev config for each of `keys` on main in one commit, as a push straight into the repository would. */
function breakFlags(gitdir, keys) {
  const index = path.join(gitdir, 'bench-index');
  const env = {
    GIT_INDEX_FILE: index,
    GIT_AUTHOR_NAME: 'Erin',
    GIT_AUTHOR_EMAIL: 'erin@example.com',
    GIT_COMMITTER_NAME: 'Erin',
    GIT_COMMITTER_EMAIL: 'erin@example.com',
  };
  git(gitdir, ['read-tree', 'main'], env);
  const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], {
    cwd: gitdir,
    input: 'enabled: true\nrolloutPct: 250\n',
    encoding: 'utf8',
  }).trim();
  const lines = keys.map((key) => `100644 ${blob}\t${layout.configFile('big', 'dev', key)}\n`).join('');
  execFileSync('git', ['update-index', '--index-info'], { cwd: gitdir, env: { ...process.env, ...env }, input: lines });
  const tree = git(gitdir, ['write-tree'], env);
  const commit = git(gitdir, ['commit-tree', tree, '-p', 'main', '-m', 'broken dev configs'], env);
  git(gitdir, ['update-ref', 'refs/heads/main', commit]);
}

async function measureStart(gitdir) {
  const started = performance.now();
  const repo = await FlagRepository.open({ gitdir });
  const served = await repo.readServed();
  const readMs = performance.now() - started;
  const versionsStarted = performance.now();
  const head = await repo.head();
  await snapshotVersions(repo, head, allVersionKeys(served.state.projects.keys()));
  const versionsMs = performance.now() - versionsStarted;
  await repo.close();
  return { readMs: Math.round(readMs), versionsMs: Math.round(versionsMs), held: served.heldFlags.size };
}

/** broken: 'none', 'one' (flag-1, then COMMITS valid commits), or 'all' (every flag, in the last commit). */
async function scenario(broken) {
  const gitdir = path.join(await mkdtemp(path.join(tmpdir(), 'flagops-bench-held-')), 'bench.git');
  try {
    const repo = await FlagRepository.open({ gitdir, create: true, durable: false });
    await repo.update(() => ({
      changes: projectWithFlags('big', FLAGS),
      meta: { action: 'change', summary: 'seed', actor: benchActor },
      result: null,
    }));
    if (broken === 'one') breakFlags(gitdir, ['flag-1']);
    for (let i = 0; i < COMMITS; i++) {
      const key = `flag-${2 + (i % (FLAGS - 2))}`;
      const content = serializeRepositoryFile({
        kind: 'config',
        value: { enabled: true, rolloutPct: i % 101, valueOn: true, valueOff: false, version: 2 + i, rules: [] },
      });
      await repo.update(() => ({
        changes: [{ path: layout.configFile('big', 'dev', key), content }],
        meta: { action: 'config_update', summary: 'dev', actor: benchActor },
        result: null,
      }));
    }
    await repo.close();
    if (broken === 'all')
      breakFlags(
        gitdir,
        Array.from({ length: FLAGS }, (_, i) => `flag-${i}`),
      );
    // The writer saved the parse cache, as a running service does; what serving learns of history is saved by
    // the first start (a service saves it as it serves each commit) and read by the restart.
    return { first: await measureStart(gitdir), restart: await measureStart(gitdir) };
  } finally {
    await rm(path.dirname(gitdir), { recursive: true, force: true });
  }
}

const TITLES = {
  none: 'every file valid',
  one: 'an invalid dev config of one flag since the seed',
  all: `a last commit that breaks the dev config of all ${FLAGS} flags`,
};
for (const broken of ['none', 'one', 'all']) {
  const { first, restart } = await scenario(broken);
  console.log(`${TITLES[broken]}: ${FLAGS} flags, ${COMMITS} commits (held-back flags: ${first.held})`);
  for (const [name, r] of [
    ['first start', first],
    ['restart', restart],
  ]) {
    console.log(`  ${name}: read of what main serves ${r.readMs} ms, snapshot versions from history ${r.versionsMs} ms`);
  }
}

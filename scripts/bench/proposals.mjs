// Change proposals benchmark:
//   - `flagops diff --impact` between two commits of a 10,000-flag repository (× 3 environments) in which 100
//     prod configs changed: wall time of the whole CLI process (Node's start included), goal < 2 s;
//   - approving a proposal against a config update, over real HTTP against the whole service started in this
//     process, in the same run and interleaved (one update, one approval, …): goal approval/update ≤ 1.5 at the
//     median. Proposals are opened by an agent key beforehand; only the approve call is timed.
//
//   npm run build && node scripts/bench/proposals.mjs [--flags 10000] [--changed 100] [--rounds 40] [--json]
//
// Runs against the compiled dist/ (FLAGOPS_DIST overrides where it is), in temp dirs it removes after.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { projectWithFlags, summarize } from './lib/seed.mjs';

const { values } = parseArgs({
  options: {
    flags: { type: 'string', default: '10000' },
    changed: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '40' },
    json: { type: 'boolean', default: false },
  },
});
const FLAGS = Number(values.flags);
const CHANGED = Number(values.changed);
const ROUNDS = Number(values.rounds);
const dist = resolve(process.env.FLAGOPS_DIST ?? new URL('../../dist', import.meta.url).pathname);
const ms = (v) => Math.round(v * 10) / 10;
const results = {};

// --- flagops diff --impact between two commits of a big repository ---
{
  const dir = mkdtempSync(join(os.tmpdir(), 'flagops-bench-impact-'));
  try {
    const git = (...args) =>
      execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.com', '-c', 'commit.gpgsign=false', ...args], {
        cwd: dir,
        stdio: ['ignore', 'pipe', 'pipe'],
        maxBuffer: 1 << 26,
      });
    const files = projectWithFlags('shop', FLAGS);
    for (const file of files) {
      mkdirSync(dirname(join(dir, file.path)), { recursive: true });
      writeFileSync(join(dir, file.path), file.content);
    }
    git('init', '-q', '-b', 'main');
    git('add', '.');
    git('commit', '-q', '-m', 'seed');
    for (let i = 1; i <= CHANGED; i++) {
      const path = `projects/shop/environments/prod/flag-${i}.yaml`;
      writeFileSync(
        join(dir, path),
        `enabled: true\nrolloutPct: ${(i * 13) % 101}\nvalueOn: true\nvalueOff: false\nversion: 2\nrules: []\n`,
      );
    }
    git('commit', '-q', '-am', 'change prod rollouts');
    const runs = [];
    let lines = 0;
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      const out = execFileSync(process.execPath, [join(dist, 'apps/cli/main.js'), 'diff', '--impact', 'HEAD~1', 'HEAD', '--repo', dir], {
        encoding: 'utf8',
        maxBuffer: 1 << 26,
      });
      runs.push(performance.now() - started);
      lines = out.split('\n').filter((l) => l.includes('% of users')).length;
    }
    const s = summarize(runs);
    results.diffImpact = {
      flags: FLAGS,
      changedConfigs: CHANGED,
      impactLines: lines,
      runsMs: runs.map(ms),
      p50Ms: ms(s.p50),
      maxMs: ms(s.max),
    };
    if (!values.json)
      console.log(
        `flagops diff --impact, ${FLAGS} flags, ${CHANGED} prod configs changed (${lines} impact lines): p50 ${ms(s.p50)} ms, max ${ms(s.max)} ms (goal < 2000 ms)`,
      );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// --- approve a proposal vs update a config, same run, interleaved ---
{
  const { startService } = await import(pathToFileURL(join(dist, 'service.js')).href);
  const { silentLogger } = await import(pathToFileURL(join(dist, 'foundations/log/logger.js')).href);
  const ADMIN = 'svc_adm_benchbenchbenchbenchbench0001';
  const AGENT = 'svc_agt_benchbenchbenchbenchbench0002';
  const dataDir = mkdtempSync(join(os.tmpdir(), 'flagops-bench-proposals-'));
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
    if (res.status >= 300 && res.status !== 202) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
    return data;
  };
  try {
    const project = await call(ADMIN, 'POST', '/api/v1/projects', { name: 'Bench', slug: 'bench' });
    await call(ADMIN, 'PATCH', `/api/v1/projects/${project.id}`, { requireApproval: { prod: ['agent'] } });
    const flags = [];
    for (let i = 0; i < ROUNDS; i++) flags.push(await call(ADMIN, 'POST', `/api/v1/projects/${project.id}/flags`, { key: `f-${i}` }));
    const proposals = [];
    for (const [i, flag] of flags.entries())
      proposals.push(
        (await call(AGENT, 'PUT', `/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 1 + (i % 99) })).proposal,
      );
    const updates = [];
    const approvals = [];
    for (let i = 0; i < ROUNDS; i++) {
      let started = performance.now();
      await call(ADMIN, 'PUT', `/api/v1/flags/${flags[i].id}/environments/staging/config`, { rolloutPct: 1 + (i % 99) });
      updates.push(performance.now() - started);
      started = performance.now();
      await call(ADMIN, 'POST', `/api/v1/proposals/${proposals[i].id}/approve`);
      approvals.push(performance.now() - started);
    }
    const u = summarize(updates);
    const a = summarize(approvals);
    const ratio = Math.round((a.p50 / u.p50) * 100) / 100;
    results.approve = {
      rounds: ROUNDS,
      updateP50Ms: ms(u.p50),
      updateP99Ms: ms(u.p99),
      approveP50Ms: ms(a.p50),
      approveP99Ms: ms(a.p99),
      ratio,
    };
    if (!values.json)
      console.log(
        `approve vs config update, ${ROUNDS} each, interleaved: update p50 ${ms(u.p50)} ms (p99 ${ms(u.p99)}), approve p50 ${ms(a.p50)} ms (p99 ${ms(a.p99)}); ratio ${ratio} (goal ≤ 1.5)`,
      );
  } finally {
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
if (values.json) console.log(JSON.stringify(results));

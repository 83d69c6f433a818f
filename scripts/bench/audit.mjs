#!/usr/bin/env node
// Audit trail benchmark: a flags repository with 10,000 commits on main (85% made by the control plane
// with Flagops trailers, 15% pushed by engineers without, so described from their diff), then
//   - startup (AuditIndex.open on a freshly opened repository): no cache (the whole log, packed and loose
//     objects), the cache on disk at head, and the cache 200 commits behind;
//   - query latency p50/p99: unfiltered first page, filtered by one flag, a deep page (cursor 9,000 entries
//     in), a rare action (the filter scans the whole index);
//   - following main: an API commit, then the first page that must show it.
//
//   npx esbuild src/features/audit/index.ts src/foundations/storage/index.ts --bundle --platform=node --format=esm \
//     --packages=external --outdir=.bench-tmp/dist --outbase=src
//   FLAGOPS_DIST=.bench-tmp/dist node --expose-gc scripts/bench/audit.mjs [--commits 10000] [--json]
//
// FLAGOPS_DIST defaults to dist/ (`npx tsc -p tsconfig.build.json`). The repository is written with
// `git fast-import` (needs the git CLI) in a temp dir removed afterwards.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { commits: { type: 'string', default: '10000' }, json: { type: 'boolean', default: false } } });
const COMMITS = Number(values.commits);
const dist = resolve(process.env.FLAGOPS_DIST ?? new URL('../../dist', import.meta.url).pathname);
const { AuditIndex } = await import(pathToFileURL(join(dist, 'features/audit/index.js')).href);
const { FlagRepository } = await import(pathToFileURL(join(dist, 'foundations/storage/index.js')).href);

const FLAGS = 50;
const ENVS = ['dev', 'staging', 'prod'];
const START = Date.UTC(2026, 0, 1) / 1000;
const gc = () => globalThis.gc?.();
const ms = (value) => Math.round(value * 100) / 100;

/** A deterministic pseudo-random stream, so every run builds the same repository. */
function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const key = (i) => `flag-${String(i).padStart(3, '0')}`;
const configYaml = (pct, version) => `enabled: true\nrolloutPct: ${pct}\nvalueOn: true\nvalueOff: false\nversion: ${version}\nrules: []\n`;
const flagYaml = (k) => `id: flg_${k}\nkey: ${k}\nkind: boolean\ndefaultValue: false\narchivedAt: null\n`;
function killsYaml(kills) {
  const keys = Object.keys(kills).sort();
  if (keys.length === 0) return 'kills: {}\n';
  return `kills:\n${keys.map((k) => `  ${k}:\n    killedAt: "2026-01-02T00:00:00Z"\n    killedBy: ${kills[k]}\n`).join('')}`;
}

/** The fast-import stream of the whole history: the files of each commit inline. */
function history(commits) {
  const random = rng(42);
  const pick = (n) => Math.floor(random() * n);
  const versions = new Map();
  const kills = Object.fromEntries(ENVS.map((env) => [env, {}]));
  const out = [];
  const data = (text) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  const trailers = (t) =>
    Object.entries(t)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `Flagops-${k}: ${v}`)
      .join('\n');
  const stats = { api: 0, git: 0 };
  for (let n = 0; n < commits; n++) {
    const when = START + n * 60;
    const files = [];
    let author;
    let message;
    if (n === 0) {
      files.push(['projects/bench/project.yaml', 'id: prj_bench\nname: Bench\nslug: bench\n']);
      for (let i = 0; i < FLAGS; i++) {
        files.push([`projects/bench/flags/${key(i)}.yaml`, flagYaml(key(i))]);
        for (const env of ENVS) files.push([`projects/bench/environments/${env}/${key(i)}.yaml`, configYaml(0, 1)]);
      }
      for (const env of ENVS) files.push([`projects/bench/environments/${env}/kills.yaml`, 'kills: {}\n']);
      author = 'bench-admin <svc_adm_benchbench@keys.flagops>';
      message = `import 50 flags\n\n${trailers({ Action: 'import', Project: 'bench', 'Actor-Type': 'admin', Actor: 'bench-admin', 'Key-Prefix': 'svc_adm_benchbench' })}\n`;
    } else {
      const roll = random();
      const flag = key(pick(FLAGS));
      const env = ENVS[pick(3)];
      const bump = (f, e, pct) => {
        const id = `${e}/${f}`;
        const version = (versions.get(id) ?? 1) + 1;
        versions.set(id, version);
        files.push([`projects/bench/environments/${e}/${f}.yaml`, configYaml(pct, version)]);
      };
      const toggleKill = (f, e, by) => {
        if (kills[e][f]) delete kills[e][f];
        else kills[e][f] = by;
        files.push([`projects/bench/environments/${e}/kills.yaml`, killsYaml(kills[e])]);
        return kills[e][f] ? 'kill' : 'clear_kill';
      };
      if (roll < 0.85) {
        stats.api++;
        const agentKey = pick(2) === 0;
        const actor = agentKey
          ? { 'Actor-Type': 'agent', Actor: 'deploy-bot', 'Key-Prefix': 'svc_agt_benchbench' }
          : { 'Actor-Type': 'session', Actor: 'Alice' };
        author = agentKey ? 'deploy-bot <svc_agt_benchbench@keys.flagops>' : 'Alice <session@users.flagops>';
        let action = 'config_update';
        let body = '';
        let from;
        if (roll < 0.1) {
          action = toggleKill(flag, env, 'deploy-bot');
          if (action === 'kill') body = 'reason: error rate above 5%\n\n';
        } else if (roll < 0.15 && env !== 'dev') {
          action = 'promote';
          from = env === 'prod' ? 'staging' : 'dev';
          bump(flag, env, pick(101));
        } else {
          bump(flag, env, pick(101));
        }
        message = `${action} ${flag} in ${env}\n\n${body}${trailers({ Action: action, Project: 'bench', Flag: flag, Environment: env, 'From-Environment': from, ...actor })}\n`;
      } else {
        stats.git++;
        author = `Engineer ${pick(5)} <eng@example.com>`;
        if (random() < 0.33) {
          toggleKill(flag, env, 'eng');
          message = `Toggle the kill of ${flag} in ${env}\n`;
        } else {
          for (let i = 1 + pick(3); i > 0; i--) bump(key(pick(FLAGS)), ENVS[pick(3)], pick(101));
          message = 'Tune rollouts\n';
        }
      }
    }
    out.push(
      `commit refs/heads/main\nmark :${n + 1}\nauthor ${author} ${when} +0000\ncommitter flagops <flagops@localhost> ${when} +0000\n${data(message)}`,
    );
    if (n > 0) out.push(`from :${n}\n`);
    // Only the last version of a path in one commit counts; fast-import applies them in order.
    for (const [path, content] of files) out.push(`M 100644 inline ${path}\n${data(content)}`);
    out.push('\n');
  }
  return { stream: out.join(''), stats };
}

function git(cwd, args, input) {
  return execFileSync('git', args, {
    cwd,
    input,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
    env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1' },
  });
}

function percentiles(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return { p50: ms(at(0.5)), p99: ms(at(0.99)) };
}

async function time(fn, runs) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  return times;
}

/** AuditIndex.open on a repository opened just before, so no object cache of an earlier run helps. */
async function startup(gitdir, cacheFile) {
  gc();
  const repo = await FlagRepository.open({ gitdir, durable: false });
  const heapBefore = process.memoryUsage().heapUsed;
  const started = performance.now();
  const index = await AuditIndex.open({ repo, cacheFile });
  const elapsed = performance.now() - started;
  await index.saved();
  gc();
  const heapMiB = (process.memoryUsage().heapUsed - heapBefore) / 1024 / 1024;
  return { repo, index, elapsed, heapMiB };
}

/** Three startups; `prepare` runs before each (e.g. puts a cache file in place). */
async function startups(gitdir, cacheFile, prepare = () => {}) {
  const runs = [];
  for (let i = 0; i < 3; i++) {
    prepare();
    const { repo, index, elapsed, heapMiB } = await startup(gitdir, cacheFile);
    runs.push({ elapsed, heapMiB });
    index.close();
    await index.saved();
    await repo.close();
  }
  const sorted = runs.map((r) => r.elapsed).sort((a, b) => a - b);
  return { medianMs: ms(sorted[1]), runsMs: runs.map((r) => ms(r.elapsed)), heapMiB: ms(runs[2].heapMiB) };
}

const dir = mkdtempSync(join(tmpdir(), 'flagops-bench-audit-'));
try {
  const packed = join(dir, 'packed.git');
  git(dir, ['init', '--quiet', '--bare', '--initial-branch=main', packed]);
  const started = performance.now();
  const { stream, stats } = history(COMMITS);
  git(packed, ['fast-import', '--quiet'], stream);
  const importMs = performance.now() - started;

  // The same history as loose objects, as the control plane writes them (before any `git gc`).
  const loose = join(dir, 'loose.git');
  git(dir, ['init', '--quiet', '--bare', '--initial-branch=main', loose]);
  const pack = readdirSync(join(packed, 'objects/pack')).find((f) => f.endsWith('.pack'));
  execFileSync('git', ['unpack-objects', '-q'], { cwd: loose, input: readFileSync(join(packed, 'objects/pack', pack)) });
  git(loose, ['update-ref', 'refs/heads/main', git(packed, ['rev-parse', 'main']).trim()]);

  const builds = {
    'no cache, packed objects': await startups(packed),
    'no cache, loose objects': await startups(loose),
  };

  const cacheFile = join(dir, 'cache', 'acme.json');
  const behind = join(dir, 'cache-behind.json');
  const { repo, index } = await startup(loose, cacheFile);
  copyFileSync(cacheFile, behind);
  const all = await index.query({ limit: 500 });
  let entries = all.entries.length;
  for (let c = all.nextCursor; c; ) {
    const page = await index.query({ limit: 500, cursor: c });
    entries += page.entries.length;
    c = page.nextCursor;
  }
  // A cursor about 9,000 entries in (or near the end of a smaller trail): walk there once, then time the page after it.
  let deep;
  for (let seen = 0, target = Math.min(9000, entries - 100); seen < target; ) {
    const page = await index.query({ limit: Math.min(500, target - seen), cursor: deep });
    seen += page.entries.length;
    deep = page.nextCursor;
  }
  const RUNS = 2000;
  for (let i = 0; i < 200; i++) await index.query({ limit: 50 });
  const queries = {
    'first page, unfiltered (limit 50)': percentiles(await time(() => index.query({ limit: 50 }), RUNS)),
    'first page, one flag (limit 50)': percentiles(await time(() => index.query({ flagKey: 'flag-007', limit: 50 }), RUNS)),
    'one flag, prod, kills only (limit 50)': percentiles(
      await time(() => index.query({ flagKey: 'flag-007', environment: 'prod', action: 'kill', limit: 50 }), RUNS),
    ),
    'deep page, cursor 9,000 in (limit 50)': percentiles(await time(() => index.query({ limit: 50, cursor: deep }), RUNS)),
    'rare action, scans everything (limit 50)': percentiles(await time(() => index.query({ action: 'project_create', limit: 50 }), RUNS)),
  };

  // Following main: an API commit, then the first page, which must already show it.
  let version = 1000;
  const commitOne = () =>
    repo.update(() => ({
      changes: [{ path: 'projects/bench/environments/dev/flag-001.yaml', content: configYaml(version % 101, version++) }],
      meta: {
        action: 'config_update',
        summary: 'bench',
        actor: { type: 'agent', name: 'bench', keyPrefix: 'svc_agt_benchbench' },
        project: 'bench',
        flag: 'flag-001',
        environment: 'dev',
      },
      result: undefined,
    }));
  const followTimes = [];
  for (let i = 0; i < 200; i++) {
    const { commit } = await commitOne();
    const t0 = performance.now();
    const page = await index.query({ limit: 50 });
    followTimes.push(performance.now() - t0);
    if (page.entries[0].id !== commit) throw new Error('the new commit is not on the first page');
  }
  index.close();
  await index.saved();
  await repo.close();

  builds['cache at head, loose objects'] = await startups(loose, cacheFile);
  const behindRun = join(dir, 'cache-run.json');
  builds['cache 200 commits behind, loose objects'] = await startups(loose, behindRun, () => copyFileSync(behind, behindRun));

  const result = {
    commits: COMMITS,
    apiCommits: stats.api + 1,
    pushedCommits: stats.git,
    entries,
    cacheFileKiB: Math.round(statSync(cacheFile).size / 1024),
    importMs: ms(importMs),
    startup: builds,
    queries,
    'first page right after a commit': percentiles(followTimes),
  };
  if (values.json) console.log(JSON.stringify(result, null, 2));
  else {
    console.log(
      `${COMMITS} commits (${result.apiCommits} with trailers, ${result.pushedCommits} pushed), ${entries} entries; fast-import ${result.importMs} ms; cache file ${result.cacheFileKiB} KiB`,
    );
    for (const [name, b] of Object.entries(builds))
      console.log(`startup (AuditIndex.open), ${name}: median ${b.medianMs} ms (runs ${b.runsMs.join(', ')} ms), ~${b.heapMiB} MiB heap`);
    for (const [name, q] of Object.entries(queries)) console.log(`${name}: p50 ${q.p50} ms, p99 ${q.p99} ms`);
    const f = result['first page right after a commit'];
    console.log(`first page right after a commit (catch-up included): p50 ${f.p50} ms, p99 ${f.p99} ms`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

#!/usr/bin/env node
// Flag health benchmark: 10,000 flags in 10 projects with a year of history on main (5,000 flags imported at
// the start, 5,000 more made one commit each through the year, and as many config changes and kills between
// them: about 15,000 commits), then health of every project (10 reports):
//   - cold: FlagHealthService.report on a freshly opened repository, no history cache: the whole first-parent
//     history is read (the largest event-loop delay meanwhile shows whether evaluation would have waited);
//   - restart: the same with the history cache on disk at head;
//   - warm: report again (main unchanged), p50/p99; and right after one more commit (read incrementally).
// Beside each event-loop delay (wall time: on a loaded machine mostly time spent waiting for a core), the main
// thread's longest stretch of CPU time between two turns of the event loop (Linux: /proc/self/schedstat, to the
// scheduler's tick, a few ms), which the load does not inflate: what evaluation here would wait for on an idle machine.
//
//   npm run build && npm run bench -- flag-health          # or: node --expose-gc scripts/bench/flag-health.mjs [--flags 10000] [--json]
//
// The repository is written with `git fast-import` (needs the git CLI) in a temp dir removed afterwards.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    flags: { type: 'string', default: '10000' },
    projects: { type: 'string', default: '10' },
    json: { type: 'boolean', default: false },
  },
});
const FLAGS = Number(values.flags);
const PROJECTS = Number(values.projects);
const slugOf = (i) => `p${i % PROJECTS}`;
const dist = resolve(process.env.FLAGOPS_DIST ?? new URL('../../dist', import.meta.url).pathname);
const { FlagHealthService } = await import(pathToFileURL(join(dist, 'features/health/flag-health-service.js')).href);
const { FlagRepository } = await import(pathToFileURL(join(dist, 'foundations/storage/index.js')).href);

const ENVS = ['dev', 'staging', 'prod'];
const YEAR_S = 365 * 86_400;
const END = Math.floor(Date.UTC(2026, 10, 26) / 1000);
const START = END - YEAR_S;
const CHANGES = FLAGS; // config changes and kills through the year
const gc = () => globalThis.gc?.();
const ms = (value) => Math.round(value * 10) / 10;

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const key = (i) => `flag-${String(i).padStart(5, '0')}`;
/** Where flag i's files live. */
const flagPath = (i) => `projects/${slugOf(i)}/flags/${key(i)}.yaml`;
const configPath = (i, env) => `projects/${slugOf(i)}/environments/${env}/${key(i)}.yaml`;
const configYaml = (enabled, pct, version) =>
  `enabled: ${enabled}\nrolloutPct: ${pct}\nvalueOn: true\nvalueOff: false\nversion: ${version}\nrules: []\n`;
const flagYaml = (k) => `id: flg_${k}\nkey: ${k}\nkind: boolean\ndefaultValue: false\narchivedAt: null\n`;
const killsYaml = (killed) =>
  killed.size === 0
    ? 'kills: {}\n'
    : `kills:\n${[...killed]
        .sort()
        .map((k) => `  ${k}:\n    killedAt: "2026-01-02T00:00:00Z"\n    killedBy: bench\n`)
        .join('')}`;

/** The fast-import stream: the import, then flag creations and changes interleaved, evenly through the year. */
function history() {
  const random = rng(29);
  const pick = (n) => Math.floor(random() * n);
  const out = [];
  const data = (text) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  const versions = new Map();
  const kills = new Map();
  const initial = Math.floor(FLAGS / 2);
  let made = initial;
  const steps = FLAGS - initial + CHANGES;
  let n = 0;
  const commit = (when, message, files) => {
    out.push(
      `commit refs/heads/main\nmark :${n + 1}\nauthor Bench <bench@example.com> ${when} +0000\ncommitter Bench <bench@example.com> ${when} +0000\n${data(message)}`,
    );
    if (n > 0) out.push(`from :${n}\n`);
    for (const [path, content] of files) out.push(`M 100644 inline ${path}\n${data(content)}`);
    out.push('\n');
    n++;
  };
  const newFlag = (i) => [[flagPath(i), flagYaml(key(i))], ...ENVS.map((env) => [configPath(i, env), configYaml(false, 0, 1)])];
  const files = [];
  for (let p = 0; p < PROJECTS; p++) {
    files.push([`projects/p${p}/project.yaml`, `id: prj_p${p}\nname: Project ${p}\nslug: p${p}\n`]);
    for (const env of ENVS) files.push([`projects/p${p}/environments/${env}/kills.yaml`, 'kills: {}\n']);
  }
  for (let i = 0; i < initial; i++) files.push(...newFlag(i));
  commit(START, 'import flags', files);
  for (let s = 0; s < steps; s++) {
    const when = START + Math.floor(((s + 1) * YEAR_S) / (steps + 1));
    if (made < FLAGS && random() < (FLAGS - made) / (steps - s)) {
      commit(when, `create ${key(made)}`, newFlag(made));
      made++;
      continue;
    }
    const i = pick(made);
    const flag = key(i);
    const env = ENVS[pick(3)];
    if (random() < 0.05) {
      const where = `projects/${slugOf(i)}/environments/${env}/kills.yaml`;
      const killed = kills.get(where) ?? new Set();
      kills.set(where, killed);
      if (killed.has(flag)) killed.delete(flag);
      else killed.add(flag);
      commit(when, `kill ${flag} in ${env}`, [[where, killsYaml(killed)]]);
    } else {
      const id = `${env}/${flag}`;
      const version = (versions.get(id) ?? 1) + 1;
      versions.set(id, version);
      const pct = [0, 10, 50, 100, 100][pick(5)];
      commit(when, `roll ${flag} out in ${env}`, [[configPath(i, env), configYaml(pct > 0, pct, version)]]);
    }
  }
  return { stream: out.join(''), commits: n };
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

/** The main thread's CPU time so far in ms (Linux), or undefined elsewhere. */
function mainThreadCpuMs() {
  try {
    return Number(readFileSync('/proc/self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return undefined;
  }
}

/**
 * The longest gap between two ticks of a 1 ms timer while started: in wall time, and in the main thread's CPU
 * time (a turn of the event loop in between would have run the timer).
 */
function stallMeter() {
  let lastWall = performance.now();
  let lastCpu = mainThreadCpuMs();
  let maxWall = 0;
  let maxCpu = 0;
  const timer = setInterval(() => {
    const wall = performance.now();
    const cpu = mainThreadCpuMs();
    maxWall = Math.max(maxWall, wall - lastWall);
    if (cpu !== undefined) maxCpu = Math.max(maxCpu, cpu - lastCpu);
    lastWall = wall;
    lastCpu = cpu;
  }, 1);
  return {
    stop() {
      clearInterval(timer);
      return { wallMs: ms(maxWall), cpuMs: lastCpu === undefined ? null : ms(maxCpu) };
    },
  };
}

function percentiles(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return { p50: ms(at(0.5)), p99: ms(at(0.99)) };
}

/** Half the flags were evaluated an hour ago, in prod. */
const evaluated = new Map();
for (let i = 0; i < FLAGS; i += 2) evaluated.set(key(i), END * 1000 - 3_600_000);
const lastEvaluated = (_org, _project, env) => (env === 'prod' ? evaluated : new Map());

async function open(gitdir, cacheDir) {
  const repo = await FlagRepository.open({ gitdir, durable: false });
  const service = new FlagHealthService({
    repos: { get: async () => repo },
    lastEvaluated,
    countsKeptDays: 30,
    ...(cacheDir ? { cacheDir } : {}),
  });
  return { repo, service };
}

/** The health of every project, as a dashboard showing each project's list would ask for it. */
async function report(repo, service) {
  const { state } = await repo.readServed();
  const out = [];
  for (const project of state.projects.values())
    out.push(...(await service.report({ org: 'acme', project, now: END * 1000, staleAfterDays: 30 })));
  return out;
}

const dir = mkdtempSync(join(tmpdir(), 'flagops-bench-health-'));
try {
  const gitdir = join(dir, 'repo.git');
  git(dir, ['init', '--quiet', '--bare', '--initial-branch=main', gitdir]);
  let started = performance.now();
  const { stream, commits } = history();
  git(gitdir, ['fast-import', '--quiet'], stream);
  const importMs = performance.now() - started;
  const cacheDir = join(dir, 'cache');

  // Cold: no cache; the served state is read first (the service holds it anyway), then the history.
  gc();
  let { repo, service } = await open(gitdir, cacheDir);
  await repo.readServed();
  let stalls = stallMeter();
  started = performance.now();
  const flags = await report(repo, service);
  const coldMs = performance.now() - started;
  const coldStall = stalls.stop();
  const byStatus = {};
  for (const f of flags) byStatus[f.status] = (byStatus[f.status] ?? 0) + 1;

  // Warm: main unchanged.
  for (let i = 0; i < 5; i++) await report(repo, service);
  const warm = [];
  stalls = stallMeter();
  for (let i = 0; i < 30; i++) {
    const t = performance.now();
    await report(repo, service);
    warm.push(performance.now() - t);
    // Reports come one a request: the event loop turns between two.
    await new Promise((resolve) => setImmediate(resolve));
  }
  const warmStall = stalls.stop();
  // One more commit, then health (the served state and the history follow by one commit).
  const after = [];
  for (let i = 0; i < 10; i++) {
    await repo.update(() => ({
      changes: [{ path: configPath(i, 'dev'), content: configYaml(true, 100, 1000 + i) }],
      meta: {
        action: 'config_update',
        summary: 'bench',
        actor: { type: 'agent', name: 'bench', keyPrefix: 'svc_agt_benchbench' },
        project: slugOf(i),
        flag: key(i),
        environment: 'dev',
      },
      result: undefined,
    }));
    const t = performance.now();
    await report(repo, service);
    after.push(performance.now() - t);
  }
  await service.closeAll();
  await repo.close();

  // Restart: the history cache on disk at head.
  gc();
  ({ repo, service } = await open(gitdir, cacheDir));
  await repo.readServed();
  started = performance.now();
  await report(repo, service);
  const restartMs = performance.now() - started;
  await service.closeAll();
  await repo.close();

  const result = {
    flags: FLAGS,
    projects: PROJECTS,
    commits,
    importMs: ms(importMs),
    byStatus,
    coldMs: ms(coldMs),
    coldMaxEventLoopDelayMs: coldStall.wallMs,
    coldLongestMainThreadCpuMs: coldStall.cpuMs,
    restartWithCacheMs: ms(restartMs),
    cacheFileKiB: Math.round(statSync(join(cacheDir, 'acme.json')).size / 1024),
    warm: percentiles(warm),
    warmMaxEventLoopDelayMs: warmStall.wallMs,
    warmLongestMainThreadCpuMs: warmStall.cpuMs,
    loadAverage: Math.round(loadavg()[0] * 10) / 10,
    afterOneCommit: percentiles(after),
  };
  if (values.json) console.log(JSON.stringify(result, null, 2));
  else {
    console.log(
      `${FLAGS} flags in ${PROJECTS} projects, ${commits} commits over a year (fast-import ${result.importMs} ms); statuses ${JSON.stringify(byStatus)}`,
    );
    console.log(
      `cold (whole history read): ${result.coldMs} ms, longest event-loop delay meanwhile ${result.coldMaxEventLoopDelayMs} ms (main thread CPU ${result.coldLongestMainThreadCpuMs} ms)`,
    );
    console.log(`restart (history cache at head, ${result.cacheFileKiB} KiB): ${result.restartWithCacheMs} ms`);
    console.log(
      `warm: p50 ${result.warm.p50} ms, p99 ${result.warm.p99} ms; longest event-loop delay meanwhile ${result.warmMaxEventLoopDelayMs} ms (main thread CPU ${result.warmLongestMainThreadCpuMs} ms)`,
    );
    console.log(`right after one more commit: p50 ${result.afterOneCommit.p50} ms, p99 ${result.afterOneCommit.p99} ms`);
    console.log(`load average ${result.loadAverage}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

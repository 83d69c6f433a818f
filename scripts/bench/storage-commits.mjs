// Storage benchmark: config-update commits per second on repositories of 1,000 and 10,000 flags (× 3
// environments), and the time and memory to load a 10,000-flag commit into typed state: cold (a fresh
// instance, first start), on a restart (from the parse cache the first start saved), warm after a one-file
// change, and cold once `git gc` has packed the objects (without the parse cache).
//
//   npm run build && node --expose-gc scripts/bench/storage-commits.mjs [--scenarios 1000x1,10000x1,10000x25] [--seconds 3] [--json]
//
// A scenario is <flags>x<projects>: the flags are spread evenly over that many projects (25 is the default
// plan limit, so a 10,000-flag organisation has at least 400 flags a project). Runs against the compiled
// dist/ (FLAGOPS_DIST overrides where it is), in a temp dir it removes after. Commits are durable (fsync);
// seeding is not, to keep the run short. The `git gc` step needs the git CLI and is skipped without it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    scenarios: { type: 'string', default: '1000x1,10000x1,10000x25' },
    seconds: { type: 'string', default: '3' },
    json: { type: 'boolean', default: false },
  },
});
const dist = resolve(process.env.FLAGOPS_DIST ?? new URL('../../dist', import.meta.url).pathname);
const { FlagRepository } = await import(pathToFileURL(join(dist, 'foundations/storage/index.js')).href);
const ENVS = ['dev', 'staging', 'prod'];
const actor = { type: 'agent', name: 'bench', keyPrefix: 'svc_agt_benchbench' };

const gc = () => globalThis.gc?.();
const mib = (bytes) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const ms = (value) => Math.round(value * 10) / 10;

/** A deterministic pseudo-random stream, so every run writes the same repository. */
function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Every flag's configs differ from every other flag's, as in a real repository (no blob is shared). */
function configYaml(key, random, version) {
  const rules =
    random() < 0.3
      ? `rules:\n  - id: beta\n    serve: on\n    conditions:\n      - attribute: country\n        op: in\n        value: [DE, FR]\n`
      : 'rules: []\n';
  return `enabled: ${random() < 0.5}\nrolloutPct: ${Math.floor(random() * 101)}\nvalueOn: ${key}-on\nvalueOff: "off"\nversion: ${version}\n${rules}`;
}

const keyOf = (i) => `flag-${String(i).padStart(5, '0')}`;
const projectOf = (i, projects) => `p${String(i % projects).padStart(2, '0')}`;

function flagFiles(project, key, random) {
  return [
    {
      path: `projects/${project}/flags/${key}.yaml`,
      content: `id: flg_${key}\nkey: ${key}\nname: Flag ${key}\nkind: string\ndefaultValue: "off"\narchivedAt: null\n`,
    },
    ...ENVS.map((env) => ({ path: `projects/${project}/environments/${env}/${key}.yaml`, content: configYaml(key, random, 1) })),
  ];
}

async function seed(gitdir, flags, projects) {
  const repo = await FlagRepository.open({ gitdir, create: true, durable: false });
  const random = rng(flags);
  const changes = [];
  for (let p = 0; p < projects; p++) {
    const slug = projectOf(p, projects);
    changes.push({ path: `projects/${slug}/project.yaml`, content: `id: prj_${slug}\nname: Project ${slug}\nslug: ${slug}\n` });
  }
  for (let i = 0; i < flags; i++) changes.push(...flagFiles(projectOf(i, projects), keyOf(i), random));
  const started = performance.now();
  await repo.update(() => ({ changes, meta: { action: 'import', summary: `import ${flags} flags`, actor }, result: undefined }));
  const seedMs = performance.now() - started;
  await repo.close();
  return seedMs;
}

/** One config update as the control plane makes it: read the version, write the next one. */
function configUpdate(flags, projects, random) {
  const i = Math.floor(random() * flags);
  const key = keyOf(i);
  const project = projectOf(i, projects);
  const env = ENVS[Math.floor(random() * 3)];
  return (current) => {
    const version = current.projects.get(project).flags.get(key).environments[env].version;
    return {
      changes: [{ path: `projects/${project}/environments/${env}/${key}.yaml`, content: configYaml(key, random, version + 1) }],
      meta: { action: 'config_update', summary: `update ${key} in ${env}`, actor, project, flag: key, environment: env },
      result: version + 1,
    };
  };
}

async function commitRate(repo, flags, projects, seconds) {
  const random = rng(7);
  const times = [];
  const cpuBefore = process.cpuUsage();
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    const started = performance.now();
    await repo.update(configUpdate(flags, projects, random));
    times.push(performance.now() - started);
  }
  const cpu = process.cpuUsage(cpuBefore);
  times.sort((a, b) => a - b);
  const total = times.reduce((a, b) => a + b, 0);
  return {
    commits: times.length,
    perSecond: Math.round((times.length / total) * 1000 * 10) / 10,
    p50Ms: ms(times[times.length >> 1]),
    p95Ms: ms(times[Math.floor(times.length * 0.95)]),
    cpuMsPerCommit: ms((cpu.user + cpu.system) / 1000 / times.length),
  };
}

async function measureLoad(read) {
  gc();
  const before = process.memoryUsage();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const loaded = await read();
  const elapsed = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  gc();
  const after = process.memoryUsage();
  return {
    ms: ms(elapsed),
    cpuMs: ms((cpu.user + cpu.system) / 1000),
    heapDeltaMiB: mib(after.heapUsed - before.heapUsed),
    rssDeltaMiB: mib(after.rss - before.rss),
    issues: loaded.issues.length,
  };
}

function hasGit() {
  try {
    execFileSync('git', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const root = mkdtempSync(join(tmpdir(), 'flagops-bench-storage-'));
const results = { node: process.version, loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100), scenarios: [] };
try {
  for (const scenario of values.scenarios.split(',')) {
    const [flags, projects] = scenario.split('x').map(Number);
    const gitdir = join(root, `${flags}x${projects}.git`);
    const seedMs = await seed(gitdir, flags, projects);
    const result = { flags, projects, files: projects + flags * 4, seedMs: ms(seedMs) };
    results.scenarios.push(result);

    // A fresh instance has empty caches: a server starting on an existing repository for the first time.
    const first = await FlagRepository.open({ gitdir });
    result.cold = await measureLoad(() => first.readState());
    // Closing waits for the parse cache the first read saves in the background.
    await first.close();
    // A restart: parsed files come from the cache (<gitdir>/flagops-cache), blobs are not read.
    const repo = await FlagRepository.open({ gitdir });
    result.restart = await measureLoad(() => repo.readState());
    result.commits = await commitRate(repo, flags, projects, Number(values.seconds));
    // Someone else moves main by one file; this instance reads the new head.
    const other = await FlagRepository.open({ gitdir });
    await other.update(configUpdate(flags, projects, rng(99)));
    result.warmAfterOneFileChange = await measureLoad(() => repo.readState());
    await Promise.all([repo.close(), other.close()]);
    if (hasGit()) {
      execFileSync('git', ['gc', '--quiet'], { cwd: gitdir, stdio: 'ignore' });
      const packed = await FlagRepository.open({ gitdir, parseCache: false });
      result.coldPacked = await measureLoad(() => packed.readState());
      await packed.close();
    }
    rmSync(gitdir, { recursive: true, force: true });
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}

if (values.json) {
  console.log(JSON.stringify(results, null, 2));
} else {
  console.log(`storage benchmark (node ${results.node}, load average at start ${results.loadavg.join(' ')})`);
  for (const r of results.scenarios) {
    const c = r.commits;
    console.log(`${r.flags} flags in ${r.projects} project(s), ${r.files} files (seeded in ${r.seedMs} ms):`);
    console.log(
      `  config-update commits: ${c.perSecond}/s (${c.commits} commits; p50 ${c.p50Ms} ms, p95 ${c.p95Ms} ms; CPU ${c.cpuMsPerCommit} ms/commit)`,
    );
    console.log(
      `  load, cold:   ${r.cold.ms} ms (CPU ${r.cold.cpuMs} ms, heap +${r.cold.heapDeltaMiB} MiB, rss +${r.cold.rssDeltaMiB} MiB)`,
    );
    console.log(`  load, restart (parse cache): ${r.restart.ms} ms (CPU ${r.restart.cpuMs} ms, heap +${r.restart.heapDeltaMiB} MiB)`);
    console.log(`  load, warm after a one-file change: ${r.warmAfterOneFileChange.ms} ms (CPU ${r.warmAfterOneFileChange.cpuMs} ms)`);
    if (r.coldPacked)
      console.log(
        `  load, cold after git gc (packed, no parse cache): ${r.coldPacked.ms} ms (CPU ${r.coldPacked.cpuMs} ms, heap +${r.coldPacked.heapDeltaMiB} MiB)`,
      );
  }
}

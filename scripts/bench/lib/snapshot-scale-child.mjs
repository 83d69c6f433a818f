// One run of snapshot-scale.mjs against one build (FLAGOPS_DIST): imports FLAGS flags with `flagops import`,
// starts the service on them and times config updates, kills and clears through the control-plane API, each
// answered once the change is served. Prints one line of JSON.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const FLAGS = Number(process.env.BENCH_FLAGS ?? 10_000);
const UPDATES = Number(process.env.BENCH_UPDATES ?? 100);
const KILLS = Number(process.env.BENCH_KILLS ?? 100);
const dist = resolve(process.env.FLAGOPS_DIST ?? new URL('../../../dist', import.meta.url).pathname);
const load = (file) => import(pathToFileURL(join(dist, file)).href);
const { startService } = await load('service.js');
const { silentLogger } = await load('foundations/log/logger.js');
const { layout } = await load('foundations/repository/layout.js');
const { serializeRepositoryFile } = await load('foundations/repository/serialize-file.js');

const ADMIN = 'svc_adm_benchbenchbenchbenchbench0001';
const SLUG = 'big';
const work = mkdtempSync(join(os.tmpdir(), 'flagops-bench-scale-'));
const source = join(work, 'flags');
const dataDir = join(work, 'data');

/** The flags: each with a two-condition rule and a 30 % rollout. */
function writeFlagsDirectory() {
  const write = (path, file) => {
    const full = join(source, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, serializeRepositoryFile(file));
  };
  write(layout.projectFile(SLUG), { kind: 'project', value: { id: 'prj_big', name: 'Big', slug: SLUG } });
  for (const env of ['dev', 'staging', 'prod']) write(layout.killsFile(SLUG, env), { kind: 'kills', value: { kills: {} } });
  for (let i = 0; i < FLAGS; i++) {
    const key = `flag-${i}`;
    write(layout.flagFile(SLUG, key), { kind: 'flag', value: { id: `flg_big_${i}`, key, kind: 'boolean', archivedAt: null } });
    const config = {
      enabled: true,
      rolloutPct: 30,
      valueOn: true,
      valueOff: false,
      version: 1,
      rules: [
        {
          id: 'eu-new-app',
          serve: 'on',
          conditions: [
            { attribute: 'country', op: 'in', value: ['DE', 'FR'] },
            { attribute: 'appVersion', op: 'semver_gt', value: '2.0.0' },
          ],
        },
      ],
    };
    for (const env of ['dev', 'staging', 'prod']) write(layout.configFile(SLUG, env, key), { kind: 'config', value: config });
  }
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { n: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] };
}
const rssMb = () => {
  globalThis.gc?.();
  return Math.round(process.memoryUsage().rss / 2 ** 20);
};

writeFlagsDirectory();
const importStarted = performance.now();
execFileSync(
  process.execPath,
  [join(dist, 'apps/cli/main.js'), 'import', source, '--org', 'bench', '--data-dir', dataDir, '--create', '--actor', 'bench'],
  {
    stdio: ['ignore', 'ignore', 'inherit'],
  },
);
const importMs = performance.now() - importStarted;
const rssBefore = rssMb();
const startStarted = performance.now();
const service = await startService(
  {
    dataDir,
    host: '127.0.0.1',
    controlPort: 0,
    evalPort: 0,
    bootstrapKeys: [{ org: 'bench', key: ADMIN }],
    logLevel: 'error',
    // FLAGOPS_GIT_GC_COMMITS as the service reads it (0: never pack), to tell packing's share of a tail.
    ...(process.env.FLAGOPS_GIT_GC_COMMITS ? { gitGcCommits: Number(process.env.FLAGOPS_GIT_GC_COMMITS) } : {}),
  },
  silentLogger,
);
const startMs = performance.now() - startStarted;

async function call(method, path, body) {
  const res = await fetch(`${service.controlUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** BENCH_PROFILE=<prefix>: a CPU profile of each timed phase, <prefix>-<phase>.cpuprofile (for node --cpu-prof's viewers). */
const profileDir = process.env.BENCH_PROFILE;
const inspector = profileDir ? new (await import('node:inspector/promises')).Session() : undefined;
async function profiled(phase, fn) {
  if (!inspector) return fn();
  inspector.connect();
  await inspector.post('Profiler.enable');
  await inspector.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await inspector.post('Profiler.stop');
    writeFileSync(`${profileDir}-${phase}.cpuprofile`, JSON.stringify(profile));
    inspector.disconnect();
  }
}

try {
  const rssServing = rssMb() - rssBefore;
  // Warm-up (JIT, caches), not measured: dev configs and dev kills.
  for (let i = 0; i < 10; i++) await call('PUT', `/api/v1/flags/flg_big_${i}/environments/dev/config`, { rolloutPct: 40 + i });
  for (let i = 0; i < 5; i++) await call('POST', `/api/v1/flags/flg_big_${i}/environments/dev/kill`);

  // SDKs have fetched the snapshots before the changes: their bytes are made already.
  for (const env of ['prod', 'staging']) service.holder.view('bench', 'prj_big', env).snapshotJson();
  const updates = [];
  await profiled('update', async () => {
    for (let n = 0; n < UPDATES; n++) {
      const i = (n * 97) % FLAGS;
      const t = performance.now();
      const flag = await call('PUT', `/api/v1/flags/flg_big_${i}/environments/prod/config`, { rolloutPct: n % 101 });
      updates.push(performance.now() - t);
      if (flag.environments.prod.rolloutPct !== n % 101) throw new Error('the update is not what the answer serves');
    }
  });
  const timeText = (env) => {
    const t = performance.now();
    service.holder.view('bench', 'prj_big', env).snapshotJson();
    return performance.now() - t;
  };
  // The first request for a new version's snapshot makes its bytes: after a config update, and after a kill.
  const textAfterUpdateMs = timeText('prod');
  // Each kill is cleared again (a clear is a PUT with clearKill), so the kills file stays as small as it is
  // in an environment where a kill is rare. Wall time until the answer, which waits until evaluation serves
  // it, and the process's CPU time over the call (this client's share included).
  const kills = [];
  const killCpu = [];
  const clears = [];
  const clearCpu = [];
  const timed = async (wall, cpu, send) => {
    const t = performance.now();
    const c = process.cpuUsage();
    const answer = await send();
    const used = process.cpuUsage(c);
    wall.push(performance.now() - t);
    cpu.push((used.user + used.system) / 1000);
    return answer;
  };
  await profiled('kill', async () => {
    for (let n = 0; n < KILLS; n++) {
      const id = `flg_big_${(n * 31) % FLAGS}`;
      const flag = await timed(kills, killCpu, () => call('POST', `/api/v1/flags/${id}/environments/staging/kill`));
      if (!flag.environments.staging.killed) throw new Error('the kill is not served');
      if (n === KILLS - 1) break; // the last stays killed: the snapshot text after a kill is timed below
      const cleared = await timed(clears, clearCpu, () =>
        call('PUT', `/api/v1/flags/${id}/environments/staging/config`, { clearKill: true }),
      );
      if (cleared.environments.staging.killed) throw new Error('the clear is not served');
    }
  });
  const textAfterKillMs = timeText('staging');
  const snapshotBytes = Buffer.byteLength(service.holder.view('bench', 'prj_big', 'prod').snapshotJson());
  console.log(
    JSON.stringify({
      flags: FLAGS,
      importMs,
      startMs,
      snapshotBytes,
      textAfterUpdateMs,
      textAfterKillMs,
      configUpdate: summary(updates),
      kill: summary(kills),
      killCpu: summary(killCpu),
      clear: summary(clears),
      clearCpu: summary(clearCpu),
      rssServingMb: rssServing,
      rssMb: rssMb(),
    }),
  );
} finally {
  await service.stop();
  rmSync(work, { recursive: true, force: true });
}

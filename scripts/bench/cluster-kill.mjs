// Kill → served on every control plane and replica: three control planes (processes, one PostgreSQL, one git
// host on loopback) and three replicas, each following another control plane first. Each kill goes through
// the next control plane in turn and is timed from sending POST .../kill until every evaluation port's and
// every replica's /v1/stream has announced a newer version (the moment an SDK following it learns of it); a
// clear follows each kill, and both phases run: the git host up, then down (kills answered without it).
//
// A second phase (the git host up) sends each kill while a config write through the same control plane waits for
// the turn to write to the git remote, which the benchmark holds as another control plane would (the turn's
// PostgreSQL advisory lock) until the kill is served everywhere or given up (BENCH_WAITING_KILLS, default 10).
// A third makes the git host hang (it takes connections and answers nothing) for one kill through each control
// plane, the first since it hung, each timed alike.
//
//   npm run build && npm run bench -- cluster-kill          (BENCH_KILLS: kills per phase, default 30)
import { cpus, loadavg } from 'node:os';
import pg from 'pg';
import { DIST_ENTRIES, loadClusterHarness } from './lib/cluster-harness.mjs';
import { followVersions, percentile } from './lib/stream-versions.mjs';

const KILLS = Number(process.env.BENCH_KILLS ?? 30);
const WAITING_KILLS = Number(process.env.BENCH_WAITING_KILLS ?? 10);
/** A kill not announced everywhere within this long counts as not served (and is reported). */
const GIVE_UP_MS = 5_000;
const { startCluster, POSTGRES_MISSING } = await loadClusterHarness();
if (POSTGRES_MISSING !== null) {
  console.log(`skipped: ${POSTGRES_MISSING}`);
  process.exit(0);
}

const cluster = await startCluster({ controlPlanes: 3, replicas: 3, entries: DIST_ENTRIES });
try {
  const cps = cluster.controlPlanes;
  const api = async (cp, method, route, body) => {
    const res = await cp.api.request(method, route, { body });
    if (res.status >= 300) throw new Error(`${method} ${route} on ${cp.name}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const project = await api(cps[0], 'POST', '/api/v1/projects', { name: 'Bench', slug: 'bench' });
  const flag = await api(cps[0], 'POST', `/api/v1/projects/${project.id}/flags`, { key: 'checkout' });
  await api(cps[0], 'PUT', `/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 });
  const sdk = (await api(cps[0], 'POST', '/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).key;
  const servers = [...cps.map((cp) => cp.evalUrl), ...cluster.replicas.map((r) => r.url)];
  const serverNames = [...cps.map((cp) => cp.name), ...cluster.replicas.map((_, i) => `replica${i + 1}`)];
  // Every server serves the flag before the clock starts.
  for (const url of servers) await until(async () => (await evaluate(url, sdk))?.value === true, `${url} serves the flag`);
  const streams = await Promise.all(servers.map((url) => followVersions(url, sdk)));

  /** Sends one kill (or clear) through `cp`; the ms until each server announced a newer version, or null. */
  async function timed(cp, method, route, body) {
    const seen = streams.map((s) => s.current());
    const started = performance.now();
    const arrivals = streams.map((s, i) =>
      Promise.race([s.next(seen[i] + 1).then((t) => t - started), sleep(GIVE_UP_MS).then(() => null)]),
    );
    const answer = await cp.api.request(method, route, { body });
    if (answer.status !== 200) throw new Error(`${route} on ${cp.name}: ${answer.status} ${JSON.stringify(answer.body)}`);
    const answeredMs = performance.now() - started;
    return { answeredMs, arrivals: await Promise.all(arrivals) };
  }

  const other = await api(cps[0], 'POST', `/api/v1/projects/${project.id}/flags`, { key: 'other' });
  const turnHolder = new pg.Client({ connectionString: cluster.databaseUrl });
  await turnHolder.connect();
  /** Waits until a control plane waits for the turn (an advisory lock not granted). */
  const someoneWaits = () =>
    until(
      async () =>
        (await turnHolder.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")).rows[0].n > 0,
      'a config write waits for the turn',
    );

  /**
   * Kills (each followed by a clear) through the control planes in turn; with `waiting`, each while a config
   * write through the same control plane waits for the turn, held here until the kill is served or given up.
   */
  async function phase(name, kills = KILLS, waiting = false) {
    const everywhere = [];
    const answered = [];
    let missing = 0;
    let slowest = { ms: -1 };
    for (let i = 0; i < kills; i++) {
      const cp = cps[i % cps.length];
      let write;
      if (waiting) {
        await turnHolder.query('BEGIN');
        await turnHolder.query("SELECT pg_advisory_xact_lock(hashtextextended('flagops:git-remote:acme', 0))");
        write = cp.api.request('PUT', `/api/v1/flags/${other.id}/environments/dev/config`, { body: { rolloutPct: i % 100 } });
        await someoneWaits();
      }
      const kill = await timed(cp, 'POST', `/api/v1/flags/${flag.id}/environments/prod/kill`);
      if (waiting) {
        await turnHolder.query('COMMIT');
        await write;
      }
      answered.push(kill.answeredMs);
      if (kill.arrivals.includes(null)) missing += kill.arrivals.filter((t) => t === null).length;
      else everywhere.push(Math.max(...kill.arrivals));
      const ms = kill.arrivals.includes(null) ? Number.POSITIVE_INFINITY : Math.max(...kill.arrivals);
      if (ms > slowest.ms) slowest = { ms, through: cp.name, arrivals: kill.arrivals, answeredMs: kill.answeredMs };
      await timed(cps[(i + 1) % cps.length], 'PUT', `/api/v1/flags/${flag.id}/environments/prod/config`, { clearKill: true });
    }
    const ms = (v) => (v === undefined ? 'n/a' : `${v.toFixed(1)} ms`);
    console.log(`${name}:`);
    console.log(
      `  served on all ${servers.length}: p50 ${ms(percentile(everywhere, 50))}  p99 ${ms(percentile(everywhere, 99))}  max ${ms(Math.max(...everywhere))}`,
    );
    console.log('  by kill: ' + everywhere.map((v) => v.toFixed(0)).join(' '));
    console.log(`  answered (200):  p50 ${ms(percentile(answered, 50))}  p99 ${ms(percentile(answered, 99))}`);
    // Which server was last for the slowest kill says where a tail comes from (one control plane, or all).
    const at = (t) => (t === null ? 'not served' : `${t.toFixed(0)}`);
    console.log(
      `  slowest, through ${slowest.through}: answered ${at(slowest.answeredMs)}, served ${serverNames.map((n, j) => `${n} ${at(slowest.arrivals[j])}`).join(', ')} ms`,
    );
    if (missing > 0) console.log(`  NOT SERVED within ${GIVE_UP_MS} ms: ${missing} of ${kills * servers.length} (kill, server) pairs`);
  }

  /**
   * The git host hangs (takes connections, answers nothing): a kill through each control plane, the first since
   * it hung (the next ones are held at once), then its clear; answered and served without the host. The host
   * answers again before the next phase, and each control plane's main reaches it.
   */
  async function hungHost() {
    const everywhere = [];
    const answered = [];
    cluster.gitHost.hang();
    try {
      for (let i = 0; i < cps.length; i++) {
        const kill = await timed(cps[i], 'POST', `/api/v1/flags/${flag.id}/environments/prod/kill`);
        answered.push(kill.answeredMs);
        everywhere.push(kill.arrivals.includes(null) ? Number.POSITIVE_INFINITY : Math.max(...kill.arrivals));
        await timed(cps[i], 'PUT', `/api/v1/flags/${flag.id}/environments/prod/config`, { clearKill: true });
      }
    } finally {
      cluster.gitHost.answer();
    }
    const ms = (v) => (Number.isFinite(v) ? `${v.toFixed(0)} ms` : `not within ${GIVE_UP_MS} ms`);
    console.log('git host hangs, the first kill through each control plane since:');
    console.log(`  served on all ${servers.length}: ${everywhere.map(ms).join(', ')}`);
    console.log(`  answered (200):  ${answered.map(ms).join(', ')}`);
    // Each control plane's held kills reach the host again (pushed every second) before the next phase.
    for (const cp of cps)
      await until(async () => {
        const remote = (await cp.api.get('/healthz')).body.gitRemote;
        return remote?.reachable === true && remote.holdingKills === false;
      }, `${cp.name} reaches the git host again`);
  }

  console.log(
    `kill → announced on every evaluation port and replica (${KILLS} kills a phase, 3 control planes, 3 replicas, ${cpus().length} cores, load ${loadavg()[0].toFixed(2)})`,
  );
  await phase('git host up (goal p99 < 100 ms)');
  await phase('git host up, a config write through the same control plane waiting for its turn', WAITING_KILLS, true);
  await turnHolder.end();
  await hungHost();
  await cluster.gitHost.down();
  await phase('git host down (goal p99 < 50 ms)');
  await cluster.gitHost.up();
  for (const s of streams) await s.close();
} finally {
  await cluster.stop();
}

async function evaluate(url, key) {
  const res = await fetch(`${url}/v1/evaluate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ key: 'checkout', context: { userId: 'u1' } }),
  });
  return res.ok ? (await res.json()).checkout : undefined;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function until(check, what, ms = 30_000) {
  for (const started = Date.now(); Date.now() - started < ms; await sleep(20)) if (await check()) return;
  throw new Error(`not within ${ms} ms: ${what}`);
}

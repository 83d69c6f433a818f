#!/usr/bin/env node
// A fault run: two control planes (one PostgreSQL, one git host on loopback) and two replicas, while writers
// keep making config changes and kills through both control planes; meanwhile (a) one control plane is killed
// with SIGKILL and started again, (b) the git host goes down and comes back, (c) PostgreSQL is stopped and
// started again. It prints what each server served during each fault and which writes were acknowledged,
// then checks that every acknowledged write and kill is on the git host and served everywhere, and says what
// was lost. Exit code 1 when anything acknowledged was lost.
//
//   npm run build && node scripts/fault-run.mjs        (FAULT_SECONDS: how long each fault lasts, default 5)
import { execFileSync } from 'node:child_process';
import { DIST_ENTRIES, loadClusterHarness } from './bench/lib/cluster-harness.mjs';

const FAULT_MS = Number(process.env.FAULT_SECONDS ?? 5) * 1000;
const LANES = 3;
const { startCluster, POSTGRES_MISSING } = await loadClusterHarness();
if (POSTGRES_MISSING !== null) {
  console.log(`not run: ${POSTGRES_MISSING}`);
  process.exit(0);
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const cluster = await startCluster({ controlPlanes: 2, replicas: 2, entries: DIST_ENTRIES });
let lost = 0;
try {
  const [a, b] = cluster.controlPlanes;
  const cps = [a, b];
  const servers = { 'cp1 eval': a.evalUrl, 'cp2 eval': b.evalUrl, replica1: cluster.replicas[0].url, replica2: cluster.replicas[1].url };
  const project = (await a.api.post('/api/v1/projects', { name: 'Faults', slug: 'faults' })).body;
  const sdk = (await a.api.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
  /** Lane i changes flag `write-i` (rolloutPct, a new value each time) and kills or clears `kill-i`, in turn. */
  const flags = [];
  for (let i = 0; i < LANES; i++) {
    const lane = {};
    for (const kind of ['write', 'kill']) {
      lane[kind] = (await a.api.post(`/api/v1/projects/${project.id}/flags`, { key: `${kind}-${i}` })).body;
      await a.api.put(`/api/v1/flags/${lane[kind].id}/environments/prod/config`, { enabled: true, rolloutPct: 100 });
    }
    flags.push(lane);
  }
  // A write through the second takes the remote's head on its way, so it knows the flags whatever its notices do.
  await b.api.post('/api/v1/projects', { name: 'Other', slug: 'other' });

  let phase = 'before the faults';
  /** Per phase: writes and kills sent, by outcome; evaluations sampled, by server and status. */
  const log = {};
  const tally = (bucket, key) => {
    log[phase] ??= { writes: {}, kills: {}, served: {} };
    log[phase][bucket][key] = (log[phase][bucket][key] ?? 0) + 1;
  };
  /** The acknowledged writes (flag key → rolloutPct values, in order) and kill states (flag key → killed?). */
  const acknowledged = new Map();
  const killState = new Map();
  let running = true;

  const lane = async (i) => {
    let n = 0;
    while (running) {
      const cp = cps[n % 2];
      const { write, kill } = flags[i];
      const pct = (n % 100) + 1;
      const wr = await cp.api.put(`/api/v1/flags/${write.id}/environments/prod/config`, { rolloutPct: pct }).catch(() => null);
      tally('writes', `${cp.name} ${wr?.status ?? 'no answer'}`);
      if (wr?.status === 200) acknowledged.set(write.key, [...(acknowledged.get(write.key) ?? []), pct]);
      // Kills and clears through both control planes: kill, kill, clear, clear, …, each alternating between them.
      const killing = Math.floor(n / 2) % 2 === 0;
      const route = killing ? `/api/v1/flags/${kill.id}/environments/prod/kill` : `/api/v1/flags/${kill.id}/environments/prod/config`;
      const kr = await (killing ? cp.api.post(route, { reason: 'fault run' }) : cp.api.put(route, { clearKill: true })).catch(() => null);
      tally('kills', `${cp.name} ${killing ? 'kill' : 'clear'} ${kr?.status ?? 'no answer'}`);
      if (kr?.status === 200) killState.set(kill.key, killing);
      n++;
      await sleep(100);
    }
  };
  const sampler = async () => {
    while (running) {
      for (const [name, url] of Object.entries(servers)) {
        const res = await fetch(`${url}/v1/evaluate`, {
          method: 'POST',
          headers: { authorization: `Bearer ${sdk}`, 'content-type': 'application/json' },
          body: JSON.stringify({ key: 'write-0', context: { userId: 'u1' } }),
        }).catch(() => null);
        tally('served', `${name} ${res?.status ?? 'no answer'}`);
      }
      await sleep(200);
    }
  };
  const work = [...Array.from({ length: LANES }, (_, i) => lane(i)), sampler()];

  const during = async (name, start, end) => {
    phase = name;
    await start();
    await sleep(FAULT_MS);
    await end();
    phase = `after: ${name}`;
    await sleep(3_000);
  };
  await sleep(2_000);
  await during(
    '(a) cp1 killed with SIGKILL',
    () => a.sigkill(),
    () => a.start(),
  );
  await during(
    '(b) git host down',
    () => cluster.gitHost.down(),
    () => cluster.gitHost.up(),
  );
  await during(
    '(c) PostgreSQL stopped',
    () => cluster.postgres.stopServer(),
    () => cluster.postgres.startServer(),
  );
  running = false;
  await Promise.all(work);

  console.log(`fault run: 2 control planes, 2 replicas, PostgreSQL, a git host; ${LANES} writers; each fault ${FAULT_MS / 1000} s\n`);
  for (const [name, { writes, kills, served }] of Object.entries(log)) {
    console.log(name);
    console.log(`  writes: ${format(writes)}`);
    console.log(`  kills:  ${format(kills)}`);
    console.log(`  served: ${format(served)}`);
  }

  // What must hold: each acknowledged write in the host's history, the last one served everywhere; each
  // flag's last acknowledged kill state served everywhere, its kills on the host once each.
  const settle = async (what, check) => {
    for (const started = Date.now(); Date.now() - started < 30_000; await sleep(100)) if (await check()) return true;
    console.log(`  LOST or not served within 30 s: ${what}`);
    lost++;
    return false;
  };
  console.log('\nafter the faults');
  let writesChecked = 0;
  for (const [key, values] of acknowledged) {
    const history = gitLog(cluster.gitHost.gitdir, `projects/faults/environments/prod/${key}.yaml`);
    const onHost = new Set([...history.matchAll(/^\+rolloutPct: (\d+)$/gm)].map((m) => Number(m[1])));
    const missing = values.filter((v) => !onHost.has(v));
    if (missing.length > 0) {
      console.log(`  LOST on the git host: ${key} rolloutPct ${missing.join(', ')}`);
      lost += missing.length;
    }
    writesChecked += values.length;
    const last = values.at(-1);
    for (const cp of cps)
      await settle(`${key} rolloutPct ${last} on ${cp.name}`, async () => {
        return (await cp.api.get(`/api/v1/flags/lookup?projectSlug=faults&key=${key}`)).body.environments?.prod?.rolloutPct === last;
      });
  }
  for (const [key, killed] of killState)
    for (const [name, url] of Object.entries(servers))
      await settle(`${key} ${killed ? 'killed' : 'not killed'} on ${name}`, async () => {
        const res = await fetch(`${url}/v1/evaluate`, {
          method: 'POST',
          headers: { authorization: `Bearer ${sdk}`, 'content-type': 'application/json' },
          body: JSON.stringify({ key, context: { userId: 'u1' } }),
        }).catch(() => null);
        return res?.ok === true && ((await res.json())[key].reason === 'killed') === killed;
      });
  const sentKills = Object.values(log)
    .flatMap(({ kills }) => Object.entries(kills))
    .reduce((sum, [outcome, count]) => sum + (/ (kill|clear) 200$/.test(outcome) ? count : 0), 0);
  const hostKills = execFileSync(
    'git',
    ['--git-dir', cluster.gitHost.gitdir, 'log', '--format=%(trailers:key=Flagops-Action,valueonly)', 'main'],
    {
      encoding: 'utf8',
    },
  )
    .split('\n')
    .filter((action) => action === 'kill' || action === 'clear_kill').length;
  console.log(
    `  acknowledged writes checked on the git host: ${writesChecked}; kills and clears acknowledged: ${sentKills}, on the git host: ${hostKills}`,
  );
  console.log(lost === 0 ? '  lost: nothing' : `  lost: ${lost}`);
} finally {
  await cluster.stop();
}
process.exit(lost === 0 ? 0 : 1);

function format(counts) {
  return Object.entries(counts)
    .sort(([x], [y]) => x.localeCompare(y))
    .map(([outcome, count]) => `${outcome}: ${count}`)
    .join(', ');
}

function gitLog(gitdir, file) {
  return execFileSync('git', ['--git-dir', gitdir, 'log', '-p', '--format=', 'main', '--', file], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
}

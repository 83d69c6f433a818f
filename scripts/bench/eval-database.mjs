// What the state in PostgreSQL costs on the evaluation hot path: POST /v1/evaluate (1 key and 20 keys) against
// a service with FLAGOPS_DATABASE_URL (a PostgreSQL cluster of the run's own) and one with the embedded files,
// in the same run, alternating rounds so that drift of the machine weighs on both alike. Servers pinned to
// core 0, autocannon (50 keep-alive connections) and PostgreSQL to core 1.
//
//   npm run build && npm run bench -- eval-database          (BENCH_SECONDS 5, BENCH_ROUNDS 3)
//   BENCH_AA=1 node scripts/bench/eval-database.mjs           both servers on the files: the spread of two identical ones
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { loadClusterHarness } from './lib/cluster-harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
/** An A/A run: the "PostgreSQL" server keeps its state in files too, so the ratio shows only the machine's noise. */
const sameBoth = process.env.BENCH_AA === '1';
const { PostgresCluster, POSTGRES_MISSING } = await loadClusterHarness();
if (POSTGRES_MISSING !== null) {
  console.log(`skipped: ${POSTGRES_MISSING}`);
  process.exit(0);
}
spawnSync('taskset', ['-cp', '1', String(process.pid)], { stdio: 'ignore' });
const postgres = await PostgresCluster.start();

async function startChild(env) {
  const child = spawn('taskset', ['-c', '0', process.execPath, path.join(here, 'lib', 'eval-server-child.mjs')], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`eval-server-child exited with ${code}`)));
  });
  return { child, ...JSON.parse(line) };
}

function load(server, body, duration = seconds) {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `${server.evalUrl}/v1/evaluate`,
        method: 'POST',
        headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
        body,
        connections: 50,
        duration,
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
  });
}

const context = { userId: 'user-42', attributes: { country: 'DE', appVersion: '2.3.1' } };
const bodies = {
  '1 key': JSON.stringify({ key: 'flag-0', context }),
  '20 keys': JSON.stringify({ keys: Array.from({ length: 20 }, (_, i) => `flag-${i}`), context }),
};
const servers = {};
try {
  servers.postgres = await startChild(sameBoth ? {} : { FLAGOPS_DATABASE_URL: await postgres.createDatabase() });
  servers.files = await startChild({});
  const totals = {};
  for (const [name, body] of Object.entries(bodies)) {
    for (const s of Object.values(servers)) await load(s, body, 1); // warm-up
    totals[name] = { postgres: [], files: [] };
    for (let round = 0; round < rounds; round++) {
      // Alternate which goes first, so neither always runs on a warmer (or hotter) machine.
      for (const mode of round % 2 === 0 ? ['postgres', 'files'] : ['files', 'postgres']) {
        const r = await load(servers[mode], body);
        if (r.non2xx + r.errors > 0) throw new Error(`${mode}: ${r.non2xx} non-2xx, ${r.errors} errors`);
        totals[name][mode].push(r.requests.average);
      }
    }
  }
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const what = sameBoth ? 'A/A: two servers, both with their state in files' : 'state in PostgreSQL vs in files';
  console.log(`\nPOST /v1/evaluate, ${what}, ${rounds} alternating rounds of ${seconds} s, 50 connections\n`);
  const [a, b] = sameBoth ? ['files (A)', 'files (B)'] : ['PostgreSQL', 'files'];
  console.log(`| request | ${a}, requests/s | ${b}, requests/s | ${a} / ${b} |\n|---|---|---|---|`);
  for (const [name, { postgres: withDb, files }] of Object.entries(totals)) {
    console.log(
      `| ${name} | ${Math.round(mean(withDb)).toLocaleString('en')} | ${Math.round(mean(files)).toLocaleString('en')} | ${((mean(withDb) / mean(files)) * 100).toFixed(1)} % |`,
    );
  }
  console.log('\ngoal: within 5 % (evaluation never touches the database)');
} finally {
  for (const s of Object.values(servers)) s.child.kill('SIGTERM');
  await Promise.all(Object.values(servers).map((s) => new Promise((resolve) => s.child.once('exit', resolve))));
  await postgres.destroy();
}

// Config updates per second through two control planes against through one, in the same run: two control
// planes (processes on one PostgreSQL and one git host on loopback); eight writers each change a flag of
// their own (PUT .../config, the next rolloutPct) for BENCH_SECONDS, all through the first control plane, or
// half through each. Rounds alternate which goes first. Writes not answered 200 are counted and named.
//
//   npm run build && npm run bench -- cluster-config-writes     (BENCH_SECONDS 5, BENCH_ROUNDS 3)
import { cpus, loadavg } from 'node:os';
import { DIST_ENTRIES, loadClusterHarness } from './lib/cluster-harness.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WRITERS = 8;
const { startCluster, POSTGRES_MISSING } = await loadClusterHarness();
if (POSTGRES_MISSING !== null) {
  console.log(`skipped: ${POSTGRES_MISSING}`);
  process.exit(0);
}

const cluster = await startCluster({ controlPlanes: 2, entries: DIST_ENTRIES });
try {
  const [a, b] = cluster.controlPlanes;
  const project = (await a.api.post('/api/v1/projects', { name: 'Bench', slug: 'bench' })).body;
  const flags = [];
  for (let i = 0; i < WRITERS; i++) flags.push((await a.api.post(`/api/v1/projects/${project.id}/flags`, { key: `flag-${i}` })).body);
  // A write through the second takes the remote's head on its way; then it knows every flag.
  await b.api.post('/api/v1/projects', { name: 'Other', slug: 'other' });
  for (const flag of flags)
    if ((await b.api.get(`/api/v1/flags/${flag.id}`)).status !== 200) throw new Error(`${b.name} lacks ${flag.key}`);

  let pct = 0;
  const refused = { 'one control plane': [], 'two control planes': [], 'warm-up': [] };
  /** Writes for SECONDS through `via(writer)`; the updates answered 200 per second. */
  const fetches = { 'one control plane': 0, 'two control planes': 0, 'warm-up': 0 };
  const updates = { 'one control plane': 0, 'two control planes': 0, 'warm-up': 0 };
  async function run(mode, via) {
    let done = 0;
    const fetchesBefore = cluster.gitHost.fetches;
    const deadline = performance.now() + SECONDS * 1000;
    await Promise.all(
      flags.map(async (flag, writer) => {
        while (performance.now() < deadline) {
          const res = await via(writer).api.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: pct++ % 101 });
          if (res.status === 200) done++;
          else refused[mode].push(`${res.status} ${res.body?.error?.code}: ${res.body?.error?.message}`);
        }
      }),
    );
    fetches[mode] += cluster.gitHost.fetches - fetchesBefore;
    updates[mode] += done;
    return done / SECONDS;
  }

  const modes = { 'one control plane': () => a, 'two control planes': (writer) => (writer % 2 === 0 ? a : b) };
  const rates = { 'one control plane': [], 'two control planes': [] };
  await run('warm-up', modes['two control planes']); // both warm
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? Object.keys(modes) : Object.keys(modes).reverse();
    for (const mode of order) rates[mode].push(await run(mode, modes[mode]));
  }
  const mean = (xs) => xs.reduce((x, y) => x + y, 0) / xs.length;
  const one = mean(rates['one control plane']);
  const two = mean(rates['two control planes']);
  console.log(
    `config updates/s, ${WRITERS} writers on flags of their own, ${ROUNDS} alternating rounds of ${SECONDS} s (${cpus().length} cores, load ${loadavg()[0].toFixed(2)})`,
  );
  // Fetches from the git host: a push refused because another control plane moved main costs one.
  const perUpdate = (mode) => (fetches[mode] / Math.max(1, updates[mode])).toFixed(2);
  console.log(
    `  through one control plane:  ${one.toFixed(1)}/s  (rounds ${rates['one control plane'].map((r) => r.toFixed(1)).join(', ')}; fetches per update ${perUpdate('one control plane')})`,
  );
  console.log(
    `  through two control planes: ${two.toFixed(1)}/s  (rounds ${rates['two control planes'].map((r) => r.toFixed(1)).join(', ')}; fetches per update ${perUpdate('two control planes')})`,
  );
  // Commit ids left out, so that one kind of refusal is named once.
  for (const [mode, answers] of Object.entries(refused))
    if (answers.length > 0)
      console.log(
        `  not 200 (${mode}): ${answers.length}: ${[...new Set(answers.map((a) => a.replace(/[0-9a-f]{40}/g, '…')))].join('; ')}`,
      );
  console.log(`  two / one: ${(two / one).toFixed(2)}×  (goal ≥ 1×)`);
} finally {
  await cluster.stop();
}

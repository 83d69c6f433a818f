// What one change costs at scale: at 1,000 and 10,000 flags (imported with `flagops import`, each with a
// two-condition rule and a 30 % rollout), config updates and kills (each cleared again) through the
// control-plane API, each answered once the change is served (p50/p99; a kill's CPU time too), the first
// snapshot request's serialization after each, and the service's RSS. With --before <checkout> (built), the same runs alternate between it and this checkout, one
// process per run, so load on the machine falls on both alike (--before may be given more than once).
//   npm run build && node scripts/bench/snapshot-scale.mjs [--before <checkout>] [--flags 1000,10000] [--rounds 1] [--json]
// (npm run bench -- snapshot-scale runs this checkout alone.) BENCH_UPDATES and BENCH_KILLS: samples per run (100).
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    before: { type: 'string', multiple: true },
    flags: { type: 'string', default: '1000,10000' },
    rounds: { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
  },
});
const sizes = values.flags.split(',').map(Number);
// Several --before checkouts (the steps of a change) are named by their directory.
const befores = values.before ?? [];
const builds = [
  ...befores.map((dir) => [befores.length === 1 ? 'before' : path.basename(path.resolve(dir)), path.resolve(dir, 'dist')]),
  ['now', path.resolve(here, '../../dist')],
];

function run(dist, flags) {
  const res = spawnSync(process.execPath, ['--expose-gc', path.join(here, 'lib/snapshot-scale-child.mjs')], {
    env: { ...process.env, FLAGOPS_DIST: dist, BENCH_FLAGS: String(flags) },
    encoding: 'utf8',
    maxBuffer: 16 << 20,
  });
  if (res.status !== 0) throw new Error(`run at ${flags} flags with ${dist} failed:\n${res.stdout}\n${res.stderr}`);
  return JSON.parse(res.stdout.trim().split('\n').at(-1));
}

const results = [];
const loadBefore = loadavg()[0];
for (let round = 0; round < Number(values.rounds); round++)
  for (const flags of sizes) for (const [name, dist] of builds) results.push({ name, flags, ...run(dist, flags) });

const f = (n) => (n >= 100 ? Math.round(n).toString() : n.toFixed(1));
console.log(
  `\nOne change at scale (load average ${loadBefore.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after; ${results[0].configUpdate.n} samples each):\n`,
);
console.log(
  '| build | flags | config update p50 / p99 (ms) | kill p50 / p99 (ms) | kill CPU p50 (ms) | clear p50 / p99 (ms) | snapshot text after an update / a kill (ms) | RSS (MB) | snapshot bytes |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of results)
  console.log(
    `| ${r.name} | ${r.flags.toLocaleString('en')} | ${f(r.configUpdate.p50)} / ${f(r.configUpdate.p99)} | ${f(r.kill.p50)} / ${f(r.kill.p99)} | ${f(r.killCpu.p50)} | ${f(r.clear.p50)} / ${f(r.clear.p99)} | ${f(r.textAfterUpdateMs)} / ${f(r.textAfterKillMs)} | ${r.rssMb} | ${r.snapshotBytes.toLocaleString('en')} |`,
  );
if (values.json) console.log(JSON.stringify(results));

// What writing one kill's objects costs the event loop: the seven objects a kill commits in a 10,000-flag
// environment (the kills file, the environment's 10,001-entry tree, four trees above it, the commit), written
// durably through the object store's write batch, COMMITS times; per commit the wall time until all are on disk
// and the event loop's busy time (the synchronous file calls, hashing, deflating). With --before <checkout>
// (built, more than once allowed), runs alternate between the builds, so load on the machine falls on all alike.
//   npm run build && node scripts/bench/commit-files.mjs [--before <checkout>] [--runs 6] [--commits 200] [--json]
// One child process per run: `node commit-files.mjs --child <dist>`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    before: { type: 'string', multiple: true },
    runs: { type: 'string', default: '6' },
    commits: { type: 'string', default: '200' },
    child: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const percentile = (samples, q) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};

if (values.child) {
  const load = (file) => import(pathToFileURL(path.join(values.child, file)).href);
  const { ObjectStore } = await load('foundations/storage/git/object-store.js');
  const { serializeTree } = await load('foundations/storage/git/git-objects.js');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flagops-bench-commit-files-'));
  const store = new ObjectStore(path.join(dir, 'r.git'));
  const oid = (n, fill) => (n.toString(16) + fill.repeat(40)).slice(0, 40);
  const entries = Array.from({ length: 10_001 }, (_, i) => ({
    mode: '100644',
    name: `flag-${String(i).padStart(5, '0')}.yaml`,
    oid: oid(i, 'a'),
  }));
  const walls = [];
  const busy = [];
  for (let n = 0; n < Number(values.commits); n++) {
    entries[n % entries.length] = { ...entries[n % entries.length], oid: oid(n, 'b') };
    const environment = serializeTree(entries); // made by splicing in the service: not what is measured here
    const started = performance.now();
    const loop = performance.eventLoopUtilization();
    const batch = store.batch();
    const kills = batch.write('blob', Buffer.from(`kills:\n  flag-${n}: {}\n`));
    let tree = batch.write('tree', environment);
    for (let depth = 0; depth < 4; depth++)
      tree = batch.write(
        'tree',
        serializeTree([
          { mode: '100644', name: 'kills.yaml', oid: kills },
          { mode: '40000', name: `d${depth}`, oid: tree },
        ]),
      );
    batch.write('commit', Buffer.from(`tree ${tree}\nauthor a <a> 0 +0000\ncommitter a <a> 0 +0000\n\nkill ${n}\n`));
    batch.flush();
    await batch.done();
    busy.push(performance.eventLoopUtilization(loop).active);
    walls.push(performance.now() - started);
  }
  store.close();
  rmSync(dir, { recursive: true, force: true });
  console.log(
    JSON.stringify({
      wallP50: percentile(walls, 0.5),
      wallP99: percentile(walls, 0.99),
      busyP50: percentile(busy, 0.5),
      busyP99: percentile(busy, 0.99),
    }),
  );
  process.exit(0);
}

const befores = values.before ?? [];
const builds = [
  ...befores.map((dir) => [befores.length === 1 ? 'before' : path.basename(path.resolve(dir)), path.resolve(dir, 'dist')]),
  ['now', path.resolve(here, '../../dist')],
];
const results = new Map(builds.map(([name]) => [name, []]));
const loadBefore = os.loadavg()[0];
for (let run = 0; run < Number(values.runs); run++) {
  for (const [name, dist] of builds) {
    const res = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', dist, '--commits', values.commits], {
      encoding: 'utf8',
    });
    if (res.status !== 0) throw new Error(`run with ${dist} failed:\n${res.stdout}\n${res.stderr}`);
    results.get(name).push(JSON.parse(res.stdout.trim().split('\n').at(-1)));
  }
}
const median = (runs, key) =>
  percentile(
    runs.map((r) => r[key]),
    0.5,
  );
console.log(
  `\nOne kill's objects written (load average ${loadBefore.toFixed(1)} before, ${os.loadavg()[0].toFixed(1)} after; median of ${values.runs} runs of ${values.commits} commits):\n`,
);
console.log('| build | wall p50 / p99 (ms) | event loop busy p50 / p99 (ms) |');
console.log('|---|---|---|');
const f = (n) => n.toFixed(1);
for (const [name, runs] of results)
  console.log(
    `| ${name} | ${f(median(runs, 'wallP50'))} / ${f(median(runs, 'wallP99'))} | ${f(median(runs, 'busyP50'))} / ${f(median(runs, 'busyP99'))} |`,
  );
if (values.json) console.log(JSON.stringify(Object.fromEntries(results)));

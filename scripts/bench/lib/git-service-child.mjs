// A flagops service whose flags repository is big, for the git-over-HTTP benchmark, in its own process.
// Seeds, through the service's own commits (loose objects, as a repository has them between two packings):
// project `shop` with 20 flags (what the evaluation load asks for) and project `big` with BENCH_GIT_FLAGS
// flags (default 10,000 × 3 environments), then BENCH_GIT_COMMITS config updates in `big` (default 100,
// each a new copy of an environment's tree). Prints one JSON line { controlUrl, evalUrl, sdkKey, adminKey,
// repoMiB } once it serves; stops on SIGTERM and removes its data directory. BENCH_DIST: the build to run
// (another version's dist/, to compare; default this one's).
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchActor, projectWithFlags } from './seed.mjs';

const dist = path.resolve(process.env.BENCH_DIST ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'dist'));
const { silentLogger } = await import(pathToFileURL(path.join(dist, 'foundations', 'log', 'logger.js')).href);
const { startService } = await import(pathToFileURL(path.join(dist, 'service.js')).href);

const flags = Number(process.env.BENCH_GIT_FLAGS ?? 10_000);
const commits = Number(process.env.BENCH_GIT_COMMITS ?? 100);
const adminKey = 'svc_adm_benchbenchbenchbench00000001';
const dataDir = await mkdtemp(path.join(tmpdir(), 'flagops-bench-git-'));
const config = {
  dataDir,
  host: '127.0.0.1',
  controlPort: 0,
  evalPort: 0,
  bootstrapKeys: [{ org: 'bench', key: adminKey }],
  planProjectLimit: 25,
  logLevel: 'error',
  gitGcCommits: 0,
};
if (process.env.FLAGOPS_GIT_MAX_PROCESSES) config.gitProcesses = { max: Number(process.env.FLAGOPS_GIT_MAX_PROCESSES), queue: 16 };
const service = await startService(config, silentLogger);
const repo = await service.repos.get('bench');
const seed = (changes, summary) => repo.update(() => ({ changes, meta: { action: 'change', summary, actor: benchActor }, result: null }));

await seed(projectWithFlags('shop', 20), 'seed shop');
await seed(projectWithFlags('big', flags, { prefix: 'big' }), `seed ${flags} flags`);
for (let i = 0; i < commits; i++) {
  const key = `big-${(i * 7919) % flags}`;
  const content = `enabled: true\nrolloutPct: ${i % 101}\nvalueOn: true\nvalueOff: false\nversion: ${i + 2}\nrules: []\n`;
  await seed([{ path: `projects/big/environments/${['dev', 'staging', 'prod'][i % 3]}/${key}.yaml`, content }], `update ${key}`);
}
await service.holder.served('bench');
// Seeding leaves hundreds of MiB of garbage; collected now (node --expose-gc), not by a pause of 50–100 ms
// in the middle of a measured window.
for (let i = 0; i < 3; i++) globalThis.gc?.();
const { key: sdkKey } = await service.keys.createKey('bench', { kind: 'sdk', projectId: 'prj_shop', environment: 'prod' });
const repoKiB = Number(execFileSync('du', ['-sk', service.repos.gitdirOf('bench')], { encoding: 'utf8' }).split('\t')[0]);
process.stdout.write(
  `${JSON.stringify({ controlUrl: service.controlUrl, evalUrl: service.evalUrl, sdkKey, adminKey, repoMiB: Math.round(repoKiB / 102.4) / 10, gitdir: service.repos.gitdirOf('bench') })}\n`,
);
process.on('SIGTERM', () =>
  service
    .stop()
    .then(() => rm(dataDir, { recursive: true, force: true }))
    .then(() => process.exit(0)),
);

// A flagops service for the HTTP benchmark, run in its own process (pinned to one core by the parent).
// Prints one JSON line { evalUrl, key } once it serves a project of 20 flags; stops on SIGTERM and removes its
// data directory.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseMetricsSettings } from '../../../dist/foundations/config/config.js';
import { silentLogger } from '../../../dist/foundations/log/logger.js';
import { startService } from '../../../dist/service.js';
import { benchActor, projectWithFlags } from './seed.mjs';

const dataDir = await mkdtemp(path.join(tmpdir(), 'flagops-bench-eval-'));
const service = await startService(
  {
    dataDir,
    host: '127.0.0.1',
    controlPort: 0,
    evalPort: 0,
    bootstrapKeys: [{ org: 'bench', key: 'svc_adm_benchbenchbenchbench00000001' }],
    planProjectLimit: 25,
    logLevel: 'error',
    metrics: parseMetricsSettings(process.env), // FLAGOPS_METRICS=off for the comparison in metrics-overhead.mjs
    // The state in PostgreSQL for the comparison in eval-database.mjs.
    ...(process.env.FLAGOPS_DATABASE_URL ? { databaseUrl: process.env.FLAGOPS_DATABASE_URL } : {}),
  },
  silentLogger,
);
const repo = await service.repos.get('bench');
await repo.update(() => ({
  changes: projectWithFlags('shop', 20),
  meta: { action: 'change', summary: 'seed', actor: benchActor },
  result: null,
}));
await service.holder.served('bench');
const { key } = await service.keys.createKey('bench', { kind: 'sdk', projectId: 'prj_shop', environment: 'prod' });
process.stdout.write(`${JSON.stringify({ evalUrl: service.evalUrl, key })}\n`);
process.on('SIGTERM', () =>
  service
    .stop()
    .then(() => rm(dataDir, { recursive: true, force: true }))
    .then(() => process.exit(0)),
);

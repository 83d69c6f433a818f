#!/usr/bin/env node
// Kill → served in an application using the Go or Python SDK over the stream: the service runs here; each SDK's
// `watch` checking command (python3 -m flagops watch, the Go command built once) is the application, in a child
// process of its own, printing a line whenever flag-1's result changes. Each of BENCH_KILLS kills and clears goes
// through KillSwitch (as the kill endpoint does) and is timed until the line saying so arrives here.
//   npm run build && npm run bench -- sdks-kill        (BENCH_KILLS, default 50; skipped where go/python3 is missing)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchActor, benchServiceConfig, projectWithFlags, summarize } from './lib/seed.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dist = path.resolve(process.env.FLAGOPS_DIST ?? path.join(root, 'dist'));
const load = (module) => import(pathToFileURL(path.join(dist, module)).href);
const KILLS = Number(process.env.BENCH_KILLS ?? 50);
const has = (command, args) => spawnSync(command, args, { stdio: 'ignore' }).status === 0;

const { startService } = await load('service.js');
const { silentLogger } = await load('foundations/log/logger.js');
const { KillSwitch } = await load('features/kill/kill-switch.js');
const dataDir = await mkdtemp(path.join(tmpdir(), 'flagops-bench-sdks-kill-'));
const service = await startService(benchServiceConfig(dataDir), silentLogger);
try {
  const repo = await service.repos.get('bench');
  await repo.update(() => ({
    changes: projectWithFlags('shop', 20),
    meta: { action: 'change', summary: 'seed', actor: benchActor },
    result: null,
  }));
  await service.holder.served('bench');
  const { key } = await service.keys.createKey('bench', { kind: 'sdk', projectId: 'prj_shop', environment: 'prod' });
  const watchArgs = ['watch', '--url', service.evalUrl, '--sdk-key', key, '--context', '{"userId":"u"}', 'flag-1'];

  const apps = [];
  if (has('python3', ['--version']))
    apps.push({ name: 'Python SDK', command: 'python3', args: ['-m', 'flagops', ...watchArgs], cwd: path.join(root, 'sdks/python') });
  if (has('go', ['version'])) {
    const binary = path.join(dataDir, 'flagops-go');
    const built = spawnSync('go', ['build', '-o', binary, './cmd/flagops'], {
      cwd: path.join(root, 'sdks/go'),
      stdio: 'inherit',
      env: { ...process.env, GOPROXY: 'off', GOFLAGS: '-mod=mod', GONOSUMDB: '*', GOTOOLCHAIN: 'local' },
    });
    if (built.status === 0) apps.push({ name: 'Go SDK', command: binary, args: watchArgs, cwd: root });
  }
  if (apps.length === 0) console.log('skipped: neither python3 nor go is installed');

  const kills = new KillSwitch(service.holder);
  const request = { org: 'bench', repo, projectSlug: 'shop', flagKey: 'flag-1', environment: 'prod', actor: benchActor };
  console.log(
    `kill → served in an application over the stream (${KILLS} kills and clears each, ${cpus().length} cores, load ${loadavg()[0].toFixed(2)})`,
  );
  for (const app of apps) {
    const child = spawn(app.command, app.args, { cwd: app.cwd, stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const next = async () => {
      const line = await lines.next();
      if (line.done) throw new Error(`${app.name}: watch ended`);
      return { arrived: performance.now(), ...JSON.parse(line.value) };
    };
    await next(); // the result at start
    const timed = { kill: [], clear: [] };
    for (let i = 0; i < KILLS; i++) {
      for (const [what, act] of [
        ['kill', () => kills.kill(request)],
        ['clear', () => kills.clear(request)],
      ]) {
        const started = performance.now();
        await act();
        let seen;
        do seen = await next();
        while ((seen.result.reason === 'killed') !== (what === 'kill'));
        timed[what].push(seen.arrived - started);
      }
    }
    child.kill('SIGTERM');
    for (const what of ['kill', 'clear']) {
      const s = summarize(timed[what]);
      console.log(
        `  ${app.name}, ${what}: p50 ${s.p50.toFixed(1)} ms  p99 ${s.p99.toFixed(1)} ms  max ${s.max.toFixed(1)} ms (goal p99 < 200 ms)`,
      );
    }
  }
} finally {
  await service.stop();
  await rm(dataDir, { recursive: true, force: true });
}

#!/usr/bin/env node
// Kill-to-SDK delay over the stream: the service runs here, a local-mode SDK client in a child process (an
// application of its own, as in production). Each of BENCH_KILLS kills goes through KillSwitch (as the kill
// endpoint does); the child reports the moment its getter serves `killed`. Clears are timed the same way, and
// so are config changes (flag-1 turned off and on again by a commit, as PUT .../config makes one). Last, how
// long after its client's close() resolves the child process exits by itself (nothing left holding it open),
// and how long the service's stop() takes with streams open.
//   npm run build && node scripts/bench/sdk-stream.mjs     (or npm run bench -- sdk-stream)
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchActor, benchServiceConfig, projectWithFlags, summarize } from './lib/seed.mjs';

const dist = path.resolve(process.env.FLAGOPS_DIST ?? 'dist');
const load = (module) => import(pathToFileURL(path.join(dist, module)).href);
const now = () => performance.timeOrigin + performance.now(); // comparable across processes on one machine

if (process.argv[2] === '--child') {
  // The application: waits for changes and says when it serves flag-1 killed or not.
  const { createClient } = await import('@flagops/sdk');
  const client = createClient({
    evalUrl: process.env.FLAGOPS_EVAL_URL,
    sdkKey: process.env.FLAGOPS_SDK_KEY,
    pollIntervalMs: 3_600_000,
    sendCounts: false,
  });
  await client.ready();
  const report = () =>
    process.stdout.write(`${JSON.stringify({ at: now(), reason: client.details('flag-1', false, { userId: 'u' }).reason })}\n`);
  client.on('change', report);
  report();
  process.stdin.on('end', async () => {
    await client.close();
    process.stdout.write(`${JSON.stringify({ closedAt: now() })}\n`);
  });
  process.stdin.resume();
} else {
  const KILLS = Number(process.env.BENCH_KILLS ?? 100);
  const STOP_STREAMS = 20;
  const { startService } = await load('service.js');
  const { silentLogger } = await load('foundations/log/logger.js');
  const { KillSwitch } = await load('features/kill/kill-switch.js');
  const { layout } = await load('foundations/repository/layout.js');
  const { serializeRepositoryFile } = await load('foundations/repository/serialize-file.js');
  const dataDir = await mkdtemp(path.join(tmpdir(), 'flagops-bench-sdk-'));
  const service = await startService(benchServiceConfig(dataDir), silentLogger);
  const repo = await service.repos.get('bench');
  await repo.update(() => ({
    changes: projectWithFlags('shop', 20),
    meta: { action: 'change', summary: 'seed', actor: benchActor },
    result: null,
  }));
  await service.holder.served('bench');
  const { key } = await service.keys.createKey('bench', { kind: 'sdk', projectId: 'prj_shop', environment: 'prod' });

  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child'], {
    env: { ...process.env, FLAGOPS_EVAL_URL: service.evalUrl, FLAGOPS_SDK_KEY: key },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => JSON.parse((await lines.next()).value);
  await next(); // ready

  const kills = new KillSwitch(service.holder);
  const request = { org: 'bench', repo, projectSlug: 'shop', flagKey: 'flag-1', environment: 'prod', actor: benchActor };
  const fromCall = { kill: [], clear: [] };
  const fromServed = { kill: [], clear: [] };
  for (let i = 0; i < KILLS; i++) {
    for (const [what, act, reason] of [
      ['kill', () => kills.kill(request), 'killed'],
      ['clear', () => kills.clear(request), null],
    ]) {
      const started = now();
      await act();
      const served = now();
      let seen;
      do seen = await next();
      while (reason === null ? seen.reason === 'killed' : seen.reason !== reason);
      fromCall[what].push(seen.at - started);
      fromServed[what].push(seen.at - served);
    }
  }
  const fromWrite = [];
  for (let i = 0; i < KILLS; i++) {
    for (const enabled of [false, true]) {
      const config = { enabled, rolloutPct: 7, valueOn: true, valueOff: false, version: 2 * i + (enabled ? 3 : 2), rules: [] };
      const started = now();
      await repo.update(() => ({
        changes: [
          { path: layout.configFile('shop', 'prod', 'flag-1'), content: serializeRepositoryFile({ kind: 'config', value: config }) },
        ],
        meta: { action: 'config_update', summary: 'bench', actor: benchActor, project: 'shop', flag: 'flag-1', environment: 'prod' },
        result: null,
      }));
      let seen;
      do seen = await next();
      while (enabled ? seen.reason === 'flag_disabled' : seen.reason !== 'flag_disabled');
      fromWrite.push(seen.at - started);
    }
  }
  const exited = new Promise((resolve) => child.on('exit', () => resolve(now())));
  child.stdin.end();
  let closed;
  do closed = await next();
  while (closed.closedAt === undefined);
  const exitAfterClose = (await exited) - closed.closedAt;
  // A stop with streams open: the service ends them itself, so it need not wait for the 2 s its servers give
  // whatever is still open before cutting it (test/sdk/stream-endpoint.test.ts checks that they are ended).
  const streamsEnded = [];
  for (let i = 0; i < STOP_STREAMS; i++) {
    const res = await fetch(`${service.evalUrl}/v1/stream`, { headers: { authorization: `Bearer ${key}` } });
    const reader = res.body.getReader();
    await reader.read(); // the current version: this stream is open
    streamsEnded.push(
      (async () => {
        while (!(await reader.read()).done);
      })(),
    );
  }
  const stopStarted = now();
  await service.stop();
  const stopTook = now() - stopStarted;
  await Promise.all(streamsEnded);
  await rm(dataDir, { recursive: true, force: true });

  const ms = (x) => `${x.toFixed(1)} ms`;
  console.log(
    `\nKill to SDK over the stream, ${KILLS} kills and ${KILLS} clears; SDK in its own process; ${cpus().length} cores, load ${loadavg()[0].toFixed(1)}\n`,
  );
  console.log('| interval | p50 | p99 | max |\n|---|---|---|---|');
  for (const [name, samples] of [
    ['kill() called → SDK serves `killed`', fromCall.kill],
    ['kill served by the server → SDK serves `killed`', fromServed.kill],
    ['clear() called → SDK serves the flag again', fromCall.clear],
    ['config commit started → SDK serves the new config', fromWrite],
  ]) {
    const s = summarize(samples);
    console.log(`| ${name} | ${ms(s.p50)} | ${ms(s.p99)} | ${ms(s.max)} |`);
  }
  console.log(`\nThe child process exited ${ms(exitAfterClose)} after its client's close() resolved.`);
  console.log(`service.stop() with ${STOP_STREAMS} streams open: ${ms(stopTook)}`);
}

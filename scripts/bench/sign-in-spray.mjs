// Sign-in spray: the service's peak memory (VmHWM) and answers while 300 sign-ins with 300 different usernames
// arrive at once, each a wrong password, in two shapes:
//   one address    all from one client: the per-address throttle answers most with 429 before any scrypt;
//   300 addresses  each from its own client (X-Forwarded-For behind FLAGOPS_TRUST_PROXY): every attempt is
//                  admitted by the throttle, so only the bound on concurrent scrypt (2 at once, 32 waiting,
//                  then 503) keeps memory flat.
// Each shape runs against a fresh service process (node dist/main.js), whose peak RSS is read from /proc.
//
//   npm run build && node scripts/bench/sign-in-spray.mjs
//   node scripts/bench/sign-in-spray.mjs --dist /path/to/another/build/dist    (e.g. an older commit's)
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const SPRAY = 300;
const distArg = process.argv.indexOf('--dist');
const dist = distArg > 0 ? resolve(process.argv[distArg + 1]) : new URL('../../dist', import.meta.url).pathname;

function freePort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

function peakRssMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)[1]) / 1024;
}

async function startService() {
  const dataDir = await mkdtemp(join(tmpdir(), 'flagops-bench-spray-'));
  const [controlPort, evalPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [join(dist, 'main.js')], {
    env: {
      ...process.env,
      FLAGOPS_DATA_DIR: dataDir,
      FLAGOPS_CONTROL_PORT: String(controlPort),
      FLAGOPS_EVAL_PORT: String(evalPort),
      FLAGOPS_TRUST_PROXY: 'true',
      FLAGOPS_BOOTSTRAP_KEYS: 'acme:svc_adm_benchsprayadmin0000000000000000',
      FLAGOPS_LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${controlPort}`;
  for (let i = 0; i < 200; i++) {
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return { child, url, dataDir };
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill();
  throw new Error('the service did not start');
}

async function spray(shape) {
  const { child, url, dataDir } = await startService();
  const idle = peakRssMiB(child.pid);
  const started = performance.now();
  const statuses = await Promise.all(
    Array.from({ length: SPRAY }, (_, i) =>
      fetch(`${url}/dashboard/api/session`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          origin: url,
          'x-forwarded-for': shape === 'one address' ? '203.0.113.1' : `10.${i >> 8}.${i & 255}.1`,
        },
        body: JSON.stringify({ username: `user-${i}`, password: 'Winter2026!' }),
      }).then(
        (r) => r.status,
        () => 'error',
      ),
    ),
  );
  const ms = performance.now() - started;
  const peak = peakRssMiB(child.pid);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  await rm(dataDir, { recursive: true, force: true });
  const counts = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  console.log(
    `${shape.padEnd(13)} peak RSS ${peak.toFixed(0).padStart(4)} MiB (idle ${idle.toFixed(0)} MiB), ${(ms / 1000).toFixed(1)} s, answers ${JSON.stringify(counts)}`,
  );
}

console.log(`sign-in spray: ${SPRAY} concurrent sign-ins, ${SPRAY} usernames, wrong passwords; service from ${dist}`);
await spray('one address');
await spray('300 addresses');

// Replica failover: two control planes, each its own process, in remote mode on one git repository (a bare
// repository on disk as the remote), and a replica (`flagops eval --upstream A,B`, its own process). Each round
// SIGKILLs the control plane the replica follows, changes a flag through the other at once, and times from the
// SIGKILL until the replica serves the change (POST /v1/evaluate polled every 5 ms). The killed one is started
// again on its port and data directory before the next round, which kills the other.
//
//   npm run build && node scripts/bench/replica-failover.mjs        (BENCH_ROUNDS: rounds, default 10)
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist');
const root = await mkdtemp(path.join(tmpdir(), 'flagops-bench-failover-'));
const remote = path.join(root, 'flags.git');
execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', remote]);
const admin = 'svc_adm_benchbenchbenchbench00000001';
const children = new Set();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/** `quiet`: stderr dropped (a SIGKILLed control plane's git helper complains on its way out; that is not measured here). */
function spawnNode(script, args, env, quiet = false) {
  const stdio = ['ignore', 'ignore', quiet ? 'ignore' : 'inherit'];
  const child = spawn(process.execPath, [script, ...args], { env: { ...process.env, ...env }, stdio });
  children.add(child);
  child.exited = new Promise((resolve) => child.once('exit', resolve));
  return child;
}

async function healthy(url) {
  for (const started = Date.now(); Date.now() - started < 30_000; await sleep(50)) {
    try {
      if ((await fetch(`${url}/healthz`)).status === 200) return;
    } catch {
      // not listening yet
    }
  }
  throw new Error(`${url} not healthy within 30 s`);
}

/** A control plane on a fixed port and data directory, so it can be started again after its SIGKILL. */
async function controlPlane(name) {
  const port = await freePort();
  const evalPort = await freePort();
  const cp = { name, url: `http://127.0.0.1:${port}`, dataDir: path.join(root, name), child: null };
  cp.start = async () => {
    cp.child = spawnNode(
      path.join(dist, 'main.js'),
      [],
      {
        FLAGOPS_DATA_DIR: cp.dataDir,
        FLAGOPS_CONTROL_PORT: String(port),
        FLAGOPS_EVAL_PORT: String(evalPort),
        FLAGOPS_BOOTSTRAP_KEYS: `bench:${admin}`,
        FLAGOPS_GIT_REMOTE: remote,
        FLAGOPS_GIT_POLL_SECONDS: '1',
        FLAGOPS_LOG_LEVEL: 'error',
      },
      true,
    );
    await healthy(cp.url);
  };
  cp.kill = async () => {
    cp.child.kill('SIGKILL');
    await cp.child.exited;
    children.delete(cp.child);
  };
  cp.api = async (method, route, body) => {
    const res = await fetch(`${cp.url}${route}`, {
      method,
      headers: { authorization: `Bearer ${admin}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!res.ok) throw new Error(`${method} ${route} on ${cp.name}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  return cp;
}

const a = await controlPlane('a');
const b = await controlPlane('b');
await a.start();
const project = await a.api('POST', '/api/v1/projects', { name: 'Bench', slug: 'bench' });
const flag = await a.api('POST', `/api/v1/projects/${project.id}/flags`, { key: 'checkout' });
await a.api('PUT', `/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 });
const sdk = (await a.api('POST', '/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).key;
// Without a shared database each control plane keeps its keys in its data directory: B starts with A's.
mkdirSync(path.join(b.dataDir, 'state'), { recursive: true });
for (const file of ['keys.json', 'pepper']) cpSync(path.join(a.dataDir, 'state', file), path.join(b.dataDir, 'state', file));
await b.start();

const replicaUrl = `http://127.0.0.1:${await freePort()}`;
spawnNode(path.join(dist, 'apps', 'cli', 'main.js'), ['eval', '--upstream', `${a.url},${b.url}`, '--port', new URL(replicaUrl).port], {
  FLAGOPS_REPLICA_TOKEN: admin,
  FLAGOPS_DATA_DIR: path.join(root, 'replica'),
  FLAGOPS_LOG_LEVEL: 'error',
});
await healthy(replicaUrl);
const following = async () =>
  (await (await fetch(`${replicaUrl}/healthz`, { headers: { authorization: `Bearer ${admin}` } })).json()).following;
const evaluate = async () => {
  const res = await fetch(`${replicaUrl}/v1/evaluate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sdk}`, 'content-type': 'application/json' },
    body: JSON.stringify({ key: 'checkout', context: { userId: 'u1' } }),
  });
  return res.ok ? (await res.json()).checkout.value : undefined;
};

const seconds = [];
for (let round = 0; round < ROUNDS; round++) {
  const followed = (await following()) === a.url ? a : b;
  const other = followed === a ? b : a;
  const expected = round % 2 === 1;
  const killedAt = performance.now();
  followed.child.kill('SIGKILL');
  await other.api('PUT', `/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: expected ? 100 : 0 });
  while ((await evaluate()) !== expected) {
    if (performance.now() - killedAt > 30_000) throw new Error(`round ${round}: the replica did not serve the change within 30 s`);
    await sleep(5);
  }
  seconds.push((performance.now() - killedAt) / 1000);
  await followed.kill();
  await followed.start();
}

const sorted = [...seconds].sort((x, y) => x - y);
const at = (p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
console.log(`replica failover: SIGKILL of the followed control plane → a change made through the other served by the replica`);
console.log(`  ${ROUNDS} rounds, 2 control planes, 1 replica, ${cpus().length} cores, load ${loadavg()[0].toFixed(2)}`);
console.log(`  p50 ${at(50).toFixed(2)} s  max ${sorted.at(-1).toFixed(2)} s  (goal < 5 s)`);

for (const child of children) child.kill('SIGKILL');
await Promise.all([...children].map((child) => child.exited));
await rm(root, { recursive: true, force: true });

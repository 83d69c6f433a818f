// A push of many commits over git over HTTP, landing beside evaluation: how long `git push` takes (the push
// check, reading the commits into the audit trail and the served history) and what POST /v1/evaluate, asked
// every 5 ms throughout, waits meanwhile (its slowest answers are the event loop held by that work).
//
//   npm run build && npm run bench -- push-landing
//
// BENCH_COMMITS (commits in the push, default 1000), BENCH_ROUNDS (default 1). To compare with another version:
// BENCH_BEFORE_DIST (that version's built dist/ directory): each round runs this version, then that one, each
// with its own service and repository.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const commits = Number(process.env.BENCH_COMMITS ?? 1000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 1);
const thisDist = path.join(here, '..', '..', 'dist');

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function api(base, key, method, url, body) {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** The commits of the push, made with git fast-import: each changes the flag's dev rollout. */
function fastImport(checkout, file, n) {
  let stream = 'reset refs/heads/main\nfrom refs/remotes/origin/main\n';
  for (let i = 0; i < n; i++) {
    const body = `enabled: true\nrolloutPct: ${i % 100}\nvalueOn: true\nvalueOff: false\nversion: ${i + 2}\nrules: []\n`;
    const message = `step ${i}\n`;
    stream += `commit refs/heads/main\ncommitter Erin <erin@example.com> ${1_700_000_000 + i} +0000\ndata ${message.length}\n${message}M 100644 inline ${file}\ndata ${body.length}\n${body}`;
  }
  execFileSync('git', ['fast-import', '--quiet'], { cwd: checkout, input: stream });
  execFileSync('git', ['reset', '--quiet', '--hard', 'main'], { cwd: checkout });
}

async function run(dist) {
  const dir = mkdtempSync(path.join(tmpdir(), 'flagops-push-landing-'));
  const [control, evaluation] = [await freePort(), await freePort()];
  const admin = `svc_adm_${randomBytes(24).toString('hex').slice(0, 32)}`;
  const service = spawn(process.execPath, [path.join(dist, 'main.js')], {
    stdio: ['ignore', 'ignore', 'ignore'],
    env: {
      ...process.env,
      FLAGOPS_DATA_DIR: path.join(dir, 'data'),
      FLAGOPS_CONTROL_PORT: String(control),
      FLAGOPS_EVAL_PORT: String(evaluation),
      FLAGOPS_BOOTSTRAP_KEYS: `default:${admin}`,
      FLAGOPS_LOG_LEVEL: 'warn',
    },
  });
  try {
    const base = `http://127.0.0.1:${control}`;
    for (let i = 0; ; i++) {
      if ((await fetch(`${base}/healthz`).catch(() => null))?.ok) break;
      if (i > 200) throw new Error('the service did not start');
      await new Promise((r) => setTimeout(r, 50));
    }
    const project = await api(base, admin, 'POST', '/api/v1/projects', { name: 'Shop', slug: 'shop' });
    await api(base, admin, 'POST', `/api/v1/projects/${project.id}/flags`, { key: 'checkout', name: 'Checkout' });
    const sdk = (await api(base, admin, 'POST', '/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'dev' })).key;
    const checkout = path.join(dir, 'checkout');
    const auth = ['-c', `http.extraHeader=Authorization: Bearer ${admin}`];
    execFileSync('git', [...auth, 'clone', '--quiet', `${base}/git/default.git`, checkout]);
    fastImport(checkout, 'projects/shop/environments/dev/checkout.yaml', commits);

    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const body = JSON.stringify({ key: 'checkout', context: { userId: 'u-1' } });
    const evaluate = () =>
      new Promise((resolve, reject) => {
        const started = performance.now();
        const req = http.request(
          {
            host: '127.0.0.1',
            port: evaluation,
            path: '/v1/evaluate',
            method: 'POST',
            agent,
            headers: { authorization: `Bearer ${sdk}`, 'content-type': 'application/json' },
          },
          (res) => res.resume().on('end', () => resolve(performance.now() - started)),
        );
        req.on('error', reject);
        req.end(body);
      });
    const waits = [];
    let evaluating = true;
    const loop = (async () => {
      while (evaluating) {
        waits.push(await evaluate());
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const started = performance.now();
    const pushed = await new Promise((resolve) => {
      const child = spawn('git', [...auth, 'push', '--quiet', 'origin', 'main:main'], { cwd: checkout, stdio: 'ignore' });
      child.on('exit', (code) => resolve({ code, ms: performance.now() - started }));
    });
    await new Promise((r) => setTimeout(r, 1000));
    evaluating = false;
    await loop;
    agent.destroy();
    if (pushed.code !== 0) throw new Error(`git push exited with ${pushed.code}`);
    waits.sort((a, b) => a - b);
    return { pushMs: pushed.ms, p99: waits[Math.floor(waits.length * 0.99)], max: waits.at(-1), n: waits.length };
  } finally {
    service.kill('SIGTERM');
    await new Promise((r) => service.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

const builds = [['this', thisDist], ...(process.env.BENCH_BEFORE_DIST ? [['before', process.env.BENCH_BEFORE_DIST]] : [])];
console.log(`a push of ${commits} commits over /git, POST /v1/evaluate every 5 ms meanwhile`);
console.log('| round | build | git push | evaluate p99 | evaluate max | evaluations | load |');
console.log('|---|---|---:|---:|---:|---:|---:|');
for (let round = 1; round <= rounds; round++) {
  for (const [name, dist] of builds) {
    const r = await run(dist);
    console.log(
      `| ${round} | ${name} | ${(r.pushMs / 1000).toFixed(2)} s | ${r.p99.toFixed(1)} ms | ${r.max.toFixed(1)} ms | ${r.n} | ${loadavg()[0].toFixed(1)} |`,
    );
  }
}

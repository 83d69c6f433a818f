// Single sign-on round trip: one person signing in to the dashboard with OpenID Connect against a local provider
// (oidc-provider on loopback, in this process), one sign-in after another, as a browser does it:
//   GET /auth/oidc/login → the provider's authorization endpoint → its login form (POST) → back to
//   GET /auth/oidc/callback (code exchange, ID token verified against the JWKS) → GET /dashboard/api/session.
// Reports the whole round trip and flagops' own part (its three requests: login, callback, session), and, in the
// same run, a password sign-in (POST /dashboard/api/session, one scrypt) for comparison. The service runs as
// its own process (node dist/main.js); the provider shares this process's CPU.
//
//   npm run build && node scripts/bench/sign-in-oidc.mjs [--rounds 200]
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CookieJar, jarFetch, startTestProvider } from '../../test/helpers/oidc-provider.mjs';

const roundsArg = process.argv.indexOf('--rounds');
const ROUNDS = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 200;
const WARMUP = 20;
const ADMIN = 'svc_adm_benchoidcadmin00000000000000000000';
const dist = new URL('../../dist', import.meta.url).pathname;

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

const provider = await startTestProvider({
  people: [{ id: 'bench-alice', login: 'alice', password: 'alice-at-provider', email: 'alice@example.com', groups: ['flag-admins'] }],
});
const dataDir = await mkdtemp(join(tmpdir(), 'flagops-bench-oidc-'));
const [controlPort, evalPort] = [await freePort(), await freePort()];
const url = `http://127.0.0.1:${controlPort}`;
const child = spawn(process.execPath, [join(dist, 'main.js')], {
  env: {
    ...process.env,
    FLAGOPS_DATA_DIR: dataDir,
    FLAGOPS_CONTROL_PORT: String(controlPort),
    FLAGOPS_EVAL_PORT: String(evalPort),
    FLAGOPS_BOOTSTRAP_KEYS: `bench:${ADMIN}`,
    FLAGOPS_LOG_LEVEL: 'error',
    FLAGOPS_OIDC_ISSUER: provider.issuer,
    FLAGOPS_OIDC_CLIENT_ID: provider.clientId,
    FLAGOPS_OIDC_CLIENT_SECRET: provider.clientSecret,
    FLAGOPS_OIDC_ROLES: 'flag-admins=admin',
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});
await provider.registerRedirectUri(`${url}/auth/oidc/callback`);

async function waitReady() {
  for (let i = 0; i < 400; i++) {
    const health = await fetch(`${url}/healthz`, { headers: { authorization: `Bearer ${ADMIN}` } }).then(
      (r) => (r.status === 200 ? r.json() : null),
      () => null,
    );
    if (health?.sso?.state === 'ready') return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the service did not become ready with single sign-on');
}

/** One sign-in: total ms and flagops' own ms. */
async function oidcSignIn() {
  const jar = new CookieJar();
  let own = 0;
  const timed = async (fn) => {
    const t = performance.now();
    const res = await fn();
    own += performance.now() - t;
    return res;
  };
  const started = performance.now();
  let res = await timed(() => jarFetch(jar, `${url}/auth/oidc/login`));
  let next = res.headers.get('location');
  for (let hop = 0; hop < 10 && !next.startsWith(`${url}/auth/oidc/callback`); hop++) {
    res = await jarFetch(jar, next);
    await res.arrayBuffer();
    if (res.status === 200) {
      res = await jarFetch(jar, `${next}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'login=alice&password=alice-at-provider',
      });
    }
    next = new URL(res.headers.get('location'), next).href;
  }
  res = await timed(() => jarFetch(jar, next));
  if (res.status !== 303) throw new Error(`callback answered ${res.status}: ${await res.text()}`);
  res = await timed(() => jarFetch(jar, `${url}/dashboard/api/session`));
  if (res.status !== 200) throw new Error(`session answered ${res.status}`);
  await res.arrayBuffer();
  return { total: performance.now() - started, own };
}

async function passwordSignIn() {
  const started = performance.now();
  const res = await fetch(`${url}/dashboard/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url },
    body: JSON.stringify({ username: 'bob', password: 'bob-password-123' }),
  });
  if (res.status !== 200) throw new Error(`password sign-in answered ${res.status}`);
  await res.arrayBuffer();
  return performance.now() - started;
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const line = (name, values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  console.log(
    `${name.padEnd(34)} p50 ${pct(sorted, 50).toFixed(1).padStart(6)} ms  p95 ${pct(sorted, 95).toFixed(1).padStart(6)} ms  p99 ${pct(sorted, 99).toFixed(1).padStart(6)} ms  mean ${mean.toFixed(1).padStart(6)} ms`,
  );
};

try {
  await waitReady();
  const created = await fetch(`${url}/api/v1/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'bob', name: 'Bob', password: 'bob-password-123' }),
  });
  if (created.status !== 201) throw new Error(`creating bob: ${created.status}`);
  const cold = await oidcSignIn(); // fetches the JWKS
  for (let i = 0; i < WARMUP; i++) await oidcSignIn();
  const total = [];
  const own = [];
  for (let i = 0; i < ROUNDS; i++) {
    const round = await oidcSignIn();
    total.push(round.total);
    own.push(round.own);
  }
  const passwords = [];
  for (let i = 0; i < 5; i++) await passwordSignIn();
  for (let i = 0; i < Math.min(ROUNDS, 50); i++) passwords.push(await passwordSignIn());
  console.log(`single sign-on round trip, ${ROUNDS} sign-ins one after another (after ${WARMUP} to warm up); service from ${dist}`);
  console.log(`first sign-in (JWKS fetched)        ${cold.total.toFixed(1)} ms, flagops' part ${cold.own.toFixed(1)} ms`);
  line('OIDC sign-in, whole round trip', total);
  line("OIDC sign-in, flagops' 3 requests", own);
  line(`password sign-in (${passwords.length}, one scrypt)`, passwords);
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  await provider.stop();
  await rm(dataDir, { recursive: true, force: true });
}

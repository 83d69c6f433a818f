import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplica } from '../../src/apps/replica/start-replica.js';
import { authFailureCounts } from '../../src/foundations/auth/auth-guard.js';
import { generateKey } from '../../src/foundations/auth/key-format.js';
import { createLogger, silentLogger } from '../../src/foundations/log/logger.js';
import { createProject } from '../control-plane/fixtures.js';
import { addUser } from '../dashboard/helpers/dashboard-session.js';
import { httpClient } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { ManualClock } from '../schedule/manual-clock.js';

/** The service's log lines, parsed. */
function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const raw: string[] = [];
  const logger = createLogger({
    level: 'info',
    write: (line) => {
      raw.push(line);
      lines.push(JSON.parse(line) as Record<string, unknown>);
    },
  });
  return { logger, lines, raw };
}

async function signIn(svc: TestService, username: string, password: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${svc.controlUrl}/dashboard/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: svc.controlUrl, 'sec-fetch-site': 'same-origin', ...headers },
    body: JSON.stringify({ username, password }),
  });
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: (await res.json()) as { error?: { code: string; message: string } },
  };
}

/** Runs `tasks` with at most `limit` at once; resolves with their results in order. */
async function pooled<T>(tasks: Array<() => Promise<T>>, limit: number): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < tasks.length) {
        const i = next++;
        results[i] = await tasks[i]();
      }
    }),
  );
  return results;
}

describe('failed authentication (docs/credentials.md, "Failed authentication")', () => {
  describe('dashboard sign-ins', () => {
    let svc: TestService;
    const log = capturingLogger();

    beforeAll(async () => {
      svc = await startTestService({ logger: log.logger });
      await addUser(svc, 'alice', 'Alice');
      await addUser(svc, 'bob', 'Bob');
    });
    afterAll(() => svc.stop());

    it('100 concurrent wrong passwords for one user: only 3 are checked, the rest get 429 with Retry-After', async () => {
      const results = await Promise.all(Array.from({ length: 100 }, (_, i) => signIn(svc, 'alice', `wrong-password-${i}`)));
      const checked = results.filter((r) => r.status === 401);
      const limited = results.filter((r) => r.status === 429);
      expect(checked).toHaveLength(3);
      expect(limited).toHaveLength(97);
      for (const r of limited) {
        expect(r.body.error).toEqual({ code: 'rate_limited', message: expect.stringMatching(/too many failed authentication attempts/) });
        expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
      }
      // Even the right password waits: the throttle answers before anything is checked.
      expect((await signIn(svc, 'alice', 'alice-password-1')).status).toBe(429);
      // Another username from the same address has its own three tries.
      expect((await signIn(svc, 'bob', 'bob-password-1')).status).toBe(200);
    });

    it('logs a wrong password as a warning with the address and the username, never the password', () => {
      const failures = log.lines.filter((l) => l.msg === 'authentication failed' && l.credential === 'password');
      expect(failures).toHaveLength(3);
      expect(failures[0]).toMatchObject({ level: 'warn', via: 'dashboard sign-in', address: '127.0.0.1', username: 'alice' });
      expect(log.raw.join('')).not.toContain('wrong-password-');
    });
  });

  describe('a spray of usernames from one address', () => {
    let svc: TestService;
    const log = capturingLogger();

    beforeAll(async () => {
      svc = await startTestService({ logger: log.logger });
      await addUser(svc, 'carol', 'Carol');
    });
    afterAll(() => svc.stop());

    it('throttles the address across usernames: of 120 usernames tried, the ones past the free failures get 429', async () => {
      const before = authFailureCounts();
      const results = await pooled(
        Array.from({ length: 120 }, (_, i) => () => signIn(svc, `user-${i}`, 'Winter2026!')),
        8,
      );
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(100);
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(15);
      expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
      const after = authFailureCounts();
      expect(after.password - before.password).toBe(statuses.filter((s) => s === 401).length);
      expect(after.rate_limited - before.rate_limited).toBe(statuses.filter((s) => s === 429).length);
      // An unknown username may be a password typed in the wrong box: it is not logged.
      expect(log.lines.filter((l) => l.credential === 'password').every((l) => l.username === undefined)).toBe(true);
    });
  });

  describe('one budget per address for every kind of credential', () => {
    let svc: TestService;

    beforeAll(async () => {
      svc = await startTestService();
      await addUser(svc, 'erin', 'Erin');
    });
    afterAll(() => svc.stop());

    it('after 100 wrong keys, passwords, keys on both ports and git over HTTP get 429 until the wait is over', async () => {
      const flood = await pooled(
        Array.from({ length: 100 }, () => () => httpClient(svc.controlUrl, generateKey('agent')).get('/api/v1/projects')),
        20,
      );
      expect(flood.every((r) => r.status === 401)).toBe(true);
      // What follows comes within milliseconds, well inside the first wait of 1 s.
      const password = await signIn(svc, 'erin', 'erin-password-1');
      expect(password.status).toBe(429);
      expect(password.body.error?.code).toBe('rate_limited');
      const control = await httpClient(svc.controlUrl, generateKey('admin')).get('/api/v1/projects');
      const evaluation = await httpClient(svc.evalUrl, generateKey('sdk')).post('/v1/evaluate', { key: 'x' });
      const git = await fetch(`${svc.controlUrl}/git/acme.git/info/refs?service=git-upload-pack`, {
        headers: { authorization: `Basic ${Buffer.from(`x:${generateKey('agent')}`).toString('base64')}` },
      });
      for (const res of [control, evaluation]) {
        expect(res.status).toBe(429);
        expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(res.body.error.code).toBe('rate_limited');
      }
      expect(git.status).toBe(429);
      expect(git.headers.get('retry-after')).toMatch(/^\d+$/);
    });
  });

  describe('wrong API keys', () => {
    let svc: TestService;
    const log = capturingLogger();
    let sdkKey: string;
    let projectId: string;
    let checkedKeys = 0;

    beforeAll(async () => {
      // Time stands still: however slowly a loaded machine answers the flood, no wait runs out before the last check.
      svc = await startTestService({ logger: log.logger, clock: new ManualClock(Date.parse('2026-11-26T10:00:00Z')) });
      const admin = httpClient(svc.controlUrl, svc.admin);
      projectId = (await createProject(admin, 'shop')).id;
      sdkKey = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId, environment: 'prod' })).body.key;
    });
    afterAll(() => svc.stop());

    it('a flood of 300 wrong keys is answered 429 after the free failures; keys already in use keep working', async () => {
      const evaluate = (key: string) => httpClient(svc.evalUrl, key).post('/v1/evaluate', { key: 'checkout' });
      expect((await evaluate(sdkKey)).status).toBe(200);
      const results = await pooled(
        Array.from({ length: 300 }, () => () => evaluate(generateKey('sdk'))),
        20,
      );
      const statuses = results.map((r) => r.status);
      checkedKeys = statuses.filter((s) => s === 401).length;
      expect(checkedKeys).toBeGreaterThanOrEqual(100);
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(150);
      expect((await evaluate(sdkKey)).status).toBe(200);
      expect((await httpClient(svc.controlUrl, svc.admin).get('/api/v1/projects')).status).toBe(200);
      // A key this server has not seen yet waits like any other.
      const fresh = (await httpClient(svc.controlUrl, svc.admin).post('/api/v1/keys', { kind: 'sdk', projectId, environment: 'dev' })).body
        .key;
      expect((await evaluate(fresh)).status).toBe(429);
    });

    it('logs each checked wrong key with the address and the key prefix only', () => {
      const failures = log.lines.filter((l) => l.msg === 'authentication failed');
      expect(failures).toHaveLength(checkedKeys);
      for (const line of failures) {
        expect(line).toMatchObject({ level: 'warn', credential: 'api key', via: 'evaluation', address: '127.0.0.1' });
        expect(line.keyPrefix).toMatch(/^svc_sdk_[0-9A-Za-z]{8}$/);
      }
      expect(failures[99].throttled).toBe('further attempts from this address must wait');
      expect(log.raw.some((line) => /svc_sdk_[0-9A-Za-z]{32}/.test(line))).toBe(false);
    });
  });

  describe('an evaluation replica', () => {
    it('throttles wrong keys per address as the main server does, keeping known keys working', async () => {
      const svc = await startTestService();
      const admin = httpClient(svc.controlUrl, svc.admin);
      const project = await createProject(admin, 'shop');
      const sdkKey = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
      const dataDir = await mkdtemp(path.join(os.tmpdir(), 'flagops-replica-auth-'));
      const replica = await startReplica({
        upstreams: [svc.controlUrl],
        token: svc.admin,
        host: '127.0.0.1',
        port: 0,
        dataDir,
        logger: silentLogger,
      });
      try {
        const snapshot = (key: string) => httpClient(replica.url, key).get('/v1/snapshot');
        expect((await snapshot(sdkKey)).status).toBe(200);
        const results = await pooled(
          Array.from({ length: 130 }, () => () => snapshot(generateKey('sdk'))),
          10,
        );
        expect(results.filter((r) => r.status === 401).length).toBeGreaterThanOrEqual(100);
        const limited = results.filter((r) => r.status === 429);
        expect(limited.length).toBeGreaterThanOrEqual(20);
        expect(limited[0].body.error.code).toBe('rate_limited');
        expect((await snapshot(sdkKey)).status).toBe(200);
      } finally {
        await replica.stop();
        await svc.stop();
        await rm(dataDir, { recursive: true, force: true });
      }
    });
  });

  describe('behind a trusted reverse proxy (FLAGOPS_TRUST_PROXY=1)', () => {
    let svc: TestService;

    beforeAll(async () => {
      svc = await startTestService({ trustProxy: 1 });
      await addUser(svc, 'dave', 'Dave');
    });
    afterAll(() => svc.stop());

    it('throttles by the address the proxy saw, whatever the client put in front of it', async () => {
      const viaProxy = (client: string, spoofed: string) => ({ 'x-forwarded-for': `${spoofed}, ${client}` });
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++)
        statuses.push((await signIn(svc, 'dave', `wrong-${i}`, viaProxy('203.0.113.7', `198.51.100.${i}`))).status);
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
      // Another client behind the same proxy is not affected.
      expect((await signIn(svc, 'dave', 'dave-password-1', viaProxy('203.0.113.8', '198.51.100.1'))).status).toBe(200);
    });
  });
});

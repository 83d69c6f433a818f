import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { git } from '../helpers/git-cli.js';
import { httpClient, type Json } from '../helpers/http-client.js';
import { POSTGRES_MISSING, PostgresCluster } from '../helpers/postgres.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { gitAsync } from './git-async.js';

const CONFIG = 'projects/shop/environments/staging/checkout.yaml';
const KILLS = 'projects/shop/environments/staging/kills.yaml';
const KILL =
  'kills:\n  checkout:\n    killedAt: 2026-11-28T08:55:00.000Z\n    killedBy: oncall\n    reason: killed by a push while the database is down\n';

describe.skipIf(POSTGRES_MISSING !== null)('a push over /git with the state in PostgreSQL and the database down', () => {
  let cluster: PostgresCluster;
  let svc: TestService;
  let databaseAt: string;
  let work: string;
  let checkout: string;
  let agentCheckout: string;
  let checkoutFlag: Json;
  const main = () => git(svc.gitdir(), 'rev-parse', 'refs/heads/main');

  beforeAll(async () => {
    cluster = await PostgresCluster.start();
    const url = await cluster.createDatabase();
    databaseAt = `127.0.0.1:${cluster.port}${new URL(url).pathname}`;
    svc = await startTestService({ databaseUrl: url });
    const admin = httpClient(svc.controlUrl, svc.admin);
    const project = await createProject(admin, 'shop');
    // Agents' changes to staging have a budget: what agents moved in the last hour is read from the database.
    expect(
      (await admin.patch(`/api/v1/projects/${project.id}`, { budgets: { staging: { movedPctPerHour: 50, actors: ['agent'] } } })).status,
    ).toBe(200);
    checkoutFlag = await createFlag(admin, project.id, { key: 'checkout' });
    work = mkdtempSync(path.join(os.tmpdir(), 'flagops-push-db-down-'));
    checkout = path.join(work, 'checkout');
    agentCheckout = path.join(work, 'agent-checkout');
    const remote = (key: string) => `${svc.controlUrl.replace('://', `://engineer:${key}@`)}/git/acme.git`;
    expect((await gitAsync(work, 'clone', '--quiet', remote(svc.admin), checkout)).ok).toBe(true);
    expect((await gitAsync(work, 'clone', '--quiet', remote(svc.agent), agentCheckout)).ok).toBe(true);
    await cluster.stopServer();
  }, 90_000);
  afterAll(async () => {
    try {
      await svc?.stop();
      await cluster?.destroy();
    } finally {
      if (work) rmSync(work, { recursive: true, force: true });
    }
  });

  it('refuses a config change in the documented form, saying that the database cannot be reached, and changes nothing', async () => {
    const head = main();
    const file = path.join(checkout, CONFIG);
    writeFileSync(file, readFileSync(file, 'utf8').replace(/rolloutPct: .*/, 'rolloutPct: 17'));
    git(checkout, 'commit', '--quiet', '-am', 'a push while the database is down');
    const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toMatch(/^remote: flagops: push refused\s*$/m);
    expect(pushed.stderr).toContain(`remote: refs/heads/main: the database at ${databaseAt} cannot be reached: `);
    expect(pushed.stderr).not.toContain('validate-push');
    expect(main()).toBe(head);
  }, 60_000);

  it("refuses an agent's push that adds to the agents' budget, naming the file and saying what cannot be read, in git's remote: lines", async () => {
    // A kill through the API (which needs no database) moves main: the audit trail's index of it, in the database,
    // is behind, so what agents moved in the last hour cannot be read.
    const killed = await httpClient(svc.controlUrl, svc.admin).post(`/api/v1/flags/${checkoutFlag.id}/environments/prod/kill`, {
      reason: 'while the database is down',
    });
    expect(killed.status).toBe(200);
    expect((await gitAsync(agentCheckout, 'pull', '--quiet', '--rebase', 'origin', 'main')).ok).toBe(true);
    const head = main();
    const file = path.join(agentCheckout, CONFIG);
    writeFileSync(
      file,
      readFileSync(file, 'utf8')
        .replace(/enabled: .*/, 'enabled: true')
        .replace(/rolloutPct: .*/, 'rolloutPct: 17'),
    );
    git(agentCheckout, 'commit', '--quiet', '-am', "an agent's push while the database is down");
    const pushed = await gitAsync(agentCheckout, 'push', 'origin', 'HEAD:main');
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toMatch(/^remote: flagops: push refused\s*$/m);
    expect(pushed.stderr).toContain(
      `remote: ${CONFIG}: agent changes to staging in project shop have a budget, and what they moved in the last hour cannot be read: the database at ${databaseAt} cannot be reached`,
    );
    expect(main()).toBe(head);
  }, 60_000);

  it('refuses a push that only kills too, saying why and that the API kill needs no database', async () => {
    const head = main();
    expect((await gitAsync(checkout, 'fetch', '--quiet', 'origin')).ok).toBe(true);
    git(checkout, 'reset', '--quiet', '--hard', 'origin/main');
    writeFileSync(path.join(checkout, KILLS), KILL);
    git(checkout, 'add', '-A');
    git(checkout, 'commit', '--quiet', '-m', 'kill checkout in staging while the database is down');
    const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toMatch(/^remote: flagops: push refused\s*$/m);
    expect(pushed.stderr).toMatch(
      new RegExp(`remote: refs/heads/main: the database at ${databaseAt} cannot be reached: .*kill through the API`),
    );
    expect(main()).toBe(head);
  }, 60_000);

  it('refuses it within seconds when the database hangs, saying it does not answer, rather than waiting for it', async () => {
    await cluster.startServer();
    await cluster.hang();
    const head = main();
    try {
      const started = Date.now();
      const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
      expect(pushed.ok).toBe(false);
      expect(pushed.stderr).toContain(`remote: refs/heads/main: the database at ${databaseAt} cannot be reached: no answer within `);
      expect(Date.now() - started).toBeLessThan(45_000);
    } finally {
      await cluster.resume();
    }
    expect(main()).toBe(head);
  }, 60_000);

  it('takes the push once the database is back, without a restart', async () => {
    const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect([pushed.ok, pushed.stderr]).toEqual([true, expect.any(String)]);
    expect(main()).toBe(git(checkout, 'rev-parse', 'HEAD'));
  }, 60_000);
});

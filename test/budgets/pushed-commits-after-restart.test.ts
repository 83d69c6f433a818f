import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { gitAsync } from '../git-http/git-async.js';
import { git, gitWith } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { POSTGRES_MISSING, PostgresCluster } from '../helpers/postgres.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { ManualClock } from '../schedule/manual-clock.js';

const MINUTE = 60_000;

/**
 * A pushed commit counts against a budget from when its push was accepted, whatever date it claims: the same
 * before and after a restart, with the push records in the data directory or in PostgreSQL.
 */
function describeRestarts(storage: string, onPostgres: boolean) {
  describe.skipIf(onPostgres && POSTGRES_MISSING !== null)(`a budget after a restart, with the state in ${storage}`, () => {
    const clock = new ManualClock(Date.parse('2026-05-04T09:00:00Z'));
    let cluster: PostgresCluster | undefined;
    let svc: TestService;
    let admin: HttpClient;
    let work = '';
    let n = 0;

    const config = (rolloutPct: number, version: number) =>
      `enabled: true\nrolloutPct: ${rolloutPct}\nvalueOn: true\nvalueOff: false\nversion: ${version}\nrules: []\n`;

    /** One commit of the file's new content, dated `date` (author and committer), pushed by the agent key. */
    async function pushDated(file: string, content: string, date: string) {
      const checkout = path.join(work, `checkout-${n++}`);
      const url = `${svc.controlUrl.replace('://', `://engineer:${svc.agent}@`)}/git/acme.git`;
      const cloned = await gitAsync(work, 'clone', '--quiet', url, checkout);
      if (!cloned.ok) throw new Error(cloned.stderr);
      mkdirSync(path.dirname(path.join(checkout, file)), { recursive: true });
      writeFileSync(path.join(checkout, file), content);
      git(checkout, 'add', '-A');
      gitWith(checkout, { env: { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } }, 'commit', '--quiet', '-m', 'change rollout');
      return gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    }

    /** A project with a budget of 10 % an hour for agents in prod, and a flag on at 0 % there. */
    async function budgeted(): Promise<{ project: Json; file: string }> {
      const project = await createProject(admin, `shop-${++n}`);
      const budgets = { prod: { movedPctPerHour: 10, actors: ['agent'] } };
      expect((await admin.patch(`/api/v1/projects/${project.id}`, { budgets })).status).toBe(200);
      const flag = await createFlag(admin, project.id, { key: 'checkout' });
      expect((await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 0 })).status).toBe(200);
      return { project, file: `projects/${project.slug}/environments/prod/checkout.yaml` };
    }
    const budgetOf = async (project: Json) => (await admin.get(`/api/v1/projects/${project.id}/budgets`)).body.budgets[0];

    async function restart() {
      await svc.restart();
      admin = httpClient(svc.controlUrl, svc.admin);
    }

    beforeAll(async () => {
      work = mkdtempSync(path.join(os.tmpdir(), 'flagops-budget-restart-'));
      if (onPostgres) cluster = await PostgresCluster.start();
      const databaseUrl = await cluster?.createDatabase();
      svc = await startTestService({ clock, ...(databaseUrl ? { databaseUrl } : {}) });
      admin = httpClient(svc.controlUrl, svc.admin);
    }, 120_000);
    afterAll(async () => {
      try {
        await svc?.stop();
      } finally {
        await cluster?.destroy();
        if (work) rmSync(work, { recursive: true, force: true });
      }
    });

    it('still counts back-dated pushes of the last hour, and refuses the push they leave no room for', async () => {
      const { project, file } = await budgeted();
      const threeHoursAgo = new Date(clock.now().getTime() - 180 * MINUTE).toISOString();
      expect((await pushDated(file, config(8, 3), threeHoursAgo)).ok).toBe(true);
      const pushedAt = clock.now().toISOString();
      expect(await budgetOf(project)).toMatchObject({ usedPct: 8, changes: [{ at: pushedAt, movedPct: 8 }] });

      await restart();
      expect(await budgetOf(project)).toMatchObject({ usedPct: 8, changes: [{ at: pushedAt, movedPct: 8 }] });
      const past = await pushDated(file, config(11, 4), threeHoursAgo);
      expect(past.ok).toBe(false);
      expect(past.stderr).toContain('moved 8.00 % of users in the last 60 minutes; this push would add 3.00 %');
    }, 120_000);

    it('counts a push dated months ahead from its push, so that it leaves the window an hour later', async () => {
      const { project, file } = await budgeted();
      const pushedAt = clock.now().toISOString();
      expect((await pushDated(file, config(5, 3), '2027-01-01T00:00:00Z')).ok).toBe(true);
      await restart();
      expect(await budgetOf(project)).toMatchObject({ usedPct: 5, changes: [{ at: pushedAt, movedPct: 5 }] });
      clock.advance(61 * MINUTE);
      expect(await budgetOf(project)).toMatchObject({ usedPct: 0, changes: [] });
    }, 120_000);
  });
}

describeRestarts('the data directory', false);
describeRestarts('PostgreSQL', true);

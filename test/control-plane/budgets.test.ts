import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, sessionHeaders, signIn } from '../dashboard/helpers/dashboard-session.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { ManualClock } from '../schedule/manual-clock.js';
import { createFlag, createProject, mainHead } from './fixtures.js';

const MINUTE = 60_000;

/** Budgets for agents: `budgets` in project.yaml; a change past the hourly moved share waits as a proposal. */
describe('budgets', () => {
  const clock = new ManualClock(Date.parse('2026-05-04T09:00:00Z'));
  let svc: TestService;
  let admin: HttpClient;
  let agent: HttpClient;
  let n = 0;

  beforeAll(async () => {
    svc = await startTestService({ clock });
    admin = httpClient(svc.controlUrl, svc.admin);
    agent = httpClient(svc.controlUrl, svc.agent);
  }, 60_000);
  afterAll(() => svc?.stop());

  /** A project with `budgets`, and a flag on at `rolloutPct` % in prod and staging (set by the admin key, which no budget lists). */
  async function budgeted(budgets: Json, rolloutPct = 0): Promise<{ project: Json; flag: Json }> {
    const project = await createProject(admin, `shop-${++n}`);
    const patched = await admin.patch(`/api/v1/projects/${project.id}`, { budgets });
    expect(patched.status).toBe(200);
    const flag = await createFlag(admin, project.id, { key: 'checkout' });
    for (const env of ['prod', 'staging'])
      expect((await admin.put(`/api/v1/flags/${flag.id}/environments/${env}/config`, { enabled: true, rolloutPct })).status).toBe(200);
    return { project, flag };
  }

  const config = (api: HttpClient, flag: Json, env: string, body: Json) =>
    api.put(`/api/v1/flags/${flag.id}/environments/${env}/config`, body);
  const served = async (flag: Json, env = 'prod') => (await admin.get(`/api/v1/flags/${flag.id}`)).body.environments[env];
  const use = async (project: Json) => (await admin.get(`/api/v1/projects/${project.id}/budgets`)).body;

  describe('the setting', () => {
    it('PATCH sets it, GET shows it, an agent may not change it, and values out of range are 400', async () => {
      const project = await createProject(admin, `settings-${++n}`);
      const budgets = { prod: { movedPctPerHour: 10, actors: ['agent', 'session'] } };
      expect((await admin.patch(`/api/v1/projects/${project.id}`, { budgets })).body.budgets).toEqual(budgets);
      expect((await admin.get(`/api/v1/projects/${project.id}`)).body.budgets).toEqual(budgets);
      const refused = await agent.patch(`/api/v1/projects/${project.id}`, { budgets: null });
      expect([refused.status, refused.body.error.message]).toEqual([
        403,
        "an agent key may not change a project's settings (name, requireApproval, budgets); it needs an admin key or an admin session",
      ]);
      for (const bad of [
        { prod: { movedPctPerHour: 101, actors: ['agent'] } },
        { prod: { movedPctPerHour: 5, actors: ['robot'] } },
        { production: {} },
      ]) {
        const res = await admin.patch(`/api/v1/projects/${project.id}`, { budgets: bad });
        expect([res.status, res.body.error.code]).toEqual([400, 'invalid_input']);
      }
      expect((await admin.patch(`/api/v1/projects/${project.id}`, { budgets: null })).body.budgets).toBeUndefined();
    });
  });

  describe('a change by a listed actor type', () => {
    it('is applied while the hour stays within budget, and kept as a proposal with reason budget once it would go past', async () => {
      const { project, flag } = await budgeted({ prod: { movedPctPerHour: 10, actors: ['agent'] } });
      expect((await config(agent, flag, 'prod', { rolloutPct: 4 })).status).toBe(200);
      expect((await config(agent, flag, 'prod', { rolloutPct: 8 })).status).toBe(200);
      // A preview says beforehand whether the change would wait.
      const preview = async (rolloutPct: number) =>
        (await agent.post(`/api/v1/flags/${flag.id}/environments/prod/preview`, { config: { rolloutPct } })).body;
      expect(await preview(12)).toMatchObject({
        requiresApproval: true,
        budget: { usedPct: 8, addsPct: 4, movedPctPerHour: 10, waits: true },
      });
      expect(await preview(10)).toMatchObject({ requiresApproval: false, budget: { usedPct: 8, addsPct: 2, waits: false } });
      expect(
        (await admin.post(`/api/v1/flags/${flag.id}/environments/prod/preview`, { config: { rolloutPct: 12 } })).body.budget,
      ).toBeUndefined();
      const head = mainHead(svc.gitdir());
      const res = await config(agent, flag, 'prod', { rolloutPct: 12 });
      expect(res.status).toBe(202);
      expect(res.body.proposal).toMatchObject({
        status: 'open',
        reason: 'budget',
        budget: { environment: 'prod', actorType: 'agent', movedPctPerHour: 10, usedPct: 8, addsPct: 4, windowMinutes: 60 },
        action: 'config_update',
        environment: 'prod',
        impact: [{ environment: 'prod', exact: true, movedPct: 4 }],
      });
      expect(mainHead(svc.gitdir())).toBe(head);
      expect((await served(flag)).rolloutPct).toBe(8);
      // Up to the budget exactly is within it.
      expect((await config(agent, flag, 'prod', { rolloutPct: 10 })).status).toBe(200);
      const shown = await use(project);
      expect(shown).toMatchObject({
        windowMinutes: 60,
        budgets: [{ environment: 'prod', actorType: 'agent', movedPctPerHour: 10, usedPct: 10, remainingPct: 0 }],
      });
      expect(shown.budgets[0].changes.map((c: Json) => c.movedPct)).toEqual([2, 4, 4]);
    });

    it('other actor types and other environments are not held', async () => {
      const { project, flag } = await budgeted({ prod: { movedPctPerHour: 1, actors: ['agent'] } });
      expect((await config(admin, flag, 'prod', { rolloutPct: 50 })).status).toBe(200);
      expect((await config(agent, flag, 'staging', { rolloutPct: 80 })).status).toBe(200);
      expect((await use(project)).budgets[0].usedPct).toBe(0);
    });

    it('holds a dashboard session the same way when the budget lists sessions, and not an agent key', async () => {
      const { project, flag } = await budgeted({ prod: { movedPctPerHour: 10, actors: ['session'] } });
      await addUser(svc, 'alice', 'Alice');
      const alice = await signIn(svc.controlUrl, 'alice');
      const session = async (body: Json) => {
        const res = await fetch(`${svc.controlUrl}/api/v1/flags/${flag.id}/environments/prod/config`, {
          method: 'PUT',
          headers: sessionHeaders(svc.controlUrl, alice, { 'content-type': 'application/json' }),
          body: JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as Json };
      };
      expect((await session({ rolloutPct: 7 })).status).toBe(200);
      const past = await session({ rolloutPct: 14 });
      expect(past.status).toBe(202);
      expect(past.body.proposal).toMatchObject({
        reason: 'budget',
        proposedBy: { type: 'session' },
        budget: { actorType: 'session', usedPct: 7, addsPct: 7 },
      });
      expect((await config(agent, flag, 'prod', { rolloutPct: 40 })).status).toBe(200);
      expect((await use(project)).budgets).toMatchObject([{ environment: 'prod', actorType: 'session', usedPct: 7 }]);
    });

    it('a change whose impact is not exact counts as 100', async () => {
      const { flag } = await budgeted({ prod: { movedPctPerHour: 50, actors: ['agent'] } });
      const rules = [{ conditions: [{ attribute: 'plan', op: 'eq', value: 'beta' }], serve: 'on' }];
      const res = await config(agent, flag, 'prod', { rules });
      expect(res.status).toBe(202);
      expect(res.body.proposal.budget).toMatchObject({ usedPct: 0, addsPct: 100, movedPctPerHour: 50 });
    });

    it('a schedule counts its steps when it is written: a rollout plan past the budget waits, one within counts them all', async () => {
      const { project, flag } = await budgeted({ prod: { movedPctPerHour: 30, actors: ['agent'] } });
      const plan = (body: Json) => agent.post(`/api/v1/flags/${flag.id}/environments/prod/rollout-plan`, body);
      const startAt = new Date(clock.now().getTime() + MINUTE).toISOString();
      // 100 % in one step a minute from now: nobody moves when it is written, everyone when it is applied.
      const preview = await agent.post(`/api/v1/flags/${flag.id}/environments/prod/preview`, {
        config: { schedule: [{ at: startAt, set: { rolloutPct: 100 } }] },
      });
      expect(preview.body.budget).toMatchObject({ addsPct: 100, waits: true });
      const waits = await plan({ startPct: 100, stepPct: 10, every: '1h', startAt });
      expect(waits.status).toBe(202);
      expect(waits.body.proposal).toMatchObject({ reason: 'budget', budget: { usedPct: 0, addsPct: 100, movedPctPerHour: 30 } });
      expect((await served(flag)).schedule ?? []).toEqual([]);
      // 10 % now and 10 % more an hour later, up to 20 %: it counts 20 when written, and its steps nothing more.
      const within = await plan({ startPct: 10, stepPct: 10, every: '1h', maxPct: 20 });
      expect(within.status, JSON.stringify(within.body)).toBe(200);
      expect((await use(project)).budgets[0]).toMatchObject({ usedPct: 20, remainingPct: 10 });
      expect((await config(agent, flag, 'prod', { schedule: [{ at: startAt, set: { rolloutPct: 100 } }] })).status).toBe(202);
    });

    it('a promotion past the budget is kept as a proposal too', async () => {
      const { flag } = await budgeted({ staging: { movedPctPerHour: 5, actors: ['agent'] } });
      expect((await config(admin, flag, 'dev', { enabled: true, rolloutPct: 30 })).status).toBe(200);
      const res = await agent.post(`/api/v1/flags/${flag.id}/environments/staging/promote`, { fromEnv: 'dev' });
      expect(res.status).toBe(202);
      expect(res.body.proposal).toMatchObject({ action: 'promote', reason: 'budget', budget: { environment: 'staging', addsPct: 30 } });
      expect((await served(flag, 'staging')).rolloutPct).toBe(0);
    });

    it('the audit trail says why the proposal waits', async () => {
      const { flag } = await budgeted({ prod: { movedPctPerHour: 0, actors: ['agent'] } });
      const p = (await config(agent, flag, 'prod', { rolloutPct: 3 })).body.proposal;
      const entries = (await admin.get('/api/v1/audit?action=proposal_open&limit=50')).body.entries;
      expect(entries.find((e: Json) => e.proposalId === p.id).reason).toBe(
        'budget: agent changes to prod moved 0.00 % of users in the last 60 minutes; this change would add 3.00 %, past the budget of 0 % an hour',
      );
    });
  });

  describe('kills', () => {
    it('never wait and never count, even with no budget left; clearKill with a change past the budget is 400', async () => {
      const { project, flag } = await budgeted({ prod: { movedPctPerHour: 0, actors: ['agent'] } }, 50);
      expect((await agent.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, { reason: 'errors' })).status).toBe(200);
      const head = mainHead(svc.gitdir());
      const both = await config(agent, flag, 'prod', { rolloutPct: 60, clearKill: true });
      expect([both.status, both.body.error.message]).toEqual([400, expect.stringContaining('clearKill: this change waits for approval')]);
      expect(mainHead(svc.gitdir())).toBe(head);
      const cleared = await config(agent, flag, 'prod', { clearKill: true });
      expect([cleared.status, cleared.body.environments.prod.killed]).toEqual([200, false]);
      expect((await agent.post(`/api/v1/flags/${flag.id}/environments/prod/kill`)).status).toBe(200);
      expect((await use(project)).budgets[0].usedPct).toBe(0);
      // A change that moves nobody never waits either.
      expect((await config(agent, flag, 'prod', { valueOn: true })).status).toBe(200);
    });
  });

  describe('the last 60 minutes', () => {
    it('an approved budget proposal counts once applied; the use survives a restart and leaves the window after an hour', async () => {
      const { project, flag } = await budgeted({ prod: { movedPctPerHour: 10, actors: ['agent'] } });
      expect((await config(agent, flag, 'prod', { rolloutPct: 10 })).status).toBe(200);
      const waiting = await config(agent, flag, 'prod', { rolloutPct: 15 });
      expect(waiting.status).toBe(202);
      // Proposals waiting do not count.
      expect((await use(project)).budgets[0].usedPct).toBe(10);
      const approved = await admin.post(`/api/v1/proposals/${waiting.body.proposal.id}/approve`);
      expect(approved.body).toMatchObject({ status: 'merged', reason: 'budget' });
      expect((await use(project)).budgets[0]).toMatchObject({ usedPct: 15, remainingPct: 0 });

      await svc.restart();
      admin = httpClient(svc.controlUrl, svc.admin);
      agent = httpClient(svc.controlUrl, svc.agent);
      expect((await use(project)).budgets[0].usedPct).toBe(15);
      expect((await config(agent, flag, 'prod', { rolloutPct: 16 })).status).toBe(202);

      clock.advance(59 * MINUTE);
      expect((await config(agent, flag, 'prod', { rolloutPct: 16 })).status).toBe(202);
      clock.advance(2 * MINUTE);
      expect((await use(project)).budgets[0].usedPct).toBe(0);
      expect((await config(agent, flag, 'prod', { rolloutPct: 25 })).status).toBe(200);
      expect((await use(project)).budgets[0].usedPct).toBe(10);
    }, 60_000);
  });
});

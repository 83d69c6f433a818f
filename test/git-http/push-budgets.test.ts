import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { git, gitWith } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { ManualClock } from '../schedule/manual-clock.js';
import { gitAsync } from './git-async.js';

const MINUTE = 60_000;

/**
 * What a budget keeps as a proposal through the API may not reach main by a push of that actor type: the push
 * is refused, naming the file and saying to propose it; what a push within budget changes counts like any change.
 */
describe('a push by an actor type with a budget', () => {
  const clock = new ManualClock(Date.parse('2026-05-04T09:00:00Z'));
  let svc: TestService;
  let admin: HttpClient;
  let agent: HttpClient;
  let work = '';
  let n = 0;

  const main = () => git(svc.gitdir(), 'rev-parse', 'refs/heads/main');
  const config = (rolloutPct: number, version: number) =>
    `enabled: true\nrolloutPct: ${rolloutPct}\nvalueOn: true\nvalueOff: false\nversion: ${version}\nrules: []\n`;

  async function clone(key: string): Promise<string> {
    const checkout = path.join(work, `checkout-${n++}`);
    const url = `${svc.controlUrl.replace('://', `://engineer:${key}@`)}/git/acme.git`;
    const cloned = await gitAsync(work, 'clone', '--quiet', url, checkout);
    if (!cloned.ok) throw new Error(cloned.stderr);
    return checkout;
  }

  function write(checkout: string, file: string, content: string): void {
    mkdirSync(path.dirname(path.join(checkout, file)), { recursive: true });
    writeFileSync(path.join(checkout, file), content);
  }

  /** One commit per content of the file (author date as given), then one push of them all. */
  async function pushConfigs(key: string, file: string, contents: string[], authorDate?: string) {
    const checkout = await clone(key);
    for (const content of contents) {
      write(checkout, file, content);
      git(checkout, 'add', '-A');
      gitWith(checkout, { env: authorDate ? { GIT_AUTHOR_DATE: authorDate } : {} }, 'commit', '--quiet', '-m', 'change rollout');
    }
    return gitAsync(checkout, 'push', 'origin', 'HEAD:main');
  }

  /** A project with a budget of 10 % an hour for agents in prod, and a flag on at 0 % there. */
  async function budgeted(): Promise<{ project: Json; flag: Json; file: string }> {
    const project = await createProject(admin, `shop-${++n}`);
    expect(
      (await admin.patch(`/api/v1/projects/${project.id}`, { budgets: { prod: { movedPctPerHour: 10, actors: ['agent'] } } })).status,
    ).toBe(200);
    const flag = await createFlag(admin, project.id, { key: 'checkout' });
    expect((await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 0 })).status).toBe(200);
    return { project, flag, file: `projects/${project.slug}/environments/prod/checkout.yaml` };
  }
  const used = async (project: Json) => (await admin.get(`/api/v1/projects/${project.id}/budgets`)).body.budgets[0].usedPct;

  beforeAll(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), 'flagops-push-budgets-'));
    svc = await startTestService({ clock });
    admin = httpClient(svc.controlUrl, svc.admin);
    agent = httpClient(svc.controlUrl, svc.agent);
  }, 60_000);
  afterAll(async () => {
    try {
      await svc?.stop();
    } finally {
      if (work) rmSync(work, { recursive: true, force: true });
    }
  });

  it('is accepted within the budget and counts; past it, it is refused with a remote: line saying to propose it, as the API keeps it', async () => {
    const { project, flag, file } = await budgeted();
    // Two commits in one push count one by one, as the audit trail lists them: 3 % and 3 % more.
    const within = await pushConfigs(svc.agent, file, [config(3, 3), config(6, 4)]);
    expect(within.ok).toBe(true);
    expect(await used(project)).toBe(6);
    const head = main();
    const past = await pushConfigs(svc.agent, file, [config(12, 5)]);
    expect(past.ok).toBe(false);
    expect(past.stderr).toContain(
      `remote: ${file}: agent changes to prod in project ${project.slug} moved 6.00 % of users in the last 60 minutes; this push would add 6.00 %, past the budget of 10 % an hour; propose it through the API or MCP instead, where it waits for approval`,
    );
    expect(main()).toBe(head);
    // The same change through the API waits as a proposal.
    const proposed = await agent.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 12 });
    expect([proposed.status, proposed.body.proposal?.budget]).toEqual([202, expect.objectContaining({ usedPct: 6, addsPct: 6 })]);
    // An admin key, which the budget does not list, pushes as before.
    expect((await pushConfigs(svc.admin, file, [config(50, 5)])).ok).toBe(true);
    expect(await used(project)).toBe(6);
    // An hour later the agent's earlier pushes are out of the window.
    clock.advance(61 * MINUTE);
    expect(await used(project)).toBe(0);
    expect((await pushConfigs(svc.agent, file, [config(58, 6)])).ok).toBe(true);
    expect(await used(project)).toBe(8);
  }, 180_000);

  it('counts a pushed commit from when it was pushed, whatever author date it claims', async () => {
    const { project, file } = await budgeted();
    const longAgo = new Date(clock.now().getTime() - 3 * 60 * MINUTE).toISOString();
    expect((await pushConfigs(svc.agent, file, [config(8, 3)], longAgo)).ok).toBe(true);
    expect(await used(project)).toBe(8);
    const past = await pushConfigs(svc.agent, file, [config(11, 4)], longAgo);
    expect(past.ok).toBe(false);
    expect(past.stderr).toContain('moved 8.00 % of users in the last 60 minutes; this push would add 3.00 %');
  }, 60_000);

  it('refuses a new flag that serves users in a budgeted environment, and accepts one that is off there', async () => {
    const { project } = await budgeted();
    const checkout = await clone(svc.agent);
    const dir = `projects/${project.slug}`;
    const flagFile = (key: string) => `id: ${key}-${project.slug}\nkey: ${key}\nname: ${key}\nkind: boolean\narchivedAt: null\n`;
    write(checkout, `${dir}/flags/fresh.yaml`, flagFile('fresh'));
    for (const env of ['dev', 'staging', 'prod'])
      write(checkout, `${dir}/environments/${env}/fresh.yaml`, config(env === 'prod' ? 40 : 100, 1));
    git(checkout, 'add', '-A');
    git(checkout, 'commit', '--quiet', '-m', 'new flag, on in prod');
    const refused = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain(`remote: ${dir}/environments/prod/fresh.yaml: a new flag serving users (or scheduled to) in prod`);
    // Off, but scheduled to serve everyone in an hour: the steps count when written, so it is refused too.
    const later = new Date(clock.now().getTime() + 60 * MINUTE).toISOString();
    write(checkout, `${dir}/environments/prod/fresh.yaml`, `${config(0, 1)}schedule:\n  - at: "${later}"\n    set: { rolloutPct: 100 }\n`);
    git(checkout, 'commit', '--quiet', '-a', '--amend', '-m', 'new flag, off in prod, scheduled on');
    const scheduled = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(scheduled.ok).toBe(false);
    expect(scheduled.stderr).toContain(`remote: ${dir}/environments/prod/fresh.yaml: a new flag serving users (or scheduled to) in prod`);
    write(checkout, `${dir}/environments/prod/fresh.yaml`, config(0, 1));
    git(checkout, 'commit', '--quiet', '-a', '--amend', '-m', 'new flag, off in prod');
    expect((await gitAsync(checkout, 'push', 'origin', 'HEAD:main')).ok).toBe(true);
  }, 60_000);

  it("counts a schedule's steps when it is pushed: one that would move users past the budget later is refused now", async () => {
    const { project, file } = await budgeted();
    const later = new Date(clock.now().getTime() + 60 * MINUTE).toISOString();
    const scheduled = (rolloutPct: number) => `${config(0, 3)}schedule:\n  - at: "${later}"\n    set: { rolloutPct: ${rolloutPct} }\n`;
    const head = main();
    const past = await pushConfigs(svc.agent, file, [scheduled(50)]);
    expect(past.ok).toBe(false);
    expect(past.stderr).toContain('this push would add 50.00 %, past the budget of 10 % an hour');
    expect(main()).toBe(head);
    expect((await pushConfigs(svc.agent, file, [scheduled(5)])).ok).toBe(true);
    expect(await used(project)).toBe(5);
  }, 60_000);

  it('refuses an agent key a push that changes the budgets, a project setting', async () => {
    const { project } = await budgeted();
    const file = `projects/${project.slug}/project.yaml`;
    const yaml = `id: ${project.id}\nname: ${project.name}\nslug: ${project.slug}\nbudgets:\n  prod:\n    movedPctPerHour: 100\n    actors: [agent]\n`;
    const refused = await pushConfigs(svc.agent, file, [yaml]);
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain(
      `remote: ${file}: changes budgets: an agent key may not change a project's settings (name, requireApproval, budgets)`,
    );
    expect((await admin.get(`/api/v1/projects/${project.id}`)).body.budgets.prod.movedPctPerHour).toBe(10);
  }, 60_000);
});

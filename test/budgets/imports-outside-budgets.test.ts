import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flagops } from '../cli/cli-harness.js';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { git } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';

/**
 * `flagops import` is an operator's action outside the actor types a budget lists: it is not held to an admin
 * budget, and what it moves is not charged to one, so the admins' own changes are not kept waiting after it.
 */
describe('an import beside a project with a budget for admins', () => {
  let svc: TestService;
  let admin: HttpClient;
  let work = '';

  beforeAll(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), 'flagops-import-budget-'));
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
  }, 60_000);
  afterAll(async () => {
    try {
      await svc?.stop();
    } finally {
      if (work) rmSync(work, { recursive: true, force: true });
    }
  });

  it('is not charged to the budget: the use stays as the admins made it, and their next change is applied', async () => {
    const project = await createProject(admin, 'shop');
    const budgets = { prod: { movedPctPerHour: 10, actors: ['admin'] } };
    expect((await admin.patch(`/api/v1/projects/${project.id}`, { budgets })).status).toBe(200);
    const imported = await createFlag(admin, project.id, { key: 'checkout' });
    const other = await createFlag(admin, project.id, { key: 'search' });
    expect((await admin.put(`/api/v1/flags/${imported.id}/environments/prod/config`, { enabled: true, rolloutPct: 0 })).status).toBe(200);
    expect((await admin.put(`/api/v1/flags/${other.id}/environments/prod/config`, { enabled: true, rolloutPct: 0 })).status).toBe(200);

    // The organisation's flags as they are, with checkout moved from 0 % to 40 % in prod: four times the budget.
    const checkout = path.join(work, 'checkout');
    git(work, 'clone', '--quiet', svc.gitdir(), checkout);
    const dir = path.join(work, 'import');
    cpSync(path.join(checkout, 'projects'), path.join(dir, 'projects'), { recursive: true });
    const file = path.join(dir, 'projects', 'shop', 'environments', 'prod', 'checkout.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/^rolloutPct: .*$/m, 'rolloutPct: 40'));
    const result = await flagops(['import', dir, '--org', 'acme', '--data-dir', svc.dataDir, '--replace', '--actor', 'Ops Import']);
    expect([result.code, result.stderr]).toEqual([0, '']);
    expect((await admin.get(`/api/v1/flags/${imported.id}`)).body.environments.prod.rolloutPct).toBe(40);

    const importCommit = /commit ([0-9a-f]{40})/.exec(result.stdout)![1];

    const budget = async () => (await admin.get(`/api/v1/projects/${project.id}/budgets`)).body.budgets[0];
    const before = await budget();
    expect(before).toMatchObject({ actorType: 'admin', usedPct: 0, remainingPct: 10 });
    expect(before.changes.map((c: Json) => c.commit)).not.toContain(importCommit);
    const change = await admin.put(`/api/v1/flags/${other.id}/environments/prod/config`, { rolloutPct: 6 });
    expect(change.status).toBe(200);
    const after = await budget();
    expect(after).toMatchObject({ usedPct: 6, remainingPct: 4 });
    expect(after.changes[0]).toMatchObject({ flagKey: 'search', movedPct: 6 });
  }, 120_000);
});

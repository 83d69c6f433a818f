import { describe, expect, it } from 'vitest';
import { useMcpSuite } from './harness/mcp-suite.js';
import { textOf } from './harness/spawn-mcp.js';

const suite = useMcpSuite();
const mainHead = async (): Promise<string> => (await suite.service.admin.get('/api/v1/invalid-files')).body.commit;

describe('proposals through the MCP server', () => {
  it('preview_change shows the change and its impact and commits nothing', async () => {
    await suite.service.flag('preview-me', { prod: { enabled: true, rolloutPct: 10 } });
    const before = await mainHead();
    const result = await suite.mcp.call('preview_change', { key: 'preview-me', env: 'prod', rolloutPct: 25 });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain('change: shop/preview-me prod: rolloutPct 10 → 25');
    expect(textOf(result)).toContain('impact: prod: moves 15.00 % of users from off to on');
    expect(await mainHead()).toBe(before);
    const flag = (await suite.service.admin.get('/api/v1/flags/lookup?projectSlug=shop&key=preview-me')).body;
    expect(flag.environments.prod.rolloutPct).toBe(10);
  });

  it('a write into a protected environment tells the agent it became a proposal, its id and who may approve; list_proposals shows it', async () => {
    await suite.service.flag('guarded', { prod: { enabled: true, rolloutPct: 10 } });
    const patched = await suite.service.admin.patch(`/api/v1/projects/${suite.service.projectId}`, {
      requireApproval: { prod: ['agent'] },
    });
    expect(patched.status).toBe(200);
    try {
      const before = await mainHead();
      const result = await suite.mcp.call('set_rollout', { key: 'guarded', env: 'prod', rolloutPct: 50 });
      expect(result.isError).toBeFalsy();
      const text = textOf(result);
      const id = (result.structuredContent as { proposal: { id: string } }).proposal.id;
      expect(text).toContain(`NOT APPLIED YET`);
      expect(text).toContain(`proposal ${id}`);
      expect(text).toContain('an admin key or a dashboard session');
      expect(text).toContain('impact: guarded prod: moves 40.00 % of users from off to on');
      expect(await mainHead()).toBe(before);
      const promoted = await suite.mcp.call('promote_flag', { key: 'guarded', fromEnv: 'dev', toEnv: 'prod' });
      expect(textOf(promoted)).toContain('NOT APPLIED YET');
      const listed = textOf(await suite.mcp.call('list_proposals', {}));
      expect(listed).toContain(`Proposal ${id}: config_update of guarded in prod`);
      const opened = textOf(await suite.mcp.call('get_audit_log', { key: 'guarded', action: 'proposal_open' }));
      expect(opened).toMatch(/proposal_open guarded in prod by agent/);
    } finally {
      await suite.service.admin.patch(`/api/v1/projects/${suite.service.projectId}`, { requireApproval: null });
    }
  });

  it('list_proposals says a proposal is stale, why, and what to do, once its config changed on main', async () => {
    await suite.service.flag('overtaken', { prod: { enabled: true, rolloutPct: 75 } });
    await suite.service.admin.patch(`/api/v1/projects/${suite.service.projectId}`, { requireApproval: { prod: ['agent'] } });
    try {
      const proposed = await suite.mcp.call('set_rollout', { key: 'overtaken', env: 'prod', rolloutPct: 100 });
      const id = (proposed.structuredContent as { proposal: { id: string } }).proposal.id;
      const fresh = textOf(await suite.mcp.call('list_proposals', {}));
      expect(fresh).toContain(`Proposal ${id}: config_update of overtaken in prod`);
      expect(fresh).not.toContain('STALE');
      const flag = (await suite.service.admin.get('/api/v1/flags/lookup?projectSlug=shop&key=overtaken')).body;
      const version = flag.environments.prod.version;
      const changed = await suite.service.admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, { rolloutPct: 80 });
      expect(changed.status).toBe(200);
      const listed = await suite.mcp.call('list_proposals', {});
      const line = textOf(listed)
        .split('\n')
        .find((l) => l.startsWith(`Proposal ${id}:`));
      expect(line).toContain(`STALE: prod config of overtaken changed on main since: version ${version} → ${version + 1}`);
      expect(line).toContain('cannot be approved');
      expect(line).not.toContain('waiting for');
      const listedData = (listed.structuredContent as { proposals: Array<{ id: string; stale: boolean; staleReason?: string }> }).proposals;
      expect(listedData.find((p) => p.id === id)).toMatchObject({
        stale: true,
        staleReason: expect.stringContaining('prod config of overtaken'),
      });
    } finally {
      await suite.service.admin.patch(`/api/v1/projects/${suite.service.projectId}`, { requireApproval: null });
    }
  });

  it("a write past the project's budget tells the agent it waits for approval and why: the budget, the use so far and what it adds", async () => {
    await suite.service.flag('budgeted', { prod: { enabled: true, rolloutPct: 0 } });
    const patched = await suite.service.admin.patch(`/api/v1/projects/${suite.service.projectId}`, {
      budgets: { prod: { movedPctPerHour: 10, actors: ['agent'] } },
    });
    expect(patched.status).toBe(200);
    try {
      const within = await suite.mcp.call('set_rollout', { key: 'budgeted', env: 'prod', rolloutPct: 6 });
      expect(textOf(within)).not.toContain('NOT APPLIED');
      const preview = textOf(await suite.mcp.call('preview_change', { key: 'budgeted', env: 'prod', rolloutPct: 12 }));
      expect(preview).toContain('Making it would open a proposal, for an admin key or a dashboard session');
      expect(preview).toContain('this change would add 6.00 %, past the budget of 10 % an hour');
      const before = await mainHead();
      const result = await suite.mcp.call('set_rollout', { key: 'budgeted', env: 'prod', rolloutPct: 12 });
      expect(result.isError).toBeFalsy();
      const text = textOf(result);
      expect(text).toContain(
        "NOT APPLIED YET: it would take this project's hourly budget past its limit (agent changes to prod moved 6.00 % of users in the last 60 minutes; this change would add 6.00 %, past the budget of 10 % an hour)",
      );
      expect(text).toContain('an admin key or a dashboard session');
      expect(result.structuredContent).toMatchObject({ applied: false, reason: 'budget', proposal: { reason: 'budget' } });
      expect(await mainHead()).toBe(before);
      // A kill never waits, whatever the budget.
      expect(textOf(await suite.mcp.call('kill_flag', { key: 'budgeted', env: 'prod', reason: 'errors' }))).not.toContain('NOT APPLIED');
      const listed = textOf(await suite.mcp.call('list_proposals', {}));
      expect(listed).toContain('waits for budget: agent changes to prod moved 6.00 %');
    } finally {
      await suite.service.admin.patch(`/api/v1/projects/${suite.service.projectId}`, { budgets: null });
    }
  });
});

import { describe, expect, it } from 'vitest';
import { useMcpSuite } from './harness/mcp-suite.js';
import { textOf } from './harness/spawn-mcp.js';

const suite = useMcpSuite();

describe('cleanup by agents through the MCP server', () => {
  it('list_stale_flags lists rolled-out flags with their reasons in words, and potentially stale ones unless asked not to', async () => {
    const all = { enabled: true, rolloutPct: 100 };
    await suite.service.flag('shipped', { dev: all, staging: all, prod: all });
    await suite.service.flag('halfway', { prod: { enabled: true, rolloutPct: 50 } });
    const result = await suite.mcp.call('list_stale_flags', { staleAfterDays: 0 });
    expect(result.isError).toBeFalsy();
    const text = textOf(result);
    expect(text).toMatch(/- shipped \[stale; release\]: rolled out: every environment has served true to everyone since \d{4}-\d\d-\d\d/);
    expect(text).toMatch(/- halfway \[potentially stale; release\]: no evaluations/);
    const flags = (result.structuredContent as { flags: Array<{ key: string; status: string; reasons: Array<{ code: string }> }> }).flags;
    expect(flags.find((f) => f.key === 'shipped')?.reasons.map((r) => r.code)).toContain('rolled_out');
    const strict = await suite.mcp.call('list_stale_flags', { staleAfterDays: 0, includePotentiallyStale: false });
    expect(textOf(strict)).not.toContain('halfway');
    expect(textOf(strict)).toContain('shipped');
    const none = await suite.mcp.call('list_stale_flags', {});
    expect(textOf(none)).not.toContain('shipped');
  });

  it('archive_flag refuses an agent key where the project requires no approval, saying whom to ask', async () => {
    await suite.service.flag('retire-me');
    const result = await suite.mcp.call('archive_flag', { key: 'retire-me' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('forbidden');
    expect(textOf(result)).toContain('admin key');
    const flag = (await suite.service.admin.get('/api/v1/flags/lookup?projectSlug=shop&key=retire-me')).body;
    expect(flag.archivedAt).toBeNull();
  });

  it('archive_flag becomes a proposal where the project requires approval of agents, and says what SDKs will serve', async () => {
    await suite.service.flag('retire-later');
    await suite.service.admin.patch(`/api/v1/projects/${suite.service.projectId}`, { requireApproval: { prod: ['agent'] } });
    try {
      const result = await suite.mcp.call('archive_flag', { key: 'retire-later' });
      expect(result.isError).toBeFalsy();
      const text = textOf(result);
      expect(text).toContain('NOT APPLIED YET');
      expect(text).toContain('flag_archive of retire-later in every environment');
      expect(text).toContain('serve its defaultValue false for retire-later in every environment');
      expect(text).toContain('reason "archived"');
      const id = (result.structuredContent as { proposal: { id: string } }).proposal.id;
      expect((await suite.service.admin.post(`/api/v1/proposals/${id}/approve`, {})).status).toBe(200);
      const flag = (await suite.service.admin.get('/api/v1/flags/lookup?projectSlug=shop&key=retire-later')).body;
      expect(flag.archivedAt).toEqual(expect.any(String));
      const again = await suite.mcp.call('archive_flag', { key: 'retire-later' });
      expect(textOf(again)).toContain('archived already');
    } finally {
      await suite.service.admin.patch(`/api/v1/projects/${suite.service.projectId}`, { requireApproval: null });
    }
  });
});

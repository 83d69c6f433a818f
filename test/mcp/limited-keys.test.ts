import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpClient } from '../helpers/http-client.js';
import { type BundledServer, bundleServer } from './harness/bundle-server.js';
import { type McpService, startMcpService } from './harness/mcp-service.js';
import { connectStdio, runToExit, type StdioSession, textOf } from './harness/spawn-mcp.js';

/**
 * The MCP server acts with the agent key it is given, through the control plane: a limited key gets the same
 * answers there as over the API (other projects not found, other environments forbidden, an ended key refused).
 */
describe('MCP tools with a limited or ended agent key', () => {
  let server: BundledServer;
  let service: McpService;
  const sessions: StdioSession[] = [];
  let webId: string;

  const connect = async (key: string, project: string) => {
    const session = await connectStdio(server.file, {
      FLAGOPS_URL: service.svc.controlUrl,
      FLAGOPS_AGENT_KEY: key,
      FLAGOPS_PROJECT: project,
    });
    sessions.push(session);
    return session;
  };
  const agentKey = async (body: Record<string, unknown>) => {
    const res = await service.admin.post('/api/v1/keys', { kind: 'agent', ...body });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    return res.body as { id: string; key: string; prefix: string };
  };

  beforeAll(async () => {
    [server, service] = await Promise.all([bundleServer(), startMcpService()]);
    await service.flag('checkout', { prod: { enabled: true, rolloutPct: 100 } });
    webId = (await service.admin.post('/api/v1/projects', { name: 'Web', slug: 'web' })).body.id;
    await service.admin.post(`/api/v1/projects/${webId}/flags`, { key: 'banner' });
  });
  afterAll(async () => {
    for (const session of sessions) await session.close();
    await service?.stop();
    await server?.remove();
  });

  it('a key limited to project shop works in shop and finds nothing of project web', async () => {
    const { key } = await agentKey({ projects: [service.projectId] });
    const inShop = await connect(key, 'shop');
    expect((await inShop.call('get_flag', { key: 'checkout' })).isError).toBeFalsy();
    // The server checks its project at start: one outside the key's limits is not found, as over the API.
    const inWeb = await runToExit(server.file, [], { FLAGOPS_URL: service.svc.controlUrl, FLAGOPS_AGENT_KEY: key, FLAGOPS_PROJECT: 'web' });
    expect(inWeb.code).not.toBe(0);
    expect(inWeb.stderr).toContain('project "web" (FLAGOPS_PROJECT) not found; the projects this key sees are: shop');
    // Within shop, a flag id of web (what an agent could have learnt elsewhere) is not found either.
    const webFlag = (await service.admin.get('/api/v1/flags/lookup?projectSlug=web&key=banner')).body;
    expect((await httpClient(service.svc.controlUrl, key).get(`/api/v1/flags/${webFlag.id}`)).status).toBe(404);
    const audit = await inShop.call('get_audit_log', {});
    const entries = (audit.structuredContent as { entries: Array<{ projectSlug: string }> }).entries;
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.every((e) => e.projectSlug === 'shop')).toBe(true);
  });

  it('a key limited to dev may kill in dev, and is forbidden in prod with the reason', async () => {
    const { key } = await agentKey({ environments: ['dev'] });
    const mcp = await connect(key, 'shop');
    expect((await mcp.call('kill_flag', { key: 'checkout', env: 'dev' })).isError).toBeFalsy();
    const refused = await mcp.call('kill_flag', { key: 'checkout', env: 'prod' });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ error: { code: 'forbidden' } });
    expect(textOf(refused)).toContain('limited to environment dev may not kill flags in prod');
    const rollout = await mcp.call('set_rollout', { key: 'checkout', env: 'staging', rolloutPct: 10 });
    expect(rollout.structuredContent).toMatchObject({ error: { code: 'forbidden' } });
    // A preview says what the write would: forbidden, even where prod would make the change a proposal.
    await service.admin.patch(`/api/v1/projects/${service.projectId}`, { requireApproval: { prod: ['agent'] } });
    try {
      const preview = await mcp.call('preview_change', { key: 'checkout', env: 'prod', rolloutPct: 5 });
      expect(preview.structuredContent).toMatchObject({ error: { code: 'forbidden' } });
      expect(textOf(preview)).toContain('limited to environment dev may not update environment configs in prod');
      expect(textOf(preview)).not.toContain('proposal');
    } finally {
      await service.admin.patch(`/api/v1/projects/${service.projectId}`, { requireApproval: null });
    }
  });

  it('archive_flag with a key limited to some environments is forbidden, pointing to a human, not to a proposal it cannot open', async () => {
    const { key } = await agentKey({ environments: ['dev', 'staging'] });
    const mcp = await connect(key, 'shop');
    const refused = await mcp.call('archive_flag', { key: 'checkout' });
    expect(refused.structuredContent).toMatchObject({ error: { code: 'forbidden' } });
    const { next } = (refused.structuredContent as { error: { next: string } }).error;
    expect(next).toMatch(/may not archive this flag.*ask a human with an admin key/);
    expect(next).not.toMatch(/proposal|requireApproval/);
  });

  it('a rotated key whose grace is over is refused with the reason', async () => {
    const old = await agentKey({ name: 'mcp-bot' });
    const mcp = await connect(old.key, 'shop');
    expect((await mcp.call('get_flag', { key: 'checkout' })).isError).toBeFalsy();
    await service.admin.post(`/api/v1/keys/${old.id}/rotate`, { graceSeconds: 0 });
    const refused = await mcp.call('get_flag', { key: 'checkout' });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ error: { code: 'unauthorized' } });
    expect(textOf(refused)).toContain(`${old.prefix}… (mcp-bot) was rotated`);
  });
});

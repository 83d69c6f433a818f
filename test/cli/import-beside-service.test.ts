import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { PROMPTLY_MS } from '../helpers/deadlines.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { flagops } from './cli-harness.js';

/** The README tour, then `flagops import` of the sample flags beside the running service. */
describe('flagops import beside a running service', () => {
  let svc: TestService;
  let admin: HttpClient;
  let agent: HttpClient;
  let agentPrefix: string;

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    agent = httpClient(svc.controlUrl, svc.agent);
    const shop = await createProject(admin, 'shop', 'Shop');
    const checkout = await createFlag(admin, shop.id, { key: 'checkout-v2', name: 'Checkout v2' });
    const killed = await agent.post(`/api/v1/flags/${checkout.id}/environments/prod/kill`, { reason: 'error rate above 5%' });
    expect(killed.status).toBe(200);
    agentPrefix = killed.body.environments.prod.killedBy;
  });
  afterAll(() => svc.stop());

  const head = async () => (await svc.service.repos.get('acme')).head();

  async function auditOf(commit: string): Promise<Json[]> {
    const deadline = Date.now() + PROMPTLY_MS;
    for (;;) {
      const entries = (await admin.get('/api/v1/audit?limit=500')).body.entries as Json[];
      const mine = entries.filter((e) => e.id === commit);
      if (mine.length > 0 || Date.now() > deadline) return mine;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async function shopFlag(key: string): Promise<Json> {
    const projects = (await admin.get('/api/v1/projects')).body.projects as Json[];
    const shop = projects.find((p) => p.slug === 'shop')!;
    const flags = (await admin.get(`/api/v1/projects/${shop.id}/flags`)).body.flags as Json[];
    return flags.find((f) => f.key === key)!;
  }

  it('refuses to replace the tour’s project without --replace, and commits nothing', async () => {
    const before = await head();
    const result = await flagops(['import', 'flags', '--org', 'acme', '--data-dir', svc.dataDir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('project shop already exists in organisation acme; pass --replace');
    expect(await head()).toBe(before);
  });

  it('with --replace keeps the agent’s prod kill, and lists every changed flag in the audit trail', async () => {
    const result = await flagops(['import', 'flags', '--org', 'acme', '--data-dir', svc.dataDir, '--replace', '--actor', 'alice']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const commit = /commit ([0-9a-f]{40})/.exec(result.stdout)![1];
    expect(result.stdout).toContain('kept the kills of shop as they were');

    const entries = await auditOf(commit);
    // project.yaml differs from the tour's only in a comment: it is not rewritten, so no `change` entry.
    expect(entries.map((e) => [e.action, e.flagKey, e.environment])).toEqual([
      ['flag_update', 'checkout-v2', null],
      ['config_update', 'checkout-v2', 'dev'],
      ['config_update', 'checkout-v2', 'staging'],
      ['config_update', 'checkout-v2', 'prod'],
      ['flag_create', 'holiday-banner', null],
      ['flag_create', 'max-cart-items', null],
      ['flag_create', 'search-ranking', null],
    ]);
    for (const entry of entries)
      expect(entry).toMatchObject({ projectSlug: 'shop', actor: { type: 'admin', name: 'alice' }, message: 'import shop from flags' });
    expect((await admin.get(`/api/v1/audit?action=clear_kill`)).body.entries).toEqual([]);

    const deadline = Date.now() + PROMPTLY_MS;
    while ((await shopFlag('holiday-banner')) === undefined && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const checkout = await shopFlag('checkout-v2');
    expect(checkout.environments.prod).toMatchObject({ killed: true, killedBy: agentPrefix });
    // The sample's own prod kill (search-ranking) is not applied to a project that exists.
    expect((await shopFlag('search-ranking')).environments.prod.killed).toBe(false);
    const banner = await shopFlag('holiday-banner');
    const bannerTrail = (await admin.get(`/api/v1/audit?flagId=${banner.id}`)).body.entries as Json[];
    expect(bannerTrail.map((e) => [e.id, e.action, e.actor.name])).toEqual([[commit, 'flag_create', 'alice']]);
  });
});

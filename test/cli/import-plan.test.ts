import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { PROMPTLY_MS } from '../helpers/deadlines.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { flagops } from './cli-harness.js';

/**
 * The README's last step: the tour made project shop with banner-text (the flag both getting-started guides
 * read) and set requireApproval; then `flagops import flags/ --replace`, whose directory has neither.
 */
describe('flagops import --replace of a directory that lacks a flag and a setting', () => {
  let svc: TestService;
  let admin: HttpClient;

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    const shop = await createProject(admin, 'shop', 'Shop');
    const checkout = await createFlag(admin, shop.id, { key: 'checkout-v2', name: 'Checkout v2' });
    await createFlag(admin, shop.id, { key: 'banner-text', name: 'Banner text', kind: 'string', defaultValue: 'Welcome' });
    expect((await admin.patch(`/api/v1/projects/${shop.id}`, { requireApproval: { prod: ['agent'] } })).status).toBe(200);
    const agent = httpClient(svc.controlUrl, svc.agent);
    expect((await agent.post(`/api/v1/flags/${checkout.id}/environments/prod/kill`, { reason: 'error rate above 5%' })).status).toBe(200);
  });
  afterAll(() => svc.stop());

  const head = async () => (await svc.service.repos.get('acme')).head();
  const importFlags = (...extra: string[]) =>
    flagops(['import', 'flags', '--org', 'acme', '--data-dir', svc.dataDir, '--replace', '--actor', 'alice', ...extra]);

  async function shop(): Promise<Json> {
    const projects = (await admin.get('/api/v1/projects')).body.projects as Json[];
    return projects.find((p) => p.slug === 'shop');
  }

  async function shopFlagKeys(): Promise<string[]> {
    const flags = (await admin.get(`/api/v1/projects/${(await shop()).id}/flags`)).body.flags as Json[];
    return flags.map((f) => f.key).sort();
  }

  it('without --yes prints the plan, names the deletion and the setting, exits 3 and commits nothing', async () => {
    const before = await head();
    const result = await importFlags();
    expect(result.code).toBe(3);
    expect(result.stdout).toContain('project shop: replaced by the one in flags (its kills are kept: checkout-v2 in prod)\n');
    expect(result.stdout).toContain('  needs --yes:\n');
    expect(result.stdout).toContain('    delete flag banner-text\n');
    expect(result.stdout).toContain('    change setting requireApproval: prod needs approval for agent → no approval required\n');
    expect(result.stdout).toContain('    shop/holiday-banner: flag added (json)\n');
    expect(result.stderr).toBe(
      'flagops import: this import needs --yes: it would change setting requireApproval of shop and delete flag shop/banner-text; ' +
        're-run with --yes to apply it, or with --dry-run to only see the plan; nothing was imported\n',
    );
    expect(await head()).toBe(before);
    expect(await shopFlagKeys()).toEqual(['banner-text', 'checkout-v2']);
  });

  it('with --dry-run prints the same plan, exits 0 and commits nothing', async () => {
    const before = await head();
    const refused = await importFlags();
    const result = await importFlags('--dry-run');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(`${refused.stdout}dry run: nothing was imported; without --dry-run this import needs --yes\n`);
    expect(await head()).toBe(before);
  });

  it('with --yes applies the plan in one commit, keeps the kill, and the audit trail lists the deletion and the setting', async () => {
    const result = await importFlags('--yes');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('    delete flag banner-text\n');
    const commit = /imported 1 project\(s\), 4 flag\(s\) into acme: commit ([0-9a-f]{40})/.exec(result.stdout)![1];
    expect(await head()).toBe(commit);
    expect(await shopFlagKeys()).toEqual(['checkout-v2', 'holiday-banner', 'max-cart-items', 'search-ranking']);
    expect((await shop()).requireApproval).toBeUndefined();

    const deadline = Date.now() + PROMPTLY_MS;
    let entries: Json[] = [];
    while (entries.length === 0 && Date.now() < deadline) {
      entries = ((await admin.get('/api/v1/audit?limit=100')).body.entries as Json[]).filter((e) => e.id === commit);
      if (entries.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const actions = entries.map((e) => [e.action, e.flagKey]);
    expect(actions).toContainEqual(['change', null]);
    expect(actions).toContainEqual(['flag_delete', 'banner-text']);
    for (const entry of entries)
      expect(entry).toMatchObject({ actor: { type: 'admin', name: 'alice' }, message: 'import shop from flags' });
    const flags = (await admin.get(`/api/v1/projects/${(await shop()).id}/flags`)).body.flags as Json[];
    expect(flags.find((f) => f.key === 'checkout-v2').environments.prod).toMatchObject({ killed: true });
  });
});

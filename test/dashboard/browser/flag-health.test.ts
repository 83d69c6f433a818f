import { appendFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_MISSING, launchChromium } from '../../helpers/browser.js';
import { pushEdit } from '../../helpers/git-cli.js';
import { httpClient } from '../../helpers/http-client.js';
import { startTestService, type TestService } from '../../helpers/start-test-service.js';
import { ManualClock } from '../../schedule/manual-clock.js';
import { addUser } from '../helpers/dashboard-session.js';
import { signedInPage } from '../helpers/signed-in-page.js';

const DAY = 86_400_000;

/** Flag health in the dashboard: flags made 40 days ago (the service's clock), looked at today. */
describe.skipIf(CHROMIUM_MISSING !== null)('flag health in the dashboard, in Chromium', () => {
  const clock = new ManualClock(Date.now() - 40 * DAY);
  let svc: TestService;
  let browser: Browser;
  let page: Page;
  let projectId: string;
  const ids: Record<string, string> = {};
  const leaks: string[] = [];
  const admin = () => httpClient(svc.controlUrl, svc.admin);
  const rows = () => page.locator('tr.flag-row');
  const keysShown = async () => await rows().evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-flag')));

  beforeAll(async () => {
    svc = await startTestService({ clock });
    await addUser(svc, 'alice', 'Alice Martin');
    projectId = (await admin().post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body.id;
    for (const key of ['shipped', 'halfway', 'ops-tool'])
      ids[key] = (await admin().post(`/api/v1/projects/${projectId}/flags`, { key })).body.id;
    for (const env of ['dev', 'staging', 'prod'])
      await admin().put(`/api/v1/flags/${ids.shipped}/environments/${env}/config`, { enabled: true, rolloutPct: 100 });
    await admin().put(`/api/v1/flags/${ids.halfway}/environments/prod/config`, { enabled: true, rolloutPct: 50 });
    clock.advance(40 * DAY);
    pushEdit(svc.gitdir(), (checkout) =>
      appendFileSync(path.join(checkout, 'projects/shop/flags/ops-tool.yaml'), 'lifecycle:\n  type: operational\n  owner: team-ops\n'),
    );
    browser = await launchChromium();
    page = await signedInPage(browser, svc, 'alice', leaks);
    await page.goto(`${svc.controlUrl}/#/projects/${encodeURIComponent(projectId)}`);
    await page.getByRole('heading', { name: 'Shop — flags' }).waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it("shows each flag's status in the list, its reasons as the tag's title", async () => {
    const status = (key: string) => page.locator(`tr[data-flag="${key}"] .status-cell .tag`);
    await expect.poll(() => status('shipped').textContent()).toBe('stale');
    expect(await status('halfway').textContent()).toBe('potentially stale');
    expect(await status('shipped').getAttribute('title')).toContain('rolled out: every environment has served true to everyone since');
    expect(await status('halfway').getAttribute('title')).toContain('no evaluations');
  });

  it('sorts by status, stale first, and back by key', async () => {
    expect(await keysShown()).toEqual(['halfway', 'ops-tool', 'shipped']);
    await page.getByRole('button', { name: 'Sort by status' }).click();
    await expect.poll(keysShown).toEqual(['shipped', 'halfway', 'ops-tool']);
    await page.getByRole('button', { name: 'Sort by status' }).click();
    await expect.poll(keysShown).toEqual(['halfway', 'ops-tool', 'shipped']);
  });

  it('filters by status, type and owner', async () => {
    await page.getByLabel('Filter by status').selectOption('stale');
    await expect.poll(keysShown).toEqual(['shipped']);
    await page.getByLabel('Filter by status').selectOption('');
    await page.getByLabel('Filter by type').selectOption('operational');
    await expect.poll(keysShown).toEqual(['ops-tool']);
    await page.getByLabel('Filter by type').selectOption('');
    await page.getByLabel('Filter by owner').fill('team-o');
    await expect.poll(keysShown).toEqual(['ops-tool']);
    await page.getByLabel('Filter by owner').fill('');
    await expect.poll(keysShown).toEqual(['halfway', 'ops-tool', 'shipped']);
  });

  it('shows the status and its reasons in words on the flag page', async () => {
    await page.goto(`${svc.controlUrl}/#/flags/${encodeURIComponent(ids.shipped)}/prod`);
    const panel = page.locator('.health-panel');
    await expect.poll(() => panel.locator('strong').textContent()).toBe('Health: stale');
    expect(await panel.locator('li[data-code="rolled_out"]').textContent()).toMatch(
      /^rolled out: every environment has served true to everyone since \d{4}-\d\d-\d\d$/,
    );
    expect(leaks).toEqual([]);
  });
});

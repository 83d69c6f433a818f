import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../../control-plane/fixtures.js';
import { CHROMIUM_MISSING, launchChromium } from '../../helpers/browser.js';
import { type HttpClient, httpClient, type Json } from '../../helpers/http-client.js';
import { startTestService, type TestService } from '../../helpers/start-test-service.js';
import { addUser } from '../helpers/dashboard-session.js';
import { signedInPage } from '../helpers/signed-in-page.js';

/** Variants, prerequisites and segments in the dashboard, in a real browser. */
describe.skipIf(CHROMIUM_MISSING !== null)('variants, prerequisites and segments in the dashboard (Chromium)', () => {
  let svc: TestService;
  let api: HttpClient;
  let browser: Browser;
  let page: Page;
  const leaks: string[] = [];
  let project: Json;
  let flag: Json;
  let base: Json;

  const flagNow = async (): Promise<Json> => (await api.get(`/api/v1/flags/${flag.id}`)).body;

  beforeAll(async () => {
    svc = await startTestService();
    api = httpClient(svc.controlUrl, svc.admin);
    project = await createProject(api, 'shop');
    base = await createFlag(api, project.id, { key: 'payments' });
    flag = await createFlag(api, project.id, { key: 'checkout-v2', kind: 'string' });
    await addUser(svc, 'alice', 'Alice Martin');
    browser = await launchChromium();
    page = await signedInPage(browser, svc, 'alice', leaks);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('edits variants: the bar shows the split, the total must be 100, and Save sends them', async () => {
    await page.goto(`${svc.controlUrl}/#/flags/${flag.id}/prod`);
    const panel = page.locator('section.targeting');
    await panel.waitFor();
    await panel.getByRole('button', { name: 'Add variant' }).click();
    await panel.getByRole('button', { name: 'Add variant' }).click();
    await panel.getByLabel('Variant 1 name').fill('blue');
    await panel.getByLabel('Variant 1 value').fill('b');
    await panel.getByLabel('Variant 1 weight').fill('60');
    await panel.getByLabel('Variant 2 name').fill('green');
    await panel.getByLabel('Variant 2 value').fill('g');
    await panel.getByLabel('Variant 2 weight').fill('30');
    await expect.poll(() => panel.locator('.weight-total').textContent()).toBe('Total 90%');
    await expect.poll(() => panel.locator('[data-messages="variants"]').textContent()).toContain('they must add up to exactly 100');
    expect(await panel.locator('[data-action="save-targeting"]').isDisabled()).toBe(true);

    await panel.getByLabel('Variant 2 weight').fill('40');
    await expect.poll(() => panel.locator('.weight-total').textContent()).toBe('Total 100%');
    const widths = await panel.locator('.weight-segment').evaluateAll((els) => els.map((e) => (e as HTMLElement).style.width));
    expect(widths).toEqual(['60%', '40%']);
    await panel.locator('[data-action="save-targeting"]').click();
    await expect
      .poll(async () => (await flagNow()).environments.prod.variants)
      .toEqual([
        { name: 'blue', value: 'b', weight: 60 },
        { name: 'green', value: 'g', weight: 40 },
      ]);
    await expect.poll(() => panel.locator('.targeting-status').textContent()).toBe('Saved.');
  });

  it('adds a prerequisite on the flag page', async () => {
    const panel = page.locator('section.targeting');
    await panel.getByRole('button', { name: 'Add prerequisite' }).click();
    await panel.getByLabel('Prerequisite 1 flag').selectOption(base.key);
    await panel.getByLabel('Prerequisite 1 variation').selectOption('on');
    await panel.locator('[data-action="save-targeting"]').click();
    await expect.poll(async () => (await flagNow()).environments.prod.prerequisites).toEqual([{ flag: 'payments', variation: 'on' }]);
  });

  it('lists segments with where they are used, and edits user ids and conditions', async () => {
    await page.goto(`${svc.controlUrl}/#/projects/${project.id}`);
    await page.getByRole('link', { name: 'Segments' }).click();
    await page.getByLabel('Key').fill('beta-testers');
    await page.getByRole('button', { name: 'Create segment' }).click();
    await page.locator('form.segment-form').waitFor();
    await page.getByLabel('User ids (at most 10,000)').fill('ana\nbo\nchen');
    await page.getByLabel('Conditions (JSON; all must hold)').fill('[{ "attribute": "plan", "op": "eq", "value": "beta" }]');
    await page.getByRole('button', { name: 'Save segment' }).click();
    await expect.poll(() => page.locator('.save-status').textContent(), { timeout: 10_000 }).toBe('Saved.');
    const saved = (await api.get(`/api/v1/projects/${project.id}/segments/beta-testers`)).body;
    expect(saved).toMatchObject({
      userIds: ['ana', 'bo', 'chen'],
      conditions: [{ attribute: 'plan', op: 'eq', value: 'beta' }],
      version: 2,
    });

    await api.put(`/api/v1/flags/${flag.id}/environments/prod/config`, {
      rules: [{ id: 'beta', serve: 'green', conditions: [{ op: 'in_segment', value: 'beta-testers' }] }],
    });
    await page.goto(`${svc.controlUrl}/#/projects/${project.id}/segments`);
    const row = page.locator('tr[data-segment="beta-testers"]');
    await expect.poll(() => row.locator('.used-by').textContent(), { timeout: 10_000 }).toBe('checkout-v2');
    expect(await row.textContent()).toContain('3 user ids, 1 condition');
    expect(leaks).toEqual([]);
  }, 60_000); // three page loads and two saves in Chromium: slow when the whole suite shares two cores
});

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../../control-plane/fixtures.js';
import { CHROMIUM_MISSING, launchChromium } from '../../helpers/browser.js';
import { httpClient, type Json } from '../../helpers/http-client.js';
import { startTestService, type TestService } from '../../helpers/start-test-service.js';
import { signedInPage } from '../helpers/signed-in-page.js';

/** The dashboard offers each role only the controls it may use (the API refuses the rest anyway). */
describe.skipIf(CHROMIUM_MISSING !== null)('the dashboard by role, in Chromium', () => {
  let svc: TestService;
  let browser: Browser;
  const leaks: string[] = [];
  let shop: Json;
  let web: Json;
  let flag: Json;
  let webFlag: Json;

  beforeAll(async () => {
    svc = await startTestService();
    const admin = httpClient(svc.controlUrl, svc.admin);
    shop = await createProject(admin, 'shop');
    web = await createProject(admin, 'web');
    flag = await createFlag(admin, shop.id, { key: 'checkout' });
    webFlag = await createFlag(admin, web.id, { key: 'banner' });
    expect((await admin.put(`/api/v1/projects/${shop.id}/segments/beta`, { userIds: ['u-1'] })).status).toBe(201);
    // A proposal waiting for a review: an agent's change into prod, which the project has reviewed.
    await admin.patch(`/api/v1/projects/${shop.id}`, { requireApproval: { prod: ['agent'] } });
    const proposed = await httpClient(svc.controlUrl, svc.agent).put(`/api/v1/flags/${flag.id}/environments/prod/config`, {
      rolloutPct: 5,
    });
    expect(proposed.status).toBe(202);
    for (const [username, role] of [
      ['vera', 'viewer'],
      ['eddie', 'editor'],
      ['shelly', 'editor@shop'],
      ['ada', undefined],
    ] as const) {
      const res = await admin.post('/api/v1/users', {
        username,
        name: username,
        password: `${username}-password-1`,
        ...(role ? { role } : {}),
      });
      if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    }
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  /** The visible buttons of the page that would change something. */
  const changingButtons = async (page: Page) =>
    (await page.locator('main button:visible').allTextContents()).filter((text) =>
      /save|add|remove|create|delete|approve|reject|schedule|kill|promote|archive/i.test(text),
    );

  const openFlag = async (page: Page, id: string, env: string) => {
    await page.goto(`${svc.controlUrl}/#/flags/${id}/${env}`);
    await page.getByRole('heading', { name: `Config in ${env}` }).waitFor();
  };

  it('a viewer sees projects and configs, and no control that changes anything', async () => {
    const page = await signedInPage(browser, svc, 'vera', leaks);
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    expect(await page.getByRole('button', { name: 'Create project' }).count()).toBe(0);
    await openFlag(page, flag.id, 'prod');
    expect(await page.locator('[data-action="kill"]').count()).toBe(0);
    expect(await page.locator('[data-action="save"]').count()).toBe(0);
    expect(await page.locator('[data-action="promote"]').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Archive…' }).count()).toBe(0);
    expect(await page.locator('[data-slot="read-only"]').first().textContent()).toContain('Your role (viewer) may not change configs.');
    // Nor do the rules, variants, prerequisites and schedules offer a button that would change them.
    await expect.poll(() => page.locator('fieldset.read-only').count()).toBe(3);
    expect(await changingButtons(page)).toEqual([]);
    await page.goto(`${svc.controlUrl}/#/projects/${shop.id}/segments`);
    await page.getByRole('heading', { name: 'Segments' }).waitFor({ timeout: 5000 });
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
    expect(await changingButtons(page)).toEqual([]);
    await page.goto(`${svc.controlUrl}/#/projects/${shop.id}/segments/beta`);
    await page.getByRole('textbox', { name: 'Name' }).waitFor({ timeout: 5000 });
    expect(await changingButtons(page)).toEqual([]);
    await page.goto(`${svc.controlUrl}/#/proposals`);
    await expect.poll(() => page.locator('.proposal-card').count()).toBe(1);
    expect(await changingButtons(page)).toEqual([]);
  });

  it('an editor is not offered to decide proposals', async () => {
    const page = await signedInPage(browser, svc, 'eddie', leaks);
    await page.goto(`${svc.controlUrl}/#/proposals`);
    await expect.poll(() => page.locator('.proposal-card').count()).toBe(1);
    expect(await changingButtons(page)).toEqual([]);
  });

  it('an editor may kill and edit, promote into staging but not into prod, and not archive', async () => {
    const page = await signedInPage(browser, svc, 'eddie', leaks);
    await openFlag(page, flag.id, 'prod');
    expect(await page.locator('[data-action="kill"]').count()).toBe(1);
    expect(await page.locator('[data-action="save"]').count()).toBe(1);
    expect(await page.locator('[data-action="promote"]').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Archive…' }).count()).toBe(0);
    await openFlag(page, flag.id, 'staging');
    expect(await page.locator('[data-action="promote"]').count()).toBe(1);
  });

  it('an editor limited to shop sees only shop: the other project is not found', async () => {
    const page = await signedInPage(browser, svc, 'shelly', leaks);
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    await expect.poll(() => page.locator('tbody tr').allTextContents()).toEqual([expect.stringContaining('shop')]);
    await page.goto(`${svc.controlUrl}/#/flags/${webFlag.id}/dev`);
    await expect.poll(() => page.locator('main').textContent()).toMatch(/not found/i);
    // Nor is it offered to create a flag in the project it cannot see.
    await page.goto(`${svc.controlUrl}/#/projects/${web.id}`);
    await expect.poll(() => page.locator('main').textContent()).toMatch(/not found/i);
    expect(await changingButtons(page)).toEqual([]);
  });

  it('an admin session keeps every control', async () => {
    const page = await signedInPage(browser, svc, 'ada', leaks);
    await page.getByRole('button', { name: 'Create project' }).waitFor();
    await openFlag(page, flag.id, 'prod');
    expect(await page.locator('[data-action="kill"]').count()).toBe(1);
    expect(await page.locator('[data-action="promote"]').count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Archive…' }).count()).toBe(1);
    expect(leaks).toEqual([]);
  });
});

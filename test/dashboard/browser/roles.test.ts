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
    expect(await page.locator('[data-slot="read-only"]').textContent()).toContain('Your role (viewer) may not change configs.');
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

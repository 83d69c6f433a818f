import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../../control-plane/fixtures.js';
import { CHROMIUM_MISSING, launchChromium } from '../../helpers/browser.js';
import { type HttpClient, httpClient, type Json } from '../../helpers/http-client.js';
import { startTestService, type TestService } from '../../helpers/start-test-service.js';
import { signedInPage } from '../helpers/signed-in-page.js';

/** A flag's type, owner and expiry: set when it is created, shown on its page, changed and removed there. */
describe.skipIf(CHROMIUM_MISSING !== null)('flag lifecycle in the dashboard, in Chromium', () => {
  let svc: TestService;
  let admin: HttpClient;
  let browser: Browser;
  let page: Page;
  let shop: Json;
  const leaks: string[] = [];

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    shop = await createProject(admin, 'shop');
    for (const [username, role] of [
      ['eddie', 'editor'],
      ['vera', 'viewer'],
    ] as const) {
      const res = await admin.post('/api/v1/users', { username, name: username, password: `${username}-password-1`, role });
      if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    }
    browser = await launchChromium();
    page = await signedInPage(browser, svc, 'eddie', leaks);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  const flagNow = async (key: string) => (await admin.get(`/api/v1/flags/lookup?projectSlug=shop&key=${key}`)).body;
  const summary = () => page.locator('[data-slot="lifecycle-summary"]').textContent();

  it('an editor creates a flag with a type, an owner and an expiry, and its page shows them', async () => {
    await page.goto(`${svc.controlUrl}/#/projects/${shop.id}`);
    const form = page.getByRole('form', { name: 'Create a flag' });
    await form.getByLabel('Key').fill('checkout-v2');
    await form.getByLabel('Type').selectOption('experiment');
    await form.getByLabel('Owner').fill('team-checkout');
    await form.getByLabel('Expires').fill('2027-03-31');
    await form.getByRole('button', { name: 'Create flag' }).click();
    await page.getByRole('heading', { name: 'Config in dev' }).waitFor();
    expect((await flagNow('checkout-v2')).lifecycle).toEqual({ type: 'experiment', owner: 'team-checkout', expiresAt: '2027-03-31' });
    await expect.poll(summary).toBe('experiment flag · owner team-checkout · expires 2027-03-31');
  });

  it('changes the type and owner and clears the expiry, sending only those', async () => {
    // The lifecycle is one line; the form opens from it.
    const form = page.getByRole('form', { name: 'Lifecycle' });
    expect(await form.isVisible()).toBe(false);
    await page.locator('[data-testid="lifecycle"] summary').click();
    expect(await form.getByLabel('Type').inputValue()).toBe('experiment');
    await form.getByLabel('Type').selectOption('release');
    await form.getByLabel('Owner').fill('team-growth');
    await form.getByLabel('Expires').fill('');
    await form.getByRole('button', { name: 'Save lifecycle' }).click();
    await expect.poll(summary).toBe('release flag · owner team-growth · no expiry');
    expect((await flagNow('checkout-v2')).lifecycle).toEqual({ type: 'release', owner: 'team-growth' });
  });

  it('shows what the server refuses, and changes nothing', async () => {
    const form = page.getByRole('form', { name: 'Lifecycle' });
    await form.getByLabel('Expires').fill('next spring');
    await form.getByRole('button', { name: 'Save lifecycle' }).click();
    await expect.poll(() => form.locator('.form-error').textContent()).toContain('lifecycle.expiresAt: must be an ISO 8601 date');
    expect((await flagNow('checkout-v2')).lifecycle).toEqual({ type: 'release', owner: 'team-growth' });
  });

  it('removes the lifecycle, and sets one again on a flag without it', async () => {
    const form = page.getByRole('form', { name: 'Lifecycle' });
    await form.getByRole('button', { name: 'Remove lifecycle' }).click();
    await expect.poll(summary).toBe('No lifecycle set: type, owner and expiry unknown.');
    expect(await flagNow('checkout-v2')).not.toHaveProperty('lifecycle');
    expect(await form.getByRole('button', { name: 'Remove lifecycle' }).isVisible()).toBe(false);
    await form.getByLabel('Type').selectOption('kill-switch');
    await form.getByRole('button', { name: 'Save lifecycle' }).click();
    await expect.poll(summary).toBe('kill-switch flag · no owner · no expiry');
    expect((await flagNow('checkout-v2')).lifecycle).toEqual({ type: 'kill-switch' });
  });

  it('shows a change made elsewhere at once', async () => {
    const flag = await flagNow('checkout-v2');
    await admin.patch(`/api/v1/flags/${flag.id}`, { lifecycle: { owner: 'sre' } });
    await expect.poll(summary).toBe('kill-switch flag · owner sre · no expiry');
    expect(await page.getByRole('form', { name: 'Lifecycle' }).getByLabel('Owner').inputValue()).toBe('sre');
  });

  it('a viewer sees the lifecycle and no form to change it', async () => {
    const flag = await createFlag(admin, shop.id, { key: 'banner', lifecycle: { type: 'operational', owner: 'team-web' } });
    const viewer = await signedInPage(browser, svc, 'vera', leaks);
    await viewer.goto(`${svc.controlUrl}/#/flags/${flag.id}/prod`);
    await expect
      .poll(() => viewer.locator('[data-slot="lifecycle-summary"]').textContent())
      .toBe('operational flag · owner team-web · no expiry');
    expect(await viewer.getByRole('form', { name: 'Lifecycle' }).count()).toBe(0);
    expect(await viewer.getByRole('form', { name: 'Create a flag' }).count()).toBe(0);
  });

  it('leaks nothing to other origins', () => {
    expect(leaks).toEqual([]);
  });
});

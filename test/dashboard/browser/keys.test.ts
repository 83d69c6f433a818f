import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../../control-plane/fixtures.js';
import { CHROMIUM_MISSING, launchChromium } from '../../helpers/browser.js';
import { httpClient, type Json } from '../../helpers/http-client.js';
import { startTestService, type TestService } from '../../helpers/start-test-service.js';
import { signedInPage } from '../helpers/signed-in-page.js';

/**
 * The Keys page in Chromium (docs/dashboard.md, "Keys"): a session cannot manage keys, so the page works with an
 * admin key pasted into it, held in the tab's memory only. The SDK key rotation workflow, checked where it
 * matters: on the evaluation API, both keys answer during the grace.
 */
describe.skipIf(CHROMIUM_MISSING !== null)('the Keys page in Chromium', () => {
  let svc: TestService;
  let browser: Browser;
  let shop: Json;
  const leaks: string[] = [];

  const admin = () => httpClient(svc.controlUrl, svc.admin);
  /** Evaluates the shop's `checkout` flag in prod with an SDK key: the status, and the value when 200. */
  const evaluate = async (sdkKey: string) => {
    const res = await fetch(`${svc.evalUrl}/v1/evaluate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sdkKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'checkout', context: { userId: 'u1' } }),
    });
    const body = (await res.json()) as Json;
    return { status: res.status, value: body.checkout?.value };
  };
  const openKeys = async (page: Page) => {
    await page.getByRole('navigation').getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('heading', { name: 'Keys', exact: true }).waitFor();
  };
  const paste = async (page: Page, key: string) => {
    await page.getByLabel('Admin key').fill(key);
    await page.getByRole('button', { name: 'Use this key' }).click();
  };

  beforeAll(async () => {
    svc = await startTestService();
    shop = await createProject(admin(), 'shop', 'Shop');
    const flag = await createFlag(admin(), shop.id, { key: 'checkout' });
    await admin().put(`/api/v1/flags/${flag.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 });
    for (const [username, role] of [
      ['ada', 'admin'],
      ['vera', 'viewer'],
    ] as const) {
      const res = await admin().post('/api/v1/users', { username, name: username, password: `${username}-password-1`, role });
      if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    }
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('explains why a session cannot manage keys, shows the curl workflow for this control plane, and offers no control', async () => {
    const page = await signedInPage(browser, svc, 'vera', leaks);
    await openKeys(page);
    const why = await page.getByTestId('keys-why').textContent();
    expect(why).toContain('session may not create, rotate or revoke keys');
    expect(why).toContain('Your session (viewer) is no exception');
    const steps = page.getByTestId('key-steps');
    expect(await steps.textContent()).toContain(`curl -s -X POST ${svc.controlUrl}/api/v1/keys/$SDK_KEY_ID/rotate`);
    expect(await steps.locator('pre').count()).toBe(4);
    expect(await page.getByRole('button', { name: 'Create SDK key' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Rotate…' }).count()).toBe(0);
  });

  it("refuses an agent key with the API's 403 in words, and an SDK key with its 401, and still offers no control", async () => {
    const page = await signedInPage(browser, svc, 'vera', leaks);
    await openKeys(page);
    await paste(page, svc.agent);
    const refusal = page.getByTestId('key-refusal');
    await expect.poll(() => refusal.textContent()).toMatch(/^This key may not manage keys \(403 forbidden: .+\)\. Paste an admin key/);
    expect(await page.getByLabel('Admin key').inputValue()).toBe('');
    expect(await page.getByRole('button', { name: 'Create SDK key' }).count()).toBe(0);
    expect(await page.getByTestId('keys-table').count()).toBe(0);

    const sdk = (await admin().post('/api/v1/keys', { kind: 'sdk', projectId: shop.id, environment: 'dev' })).body.key as string;
    await paste(page, sdk);
    await expect.poll(() => refusal.textContent()).toMatch(/^This key was refused \(401 unauthorized: .+\)\. Paste a valid admin key/);
    expect(await page.getByTestId('keys-table').count()).toBe(0);
  });

  it('with an admin key: creates an SDK key, rotates it with a grace in which both keys evaluate, and revokes the old one', async () => {
    const page = await signedInPage(browser, svc, 'ada', leaks);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.controlUrl });
    const withAuthorization: Request[] = [];
    page.on('request', (request) => {
      if (request.headers().authorization) withAuthorization.push(request);
    });
    await openKeys(page);
    await paste(page, svc.admin);
    await expect.poll(() => page.getByTestId('key-held').textContent()).toContain(`Using the admin key ${svc.admin.slice(0, 16)}…`);
    expect(await page.getByTestId('keys-table').textContent()).toContain('bootstrap');
    expect(await page.getByTestId('key-steps').count()).toBe(0);

    // Create: the secret once, with a copy button.
    await page.getByLabel('Project').selectOption({ label: 'Shop (shop)' });
    await page.getByLabel('Environment').selectOption('prod');
    await page.getByLabel('Name (optional)').fill('web shop');
    await page.getByRole('button', { name: 'Create SDK key' }).click();
    const secret = page.getByTestId('new-key');
    await expect.poll(() => secret.textContent()).toMatch(/^svc_sdk_[0-9A-Za-z]{32}$/);
    const oldKey = (await secret.textContent())!;
    await page.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(oldKey);
    expect(await evaluate(oldKey)).toEqual({ status: 200, value: true });
    const row = page.locator(`tr[data-prefix="${oldKey.slice(0, 16)}"]`);
    expect(await row.textContent()).toContain('shop / prod');

    // Rotate with an hour of grace: the page says both keys are valid until when.
    await row.getByRole('button', { name: 'Rotate…' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.getByLabel('Grace period').inputValue()).toBe('86400');
    await dialog.getByLabel('Grace period').selectOption({ label: '1 hour' });
    const rotatedAfter = Date.now();
    await dialog.getByRole('button', { name: 'Rotate' }).click();
    await expect.poll(() => secret.textContent()).not.toBe(oldKey);
    const newKey = (await secret.textContent())!;
    expect(newKey).toMatch(/^svc_sdk_[0-9A-Za-z]{32}$/);
    expect(await page.getByTestId('key-next').textContent()).toMatch(
      /^Both keys are valid until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+; deploy the new key, then the old one stops\.$/,
    );
    expect(await row.locator('[data-slot="status"]').textContent()).toContain(`still valid until`);
    expect(await row.locator('[data-slot="status"]').textContent()).toContain(`replaced by ${newKey.slice(0, 16)}…`);
    const listed = (await admin().get('/api/v1/keys')).body.keys as Json[];
    const old = listed.find((k) => k.prefix === oldKey.slice(0, 16));
    const graceEnds = Date.parse(old.graceEndsAt);
    expect(graceEnds).toBeGreaterThanOrEqual(rotatedAfter + 3600_000 - 1000);
    expect(graceEnds).toBeLessThanOrEqual(Date.now() + 3600_000);
    expect(listed.find((k) => k.prefix === newKey.slice(0, 16))).toMatchObject({
      name: 'web shop',
      projectId: shop.id,
      environment: 'prod',
    });

    // During the grace, the evaluation API answers both.
    expect(await evaluate(oldKey)).toEqual({ status: 200, value: true });
    expect(await evaluate(newKey)).toEqual({ status: 200, value: true });

    // Deployed: end the old key now.
    await row.getByRole('button', { name: 'Revoke…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => page.getByTestId('key-outcome').textContent()).toContain('it gets 401 from now on');
    expect((await evaluate(oldKey)).status).toBe(401);
    expect(await evaluate(newKey)).toEqual({ status: 200, value: true });
    expect(await page.getByTestId('key-failure').textContent()).toBe('');

    // The admin key went only to this control plane's /api/v1, as a bearer token without the session cookie,
    // and was stored nowhere.
    expect(withAuthorization.length).toBeGreaterThan(0);
    for (const request of withAuthorization) {
      expect(request.url().startsWith(`${svc.controlUrl}/api/v1/`), request.url()).toBe(true);
      const headers = await request.allHeaders();
      expect(headers.authorization).toBe(`Bearer ${svc.admin}`);
      expect(headers.cookie).toBeUndefined();
    }
    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }) + document.cookie);
    expect(stored).not.toContain(svc.admin);
    expect(JSON.stringify(await page.context().cookies())).not.toContain(svc.admin);

    // A reload forgets it.
    await page.reload();
    await page.getByLabel('Admin key').waitFor();
    expect(await page.getByTestId('key-held').count()).toBe(0);
    expect(leaks).toEqual([]);
  });

  it('rotating the admin key it holds carries on with the replacement; a key revoked behind its back is forgotten, saying so', async () => {
    const mine = (await admin().post('/api/v1/keys', { kind: 'admin', name: 'page admin' })).body;
    const page = await signedInPage(browser, svc, 'ada', leaks);
    await openKeys(page);
    await paste(page, mine.key);
    const row = page.locator(`tr[data-prefix="${mine.prefix}"]`);
    await row.getByRole('button', { name: 'Rotate…' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.getByLabel('Grace period').inputValue()).toBe('0');
    await dialog.getByRole('button', { name: 'Rotate' }).click();
    await expect
      .poll(() => page.getByTestId('key-next').textContent())
      .toBe('The old key stopped working at once: only the new key is valid. Deploy it now.');
    const replacement = (await page.getByTestId('new-key').textContent())!;
    expect(await page.getByTestId('key-held').textContent()).toContain(`Using the admin key ${replacement.slice(0, 16)}…`);
    expect((await httpClient(svc.controlUrl, mine.key).get('/api/v1/keys')).status).toBe(401);
    expect(await page.getByTestId('key-failure').textContent()).toBe('');

    const replacementId = ((await admin().get('/api/v1/keys')).body.keys as Json[]).find((k) => k.prefix === replacement.slice(0, 16)).id;
    expect((await admin().delete(`/api/v1/keys/${replacementId}`)).status).toBe(200);
    await page.getByRole('button', { name: 'Create SDK key' }).click();
    await expect
      .poll(() => page.getByTestId('key-refusal').textContent())
      .toBe(
        `The admin key ${replacement.slice(0, 16)}… stopped working (401 unauthorized: a valid credential is required); it was revoked, rotated or expired since it was pasted. Paste another one to go on.`,
      );
    expect(await page.getByTestId('key-held').count()).toBe(0);
    expect(await page.getByTestId('key-steps').count()).toBe(1);
  });
});

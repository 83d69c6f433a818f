import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOidcSettings } from '../../../src/foundations/config/oidc-settings.js';
import { artifactPath, CHROMIUM_MISSING, launchChromium, loopbackContext } from '../../helpers/browser.js';
import { httpClient } from '../../helpers/http-client.js';
import { startTestProvider, type TestProvider } from '../../helpers/oidc-provider.mjs';
import { startTestService, type TestService } from '../../helpers/start-test-service.js';
import { addUser } from '../helpers/dashboard-session.js';

/** Single sign-on in Chromium: the dashboard's button, the provider's own login form, the way back, sign-out. */
describe.skipIf(CHROMIUM_MISSING !== null)('single sign-on in Chromium', () => {
  let provider: TestProvider;
  let svc: TestService;
  let browser: Browser;
  const leaks: string[] = [];

  async function freshPage(): Promise<Page> {
    return (await loopbackContext(browser, leaks)).newPage();
  }

  /** On the provider's login form: types the person's login and password there. */
  async function loginAtProvider(page: Page, login: string, password: string): Promise<void> {
    await page.getByLabel('Email or username').fill(login);
    await page.getByLabel('Provider password').fill(password);
    await page.getByRole('button', { name: 'Continue' }).click();
  }

  beforeAll(async () => {
    provider = await startTestProvider({
      people: [
        { id: 'u-alice', login: 'alice', password: 'alice-at-provider', email: 'alice@example.com', groups: ['flag-admins'] },
        { id: 'u-uma', login: 'uma', password: 'uma-at-provider', email: 'uma@example.com', groups: ['marketing'] },
      ],
    });
    svc = await startTestService({
      oidc: parseOidcSettings({
        FLAGOPS_OIDC_ISSUER: provider.issuer,
        FLAGOPS_OIDC_CLIENT_ID: provider.clientId,
        FLAGOPS_OIDC_CLIENT_SECRET: provider.clientSecret,
        FLAGOPS_OIDC_ROLES: 'flag-admins=admin;support=viewer',
      }),
    });
    await provider.registerRedirectUri(`${svc.controlUrl}/auth/oidc/callback`);
    await addUser(svc, 'bob', 'Bob Stone');
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
    await provider?.stop();
  });

  it('signs in through the provider’s login form and comes back signed in, on the page it left', async () => {
    const page = await freshPage();
    await page.goto(`${svc.controlUrl}/#/audit`);
    // Both ways are offered: the password form, and the provider.
    await page.getByLabel('Username').waitFor();
    const sso = page.getByRole('link', { name: `Sign in with ${new URL(provider.issuer).host}` });
    await sso.waitFor();
    await page.screenshot({ path: await artifactPath('sso-sign-in.png') });
    await sso.click();
    await page.getByLabel('Provider password').waitFor();
    expect(new URL(page.url()).origin).toBe(provider.issuer);
    await loginAtProvider(page, 'alice', 'alice-at-provider');

    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    expect(new URL(page.url()).origin).toBe(svc.controlUrl);
    expect(await page.locator('header .who').textContent()).toBe('alice@example.com');
    const cookies = await page.context().cookies(svc.controlUrl);
    expect(cookies.find((c) => c.name === 'flagops_session')).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(cookies.some((c) => c.name === 'flagops_oidc')).toBe(false);

    // The session works on the API: a project created in the page, attributed to the person.
    await page.getByRole('link', { name: 'Projects' }).click();
    await page.getByLabel('Name').fill('Shop');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByRole('heading', { name: 'Shop — flags' }).waitFor();
    await page.getByLabel('Key').fill('checkout');
    await page.getByRole('button', { name: 'Create flag' }).click();
    await page.getByRole('heading', { name: 'Config in dev' }).waitFor();
    const audit = await httpClient(svc.controlUrl, svc.admin).get('/api/v1/audit');
    expect(audit.body.entries[0].actor).toEqual({ type: 'session', name: 'alice@example.com', role: 'admin' });
    await page.screenshot({ path: await artifactPath('sso-signed-in.png') });

    // Signing out ends the session and offers the provider's own sign-out.
    await page.getByRole('button', { name: 'Sign out' }).click();
    const providerSignOut = page.getByRole('link', { name: `Also sign out of ${new URL(provider.issuer).host}` });
    await providerSignOut.waitFor();
    expect(await providerSignOut.getAttribute('href')).toMatch(new RegExp(`^${provider.issuer}/session/end\\?client_id=`));
    const after = await page.evaluate(async () => (await fetch('/dashboard/api/session')).status);
    expect(after).toBe(401);
  });

  it('shows a person whose groups have no role a page that says so, and signs nobody in', async () => {
    const page = await freshPage();
    await page.goto(svc.controlUrl);
    await page.getByRole('link', { name: /^Sign in with / }).click();
    await loginAtProvider(page, 'uma', 'uma-at-provider');
    await page.getByRole('heading', { name: 'No access to flagops' }).waitFor();
    expect(await page.locator('body').textContent()).toContain(
      'You signed in as uma@example.com, but none of your groups has a role in flagops (your groups: marketing).',
    );
    await page.screenshot({ path: await artifactPath('sso-refused.png') });
    expect((await page.context().cookies(svc.controlUrl)).some((c) => c.name === 'flagops_session')).toBe(false);
    await page.getByRole('link', { name: 'Back to the sign-in page' }).click();
    await page.getByLabel('Username').waitFor();
  });

  it('keeps the password form working beside it', async () => {
    const page = await freshPage();
    await page.goto(svc.controlUrl);
    await page.getByLabel('Username').fill('bob');
    await page.getByLabel('Password').fill('bob-password-1');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.locator('header.topbar').waitFor();
    expect(await page.locator('header .who').textContent()).toBe('Bob Stone');
    expect(leaks).toEqual([]);
  });
});

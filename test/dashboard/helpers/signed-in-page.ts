import type { Browser, Page } from 'playwright-core';
import { loopbackContext } from '../../helpers/browser.js';
import type { TestService } from '../../helpers/start-test-service.js';

/** A page of a fresh browser context, signed in through the form as `username` (password `<username>-password-1`). */
export async function signedInPage(browser: Browser, svc: TestService, username: string, leaks: string[]): Promise<Page> {
  const page = await (await loopbackContext(browser, leaks)).newPage();
  await page.goto(svc.controlUrl);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(`${username}-password-1`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('header.topbar').waitFor();
  return page;
}

import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';

/** The dashboard page these tests drive is built once per run, before any test file, by test/global-setup.ts. */
export const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url).pathname;

/** Why the browser tests do not run here, or null when they do; test/global-setup.ts prints it once. */
export const CHROMIUM_MISSING: string | null = existsSync(CHROMIUM)
  ? null
  : `the browser tests were not run: they need Chromium at ${CHROMIUM} (Debian: apt-get install -y chromium)`;

/**
 * Debian's chromium, headless, with everything that would reach out to the internet switched off. The tests
 * that need it skip when it is missing (CHROMIUM_MISSING), and the run says so once; CI installs it.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`the browser tests need Chromium at ${CHROMIUM} (Debian: apt-get install chromium); it is missing`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * A browser context (one person: own cookies) that may talk to 127.0.0.1 only. Anything else is aborted and
 * recorded in `leaks`, so a test can prove the page works offline (no CDN, no web fonts).
 */
export async function loopbackContext(browser: Browser, leaks: string[]): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === '127.0.0.1') return route.continue();
    leaks.push(url.href);
    return route.abort();
  });
  return context;
}

export async function artifactPath(name: string): Promise<string> {
  await mkdir(ARTIFACTS, { recursive: true });
  return path.join(ARTIFACTS, name);
}

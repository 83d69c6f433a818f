import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_MISSING, launchChromium } from '../../helpers/browser.js';
import { httpClient, type Json } from '../../helpers/http-client.js';
import { startTestService, type TestService } from '../../helpers/start-test-service.js';
import { addUser } from '../helpers/dashboard-session.js';
import { signedInPage } from '../helpers/signed-in-page.js';

/** The schedule panel of a flag's page in a real browser: a progressive rollout planned, looked at, cancelled. */
describe.skipIf(CHROMIUM_MISSING !== null)('the schedule editor in Chromium', () => {
  let svc: TestService;
  let browser: Browser;
  let page: Page;
  let flagId: string;
  const leaks: string[] = [];
  /** What the browser refused under the page's Content-Security-Policy, as it logged it. */
  const refused: string[] = [];
  const admin = () => httpClient(svc.controlUrl, svc.admin);
  const prodNow = async (): Promise<Json> => (await admin().get(`/api/v1/flags/${flagId}`)).body.environments.prod;

  beforeAll(async () => {
    // Guards can be written (the setting is there); nothing listens at that address, so every query fails.
    svc = await startTestService({ prometheusUrl: 'http://127.0.0.1:9' });
    await addUser(svc, 'alice', 'Alice Martin');
    const project = (await admin().post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    flagId = (await admin().post(`/api/v1/projects/${project.id}/flags`, { key: 'checkout-v2' })).body.id;
    browser = await launchChromium();
    page = await signedInPage(browser, svc, 'alice', leaks);
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) refused.push(message.text());
    });
    await page.goto(`${svc.controlUrl}/#/flags/${encodeURIComponent(flagId)}/prod`);
    await page.getByRole('heading', { name: 'Schedule in prod' }).waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('says there is nothing scheduled, then plans "5 % now, then +20 % every hour" and draws its timeline', async () => {
    const panel = page.getByTestId('schedule-prod');
    await expect.poll(() => panel.getByTestId('schedule-timeline').textContent()).toContain('No scheduled changes in prod.');
    const plan = panel.getByTestId('rollout-plan');
    await plan.getByLabel('Start at %').fill('5');
    await plan.getByLabel('Step %').fill('20');
    await plan.getByLabel('Every').selectOption('1h');
    await plan.getByRole('button', { name: 'Schedule rollout' }).click();
    const steps = panel.locator('.timeline-step');
    await expect.poll(() => steps.count()).toBe(5);
    expect(await steps.locator('.timeline-sets').allTextContents()).toEqual([
      'rollout 25 %',
      'rollout 45 %',
      'rollout 65 %',
      'rollout 85 %',
      'rollout 100 %',
    ]);
    expect(await panel.locator('.timeline-step.next .timeline-relative').textContent()).toMatch(/^in (59 min|1 h)$/);
    expect(await prodNow()).toMatchObject({ enabled: true, rolloutPct: 5, nextStep: { set: { rolloutPct: 25 } } });
  });

  it('draws each step’s bar as wide as the rollout it leaves, without anything the Content-Security-Policy refuses', async () => {
    const steps = page.getByTestId('schedule-prod').locator('.timeline-step');
    await expect.poll(() => steps.count()).toBe(5);
    const shares = await steps.evaluateAll((items) =>
      items.map((item) => {
        const bar = item.querySelector('.timeline-bar')!.getBoundingClientRect();
        const fill = item.querySelector('.timeline-fill')!.getBoundingClientRect();
        return { bar: bar.width, share: fill.width / bar.width };
      }),
    );
    expect(shares.every((s) => s.bar > 50)).toBe(true);
    // Within half a percent: a bar is hundreds of pixels wide, so that is a pixel or two of rounding.
    expect(shares.map((s) => Math.round(s.share * 200) / 2)).toEqual([25, 45, 65, 85, 100]);
    expect(refused).toEqual([]);
  });

  it('adds one step at a chosen time, kept in time order', async () => {
    const add = page.getByTestId('schedule-add');
    const soon = new Date(Date.now() + 30 * 60_000);
    const two = (n: number) => String(n).padStart(2, '0');
    const local = `${soon.getFullYear()}-${two(soon.getMonth() + 1)}-${two(soon.getDate())}T${two(soon.getHours())}:${two(soon.getMinutes())}:00`;
    await add.getByLabel('At (local time)').fill(local);
    await add.getByLabel('Step rollout %').fill('15');
    await add.getByRole('button', { name: 'Add step' }).click();
    const steps = page.getByTestId('schedule-prod').locator('.timeline-step');
    await expect.poll(() => steps.count()).toBe(6);
    expect(await steps.first().locator('.timeline-sets').textContent()).toBe('rollout 15 %');
    expect((await prodNow()).schedule[0].set).toEqual({ rolloutPct: 15 });
  });

  it('refuses a step in the past with the server’s message, changing nothing', async () => {
    const add = page.getByTestId('schedule-add');
    await add.getByLabel('At (local time)').fill('2020-01-01T09:00:00');
    await add.getByLabel('Step rollout %').fill('50');
    await add.getByRole('button', { name: 'Add step' }).click();
    await expect.poll(() => page.getByTestId('schedule-prod').getByRole('alert').textContent()).toContain('must be in the future');
    expect((await prodNow()).schedule).toHaveLength(6);
  });

  it('cancels the remaining steps after a second click', async () => {
    const cancel = page.getByTestId('schedule-cancel');
    await cancel.click();
    expect(await cancel.textContent()).toBe('Click again to cancel every step');
    expect((await prodNow()).schedule).toHaveLength(6);
    await cancel.click();
    await expect.poll(() => page.getByTestId('schedule-timeline').textContent()).toContain('No scheduled changes in prod.');
    expect(await prodNow()).toMatchObject({ schedule: [], nextStep: null, rolloutPct: 5 });
  });

  it('plans a guarded rollout, shows each step’s guard and the last check of the next one', async () => {
    const panel = page.getByTestId('schedule-prod');
    const plan = panel.getByTestId('rollout-plan');
    await plan.getByLabel('Start at %').fill('10');
    await plan.getByLabel('Step %').fill('45');
    await plan.getByLabel('Guard query (PromQL)').fill('checkout_error_ratio');
    await plan.getByLabel('Guard max').fill('0.05');
    await plan.getByRole('button', { name: 'Schedule rollout' }).click();
    const steps = panel.locator('.timeline-step');
    await expect.poll(() => steps.count()).toBe(2);
    expect(await panel.getByTestId('step-guard').allTextContents()).toEqual([
      'guard: checkout_error_ratio ≤ 0.05, every 60 s',
      'guard: checkout_error_ratio ≤ 0.05, every 60 s',
    ]);
    expect((await prodNow()).schedule[0].guard).toEqual({ query: 'checkout_error_ratio', max: 0.05 });
    // The guard is checked at once; Prometheus is out of reach here, so that check failed (once: not yet a stop).
    await page.reload();
    await expect
      .poll(() => panel.locator('.timeline-step.next').getByTestId('step-check').textContent(), { timeout: 15_000 })
      .toMatch(/^last check failed \(1 in a row; 3 stop the rollout\): Prometheus unreachable/);
    await page.getByTestId('schedule-cancel').click();
    await page.getByTestId('schedule-cancel').click();
    await expect.poll(() => page.getByTestId('schedule-timeline').textContent()).toContain('No scheduled changes in prod.');
  });

  it('loaded nothing from anywhere but the service, and the browser refused nothing under the Content-Security-Policy', () => {
    expect(leaks).toEqual([]);
    expect(refused).toEqual([]);
  });
});

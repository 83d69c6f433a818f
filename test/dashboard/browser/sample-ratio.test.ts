import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_MISSING, launchChromium } from '../../helpers/browser.js';
import { PROMPTLY_MS } from '../../helpers/deadlines.js';
import { type HttpClient, httpClient } from '../../helpers/http-client.js';
import { startTestService, type TestService } from '../../helpers/start-test-service.js';
import { addUser } from '../helpers/dashboard-session.js';
import { signedInPage } from '../helpers/signed-in-page.js';

const exposures = (flagKey: string, variation: string, count: number) =>
  Array.from({ length: count }, () => ({ type: 'exposure', flagKey, variation }));

/** The sample-ratio line of a flag's stats panel, fed by exposures an SDK sends through POST /v1/events. */
describe.skipIf(CHROMIUM_MISSING !== null)('the sample-ratio check in the stats panel, in Chromium', () => {
  let svc: TestService;
  let browser: Browser;
  let page: Page;
  let sdk: HttpClient;
  const ids: Record<string, string> = {};
  const leaks: string[] = [];
  const admin = () => httpClient(svc.controlUrl, svc.admin);
  const line = () => page.locator('section.stats .sample-ratio');

  async function openStats(key: string): Promise<void> {
    await page.goto(`${svc.controlUrl}/#/flags/${encodeURIComponent(ids[key])}/prod`);
    await page.locator('section.stats').waitFor();
  }

  async function send(events: object[]): Promise<void> {
    const res = await sdk.post('/v1/events', { events });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: events.length });
  }

  beforeAll(async () => {
    svc = await startTestService();
    await addUser(svc, 'alice', 'Alice Martin');
    const projectId = (await admin().post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body.id;
    for (const key of ['skewed', 'even', 'plain']) {
      ids[key] = (await admin().post(`/api/v1/projects/${projectId}/flags`, { key })).body.id;
      const variants =
        key === 'plain'
          ? {}
          : {
              variants: [
                { name: 'blue', value: true, weight: 50 },
                { name: 'green', value: true, weight: 50 },
              ],
            };
      expect(
        (await admin().put(`/api/v1/flags/${ids[key]}/environments/prod/config`, { enabled: true, rolloutPct: 100, ...variants })).status,
      ).toBe(200);
    }
    sdk = httpClient(svc.evalUrl, (await admin().post('/api/v1/keys', { kind: 'sdk', projectId, environment: 'prod' })).body.key);
    browser = await launchChromium();
    page = await signedInPage(browser, svc, 'alice', leaks);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('says there are too few exposures to check, then warns of a mismatch once a split of 60/40 comes in for weights of 50/50', async () => {
    await send([...exposures('skewed', 'blue', 3), ...exposures('skewed', 'green', 1)]);
    await openStats('skewed');
    await expect
      .poll(() => line().textContent(), { timeout: PROMPTLY_MS })
      .toBe('Sample ratio: 4 exposures so far, too few to check (blue 3 (50 %, expected 2), green 1 (50 %, expected 2)).');
    expect(await line().isVisible()).toBe(true);
    expect(await line().getAttribute('data-tone')).toBe('waiting');

    await send([...exposures('skewed', 'blue', 600), ...exposures('skewed', 'green', 400)]);
    await page.locator('section.stats button', { hasText: '↻' }).click();
    await expect
      .poll(() => line().textContent(), { timeout: PROMPTLY_MS })
      .toBe(
        "Sample-ratio mismatch (p < 0.0001): the exposures per variant do not fit the weights (blue 603 (50 %, expected 502), green 401 (50 %, expected 502)). The split or the exposure logging is broken; the test's results cannot be trusted.",
      );
    expect(await line().isVisible()).toBe(true);
    expect(await line().getAttribute('data-tone')).toBe('mismatch');
    // Shown as a warning, set apart from the hints around it.
    expect(await line().evaluate((el) => getComputedStyle(el).fontWeight)).toBe('600');
    expect(leaks).toEqual([]);
  });

  it('says the ratio fits when the exposures follow the weights', async () => {
    await send([...exposures('even', 'blue', 510), ...exposures('even', 'green', 490)]);
    await openStats('even');
    await expect
      .poll(() => line().textContent(), { timeout: PROMPTLY_MS })
      .toBe('Sample ratio fits the weights (p = 0.53; blue 510 (50 %, expected 500), green 490 (50 %, expected 500)).');
    expect(await line().isVisible()).toBe(true);
    expect(await line().getAttribute('data-tone')).toBe('ok');
    expect(await line().evaluate((el) => getComputedStyle(el).fontWeight)).not.toBe('600');
  });

  it('shows no sample-ratio line for a flag without weighted variants', async () => {
    await send(exposures('plain', 'on', 200));
    await openStats('plain');
    await expect
      .poll(() => page.locator('section.stats .exposures').textContent(), { timeout: PROMPTLY_MS })
      .toBe('Exposures (events sent by SDKs): on: 200.');
    expect(await line().textContent()).toBe('');
    expect(await line().isHidden()).toBe(true);
  });
});

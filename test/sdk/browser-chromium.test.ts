import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSdkBundle } from '../../scripts/build-packages.mjs';
import { CHROMIUM_MISSING, launchChromium, loopbackContext } from '../helpers/browser.js';
import { PROMPTLY_MS } from '../helpers/deadlines.js';
import { watchServedAnswers } from '../helpers/served-encodings.js';
import { type SdkHarness, startSdkHarness } from './sdk-harness.js';

/**
 * The browser bundle in a real browser: Debian's Chromium loads the SDK's browser bundle (flagops-sdk.js) from an
 * application page on another loopback origin, and the SDK polls and streams from the evaluation server
 * across origins (CORS), evaluating locally.
 */
describe.skipIf(CHROMIUM_MISSING !== null)('the browser bundle in headless Chromium', () => {
  let h: SdkHarness;
  let app: Server;
  let appUrl: string;
  let bundle: string;

  beforeAll(async () => {
    h = await startSdkHarness();
    const { readFile } = await import('node:fs/promises');
    const { outfile } = await buildSdkBundle({ outfile: 'test-artifacts/bundle/flagops-sdk.js' });
    bundle = await readFile(outfile, 'utf8');
    app = createServer((req, res) => {
      if (req.url === '/flagops-sdk.js') {
        res.writeHead(200, { 'content-type': 'text/javascript' });
        res.end(bundle);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>app</title><p id="out">loading</p>');
    });
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  }, 60_000);
  afterAll(async () => {
    await new Promise((r) => app?.close(r));
    await h?.stop();
  });

  it('evaluates locally, hears a kill over the stream, and contacts nothing but loopback', async () => {
    const browser = await launchChromium();
    const leaks: string[] = [];
    const served = watchServedAnswers(h.key, '/v1/snapshot');
    try {
      const page = await (await loopbackContext(browser, leaks)).newPage();
      await page.goto(appUrl);
      // Source text, not a function: the test runner would rewrite a dynamic import() inside a function.
      const first = (await page.evaluate(`(async () => {
        const { createClient } = await import('/flagops-sdk.js');
        const client = createClient({ evalUrl: ${JSON.stringify(h.service.evalUrl)}, sdkKey: ${JSON.stringify(h.key)}, pollIntervalMs: 3600000 });
        window.client = client;
        const status = await client.ready();
        return { status, details: client.details('new-checkout', false, { userId: 'u-1', attributes: { country: 'DE', appVersion: '2.3.1' } }) };
      })()`)) as { status: string; details: { value: unknown; reason: string } };
      expect(first.status).toBe('ready');
      expect(first.details).toMatchObject({ value: true, reason: 'rule_match', ruleId: 'eu-new-app' });
      // The browser sends its own Accept-Encoding (a header pages may not set: the SDK's is dropped, without
      // costing a CORS preflight), gets the snapshot compressed and decodes it.
      const snapshots = served.answers.filter((a) => a.status === 200);
      expect(snapshots.map((a) => a.accepted)).toEqual([expect.stringMatching(/\bbr\b/)]);
      expect(snapshots.map((a) => a.encoding)).toEqual(['br']);

      await h.kills.kill({
        org: 'acme',
        repo: h.repo,
        projectSlug: 'shop',
        flagKey: 'new-checkout',
        environment: 'prod',
        actor: { type: 'admin', name: 'test' },
      });
      const killed = await page.waitForFunction(
        () => {
          const client = (window as unknown as { client: { details: (k: string, d: boolean) => { reason: string; value: unknown } } })
            .client;
          const d = client.details('new-checkout', false);
          return d.reason === 'killed' ? d : null;
        },
        undefined,
        // Polls are an hour apart: only the stream can bring the kill before the deadline. How soon it
        // arrives is measured by scripts/bench/sdk-stream.mjs.
        { timeout: PROMPTLY_MS, polling: 20 },
      );
      expect(await killed.jsonValue()).toMatchObject({ value: false, reason: 'killed', variation: 'off' });
      await page.evaluate(() => (window as unknown as { client: { close: () => Promise<void> } }).client.close());
      expect(leaks).toEqual([]);
    } finally {
      served.stop();
      await browser.close();
    }
  });
});

import { createClient } from '@flagops/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { splitIntoReports } from '../../packages/sdk/src/counts.js';
import { until } from '../helpers/deadlines.js';
import { ManualScheduler } from './manual-scheduler.js';
import { ADMIN_KEY, quiet, recordingFetch, type SdkHarness, startSdkHarness } from './sdk-harness.js';

const HOUR = 3_600_000;
const thisHour = () => new Date(Math.floor(Date.now() / HOUR) * HOUR).toISOString();
const eu = { userId: 'user-1', attributes: { country: 'DE', appVersion: '2.4.0' } };

describe('evaluation counts (docs/sdk.md, "Evaluation counts")', () => {
  let h: SdkHarness;

  /** The stats API's counts for one flag in prod, summed over the last 24 hours, per variation. */
  async function stats(flagKey: string): Promise<Record<string, number>> {
    const res = await fetch(`${h.service.controlUrl}/api/v1/flags/flg_shop_${flagKey}/environments/prod/stats?period=24h`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(res.status).toBe(200);
    const totals: Record<string, number> = {};
    for (const { variations } of (await res.json()).series) {
      for (const [variation, n] of Object.entries(variations as Record<string, number>)) totals[variation] = (totals[variation] ?? 0) + n;
    }
    return totals;
  }

  const report = (body: unknown, key = h.key) =>
    fetch(`${h.service.evalUrl}/v1/counts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    h = await startSdkHarness();
  });
  afterAll(() => h?.stop());

  describe('POST /v1/counts', () => {
    it('answers 202 and adds the counts to the flag stats of the key environment', async () => {
      const res = await report({
        counts: [
          { flagKey: 'banner-text', variation: 'on', hour: thisHour(), count: 7 },
          { flagKey: 'banner-text', variation: 'off', hour: thisHour(), count: 2 },
        ],
      });
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ accepted: 2 });
      expect(await stats('banner-text')).toEqual({ on: 7, off: 2 });
    });

    it('counts an hour of yesterday in that hour', async () => {
      const yesterday = new Date(Math.floor(Date.now() / HOUR) * HOUR - 24 * HOUR).toISOString();
      expect((await report({ counts: [{ flagKey: 'max-items', variation: 'on', hour: yesterday, count: 3 }] })).status).toBe(202);
      const res = await fetch(`${h.service.controlUrl}/api/v1/flags/flg_shop_max-items/environments/prod/stats?period=7d`, {
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      const series = (await res.json()).series as Array<{ hour: string; variations: Record<string, number> }>;
      expect(series.find((s) => s.hour === yesterday)?.variations).toEqual({ on: 3 });
    });

    const old = new Date(Math.floor(Date.now() / HOUR) * HOUR - 31 * 24 * HOUR).toISOString();
    const future = new Date(Math.floor(Date.now() / HOUR) * HOUR + 3 * HOUR).toISOString();
    const entry = (over: Record<string, unknown>) => ({ flagKey: 'banner-text', variation: 'on', hour: thisHour(), count: 1, ...over });
    const bad: Array<[string, unknown, string]> = [
      ['a count of zero', { counts: [entry({ count: 0 })] }, 'counts[0].count'],
      ['a negative count', { counts: [entry({ count: -4 })] }, 'counts[0].count'],
      ['a fractional count', { counts: [entry({ count: 1.5 })] }, 'counts[0].count'],
      ['a count given as a string', { counts: [entry({ count: '3' })] }, 'counts[0].count'],
      ['an hour more than 30 days old', { counts: [entry({ hour: old })] }, 'counts[0].hour'],
      ['an hour in the future', { counts: [entry({ hour: future })] }, 'counts[0].hour'],
      ['a time that is not the start of an hour', { counts: [entry({ hour: '2026-03-01T12:30:00.000Z' })] }, 'counts[0].hour'],
      ['an empty variation', { counts: [entry({ variation: '' })] }, 'counts[0].variation'],
      ['an unknown field', { counts: [entry({ extra: 1 })] }, 'counts[0].extra'],
      ['more than 1000 entries', { counts: Array.from({ length: 1001 }, () => entry({})) }, 'counts'],
      ['no counts array', { count: [] }, 'count'],
      ['a body that is not an object', [entry({})], 'body'],
    ];
    for (const [what, body, field] of bad) {
      it(`refuses ${what} with 400 invalid_input naming ${field}`, async () => {
        const res = await report(body);
        expect(res.status).toBe(400);
        const error = (await res.json()).error;
        expect(error.code).toBe('invalid_input');
        expect(error.message).toContain(field === 'body' ? 'body' : field.replace(/^counts\[0\]\./, ''));
      });
    }

    it('leaves out counts of a flag or variation the environment does not serve, and counts the rest of the report', async () => {
      // An SDK whose snapshot was a moment behind (the flag was just removed) reports it with its other flags.
      const before = await stats('old-banner');
      const res = await report({
        counts: [
          entry({ flagKey: 'no-such-flag', count: 5 }),
          entry({ flagKey: 'old-banner', variation: 'blue', count: 4 }),
          entry({ flagKey: 'old-banner', variation: 'off', count: 3 }),
          // old-banner is archived: it serves default (off when killed), never on.
          entry({ flagKey: 'old-banner', variation: 'on', count: 2 }),
          // banner-text is not: it never serves default.
          entry({ flagKey: 'banner-text', variation: 'default', count: 2 }),
        ],
      });
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ accepted: 1, ignored: 4 });
      expect(await stats('old-banner')).toEqual({ ...before, off: (before.off ?? 0) + 3 });
    });

    it('takes counts up to 1,000,000 per entry and refuses a poisoned report whole', async () => {
      expect((await report({ counts: [entry({ flagKey: 'old-banner', count: 1_000_000 })] })).status).toBe(202);
      const before = await stats('old-banner');
      const poisoned = await report({
        counts: [
          entry({ flagKey: 'old-banner', variation: 'off', count: 3 }),
          entry({ flagKey: 'old-banner', count: Number.MAX_SAFE_INTEGER }),
        ],
      });
      expect(poisoned.status).toBe(400);
      expect((await poisoned.json()).error.message).toContain('counts[1].count must be a whole number from 1 to 1,000,000');
      expect(await stats('old-banner')).toEqual(before);
    });

    it('refuses a report naming the same flag, variation and hour twice', async () => {
      const res = await report({ counts: [entry({ count: 1_000_000 }), entry({ count: 1_000_000 })] });
      expect(res.status).toBe(400);
      expect((await res.json()).error.message).toContain('counts[1] repeats the flag, variation and hour');
    });

    it('takes the reports the SDK splits a larger count into', async () => {
      const before = (await stats('max-items')).off ?? 0;
      const reports = splitIntoReports([
        { flagKey: 'max-items', variation: 'off', hour: thisHour(), count: 2_500_001 },
        { flagKey: 'max-items', variation: 'on', hour: thisHour(), count: 3 },
      ]);
      expect(reports.map((r) => r.map((e) => e.count))).toEqual([[1_000_000, 3], [1_000_000], [500_001]]);
      for (const counts of reports) expect((await report({ counts })).status).toBe(202);
      expect(((await stats('max-items')).off ?? 0) - before).toBe(2_500_001);
    });

    it('keeps nothing of a report with one bad entry', async () => {
      const before = await stats('dark-mode');
      const res = await report({ counts: [{ flagKey: 'dark-mode', variation: 'off', hour: thisHour(), count: 5 }, entry({ count: -1 })] });
      expect(res.status).toBe(400);
      expect(await stats('dark-mode')).toEqual(before);
    });

    it('refuses a request without a valid SDK key with 401', async () => {
      expect((await report({ counts: [] }, 'svc_sdk_nope')).status).toBe(401);
    });
  });

  describe('the SDK in local mode', () => {
    it('counts its evaluations per flag and variation and reports them every interval', async () => {
      const c = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, countsIntervalMs: 100, logger: quiet });
      await c.ready();
      for (let i = 0; i < 5; i++) c.boolean('new-checkout', false, eu); // rule: on
      for (let i = 0; i < 3; i++) c.boolean('new-checkout', false, { userId: 'user-42' }); // rollout: off
      c.boolean('new-checkout', false, { attributes: 'DE' as never }); // refused context: not an evaluation
      c.string('new-checkout', 'x'); // type mismatch: the caller got its default, not the flag
      await expect.poll(() => stats('new-checkout'), { timeout: 3_000, interval: 50 }).toEqual({ on: 5, off: 3 });
      await c.close();
    });

    it('sends what is left on close', async () => {
      const c = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, countsIntervalMs: 3_600_000, logger: quiet });
      await c.ready();
      for (let i = 0; i < 4; i++) c.json('theme', null);
      c.boolean('old-search', true); // archived: counted as `default`
      await c.close();
      expect(await stats('theme')).toEqual({ on: 4 });
      expect(await stats('old-search')).toEqual({ default: 1 });
    });

    it('keeps counts whose report failed and sends them with the next one', async () => {
      let failing = true;
      const recording = recordingFetch((path) => path === '/v1/counts' && failing);
      const c = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, countsIntervalMs: 50, logger: quiet, fetch: recording.fetch });
      await c.ready();
      for (let i = 0; i < 6; i++) c.number('max-items', 0);
      await expect
        .poll(() => recording.requests.filter((r) => r.path === '/v1/counts').length, { timeout: 2_000 })
        .toBeGreaterThanOrEqual(2);
      const before = (await stats('max-items')).on ?? 0;
      failing = false;
      await expect.poll(async () => ((await stats('max-items')).on ?? 0) - before, { timeout: 2_000, interval: 50 }).toBe(6);
      await c.close();
    });
  });

  describe('the hour of a count', () => {
    it('is the hour the evaluation was made in, across an hour boundary, with a report at the boundary', async () => {
      // The client's clock runs from 30 s before the next hour; the server accepts counts up to an hour ahead.
      const nextHour = Math.floor(Date.now() / HOUR) * HOUR + HOUR;
      const clock = new ManualScheduler(nextHour - 30_000);
      const recording = recordingFetch();
      const c = createClient({
        evalUrl: h.service.evalUrl,
        sdkKey: h.key,
        scheduler: clock,
        fetch: recording.fetch,
        stream: false,
        countsIntervalMs: 20_000,
        // Polls and request deadlines an hour away: the only timer due before the hour's end is the next report.
        pollIntervalMs: HOUR,
        requestTimeoutMs: HOUR,
        logger: quiet,
      });
      await c.ready(60_000);
      const reports = () => recording.requests.filter((r) => r.path === '/v1/counts');
      c.boolean('dark-mode', true); // 29 s before the hour
      await clock.advanceTo(nextHour - 5_000); // a report at -10 s
      await expect.poll(() => reports()[0]?.status, { timeout: 3_000 }).toBe(202);
      // The next report is planned once this one is answered.
      await until(
        async () => clock.pendingAt(),
        (due) => due.some((at) => at <= nextHour + 2_000),
      );
      c.boolean('dark-mode', true); // 5 s before the hour
      c.boolean('dark-mode', true);
      await clock.advanceTo(nextHour + 2_000); // the next report comes at the hour's start, not 20 s after the last
      await expect.poll(() => reports()[1]?.status, { timeout: 3_000 }).toBe(202);
      c.boolean('dark-mode', true); // 2 s into the new hour
      await c.close();
      const sent = reports().map((r) => JSON.parse(r.body!).counts);
      const before = new Date(nextHour - HOUR).toISOString();
      const after = new Date(nextHour).toISOString();
      expect(sent).toEqual([
        [{ flagKey: 'dark-mode', variation: 'off', hour: before, count: 1 }],
        [{ flagKey: 'dark-mode', variation: 'off', hour: before, count: 2 }],
        [{ flagKey: 'dark-mode', variation: 'off', hour: after, count: 1 }],
      ]);
      expect(reports().map((r) => r.status)).toEqual([202, 202, 202]);
    });
  });

  describe('the SDK in remote mode', () => {
    it('sends no counts: the server counted each evaluation it answered, once', async () => {
      const recording = recordingFetch();
      const clock = new ManualScheduler(Date.now());
      const c = createClient({
        evalUrl: h.service.evalUrl,
        sdkKey: h.key,
        mode: 'remote',
        countsIntervalMs: 50,
        scheduler: clock,
        logger: quiet,
        fetch: recording.fetch,
      });
      await c.ready();
      const before = (await stats('banner-text')).on ?? 0;
      for (let i = 0; i < 3; i++) await c.string('banner-text', 'x', { userId: `remote-${i}` });
      await c.string('banner-text', 'x', { userId: 'remote-0' }); // answered from the cache: not evaluated again
      // Four report intervals on the client's clock, then close(), which sends what a local-mode client still holds.
      await clock.advanceTo(clock.now() + 4 * 50);
      await c.close();
      expect(recording.requests.filter((r) => r.path === '/v1/counts')).toEqual([]);
      expect(((await stats('banner-text')).on ?? 0) - before).toBe(3);
    });
  });
});

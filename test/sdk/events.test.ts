import { createClient } from '@flagops/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/deadlines.js';
import {
  ADMIN_KEY,
  killRequest,
  nextEvent,
  quiet,
  recordingFetch,
  type SdkHarness,
  type SeenRequest,
  shopFlags,
  startSdkHarness,
} from './sdk-harness.js';

const split = {
  key: 'hero',
  kind: 'string' as const,
  rolloutPct: 100,
  valueOn: 'a',
  valueOff: 'off',
  variants: [
    { name: 'blue', value: 'blue', weight: 50 },
    { name: 'green', value: 'green', weight: 50 },
  ],
};

describe('events from the JS SDK (docs/sdk.md, "Events")', () => {
  let h: SdkHarness;

  const api = async (path: string) => {
    const res = await fetch(`${h.service.controlUrl}${path}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(res.status).toBe(200);
    return res.json();
  };
  /** Exposures of one flag in prod over the last 24 hours, per variation. */
  const exposures = async (flagKey: string) => {
    const totals: Record<string, number> = {};
    for (const { exposures: hour } of (await api(`/api/v1/flags/flg_shop_${flagKey}/environments/prod/stats`)).series)
      for (const [variation, n] of Object.entries(hour as Record<string, number>)) totals[variation] = (totals[variation] ?? 0) + n;
    return totals;
  };
  /** The exposures a client posted and the server took: [variation, userId] of each. */
  const posted = (requests: SeenRequest[]) =>
    requests
      .filter((r) => r.path === '/v1/events' && r.status === 202)
      .flatMap((r) => JSON.parse(r.body!).events.map((e: { variation: string; userId?: string }) => [e.variation, e.userId]));
  const tracked = async () => (await api('/api/v1/projects/prj_shop/events?environment=prod')).series.at(-1).counts;

  beforeAll(async () => {
    h = await startSdkHarness([...shopFlags, split]);
  });
  afterAll(() => h?.stop());

  it('sends no events unless asked to: no exposures by default', async () => {
    const { fetch, requests } = recordingFetch();
    const c = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, fetch, logger: quiet });
    await c.ready();
    for (let i = 0; i < 10; i++) c.string('hero', 'x', { userId: `u${i}` });
    await c.close();
    expect(requests.filter((r) => r.path === '/v1/events')).toEqual([]);
  });

  it('with sendExposures, sends one exposure per flag, variation and user, in batches, and the rest on close', async () => {
    const { fetch, requests } = recordingFetch();
    const c = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, fetch, logger: quiet, sendExposures: true, eventsMaxBatch: 50 });
    await c.ready();
    const served: Record<string, number> = {};
    for (let i = 0; i < 120; i++) {
      const variation = c.details('hero', 'x', { userId: `user-${i}` }).variation!;
      served[variation] = (served[variation] ?? 0) + 1;
      c.string('hero', 'x', { userId: `user-${i}` }); // the same user again: no second exposure
    }
    await c.close();
    const posts = requests.filter((r) => r.path === '/v1/events');
    expect(posts.every((p) => p.status === 202)).toBe(true);
    const sizes = posts.map((p) => JSON.parse(p.body!).events.length);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(120);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(50);
    expect(await exposures('hero')).toEqual(served);
  });

  it('remote mode sends exposures too', async () => {
    const before = await exposures('banner-text');
    const c = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, mode: 'remote', logger: quiet, sendExposures: true });
    await c.ready();
    expect(await c.string('banner-text', 'x', { userId: 'r1' })).toBe('Spring sale');
    await c.close();
    expect(await exposures('banner-text')).toEqual({ ...before, on: (before.on ?? 0) + 1 });
  });

  it('a user given another variation in the same interval (the flag changed) is an exposure of each', async () => {
    const { fetch, requests } = recordingFetch();
    const c = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, fetch, logger: quiet, sendExposures: true, pollIntervalMs: 50 });
    await c.ready();
    const user = { userId: 'changing-user' };
    expect(c.number('max-items', 0, user)).toBe(50);
    expect(c.number('max-items', 0, user)).toBe(50);
    const changed = nextEvent(c, 'change', (e) => e.keys.includes('max-items'));
    await h.kills.kill(killRequest(h, 'max-items'));
    await changed;
    expect(c.number('max-items', 0, user)).toBe(10);
    expect(c.number('max-items', 0, user)).toBe(10);
    await h.kills.clear(killRequest(h, 'max-items'));
    await c.close();
    expect(posted(requests)).toEqual([
      ['on', 'changing-user'],
      ['off', 'changing-user'],
    ]);
  });

  it('evaluations with userId null are exposures of the anonymous user, and the getters still answer', async () => {
    const { fetch, requests } = recordingFetch();
    const c = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, fetch, logger: quiet, sendExposures: true });
    await c.ready();
    const anonymous = { userId: null } as unknown as { userId: string };
    expect(c.string('banner-text', 'x', anonymous)).toBe('Spring sale');
    expect(c.string('banner-text', 'x')).toBe('Spring sale');
    await c.close();
    expect(posted(requests)).toEqual([['on', undefined]]);
  });

  it('keeps at most 10,000 events while they cannot leave, dropping the oldest', async () => {
    let down = true;
    const { fetch, requests } = recordingFetch((path) => path === '/v1/events' && down);
    const c = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, fetch, logger: quiet, sendExposures: true, eventsMaxBatch: 1000 });
    await c.ready();
    // A synchronous loop: no batch can leave before it ends.
    for (let i = 0; i < 12_000; i++) c.string('banner-text', 'x', { userId: `many-${i}` });
    await until(
      async () => requests.some((r) => r.path === '/v1/events' && r.status === 'failed'),
      (failed) => failed,
    );
    // Still down: 2,000 more push out the oldest 2,000 of those kept (whole requests of 1,000).
    for (let i = 12_000; i < 14_000; i++) c.string('banner-text', 'x', { userId: `many-${i}` });
    down = false;
    await c.close();
    const users = posted(requests).map(([, userId]) => userId);
    expect(users).toHaveLength(10_000);
    expect(users[0]).toBe('many-4000');
    expect(users.at(-1)).toBe('many-13999');
  });

  it('track(name, context, value) reaches the project events with count and sum; a bad event is dropped alone', async () => {
    const warnings: string[] = [];
    const c = createClient({
      evalUrl: h.service.evalUrl,
      sdkKey: h.key,
      logger: { warn: (m) => warnings.push(m), error: () => {} },
    });
    await c.ready();
    c.track('purchase', { userId: 'u1' }, 19.99);
    c.track('purchase', { userId: 'u2' }, 5);
    c.track('signup', { userId: 'u1' });
    c.track('bad name!', { userId: 'u1' }, 1);
    c.track('refund', undefined, Number.NaN);
    await c.close();
    expect(warnings.filter((w) => w.startsWith('track:'))).toHaveLength(2);
    const counts = await tracked();
    expect(counts.purchase).toEqual({ count: 2, sum: 24.99 });
    expect(counts.signup).toEqual({ count: 1, sum: 0 });
    expect(counts).not.toHaveProperty('refund');
  });

  it('keeps events the server could not take and sends them again with the next batch', async () => {
    let down = true;
    const { fetch, requests } = recordingFetch((path) => path === '/v1/events' && down);
    const c = createClient({
      evalUrl: h.service.evalUrl,
      sdkKey: h.key,
      fetch,
      logger: quiet,
      eventsIntervalMs: 60_000,
      eventsMaxBatch: 1,
    });
    await c.ready();
    c.track('retry-me', { userId: 'u1' }, 2); // a full batch: it leaves at once, and fails
    await until(
      async () => requests.some((r) => r.path === '/v1/events' && r.status === 'failed'),
      (failed) => failed,
    );
    down = false;
    c.track('retry-me', { userId: 'u2' }, 3);
    await c.close();
    expect((await tracked())['retry-me']).toEqual({ count: 2, sum: 5 });
  });
});

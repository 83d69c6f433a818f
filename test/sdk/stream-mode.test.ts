import { createClient, type LocalClient, type RemoteClient } from '@flagops/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/deadlines.js';
import { ManualScheduler } from './manual-scheduler.js';
import { killRequest, nextEvent, quiet, recordingFetch, type SdkHarness, setConfig, startSdkHarness } from './sdk-harness.js';

const eu = { userId: 'user-1', attributes: { country: 'FR', appVersion: '3.1.0' } };
/** Polling an hour apart: anything seen within the test came through the stream. */
const NO_POLLING = 3_600_000;

describe('the SDK over the stream', () => {
  let h: SdkHarness;
  const clients: Array<LocalClient | RemoteClient> = [];

  beforeAll(async () => {
    h = await startSdkHarness();
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await h?.stop();
  });

  it('sees a config change with no polling at all', async () => {
    const c = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, pollIntervalMs: NO_POLLING, logger: quiet });
    clients.push(c);
    await c.ready();
    for (const text of ['Autumn sale', 'Winter sale']) {
      const seen = nextEvent(c, 'change', (e) => e.keys.includes('banner-text'));
      await setConfig(h, 'banner-text', { valueOn: text, valueOff: 'Welcome' });
      await seen;
      expect(c.string('banner-text', 'x')).toBe(text);
    }
  });

  it('sees a kill, and its clearing', async () => {
    const c = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, pollIntervalMs: NO_POLLING, logger: quiet });
    clients.push(c);
    await c.ready();
    for (let i = 0; i < 3; i++) {
      expect(c.boolean('new-checkout', false, eu)).toBe(true);
      const killed = nextEvent(c, 'change', (e) => e.keys.includes('new-checkout'));
      await h.kills.kill(killRequest(h, 'new-checkout'));
      await killed;
      expect(c.details('new-checkout', true, eu)).toMatchObject({ value: false, reason: 'killed' });
      const cleared = nextEvent(c, 'change', (e) => e.keys.includes('new-checkout'));
      await h.kills.clear(killRequest(h, 'new-checkout'));
      await cleared;
    }
  });

  it('in remote mode, drops its cached results when the stream announces a kill', async () => {
    const c = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, mode: 'remote', pollIntervalMs: NO_POLLING, logger: quiet });
    clients.push(c);
    await c.ready();
    expect(await c.boolean('new-checkout', false, eu)).toBe(true);
    const changed = nextEvent(c, 'change');
    await h.kills.kill(killRequest(h, 'new-checkout'));
    const event = await changed;
    expect(event.keys).toEqual(['new-checkout']);
    expect(await c.details('new-checkout', true, eu)).toMatchObject({ value: false, reason: 'killed' });
    await h.kills.clear(killRequest(h, 'new-checkout'));
  });

  it('falls back to polling when the stream cannot be opened, and still sees changes', async () => {
    const recording = recordingFetch((path) => path === '/v1/stream');
    const c = createClient({
      evalUrl: h.service.evalUrl,
      sdkKey: h.key,
      pollIntervalMs: 50,
      retryInitialMs: 20,
      retryMaxMs: 200,
      fetch: recording.fetch,
      logger: quiet,
    });
    clients.push(c);
    expect(await c.ready()).toBe('ready');
    const seen = nextEvent(c, 'change', (e) => e.keys.includes('max-items'));
    await setConfig(h, 'max-items', { valueOn: 99, valueOff: 10 });
    await seen;
    expect(c.number('max-items', 0)).toBe(99);
    expect(c.status).toBe('ready'); // polling works: nothing is stale
    const streams = () => recording.requests.filter((r) => r.path === '/v1/stream');
    await expect.poll(() => streams().length).toBeGreaterThanOrEqual(2); // it keeps trying to get the stream back
    expect(streams().every((r) => r.status === 'failed')).toBe(true);
  });

  it('stops polling while the stream is connected', async () => {
    const recording = recordingFetch();
    // Timers fire only when the test moves this clock: every poll the client would make is one it is given time for.
    const clock = new ManualScheduler(0);
    const c = createClient({
      evalUrl: h.service.evalUrl,
      sdkKey: h.key,
      pollIntervalMs: 20,
      fetch: recording.fetch,
      scheduler: clock,
      logger: quiet,
      sendCounts: false,
    });
    clients.push(c);
    await c.ready();
    // Open: the client heard the answer's headers (it stops polling in that same turn), and every request is answered.
    await until(
      async () => recording.requests,
      (requests) => requests.some((r) => r.path === '/v1/stream' && r.status === 200),
    );
    await until(
      async () => recording.requests,
      (requests) => requests.every((r) => r.status !== 'pending'),
    );
    const snapshots = () => recording.requests.filter((r) => r.path === '/v1/snapshot').length;
    const before = snapshots();
    await clock.advanceTo(15 * 20); // fifteen poll intervals
    expect(snapshots()).toBe(before);
    expect(recording.requests.filter((r) => r.path === '/v1/stream')).toHaveLength(1);
  });
});

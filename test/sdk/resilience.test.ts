import { createClient, type LocalClient, type RemoteClient, type StatusEvent } from '@flagops/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpError } from '../../packages/sdk/src/http.js';
import { backoffDelay, retryDelay } from '../../packages/sdk/src/updates.js';
import { PROMPTLY_MS, until } from '../helpers/deadlines.js';
import {
  killRequest,
  nextEvent,
  quiet,
  restart,
  type SdkHarness,
  setConfig,
  startSdkHarness,
  stopKeepingData,
  untilStatus,
  watchServerStreams,
} from './sdk-harness.js';

const eu = { userId: 'user-1', attributes: { country: 'DE', appVersion: '2.4.0' } };

describe('when the evaluation server goes away (docs/sdk.md, "Status")', () => {
  let h: SdkHarness;
  const clients: Array<LocalClient | RemoteClient> = [];
  const statuses: Record<string, StatusEvent[]> = {};
  const fast = { retryInitialMs: 20, retryMaxMs: 200, pollIntervalMs: 100, logger: quiet, readyTimeoutMs: 2_000 };

  beforeAll(async () => {
    h = await startSdkHarness();
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await h?.stop(); // the restarted service, and the data directory
  });

  it('serves the last good values as stale, then recovers by itself when the server is back on the same port', async () => {
    const streaming = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, ...fast });
    const polling = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, ...fast, stream: false });
    const remote = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, ...fast, mode: 'remote' });
    clients.push(streaming, polling, remote);
    for (const [name, c] of Object.entries({ streaming, polling, remote })) {
      statuses[name] = [];
      c.on('status', (e) => statuses[name].push(e));
    }
    await Promise.all([streaming.ready(), polling.ready(), remote.ready()]);
    expect(await remote.boolean('new-checkout', false, eu)).toBe(true);

    const ports = await stopKeepingData(h);
    await Promise.all([streaming, polling, remote].map((c) => untilStatus(c, 'stale', PROMPTLY_MS)));
    expect(streaming.details('new-checkout', false, eu)).toMatchObject({ value: true, reason: 'rule_match' });
    expect(polling.boolean('new-checkout', false, eu)).toBe(true);
    expect(await remote.boolean('new-checkout', false, eu)).toBe(true); // cached before the outage
    // Nothing cached for this context, and nobody to ask: the caller's default, never an exception.
    expect(await remote.details('new-checkout', false, { userId: 'someone-new' })).toMatchObject({
      value: false,
      reason: 'error',
      errorCode: 'GENERAL',
    });

    await restart(h, ports);
    await Promise.all([streaming, polling, remote].map((c) => untilStatus(c, 'ready', PROMPTLY_MS)));
    for (const name of ['streaming', 'polling', 'remote']) {
      const seen = statuses[name].map((e) => e.status);
      expect(seen[0]).toBe('ready');
      expect(seen).toContain('stale'); // never `error`: there was always something to serve
      expect(seen).not.toContain('error');
      expect(seen.at(-1)).toBe('ready');
      expect(statuses[name].find((e) => e.status === 'stale')!.error).toBeTruthy();
    }

    // Recovered for real: a kill made on the restarted server reaches the streaming client within a second.
    // Both listeners go on before the kill: the polling client can see it while we wait for the streaming one.
    const killed = nextEvent(streaming, 'change', (e) => e.keys.includes('new-checkout'), PROMPTLY_MS);
    const polled = nextEvent(polling, 'change', (e) => e.keys.includes('new-checkout'), PROMPTLY_MS);
    await h.kills.kill(killRequest(h, 'new-checkout'));
    await killed;
    expect(streaming.details('new-checkout', true, eu)).toMatchObject({ value: false, reason: 'killed' });
    await polled;
    expect(polling.boolean('new-checkout', true, eu)).toBe(false);
    await h.kills.clear(killRequest(h, 'new-checkout'));
  });

  it('reports error, not stale, when it never had anything to serve, and ready() resolves at its timeout', async () => {
    const c = createClient({ evalUrl: 'http://127.0.0.1:9', sdkKey: h.key, ...fast, readyTimeoutMs: 300 });
    clients.push(c);
    const started = performance.now();
    expect(await c.ready()).toBe('error');
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(c.details('new-checkout', false, eu)).toMatchObject({ value: false, reason: 'error', errorCode: 'PROVIDER_NOT_READY' });
  });

  it('reports error at once when the server refuses the key, without waiting for the ready timeout, and says why', async () => {
    const warnings: Array<{ message: string; fields?: Record<string, unknown> }> = [];
    const logger = { ...quiet, warn: (message: string, fields?: Record<string, unknown>) => warnings.push({ message, fields }) };
    const c = createClient({ evalUrl: h.service.evalUrl, sdkKey: 'svc_sdk_notakeyatall0000000', ...fast, logger, readyTimeoutMs: 25_000 });
    clients.push(c);
    const started = performance.now();
    expect(await c.ready()).toBe('error');
    expect(performance.now() - started).toBeLessThan(PROMPTLY_MS);
    // Said at once, once, in the log an application has without a status listener; and by every evaluation.
    expect(warnings).toEqual([{ message: 'the server refused the SDK key', fields: { error: expect.stringMatching(/401/) } }]);
    expect(c.details('new-checkout', false, eu)).toMatchObject({
      value: false,
      errorCode: 'PROVIDER_NOT_READY',
      errorMessage: expect.stringMatching(/^no snapshot has been loaded yet: .*401/),
    });
  });

  it('keeps the last good snapshot when a new one is refused for a key that was revoked, and says error', async () => {
    const created = await h.service.keys.createKey('acme', { kind: 'sdk', projectId: 'prj_shop', environment: 'prod' });
    const c = createClient({ evalUrl: h.service.evalUrl, sdkKey: created.key, ...fast, stream: false });
    clients.push(c);
    await c.ready();
    await h.service.keys.revokeKey('acme', created.id);
    await untilStatus(c, 'error');
    expect(c.string('banner-text', 'x')).toBe('Spring sale');
  });
});

describe('when the evaluation server restarts on the same port (docs/sdk.md, "How updates arrive")', () => {
  let h: SdkHarness;
  const clients: LocalClient[] = [];

  beforeAll(async () => {
    h = await startSdkHarness();
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await h?.stop();
  });

  it('finds it back within about a second: a kill made at once is served, and a client started meanwhile is ready', async () => {
    // A first retry of 5 to 10 s: a client backing off while nothing listens would still be waiting after the restart.
    const settings = {
      evalUrl: h.service.evalUrl,
      sdkKey: h.key,
      logger: quiet,
      sendCounts: false,
      retryInitialMs: 10_000,
      retryMaxMs: 20_000,
    };
    const running = createClient(settings);
    clients.push(running);
    expect(await running.ready()).toBe('ready');
    const streams = watchServerStreams(h.key);
    const ports = await stopKeepingData(h);
    await untilStatus(running, 'stale', PROMPTLY_MS);
    const started = createClient({ ...settings, readyTimeoutMs: 60_000 });
    clients.push(started);
    const startedReady = started.ready();
    await new Promise((r) => setTimeout(r, 2_500)); // the outage: every reconnection is refused meanwhile

    await restart(h, ports);
    const back = performance.now();
    await h.kills.kill(killRequest(h, 'new-checkout'));
    const within = (ms: number) => Math.max(0, ms - (performance.now() - back));
    await until(
      async () => running.details('new-checkout', true, eu).reason,
      (reason) => reason === 'killed',
      within(1_500),
    );
    expect(await Promise.race([startedReady, new Promise((r) => setTimeout(() => r('late'), within(1_500)))])).toBe('ready');
    expect(started.details('new-checkout', true, eu)).toMatchObject({ value: false, reason: 'killed' });
    await until(
      async () => streams.open,
      (open) => open === 2,
      within(2_000),
    );
    streams.stop();
  });
});

describe('retry delays', () => {
  it('double from the first delay up to the cap, with half of each one random', () => {
    const low = () => 0;
    const high = () => 0.999999;
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffDelay(n, 1_000, 60_000, high))).toEqual(
      [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000].map((x) => expect.closeTo(x, -1)),
    );
    expect([1, 2, 3, 7].map((n) => backoffDelay(n, 1_000, 60_000, low))).toEqual([500, 1_000, 2_000, 30_000]);
  });

  it('stay within a second for a refused or reset connection however often, and are what Retry-After asks', () => {
    const settings = { retryInitialMs: 1_000, retryMaxMs: 10_000, random: () => 0.999999 };
    const lost = (code: string) => new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) });
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET']) expect(retryDelay(lost(code), 0, settings)).toBeCloseTo(1_000, -1);
    expect(retryDelay(lost('ECONNREFUSED'), 0, { ...settings, retryInitialMs: 100 })).toBeCloseTo(100, -1);
    expect(retryDelay(new HttpError(503, 'starting', 1_000), 6, settings)).toBe(1_000);
    expect(retryDelay(new HttpError(429, 'busy', 60_000), 1, settings)).toBe(10_000);
    expect(retryDelay(new HttpError(500, 'failing'), 3, settings)).toBeCloseTo(4_000, -1);
    expect(retryDelay(lost('ENOTFOUND'), 6, settings)).toBeCloseTo(10_000, -1);
  });

  it('are what a client schedules after each failure, with the injected random and clock', async () => {
    const scheduled: number[] = [];
    let now = 0;
    const scheduler = {
      now: () => now,
      setTimeout: (fn: () => void, ms: number) => {
        scheduled.push(ms);
        // fire on the next turn, as if `ms` had passed
        return setTimeout(() => {
          now += ms;
          fn();
        }, 0);
      },
      clearTimeout: (handle: unknown) => clearTimeout(handle as ReturnType<typeof setTimeout>),
    };
    const failing = async () => {
      throw new TypeError('fetch failed');
    };
    const c = createClient({
      evalUrl: 'http://127.0.0.1:9',
      sdkKey: 'svc_sdk_x',
      stream: false,
      sendCounts: false,
      fetch: failing,
      scheduler,
      random: () => 0.5,
      retryInitialMs: 100,
      retryMaxMs: 1_000,
      readyTimeoutMs: 100_000,
      logger: quiet,
    });
    // Request deadlines (10 000) interleave with the retry delays; the retries are 0.75 of each doubling.
    const retries = () => scheduled.filter((ms) => ms !== 10_000 && ms !== 100_000);
    await until(
      async () => retries().length,
      (n) => n >= 6,
    );
    await c.close();
    expect(retries().slice(0, 6)).toEqual([75, 150, 300, 600, 750, 750]);
  });
});

describe('retry delays by default', () => {
  it('never exceed 10 s for a failure that is not a lost connection and says no Retry-After', async () => {
    const scheduled: number[] = [];
    const scheduler = {
      now: () => 0,
      setTimeout: (fn: () => void, ms: number) => {
        scheduled.push(ms);
        return setTimeout(fn, 0);
      },
      clearTimeout: (handle: unknown) => clearTimeout(handle as ReturnType<typeof setTimeout>),
    };
    const c = createClient({
      evalUrl: 'http://127.0.0.1:9',
      sdkKey: 'svc_sdk_x',
      stream: false,
      sendCounts: false,
      fetch: async () => {
        throw new TypeError('fetch failed');
      },
      scheduler,
      random: () => 0.999999,
      readyTimeoutMs: 100_000,
      logger: quiet,
    });
    // Request deadlines (10 000) interleave with the retry delays.
    const retries = () => scheduled.filter((ms) => ms !== 10_000 && ms !== 100_000);
    await until(
      async () => retries().length,
      (n) => n >= 10,
    );
    await c.close();
    expect(retries().slice(0, 10)).toEqual(
      [1_000, 2_000, 4_000, 8_000, 10_000, 10_000, 10_000, 10_000, 10_000, 10_000].map((x) => expect.closeTo(x, -1)),
    );
  });
});

describe('an SDK that must never throw at its caller (style.md habit 10)', () => {
  let h: SdkHarness;
  let local: LocalClient;
  let remote: RemoteClient;

  beforeAll(async () => {
    h = await startSdkHarness();
    local = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, logger: quiet });
    remote = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, logger: quiet, mode: 'remote' });
    await Promise.all([local.ready(), remote.ready()]);
  });
  afterAll(async () => {
    await Promise.all([local?.close(), remote?.close()]);
    await h?.stop();
  });

  const cases: Array<[string, (c: LocalClient | RemoteClient) => unknown, unknown, string]> = [
    ['an unknown flag', (c) => c.details('no-such-flag', 'fallback'), 'fallback', 'FLAG_NOT_FOUND'],
    ['a boolean getter on a string flag', (c) => c.details('banner-text', true), true, 'TYPE_MISMATCH'],
    ['a number getter on a boolean flag', (c) => c.details('new-checkout', 3), 3, 'TYPE_MISMATCH'],
    ['an object default on a number flag', (c) => c.details('max-items', { a: 1 }), { a: 1 }, 'TYPE_MISMATCH'],
    [
      'a userId that is not a string',
      (c) => c.details('new-checkout', false, { userId: 42 as unknown as string }),
      false,
      'INVALID_CONTEXT',
    ],
    ['attributes that are not an object', (c) => c.details('new-checkout', false, { attributes: 'DE' as never }), false, 'INVALID_CONTEXT'],
    ['a context that is not an object', (c) => c.details('new-checkout', false, 'user-1' as never), false, 'INVALID_CONTEXT'],
  ];

  for (const [what, call, fallback, errorCode] of cases) {
    it(`answers ${what} with the caller's default and ${errorCode}, in both modes`, async () => {
      for (const c of [local, remote]) {
        const details = await call(c);
        expect(details).toMatchObject({ value: fallback, reason: 'error', errorCode });
        expect((details as { errorMessage: string }).errorMessage).toEqual(expect.any(String));
      }
    });
  }

  it('gives the typed getters the default too', async () => {
    expect(local.boolean('banner-text', true)).toBe(true);
    expect(local.string('no-such-flag', 'x')).toBe('x');
    expect(await remote.number('banner-text', 7)).toBe(7);
  });

  it('answers PROVIDER_NOT_READY before the first snapshot, whatever the mode', async () => {
    const never: typeof fetch = () => new Promise(() => {});
    for (const mode of ['local', 'remote'] as const) {
      const c = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, mode, fetch: never, logger: quiet });
      expect(await c.details('new-checkout', true)).toMatchObject({ value: true, reason: 'error', errorCode: 'PROVIDER_NOT_READY' });
      await c.close();
    }
  });

  it('keeps running when a listener throws', async () => {
    const c = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, logger: quiet, pollIntervalMs: 3_600_000 });
    c.on('change', () => {
      throw new Error('application bug');
    });
    await c.ready();
    const seen = nextEvent(c, 'change');
    await setConfig(h, 'max-items', { valueOn: 51, valueOff: 10 });
    await seen;
    expect(c.number('max-items', 0)).toBe(51);
    await c.close();
  });

  it('refuses bad options at createClient, the one place it throws, with a TypeError', () => {
    expect(() => createClient({ evalUrl: 'localhost:4001', sdkKey: h.key })).toThrow(TypeError);
    expect(() => createClient({ evalUrl: h.service.evalUrl, sdkKey: '' })).toThrow(TypeError);
    expect(() => createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, pollIntervalMs: -1 })).toThrow(TypeError);
  });
});

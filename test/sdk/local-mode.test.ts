import { createClient, type LocalClient } from '@flagops/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/deadlines.js';
import { killRequest, nextEvent, quiet, recordingFetch, type SdkHarness, setConfig, startSdkHarness } from './sdk-harness.js';

const eu = { userId: 'user-1', attributes: { country: 'DE', appVersion: '2.4.0' } };

describe('the SDK in local mode (docs/sdk.md)', () => {
  let h: SdkHarness;
  const clients: LocalClient[] = [];
  const client = (options: Partial<Parameters<typeof createClient>[0]> = {}) => {
    const c = createClient({ evalUrl: h.service.evalUrl, sdkKey: h.key, logger: quiet, ...options, mode: 'local' });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    h = await startSdkHarness();
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await h?.stop();
  });

  describe('once ready', () => {
    let c: LocalClient;
    beforeAll(async () => {
      c = client({ stream: false });
      expect(await c.ready()).toBe('ready');
    });

    it('serves each type of flag through its getter', () => {
      expect(c.boolean('new-checkout', false, eu)).toBe(true);
      expect(c.string('banner-text', 'x')).toBe('Spring sale');
      expect(c.number('max-items', 0)).toBe(50);
      expect(c.json('theme', null)).toEqual({ color: 'teal', dense: true });
      // details() types its value after the default: a boolean default gives a boolean, not the literal `false`
      const value: boolean = c.details('new-checkout', false, eu).value;
      expect(value).toBe(true);
    });

    it('explains each result as the server does: rule, rollout bucket, disabled, archived', () => {
      expect(c.details('new-checkout', false, eu)).toStrictEqual({
        value: true,
        reason: 'rule_match',
        variation: 'on',
        ruleId: 'eu-new-app',
      });
      // new-checkout's bucket for user-42 is 95.9, above the 30% rollout
      expect(c.details('new-checkout', true, { userId: 'user-42' })).toStrictEqual({
        value: false,
        reason: 'rollout',
        variation: 'off',
        bucket: expect.any(Number),
      });
      expect(c.details('dark-mode', true)).toStrictEqual({ value: false, reason: 'flag_disabled', variation: 'off' });
      expect(c.details('old-search', true)).toStrictEqual({ value: false, reason: 'archived', variation: 'default' });
      // archived without a defaultValue: the caller's default is the fallback
      expect(c.details('old-banner', 'mine')).toStrictEqual({ value: 'mine', reason: 'archived', variation: 'default' });
    });

    it('reports the snapshot version and the flag keys it serves', async () => {
      const snapshot = await (await fetch(`${h.service.evalUrl}/v1/snapshot`, { headers: { authorization: `Bearer ${h.key}` } })).json();
      expect(c.version).toBe(snapshot.version);
      expect(c.keys().sort()).toEqual(Object.keys(snapshot.flags).sort());
    });
  });

  it('polls with If-None-Match: after the first 200 every poll is a 304 until something changes', async () => {
    const { fetch, requests } = recordingFetch();
    const c = client({ stream: false, pollIntervalMs: 25, fetch, sendCounts: false });
    await c.ready();
    const answered = () => requests.filter((r) => r.path === '/v1/snapshot' && r.status !== 'pending'); // one may be under way
    const polls = await until(
      async () => answered(),
      (seen) => seen.length >= 5,
    );
    expect(polls[0]).toMatchObject({ status: 200, ifNoneMatch: null });
    for (const poll of polls.slice(1)) expect(poll).toMatchObject({ status: 304, ifNoneMatch: `"v${c.version}"` });
    await c.close();
  });

  it('sees a config change through polling and names the changed flag in a change event', async () => {
    const c = client({ stream: false, pollIntervalMs: 50 });
    await c.ready();
    expect(c.string('banner-text', 'x')).toBe('Spring sale');
    const changed = nextEvent(c, 'change');
    await setConfig(h, 'banner-text', { valueOn: 'Summer sale', valueOff: 'Welcome' });
    const event = await changed;
    expect(event.keys).toEqual(['banner-text']);
    expect(c.string('banner-text', 'x')).toBe('Summer sale');
    expect(event.version).toBe(c.version);
  });

  it('sees a kill through polling: valueOff with reason killed, overriding the matching rule', async () => {
    const c = client({ stream: false, pollIntervalMs: 50 });
    await c.ready();
    expect(c.boolean('new-checkout', false, eu)).toBe(true);
    const changed = nextEvent(c, 'change', (e) => e.keys.includes('new-checkout'));
    await h.kills.kill(killRequest(h, 'new-checkout'));
    await changed;
    expect(c.details('new-checkout', true, eu)).toStrictEqual({ value: false, reason: 'killed', variation: 'off' });
    const cleared = nextEvent(c, 'change', (e) => e.keys.includes('new-checkout'));
    await h.kills.clear(killRequest(h, 'new-checkout'));
    await cleared;
    expect(c.boolean('new-checkout', false, eu)).toBe(true);
  });

  it('starts ready from a bootstrap snapshot without a request, then refreshes in the background', async () => {
    const snapshot = await (await fetch(`${h.service.evalUrl}/v1/snapshot`, { headers: { authorization: `Bearer ${h.key}` } })).json();
    const stale = {
      ...snapshot,
      version: snapshot.version - 1,
      flags: { ...snapshot.flags, 'max-items': { ...snapshot.flags['max-items'], valueOn: 7 } },
    };
    const recording = recordingFetch();
    const c = client({ stream: false, bootstrap: stale, fetch: recording.fetch });
    expect(c.status).toBe('ready');
    expect(c.number('max-items', 0)).toBe(7); // answered before any response arrived
    expect(recording.requests.map((r) => r.status)).toEqual(['pending']);
    const changed = await nextEvent(c, 'change');
    expect(changed.keys).toEqual(['max-items']);
    expect(c.number('max-items', 0)).toBe(50);
    expect(recording.requests[0].ifNoneMatch).toBeNull(); // nothing says the bootstrap is what the server served
  });

  it('ignores a bootstrap whose entries have fields of the wrong type, with a warning naming the field, and loads from the server', async () => {
    const snapshot = await (await fetch(`${h.service.evalUrl}/v1/snapshot`, { headers: { authorization: `Bearer ${h.key}` } })).json();
    const entry = snapshot.flags['new-checkout'];
    const broken: Array<[Record<string, unknown>, string]> = [
      [{ ...entry, rules: [5] }, 'flags.new-checkout.rules[0] is not an object'],
      [{ ...entry, enabled: 'yes' }, 'flags.new-checkout.enabled is not a boolean'],
      [{ ...entry, rolloutPct: 'all' }, 'flags.new-checkout.rolloutPct is not a number'],
      [{ ...entry, rules: [{ ...entry.rules[0], conditions: 5 }] }, 'flags.new-checkout.rules[0].conditions is not a list'],
      [{ ...entry, prerequisites: [{ flag: 7, variation: 'on' }] }, 'flags.new-checkout.prerequisites[0].flag is not a string'],
    ];
    for (const [flag, message] of broken) {
      const warnings: unknown[][] = [];
      const c = client({
        stream: false,
        bootstrap: { ...snapshot, flags: { ...snapshot.flags, 'new-checkout': flag } },
        logger: { ...quiet, warn: (...args: unknown[]) => warnings.push(args) },
      });
      expect(c.status).toBe('not_ready');
      expect(JSON.stringify(warnings)).toContain(message);
      expect(await c.ready()).toBe('ready');
      expect(c.details('new-checkout', false, eu)).toMatchObject({ value: true, reason: 'rule_match' });
    }
  });
});

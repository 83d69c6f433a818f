import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { sample } from '../metrics/prometheus-text.js';

const hourOf = (ms: number) => new Date(Math.floor(ms / 3_600_000) * 3_600_000).toISOString();

describe('POST /v1/events', () => {
  let svc: TestService;
  let admin: HttpClient;
  let sdk: HttpClient;
  let project: Json;
  let flag: Json;
  const stats = async () => (await admin.get(`/api/v1/flags/${flag.id}/environments/prod/stats`)).body;
  const events = async (query = '') => (await admin.get(`/api/v1/projects/${project.id}/events${query}`)).body;

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    project = await createProject(admin, 'shop');
    flag = await createFlag(admin, project.id, { key: 'checkout' });
    await admin.put(`/api/v1/flags/${flag.id}/environments/prod/config`, {
      enabled: true,
      rolloutPct: 100,
      variants: [
        { name: 'blue', value: true, weight: 50 },
        { name: 'green', value: true, weight: 50 },
      ],
    });
    sdk = httpClient(svc.evalUrl, (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key);
  });
  afterAll(() => svc.stop());

  it('counts exposures per variation in the flag stats and track events per name with their sum', async () => {
    const res = await sdk.post('/v1/events', {
      events: [
        { type: 'exposure', flagKey: 'checkout', variation: 'blue', userId: 'u1' },
        { type: 'exposure', flagKey: 'checkout', variation: 'blue', userId: 'u2', at: new Date().toISOString() },
        { type: 'exposure', flagKey: 'checkout', variation: 'green' },
        { type: 'track', name: 'purchase', userId: 'u1', value: 12.5 },
        { type: 'track', name: 'purchase', value: -2.25 },
        { type: 'track', name: 'signup' },
      ],
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: 6 });
    const last = (await stats()).series.at(-1);
    expect(last.exposures).toEqual({ blue: 2, green: 1 });
    expect(last.variations).toEqual({}); // events are no evaluations
    const body = await events('?period=24h');
    expect(body.series).toHaveLength(24);
    expect(body.series.at(-1)).toEqual({
      hour: hourOf(Date.now()),
      counts: { purchase: { count: 2, sum: 10.25 }, signup: { count: 1, sum: 0 } },
    });
    expect((await events('?environment=dev')).series.at(-1).counts).toEqual({});
    expect((await events('?period=7d')).series).toHaveLength(168);
  });

  it('marks a sample-ratio mismatch in the stats and the metrics when exposures stray from the weights', async () => {
    const before = await stats();
    expect(before.sampleRatio).toMatchObject({ pValue: null, mismatch: false }); // too few exposures yet
    const exposure = (variation: string) => ({ type: 'exposure', flagKey: 'checkout', variation });
    const skewed = [...Array.from({ length: 600 }, () => exposure('blue')), ...Array.from({ length: 400 }, () => exposure('green'))];
    expect((await sdk.post('/v1/events', { events: skewed })).status).toBe(202);
    const after = await stats();
    expect(after.sampleRatio).toMatchObject({
      mismatch: true,
      total: 1003,
      variants: [
        { name: 'blue', weight: 50, exposures: 602 },
        { name: 'green', weight: 50, exposures: 401 },
      ],
    });
    expect(after.sampleRatio.pValue).toBeLessThan(0.001);
    const metrics = await (await fetch(`${svc.evalUrl}/metrics`)).text();
    const labels = { project: 'shop', environment: 'prod', flag: 'checkout', org: 'acme' };
    expect(sample(metrics, 'flagops_sample_ratio_mismatch', labels)).toBe(1);
    expect(sample(metrics, 'flagops_exposures_total', { ...labels, variation: 'blue' })).toBe(602);
    expect(sample(metrics, 'flagops_track_events_total', { project: 'shop', environment: 'prod', event: 'purchase', org: 'acme' })).toBe(2);
    expect(sample(metrics, 'flagops_track_value', { project: 'shop', environment: 'prod', event: 'purchase', org: 'acme' })).toBe(10.25);
  });

  it('gives a config without variants no sample-ratio check', async () => {
    const plain = await createFlag(admin, project.id, { key: 'plain' });
    expect((await admin.get(`/api/v1/flags/${plain.id}/environments/prod/stats`)).body.sampleRatio).toBeNull();
  });

  it.each([
    ['a track event without a name', { type: 'track' }, 'events[1]'],
    ['an unknown type', { type: 'click', name: 'x' }, 'events[1].type'],
    ['a value that is no number', { type: 'track', name: 'x', value: '3' }, 'events[1].value'],
    ['an unknown field', { type: 'track', name: 'x', extra: 1 }, 'events[1]'],
    ['an event in the future', { type: 'track', name: 'x', at: new Date(Date.now() + 3 * 3_600_000).toISOString() }, 'events[1].at'],
    ['an at that is no date-time', { type: 'track', name: 'x', at: 'yesterday' }, 'events[1].at'],
  ])('refuses %s with 400 naming it, and counts nothing of the request', async (_, bad, field) => {
    const before = await events();
    const res = await sdk.post('/v1/events', { events: [{ type: 'track', name: 'refused' }, bad] });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_input');
    expect(res.body.error.message).toContain(field);
    expect(await events()).toEqual(before);
  });

  it('takes a request whose values add up past what a sum can hold: 202, every event counted, the sum held at its cap', async () => {
    for (const [url, name] of [
      ['/v1/events', 'big-fast'],
      ['/v1/events?from=app', 'big-app'],
    ]) {
      const big = Array.from({ length: 10 }, () => ({ type: 'track', name, value: -1e9 }));
      const res = await sdk.post(url, { events: [{ type: 'track', name: `${name}-small`, value: 2 }, ...big] });
      expect(res).toMatchObject({ status: 202, body: { accepted: 11 } });
      await expect
        .poll(async () => (await events()).series.at(-1).counts[name])
        .toEqual({ count: 10, sum: -Number.MAX_SAFE_INTEGER / 1e6 });
      expect((await events()).series.at(-1).counts[`${name}-small`]).toEqual({ count: 1, sum: 2 });
    }
  });

  it('says a flagKey that is no string is no string, and only that, through the fast path and the app', async () => {
    for (const url of ['/v1/events', '/v1/events?from=app']) {
      for (const flagKey of [5, true, { a: 1 }]) {
        const res = await sdk.post(url, { events: [{ type: 'exposure', flagKey, variation: 'on' }] });
        expect(res.status).toBe(400);
        expect(res.body.error.message).toBe('events[0].flagKey: must be a string');
      }
    }
  });

  it('says an event more than an hour ahead is, as field: message, through the fast path and the app', async () => {
    const at = new Date(Date.now() + 3 * 3_600_000).toISOString();
    for (const url of ['/v1/events', '/v1/events?from=app']) {
      const res = await sdk.post(url, { events: [{ type: 'track', name: 'x', at }] });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe(
        `events[0].at: more than an hour in the future (${at}); an event may be at most an hour ahead, for clock skew`,
      );
    }
  });

  it('bounds at by one hour of the clock, not by the next UTC hour: the end of the next hour is refused, 59 minutes ahead taken', async () => {
    // More than an hour ahead of any moment of this hour, yet in the next UTC hour.
    const endOfNextHour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 + 2 * 3_600_000 - 1).toISOString();
    const soon = new Date(Date.now() + 59 * 60_000).toISOString();
    for (const url of ['/v1/events', '/v1/events?from=app']) {
      const late = await sdk.post(url, { events: [{ type: 'track', name: 'ahead', at: endOfNextHour }] });
      expect(late.status).toBe(400);
      expect(late.body.error.message).toBe(
        `events[0].at: more than an hour in the future (${endOfNextHour}); an event may be at most an hour ahead, for clock skew`,
      );
      const taken = await sdk.post(url, { events: [{ type: 'track', name: 'ahead', at: soon }] });
      expect(taken).toMatchObject({ status: 202, body: { accepted: 1 } });
    }
  });

  it('counts the rest of a batch whose exposures name a flag or variation the environment does not serve (an SDK a moment behind), and says how many it ignored', async () => {
    const exposuresBefore = (await stats()).series.at(-1).exposures;
    const res = await sdk.post('/v1/events', {
      events: [
        { type: 'exposure', flagKey: 'removed-a-moment-ago', variation: 'on' },
        { type: 'exposure', flagKey: 'checkout', variation: 'red' },
        // What only an archived flag serves; checkout is not archived.
        { type: 'exposure', flagKey: 'checkout', variation: 'default' },
        // A flag with variants serves one wherever it would serve on.
        { type: 'exposure', flagKey: 'checkout', variation: 'on' },
        { type: 'exposure', flagKey: 'checkout', variation: 'blue' },
        { type: 'track', name: 'after-removal' },
      ],
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: 2, ignored: 4 });
    expect((await stats()).series.at(-1).exposures).toEqual({ ...exposuresBefore, blue: (exposuresBefore.blue ?? 0) + 1 });
    expect((await events()).series.at(-1).counts['after-removal']).toEqual({ count: 1, sum: 0 });
  });

  it('refuses more than 1,000 events, and a body that is not { events }', async () => {
    const many = Array.from({ length: 1001 }, () => ({ type: 'track', name: 'x' }));
    const res = await sdk.post('/v1/events', { events: many });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('1,000');
    expect((await sdk.post('/v1/events', { counts: [] })).status).toBe(400);
    expect((await sdk.post('/v1/events', [])).status).toBe(400);
  });

  it('takes 1,000 events in one request', async () => {
    const res = await sdk.post('/v1/events', { events: Array.from({ length: 1000 }, () => ({ type: 'track', name: 'bulk', value: 1 })) });
    expect(res.status).toBe(202);
    expect(res.body.accepted).toBe(1000);
    expect((await events()).series.at(-1).counts.bulk).toEqual({ count: 1000, sum: 1000 });
  });

  it('keeps the first 1,000 track event names of a project and drops events of further names, saying how many, so a flood of made-up names stays small', async () => {
    const flood = await createProject(admin, 'flood');
    const key = async (environment: string) =>
      httpClient(svc.evalUrl, (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: flood.id, environment })).body.key);
    const [dev, prod] = [await key('dev'), await key('prod')];
    const named = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ type: 'track', name: `${prefix}-${i}`, value: 1 }));
    expect((await dev.post('/v1/events', { events: named('first', 600) })).body).toEqual({ accepted: 600 });
    // The environments share the project's names: 400 more are kept, the rest dropped, on the fast path and through the app.
    expect((await prod.post('/v1/events', { events: named('second', 1000) })).body).toEqual({ accepted: 400, dropped: 600 });
    expect((await prod.post('/v1/events?from=app', { events: [...named('first', 2), ...named('third', 5)] })).body).toEqual({
      accepted: 2,
      dropped: 5,
    });
    for (let i = 0; i < 5; i++) await prod.post('/v1/events', { events: named(`flood${i}`, 1000) });

    const res = await fetch(`${svc.controlUrl}/api/v1/projects/${flood.id}/events?period=30d`, {
      headers: { Authorization: `Bearer ${svc.admin}` },
    });
    const text = await res.text();
    const counts = JSON.parse(text).series.at(-1).counts;
    expect(Object.keys(counts)).toHaveLength(1000);
    expect(counts['first-1']).toEqual({ count: 2, sum: 2 });
    expect(counts['second-399']).toEqual({ count: 1, sum: 1 });
    expect(counts['second-400']).toBeUndefined();
    expect(text.length).toBeLessThan(100_000);

    const metrics = await (await fetch(`${svc.evalUrl}/metrics`)).text();
    expect(sample(metrics, 'flagops_track_events_dropped_total', { project: 'flood', environment: 'prod', org: 'acme' })).toBe(5605);
  });

  it('answers the same through the app as on the fast path (a query string takes the app)', async () => {
    const body = { events: [{ type: 'track', name: 'via-app', value: 2 }] };
    const viaApp = await sdk.post('/v1/events?from=app', body);
    expect(viaApp.status).toBe(202);
    expect(viaApp.body).toEqual({ accepted: 1 });
    expect((await sdk.post('/v1/events?from=app', { events: [{ type: 'track' }] })).body.error.message).toContain('events[0]');
    expect((await events()).series.at(-1).counts['via-app']).toEqual({ count: 1, sum: 2 });
  });

  it('needs an sdk key, as /v1/evaluate', async () => {
    expect((await httpClient(svc.evalUrl, 'nope').post('/v1/events', { events: [] })).status).toBe(401);
    expect((await httpClient(svc.evalUrl, svc.admin).post('/v1/events', { events: [] })).status).toBe(401);
  });

  it('keeps the counts across a restart', async () => {
    const before = { stats: await stats(), events: await events() };
    await svc.restart();
    admin = httpClient(svc.controlUrl, svc.admin);
    expect(await stats()).toEqual(before.stats);
    expect(await events()).toEqual(before.events);
  });
});

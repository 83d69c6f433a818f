import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { EventTotals, MAX_TRACK_NAMES, OTHER_NAME } from '../../src/foundations/metrics/event-totals.js';
import { sample } from './prometheus-text.js';

describe('event metrics', () => {
  it(`give the first ${MAX_TRACK_NAMES} track names of an environment a series each and count later ones as ${OTHER_NAME}`, async () => {
    const totals = new EventTotals();
    const registry = new Registry();
    totals.register(registry);
    const track = Array.from({ length: MAX_TRACK_NAMES + 50 }, (_, i) => ({ name: `event-${i}`, count: 2, sumMicros: 1_500_000 }));
    totals.record('acme', 'shop', 'prod', { exposures: [], track });
    totals.record('acme', 'shop', 'prod', { exposures: [], track: [{ name: 'event-0', count: 1, sumMicros: -500_000 }] });
    const text = await registry.metrics();
    const labels = (event: string) => ({ project: 'shop', environment: 'prod', event, org: 'acme' });
    expect(text.split('\n').filter((l) => l.startsWith('flagops_track_events_total{'))).toHaveLength(MAX_TRACK_NAMES + 1);
    expect(sample(text, 'flagops_track_events_total', labels('event-0'))).toBe(3);
    expect(sample(text, 'flagops_track_value', labels('event-0'))).toBe(1);
    expect(sample(text, 'flagops_track_events_total', labels(OTHER_NAME))).toBe(100);
    expect(sample(text, 'flagops_track_value', labels(OTHER_NAME))).toBe(75);
    expect(sample(text, 'flagops_track_events_total', labels(`event-${MAX_TRACK_NAMES}`))).toBeUndefined();
  });

  it('count exposures per flag and variation', async () => {
    const totals = new EventTotals();
    const registry = new Registry();
    totals.register(registry);
    totals.record('acme', 'shop', 'prod', { exposures: [{ flagKey: 'hero', variation: 'blue', count: 4 }], track: [] });
    totals.record('acme', 'shop', 'prod', { exposures: [{ flagKey: 'hero', variation: 'blue', count: 1 }], track: [] });
    const text = await registry.metrics();
    expect(
      sample(text, 'flagops_exposures_total', { project: 'shop', environment: 'prod', flag: 'hero', variation: 'blue', org: 'acme' }),
    ).toBe(5);
  });
});

import { describe, expect, it } from 'vitest';
import { axisTicks, chartModel, niceCeiling, variationOrder } from '../../../packages/dashboard/src/logic/chart-model.js';
import type { StatsPoint } from '../../../packages/dashboard/src/types.js';

const box = { width: 500, height: 220, left: 40, right: 10, top: 10, bottom: 30 };
const hours = (n: number, start = Date.parse('2026-11-20T12:00:00Z')) =>
  Array.from({ length: n }, (_, i) => new Date(start + i * 3_600_000).toISOString());

describe('stats chart scaling', () => {
  it('rounds the axis up to 1, 2 or 5 × 10^k', () => {
    expect([0, 1, 3, 7, 10, 11, 120, 999, 1001, 45_000].map(niceCeiling)).toEqual([1, 1, 5, 10, 10, 20, 200, 1000, 2000, 50_000]);
  });

  it('ticks the axis in whole, even steps', () => {
    expect(axisTicks(1)).toEqual([0, 1]);
    expect(axisTicks(2)).toEqual([0, 1, 2]);
    expect(axisTicks(10)).toEqual([0, 2, 4, 6, 8, 10]);
    expect(axisTicks(200)).toEqual([0, 50, 100, 150, 200]);
    expect(axisTicks(5000)).toEqual([0, 1000, 2000, 3000, 4000, 5000]);
  });

  it('orders variations on, off, then the others alphabetically', () => {
    expect(
      variationOrder([
        { hour: 'h', variations: { zeta: 1, off: 2 } },
        { hour: 'h2', variations: { default: 1, on: 3 } },
      ]),
    ).toEqual(['on', 'off', 'default', 'zeta']);
  });

  it("stacks each hour's variations into one bar, scaled to the ceiling", () => {
    const counts: Array<Record<string, number>> = [{}, { on: 30, off: 10 }, {}, { on: 5 }];
    const series: StatsPoint[] = hours(4).map((hour, i) => ({ hour, variations: counts[i] }));
    const model = chartModel(series, '24h', box);
    expect(model.ceiling).toBe(50);
    expect(model.total).toBe(45);
    const plotHeight = 220 - 10 - 30;
    const [on, off, late] = model.bars;
    expect(on).toMatchObject({ variation: 'on', count: 30, hour: series[1].hour });
    expect(on.height).toBeCloseTo((30 / 50) * plotHeight);
    expect(on.y + on.height).toBeCloseTo(10 + plotHeight); // on sits on the axis
    expect(off).toMatchObject({ variation: 'off', count: 10 });
    expect(off.y + off.height).toBeCloseTo(on.y); // off sits on top of on
    expect(late.x).toBeGreaterThan(on.x);
    expect(model.bars).toHaveLength(3); // empty hours draw nothing
    expect(model.ticks.at(-1)).toEqual({ value: 50, y: 10 });
  });

  it('labels every 6th hour for a day and every 5th midnight for 30 days (UTC)', () => {
    const day = chartModel(
      hours(24).map((hour) => ({ hour, variations: {} })),
      '24h',
      box,
    );
    expect(day.labels.map((l) => l.text)).toEqual(['12:00', '18:00', '00:00', '06:00']);
    const month = chartModel(
      hours(720, Date.parse('2026-10-22T13:00:00Z')).map((hour) => ({ hour, variations: {} })),
      '30d',
      box,
    );
    expect(month.labels.map((l) => l.text)).toEqual(['Oct 23', 'Oct 28', 'Nov 2', 'Nov 7', 'Nov 12', 'Nov 17']);
  });

  it('draws an empty period on a 0–1 axis without dividing by zero', () => {
    const model = chartModel(
      hours(168).map((hour) => ({ hour, variations: {} })),
      '7d',
      box,
    );
    expect(model).toMatchObject({ ceiling: 1, total: 0, bars: [] });
    expect(model.labels).toHaveLength(7);
    expect(model.ticks.every((t) => Number.isFinite(t.y))).toBe(true);
  });
});

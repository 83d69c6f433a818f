import type { StatsPeriod, StatsPoint } from '../types.js';

export interface ChartBox {
  width: number;
  height: number;
  /** Room for the y axis labels on the left and the x axis labels below. */
  left: number;
  bottom: number;
  top: number;
  right: number;
}

export interface Bar {
  x: number;
  y: number;
  width: number;
  height: number;
  variation: string;
  count: number;
  hour: string;
}

export interface ChartModel {
  bars: Bar[];
  ticks: Array<{ value: number; y: number }>;
  labels: Array<{ x: number; text: string }>;
  variations: string[];
  total: number;
  ceiling: number;
}

/** The smallest 1, 2 or 5 × 10^k at or above `max`: an axis end that reads well. Never below 1. */
export function niceCeiling(max: number): number {
  if (!(max > 1)) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * magnitude >= max) return step * magnitude;
  return 10 * magnitude;
}

/** Evenly spaced whole-number ticks from 0 to the ceiling (4 or 5 steps, fewer for tiny ceilings). */
export function axisTicks(ceiling: number): number[] {
  const leading = ceiling / 10 ** Math.floor(Math.log10(ceiling));
  const steps = Math.min(ceiling, leading === 2 ? 4 : 5);
  return Array.from({ length: steps + 1 }, (_, i) => (ceiling * i) / steps);
}

/** on first, off second, the rest (default, named variations) alphabetically: stable colours across charts. */
export function variationOrder(series: StatsPoint[]): string[] {
  const seen = new Set<string>();
  for (const point of series) for (const name of Object.keys(point.variations)) seen.add(name);
  const rank = (name: string) => (name === 'on' ? 0 : name === 'off' ? 1 : 2);
  return [...seen].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Axis labels in UTC, like the hours the server buckets by: every 6 h for a day, every day or 5 days beyond. */
function label(hour: Date, period: StatsPeriod, index: number, firstMidnight: number): string | null {
  const h = hour.getUTCHours();
  if (period === '24h') return h % 6 === 0 ? `${String(h).padStart(2, '0')}:00` : null;
  if (h !== 0) return null;
  const day = Math.round((index - firstMidnight) / 24);
  if (period === '30d' && day % 5 !== 0) return null;
  return `${MONTHS[hour.getUTCMonth()]} ${hour.getUTCDate()}`;
}

/**
 * The stats chart as geometry: one stacked bar per hour (a segment per variation), scaled to a rounded
 * ceiling, with y ticks and x labels. Pure, so the scaling is tested without a browser.
 */
export function chartModel(series: StatsPoint[], period: StatsPeriod, box: ChartBox): ChartModel {
  const variations = variationOrder(series);
  const totals = series.map((p) => Object.values(p.variations).reduce((a, b) => a + b, 0));
  const ceiling = niceCeiling(Math.max(0, ...totals));
  const plotWidth = box.width - box.left - box.right;
  const plotHeight = box.height - box.top - box.bottom;
  const slot = series.length === 0 ? 0 : plotWidth / series.length;
  const barWidth = Math.max(0.5, slot * (slot >= 4 ? 0.8 : 1));
  const yOf = (value: number) => box.top + plotHeight - (value / ceiling) * plotHeight;
  const bars: Bar[] = [];
  const labels: ChartModel['labels'] = [];
  const firstMidnight = series.findIndex((p) => new Date(p.hour).getUTCHours() === 0);
  series.forEach((point, i) => {
    const x = box.left + i * slot + (slot - barWidth) / 2;
    let stacked = 0;
    for (const variation of variations) {
      const count = point.variations[variation] ?? 0;
      if (count <= 0) continue;
      const top = yOf(stacked + count);
      bars.push({ x, y: top, width: barWidth, height: yOf(stacked) - top, variation, count, hour: point.hour });
      stacked += count;
    }
    const text = label(new Date(point.hour), period, i, firstMidnight);
    if (text !== null) labels.push({ x: box.left + i * slot, text });
  });
  return {
    bars,
    ticks: axisTicks(ceiling).map((value) => ({ value, y: yOf(value) })),
    labels,
    variations,
    total: totals.reduce((a, b) => a + b, 0),
    ceiling,
  };
}

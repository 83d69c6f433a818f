import type { Registry } from 'prom-client';

interface Series {
  labels: Record<string, string>;
  /** Per bucket (the last one is +Inf), the observations that fell in it; made cumulative when scraped. */
  counts: number[];
  sum: number;
  count: number;
}

/**
 * A Prometheus histogram for the request path: an observation is a bucket search and three additions on a
 * series the caller looked up once, where prom-client's Histogram validates and hashes the labels on every
 * observation. Registered on a prom-client registry as a metric of its own, read (cumulated) at each scrape.
 */
export class CheapHistogram {
  readonly type = 'histogram';
  private readonly series = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    private readonly buckets: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The observe function of one series (one value per label name, in order). */
  observer(...values: string[]): (value: number) => void {
    const key = values.join('\u0000');
    let series = this.series.get(key);
    if (series === undefined) {
      const labels = Object.fromEntries(this.labelNames.map((name, i) => [name, values[i]]));
      series = { labels, counts: new Array(this.buckets.length + 1).fill(0), sum: 0, count: 0 };
      this.series.set(key, series);
    }
    const s = series;
    const buckets = this.buckets;
    return (value) => {
      let i = 0;
      while (i < buckets.length && value > buckets[i]) i++;
      s.counts[i]++;
      s.sum += value;
      s.count++;
    };
  }

  /** What prom-client's registry formats: `_bucket` (cumulative, with `le`), `_sum` and `_count` per series. */
  get(): {
    name: string;
    help: string;
    type: string;
    values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }>;
    aggregator: string;
  } {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
    for (const { labels, counts, sum, count } of this.series.values()) {
      let cumulative = 0;
      for (let i = 0; i <= this.buckets.length; i++) {
        cumulative += counts[i];
        const le = i < this.buckets.length ? this.buckets[i] : '+Inf';
        values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${this.name}_bucket` });
      }
      values.push({ labels, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' };
  }
}

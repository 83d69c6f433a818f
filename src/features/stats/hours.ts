/** Hour arithmetic on epoch milliseconds: stats are bucketed by UTC hour. */
export const HOUR_MS = 3_600_000;

/** The periods of the stats endpoint (docs/stats.md) and how many hourly entries each has. */
export const PERIOD_HOURS = { '24h': 24, '7d': 7 * 24, '30d': 30 * 24 } as const;
export type StatsPeriod = keyof typeof PERIOD_HOURS;

/** Counts are kept for the longest period and dropped after it. */
export const RETENTION_HOURS = PERIOD_HOURS['30d'];

export function isStatsPeriod(value: unknown): value is StatsPeriod {
  return value === '24h' || value === '7d' || value === '30d';
}

export function hourStart(ms: number): number {
  return ms - (((ms % HOUR_MS) + HOUR_MS) % HOUR_MS);
}

/** The first hour still kept when the current time is `nowMs`. */
export function oldestKeptHour(nowMs: number): number {
  return hourStart(nowMs) - (RETENTION_HOURS - 1) * HOUR_MS;
}

import type { CountEntry, CountStore } from '../count-store.js';
import type { Unsubscribe } from '../unsubscribe.js';
import type { ChangeFeed } from './change-feed.js';
import type { Database } from './database.js';

/**
 * Counts in flagops_counts, one row per hour, scope, flag and variation, which every instance adds to
 * (INSERT … ON CONFLICT adds up in the database), so a count is never lost or made twice between them.
 */
export class PgCountStore implements CountStore {
  constructor(
    private readonly db: Database,
    private readonly feed: ChangeFeed,
  ) {}

  async read(oldestHour: number, onEntry: (entry: CountEntry) => void): Promise<void> {
    const { rows } = await this.db.query<{ hour: string; scope: string; flag_key: string; variation: string; count: string }>(
      'SELECT hour, scope, flag_key, variation, count FROM flagops_counts WHERE hour >= $1',
      [oldestHour],
    );
    for (const row of rows) {
      onEntry({ hour: Number(row.hour), scope: row.scope, flagKey: row.flag_key, variation: row.variation, count: Number(row.count) });
    }
  }

  async add(entries: Iterable<CountEntry>): Promise<void> {
    // One row per key in the statement: ON CONFLICT cannot update a row twice in one.
    const sums = new Map<string, CountEntry>();
    for (const entry of entries) {
      const key = JSON.stringify([entry.hour, entry.scope, entry.flagKey, entry.variation]);
      const sum = sums.get(key);
      if (sum) sum.count += entry.count;
      else sums.set(key, { ...entry });
    }
    if (sums.size === 0) return;
    const rows = [...sums.values()];
    await this.db.transaction(['counts'], (client) =>
      client.query(
        `INSERT INTO flagops_counts (hour, scope, flag_key, variation, count)
         SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bigint[])
         ON CONFLICT (hour, scope, flag_key, variation) DO UPDATE SET count = flagops_counts.count + excluded.count`,
        [
          rows.map((r) => r.hour),
          rows.map((r) => r.scope),
          rows.map((r) => r.flagKey),
          rows.map((r) => r.variation),
          rows.map((r) => r.count),
        ],
      ),
    );
  }

  /** The rows themselves are the totals, so dropping old hours is all a tidy does. */
  async tidy(oldestHour: number, _current: () => Iterable<CountEntry>): Promise<void> {
    await this.db.query('DELETE FROM flagops_counts WHERE hour < $1', [oldestHour]);
  }

  onChange(listener: () => void): Unsubscribe {
    return this.feed.onChange('counts', listener);
  }

  async close(): Promise<void> {}
}

import type { TriggerRecord, TriggerStore } from '../trigger-store.js';
import type { Unsubscribe } from '../unsubscribe.js';
import type { ChangeFeed } from './change-feed.js';
import type { Database } from './database.js';

/** Trigger URLs (their secrets as HMACs) in flagops_triggers. */
export class PgTriggerStore implements TriggerStore {
  constructor(
    private readonly db: Database,
    private readonly feed: ChangeFeed,
  ) {}

  async list(): Promise<TriggerRecord[]> {
    const { rows } = await this.db.query<{ record: TriggerRecord }>('SELECT record FROM flagops_triggers ORDER BY position');
    return rows.map((row) => row.record);
  }

  create(record: TriggerRecord): Promise<boolean> {
    return this.db.transaction(['triggers'], async (client) => {
      const { rowCount } = await client.query('INSERT INTO flagops_triggers (id, org, record) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
        record.id,
        record.org,
        record,
      ]);
      return rowCount === 1;
    });
  }

  remove(org: string, id: string): Promise<TriggerRecord | undefined> {
    return this.db.transaction(['triggers'], async (client) => {
      const { rows } = await client.query<{ record: TriggerRecord }>(
        'DELETE FROM flagops_triggers WHERE id = $1 AND org = $2 RETURNING record',
        [id, org],
      );
      return rows[0]?.record;
    });
  }

  onChange(listener: () => void): Unsubscribe {
    return this.feed.onChange('triggers', listener);
  }
}

import type { HeldKill, HeldKillStore } from '../held-kill-store.js';
import type { Unsubscribe } from '../unsubscribe.js';
import type { ChangeFeed } from './change-feed.js';
import type { Database } from './database.js';

/** Held kills in flagops_held_kills. */
export class PgHeldKillStore implements HeldKillStore {
  constructor(
    private readonly db: Database,
    private readonly feed: ChangeFeed,
  ) {}

  async list(org: string): Promise<HeldKill[]> {
    const { rows } = await this.db.query<{ record: HeldKill }>('SELECT record FROM flagops_held_kills WHERE org = $1 ORDER BY position', [
      org,
    ]);
    return rows.map((row) => row.record);
  }

  async add(kill: HeldKill): Promise<void> {
    await this.db.transaction(['held-kills'], (client) =>
      client.query('INSERT INTO flagops_held_kills (id, org, record) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
        kill.id,
        kill.org,
        kill,
      ]),
    );
  }

  async remove(org: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.transaction(['held-kills'], (client) =>
      client.query('DELETE FROM flagops_held_kills WHERE org = $1 AND id = ANY($2)', [org, [...ids]]),
    );
  }

  onChange(listener: () => void): Unsubscribe {
    return this.feed.onChange('held-kills', listener);
  }
}

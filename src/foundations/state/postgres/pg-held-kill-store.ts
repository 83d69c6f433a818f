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

  async list(org: string, except: ReadonlySet<string> = new Set()): Promise<HeldKill[]> {
    // Records seen already stay in the database, not sent again: while the git host is down they pile up, and
    // every kill has each control plane list them.
    const { rows } = await this.db.query<{ record: HeldKill }>(
      'SELECT record FROM flagops_held_kills WHERE org = $1 AND NOT (id = ANY($2::text[])) ORDER BY position',
      [org, [...except]],
    );
    return rows.map((row) => row.record);
  }

  /**
   * Another control plane's kill made again here (`madeFrom`) is not announced: the others make the kill from
   * its first record, and read this one only when they next list (what a main holds, after a restart).
   */
  async add(kill: HeldKill): Promise<void> {
    await this.db.write(
      kill.madeFrom ? [] : ['held-kills'],
      'INSERT INTO flagops_held_kills (id, org, record) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
      [kill.id, kill.org, kill],
    );
  }

  async remove(org: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.write(['held-kills'], 'DELETE FROM flagops_held_kills WHERE org = $1 AND id = ANY($2)', [org, [...ids]]);
  }

  onChange(listener: () => void): Unsubscribe {
    return this.feed.onChange('held-kills', listener);
  }
}

import type { Unsubscribe } from '../unsubscribe.js';
import { type UserRecord, type UserStore, usernameKey } from '../user-store.js';
import type { ChangeFeed } from './change-feed.js';
import type { Database } from './database.js';

/** Dashboard users in flagops_users; the database keeps usernames unique (by usernameKey) across every instance. */
export class PgUserStore implements UserStore {
  constructor(
    private readonly db: Database,
    private readonly feed: ChangeFeed,
  ) {}

  async list(): Promise<UserRecord[]> {
    const { rows } = await this.db.query<{ record: UserRecord }>('SELECT record FROM flagops_users ORDER BY position');
    return rows.map((row) => row.record);
  }

  create(record: UserRecord): Promise<boolean> {
    return this.db.transaction(['users'], async (client) => {
      const { rowCount } = await client.query(
        'INSERT INTO flagops_users (id, org, username_key, record) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
        [record.id, record.org, usernameKey(record.username), record],
      );
      return rowCount === 1;
    });
  }

  remove(org: string, id: string): Promise<UserRecord | undefined> {
    return this.db.transaction(['users'], async (client) => {
      const { rows } = await client.query<{ record: UserRecord }>('DELETE FROM flagops_users WHERE id = $1 AND org = $2 RETURNING record', [
        id,
        org,
      ]);
      return rows[0]?.record;
    });
  }

  onChange(listener: () => void): Unsubscribe {
    return this.feed.onChange('users', listener);
  }
}

import type { SessionRecord, SessionStore } from '../session-store.js';
import type { Unsubscribe } from '../unsubscribe.js';
import type { ChangeFeed } from './change-feed.js';
import type { Database } from './database.js';

/** Dashboard sessions (their tokens only as SHA-256) in flagops_sessions. */
export class PgSessionStore implements SessionStore {
  constructor(
    private readonly db: Database,
    private readonly feed: ChangeFeed,
  ) {}

  async list(): Promise<SessionRecord[]> {
    const { rows } = await this.db.query<{ record: SessionRecord }>('SELECT record FROM flagops_sessions ORDER BY position');
    return rows.map((row) => row.record);
  }

  async find(tokenHash: string): Promise<SessionRecord | null> {
    const { rows } = await this.db.query<{ record: SessionRecord }>("SELECT record FROM flagops_sessions WHERE record->>'tokenHash' = $1", [
      tokenHash,
    ]);
    return rows[0]?.record ?? null;
  }

  async create(record: SessionRecord): Promise<void> {
    await this.db.transaction(['sessions'], (client) =>
      client.query('INSERT INTO flagops_sessions (id, record) VALUES ($1, $2)', [record.id, record]),
    );
  }

  async remove(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.transaction(['sessions'], (client) => client.query('DELETE FROM flagops_sessions WHERE id = ANY($1::text[])', [ids]));
  }

  /** Activity only: other instances are not told, since nothing they decide on changed until a session expires. */
  async touch(seen: ReadonlyArray<{ id: string; lastSeenAt: string }>): Promise<void> {
    if (seen.length === 0) return;
    // Announced like any change: a session used only through another control plane must not look idle here
    // (touches are saved at most once a minute per session, so this is little traffic).
    await this.db.transaction(['sessions'], (client) =>
      client.query(
        `UPDATE flagops_sessions AS s SET record = s.record || jsonb_build_object('lastSeenAt', t.last_seen_at)
         FROM unnest($1::text[], $2::text[]) AS t(id, last_seen_at) WHERE s.id = t.id`,
        [seen.map((s) => s.id), seen.map((s) => s.lastSeenAt)],
      ),
    );
  }

  onChange(listener: () => void): Unsubscribe {
    return this.feed.onChange('sessions', listener);
  }
}

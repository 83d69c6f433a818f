import type { Notices } from '../notices.js';
import type { Unsubscribe } from '../unsubscribe.js';
import { type ChangeFeed, NOTICES_CHANNEL } from './change-feed.js';
import type { Database } from './database.js';

/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more. */
const MAX_NOTIFY_BYTES = 7999;

/** Notices as NOTIFY on one channel, `{ from, topic, payload }`, heard by every other instance's ChangeFeed. */
export class PgNotices implements Notices {
  constructor(
    private readonly db: Database,
    private readonly feed: ChangeFeed,
  ) {}

  async publish(topic: string, payload: string): Promise<void> {
    const message = JSON.stringify({ from: this.db.instanceId, topic, payload });
    const bytes = Buffer.byteLength(message);
    if (bytes > MAX_NOTIFY_BYTES) {
      throw new RangeError(`a notice on ${JSON.stringify(topic)} takes ${bytes} bytes; PostgreSQL carries at most ${MAX_NOTIFY_BYTES}`);
    }
    await this.db.query('SELECT pg_notify($1, $2)', [NOTICES_CHANNEL, message]);
  }

  subscribe(topic: string, listener: (payload: string) => void): Unsubscribe {
    return this.feed.onNotice(topic, listener);
  }

  onResync(listener: () => void): Unsubscribe {
    return this.feed.onResync(listener);
  }
}

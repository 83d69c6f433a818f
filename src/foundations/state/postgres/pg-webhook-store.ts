import type pg from 'pg';
import type { Unsubscribe } from '../unsubscribe.js';
import type { AttemptClaim, DeliveryChanges, DeliveryRecord, WebhookRecord, WebhookState, WebhookStore } from '../webhook-store.js';
import type { ChangeFeed } from './change-feed.js';
import type { Database } from './database.js';

/**
 * Webhooks, positions and the delivery log in flagops_webhooks, flagops_webhook_cursors and flagops_deliveries.
 * Every instance runs deliveries, and each is made once: a position moves only from where the mover read it
 * (compare-and-set), so one instance makes the deliveries of each entry, and an attempt is made by the instance
 * whose claim (`leased_until`) holds the row.
 */
export class PgWebhookStore implements WebhookStore {
  /** Writes not yet committed, which flush waits for. */
  private readonly writing = new Set<Promise<unknown>>();

  constructor(
    private readonly db: Database,
    private readonly feed: ChangeFeed,
  ) {}

  async read(): Promise<WebhookState> {
    const [webhooks, cursors, deliveries] = await Promise.all([
      this.db.query<{ record: WebhookRecord }>('SELECT record FROM flagops_webhooks ORDER BY position'),
      this.db.query<{ org: string; cursor: string }>('SELECT org, cursor FROM flagops_webhook_cursors'),
      this.db.query<{ record: DeliveryRecord }>('SELECT record FROM flagops_deliveries ORDER BY position'),
    ]);
    return {
      webhooks: webhooks.rows.map((row) => row.record),
      cursors: Object.fromEntries(cursors.rows.map((row) => [row.org, row.cursor])),
      deliveries: deliveries.rows.map((row) => row.record),
    };
  }

  async createWebhook(record: WebhookRecord): Promise<void> {
    await this.db.transaction(['webhooks'], (client) =>
      client.query('INSERT INTO flagops_webhooks (id, org, record) VALUES ($1, $2, $3)', [record.id, record.org, record]),
    );
  }

  async removeWebhook(org: string, id: string): Promise<void> {
    await this.db.transaction(['webhooks'], async (client) => {
      const { rowCount } = await client.query('DELETE FROM flagops_webhooks WHERE id = $1 AND org = $2', [id, org]);
      if (rowCount) await client.query('DELETE FROM flagops_deliveries WHERE webhook_id = $1', [id]);
    });
  }

  advance(org: string, from: string | undefined, cursor: string, changes: DeliveryChanges): Promise<boolean> {
    return this.db.transaction([], async (client) => {
      // Of two instances moving one position at once, the second waits for the first and then finds it moved.
      const moved =
        from === undefined
          ? await client.query('INSERT INTO flagops_webhook_cursors (org, cursor) VALUES ($1, $2) ON CONFLICT (org) DO NOTHING', [
              org,
              cursor,
            ])
          : await client.query('UPDATE flagops_webhook_cursors SET cursor = $3 WHERE org = $1 AND cursor = $2', [org, from, cursor]);
      if (moved.rowCount !== 1) return false;
      await applyChanges(client, changes);
      return true;
    });
  }

  async claimAttempt(id: string, now: number, leaseUntil: number): Promise<AttemptClaim> {
    const claimed = await this.db.query<{ record: DeliveryRecord }>(
      `UPDATE flagops_deliveries SET leased_until = to_timestamp($3 / 1000.0)
       WHERE id = $1 AND record->>'status' = 'pending' AND coalesce((record->>'nextAttemptAt')::bigint, 0) <= $2
         AND (leased_until IS NULL OR leased_until <= to_timestamp($2 / 1000.0))
       RETURNING record`,
      [id, now, leaseUntil],
    );
    if (claimed.rows[0]) return { claimed: true, current: claimed.rows[0].record };
    const { rows } = await this.db.query<{ record: DeliveryRecord; leased_until_ms: string | null }>(
      'SELECT record, (extract(epoch FROM leased_until) * 1000)::bigint AS leased_until_ms FROM flagops_deliveries WHERE id = $1',
      [id],
    );
    const row = rows[0];
    if (!row) return { claimed: false };
    const takenUntil = row.leased_until_ms === null ? undefined : Number(row.leased_until_ms);
    return { claimed: false, current: row.record, ...(takenUntil !== undefined && takenUntil > now ? { takenUntil } : {}) };
  }

  /** Written at once whether `now` or `soon`: a commit costs no more than the batching a file needs. */
  updateDeliveries(changes: DeliveryChanges, _when: 'now' | 'soon'): Promise<void> {
    const write = this.db.transaction([], (client) => applyChanges(client, changes));
    this.writing.add(write);
    const settled = () => this.writing.delete(write);
    write.then(settled, settled);
    return write;
  }

  async flush(): Promise<void> {
    await Promise.allSettled([...this.writing]);
  }

  onChange(listener: () => void): Unsubscribe {
    return this.feed.onChange('webhooks', listener);
  }
}

async function applyChanges(client: pg.PoolClient, { added = [], changed = [], removed = [] }: DeliveryChanges): Promise<void> {
  for (const delivery of added) {
    await client.query('INSERT INTO flagops_deliveries (id, webhook_id, record) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING', [
      delivery.id,
      delivery.webhookId,
      delivery,
    ]);
  }
  for (const delivery of changed) {
    await client.query('UPDATE flagops_deliveries SET record = $2, leased_until = NULL WHERE id = $1', [delivery.id, delivery]);
  }
  if (removed.length > 0) await client.query('DELETE FROM flagops_deliveries WHERE id = ANY($1::text[])', [removed]);
}

import type { ReplicaBatchLedger } from '../replica-batch-ledger.js';
import type { Database } from './database.js';

/** Replicas retry within minutes; a day covers that with room to spare. */
const KEPT_FOR = '1 day';

/** Batch ids in flagops_replica_batches: a claim is a unique insert, so of every instance claiming one batch, one wins. */
export class PgReplicaBatchLedger implements ReplicaBatchLedger {
  private lastPruned = 0;

  constructor(private readonly db: Database) {}

  async claim(org: string, batchId: string): Promise<boolean> {
    await this.pruneHourly();
    const { rowCount } = await this.db.query('INSERT INTO flagops_replica_batches (org, batch_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
      org,
      batchId,
    ]);
    return rowCount === 1;
  }

  private async pruneHourly(): Promise<void> {
    if (Date.now() - this.lastPruned < 3_600_000) return;
    this.lastPruned = Date.now();
    await this.db.query(`DELETE FROM flagops_replica_batches WHERE claimed_at < now() - interval '${KEPT_FOR}'`);
  }
}

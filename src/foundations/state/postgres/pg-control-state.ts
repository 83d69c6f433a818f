import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { type Logger, silentLogger } from '../../log/logger.js';
import type { ControlState } from '../control-state.js';
import type { Turn } from '../turn.js';
import { ChangeFeed } from './change-feed.js';
import { Database, takeTurn } from './database.js';
import { databaseUnavailable } from './database-unavailable.js';
import { migrate } from './migrate.js';
import { PgCommitTrustStore } from './pg-commit-trust-store.js';
import { PgCountStore } from './pg-count-store.js';
import { PgGuardStore } from './pg-guard-store.js';
import { PgHeldKillStore } from './pg-held-kill-store.js';
import { PgKeyStore } from './pg-key-store.js';
import { PgNotices } from './pg-notices.js';
import { PgPepperStore } from './pg-pepper-store.js';
import { PgPushLog } from './pg-push-log.js';
import { PgReplicaBatchLedger } from './pg-replica-batch-ledger.js';
import { PgSessionStore } from './pg-session-store.js';
import { PgTriggerStore } from './pg-trigger-store.js';
import { PgUserStore } from './pg-user-store.js';
import { PgWebhookStore } from './pg-webhook-store.js';
import { databaseWhere, redactDatabaseUrl } from './redact-database-url.js';

/** A call waits this long for a connection before it answers 503: a database that is down is reported, not waited on. */
const CONNECT_TIMEOUT_MS = 5_000;
const POOL_SIZE = 10;

/**
 * The control plane's state in PostgreSQL (FLAGOPS_DATABASE_URL), shared by every control plane given the same
 * database: a pool for the stores, and one connection of its own that listens for what the others change.
 */
export class PgControlState implements ControlState {
  readonly keys: PgKeyStore;
  readonly pepper: PgPepperStore;
  readonly users: PgUserStore;
  readonly sessions: PgSessionStore;
  readonly triggers: PgTriggerStore;
  readonly heldKills: PgHeldKillStore;
  readonly webhooks: PgWebhookStore;
  readonly counts: PgCountStore;
  readonly guards: PgGuardStore;
  readonly replicaBatches: PgReplicaBatchLedger;
  readonly pushes: PgPushLog;
  readonly commitTrust: PgCommitTrustStore;
  readonly notices: PgNotices;

  /** Connects, brings the schema up to date and starts listening; rejects when any of it fails. */
  static async open(url: string, options: { logger?: Logger } = {}): Promise<PgControlState> {
    const logger = options.logger ?? silentLogger;
    const config: pg.ClientConfig = { connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS };
    const pool = new pg.Pool({ ...config, max: POOL_SIZE });
    // An idle connection the database drops must not crash the process: the pool makes a new one when needed.
    pool.on('error', (err) => logger.warn('state: an idle database connection failed', { err: err.message }));
    const db = new Database(pool, randomUUID(), databaseWhere(url));
    const feed = new ChangeFeed(config, db.instanceId, logger);
    try {
      const { client, release } = await db.checkOut();
      let broken = false;
      try {
        await migrate(client);
      } catch (err) {
        broken = true;
        throw db.translate(err);
      } finally {
        release(broken);
      }
      await feed.start().catch((err) => Promise.reject(db.translate(err)));
    } catch (err) {
      await feed.close();
      await pool.end();
      throw err;
    }
    logger.info('state: in PostgreSQL', { database: redactDatabaseUrl(url) });
    return new PgControlState(db, feed, url);
  }

  private constructor(
    private readonly db: Database,
    private readonly feed: ChangeFeed,
    url: string,
  ) {
    this.keys = new PgKeyStore(db, feed);
    this.pepper = new PgPepperStore(db);
    this.users = new PgUserStore(db, feed);
    this.sessions = new PgSessionStore(db, feed);
    this.triggers = new PgTriggerStore(db, feed);
    this.heldKills = new PgHeldKillStore(db, feed);
    this.webhooks = new PgWebhookStore(db, feed);
    this.counts = new PgCountStore(db, feed);
    this.guards = new PgGuardStore(db);
    this.replicaBatches = new PgReplicaBatchLedger(db);
    this.pushes = new PgPushLog(db, url);
    this.commitTrust = new PgCommitTrustStore(db);
    this.notices = new PgNotices(db, feed);
  }

  takeTurn(name: string, waitMs: number, holdMs?: number): Promise<Turn> {
    return takeTurn(this.db, name, waitMs, holdMs);
  }

  writesRefused(): Error | undefined {
    const lost = this.feed.lost();
    return lost ? databaseUnavailable(this.db.where, lost) : undefined;
  }

  async close(): Promise<void> {
    await this.webhooks.flush();
    await this.feed.close();
    await this.db.pool.end();
  }
}

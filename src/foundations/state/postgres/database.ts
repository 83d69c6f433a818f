import type pg from 'pg';
import { WriteConflictError } from '../../errors/kinds.js';
import type { Turn } from '../turn.js';
import { databaseUnavailable, isUnreachable, NoAnswerError } from './database-unavailable.js';

/** What a write announces to the other instances: the kind of records it changed. */
export type ChangeKind = 'keys' | 'users' | 'sessions' | 'triggers' | 'webhooks' | 'counts' | 'held-kills';

/**
 * How long a statement, or a transaction, waits for the database's answer before the call answers 503: a database
 * that hangs (stopped, a machine that froze) keeps its connections open and would be waited on for ever. The
 * connection is then ended, which rolls back a transaction not yet committed; a lone statement the database has
 * taken, it still runs when it goes on.
 */
export const DATABASE_ANSWER_MS = 5_000;

/** The channel of `{ from, kind }` payloads: records of that kind changed, read them again. */
export const CHANGES_CHANNEL = 'flagops_changes';

/**
 * One instance's access to the database: a connection pool, and this instance's id, which every notification
 * it sends carries so that it can ignore its own. Every failure to reach the database becomes 503
 * `unavailable`; the pool makes new connections for the next call, so nothing needs reopening once the database
 * is back.
 */
export class Database {
  constructor(
    readonly pool: pg.Pool,
    readonly instanceId: string,
    /** `at host:port/database`, for messages. */
    readonly where: string,
  ) {}

  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    const { client, release } = await this.checkOut();
    let broken = false;
    try {
      return await answeredWithin(client.query<R>(text, values), DATABASE_ANSWER_MS);
    } catch (err) {
      broken = isUnreachable(err);
      throw this.translate(err);
    } finally {
      release(broken);
    }
  }

  /**
   * A connection of the pool for one call, and its release. While checked out, a connection has no listener of
   * the pool's: one the database ends meanwhile (a restart, \`pg_ctl stop\`: 57P01 between two statements) emits
   * 'error' on it, which unheard would end the process. The call learns of it from its statement's failure.
   */
  async checkOut(): Promise<{ client: pg.PoolClient; release(broken: boolean): void }> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw this.translate(err);
    }
    const heard = () => {};
    client.on('error', heard);
    return {
      client,
      release(broken) {
        client.off('error', heard);
        client.release(broken);
      },
    };
  }

  /**
   * Runs one data-modifying statement (INSERT, UPDATE or DELETE, without RETURNING) and notifies `announce` in
   * the same statement: one round trip where a transaction takes four, and as atomic, since one statement is its
   * own transaction and notifications are sent only once it commits.
   */
  async write(announce: readonly ChangeKind[], statement: string, values: unknown[] = []): Promise<void> {
    if (announce.length === 0) {
      await this.query(statement, values);
      return;
    }
    const first = values.length + 1;
    const notices = announce.map((_kind, i) => `pg_notify($${first}, $${first + 1 + i})`).join(', ');
    const payloads = announce.map((kind) => JSON.stringify({ from: this.instanceId, kind }));
    await this.query(`WITH change AS (${statement}) SELECT ${notices}`, [...values, CHANGES_CHANNEL, ...payloads]);
  }

  /**
   * Runs `work` in one transaction and commits it before resolving; `announce` names what it changes, notified
   * to the other instances inside the transaction, so they hear of it only once it is committed. An error of
   * `work` rolls everything back and is what the call rejects with.
   */
  async transaction<T>(announce: readonly ChangeKind[], work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const { client, release } = await this.checkOut();
    let broken = false;
    const run = async () => {
      await client.query('BEGIN');
      const result = await work(client);
      for (const kind of announce) {
        await client.query('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, JSON.stringify({ from: this.instanceId, kind })]);
      }
      await client.query('COMMIT');
      return result;
    };
    try {
      return await answeredWithin(run(), DATABASE_ANSWER_MS);
    } catch (err) {
      broken = isUnreachable(err);
      if (!broken) await client.query('ROLLBACK').catch(() => undefined);
      throw this.translate(err);
    } finally {
      release(broken);
    }
  }

  /** An error saying the database cannot be reached becomes 503 `unavailable`; any other passes as it is. */
  translate(err: unknown): unknown {
    return isUnreachable(err) ? databaseUnavailable(this.where, err) : err;
  }
}

/** Holds the transaction's lock named `name` until it ends: operations that read, then add, run one at a time across instances. */
export async function lockForTransaction(client: pg.PoolClient, name: string): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`flagops:${name}`]);
}

/**
 * The longest a turn is held: a holder stuck that long (a push the git host never answers) has its connection
 * ended by the database, which lets the others in. Its update, if it still lands, only makes the next holder's
 * push refused, which is then run again on top.
 */
export const TURN_HOLD_MS = 30_000;
/**
 * How long a holder may say nothing before the database ends its turn. A holder says it is alive every quarter
 * of this while it holds the turn, so a process that stopped answering without its connection closing (stopped,
 * swapping, a machine that froze) holds the others' changes up for seconds, not TURN_HOLD_MS.
 */
export const TURN_SILENT_MS = 4_000;
/**
 * How much longer than its wait for the lock taking a turn waits for the database's answer: past the lock's wait
 * and a round trip, a database that has not answered hangs, and the write asking for the turn is answered 503.
 */
const TURN_ANSWER_MARGIN_MS = 1_000;
/**
 * How long ending a turn waits for its commit: past that the connection is ended, which ends the turn in the
 * database as a holder that crashed does, and the next turn is not held up by a database that hangs.
 */
const TURN_END_WAIT_MS = 1_000;

/**
 * Takes the exclusive transaction-scoped advisory lock `name` on a connection of its own, waiting at most `waitMs`
 * for it (PostgreSQL's lock_timeout: SQLSTATE 55P03 when it passes), with the note the last holder left
 * (flagops_turn_notes); ending the turn stores the next note and commits, which lets the lock go. The lock goes
 * with the transaction, so a crashed instance (its connection gone) never leaves it held, nor one that holds it
 * past `holdMs` (PostgreSQL's idle_in_transaction_session_timeout).
 */
export async function takeTurn(
  db: Database,
  name: string,
  waitMs: number,
  holdMs = TURN_HOLD_MS,
  silentMs = TURN_SILENT_MS,
): Promise<Turn> {
  // The connection may be cut while the turn is held (the database restarts): the turn's end finds out.
  const { client, release } = await db.checkOut();
  let note: string | null;
  try {
    // One round trip (a turn is taken per write or run of writes; on a busy machine each costs): the note is read
    // by a statement of its own, so with a snapshot taken once the lock is granted, in which the last holder's
    // note is committed.
    // A database that hangs never answers: the write asking is answered 503 instead, and the connection is ended,
    // so this transaction, which changes nothing, is all the database finds when it goes on.
    const taken = (await answeredWithin(
      client.query(
        `BEGIN; SET LOCAL lock_timeout = ${Math.max(1, Math.ceil(waitMs))}; ` +
          `SET LOCAL idle_in_transaction_session_timeout = ${Math.max(1, Math.ceil(Math.min(holdMs, silentMs)))}; ` +
          `SELECT pg_advisory_xact_lock(hashtextextended(${client.escapeLiteral(`flagops:${name}`)}, 0)); ` +
          `SELECT note FROM flagops_turn_notes WHERE name = ${client.escapeLiteral(name)}`,
      ),
      Math.max(0, waitMs) + TURN_ANSWER_MARGIN_MS,
    )) as unknown as pg.QueryResult<{ note: string }>[];
    note = taken[4]?.rows[0]?.note ?? null;
  } catch (err) {
    const broken = isUnreachable(err);
    if (!broken) await client.query('ROLLBACK').catch(() => undefined);
    release(broken);
    if ((err as { code?: string }).code === '55P03')
      throw new WriteConflictError(`another control plane held the lock on ${name} for over ${waitMs} ms; try again`);
    throw db.translate(err);
  }
  // Alive while held, up to holdMs: each statement starts the database's count of idle time again.
  const takenAt = Date.now();
  const alive = setInterval(() => {
    if (Date.now() - takenAt < holdMs - silentMs) client.query('SELECT 1').catch(() => undefined);
    else clearInterval(alive);
  }, silentMs / 4);
  alive.unref();
  let ended: Promise<void> | undefined;
  return {
    note,
    end(next?: string) {
      clearInterval(alive);
      ended ??= (async () => {
        let broken = false;
        try {
          const store =
            next === undefined
              ? ''
              : `INSERT INTO flagops_turn_notes (name, note) VALUES (${client.escapeLiteral(name)}, ${client.escapeLiteral(next)}) ` +
                'ON CONFLICT (name) DO UPDATE SET note = EXCLUDED.note; ';
          // The note is left if the database commits it, once it answers; if not, the next holder's push is refused
          // and made again on top, as after a holder that crashed.
          await answeredWithin(client.query(`${store}COMMIT`), TURN_END_WAIT_MS);
        } catch (err) {
          broken = isUnreachable(err);
          if (!broken) await client.query('ROLLBACK').catch(() => undefined);
        } finally {
          release(broken);
        }
      })();
      return ended;
    },
  };
}

/**
 * `answer`, or NoAnswerError once `ms` passed without it. The caller releases the connection as broken then,
 * which ends it: the database rolls back a transaction left open on it, but a statement it has taken and not yet
 * run (a COMMIT among them) it still runs when it goes on.
 */
export function answeredWithin<T>(answer: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const silent = new Promise<never>((_resolve, reject) => {
    // Decided after the sockets are read: when this process was busy past `ms`, an answer that came meanwhile
    // is taken, not counted as none.
    timer = setTimeout(() => setImmediate(() => reject(new NoAnswerError(ms))), ms);
  });
  return Promise.race([answer, silent]).finally(() => clearTimeout(timer));
}

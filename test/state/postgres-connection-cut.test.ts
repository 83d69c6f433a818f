import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/foundations/state/postgres/database.js';
import { POSTGRES_MISSING, PostgresCluster } from '../helpers/postgres.js';

/**
 * The database ends a connection the process holds (a restart, `pg_ctl stop -m fast`: 57P01) between two of its
 * statements. The call in progress answers 503; the process goes on (an 'error' event nobody heard ended it).
 */
describe.skipIf(POSTGRES_MISSING !== null)('a database connection ended while a call holds it', () => {
  let cluster: PostgresCluster;
  let pool: pg.Pool;
  let db: Database;
  let url: string;
  beforeAll(async () => {
    cluster = await PostgresCluster.start();
    url = await cluster.createDatabase();
    pool = new pg.Pool({ connectionString: url, max: 2 });
    pool.on('error', () => {});
    db = new Database(pool, 'test-instance', 'at the test cluster');
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    await cluster?.destroy();
  });

  it('fails the transaction with 503 unavailable, and the process hears the error rather than crash', async () => {
    const uncaught: unknown[] = [];
    const hear = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', hear);
    try {
      const call = db.transaction([], async (client) => {
        const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        // Another connection ends this one while the transaction is between statements.
        const other = new pg.Client({
          connectionString: (pool as unknown as { options: { connectionString: string } }).options.connectionString,
        });
        await other.connect();
        await other.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
        await other.end();
        await new Promise((resolve) => setTimeout(resolve, 300));
        await client.query('SELECT 1');
      });
      await expect(call).rejects.toMatchObject({ code: 'unavailable' });
      expect(uncaught).toEqual([]);
      // The pool makes a new connection for the next call.
      expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      process.off('uncaughtException', hear);
    }
  });
});

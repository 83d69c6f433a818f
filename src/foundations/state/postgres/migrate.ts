import type pg from 'pg';
import { MIGRATIONS } from './migrations.js';

/** Held for the whole migration, so that of two instances starting at once one migrates and the other then finds it done. */
const MIGRATION_LOCK = "hashtextextended('flagops:migrations', 0)";

export class NewerSchemaError extends Error {}

/**
 * Brings the schema to the newest version this code knows: each missing migration in its own transaction,
 * recorded in flagops_schema_migrations. A schema newer than this code (a newer flagops migrated it) is refused:
 * this code would misread it.
 */
export async function migrate(client: pg.ClientBase, migrations: readonly string[] = MIGRATIONS): Promise<void> {
  await client.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
  try {
    await client.query(
      'CREATE TABLE IF NOT EXISTS flagops_schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const { rows } = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM flagops_schema_migrations');
    const current = rows[0]?.version ?? 0;
    if (current > migrations.length) {
      throw new NewerSchemaError(
        `the database's flagops schema is at version ${current}, newer than this flagops knows (${migrations.length}): ` +
          'a newer flagops migrated it; run that version (or newer) against this database',
      );
    }
    for (let version = current + 1; version <= migrations.length; version++) {
      await client.query('BEGIN');
      try {
        await client.query(migrations[version - 1]);
        await client.query('INSERT INTO flagops_schema_migrations (version) VALUES ($1)', [version]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    }
  } finally {
    await client.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => undefined);
  }
}

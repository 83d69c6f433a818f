import pg from 'pg';
import type { PushRecord } from '../push-log.js';
import { answeredWithin, DATABASE_ANSWER_MS } from './database.js';
import { databaseUnavailable, isUnreachable } from './database-unavailable.js';
import { insertPushes } from './pg-push-log.js';
import { databaseWhere } from './redact-database-url.js';

/**
 * Records pushes from the pre-receive hook, a process git starts, on a connection of its own: `target` is what
 * PgPushLog.hookTarget gave the service (after `postgres:`). The push is accepted only once this resolves. A
 * database that cannot be reached, or does not answer within DATABASE_ANSWER_MS, rejects as the service's own
 * calls do (`the database at host:port/db cannot be reached: …`).
 */
export async function appendHookPushes(target: string, records: readonly PushRecord[]): Promise<void> {
  if (records.length === 0) return;
  const { url, org } = JSON.parse(target) as { url: string; org: string };
  const client = new pg.Client({ connectionString: url });
  // The statement's failure says what went wrong; an 'error' event unheard would end the hook with a stack.
  client.on('error', () => undefined);
  try {
    await answeredWithin(client.connect(), DATABASE_ANSWER_MS);
    await answeredWithin(
      insertPushes((text, values) => client.query(text, values), org, records),
      DATABASE_ANSWER_MS,
    );
  } catch (err) {
    // Dropped, not ended: ending waits for a database that may never answer, and an open socket keeps the hook
    // (and so the push) alive.
    client.connection.stream.destroy();
    throw isUnreachable(err) ? databaseUnavailable(databaseWhere(url), err) : err;
  }
  await client.end();
}

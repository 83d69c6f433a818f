import pg from 'pg';
import type { PushRecord } from '../push-log.js';
import { insertPushes } from './pg-push-log.js';

/**
 * Records pushes from the pre-receive hook, a process git starts, on a connection of its own: `target` is what
 * PgPushLog.hookTarget gave the service (after `postgres:`). The push is accepted only once this resolves.
 */
export async function appendHookPushes(target: string, records: readonly PushRecord[]): Promise<void> {
  if (records.length === 0) return;
  const { url, org } = JSON.parse(target) as { url: string; org: string };
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    await insertPushes((text, values) => client.query(text, values), org, records);
  } finally {
    await client.end();
  }
}
